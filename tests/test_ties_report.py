"""The tie report (``shrec-score ties``, :func:`shrec_score.tie_report`) and
``check``'s tie warning (issue 19): hand-computed places on a small contest,
and SHREC 2021 CH's NN bounds against an independent per-row computation."""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest
from click.testing import CliRunner

import shrec_score
from shrec_score.cli import cli
from shrec_score.model import Classification, MatrixRun
from shrec_score.relevance import Relevance

from .conftest import shared_path
from .test_shrec2021 import read_cla_plain


def small_contest() -> tuple[Relevance, list[MatrixRun]]:
    """4 targets (classes a a b b), queries qa (class a) and qb (class b).

    run "apart": no ties, NN 1 for qa (t0 first), 0 for qb (t0 first) -> NN 0.5 in every mode.
    run "tied": every distance of a row equal -> NN 2/4 = 0.5 expected, 1 optimistic, 0 pessimistic.
    run "half": qa: t1, t2 tied first (one relevant of two), qb: t2 first alone -> NN 0.5..1.0, expected 0.75.
    """
    cla = Classification("t.cla", ["a", "b"], ["0", "0"], ["t0", "t1", "t2", "t3"], np.array([0, 0, 1, 1], dtype=np.int32))
    queries = Classification("q.cla", ["a", "b"], ["0", "0"], ["qa", "qb"], np.array([0, 1], dtype=np.int32))
    rel = Relevance.from_classification(cla, queries)
    apart = np.array([[0.1, 0.2, 0.3, 0.4], [0.1, 0.2, 0.3, 0.4]])
    tied = np.ones((2, 4))
    half = np.array([[0.5, 0.1, 0.1, 0.9], [0.5, 0.6, 0.1, 0.9]])
    runs = [MatrixRun(name, "m.npy", d, rel.query_ids, np.arange(2), np.arange(4)) for name, d in (("apart", apart), ("tied", tied), ("half", half))]
    return rel, runs


def test_small_contest_by_hand() -> None:
    rel, runs = small_contest()
    frame = shrec_score.tie_report(runs, rel, measures=["NN"]).set_index("run")
    # rule: apart 0.5 (qa 1, qb 0); tied 0.5 (column 0 first: qa 1, qb 0); half: qa t1 first (1), qb t2 (1) -> 1.0
    assert frame.loc["apart", ["pessimistic", "rule", "optimistic", "expected"]].tolist() == [0.5, 0.5, 0.5, 0.5]
    assert frame.loc["tied", ["pessimistic", "rule", "optimistic", "expected"]].tolist() == pytest.approx([0.0, 0.5, 1.0, 0.5])
    assert frame.loc["half", ["pessimistic", "rule", "optimistic", "expected"]].tolist() == pytest.approx([0.5, 1.0, 1.0, 0.75])
    assert frame.loc["tied", "tied_queries"] == 1.0 and frame.loc["half", "tied_queries"] == 0.5 and frame.loc["apart", "tied_queries"] == 0.0
    # leaderboard by rule: half 1.0 first; apart and tied 0.5, by name: apart 2nd, tied 3rd
    assert frame["place"].to_dict() == {"half": 1, "apart": 2, "tied": 3}
    # the runs' ties are independent, so their bounds can be reached together:
    # tied at 1.0 beats half at 0.5 and apart at 0.5 -> 1st; tied at 0.0 -> 3rd
    # half at 0.5 falls below apart (0.5, "apart" < "half") and tied at 1.0 -> 3rd
    # apart (0.5): above half at 0.5 (by name) and tied at 0.0 -> 1st; below both at 1.0 -> 3rd
    assert frame[["best_place", "worst_place"]].T.to_dict("list") == {"half": [1, 3], "apart": [1, 3], "tied": [1, 3]}
    assert frame.loc["tied", "spread"] == 1.0


def test_places_of_a_lower_is_better_measure() -> None:
    """FP_highly at depth 1 (false positives in the first item; lower is better) on the small contest.

    The optimistic arrangement is a run's best (fewest FP), the pessimistic its worst, whichever way is
    better (the tie report swapped them for a lower-is-better measure: best and worst place = place).
    qa: apart t0 (a, relevant) -> 0; tied: t0 by rule and optimistic -> 0, pessimistic t2 -> 1; half: t1 or t2 -> 0..1.
    qb: apart t0 -> 1; tied: rule t0 -> 1, optimistic t2 -> 0, pessimistic 1; half: t2 alone -> 0.
    Means: apart 0.5 in every mode; tied 0.0 (optimistic) .. 1.0 (pessimistic), rule 0.5; half 0.0 .. 0.5, rule 0.
    Rule: half 0.0 first, then apart and tied at 0.5 by name.  tied at 0.0 beats apart 0.5 and half at its
    worst 0.5 -> 1st, at 1.0 -> 3rd; half at 0.5 falls below apart (by name) and tied at 0.0 -> 3rd; apart
    (0.5) is above half at 0.5 (by name) and tied at 1.0 -> 1st, below both at 0.0 -> 3rd.
    """
    from shrec_score.options import Settings

    rel, runs = small_contest()
    frame = shrec_score.tie_report(runs, rel, measures=["FP_highly"], settings=Settings(depth=1)).set_index("run")
    assert frame.loc["tied", ["pessimistic", "rule", "optimistic"]].tolist() == [1.0, 0.5, 0.0]
    assert frame.loc["half", ["pessimistic", "rule", "optimistic"]].tolist() == [0.5, 0.0, 0.0]
    assert frame["place"].to_dict() == {"half": 1, "apart": 2, "tied": 3}
    assert frame[["best_place", "worst_place"]].T.to_dict("list") == {"half": [1, 3], "apart": [1, 3], "tied": [1, 3]}


def test_a_run_without_a_value_stays_last() -> None:
    """A run that ranks nothing (--missing-queries skip: no value, NaN means in every mode) is placed last by the
    leaderboard's rule, and the ties cannot lift it: best and worst place 3 (the comparison with NaN was false
    for every run, so its best place came out 1).  apart 0.5 in every mode, tied 0.0 .. 1.0 (rule 0.5): apart 1st
    by name, tied 2nd; each reaches 1st and 2nd."""
    from shrec_score.model import RankedRun
    from shrec_score.options import Settings

    rel, runs = small_contest()
    empty = np.zeros(0, dtype=np.int64)
    none = RankedRun.from_lists("none", {"qa": empty, "qb": empty})
    frame = shrec_score.tie_report([*runs[:2], none], rel, measures=["NN"], settings=Settings(missing="skip")).set_index("run")
    assert np.isnan(frame.loc["none", ["pessimistic", "rule", "optimistic"]].to_numpy(dtype=float)).all()
    assert frame["place"].to_dict() == {"apart": 1, "tied": 2, "none": 3}
    assert frame[["best_place", "worst_place"]].T.to_dict("list") == {"apart": [1, 2], "tied": [1, 2], "none": [3, 3]}


def test_check_warns_when_ties_move_a_mean(tmp_path: object) -> None:
    folder = os.path.join(str(tmp_path), "runs")
    os.makedirs(folder)
    cla = os.path.join(str(tmp_path), "t.cla")
    with open(cla, "w") as f:
        f.write("PSB 1\n2 4\na 0 2\n0\n1\nb 0 2\n2\n3\n")
    np.savetxt(os.path.join(folder, "tied.txt"), np.ones((4, 4)))
    np.savetxt(os.path.join(folder, "apart.txt"), np.arange(16, dtype=float).reshape(4, 4))
    result = CliRunner().invoke(cli, ["check", folder, "-r", cla, "--run-format", "matrix"])
    lines = [ln for ln in result.output.splitlines() if "ties move" in ln]
    assert len(lines) == 1 and "'tied'" in lines[0], result.output


@pytest.mark.parametrize("challenge, qname, tname", [("culture", "queryCulture.cla", "datasetCulture.cla"), ("shape", "queryShape.cla", "datasetShape.cla")])
def test_shrec2021_ch_nn_bounds_against_the_rows(challenge: str, qname: str, tname: str) -> None:
    """NN: optimistic = a relevant item among the row's smallest distances;
    pessimistic = every item at the smallest distance relevant; expected = their share."""
    folder = shared_path("shrec2021-ch", challenge)
    qcla, tcla = os.path.join(folder, qname), os.path.join(folder, tname)
    frame = shrec_score.tie_report([folder], tcla, queries=qcla, matrix_order="numeric", measures=["NN", "AP"])
    q_class, t_class = read_cla_plain(qcla), read_cla_plain(tcla)
    targets = sorted(t_class, key=int)
    for path in sorted(glob.glob(os.path.join(folder, "*.txt"))):
        run = os.path.splitext(os.path.basename(path))[0]
        d = np.loadtxt(path)
        opt, pess, exp = [], [], []
        for qid in sorted(q_class, key=int):
            row = d[int(qid)][: len(targets)]
            first = np.flatnonzero(row == row.min())
            rel = np.array([t_class[targets[j]] == q_class[qid] for j in first])
            opt.append(rel.any())
            pess.append(rel.all())
            exp.append(rel.mean())
        got = frame[(frame["run"] == run) & (frame["measure"] == "NN")].iloc[0]
        assert got["optimistic"] == pytest.approx(np.mean(opt), abs=1e-12)
        assert got["pessimistic"] == pytest.approx(np.mean(pess), abs=1e-12)
        assert got["expected"] == pytest.approx(np.mean(exp), abs=1e-12)
        for m in ("NN", "AP"):
            r = frame[(frame["run"] == run) & (frame["measure"] == m)].iloc[0]
            assert r["pessimistic"] - 1e-12 <= r["rule"] <= r["optimistic"] + 1e-12
            assert r["pessimistic"] - 1e-12 <= r["expected"] <= r["optimistic"] + 1e-12
            assert r["best_place"] <= r["place"] <= r["worst_place"]
