# shrec-score: `make demo` and `make test` work on a fresh machine (they create .venv).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip --disable-pip-version-check -q

.PHONY: help install demo test lint docs bench samples clean browser

help:
	@echo "make demo     install the tool into $(VENV) and score sample_runs/"
	@echo "make test     install the test extras and run the whole suite"
	@echo "make lint     ruff and mypy"
	@echo "make docs     the documentation site into site/ (mkdocs build --strict)"
	@echo "make bench    speed and numbers against trec_eval, peers, pandas, numpy (bench extra)"
	@echo "make samples  regenerate sample_runs/ and the demo contest (deterministic)"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(PIP) install -e '.[plots]'
	@touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(PIP) install -e '.[test,dask,server,docs,lint]'
	@touch $@ $(VENV)/.installed

install: $(VENV)/.installed

demo: $(VENV)/.installed
	$(BIN)/shrec-score sample_runs/psb-like/runs --relevance sample_runs/psb-like/classes.cla --sort AP --out results/psb-like --format table
	$(BIN)/shrec-score --config configs/shrec2006.yaml --out results/shrec2006 --plots results/shrec2006/plots --significance --html --format table
	@echo "results page: file://$(CURDIR)/results/shrec2006/report/index.html"
	$(BIN)/shrec-score --config configs/shrec2018-sketch-scene.yaml --out results/shrec2018-sketch-scene --format table
	$(BIN)/shrec-score --config configs/sbir-kendall.yaml --out results/sbir --format table
	$(BIN)/shrec-score --config configs/shrec2017-shapenet.yaml --out results/shrec2017-shapenet --format table

# lint and the site first: a lint error or a broken link fails before the long suite
test: $(VENV)/.installed-test browser lint docs
	$(BIN)/python -m pytest

# The results page's browser tests (tests/test_html_browser.py) drive Debian's
# chromium through chromedriver: installed here when running as root, else
# those tests skip and say why.
browser:
	@if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; } \
	      || echo "could not install chromium: the browser tests will skip"; \
	  else echo "chromium/chromedriver missing and not root: the browser tests will skip"; fi; \
	fi

lint: $(VENV)/.installed-test
	$(BIN)/ruff check shrec_score tests bench sample_runs docs/hooks.py
	$(BIN)/mypy shrec_score

# --strict: a broken link, a missing page or a missing API reference fails the build
docs: $(VENV)/.installed-test
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

# The budgets of issue 29 (docs/performance.md); BENCH_ARGS="--cases trec --repeat 5" picks cases.
bench: $(VENV)/.installed
	$(PIP) install -e '.[bench]'
	$(BIN)/python bench/run_bench.py $(BENCH_ARGS)

samples: $(VENV)/.installed
	$(BIN)/python sample_runs/make_samples.py

clean:
	rm -rf $(VENV) results site .pytest_cache
