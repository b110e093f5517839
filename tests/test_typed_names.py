"""Columns named as the user typed them (issue 31.4) and trec_eval's default
measures for graded qrels (issue 31.18).

The oracles: pytrec_eval (trec_eval 9 in C; its dict keys are trec_eval's
printed names), trec_eval 10's own output on NIST's test files
(tests/trec_eval_levels, see tests/test_trec_names.py) and values written by
hand.
"""

import io
import math
import os

import pandas as pd
import pytest
from click.testing import CliRunner
from rich.console import Console

import shrec_score
from shrec_score.cli import cli
from shrec_score.measures import DEFAULT_GRADED, get_measure
from shrec_score.measures.measure import OFFICIAL

from .conftest import ROOT, SAMPLES, shared_path
from .test_treceval_measures import random_case, write_case

LEVELS = os.path.join(ROOT, "tests", "trec_eval_levels")


def invoke(*args):
    r = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return r


# -- issue 31.4: a column is named as its measure was typed ------------------------------


def test_csv_columns_are_pytrec_evals_keys_with_its_values(tmp_path):
    """A script that types pytrec_eval's keys finds them as our columns, with its values."""
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is a test extra")
    qrels, run = random_case(5)
    qp, rp = write_case(tmp_path, qrels, run)
    keys = ["map", "Rprec", "recip_rank", "P_5", "recall_100", "ndcg_cut_10", "bpref", "success_5"]
    per_query = pd.read_csv(io.StringIO(invoke(rp, "-r", qp, "-m", ",".join(keys), "--format", "csv", "--per-query", "--quiet").stdout))
    board = pd.read_csv(io.StringIO(invoke(rp, "-r", qp, "-m", ",".join(keys), "--format", "csv", "--quiet").stdout))
    assert list(board.columns) == ["rank", "run", "queries", *keys]
    assert list(per_query.columns) == ["run", "query", "class", *keys]
    te = pytrec_eval.RelevanceEvaluator(qrels, {"map", "Rprec", "recip_rank", "P.5", "recall.100", "ndcg_cut.10", "bpref", "success.5"}).evaluate(run)
    per_query = per_query.set_index("query")
    for key in keys:
        for topic in te:
            assert per_query.loc[topic, key] == pytest.approx(te[topic][key], abs=1e-12), (key, topic)
        assert board.loc[0, key] == pytest.approx(sum(te[t][key] for t in te) / len(te), abs=1e-12), key  # every topic counted


def test_map_rprec_recall_100_in_the_csv_the_dataframe_and_the_terminal(tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is a test extra")
    qrels, run = random_case(6)
    qp, rp = write_case(tmp_path, qrels, run)
    typed = ["map", "Rprec", "recall.100"]
    csv = pd.read_csv(io.StringIO(invoke(rp, "-r", qp, "-m", ",".join(typed), "--format", "csv").stdout))
    assert list(csv.columns)[3:] == typed
    report = shrec_score.score([rp], qp, measures=typed)
    assert list(report.leaderboard.columns)[3:] == typed and list(report.per_query.columns)[3:] == typed
    assert report.measures == typed and report.shown == typed and report.sort == "map"
    console = Console(file=io.StringIO(), width=200, color_system=None)
    report.to_rich(console)
    header = next(line for line in console.file.getvalue().splitlines() if "rank" in line)
    assert [w for w in header.replace("┃", " ").replace("|", " ").split() if w not in ("rank", "run", "queries")] == typed
    assert invoke(rp, "-r", qp, "-m", ",".join(typed), "--format", "markdown").stdout.splitlines()[0] == "| rank | run | queries | map | Rprec | recall.100 |"
    te = pytrec_eval.RelevanceEvaluator(qrels, {"map", "Rprec", "recall.100"}).evaluate(run)
    for column, key in zip(typed, ("map", "Rprec", "recall_100")):
        assert csv.loc[0, column] == pytest.approx(sum(te[t][key] for t in te) / len(te), abs=1e-12), column


def test_ranx_spelling_is_the_column_and_sort_finds_it_in_any_spelling(tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is a test extra")
    qrels, run = random_case(7)
    qp, rp = write_case(tmp_path, qrels, run)
    report = shrec_score.score([rp], qp, measures=["P@5", "ndcg@10"], sort="ndcg_cut_10")
    assert list(report.leaderboard.columns)[3:] == ["P@5", "ndcg@10"] and report.sort == "ndcg@10"
    te = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
    pq = report.per_query.set_index("query")
    for topic in te:
        assert pq.loc[topic, "ndcg@10"] == pytest.approx(te[topic]["ndcg_cut_10"], abs=1e-12), topic
    mean_ap = shrec_score.score([rp], qp, measures=["mAP", "NN"], sort="AP")
    assert list(mean_ap.leaderboard.columns)[3:] == ["mAP", "NN"] and mean_ap.sort == "mAP"


def test_two_spellings_of_one_measure_keep_two_equal_columns(tmp_path):
    """Documented choice (docs/usage.md): each typed name is a column; repeating one name adds none."""
    qrels, run = random_case(8)
    qp, rp = write_case(tmp_path, qrels, run)
    csv = pd.read_csv(io.StringIO(invoke(rp, "-r", qp, "-m", "mrr,recip_rank", "-m", "mrr", "--format", "csv", "--per-query").stdout))
    assert list(csv.columns) == ["run", "query", "class", "mrr", "recip_rank"]
    assert csv["mrr"].tolist() == csv["recip_rank"].tolist()
    assert shrec_score.score([rp], qp, measures=["mrr", "recip_rank"], sort="recip_rank").sort == "mrr"  # the first column of the measure


def test_a_sort_that_is_not_computed_is_still_refused(tmp_path):
    qrels, run = random_case(8)
    qp, rp = write_case(tmp_path, qrels, run)
    r = CliRunner().invoke(cli, [str(rp), "-r", str(qp), "-m", "map", "--sort", "AP"])
    assert r.exit_code == 2
    assert "expected --sort to name a measure that is computed (map), got 'AP'" in r.stderr


# -- issue 31.18: graded qrels without -m score trec_eval's default set ---------------------

#: trec_eval's printed names of its default ("official") measures, in its order.
OFFICIAL_PRINTED = [get_measure(n).trec_name for n in OFFICIAL]


def trec_lines(text):
    return [tuple(line.split()) for line in text.splitlines()]


def test_graded_qrels_default_is_trec_evals_set_with_its_lines():
    """NIST's qrels.rel_level (grades 0..4), no -m: every line is trec_eval 10's (-l1 is its default)."""
    d = shared_path("trec_eval")
    r = invoke(os.path.join(d, "results.test"), "-r", os.path.join(d, "qrels.rel_level"), "--format", "trec", "--per-query", "--quiet")
    ours = trec_lines(r.stdout)
    theirs = set(trec_lines(open(os.path.join(LEVELS, "out.test.aql1"), encoding="utf-8").read()))
    measures = [f[0] for f in ours if f[1] == "all" and f[0] not in ("runid", "num_q")]
    assert measures == OFFICIAL_PRINTED
    assert [f for f in ours if f[0] not in ("runid", "num_q") and f not in theirs] == []
    assert ("num_q", "all", "3") in ours


def test_graded_qrels_default_equals_pytrec_eval():
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is a test extra")
    d = shared_path("trec_eval")
    qrels, run = {}, {}
    for line in open(os.path.join(d, "qrels.rel_level"), encoding="utf-8"):
        q, _, doc, g = line.split()
        qrels.setdefault(q, {})[doc] = int(g)
    for line in open(os.path.join(d, "results.test"), encoding="utf-8"):
        q, _, doc, _, s, _ = line.split()
        run.setdefault(q, {})[doc] = float(s)
    report = shrec_score.score([os.path.join(d, "results.test")], os.path.join(d, "qrels.rel_level"))
    assert report.measures == list(OFFICIAL) and report.sort == "map"
    # iprec_at_recall_x is trec_eval 10's (checked against its output above); pytrec_eval is trec_eval 9
    names = [n for n in OFFICIAL if not n.startswith("iprec")]
    te = pytrec_eval.RelevanceEvaluator(qrels, {"num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank", "P"}).evaluate(run)
    pq = report.per_query.set_index("query")
    board = report.leaderboard.iloc[0]
    for name in names:
        key = get_measure(name).trec_name
        theirs = [te[t][key] for t in sorted(te)]
        for topic, value in zip(sorted(te), theirs):
            assert pq.loc[topic, name] == pytest.approx(value, abs=1e-12), (name, topic)
        if name.startswith("num_"):
            assert board[name] == sum(theirs), name
        elif name != "gm_map":
            assert board[name] == pytest.approx(sum(theirs) / len(theirs), abs=1e-12), name


def test_graded_qrels_default_by_hand(tmp_path):
    """q1: d1 (2), d2 (0), d3 (1), d4 (2, not retrieved); the run d1, d2, d3, x. q2: only e1 (0)."""
    (tmp_path / "q.qrels").write_text("q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq1 0 d4 2\nq2 0 e1 0\n")
    (tmp_path / "r.run").write_text("q1 Q0 d1 1 4 t\nq1 Q0 d2 2 3 t\nq1 Q0 d3 3 2 t\nq1 Q0 x 4 1 t\nq2 Q0 e1 1 1 t\nq2 Q0 e2 2 0.5 t\n")
    report = shrec_score.score([tmp_path / "r.run"], tmp_path / "q.qrels")
    board = report.leaderboard.iloc[0]
    assert list(report.leaderboard.columns)[3:] == list(OFFICIAL)
    assert board["map"] == pytest.approx((1 / 1 + 2 / 3) / 3 / 2)  # q2 has no relevant document: 0, counted
    assert board["gm_map"] == pytest.approx(math.sqrt((1 / 1 + 2 / 3) / 3 * 1e-5))  # exp of the mean of ln max(AP, 1e-5)
    assert board["Rprec"] == pytest.approx((2 / 3) / 2)
    assert board["recip_rank"] == pytest.approx(1 / 2)
    assert board["bpref"] == pytest.approx((1 + (1 - 1 / 1)) / 3 / 2)  # d3 has one judged non-relevant (d2) above it; min(R, N) = 1
    assert board["P.5"] == pytest.approx((2 / 5) / 2) and board["P.1000"] == pytest.approx((2 / 1000) / 2)
    assert (board["num_ret"], board["num_rel"], board["num_rel_ret"]) == (6, 3, 2)
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is a test extra")
    qrels = {"q1": {"d1": 2, "d2": 0, "d3": 1, "d4": 2}, "q2": {"e1": 0}}
    run = {"q1": {"d1": 4.0, "d2": 3.0, "d3": 2.0, "x": 1.0}, "q2": {"e1": 1.0, "e2": 0.5}}
    te = pytrec_eval.RelevanceEvaluator(qrels, {"map", "Rprec", "bpref", "recip_rank", "P"}).evaluate(run)
    for name in ("map", "Rprec", "bpref", "recip_rank", "P.5", "P.1000"):
        assert board[name] == pytest.approx(sum(te[t][get_measure(name).trec_name] for t in te) / 2, abs=1e-12), name


def test_binary_qrels_and_sister_grades_keep_their_defaults(tmp_path):
    (tmp_path / "q.qrels").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    (tmp_path / "r.run").write_text("q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\n")
    binary = shrec_score.score([tmp_path / "r.run"], tmp_path / "q.qrels")
    assert binary.measures == ["AP", "FT", "RR", "P@5", "P@10", "R@5", "R@10", "NN", "DCG"]
    sister = shrec_score.score([os.path.join(SAMPLES, "psb-like", "runs")], os.path.join(SAMPLES, "psb-like", "classes.cla"), grades="sister")
    assert sister.measures == list(DEFAULT_GRADED) and sister.sort == "ADR"


def test_graded_qrels_default_under_ties_expected_leaves_out_what_has_no_exact_expectation(tmp_path):
    """Documented choice: the default set keeps what --ties expected computes exactly, with a note; typed, such a measure is refused."""
    (tmp_path / "q.qrels").write_text("q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\n")
    (tmp_path / "r.run").write_text("q1 Q0 d1 1 1 t\nq1 Q0 d2 2 1 t\nq1 Q0 d3 3 0 t\n")  # d1 and d2 tied
    report = shrec_score.score([tmp_path / "r.run"], tmp_path / "q.qrels", ties="expected")
    out = [n for n in OFFICIAL if not get_measure(n).ties_exact]
    assert set(out) == {"gm_map", "bpref", *(n for n in OFFICIAL if n.startswith("iprec"))}
    assert report.measures == [n for n in OFFICIAL if n not in out]
    assert report.warnings[0] == f"note: --ties expected: {', '.join(out)} of trec_eval's default measures left out (no exact expected value over tied orders)"
    # d1 (relevant) and d2 tied at ranks 1-2, d3 at 3: AP = ((1/1 + 2/3) + (1/2 + 2/3)) / 2 / 2 over the two orders
    assert report.leaderboard.loc[0, "map"] == pytest.approx(((1 + 2 / 3) + (1 / 2 + 2 / 3)) / 2 / 2)
    with pytest.raises(shrec_score.OptionError, match="gm_map has no exact expected value"):
        shrec_score.score([tmp_path / "r.run"], tmp_path / "q.qrels", ties="expected", measures=["map", "gm_map"])
