"""Report in a notebook: _repr_html_ (the leaderboard, best values bold, the
signature in one line, the warnings, every name escaped) and a short __repr__."""

from __future__ import annotations

import os
import warnings

import numpy as np
from bs4 import BeautifulSoup

import shrec_score
from shrec_score.report import Report

from .conftest import SAMPLES

HOSTILE = "<script>alert(1)</script>&\"'"


def _report(**kw: object) -> Report:
    """Two models whose per-query values are known: item positions on a line, classes a a b b c."""
    labels = ["a", "a", "b", "b", "c"]
    near = np.array([[0.0], [1.0], [10.0], [11.0], [30.0]])  # each a/b item's neighbour is its class mate
    far = np.array([[0.0], [10.0], [1.0], [11.0], [30.0]])  # 0-2 and 1-3 neighbours: wrong class
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return shrec_score.evaluate(embeddings={"near": near, HOSTILE: far}, labels=labels, measures=["NN", "MAP@R", "RR"], **kw)


def test_html_is_the_leaderboard_with_the_best_values_bold():
    report = _report()
    soup = BeautifulSoup(report._repr_html_(), "html.parser")
    table = soup.find("table")
    assert [th.get_text() for th in table.find_all("th")] == ["rank", "run", "queries", "NN", "MAP@R", "RR"]
    rows = [[td.get_text() for td in tr.find_all("td")] for tr in table.find("tbody").find_all("tr")]
    # near: queries 0-3 find their class mate first (NN = RR = MAP@R = 1); item 4 (class c) is alone: left out
    # far (positions 0, 10, 1, 11, 30): query 0 ranks 2, 1: its class mate 1 at rank 2; query 1 ranks 3, 2, 0:
    # rank 3; query 2 ranks 0, 1, 3: rank 3; query 3 ranks 1, 2: rank 2.  NN 0 and MAP@R (R = 1) 0 everywhere
    assert rows == [
        ["1", "near", "4", "1.0000", "1.0000", "1.0000"],
        ["2", HOSTILE, "4", "0.0000", "0.0000", f"{(1 / 2 + 1 / 3 + 1 / 3 + 1 / 2) / 4:.4f}"],
    ]
    bold = [[td.b is not None for td in tr.find_all("td")] for tr in table.find("tbody").find_all("tr")]
    assert bold == [[False, False, False, True, True, True], [False] * 6]


def test_html_escapes_every_name_and_runs_no_script():
    report = _report()
    page = report._repr_html_()
    assert "<script>" not in page
    soup = BeautifulSoup(page, "html.parser")
    assert soup.find("script") is None
    assert HOSTILE in [td.get_text() for td in soup.find_all("td")]


def test_html_has_the_signature_in_one_line_and_the_warnings():
    report = _report()
    soup = BeautifulSoup(report._repr_html_(), "html.parser")
    signature = soup.find("p", class_="signature").get_text()
    assert signature == report.signature_text() and "\n" not in signature
    items = [li.get_text() for li in soup.find("ul", class_="warnings").find_all("li")]
    assert items == [w if w.startswith("note: ") else f"warning: {w}" for w in report.warnings]
    assert any("1 of 5 queries have no relevant target" in i for i in items)


def test_html_shows_the_confidence_interval_with_significance():
    report = _report(significance=True, n_resamples=200, seed=1)
    soup = BeautifulSoup(report._repr_html_(), "html.parser")
    assert soup.find_all("th")[-1].get_text() == "95% CI"
    board = report.leaderboard
    cells = [tr.find_all("td")[-1].get_text() for tr in soup.find("tbody").find_all("tr")]
    assert cells == [f"{lo:.4f}..{hi:.4f}" for lo, hi in zip(board["NN_ci_low"], board["NN_ci_high"])]
    assert cells[0] == "1.0000..1.0000"  # every query of 'near' scores NN = 1


def test_a_lower_is_better_column_marks_its_minimum():
    """FP_relevant (SHREC 2006 false positives): the smallest mean is the best, bold."""
    root = os.path.join(SAMPLES, "shrec2006-like")
    report = shrec_score.score(
        [os.path.join(root, "runs")], os.path.join(SAMPLES, "psb-like", "classes.cla"), queries=os.path.join(root, "queries.cla"),
        grades="sister", run_format="lists", measures=["ADR", "FP_relevant"],
    )
    soup = BeautifulSoup(report._repr_html_(), "html.parser")
    column = [th.get_text() for th in soup.find_all("th")].index("FP_relevant")
    cells = [tr.find_all("td")[column] for tr in soup.find("tbody").find_all("tr")]
    marked = {float(td.get_text()) for td in cells if td.b is not None}
    assert marked == {round(float(report.leaderboard["FP_relevant"].min()), 4)}
    assert len(marked) < len(cells)


def test_repr_is_a_few_lines_naming_runs_queries_measures_and_the_best_run():
    report = _report()
    text = repr(report)
    lines = text.splitlines()
    assert len(lines) <= 6
    assert lines[0] == "<shrec-score Report: 2 runs, 4 queries>"
    assert lines[1] == """  runs: 'near', '<script>alert(1)</script>&"\\''"""
    assert lines[2] == "  measures: NN, MAP@R, RR (sorted by NN)"
    assert lines[3] == "  best run: 'near' (NN 1.0000)"
    assert lines[4] == f"  warnings: {len(report.warnings)} (report.warnings)"


def test_repr_counts_runs_past_five():
    rng = np.random.default_rng(0)
    models = {f"m{i}": rng.normal(size=(6, 2)) for i in range(7)}
    report = shrec_score.evaluate(embeddings=models, labels=[0, 0, 0, 1, 1, 1], measures=["NN"])
    runs_line = repr(report).splitlines()[1]
    assert runs_line.endswith(", ... (2 more)") and runs_line.count("'m") == 5
