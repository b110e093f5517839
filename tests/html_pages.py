"""Pages for the tests of the results page (issue 21): the SHREC 2006 sample
scored through the CLI, and reports with hostile names, built in memory."""

from __future__ import annotations

import csv
import os

import numpy as np
import pandas as pd
from click.testing import CliRunner

import shrec_score
from shrec_score.aggregate import leaderboard_table, per_class_table, per_run_table
from shrec_score.cli import cli
from shrec_score.report import Report
from shrec_score.significance import pairwise
from shrec_score.table import Table

from .conftest import ROOT

#: 2026-11-23 00:00 UTC: the page's date with SOURCE_DATE_EPOCH.
EPOCH = "1795392000"
DATE = "2026-11-23"


def score_sample06(folder: str, *extra: str) -> str:
    """Score the SHREC 2006 sample with --html (under --out/report); return --out."""
    out = os.path.join(folder, "out")
    args = ["--config", os.path.join(ROOT, "configs", "shrec2006.yaml"), "--out", out, "--html",
            "--significance", "--resamples", "500", "--format", "csv", "--quiet", *extra]
    r = CliRunner().invoke(cli, args, env={"SOURCE_DATE_EPOCH": EPOCH})
    assert r.exit_code == 0, r.output
    return out


_SAMPLE: dict[str, str] = {}


def sample06_out(tmp_path_factory) -> str:
    """:func:`score_sample06` once per test session (the unit and the browser tests read the same page)."""
    if "out" not in _SAMPLE:
        _SAMPLE["out"] = score_sample06(str(tmp_path_factory.mktemp("html06")))
    return _SAMPLE["out"]


def read_csv(path: str) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


#: Run and class names that would break a page written without escaping.
HOSTILE_RUNS = [
    "</script><script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=2">',
    "a \"quoted\" 'run' & <b>bold</b>",
    "<!-- comment --> ]]> &amp;",
    "Ünïcødé 形状 🚀",
    "line\u2028sep\u2029para",
]
HOSTILE_CLASSES = ["</script>", "c&d \"q\" 'x'", "<i>ital</i>", "Ωmega"]


def hostile_report(n_queries: int = 8, seed: int = 3) -> Report:
    """A report whose run, class and query names are hostile, with per-class means and significance."""
    rng = np.random.default_rng(seed)
    queries = [f"q<{i}>&\"{i}\"" for i in range(n_queries)]
    classes = [HOSTILE_CLASSES[i % len(HOSTILE_CLASSES)] for i in range(n_queries)]
    rows = []
    for k, run in enumerate(HOSTILE_RUNS):
        for q, c in zip(queries, classes):
            rows.append({"run": run, "query": q, "class": c, "AP": float(rng.uniform(0, 1) * (1 - 0.1 * k)), "FP_relevant": float(rng.integers(0, 9))})
    per_query = pd.DataFrame(rows)
    measures = ["AP", "FP_relevant"]
    per_run = per_run_table(Table.from_pandas(per_query), measures, HOSTILE_RUNS)
    board = leaderboard_table(per_run, "AP")
    pr = pd.DataFrame([{"run": r, "recall": x / 4, "precision": 1 - x / 5 - 0.05 * k} for k, r in enumerate(HOSTILE_RUNS) for x in range(5)])
    return Report(
        per_query=per_query,
        leaderboard=board,
        pr_curve=pr,
        measures=measures,
        shown=measures,
        sort="AP",
        signature={"version": shrec_score.__version__, "mode": "<b>m</b>", "relevance": "</script>.cla", "queries": n_queries},
        per_class=per_class_table(Table.from_pandas(per_query), measures, list(board["run"])),
        significance=pairwise(per_query, "AP", list(board["run"]), n_resamples=100, seed=0),
    )


def big_report(n_runs: int = 20, n_queries: int = 1000, measures: tuple[str, ...] = ("NN", "FT", "ST", "E", "DCG", "AP"), seed: int = 0) -> Report:
    """A generated contest: ``n_runs`` runs, ``n_queries`` queries in 50 classes, random values."""
    rng = np.random.default_rng(seed)
    runs = [f"team{i:02d}-run" for i in range(n_runs)]
    queries = [f"m{i:05d}" for i in range(n_queries)]
    classes = [f"class_{i % 50:02d}" for i in range(n_queries)]
    frame = {
        "run": np.repeat(runs, n_queries),
        "query": np.tile(queries, n_runs),
        "class": np.tile(classes, n_runs),
    }
    for m in measures:
        frame[m] = rng.uniform(0, 1, n_runs * n_queries)
    per_query = pd.DataFrame(frame)
    per_run = per_run_table(Table.from_pandas(per_query), list(measures), runs)
    board = leaderboard_table(per_run, measures[-1])
    levels = np.arange(1, 21) / 20
    pr = pd.DataFrame([{"run": r, "recall": x, "precision": float(1 - x * rng.uniform(0.3, 0.9))} for r in runs for x in levels])
    return Report(
        per_query=per_query,
        leaderboard=board,
        pr_curve=pr,
        measures=list(measures),
        shown=list(measures)[:8],
        sort=measures[-1],
        signature={"version": shrec_score.__version__, "mode": "generated", "queries": n_queries},
        per_class=per_class_table(Table.from_pandas(per_query), list(measures), list(board["run"])),
    )
