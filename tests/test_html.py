"""The results page (issue 21): structure, values, escaping, size, CLI.

The page is parsed with BeautifulSoup over the standard library's parser;
values are checked against the CSV files the same scoring wrote beside it
(per_run.csv, per_query.csv, per_class.csv, significance.csv,
signature.txt), read back with the csv module.
"""

from __future__ import annotations

import json
import os
import re
import time

import pytest
from click.testing import CliRunner

from shrec_score.cli import cli
from shrec_score.errors import visible
from shrec_score.html import EXPLORER_BUDGET, inline_svg, json_for_script, to_html, write_html

from .conftest import ROOT, SAMPLES
from .html_pages import (
    DATE,
    HOSTILE_CLASSES,
    HOSTILE_RUNS,
    big_report,
    hostile_report,
    read_csv,
    sample06_out,
)

bs4 = pytest.importorskip("bs4", reason="beautifulsoup4 (test extra) parses the page")
matplotlib = pytest.importorskip("matplotlib", reason="plots extra: the page inlines the figures")
# the hostile names' CJK letters and rocket are not in matplotlib's DejaVu Sans
pytestmark = pytest.mark.filterwarnings("ignore:Glyph .* missing from font")

# The SHREC 2006 sample's leaderboard columns that are lower-is-better (SHREC 2006 section 5: the
# false positives and false negatives); every other measure column is higher-is-better.
LOWER = {"FP_highly", "FP_relevant", "FN_highly", "FN_relevant"}


def f4(value: str) -> str:
    """A CSV value as the page shows it: 4 decimals, empty when undefined."""
    return "" if value == "" else f"{float(value):.4f}"


def soup_of(page: str):
    return bs4.BeautifulSoup(page, "html.parser")


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    out = sample06_out(tmp_path_factory)
    path = os.path.join(out, "report", "index.html")
    with open(path, encoding="utf-8") as f:
        page = f.read()
    return out, page, soup_of(page)


def _cell_text(cell) -> str:
    return cell.get_text(" ", strip=True).replace("\u2605", "").strip()


def _board(soup):
    """The on-screen leaderboard: header labels (arrows dropped) and cell texts (stars dropped)."""
    table = soup.find("table", id="leaderboard-table")
    heads = [th.get_text("", strip=True).rstrip("\u2191\u2193").strip() for th in table.thead.find_all("th")]
    rows = [[_cell_text(c) for c in tr.find_all(["th", "td"])] for tr in table.tbody.find_all("tr")]
    return table, heads, rows


def test_sections_in_the_issue_order(sample):
    _, _, soup = sample
    ids = [el["id"] for el in soup.main.find_all(["header", "section"], recursive=False)]
    assert ids == ["summary", "leaderboard", "plots", "significance", "per-class", "per-query", "files"]


def test_summary_title_description_date_and_signature(sample):
    out, _, soup = sample
    header = soup.find("header", id="summary")
    assert header.h1.get_text(strip=True)
    # the preset's description, as configs/shrec2006.yaml writes it
    assert header.find(class_="description").get_text() == "SHREC 2006 (Veltkamp et al.), graded relevance, MADR leaderboard"
    assert header.find("time")["datetime"] == DATE  # SOURCE_DATE_EPOCH
    pairs = [(dt.get_text(), dt.find_next_sibling("dd").get_text()) for dt in header.find("dl").find_all("dt")]
    with open(os.path.join(out, "signature.txt"), encoding="utf-8") as f:
        expected = [tuple(line.rstrip("\n").split(": ", 1)) for line in f]
    assert pairs == expected


def test_leaderboard_values_equal_per_run_csv(sample):
    out, _, soup = sample
    per_run = read_csv(os.path.join(out, "per_run.csv"))
    _, heads, rows = _board(soup)
    with open(os.path.join(out, "leaderboard.md"), encoding="utf-8") as f:
        shown = [c.strip() for c in f.readline().strip().strip("|").split("|")][3:]
    measures = [c for c in per_run[0] if not c.endswith(("_ci_low", "_ci_high"))][2:]
    # rank, run, queries, the Markdown's columns (ADR first, then its interval and the group), every other column
    assert shown[0] == "ADR"
    others = [m for m in measures if m not in shown]
    assert heads == ["rank", "run", "queries", "ADR", "95% CI of ADR", "vs best", *shown[1:], *others]
    assert [r[1] for r in rows] == [p["run"] for p in per_run]
    for i, (row, rec) in enumerate(zip(rows, per_run)):
        cell = dict(zip(heads, row))
        assert cell["rank"] == str(i + 1)
        assert cell["queries"] == rec["queries"]
        for m in measures:
            assert cell[m] == f4(rec[m]), (rec["run"], m)
        assert cell["95% CI of ADR"] == f"{f4(rec['ADR_ci_low'])}\u2013{f4(rec['ADR_ci_high'])}"


def test_wide_leaderboard_prints_in_slices_with_rank_and_run(sample):
    _, _, soup = sample
    _, heads, rows = _board(soup)
    section = soup.find("section", id="leaderboard")
    assert "screen-only" in soup.find("table", id="leaderboard-table").parent["class"]
    slices = [div.table for div in section.find_all("div", class_="print-only")]
    got_heads, got_cells = [], {r[1]: [] for r in rows}
    for t in slices:
        h = [th.get_text("", strip=True).rstrip("\u2191\u2193").strip() for th in t.thead.find_all("th")]
        assert h[:2] == ["rank", "run"] and 3 <= len(h) <= 2 + 8
        got_heads += h[2:]
        for tr in t.tbody.find_all("tr"):
            cells = [_cell_text(c) for c in tr.find_all(["th", "td"])]
            got_cells[cells[1]] += cells[2:]
    # every column once, in the screen order, with the same cells
    assert got_heads == heads[2:]
    assert got_cells == {r[1]: r[2:] for r in rows}


def test_best_of_each_column_bold_and_starred_direction_aware(sample):
    out, _, soup = sample
    per_run = read_csv(os.path.join(out, "per_run.csv"))
    table, heads, _ = _board(soup)
    measures = [h for h in heads[3:] if h not in ("95% CI of ADR", "vs best")]
    ths = table.thead.find_all("th")
    for m in measures:
        j = heads.index(m)
        th = ths[j]
        assert th["data-first"] == ("asc" if m in LOWER else "desc"), m
        shown = [f4(r[m]) for r in per_run]
        defined = [float(s) for s in shown if s]
        best = (min if m in LOWER else max)(defined) if defined else None
        for tr, s in zip(table.tbody.find_all("tr"), shown):
            cell = tr.find_all(["th", "td"])[j]
            starred = "\u2605" in cell.get_text() and cell.find("strong") is not None
            assert starred == (s != "" and float(s) == best), (m, s)
    # the sort column is marked as sorted, and the legend explains the marks in words
    assert table.thead.find("th", attrs={"aria-sort": "descending"}).get_text(strip=True).startswith("ADR")
    legend = soup.find("section", id="leaderboard").find(class_="legend").get_text()
    assert "best value of the column" in legend and "lower is better" in legend


def test_significance_group_against_the_best_run(sample):
    out, _, soup = sample
    per_run = read_csv(os.path.join(out, "per_run.csv"))
    sig = read_csv(os.path.join(out, "significance.csv"))
    best = per_run[0]["run"]
    expected = {best: "best"}
    for rec in sig:
        if best in (rec["run_a"], rec["run_b"]):
            other = rec["run_b"] if rec["run_a"] == best else rec["run_a"]
            expected[other] = f"worse p={float(rec['p_adjusted']):.4f}" if rec["significant"] == "True" else f"\u2248 best p={float(rec['p_adjusted']):.4f}"
    _, heads, rows = _board(soup)
    assert {r[1]: r[heads.index("vs best")] for r in rows} == expected
    # the pairwise table, folded under the matrix: one row per pair, as significance.csv
    table = soup.find("section", id="significance").find("details", class_="pairs").table
    got = [[c.get_text(strip=True) for c in tr.find_all("td")] for tr in table.tbody.find_all("tr")]
    assert [[g[0], g[1], g[5], g[6]] for g in got] == [
        [r["run_a"], r["run_b"], f"{float(r['p_adjusted']):.4f}", "yes" if r["significant"] == "True" else "no"] for r in sig
    ]


def test_significance_matrix_run_by_run(sample):
    """Issue 31.15: the pairwise tests as a compact run x run matrix (the full list folded below it).
    Cell (A, B): up if A is significantly better than B, down if worse, about-equal otherwise, with
    the Holm-adjusted p-value; significance.csv's mean_diff is A's minus B's, oriented (positive = A better)."""
    out, _, soup = sample
    runs = [p["run"] for p in read_csv(os.path.join(out, "per_run.csv"))]
    sig = read_csv(os.path.join(out, "significance.csv"))
    expected = {}
    for rec in sig:
        a, b, diff, p = rec["run_a"], rec["run_b"], float(rec["mean_diff"]), f"{float(rec['p_adjusted']):.4f}"
        yes = rec["significant"] == "True"
        expected[(a, b)] = (("\u25b2" if diff > 0 else "\u25bc") if yes else "\u2248") + " " + p
        expected[(b, a)] = (("\u25bc" if diff > 0 else "\u25b2") if yes else "\u2248") + " " + p
    section = soup.find("section", id="significance")
    matrix = section.find("table", id="significance-matrix")
    assert matrix.find_parent("details") is None and section.find("details", class_="pairs") is not None
    heads = [th.get_text(strip=True) for th in matrix.thead.find_all("th")]
    assert heads == ["run", *runs]
    got = {}
    for tr in matrix.tbody.find_all("tr"):
        a = tr.th.get_text(strip=True)
        for b, td in zip(runs, tr.find_all("td")):
            if a != b:
                got[(a, b)] = td.get_text(" ", strip=True)
            else:
                assert td.get_text(strip=True) == ""
    assert [tr.th.get_text(strip=True) for tr in matrix.tbody.find_all("tr")] == runs
    assert got == expected and len(got) == len(runs) * (len(runs) - 1)


def test_plots_inline_svg_with_accessible_titles(sample):
    _, page, soup = sample
    figures = soup.find("section", id="plots").find_all("figure")
    titles = [f.svg.title.get_text() for f in figures]
    # PR curves, NDCG vs rank, CG vs recall (graded), per-class bars: in that order
    assert [t.split()[0] for t in titles] == ["Precision-recall", "Mean", "Mean", "ADR"]
    for f in figures:
        svg = f.svg
        assert svg["role"] == "img"
        assert svg.find("title", id=svg["aria-labelledby"]) is not None
    ids = [el["id"] for el in soup.find_all(id=True)]
    assert len(ids) == len(set(ids)), "an id is used twice (two inline SVGs must not share ids)"
    # every in-page reference (url(#x), href="#x") names an element of the page
    refs = set(re.findall(r"url\(#([^)]+)\)", page)) | set(re.findall(r'href="#([^"]+)"', page))
    assert refs <= set(ids)


def test_nothing_is_loaded_from_elsewhere(sample):
    _, page, soup = sample
    assert soup.find("link") is None
    assert all(not s.get("src") for s in soup.find_all("script"))
    assert all(not el.get("src") for el in soup.find_all(["img", "iframe", "embed", "object", "audio", "video"]))
    assert "@import" not in page and "@font-face" not in page
    assert not re.search(r"(?:src|href)\s*=\s*[\"']?(?:https?:)?//", page)
    assert not re.search(r"url\((?![\"']?#)", page), "a CSS or SVG url() that is not an in-page reference"


def test_per_class_heat_map_equals_per_class_csv(sample):
    out, _, soup = sample
    per_class = read_csv(os.path.join(out, "per_class.csv"))
    runs = [r["run"] for r in read_csv(os.path.join(out, "per_run.csv"))]
    table = soup.find("section", id="per-class").table
    heads = [b.get_text(strip=True) for b in table.thead.find_all("button")]
    assert heads == ["class", "queries", *runs]
    classes = list(dict.fromkeys(r["class"] for r in per_class))
    value = {(r["run"], r["class"]): f"{float(r['ADR']):.4f}" for r in per_class}
    rows = [[_cell_text(c) for c in tr.find_all(["th", "td"])] for tr in table.tbody.find_all("tr")]
    assert [r[0] for r in rows] == classes
    for row in rows:
        assert row[2:] == [value[(run, row[0])] for run in runs]
        # the best run of the class is bold with a star: the largest ADR of the row
        tr = table.tbody.find("th", string=row[0]).parent
        starred = [i for i, td in enumerate(tr.find_all("td")[1:]) if td.find("strong")]
        best = max(float(v) for v in row[2:])
        assert starred == [i for i, v in enumerate(row[2:]) if float(v) == best]


def _data(soup):
    return json.loads(soup.find("script", id="shrec-data").string)


def test_explorer_data_equals_per_query_csv(sample):
    out, _, soup = sample
    data = _data(soup)
    per_query = read_csv(os.path.join(out, "per_query.csv"))
    measures = [c for c in per_query[0] if c not in ("run", "query", "class")]
    assert data["measures"] == measures  # 5 runs x 30 queries x 39 measures: every measure, within the budget
    assert data["runs"] == [r["run"] for r in read_csv(os.path.join(out, "per_run.csv"))]
    assert data["queries"] == list(dict.fromkeys(r["query"] for r in per_query))
    q_index = {q: i for i, q in enumerate(data["queries"])}
    r_index = {r: i for i, r in enumerate(data["runs"])}
    for rec in per_query:
        i = q_index[rec["query"]]
        assert data["classes"][i] == rec["class"]
        for m in measures:
            got = data["values"][m][r_index[rec["run"]]][i]
            if rec[m] == "":
                assert got is None
            else:  # value x 10^4, rounded: the 4 decimals the page shows
                assert abs(got / data["scale"] - float(rec[m])) <= 0.5e-4 + 1e-12, (rec["run"], rec["query"], m)


def test_links_to_the_csv_files_written_beside(sample):
    out, _, soup = sample
    links = [a["href"] for a in soup.find("section", id="files").find_all("a")]
    assert "../per_run.csv" in links and "../per_query.csv" in links and "../significance.csv" in links
    for href in links:
        assert os.path.isfile(os.path.normpath(os.path.join(out, "report", href))), href


def test_same_report_same_page(hostile_page):
    # matplotlib names its clip paths at random: the page numbers every id in order instead
    report, page = hostile_page
    assert to_html(report, description=DESCRIPTION, date=DATE) == page


# -- escaping ------------------------------------------------------------------------


DESCRIPTION = '<script>alert("d")</script> & “quotes”'


@pytest.fixture(scope="module")
def hostile_page():
    report = hostile_report()
    return report, to_html(report, description=DESCRIPTION, date=DATE)


def test_hostile_names_make_no_element_and_no_attribute(hostile_page):
    _, page = hostile_page
    soup = soup_of(page)
    # exactly the page's own two scripts; no element or attribute a name could have made
    assert [s.get("id") for s in soup.find_all("script")] == ["shrec-data", None]
    assert soup.find(["img", "b", "i"]) is None
    assert not [a for el in soup.find_all(True) for a in el.attrs if a.lower().startswith("on")]
    assert "window.__pwned" not in soup.find_all("script")[1].string


def test_hostile_names_show_as_themselves(hostile_page):
    report, page = hostile_page
    soup = soup_of(page)
    assert soup.find(class_="description").get_text() == '<script>alert("d")</script> & “quotes”'
    assert soup.title.get_text() == '<script>alert("d")</script> & “quotes”'
    _, heads, rows = _board(soup)
    assert sorted(r[1] for r in rows) == sorted(visible(r) for r in HOSTILE_RUNS)
    assert [r[1] for r in rows] == [visible(r) for r in report.leaderboard["run"]]
    heat = soup.find("section", id="per-class").table
    assert [b.get_text() for b in heat.thead.find_all("button")][2:] == [visible(r) for r in report.leaderboard["run"]]
    assert [tr.th.get_text() for tr in heat.tbody.find_all("tr")] == HOSTILE_CLASSES
    sig = soup.find("table", id="pairs-table")
    assert {tr.find("td").get_text() for tr in sig.tbody.find_all("tr")} <= {visible(r) for r in HOSTILE_RUNS}
    matrix = soup.find("table", id="significance-matrix")
    assert [tr.th.get_text() for tr in matrix.tbody.find_all("tr")] == [visible(r) for r in report.leaderboard["run"]]
    dl = dict((dt.get_text(), dt.find_next_sibling("dd").get_text()) for dt in soup.find("dl").find_all("dt"))
    assert dl["mode"] == "<b>m</b>" and dl["relevance"] == "</script>.cla"
    # U+2028 / U+2029 are shown escaped (as every renderer shows separators)
    assert "line\\u2028sep\\u2029para" in [r[1] for r in rows]


def test_json_block_cannot_close_its_script(hostile_page):
    report, page = hostile_page
    start = page.index('<script type="application/json" id="shrec-data">') + len('<script type="application/json" id="shrec-data">')
    block = page[start : page.index("</script>", start)]
    assert "<" not in block and ">" not in block and "&" not in block
    assert "\u2028" not in block and "\u2029" not in block
    data = json.loads(block)
    assert data["runs"] == [visible(r) for r in report.leaderboard["run"]]
    assert set(data["classes"]) == set(HOSTILE_CLASSES)
    assert data["queries"][0] == 'q<0>&"0"'


def test_json_for_script_escapes_and_round_trips():
    value = {"a": "</script><!-- & \u2028\u2029 é 🚀"}
    out = json_for_script(value)
    assert out == '{"a":"\\u003c/script\\u003e\\u003c!-- \\u0026 \\u2028\\u2029 é 🚀"}'
    assert json.loads(out) == value


def test_inline_svg_prefixes_ids_and_escapes_the_title():
    svg = (
        '<?xml version="1.0"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "x">\n'
        '<svg xmlns="http://www.w3.org/2000/svg" width="10pt"><metadata>m</metadata><!-- run <b> -->'
        '<defs><clipPath id="p1"><rect/></clipPath><path id="g-1"/></defs>'
        '<g clip-path="url(#p1)"><use xlink:href="#g-1"/><a href="#other"/></g></svg>'
    )
    out = inline_svg(svg, "f0-", 'A <b> & "t"')
    assert out == (
        '<svg xmlns="http://www.w3.org/2000/svg" width="10pt" role="img" aria-labelledby="f0-title">'
        '<title id="f0-title">A &lt;b&gt; &amp; &quot;t&quot;</title>'
        '<defs><clipPath id="f0-0"><rect/></clipPath><path id="f0-1"/></defs>'
        '<g clip-path="url(#f0-0)"><use xlink:href="#f0-1"/><a href="#other"/></g></svg>'
    )


def test_hostile_names_in_the_figures_stay_inside_them(hostile_page):
    _, page = hostile_page
    soup = soup_of(page)
    assert len(soup.find("section", id="plots").find_all("svg")) == 2  # PR curves, per-class bars
    assert [s.get("id") for s in soup.find_all("script")] == ["shrec-data", None]
    assert soup.find(["img", "b", "i"]) is None


# -- size ------------------------------------------------------------------------------


def test_twenty_runs_thousand_queries_well_under_5_mb():
    report = big_report()
    started = time.perf_counter()
    page = to_html(report, date=DATE)
    size = len(page.encode("utf-8"))
    # measured: about 1.6 MB (per-query values ~0.6 MB, per-class bars for 50 classes x 20 runs ~0.6 MB)
    assert size < 2.5 * 2**20, size
    data = _data(soup_of(page))
    assert len(data["runs"]) == 20 and len(data["queries"]) == 1000 and data["measures"] == ["NN", "FT", "ST", "E", "DCG", "AP"]
    assert time.perf_counter() - started < 60


def test_many_measures_keep_the_shown_ones_in_the_explorer():
    # the SHREC 2006 measure set (39 columns) over 20 x 1000: past the budget
    measures = tuple(f"M{i}" for i in range(39))
    report = big_report(measures=measures)
    assert 20 * 1000 * 39 > EXPLORER_BUDGET
    page = to_html(report, date=DATE, plots=False)
    assert len(page.encode("utf-8")) < 2.5 * 2**20
    soup = soup_of(page)
    assert _data(soup)["measures"] == ["M38", *[f"M{i}" for i in range(8)]]  # the sort measure, then the shown ones
    assert "every value of every measure is in per_query.csv" in soup.find("section", id="per-query").get_text()
    # the leaderboard still has every measure column
    assert len(soup.find("table", id="leaderboard-table").thead.find_all("th")) == 3 + 39


# -- CLI and library API ---------------------------------------------------------


@pytest.fixture
def no_figures(monkeypatch):
    """The CLI's page without drawing figures (the figures are tested above): fast CLI tests."""
    import shrec_score.html

    monkeypatch.setattr(shrec_score.html, "plot_files", lambda report, formats: {})


PSB = [os.path.join(SAMPLES, "psb-like", "runs"), "--relevance", os.path.join(SAMPLES, "psb-like", "classes.cla")]


def test_html_alone_needs_out(tmp_path):
    r = CliRunner().invoke(cli, [*PSB, "--format", "csv", "--html"])
    assert r.exit_code == 2
    assert "--html without a folder writes under --out DIR/report/" in r.output
    assert not os.path.exists("report")


def test_html_folder_of_its_own_has_no_csv_links(tmp_path, no_figures):
    page_dir = tmp_path / "page"
    r = CliRunner().invoke(cli, [*PSB, "--format", "csv", "--html", str(page_dir)])
    assert r.exit_code == 0, r.output
    assert sorted(os.listdir(page_dir)) == [".shrec-score-manifest.json", "index.html"]
    soup = soup_of((page_dir / "index.html").read_text(encoding="utf-8"))
    assert soup.find("section", id="files").find("a") is None
    # the psb-like sample's leaderboard: AP shown as mAP, as in the Markdown
    _, heads, _ = _board(soup)
    assert heads == ["rank", "run", "queries", "NN", "FT", "ST", "E", "DCG", "mAP"]


def test_html_equal_to_out_links_the_files_beside(tmp_path, no_figures):
    out = tmp_path / "out"
    r = CliRunner().invoke(cli, [*PSB, "--format", "csv", "--out", str(out), "--html", str(out)])
    assert r.exit_code == 0, r.output
    soup = soup_of((out / "index.html").read_text(encoding="utf-8"))
    links = [a["href"] for a in soup.find("section", id="files").find_all("a")]
    assert "per_run.csv" in links and all((out / h).is_file() for h in links)


def test_yaml_html_key(tmp_path, no_figures):
    cfg = tmp_path / "track.yaml"
    relevance = os.path.join(SAMPLES, "psb-like", "classes.cla")
    runs = os.path.join(SAMPLES, "psb-like", "runs")
    cfg.write_text(f"description: My <track>\nrelevance: {relevance}\nruns: [{runs}]\nhtml: site\n")
    r = CliRunner().invoke(cli, ["--config", str(cfg), "--format", "csv"])
    assert r.exit_code == 0, r.output
    page = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")  # relative to the config file
    assert soup_of(page).find(class_="description").get_text() == "My <track>"
    cfg.write_text(f"relevance: {relevance}\nruns: [{runs}]\nhtml: true\n")
    r = CliRunner().invoke(cli, ["--config", str(cfg), "--format", "csv", "--out", str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "o" / "report" / "index.html").is_file()
    cfg.write_text(f"relevance: {relevance}\nruns: [{runs}]\nhtml: 3\n")
    r = CliRunner().invoke(cli, ["--config", str(cfg), "--format", "csv"])
    assert r.exit_code == 2 and "track.yaml:3: expected 'html' to be a folder path, or true" in r.output


def test_html_folder_inside_runs_or_plots_is_refused(tmp_path):
    runs = tmp_path / "runs"
    (runs / "r1").mkdir(parents=True)
    r = CliRunner().invoke(cli, [str(runs), "--relevance", PSB[2], "--html", str(runs / "page")])
    assert r.exit_code == 2 and "outside RUNS" in r.output
    r = CliRunner().invoke(cli, [*PSB, "--plots", str(tmp_path / "p"), "--html", str(tmp_path / "p" / "page")])
    assert r.exit_code == 2 and "expected --html apart from --plots" in r.output
    assert not (tmp_path / "p").exists()


def test_write_html_replaces_the_folder_as_one_unit(tmp_path):
    report = hostile_report()
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "mine.txt").write_text("kept")
    written = write_html(report, tmp_path / "site", date=DATE, plots=False)
    assert [os.path.basename(p) for p in written] == ["index.html"]
    assert (tmp_path / "site" / "index.html").read_text(encoding="utf-8") == to_html(report, date=DATE, plots=False)
    assert (tmp_path / "site" / "mine.txt").read_text() == "kept"



def test_kendall_scoring_page(tmp_path, no_figures):
    # the sketch-based retrieval sample: Kendall tau-b against human scores, no classes, no significance
    page_dir = tmp_path / "page"
    r = CliRunner().invoke(cli, ["--config", os.path.join(ROOT, "configs", "sbir-kendall.yaml"), "--format", "csv", "--out", str(tmp_path / "o"), "--html", str(page_dir)])
    assert r.exit_code == 0, r.output
    per_run = read_csv(str(tmp_path / "o" / "per_run.csv"))
    soup = soup_of((page_dir / "index.html").read_text(encoding="utf-8"))
    _, heads, rows = _board(soup)
    assert heads == ["rank", "run", "queries", "tau_b", "tau_b_std"]
    assert [(r[1], r[3], r[4]) for r in rows] == [(p["run"], f4(p["tau_b"]), f4(p["tau_b_std"])) for p in per_run]
    table = soup.find("table", id="leaderboard-table")
    stars = [[bool(td.find("strong")) for td in tr.find_all("td")[2:]] for tr in table.tbody.find_all("tr")]
    # tau_b: higher is better, the first run's is starred; tau_b_std has no direction: never starred
    assert [s[0] for s in stars] == [float(p["tau_b"]) == max(float(q["tau_b"]) for q in per_run) for p in per_run]
    assert not any(s[1] for s in stars)
    assert "no classes" in soup.find("section", id="per-class").get_text()
    assert soup.find("section", id="significance") is None


def test_the_library_page_takes_its_date_from_source_date_epoch(monkeypatch):
    """to_html() without date= follows SOURCE_DATE_EPOCH as the CLI does (1795392000 s = 2026-11-23 UTC)."""
    report = hostile_report()
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1795392000")
    page = to_html(report, plots=False)
    assert soup_of(page).find("header").find("time")["datetime"] == DATE == "2026-11-23"


def test_a_cell_that_is_no_number_is_shown_as_it_is_and_sorted_last():
    """A Report built from a user's DataFrame may hold text or pd.NA in a column: the page shows the text and
    sorts it last; the ninth pass had number() call math.isnan on it (TypeError, a review)."""
    import pandas as pd

    from shrec_score.html import fmt, number, sort_key

    assert [number(v) for v in ("0.5", "abc", None, float("nan"), pd.NA, 2)] == [0.5, None, None, None, None, 2.0]
    assert [fmt(v) for v in ("abc", None, float("nan"), 0.25, 3)] == ["abc", "", "", "0.2500", "3.0000"]
    assert [sort_key(v) for v in ("abc", pd.NA, 0.25)] == ["", "", "0.25"]
