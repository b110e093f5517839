"""A name another tool defines gives that tool's value (issue 31, items 1 and 5).

trec_eval's names (map, Rprec, recip_rank, P.k, recall.k, ...) against
trec_eval 10's own output on NIST's test files at every -l level of
qrels.rel_level (tests/trec_eval_levels/out.test.aql<l>: ``trec_eval -q -m
all_trec -l<l> qrels.rel_level results.test``, built -O2 from
../shared/tools/trec_eval, filtered to the measures shrec-score has), and
against pytrec_eval on qrels with topics without relevant documents; ranx's
and ir_measures' names against their definitions, written by hand on a small
example, and against ranx / ir_measures where installed (the bench extra).
"""

import math
import os
import re

import numpy as np
import pytest
from click.testing import CliRunner

import shrec_score
from shrec_score.cli import cli
from shrec_score.errors import OptionError
from shrec_score.measures import Settings, get_measure
from shrec_score.measures.measure import OFFICIAL, expand_names

from .conftest import ROOT, shared_path
from .test_treceval_measures import random_case, write_case

LEVELS = os.path.join(ROOT, "tests", "trec_eval_levels")


def trec_eval_lines(path):
    out = {}
    for line in open(path, encoding="utf-8"):
        name, topic, value = line.split()
        out[(name, topic)] = value
    return out


@pytest.mark.parametrize("level", [1, 2, 3, 4, 5])
def test_every_trec_eval_name_equals_trec_eval_at_every_level(level):
    """Topic 303 has no relevant document at -l3, none has at -l5: trec_eval scores them 0 and counts them."""
    d = shared_path("trec_eval")
    expected = trec_eval_lines(os.path.join(LEVELS, f"out.test.aql{level}"))
    names = sorted({name for name, _ in expected})
    report = shrec_score.score([os.path.join(d, "results.test")], os.path.join(d, "qrels.rel_level"), measures=names, settings=Settings(rel_level=level))
    pq = report.per_query.set_index("query")
    board = report.leaderboard.iloc[0]
    for (name, topic), text in expected.items():
        column = name  # the column is named as typed (trec_eval's printed name here)
        value = board[column] if topic == "all" else pq.loc[topic, column]
        got = str(int(value)) if name.startswith("num_") else f"{value:.4f}"
        assert got == text, (level, name, topic)
    if level == 2:  # NIST's own expected output agrees with the stored one
        nist = trec_eval_lines_filtered(os.path.join(d, "out.test.aql"), expected)
        assert nist == expected


def trec_eval_lines_filtered(path, keep):
    out = {}
    for line in open(path, encoding="utf-8"):
        f = line.split()
        if len(f) == 3 and (f[0], f[1]) in keep:
            out[(f[0], f[1])] = f[2]
    return out


def test_map_at_level_3_is_trec_evals_and_AP_keeps_the_contest_convention():
    d = shared_path("trec_eval")
    args = [os.path.join(d, "results.test"), "-r", os.path.join(d, "qrels.rel_level"), "--rel-level", "3"]
    r = CliRunner().invoke(cli, [*args, "-m", "map,num_rel", "--format", "trec"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "map                   \tall\t0.1393" in r.stdout.splitlines()
    # stderr says what happened to topic 303 (it said nothing: issue 31.1)
    assert "warning: 1 of 3 queries have no relevant target (K = 0 at --rel-level 3, first: '303'): counted in the means of map, num_rel, as trec_eval" in r.stderr
    both = shrec_score.score([args[0]], args[2], measures=["AP", "map"], settings=Settings(rel_level=3))
    assert both.warnings[0].endswith(": left out of the means of AP (empty values); counted in the means of map, as trec_eval")
    board = shrec_score.score([args[0]], args[2], measures=["AP", "map"], settings=Settings(rel_level=3)).leaderboard.iloc[0]
    assert f"{board['AP']:.4f}" == "0.2090" and f"{board['map']:.4f}" == "0.1393"
    assert board["map"] == pytest.approx(board["AP"] * 2 / 3)  # 303 counted as 0 among 3 topics


TWINS = ["map", "Rprec", "recip_rank", "P.1", "P.5", "P.10", "recall.5", "recall.100", "mrr", "precision@10", "recall@10", "P_20", "recall_20"]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("level", [1, 2, 3])
def test_trec_eval_names_equal_pytrec_eval_on_topics_without_relevant_documents(tmp_path, seed, level):
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is a test extra")
    qrels, run = random_case(seed)  # t0: only grade 0; more topics lack grade >= 2, 3
    qp, rp = write_case(tmp_path, qrels, run)
    report = shrec_score.score([rp], qp, measures=TWINS, settings=Settings(rel_level=level))
    te = pytrec_eval.RelevanceEvaluator(qrels, {"map", "Rprec", "recip_rank", "P.1,5,10,20", "recall.5,10,20,100"}, relevance_level=level).evaluate(run)
    pq = report.per_query.set_index("query")
    board = report.leaderboard.iloc[0]
    for name in TWINS:
        m = get_measure(name)
        theirs = [te[t][m.trec_name] for t in te]
        np.testing.assert_allclose([pq.loc[t, name] for t in te], theirs, atol=1e-12, err_msg=name)
        assert board[name] == pytest.approx(sum(theirs) / len(theirs), abs=1e-12), name  # every topic counted
    assert any(sum(g >= level for g in q.values()) == 0 for q in qrels.values())


def test_trec_eval_names_under_ties_expected_give_zero_without_relevant_documents(tmp_path):
    qrels, run = random_case(0)
    qp, rp = write_case(tmp_path, qrels, run)
    pq = shrec_score.score([rp], qp, measures=["AP", "map", "P@5", "P.5"], settings=Settings(ties="expected")).per_query.set_index("query")
    assert math.isnan(pq.loc["t0", "AP"]) and pq.loc["t0", "map"] == 0 and pq.loc["t0", "P.5"] == 0
    has = pq["AP"].notna()
    np.testing.assert_array_equal(pq.loc[has, "AP"], pq.loc[has, "map"])
    np.testing.assert_array_equal(pq.loc[has, "P@5"], pq.loc[has, "P.5"])


def small_case(tmp_path):
    """One topic, grades 0..2, distinct scores: d1 (0), d2 (2), d3 (unjudged), d4 (1), d5 (2); d6 (1) not retrieved."""
    qrels = {"q": {"d1": 0, "d2": 2, "d4": 1, "d5": 2, "d6": 1}, "e": {"x1": 0}}
    run = {"q": {"d1": 5.0, "d2": 4.0, "d3": 3.0, "d4": 2.0, "d5": 1.0}, "e": {"x1": 1.0, "x2": 0.5}}
    return (*write_case(tmp_path, qrels, run), qrels, run)


# ranx's and ir_measures' names, each with its documented definition written by hand
# for topic q (relevant: d2, d4, d5, d6; K = 4; grade >= 2: d2, d5); topic e has none (0).
BY_HAND = {
    "ndcg@3": (2 / math.log2(3)) / (2 + 2 / math.log2(3) + 1 / 2),  # ranx ndcg@k (gain = grade), = ndcg_cut.3
    "nDCG@3": (2 / math.log2(3)) / (2 + 2 / math.log2(3) + 1 / 2),  # ir_measures nDCG@k
    "mrr": 1 / 2,  # ranx mrr: first relevant at rank 2
    "map@4": (1 / 2 + 2 / 4) / 4,  # ranx map@k: precision at the relevant ranks <= k, over all K
    "precision@4": 2 / 4,
    "recall@4": 2 / 4,
    "hit_rate@1": 0.0,
    "hit_rate@2": 1.0,
    "P(rel=2)@5": 2 / 5,  # ir_measures: grade >= 2 in the first 5
    "Success@2": 1.0,
    "R@5": 3 / 4,  # ir_measures R@k
    "IPrec@0.5": 3 / 5,  # c = (long)(0.5 * 4 + 0.9) = 2nd relevant (rank 4): max precision at ranks >= 4 = 3/5
    "r-precision": 2 / 4,
}


def test_ranx_and_ir_measures_names_by_hand(tmp_path):
    qp, rp, _, _ = small_case(tmp_path)
    report = shrec_score.score([rp], qp, measures=list(BY_HAND))
    pq = report.per_query.set_index("query")
    for name, value in BY_HAND.items():
        column = name  # named as typed
        assert pq.loc["q", column] == pytest.approx(value, abs=1e-12), name
        if name != "R@5":  # ours: a topic without relevant documents is left out; the others count 0
            assert pq.loc["e", column] == 0, name


def test_ranx_names_equal_ranx(tmp_path):
    ranx = pytest.importorskip("ranx", reason="ranx is in the bench extra")
    qrels, run = random_case(2)
    run = {t: {d: ds[d] + 1e-3 * i for i, d in enumerate(sorted(ds))} for t, ds in run.items()}  # no ties: ranx breaks them its own way
    qp, rp = write_case(tmp_path, qrels, run)
    names = ["ndcg@10", "mrr", "map@100", "precision@10", "recall@10", "hit_rate@10", "map", "ndcg"]
    ours = shrec_score.score([rp], qp, measures=names).leaderboard.iloc[0]
    positive = {t: {d: g for d, g in q.items() if g > 0} or {"none": 0} for t, q in qrels.items()}
    theirs = ranx.evaluate(ranx.Qrels(positive), ranx.Run(run), names)
    for name in names:
        assert ours[name] == pytest.approx(theirs[name], abs=1e-9), name


def test_ir_measures_names_equal_ir_measures(tmp_path):
    ir_measures = pytest.importorskip("ir_measures", reason="ir_measures (the test extra) is not installed")
    qrels, run = random_case(3)
    qp, rp = write_case(tmp_path, qrels, run)
    names = ["nDCG@10", "P(rel=2)@10", "IPrec@0.1", "IPrec@0.5", "Success@5", "AP@100", "Bpref", "nDCG"]
    pq = shrec_score.score([rp], qp, measures=names).per_query.set_index("query")
    column = {ir_measures.parse_measure(n): n for n in names}  # our columns: ir_measures' names as typed
    for m in ir_measures.iter_calc(list(column), qrels, run):
        assert pq.loc[m.query_id, column[m.measure]] == pytest.approx(m.value, abs=1e-9), (m.measure, m.query_id)


def test_trec_eval_comma_lists_and_groups():
    assert expand_names(["P.5,10,20"]) == expand_names(["P.5", "10", "20"]) == ["P.5", "P.10", "P.20"]
    assert expand_names(["official"]) == list(OFFICIAL)
    opts = shrec_score.options.Options.build(measures=["map", "P.5", "10", "ndcg_cut.20,30"])
    assert opts.measures == ("map", "P.5", "P.10", "ndcg_cut.20", "ndcg_cut.30")
    with pytest.raises(OptionError, match="all_trec: shrec-score has only some"):
        shrec_score.options.Options.build(measures=["all_trec"])
    with pytest.raises(OptionError, match="nothing precedes it"):
        shrec_score.options.Options.build(measures=["10", "P.5"])


def test_official_is_trec_evals_default_output():
    d = shared_path("trec_eval")
    r = CliRunner().invoke(cli, [os.path.join(d, "results.test"), "-r", os.path.join(d, "qrels.test"), "-m", "official", "--format", "trec"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    ours = [line.split() for line in r.stdout.splitlines()][1:]
    theirs = [line.split() for line in open(os.path.join(d, "out.test"), encoding="utf-8")][1:]
    assert ours == theirs


def test_unknown_names_get_the_nearest_ones():
    with pytest.raises(OptionError, match=r"unknown measure 'presicion@10' \(did you mean 'precision@10'\?\)"):
        shrec_score.options.Options.build(measures=["presicion@10"])
    with pytest.raises(OptionError, match=r"'Rprc' \(did you mean 'Rprec'\?\)"):
        shrec_score.options.Options.build(measures=["Rprc"])


@pytest.mark.parametrize(
    ("typed", "hint"),
    [
        ("P@0", "(expected a cutoff k >= 1, got 0)"),
        ("P.0", "(expected a cutoff k >= 1, got 0)"),
        ("ndcg_cut.0", "(expected a cutoff k >= 1, got 0)"),
        ("P(rel=0)@5", "(expected a level r >= 1, got 0)"),
        ("P(rel=2)@0", "(expected a cutoff k >= 1, got 0)"),
        # a cutoff is written as get_measure reads it, without leading zeros: NDCG@010 would be a second
        # column (named as typed) of NDCG@10
        ("NDCG@00010", "(expected a cutoff k without leading zeros, got 00010: did you mean 'NDCG@10'?)"),
        ("P(rel=02)@5", "(expected a level r without leading zeros, got 02: did you mean 'P(rel=2)@5'?)"),
    ],
)
def test_a_family_name_with_a_bad_number_says_what_is_wrong_and_never_suggests_itself(typed, hint):
    # bug hunt: '-m P@0' printed "unknown measure 'P@0' (did you mean 'P@0' or 'AP@0'?)"
    r = CliRunner().invoke(cli, ["runs", "-r", "nothere.cla", "-m", typed])  # refused before either is read
    assert r.exit_code == 2 and r.output == f"Error: unknown measure {typed!r} {hint}; see 'shrec-score measures'\n"


def test_no_suggestion_is_the_typed_name_or_a_refused_one():
    from shrec_score.measures.measure import PATTERN_ALIASES, PATTERNS, did_you_mean, get_measure

    for spelling in [*PATTERNS, *PATTERN_ALIASES]:
        for k in ("0", "00", "07", "010"):
            typed = spelling.format(k=k, r=k)
            with pytest.raises(KeyError):
                get_measure(typed)
            hint = did_you_mean(typed)
            assert hint and repr(typed) not in hint, (typed, hint)
            for suggested in re.findall(r"'([^']+)'", hint):  # each one get_measure takes
                get_measure(suggested)


def test_the_listing_shows_every_alias():
    r = CliRunner().invoke(cli, ["measures"], catch_exceptions=False)
    lines = {line.split()[0]: line for line in r.stdout.splitlines()[1:]}
    assert lines["recip_rank"].endswith("(also: mrr)")
    assert "(also: P_k, precision@k)" in lines["P.k"]
    assert "(also: ndcg_cut_k, ndcg@k, nDCG@k)" in lines["ndcg_cut.k"]
    assert "(also: map_cut_k, map@k, AP@k)" in lines["map_cut.k"]
    assert "(also: success_k, hit_rate@k, Success@k)" in lines["success.k"]


# -- issue 31.3: --format trec prints the run's tag as its runid, as trec_eval ------------


def test_format_trec_of_official_is_trec_evals_own_output_byte_for_byte():
    """NIST's out.test (trec_eval qrels.test results.test): runid STANDARD, the run's tag."""
    d = shared_path("trec_eval")
    r = CliRunner().invoke(cli, [os.path.join(d, "results.test"), "-r", os.path.join(d, "qrels.test"), "-m", "official", "--format", "trec"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert r.stdout == open(os.path.join(d, "out.test"), encoding="utf-8").read()


def test_runid_is_the_tag_when_one_for_the_file_else_the_file_name(tmp_path):
    (tmp_path / "q.qrels").write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 1\n")
    runs = {
        "one.run": "q1 Q0 d1 1 2 myTag\nq1 Q0 d2 2 1 myTag\nq2 Q0 d1 1 1 myTag\n",
        "words.run": "q1 Q0 d1 1 2 COMPILED (ID:425883)\nq2 Q0 d1 1 1 COMPILED (ID:425883)\n",  # trec_eval reads the first word
        "mixed.run": "q1 Q0 d1 1 2 a\nq2 Q0 d1 1 1 b\n",
        "same1.run": "q1 Q0 d1 1 2 twin\nq2 Q0 d1 1 1 twin\n",
        "same2.run": "q1 Q0 d2 1 2 twin\nq2 Q0 d1 1 1 twin\n",
        "broken.run": "q1 Q0 d1 1 2 lenientTag\nq1 Q0 d2 2 x lenientTag\nq2 Q0 d1 1 1 lenientTag\n",  # score x: dropped under --lenient
    }
    for name, text in runs.items():
        (tmp_path / name).write_text(text)
    r = CliRunner().invoke(cli, [*(str(tmp_path / n) for n in runs), "-r", str(tmp_path / "q.qrels"), "-m", "map", "--format", "trec", "--lenient"])
    assert r.exit_code == 0, r.output
    runids = sorted(line.split("\t")[2] for line in r.stdout.splitlines() if line.startswith("runid"))
    # one tag for the file: the tag; two tags (mixed) or a tag another run has too (same1, same2): the file name
    assert runids == sorted(["myTag", "COMPILED", "mixed.run", "same1.run", "same2.run", "lenientTag"])
    board = shrec_score.score([str(tmp_path / n) for n in runs], str(tmp_path / "q.qrels"), measures=["map"], lenient=True)
    assert sorted(board.leaderboard["run"]) == sorted(runs)  # run names stay the file names
    assert board.run_tags == {"one.run": "myTag", "words.run": "COMPILED", "same1.run": "twin", "same2.run": "twin", "broken.run": "lenientTag"}
