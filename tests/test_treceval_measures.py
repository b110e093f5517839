"""trec_eval's measures under trec_eval's names: each equal to trec_eval per
topic (pytrec_eval as oracle) and in 'all' (NIST's expected output), the
aliases, --depth (-M), --judged-only (-J), the docs table, and the SHREC 2006
coverage note only when its measures are computed."""

import io
import math
import os

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import shrec_score
from shrec_score.cli import cli
from shrec_score.errors import OptionError
from shrec_score.measures import DEFAULT_GRADED, Settings, get_measure
from shrec_score.measures.registry import measures_markdown
from shrec_score.measures.treceval import JudgedBlock, bpref, iprec_at_recall, ndcg

from .conftest import ROOT, shared_path

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is a test extra")

IPREC = [f"iprec_at_recall_{x / 10:.2f}" for x in range(11)]
#: Our names (what users type) of the measures added for trec_eval.
ADDED = [
    "ndcg_cut.5", "ndcg_cut.10", "ndcg_cut.20", "ndcg", "map_cut.5", "map_cut.100", "success.1", "success.10",
    "bpref", "num_ret", "num_rel", "num_rel_ret", "gm_map", "set_F", *IPREC,
]
#: The same, in pytrec_eval's measure syntax.
PYTREC = {"ndcg_cut.5,10,20", "ndcg", "map_cut.5,100", "success.1,10", "bpref", "num_ret", "num_rel", "num_rel_ret", "gm_map", "set_F"}
#: Existing shrec-score measures reachable by trec_eval's names (aliases): equal where the topic has a relevant document.
EXISTING = ["map", "Rprec", "recip_rank", "P.5", "P.10", "recall.10", "recall.100"]


def random_case(seed, n_topics=12, n_docs=80):
    """Graded qrels (0..3), score ties, unjudged documents, a topic with only
    non-relevant judgments and one whose relevant documents are never retrieved."""
    rng = np.random.default_rng(seed)
    docs = [f"d{i:03d}" for i in range(n_docs)]
    qrels, run = {}, {}
    for t in range(n_topics):
        judged = rng.choice(docs, size=int(rng.integers(1, 40)), replace=False)
        grades = rng.integers(0, 4, size=judged.size)
        if t == 0:
            grades[:] = 0  # no relevant document
        qrels[f"t{t}"] = {d: int(g) for d, g in zip(judged, grades)}
        pool = [d for d in docs if t != 1 or qrels["t1"].get(d, 0) == 0]  # t1: nothing relevant retrieved
        ret = rng.choice(pool, size=int(rng.integers(1, 60)), replace=False)
        run[f"t{t}"] = {d: float(rng.integers(0, 6)) for d in ret}  # few distinct scores: many ties
    return qrels, run


def write_case(tmp_path, qrels, run):
    qp, rp = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qp.write_text("".join(f"{q} 0 {d} {g}\n" for q, ds in qrels.items() for d, g in ds.items()))
    rp.write_text("".join(f"{q} Q0 {d} {i} {s!r} tag\n" for q, ds in run.items() for i, (d, s) in enumerate(ds.items())))
    return qp, rp


def per_topic(report, names):
    pq = report.per_query.set_index("query")
    return {q: {n: float(pq.loc[q, n]) for n in names} for q in pq.index}  # columns named as typed


def trec_order(ranking):
    """trec_eval's order: score descending, ties by docid descending."""
    return sorted(ranking, key=lambda d: (ranking[d], d), reverse=True)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("level", [1, 2])
def test_every_added_measure_equals_pytrec_eval_per_topic(tmp_path, seed, level):
    qrels, run = random_case(seed)
    qp, rp = write_case(tmp_path, qrels, run)
    report = shrec_score.score([rp], qp, measures=ADDED + EXISTING, settings=Settings(rel_level=level))
    ours = per_topic(report, ADDED + EXISTING)
    te = pytrec_eval.RelevanceEvaluator(qrels, PYTREC | {"map", "Rprec", "recip_rank", "P.5,10", "recall.10,100"}, relevance_level=level).evaluate(run)
    assert set(te) == set(ours)
    for topic, want in te.items():
        for name in ADDED + EXISTING:
            if name in IPREC:
                continue  # trec_eval 10 rounding: below
            got, expected = ours[topic][name], want[get_measure(name).trec_name]
            if name in EXISTING and math.isnan(got):
                # shrec-score's rule: a topic without a relevant document is empty; trec_eval writes 0
                assert sum(g >= level for g in qrels[topic].values()) == 0 and expected == 0
                continue
            assert got == pytest.approx(expected, abs=1e-9), (topic, name)


@pytest.mark.parametrize("seed", range(6))
def test_iprec_at_recall_equals_pytrec_eval_with_trec_eval_9_rounding(tmp_path, seed):
    """pytrec_eval is trec_eval 9: cutoff (long)(x R + 0.9); the registered
    measure is trec_eval 10 (lround(x R)); both roundings from one function."""
    qrels, run = random_case(seed)
    topics = list(qrels)
    te = pytrec_eval.RelevanceEvaluator(qrels, {"iprec_at_recall"}).evaluate(run)
    rows, counts = [], []
    for t in topics:
        rows.append([qrels[t].get(d, -1) for d in trec_order(run[t])])
        counts.append(np.bincount(list(qrels[t].values()), minlength=4).tolist())
    block = JudgedBlock.from_lists(rows, counts)
    for name in IPREC:
        x = float(name.rsplit("_", 1)[1])
        v9 = iprec_at_recall(block, level=x, rounding="v9")
        np.testing.assert_allclose(v9, [te[t][name] for t in topics], atol=1e-12, err_msg=name)
    qp, rp = write_case(tmp_path, qrels, run)
    ours = shrec_score.score([rp], qp, measures=IPREC).per_query
    for name in IPREC:
        v10 = iprec_at_recall(block, level=float(name.rsplit("_", 1)[1]), rounding="v10")
        np.testing.assert_array_equal(ours[name].to_numpy(), v10, err_msg=name)


def test_iprec_rounding_differs_exactly_where_the_cutoffs_differ():
    # R = 5 relevant, x = 0.1: trec_eval 9 asks for the (long)(0.5 + 0.9) = 1st, trec_eval 10 for the lround(0.5) = 1st;
    # x = 0.6: (long)(3.9) = 3 vs lround(3.0) = 3; R = 12, x = 0.1: (long)(2.1) = 2 vs lround(1.2) = 1.
    block = JudgedBlock.from_lists([[1, 0, 0, 1, 0, 0, 0, 0]], [[3, 12]])
    assert iprec_at_recall(block, level=0.1, rounding="v10")[0] == 1 / 1  # 1st relevant at rank 1: max precision after = 1
    assert iprec_at_recall(block, level=0.1, rounding="v9")[0] == 2 / 4  # 2nd relevant at rank 4


def test_ndcg_and_bpref_by_hand():
    # grades at ranks 1..4: 0, 3, unjudged, 1; judged: one 0, one 1, one 3, one more 0 (not retrieved)
    block = JudgedBlock.from_lists([[0, 3, -1, 1]], [[2, 1, 0, 1]])
    dcg = 3 / math.log2(3) + 1 / math.log2(5)
    assert ndcg(block)[0] == pytest.approx(dcg / (3 + 1 / math.log2(3)), abs=1e-15)
    assert ndcg(block, k=2)[0] == pytest.approx((3 / math.log2(3)) / (3 + 1 / math.log2(3)), abs=1e-15)
    # R = 2, N = 2: the grade-3 item has 1 judged non-relevant above it, the grade-1 item 1
    assert bpref(block)[0] == pytest.approx(((1 - 1 / 2) + (1 - 1 / 2)) / 2, abs=1e-15)
    # level 2: R = 1 (the 3), N = 3 (grades 0, 0, 1); one judged non-relevant above the 3
    assert bpref(JudgedBlock.from_lists([[0, 3, -1, 1]], [[2, 1, 0, 1]], rel_level=2))[0] == (1 - min(1, 1) / min(3, 1)) / 1
    assert bpref(JudgedBlock.from_lists([[3, 0, -1, 1]], [[2, 1, 0, 1]], rel_level=2))[0] == 1 / 1


def test_gm_map_is_a_geometric_mean_and_counts_are_sums(tmp_path):
    qrels, run = random_case(3)
    qp, rp = write_case(tmp_path, qrels, run)
    report = shrec_score.score([rp], qp, measures=["gm_map", "num_ret", "num_rel", "num_rel_ret", "map_cut.1000"])
    board = report.leaderboard.iloc[0]
    pq = report.per_query
    ap = np.maximum(pq["map_cut.1000"].to_numpy(), 1e-5)
    assert board["gm_map"] == pytest.approx(math.exp(np.log(ap).mean()), rel=1e-12)
    assert board["num_ret"] == sum(len(r) for r in run.values())
    assert board["num_rel"] == sum(g >= 1 for q in qrels.values() for g in q.values())
    assert board["num_rel_ret"] == pq["num_rel_ret"].sum()


def nist(name):
    return os.path.join(shared_path("trec_eval"), name)


def expected_all(path):
    out = {}
    for line in open(path, encoding="utf-8"):
        f = line.split()
        if len(f) == 3 and f[1] == "all":
            out[f[0]] = f[2]
    return out


@pytest.mark.parametrize("out_file", ["out.test", "out.test.a"])
def test_all_values_equal_nists_expected_output(out_file):
    """out.test is trec_eval's default ('official') measures over results.test and qrels.test."""
    exp = expected_all(nist(out_file))
    names = ["bpref", "num_ret", "num_rel", "num_rel_ret", "gm_map", *IPREC]
    report = shrec_score.score([nist("results.test")], nist("qrels.test"), measures=names)
    board = report.leaderboard.iloc[0]
    checked = 0
    for name in names:
        trec = get_measure(name).trec_name
        if trec not in exp:
            continue
        value = board[name]
        text = f"{value:.4f}" if not name.startswith("num_") else str(int(value))
        assert text == exp[trec], (name, text, exp[trec])
        checked += 1
    assert checked >= 5


def test_all_values_of_the_cutoff_measures_equal_pytrec_eval_on_nists_files():
    """out.test has no ndcg / map_cut / success / set_F: pytrec_eval on the same files."""
    qrels, run = {}, {}
    for line in open(nist("qrels.test"), encoding="utf-8"):
        q, _, d, g = line.split()
        qrels.setdefault(q, {})[d] = int(g)
    for line in open(nist("results.test"), encoding="utf-8"):
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
    names = ["ndcg", "ndcg_cut.10", "ndcg_cut.20", "map_cut.100", "success.5", "set_F"]
    te = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg", "ndcg_cut.10,20", "map_cut.100", "success.5", "set_F"}).evaluate(run)
    report = shrec_score.score([nist("results.test")], nist("qrels.test"), measures=names)
    ours = per_topic(report, names)
    for topic in te:
        for name in names:
            assert ours[topic][name] == pytest.approx(te[topic][get_measure(name).trec_name], abs=1e-9)


def test_trec_format_prints_trec_evals_own_names(tmp_path):
    qrels, run = random_case(1, n_topics=3)
    qp, rp = write_case(tmp_path, qrels, run)
    r = CliRunner().invoke(cli, [str(rp), "-r", str(qp), "-m", "ndcg_cut.10,map_cut.100,success.5,bpref,iprec_at_recall_0.50,P.5", "--format", "trec"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    labels = [line.split("\t")[0].strip() for line in r.stdout.splitlines()]
    assert labels == ["runid", "num_q", "ndcg_cut_10", "map_cut_100", "success_5", "bpref", "iprec_at_recall_0.50", "P_5"]


def test_names_and_aliases_mean_one_thing():
    assert get_measure("ndcg_cut_10").name == get_measure("ndcg_cut.10").name == "ndcg_cut.10"
    assert get_measure("AP@100").name == get_measure("map_cut_100").name == "map_cut.100"
    assert get_measure("Success@10").name == get_measure("success_10").name == "success.10"
    assert get_measure("Bpref").name == "bpref"
    # trec_eval's names are trec_eval's measures (0 for a topic without relevant documents), not the SHREC ones
    assert get_measure("P.5").name == get_measure("P_5").name == "P.5" != get_measure("P@5").name
    assert get_measure("recall.1000").name == get_measure("recall_1000").name == "recall.1000" != get_measure("R@1000").name
    assert (get_measure("map").name, get_measure("Rprec").name, get_measure("recip_rank").name) == ("map", "Rprec", "recip_rank")
    assert get_measure("mAP").name == get_measure("MAP").name == "AP"
    # SHREC 2006's NDCG@k keeps its meaning; ir_measures' nDCG@k is trec_eval's ndcg_cut.k
    assert get_measure("NDCG@10").kind == "graded" and get_measure("NDCG@10").trec_name is None
    assert get_measure("nDCG@20").name == "ndcg_cut.20"
    # one trec_eval name per measure, but for the SHREC measures that name their trec_eval twin
    names = [n for n in shrec_score.measures.known_measures() if not n.endswith((".k", "@k"))]
    twins = {"AP", "FT", "RR", "NN"}
    trec = [get_measure(n).trec_name for n in names if get_measure(n).trec_name and n not in twins]
    assert len(trec) == len(set(trec))
    assert all(get_measure(n).trec_name == get_measure(get_measure(n).trec_name).trec_name for n in twins)


def test_depth_equals_pytrec_eval_on_truncated_runs(tmp_path):
    """--depth M is trec_eval -M: each list cut to its first M in trec_eval's order."""
    qrels, run = random_case(4)
    qp, rp = write_case(tmp_path, qrels, run)
    cut = {t: {d: run[t][d] for d in trec_order(run[t])[:7]} for t in run}
    te = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg", "bpref", "num_ret", "map"}).evaluate(cut)
    r = CliRunner().invoke(cli, [str(rp), "-r", str(qp), "-m", "ndcg,bpref,num_ret,AP", "--depth", "7", "--per-query", "--format", "csv"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    cli_rows = pd.read_csv(io.StringIO(r.stdout)).set_index("query")
    for t in te:
        assert cli_rows.loc[t, "ndcg"] == pytest.approx(te[t]["ndcg"], abs=1e-9)
        assert cli_rows.loc[t, "num_ret"] == te[t]["num_ret"] <= 7
    report = shrec_score.score([rp], qp, measures=["ndcg", "bpref", "num_ret", "AP"], settings=Settings(depth=7))
    ours = per_topic(report, ["ndcg", "bpref", "num_ret", "AP"])
    for t in te:
        for name in ("ndcg", "bpref", "num_ret"):
            assert ours[t][name] == pytest.approx(te[t][name], abs=1e-9)
        if not math.isnan(ours[t]["AP"]):
            assert ours[t]["AP"] == pytest.approx(te[t]["map"], abs=1e-9)


def test_judged_only_equals_pytrec_eval_judged_docs_only(tmp_path):
    qrels, run = random_case(5)
    qp, rp = write_case(tmp_path, qrels, run)
    names = ["ndcg", "ndcg_cut.10", "bpref", "num_ret", "num_rel_ret", "map_cut.100", "P@5"]
    te = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg", "ndcg_cut.10", "bpref", "num_ret", "num_rel_ret", "map_cut.100", "P.5"}, judged_docs_only_flag=True).evaluate(run)
    report = shrec_score.score([rp], qp, measures=names, settings=Settings(judged_only=True))
    ours = per_topic(report, names)
    r = CliRunner().invoke(cli, [str(rp), "-r", str(qp), "-m", ",".join(names), "--judged-only", "--per-query", "--format", "csv"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert pd.read_csv(io.StringIO(r.stdout))["bpref"].tolist() == pytest.approx([ours[t]["bpref"] for t in ours], abs=1e-15)
    for t in te:
        for name in names:
            if math.isnan(ours[t][name]):
                continue  # P@5 of a topic without relevant documents (shrec-score's rule)
            assert ours[t][name] == pytest.approx(te[t][get_measure(name).trec_name], abs=1e-9), (t, name)


@pytest.mark.parametrize("reader", ["lines", "pyarrow"])
@pytest.mark.parametrize("judged_only", [False, True])
def test_negative_grades_are_unjudged_as_in_trec_eval(tmp_path, monkeypatch, reader, judged_only):
    """trec_eval's form_res_rels.c: a negative grade is "in the pool but
    unjudged": neither relevant nor judged non-relevant (bpref's N), and
    dropped under -J.  A third of the judgments made -1 or -2, topic t2's
    all but one; both qrels readers.  (A topic whose every grade is
    negative makes trec_eval 10 exit with "Can't calculate measure" and
    pytrec_eval crash: ours keeps it as a topic with nothing judged.)"""
    from shrec_score.io import trec

    if reader == "pyarrow":
        monkeypatch.setattr(trec, "FAST_QRELS_BYTES", 0)
    names = [n for n in ADDED if n not in IPREC]
    for seed in range(4):
        qrels, run = random_case(seed)
        rng = np.random.default_rng(seed + 100)
        for t, judged in qrels.items():
            for i, d in enumerate(judged):
                if (t == "t2" and i) or rng.random() < 0.3:
                    judged[d] = int(rng.choice([-1, -2]))
        assert any(g >= 1 for j in qrels.values() for g in j.values())
        qp, rp = write_case(tmp_path, qrels, run)
        report = shrec_score.score([rp], qp, measures=names, settings=Settings(judged_only=judged_only, missing="skip"))
        ours = per_topic(report, names)
        te = pytrec_eval.RelevanceEvaluator(qrels, PYTREC, judged_docs_only_flag=judged_only).evaluate(run)
        assert set(te) == set(ours)
        for t, want in te.items():
            for name in names:
                assert ours[t][name] == pytest.approx(want[get_measure(name).trec_name], abs=1e-9), (seed, t, name)
    # before: a negative grade counted as judged non-relevant (grade 0); this
    # case tells the two apart (bpref: N = 1 against 3)
    qp, rp = write_case(tmp_path, {"q": {"r1": 1, "r2": 1, "r3": 1, "n1": 0, "u1": -1, "u2": -1}}, {"q": {"u1": 5.0, "u2": 4.0, "r1": 3.0, "n1": 2.0, "r2": 1.0}})
    bp = float(shrec_score.score([rp], qp, measures=["bpref"]).per_query["bpref"].iloc[0])
    # r1: no non-relevant above; r2: n1 above, min(R=3, N=1) = 1 -> 1 - 1/1 = 0; r3 not retrieved
    assert bp == pytest.approx((1 + 0) / 3, abs=1e-12)
    qp, rp = write_case(tmp_path, {"q": {"r1": 1}, "e": {"u1": -1, "u2": -2}}, {"q": {"r1": 1.0}, "e": {"u1": 2.0, "x": 1.0}})
    ours = per_topic(shrec_score.score([rp], qp, measures=["num_rel", "num_ret", "num_rel_ret", "bpref"]), ["num_rel", "num_ret", "num_rel_ret", "bpref"])
    assert ours["e"] == {"num_rel": 0, "num_ret": 2, "num_rel_ret": 0, "bpref": 0}


def test_depth_and_judged_only_are_in_the_signature(tmp_path):
    qrels, run = random_case(0, n_topics=2)
    qp, rp = write_case(tmp_path, qrels, run)
    sig = shrec_score.score([rp], qp, measures=["ndcg"], settings=Settings(depth=5, judged_only=True)).signature
    assert sig["lists"] == "first 5 items only (trec_eval -M 5); unjudged items left out (trec_eval -J)"
    assert "lists" not in shrec_score.score([rp], qp, measures=["ndcg"]).signature


def test_the_signature_counts_the_queries_with_a_relevant_target_at_the_rel_level(tmp_path):
    """signature['queries'] are the queries the K = 0 warning does not name: at --rel-level 2 a query
    whose targets are all of grade 1 has none (it counted them at grade 1 whatever the level)."""
    qp, rp = write_case(tmp_path, {"a": {"x": 2, "y": 1}, "b": {"x": 1}, "c": {"y": 0}}, {"a": {"x": 2.0}, "b": {"x": 1.0}, "c": {"y": 1.0}})
    assert shrec_score.score([rp], qp, measures=["map"]).signature["queries"] == 2  # a, b
    report = shrec_score.score([rp], qp, measures=["map"], settings=Settings(rel_level=2))
    assert report.signature["queries"] == 1  # a
    assert report.warnings[0].startswith("2 of 3 queries have no relevant target (K = 0 at --rel-level 2")


def test_depth_and_judged_only_are_validated_up_front():
    with pytest.raises(OptionError, match="settings.depth"):
        shrec_score.options.Options.build(settings=Settings(depth=0))
    with pytest.raises(OptionError, match="settings.judged_only"):
        shrec_score.options.Options.build(settings=Settings(judged_only="yes"))  # type: ignore[arg-type]


def test_class_relevance_scores_the_added_measures(tmp_path):
    """With classes every target is judged: bpref's N is the collection less the query and its class."""
    (tmp_path / "c.cla").write_text("PSB 1\n2 4\na 0 2\nq1\nq2\nb 0 2\nq3\nq4\n")
    (tmp_path / "runs" / "r").mkdir(parents=True)
    for q, ranked in {"q1": "q3 q2 q4", "q2": "q1 q3 q4", "q3": "q4 q1 q2", "q4": "q1 q2 q3"}.items():
        (tmp_path / "runs" / "r" / f"{q}.txt").write_text("\n".join(ranked.split()) + "\n")
    report = shrec_score.score([tmp_path / "runs" / "r"], tmp_path / "c.cla", measures=["bpref", "ndcg", "num_rel"])
    pq = report.per_query.set_index("query")
    assert pq.loc["q1", "bpref"] == 1 - 1 / 1 and pq.loc["q2", "bpref"] == 1 and pq.loc["q4", "bpref"] == 1 - 1
    assert pq.loc["q1", "ndcg"] == pytest.approx((1 / math.log2(3)) / 1)
    assert pq["num_rel"].tolist() == [1, 1, 1, 1]


def test_docs_measures_md_is_generated_from_the_registry():
    """docs/measures.md opens with the registry's table; the definitions written by hand follow it."""
    with open(os.path.join(ROOT, "docs", "measures.md"), encoding="utf-8") as f:
        text = f.read()
    generated, marker, _ = text.partition("\n<!-- Everything above this line is generated")
    assert marker, "docs/measures.md lost the line that ends its generated part"
    assert generated == measures_markdown(), (
        "regenerate the top of docs/measures.md, keeping the definitions below it: python -c 'import pathlib; "
        "from shrec_score.measures.registry import measures_markdown as m; p = pathlib.Path(\"docs/measures.md\"); "
        "t = p.read_text(); p.write_text(m() + t[t.index(\"\\n<!-- Everything above\"):])'"
    )


def test_coverage_note_only_when_its_measures_are_computed(tmp_path):
    qp = tmp_path / "qrels.txt"
    qp.write_text("t1 0 a 2\nt1 0 b 1\nt1 0 c 0\n")
    rp = tmp_path / "run.txt"
    rp.write_text("t1 Q0 a 1 3.0 r\nt1 Q0 c 2 2.0 r\n")
    r = CliRunner().invoke(cli, [str(rp), "-r", str(qp), "-m", "AP,P@30", "--collection-size", "10", "--format", "csv"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "shorter than the collection" not in r.stderr and "note:" not in r.stderr
    r = CliRunner().invoke(cli, [str(rp), "-r", str(qp), "-m", "AP,P_relevant", "--collection-size", "10", "--format", "csv"], catch_exceptions=False)
    assert "note: 1 of 1 ranked lists are shorter than the collection (Va < Ds): P, R and the TP/FP/TN/FN counts are meaningful\n" in r.stderr
    assert "warning: note" not in r.stderr
    graded_default = shrec_score.score([rp], qp, collection_size=10)  # graded qrels: trec_eval's set (issue 31.18), no P, R or counts
    assert "P_relevant" not in graded_default.measures and not any("ranked lists" in w for w in graded_default.warnings)
    shrec06 = shrec_score.score([rp], qp, collection_size=10, measures=list(DEFAULT_GRADED))
    assert any(w.startswith("note: 1 of 1 ranked lists") for w in shrec06.warnings)
    assert not any("ranked lists" in w for w in shrec_score.score([rp], qp, collection_size=10, measures=["AP", "P@30"]).warnings)


def test_format_trec_prints_the_lines_trec_eval_prints(tmp_path):
    """On trec_eval's own test files, every summary line of ``--format trec``
    for these measures is a line of trec_eval's expected output, counts as
    whole numbers included (num_rel_ret 131, not 131.0000)."""
    from .conftest import shared_path

    results, qrels, expected = (shared_path("trec_eval", n) for n in ("results.test", "qrels.test", "out.test"))
    measures = "num_ret,num_rel,num_rel_ret,map,gm_map,bpref,recip_rank,Rprec,P.5,P_10,iprec_at_recall_0.00,iprec_at_recall_0.50"
    r = CliRunner().invoke(cli, [results, "-r", qrels, "--run-format", "trec", "-m", measures, "--format", "trec", "--quiet"])
    assert r.exit_code == 0, r.output
    theirs = {tuple(line.split()) for line in open(expected)}
    ours = [tuple(line.split()) for line in r.stdout.splitlines() if not line.startswith(("runid", "num_q"))]
    assert len(ours) == len(measures.split(","))
    assert [line for line in ours if line not in theirs] == []
