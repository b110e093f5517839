"""Kendall's tau-b (seed 004): hand-worked pair sets, scipy as oracle, the SBIR sample."""

import io
import math
import os

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import shrec_score
from shrec_score.cli import cli
from shrec_score.measures.kendall import count_inversions, kendall_tau_b

from .conftest import ROOT

scipy_stats = pytest.importorskip("scipy.stats", reason="scipy is a test extra")


def pair_sets(x: list[float], y: list[float]) -> dict[str, int]:
    """The five pair sets of seed 004 by brute force, O(n^2) (the oracle of these tests).

    Each unordered pair once: C (same order), D (opposite), T_x (tied in x
    only), T_y (tied in y only), T_xy (tied in both).

    >>> pair_sets([1, 2, 2], [1, 3, 2])
    {'C': 2, 'D': 0, 'T_x': 1, 'T_y': 0, 'T_xy': 0}
    """
    out = {"C": 0, "D": 0, "T_x": 0, "T_y": 0, "T_xy": 0}
    n = len(x)
    for i in range(n):
        for j in range(i + 1, n):
            dx = (x[i] > x[j]) - (x[i] < x[j])
            dy = (y[i] > y[j]) - (y[i] < y[j])
            if dx == 0 and dy == 0:
                out["T_xy"] += 1
            elif dx == 0:
                out["T_x"] += 1
            elif dy == 0:
                out["T_y"] += 1
            elif dx == dy:
                out["C"] += 1
            else:
                out["D"] += 1
    return out


def test_the_five_pair_sets_on_a_hand_worked_example():
    # ground truth x and system y on 5 items (both: higher = more similar)
    x = [3, 1, 2, 2, 5]
    y = [30, 10, 10, 20, 20]
    # pairs (i, j): (0,1) C  (0,2) C  (0,3) C  (0,4) x0<x4, y0>y4 -> D
    #               (1,2) x1<x2, y tied -> T_y   (1,3) C   (1,4) C
    #               (2,3) x tied, y2<y3 -> T_x   (2,4) C
    #               (3,4) x3<x4, y tied -> T_y
    assert pair_sets(x, y) == {"C": 6, "D": 1, "T_x": 1, "T_y": 2, "T_xy": 0}
    want = (6 - 1) / math.sqrt((6 + 1 + 1) * (6 + 1 + 2))
    assert kendall_tau_b(np.array(x), np.array(y)) == pytest.approx(want, rel=1e-15)


def test_pairs_tied_in_both_count_in_neither_factor():
    x = [1, 1, 2, 3]
    y = [5, 5, 6, 4]
    # (0,1) tied in both; (0,2) C; (0,3) D; (1,2) C; (1,3) D; (2,3) D
    s = pair_sets(x, y)
    assert s == {"C": 2, "D": 3, "T_x": 0, "T_y": 0, "T_xy": 1}
    assert kendall_tau_b(np.array(x), np.array(y)) == pytest.approx((2 - 3) / math.sqrt(5 * 5))


@pytest.mark.parametrize("seed", range(6))
def test_equals_scipy_kendalltau_b_with_many_ties(seed):
    rng = np.random.default_rng(seed)
    for n in (2, 3, 5, 40, 333):
        x = rng.integers(0, 6, n).astype(float)
        y = (x + rng.integers(-3, 4, n)).astype(float)
        ours = kendall_tau_b(x, y)
        ref = scipy_stats.kendalltau(x, y, variant="b").statistic
        assert (math.isnan(ours) and math.isnan(ref)) or ours == pytest.approx(ref, abs=1e-12), (seed, n)


def test_invariant_to_the_scale_of_the_scores_and_minus_one_when_reversed():
    rng = np.random.default_rng(9)
    x = rng.normal(size=200).round(1)
    y = x + rng.normal(size=200)
    t = kendall_tau_b(x, y)
    assert kendall_tau_b(100 * x + 7, np.exp(y)) == pytest.approx(t, abs=1e-15)
    assert kendall_tau_b(x, -x) == -1.0
    assert kendall_tau_b(x, x) == 1.0
    assert math.isnan(kendall_tau_b(np.ones(5), np.arange(5.0)))
    assert math.isnan(kendall_tau_b(np.array([1.0]), np.array([2.0])))


def test_quadratic_oracle_confirms_a_larger_tied_group():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 30, 1500)
    y = x // 3 + rng.integers(0, 8, 1500)
    s = pair_sets(x.tolist(), y.tolist())
    want = (s["C"] - s["D"]) / math.sqrt((s["C"] + s["D"] + s["T_x"]) * (s["C"] + s["D"] + s["T_y"]))
    assert kendall_tau_b(x, y) == pytest.approx(want, rel=1e-13)
    a = rng.integers(0, 50, 700)
    assert count_inversions(a) == sum(1 for i in range(700) for j in range(i + 1, 700) if a[i] > a[j])


def test_a_group_of_100000_items_matches_scipy():
    rng = np.random.default_rng(4)
    x = rng.integers(0, 1000, 100_000).astype(float)
    y = x + rng.normal(0, 300, 100_000).round()
    assert kendall_tau_b(x, y) == pytest.approx(scipy_stats.kendalltau(x, y).statistic, abs=1e-12)


@pytest.fixture
def small(tmp_path):
    (tmp_path / "gt.csv").write_text("query,item,score\ns1,a,5\ns1,b,3\ns1,c,1\ns2,a,2\ns2,d,4\ns2,e,4\n")
    run = tmp_path / "runs" / "r"
    run.mkdir(parents=True)
    (run / "s1.txt").write_text("a 0.1\nc 0.5\nb 0.9\n")  # a, c, b
    (run / "s2.txt").write_text("d\ne\na\n")  # ranks only
    return tmp_path


def test_runs_against_ground_truth_through_the_cli(small):
    r = CliRunner().invoke(cli, [str(small / "runs"), "--ground-truth", str(small / "gt.csv"), "--per-query", "--format", "csv"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    pq = pd.read_csv(io.StringIO(r.stdout))
    # s1: truth a > b > c; system a > c > b -> C = 2, D = 1 -> 1/3
    # s2: truth d = e > a; system d > e > a (ranks) -> C = 2, D = 0, T_x = 1 -> 2 / sqrt(3 * 2)
    assert pq["tau_b"].tolist() == pytest.approx([1 / 3, 2 / math.sqrt(6)])
    report = shrec_score.score_kendall([small / "runs"], small / "gt.csv")
    board = report.to_dataframe()
    assert board.loc[0, "tau_b"] == pytest.approx((1 / 3 + 2 / math.sqrt(6)) / 2)
    assert board.loc[0, "tau_b_std"] == pytest.approx(np.std([1 / 3, 2 / math.sqrt(6)], ddof=1))
    # orientation flags turn the order around
    flipped = shrec_score.score_kendall([small / "runs"], small / "gt.csv", ground_truth_higher_is_better=False)
    assert flipped.per_query["tau_b"].tolist() == pytest.approx([-1 / 3, -2 / math.sqrt(6)])


def test_a_stray_file_names_the_ground_truth(small):
    (small / "runs" / "r" / "s9.txt").write_text("a\n")
    r = CliRunner().invoke(cli, [str(small / "runs"), "--ground-truth", str(small / "gt.csv")])
    assert r.exit_code == 2, r.output
    assert r.output.strip().splitlines() == [
        f"Error: {small / 'runs' / 'r' / 's9.txt'}: expected a file named after a query id (with or without extension), "
        "got no query 's9' in the ground truth"
    ]


def test_trec_run_scores_are_similarities(small):
    (small / "r.trec").write_text("s1 Q0 a 1 9 t\ns1 Q0 c 2 5 t\ns1 Q0 b 3 1 t\ns2 Q0 d 1 3 t\ns2 Q0 e 2 3 t\ns2 Q0 a 3 1 t\n")
    report = shrec_score.score_kendall([small / "r.trec"], small / "gt.csv")
    # s2: truth d = e > a, system d = e > a: tied in both -> tau-b 1
    assert report.per_query["tau_b"].tolist() == pytest.approx([1 / 3, 1.0])
    # a target ranked twice for one query: the first repeat in the file, both its lines named (one repeat rule
    # with the scoring's: join.repeated_lines)
    (small / "r.trec").write_text("s1 Q0 a 1 9 t\ns1 Q0 c 2 5 t\ns2 Q0 d 1 3 t\ns1 Q0 b 3 1 t\ns2 Q0 d 2 2 t\ns1 Q0 c 4 0 t\n")
    with pytest.raises(shrec_score.InputError, match=r"r\.trec:5: expected each target once per query; s2 d is already ranked at line 3$"):
        shrec_score.score_kendall([small / "r.trec"], small / "gt.csv")


@pytest.mark.parametrize(
    "change, message",
    [
        (("runs/r/s1.txt", "a 0.1\nb 0.9\n"), "expected run 'r' to rank every item of query 's1'; 1 of 3 are not ranked, got first missing: 'c'"),
        (("runs/r/s1.txt", "a 0.1\nc 0.5\nb 0.9\nz 1.0\n"), "s1.txt:4: expected a target id of the collection (ids were found in the first column), got unknown id 'z'"),
        (("gt.csv", "query,item,score\ns1,a,x\n"), "gt.csv:2: expected a finite number as score, got 'x'"),
        (("gt.csv", "query,item\ns1,a\n"), "gt.csv:1: expected the header 'query,item,score'"),
        (("gt.csv", "query,item,score\ns1,a,1\ns1,a,2\n"), "gt.csv:3: expected each (query, item) pair once; s1,a is already scored at line 2"),
    ],
)
def test_bad_input_is_one_line_with_exit_2(small, change, message):
    name, text = change
    (small / name).write_text(text)
    r = CliRunner().invoke(cli, [str(small / "runs"), "--ground-truth", str(small / "gt.csv")])
    assert r.exit_code == 2, r.output
    assert message in r.output and len(r.output.strip().splitlines()) == 1


def test_sbir_sample_is_31_by_40_and_its_runs_are_ordered_by_quality(monkeypatch):
    monkeypatch.chdir(ROOT)
    gt = pd.read_csv(os.path.join("sample_runs", "sbir", "ground_truth.csv"))
    assert gt["query"].nunique() == 31 and (gt.groupby("query").size() == 40).all()
    r = CliRunner().invoke(cli, ["--config", "configs/sbir-kendall.yaml", "--format", "csv"])
    assert r.exit_code == 0, r.output
    board = pd.read_csv(io.StringIO(r.stdout))
    assert board["run"].tolist() == ["strong", "medium", "weak"]
    # the leaderboard means equal the means of the per-query values computed with scipy
    report = shrec_score.score_kendall([os.path.join("sample_runs", "sbir", "runs")], os.path.join("sample_runs", "sbir", "ground_truth.csv"))
    truth = {(q, i): s for q, i, s in gt[["query", "item", "score"]].itertuples(index=False)}
    for run in ("strong", "weak"):
        taus = []
        for q in sorted(gt["query"].unique()):
            lines = open(os.path.join("sample_runs", "sbir", "runs", run, f"{q}.txt")).read().split("\n")
            pairs = [ln.split() for ln in lines if ln]
            x = [truth[(q, it)] for it, _ in pairs]
            y = [-float(d) for _, d in pairs]
            taus.append(scipy_stats.kendalltau(x, y, variant="b").statistic)
        assert board.set_index("run").loc[run, "tau_b"] == pytest.approx(np.mean(taus), abs=1e-12)
    assert report.per_query["tau_b"].between(-1, 1).all()
