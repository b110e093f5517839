"""Measures carry their semantics in the registry (which way is better,
trec_eval's name only for equal values), and every ordering, best mark,
significance table and trec_eval-style line follows them."""

import io
import json
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import shrec_score
from shrec_score import render
from shrec_score.aggregate import leaderboard_table, ranking_table
from shrec_score.measures import (
    column_higher_is_better,
    get_measure,
    known_measures,
    measure_listing,
    measure_table,
)
from shrec_score.report import Report
from shrec_score.significance import pairwise
from shrec_score.table import Table

from .conftest import ROOT

CLA = "PSB 1\n2 6\na 0 3\nq1\nq2\nq3\nb 0 3\nq4\nq5\nq6\n"
MATES = {"q1": "q2 q3", "q2": "q1 q3", "q3": "q1 q2", "q4": "q5 q6", "q5": "q4 q6", "q6": "q4 q5"}
OTHERS = {"q1": "q4 q5 q6", "q2": "q4 q5 q6", "q3": "q4 q5 q6", "q4": "q1 q2 q3", "q5": "q1 q2 q3", "q6": "q1 q2 q3"}
LOWER_IS_BETTER = {"FP_highly", "FP_relevant", "FN_highly", "FN_relevant"}
PATTERN_SAMPLES = ["P@5", "R@5", "CG@10", "DCG@10", "NCG@10", "NDCG@10", "ndcg_cut.10", "map_cut.10", "success.10"]
#: trec_eval's own measures (measures/treceval.py): named as trec_eval, each compared with pytrec_eval in test_treceval_measures.py.
TREC_EVAL_OWN = {
    "ndcg": "ndcg", "bpref": "bpref", "num_ret": "num_ret", "num_rel": "num_rel", "num_rel_ret": "num_rel_ret", "gm_map": "gm_map",
    "set_F": "set_F", **{f"iprec_at_recall_{x / 10:.2f}": f"iprec_at_recall_{x / 10:.2f}" for x in range(11)},
    "ndcg_cut.10": "ndcg_cut_10", "map_cut.10": "map_cut_10", "success.10": "success_10",
}


@pytest.fixture
def three_lengths(tmp_path):
    """Three runs whose lists differ in length; every query has K = 2 class mates.

    a_long:  mate, mate, other, other, other  -> Va 5, Vr 2: FP_relevant 3, AP (1/1 + 2/2) / 2
    b_mid:   other, mate, other               -> Va 3, Vr 1: FP_relevant 2, AP (1/2) / 2
    c_short: mate, other                      -> Va 2, Vr 1: FP_relevant 1, AP (1/1) / 2
    Names are in the opposite order of FP_relevant, so a descending sort would look right by accident.
    """
    (tmp_path / "c.cla").write_text(CLA)
    for run in ("a_long", "b_mid", "c_short"):
        (tmp_path / "runs" / run).mkdir(parents=True)
    for q in MATES:
        mates, others = MATES[q].split(), OTHERS[q].split()
        lists = {
            "a_long": mates + others,
            "b_mid": [others[0], mates[0], others[1]],
            "c_short": [mates[0], others[0]],
        }
        for run, ranked in lists.items():
            (tmp_path / "runs" / run / f"{q}.txt").write_text("\n".join(ranked) + "\n")
    return tmp_path


def _score(folder, **kw):
    return shrec_score.score([folder / "runs"], folder / "c.cla", run_format="lists", **kw)


def test_leaderboard_sorted_by_a_lower_is_better_measure_puts_the_smallest_first(three_lengths):
    report = _score(three_lengths, measures=["FP_relevant", "AP"], sort="FP_relevant")
    board = report.leaderboard
    assert board["run"].tolist() == ["c_short", "b_mid", "a_long"]
    assert board["FP_relevant"].tolist() == [2 - 1, 3 - 1, 5 - 2]
    assert board["AP"].tolist() == pytest.approx([(1 / 1) / 2, (1 / 2) / 2, (1 / 1 + 2 / 2) / 2])
    by_ap = _score(three_lengths, measures=["FP_relevant", "AP"], sort="AP").leaderboard
    assert by_ap["run"].tolist() == ["a_long", "c_short", "b_mid"]  # higher-is-better: still descending


def test_markdown_and_latex_bold_the_minimum_of_a_lower_is_better_column(three_lengths):
    report = _score(three_lengths, measures=["FP_relevant", "AP"], sort="FP_relevant")
    md = render.to_markdown(report).splitlines()
    assert md[:5] == [
        "| rank | run | queries | FP_relevant | mAP |",
        "|---:|:---|---:|---:|---:|",
        "| 1 | c_short | 6 | **1.0000** | 0.5000 |",
        "| 2 | b_mid | 6 | 2.0000 | 0.2500 |",
        "| 3 | a_long | 6 | 3.0000 | **1.0000** |",
    ]
    tex = render.to_latex(report).splitlines()
    assert tex[8] == "rank & run & queries & FP\\_relevant & mAP \\\\"
    assert tex[10:13] == [
        "1 & c\\_short & 6 & \\textbf{1.0000} & 0.5000 \\\\",
        "2 & b\\_mid & 6 & 2.0000 & 0.2500 \\\\",
        "3 & a\\_long & 6 & 3.0000 & \\textbf{1.0000} \\\\",
    ]
    assert report.to_markdown() == render.to_markdown(report) and report.to_latex() == render.to_latex(report)


def test_rich_table_bolds_the_minimum_of_a_lower_is_better_column(three_lengths):
    from rich.console import Console

    report = _score(three_lengths, measures=["FP_relevant", "AP"], sort="FP_relevant")
    buf = io.StringIO()
    render.to_rich(report, Console(file=buf, width=100, force_terminal=True, color_system="standard"))
    rows = [ln for ln in buf.getvalue().splitlines() if "_short" in ln or "_long" in ln]
    bold = "\x1b[1m"
    assert f"{bold}1.0000" in rows[0] and f"{bold}0.5000" not in rows[0]  # c_short: FP best, AP not
    assert f"{bold}3.0000" not in rows[1] and f"{bold}1.0000" in rows[1]  # a_long: AP best, FP worst


def test_per_query_ranking_follows_the_direction(three_lengths):
    report = _score(three_lengths, measures=["FP_relevant", "AP"], rank_by="FP_relevant")
    first = report.ranking[report.ranking["rank"] == 1]
    assert first["run"].unique().tolist() == ["c_short"]
    assert first["value"].tolist() == [1.0] * 6
    pq = pd.DataFrame({"query": ["x"] * 3, "run": ["b", "a", "c"], "FN_highly": [2.0, 2.0, math.nan]})
    assert ranking_table(Table.from_pandas(pq), "FN_highly")["run"].tolist() == ["a", "b", "c"]  # ties by name, NaN last


def test_leaderboard_ties_by_name_and_nan_last_when_lower_is_better():
    per_run = pd.DataFrame({"run": ["d", "b", "a", "c"], "queries": [3] * 4, "FN_relevant": [math.nan, 2.0, 2.0, 1.0]})
    board = leaderboard_table(Table.from_pandas(per_run), "FN_relevant")
    assert board["run"].tolist() == ["c", "a", "b", "d"]
    assert board["rank"].tolist() == [1, 2, 3, 4]


def test_significance_orients_mean_diff_and_wins_so_the_better_run_wins():
    # FN_relevant (lower is better): B has fewer misses on every query.
    fn_a, fn_b = [3.0, 2.0, 4.0, 5.0], [1.0, 1.0, 2.0, 4.0]
    pq = pd.DataFrame({"run": ["A"] * 4 + ["B"] * 4, "query": list("wxyz") * 2, "FN_relevant": fn_a + fn_b})
    b_first = pairwise(pq, "FN_relevant", ["B", "A"]).iloc[0]
    assert b_first["mean_diff"] == pytest.approx(((3 - 1) + (2 - 1) + (4 - 2) + (5 - 4)) / 4)
    assert (b_first["wins"], b_first["ties"], b_first["losses"]) == (4, 0, 0)
    a_first = pairwise(pq, "FN_relevant", ["A", "B"]).iloc[0]
    assert a_first["mean_diff"] == pytest.approx(-b_first["mean_diff"])
    assert (a_first["wins"], a_first["ties"], a_first["losses"]) == (0, 0, 4)
    assert a_first["p_value"] == b_first["p_value"] == 2 / 2**4  # two-sided: the orientation does not matter
    # The same numbers read as a higher-is-better measure: A wins.
    assert pairwise(pq, "FN_relevant", ["A", "B"], higher_is_better=True).iloc[0]["wins"] == 4


def test_significance_through_the_api_on_a_lower_is_better_sort(three_lengths):
    report = _score(three_lengths, measures=["FP_relevant"], sort="FP_relevant", significance=True, n_resamples=200)
    row = report.significance.iloc[0]
    assert (row["run_a"], row["run_b"]) == ("c_short", "b_mid")
    assert row["mean_diff"] == 2 - 1 and (row["wins"], row["losses"]) == (6, 0)  # c_short has 1 false positive fewer per query


def test_every_measure_has_a_direction_and_only_fp_fn_are_lower_is_better():
    names = [n for n in known_measures() if not n.endswith(("@k", ".k"))] + PATTERN_SAMPLES
    lower = set()
    for name in names:
        m = get_measure(name)
        assert isinstance(m.higher_is_better, bool), name
        assert m.direction == ("higher" if m.higher_is_better else "lower")
        if not m.higher_is_better:
            lower.add(name)
    assert lower == LOWER_IS_BETTER
    assert {f"{k}_{lv}" for k in ("TP", "TN") for lv in ("highly", "relevant")} <= set(names) - lower


def test_trec_names_only_where_the_value_is_trec_evals():
    names = [n for n in known_measures() if not n.endswith(("@k", ".k"))] + PATTERN_SAMPLES
    named = {n: get_measure(n).trec_name for n in names if get_measure(n).trec_name}
    twins = {"map": "map", "Rprec": "Rprec", "recip_rank": "recip_rank"}  # trec_eval's value, where NN, FT, AP, RR leave K = 0 out
    assert named == {"NN": "P_1", "FT": "Rprec", "AP": "map", "RR": "recip_rank", "P@5": "P_5", "R@5": "recall_5", **twins, **TREC_EVAL_OWN}


@pytest.fixture
def one_query(tmp_path):
    """Query q1: gains d1 0, d2 2, d3 1, d7 1, d20 2 (K = 4); the run ranks d1..d12."""
    (tmp_path / "q.qrels").write_text("q1 0 d1 0\nq1 0 d2 2\nq1 0 d3 1\nq1 0 d7 1\nq1 0 d20 2\n")
    (tmp_path / "runs" / "r1").mkdir(parents=True)
    (tmp_path / "runs" / "r1" / "q1.txt").write_text("".join(f"d{i}\n" for i in range(1, 13)))
    qrels = {"q1": {"d1": 0, "d2": 2, "d3": 1, "d7": 1, "d20": 2}}
    run = {"q1": {f"d{i}": float(20 - i) for i in range(1, 13)}}  # scores descending: the same order
    return tmp_path, qrels, run


def test_to_trec_prints_trec_names_only_for_equal_values(one_query):
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is a test extra")
    folder, qrels, run = one_query
    report = shrec_score.score([folder / "runs" / "r1"], folder / "q.qrels", measures=["NDCG@10", "AP", "P@5", "NDCG@2"], run_format="lists")
    lines = render.to_trec(report, per_query=True).splitlines()
    labels = [ln.split("\t")[0].strip() for ln in lines]
    # AP and P@5 leave a topic without relevant documents out of the mean where
    # trec_eval counts 0: not trec_eval's values, so not its names (issue 31.1)
    assert labels == ["runid", "NDCG@10", "AP", "P@5", "NDCG@2", "num_q", "NDCG@10", "AP", "P@5", "NDCG@2"]
    assert not any("ndcg" in label or label in ("map", "P_5") for label in labels)
    values = {(ln.split("\t")[0].strip(), ln.split("\t")[1]): ln.split("\t")[2] for ln in lines}
    assert values["AP", "q1"] == f"{(1 / 2 + 2 / 3 + 3 / 7) / 4:.4f}"  # d2, d3, d7 at ranks 2, 3, 7; d20 not retrieved
    assert values["P@5", "q1"] == f"{2 / 5:.4f}"
    twins = shrec_score.score([folder / "runs" / "r1"], folder / "q.qrels", measures=["map", "precision@5", "ndcg@2"], run_format="lists")
    assert [ln.split("\t")[0].strip() for ln in render.to_trec(twins).splitlines()] == ["runid", "num_q", "map", "P_5", "ndcg_cut_2"]
    te = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P.5", "ndcg_cut.2"}).evaluate(run)["q1"]
    pq = report.per_query.iloc[0]
    assert pq["AP"] == pytest.approx(te["map"], abs=1e-12)
    assert pq["P@5"] == pytest.approx(te["P_5"], abs=1e-12)
    # Why NDCG@k has no trec_eval name: SHREC 2006 discounts rank 2 by log2(2) = 1 and
    # takes the ideal over the class (2, 2, 1, 1); trec_eval discounts by log2(i + 1).
    assert pq["NDCG@2"] == pytest.approx((0 + 2 / 1) / (2 + 2 / 1))
    assert te["ndcg_cut_2"] == pytest.approx((2 / math.log2(3)) / (2 + 2 / math.log2(3)))
    assert abs(pq["NDCG@2"] - te["ndcg_cut_2"]) > 0.1


def test_every_trec_named_measure_equals_pytrec_eval(one_query):
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is a test extra")
    folder, qrels, run = one_query
    names = ["NN", "FT", "AP", "RR", "P@5", "P@10", "R@5", "R@10"]
    report = shrec_score.score([folder / "runs" / "r1"], folder / "q.qrels", measures=names, run_format="lists")
    te = pytrec_eval.RelevanceEvaluator(qrels, {"map", "Rprec", "recip_rank", "P.1,5,10", "recall.5,10"}).evaluate(run)["q1"]
    pq = report.per_query.iloc[0]
    for name in names:
        assert pq[name] == pytest.approx(te[get_measure(name).trec_name], abs=1e-12), name


def test_column_directions_of_columns_that_are_not_measures():
    assert column_higher_is_better("tau_b") is True
    assert column_higher_is_better("tau_b_std") is None
    assert column_higher_is_better("queries") is None
    assert column_higher_is_better("AP_ci_low") is None and column_higher_is_better("FP_relevant_ci_high") is None
    assert column_higher_is_better("my_own_score") is True  # unknown: the old "highest is best"
    assert column_higher_is_better("FN_highly") is False and column_higher_is_better("NDCG@10") is True


def _kendall_report():
    per_query = pd.DataFrame({"run": ["x", "x", "y", "y"], "query": ["s1", "s2"] * 2, "tau_b": [0.5, 0.7, 0.0, 0.4]})
    std = [math.sqrt((0.5 - 0.6) ** 2 + (0.7 - 0.6) ** 2), math.sqrt((0.0 - 0.2) ** 2 + (0.4 - 0.2) ** 2)]  # ddof = 1, n = 2
    per_run = pd.DataFrame({"run": ["x", "y"], "queries": [2, 2], "tau_b": [0.6, 0.2], "tau_b_std": std})
    return Report(
        per_query=per_query,
        leaderboard=leaderboard_table(Table.from_pandas(per_run), "tau_b"),
        pr_curve=pd.DataFrame(columns=["run", "recall", "precision"]),
        measures=["tau_b", "tau_b_std"],
        shown=["tau_b", "tau_b_std"],
        sort="tau_b",
        signature={"version": shrec_score.__version__, "mode": "rank correlation", "relevance": "test", "queries": 2},
    )


def test_a_column_without_direction_gets_no_best_mark():
    md = render.to_markdown(_kendall_report()).splitlines()
    assert md[2] == "| 1 | x | 2 | **0.6000** | 0.1414 |"
    assert md[3] == "| 2 | y | 2 | 0.2000 | 0.2828 |"  # tau_b_std: neither the max nor the min is "best"
    tex = render.to_latex(_kendall_report())
    assert tex.count("\\textbf{") == 1
    assert render.to_trec(_kendall_report()).splitlines()[2:4] == ["tau_b                 \tall\t0.6000", "tau_b_std             \tall\t0.1414"]


def test_formats_cover_every_text_format_and_each_renders(three_lengths):
    report = _score(three_lengths, measures=["FP_relevant", "AP"], sort="FP_relevant")
    assert set(render.FORMATS) == {"csv", "json", "markdown", "latex", "trec"}
    out = {name: f(report, per_query=False) for name, f in render.FORMATS.items()}
    assert pd.read_csv(io.StringIO(out["csv"]))["run"].tolist() == ["c_short", "b_mid", "a_long"]
    doc = json.loads(out["json"])
    assert doc["sort"] == "FP_relevant" and [r["run"] for r in doc["leaderboard"]] == ["c_short", "b_mid", "a_long"]
    assert out["markdown"].startswith("| rank | run | queries | FP_relevant | mAP |\n")
    assert out["latex"].startswith("% shrec-score ") and "\\textbf{1.0000}" in out["latex"]
    assert out["trec"].splitlines()[:4] == ["runid                 \tall\tc_short", "num_q                 \tall\t6", "FP_relevant           \tall\t1.0000", "AP                    \tall\t0.5000"]
    per_query = {name: f(report, per_query=True) for name, f in render.FORMATS.items()}
    assert len(pd.read_csv(io.StringIO(per_query["csv"]))) == 3 * 6
    assert len(json.loads(per_query["json"])["per_query"]) == 3 * 6
    # the leaderboard unchanged, then the per-query table of the sort measure (values: tests/test_cli.py)
    assert per_query["markdown"].startswith(out["markdown"]) and per_query["latex"].startswith(out["latex"])
    assert "**FP_relevant per query**" in per_query["markdown"] and "\\end{longtable}" in per_query["latex"]
    for name in render.FORMATS:
        assert getattr(report, f"to_{name}")(per_query=True) == per_query[name], name


def test_report_does_not_import_the_renderers_at_module_level():
    code = "import sys, shrec_score.report; print('shrec_score.render' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


def test_measure_table_is_the_listing():
    rows = {r.name: r for r in measure_table()}
    assert list(rows) == known_measures()
    assert (rows["AP"].name, rows["AP"].direction, rows["AP"].trec_name) == ("AP", "higher", "map")
    assert (rows["P@k"].name, rows["P@k"].direction, rows["P@k"].trec_name) == ("P@k", "higher", "P_k")
    assert rows["NDCG@k"].trec_name is None
    assert {n for n, r in rows.items() if r.direction == "lower"} == LOWER_IS_BETTER
    assert "over the first e_depth (default 32) results" in rows["E"].summary and "e_depth" in rows["E"].params
    lines = measure_listing().splitlines()
    assert [ln.split()[0] for ln in lines[1:]] == known_measures()
    assert lines[1].split()[:3] == ["NN", "higher", "P_1"]


def test_all_against_all_tn_counts_what_a_query_can_retrieve_not_itself(tmp_path):
    """All-against-all, the query leaves its own list: Ds for it is the collection less itself (a bug hunt
    found TN = 1 for every query of a 9-model collection whose lists held the 8 others).  By hand: a list
    of all 8 others retrieves every relevant item, so TN = Ds' + V - Va - C = 8 + C - 8 - C = 0; with the
    list cut to the first 3, TN = 8 + V - 3 - C, V counted here from the list."""
    ids = [f"m{i}" for i in range(9)]
    classes = {"A": ids[:2], "B": ids[2:5], "C": ids[5:]}
    lines = ["PSB 1", "3 9"]
    for name, members in classes.items():
        lines += ["", f"{name} 0 {len(members)}", *members]
    (tmp_path / "c.cla").write_text("\n".join(lines) + "\n")
    rng = np.random.default_rng(5)
    m = rng.random((9, 9))
    np.fill_diagonal(m, 0)
    np.save(tmp_path / "run.npy", m)
    pq = shrec_score.score([tmp_path / "run.npy"], tmp_path / "c.cla", grades="sister", measures=["TN_relevant", "TN_highly"]).per_query
    assert pq["TN_relevant"].tolist() == [0.0] * 9 and pq["TN_highly"].tolist() == [0.0] * 9
    run = tmp_path / "lists"
    run.mkdir()
    cls = {q: name for name, members in classes.items() for q in members}
    want = []
    for i, q in enumerate(ids):
        order = [j for j in np.argsort(m[i], kind="stable") if j != i][:3]
        (run / f"{q}.txt").write_text("\n".join(ids[j] for j in order) + "\n")
        v = sum(cls[ids[j]] == cls[q] for j in order)  # grade 2 (same class) counts for both levels of a flat .cla
        want.append(8 + v - 3 - (len(classes[cls[q]]) - 1))
    pq = shrec_score.score([run], tmp_path / "c.cla", grades="sister", measures=["TN_highly"], run_format="lists").per_query
    assert pq["TN_highly"].tolist() == [float(w) for w in want]


def test_a_querys_values_are_the_same_bits_whatever_the_other_lists_of_its_chunk(tmp_path):
    # q0's list and judgments are the same in both runs; only q1's list is 5 long in one and 3,000 in the other, so
    # q0 sits in blocks padded to different widths (a bug hunt: pairwise row sums moved ndcg in its last bit)
    rng = np.random.default_rng(7)
    docs = [f"d{i}" for i in range(4000)]
    judged = rng.choice(4000, 900, replace=False)
    (tmp_path / "qrels").write_text("".join(f"{q} 0 d{d} {rng.integers(0, 3)}\n" for q in ("q0", "q1") for d in judged))
    q0 = rng.permutation(4000)[:700]
    runs = tmp_path / "runs"
    runs.mkdir()
    for name, n1 in (("short", 5), ("long", 3000)):
        lines = [f"q0 Q0 {docs[d]} {r} {1000 - r * 0.37:.6f} t\n" for r, d in enumerate(q0)]
        lines += [f"q1 Q0 {docs[d]} {r} {5000 - r * 0.37:.6f} t\n" for r, d in enumerate(rng.permutation(4000)[:n1])]
        (runs / name).write_text("".join(lines))
    measures = ["map", "ndcg", "bpref", "ndcg_cut.500", "AP", "NDCG@700", "DCG", "recip_rank", "Rprec"]
    pq = shrec_score.score([runs / "short", runs / "long"], tmp_path / "qrels", measures=measures).per_query
    rows = pq[pq["query"] == "q0"].set_index("run")
    for m in measures:
        assert rows.loc["short", m] == rows.loc["long", m], m  # equal bits, not approximately
