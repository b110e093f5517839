"""SHREC 2006 (seeds 002 and 003): the worked example, exactly, as a real input."""

import io
import os

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import shrec_score
from shrec_score.cli import cli
from shrec_score.engine import gain_block
from shrec_score.measures import graded_defaults
from shrec_score.measures.cumgain import gain_vectors

from . import reference06 as ref
from .conftest import shared_path

G = [2, 2, 1, 2, 2, 1, 0, 1, 0, 1, 2, 0, 0, 0]
CH, CM, DS = 6, 5, 1814

# Seed 003, printed as float32 / to the digits shown there.
SEED_CG = [2, 4, 5, 7, 9, 10, 10, 11, 11, 12, 14, 14, 14, 14]
SEED_DCG = [2.0, 4.0, 4.63093, 5.63093, 6.492283, 6.8791356, 6.8791356, 7.212469, 7.212469, 7.5134993, 8.091629, 8.091629, 8.091629, 8.091629]
SEED_ICG = [2, 4, 6, 8, 10, 12, 13, 14, 15, 16, 17]
SEED_IDCG = [2.0, 4.0, 5.2618594, 6.2618594, 7.123213, 7.8969183, 8.253125, 8.586458, 8.901923, 9.202953, 9.492018]
SEED_NCG = [1.0, 1.0, 0.8333333, 0.875, 0.9, 0.8333333, 0.7692308, 0.78571427, 0.73333335, 0.75, 0.8235294, 0.8235294, 0.8235294, 0.8235294]
SEED_NDCG = [1.0, 1.0, 0.8800938, 0.89924246, 0.9114262, 0.87111646, 0.83351886, 0.83998185, 0.8102147, 0.81642264, 0.8524667, 0.8524667, 0.8524667, 0.8524667]


def assert_seed_float32(ours, seed, what):
    """Seed 003 printed float32 results of float32 arithmetic; ours are float64.

    They must be the same float32 numbers up to 2 units in the last place
    (the rounding of the seed's own float32 sums, e.g. NDCG[11]: 8.091629 /
    9.492018 = 0.85246660, printed there as 0.8524667).
    """
    a = np.asarray(ours, dtype=np.float32)
    b = np.asarray(seed, dtype=np.float32)
    try:
        np.testing.assert_array_max_ulp(a, b, maxulp=2)
    except AssertionError as exc:
        raise AssertionError(f"{what}: {exc}") from None


@pytest.fixture
def example(tmp_path):
    """Targets: class H (6) and its sister M (5) under parent P, and 1803 others.

    The query q is classified in H; its run lists h1 h2 m1 h3 h4 m2 o1 m3 o2
    m4 h5 o3 o4 o5, i.e. the gain vector G.
    """
    h = [f"h{i}" for i in range(1, 7)]
    m = [f"m{i}" for i in range(1, 6)]
    o = [f"o{i}" for i in range(1, DS - 11 + 1)]
    cla = ["PSB 1", f"4 {DS}", "P 0 0", "H P 6", *h, "M P 5", *m, "O 0 1803", *o]
    (tmp_path / "targets.cla").write_text("\n".join(cla) + "\n")
    (tmp_path / "queries.cla").write_text("PSB 1\n2 1\nP 0 0\nH P 1\nq\n")
    ranked = ["h1", "h2", "m1", "h3", "h4", "m2", "o1", "m3", "o2", "m4", "h5", "o3", "o4", "o5"]
    (tmp_path / "runs" / "R1").mkdir(parents=True)
    (tmp_path / "runs" / "R1" / "q.txt").write_text("".join(f"{t} {i * 0.1:.1f}\n" for i, t in enumerate(ranked)))
    grade = {t: 2 for t in h} | {t: 1 for t in m}
    (tmp_path / "example.qrels").write_text("".join(f"q 0 {t} {grade[t]}\n" for t in h + m) + "q 0 o1 0\n")
    return tmp_path


def expected_scalars():
    return {
        "TP_highly": 5, "TP_relevant": 9, "FP_highly": 14 - 5, "FP_relevant": 14 - 9,
        "TN_highly": 1814 + 5 - 14 - 6, "TN_relevant": 1814 + 9 - 14 - 11,
        "FN_highly": 6 - 5, "FN_relevant": 11 - 9,
        "FT_highly": 4 / 6, "FT_relevant": 9 / 11, "ST_highly": 5 / 12, "ST_relevant": 9 / 14,
        "P_highly": 5 / 14, "P_relevant": 9 / 14, "R_highly": 5 / 6, "R_relevant": 9 / 11,
        "AP_highly": (1 / 1 + 2 / 2 + 3 / 4 + 4 / 5 + 5 / 11) / 5,
        "AP_relevant": (1 / 1 + 2 / 2 + 3 / 3 + 4 / 4 + 5 / 5 + 6 / 6 + 7 / 8 + 8 / 10 + 9 / 11) / 9,
        "ADR": (1 + 1 + 2 / 3 + 3 / 4 + 4 / 5 + 4 / 6 + 6 / 7 + 7 / 8 + 7 / 9 + 8 / 10 + 9 / 11) / 11,
        "CG@5": 9, "CG@10": 12, "DCG@5": SEED_DCG[4], "DCG@10": SEED_DCG[9],
        "NCG@5": SEED_NCG[4], "NCG@10": SEED_NCG[9], "NDCG@5": SEED_NDCG[4], "NDCG@10": SEED_NDCG[9],
    }


def check_scalars(row):
    for name, want in expected_scalars().items():
        if isinstance(want, float) and name[:2] in ("DC", "NC", "ND"):
            assert_seed_float32([row[name]], [want], name)
        else:
            assert row[name] == pytest.approx(want, rel=1e-15, abs=0), name
    # the printed figures of the seeds (which truncate: 0.800909 -> 0.80090, 0.943686 -> 0.94368)
    assert f"{row['AP_highly']:.7f}"[:7] == "0.80090" and f"{row['AP_relevant']:.7f}"[:7] == "0.94368"
    assert round(row["ADR"], 3) == 0.819 and f"{row['ADR']:.6f}" == "0.819221"
    assert f"{100 * row['FT_highly']:.3f}" == "66.667" and f"{100 * row['FT_relevant']:.3f}" == "81.818"
    assert f"{100 * row['ST_highly']:.3f}" == "41.667" and f"{100 * row['ST_relevant']:.4f}"[:6] == "64.285"
    for k in (25, 50, 100):  # the list is 14 long: empty
        for kind in ("CG", "DCG", "NCG", "NDCG"):
            assert np.isnan(row[f"{kind}@{k}"]), f"{kind}@{k}"


def test_worked_example_library(example):
    report = shrec_score.score(
        [example / "runs"], example / "targets.cla", queries=example / "queries.cla", grades="sister"
    )
    assert len(report.per_query) == 1
    check_scalars(report.per_query.iloc[0])
    # the full vectors of seed 003, and the ideal ones
    rel = shrec_score.load_relevance(example / "targets.cla", example / "queries.cla", grades="sister")
    run = shrec_score.load_runs([example / "runs"], rel)[0][0]
    rows = np.arange(rel.n_queries)
    block = gain_block(run, rel, rows, rel.list_gains(rows, run.offsets, run.targets))
    assert block.gains[0].tolist() == G and block.n_highly.tolist() == [6] and block.n_relevant.tolist() == [11]
    vec = gain_vectors(block, 14)
    assert vec["CG"][0].tolist() == SEED_CG
    for kind, seed in (("DCG", SEED_DCG), ("NCG", SEED_NCG), ("NDCG", SEED_NDCG)):
        assert_seed_float32(vec[kind][0], seed, kind)
    # and the exact forms: NCG as the fractions of seed 003 (corrected past rank 7, erratum 2)
    assert vec["NCG"][0].tolist() == [2 / 2, 4 / 4, 5 / 6, 7 / 8, 9 / 10, 10 / 12, 10 / 13, 11 / 14, 11 / 15, 12 / 16, 14 / 17, 14 / 17, 14 / 17, 14 / 17]
    assert vec["DCG"][0][2] == 4 + 1 / np.log2(3)
    from shrec_score.measures.cumgain import cumulated_gain, discounted_cumulated_gain, ideal_gains

    ideal = ideal_gains(block, 11)
    assert cumulated_gain(ideal)[0].tolist() == SEED_ICG
    assert_seed_float32(discounted_cumulated_gain(ideal)[0], SEED_IDCG, "IDCG")


def test_worked_example_cli_with_curves(example):
    out = example / "out"
    r = CliRunner().invoke(
        cli,
        [str(example / "runs"), "-r", str(example / "targets.cla"), "-q", str(example / "queries.cla"),
         "--grades", "sister", "--out", str(out), "--format", "csv"],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    assert "1 of 1 ranked lists are shorter than the collection (Va < Ds)" in r.stderr
    board = pd.read_csv(io.StringIO(r.stdout))
    assert board.loc[0, "rank"] == 1 and board.loc[0, "run"] == "R1"
    assert board.loc[0, "ADR"] == pytest.approx(expected_scalars()["ADR"], rel=1e-15)
    pq = pd.read_csv(out / "per_query.csv")
    check_scalars(pq.iloc[0])
    curves = pd.read_csv(out / "curves.csv")
    assert curves["rank"].tolist() == list(range(1, 101))
    assert curves["CG"][:14].tolist() == SEED_CG and curves["CG"][14:].isna().all()
    for kind, seed in (("DCG", SEED_DCG), ("NCG", SEED_NCG), ("NDCG", SEED_NDCG)):
        assert_seed_float32(curves[kind][:14], seed, kind)
    gvr = pd.read_csv(out / "gain_vs_recall.csv")
    # recall 1/11 = 9.09% is first reached at the first relevant item (CG 2),
    # 9/11 = 81.8% at the 9th (rank 11, CG 14); 82% and above are never reached
    assert gvr.set_index("recall_pct").loc[9, "CG"] == 2
    assert gvr.set_index("recall_pct").loc[10, "CG"] == 4
    assert gvr.set_index("recall_pct").loc[81, "CG"] == 14
    assert_seed_float32([gvr.set_index("recall_pct").loc[81, "DCG"]], [SEED_DCG[10]], "DCG")
    assert gvr.set_index("recall_pct").loc[82:, "CG"].isna().all()
    ranking = pd.read_csv(out / "per_query_ranking.csv")
    assert ranking.columns.tolist() == ["query", "rank", "run", "value"]
    assert ranking["value"].isna().all()  # CG@100 is empty for a list of 14


def test_worked_example_from_qrels(example):
    # graded qrels score trec_eval's default set unless the SHREC 2006 measures are asked for (issue 31.18)
    shrec06 = list(graded_defaults())
    report = shrec_score.score([example / "runs"], example / "example.qrels", collection_size=DS, measures=shrec06)
    check_scalars(report.per_query.iloc[0])
    report2 = shrec_score.score([example / "runs"], example / "example.qrels", collection=example / "targets.cla", measures=shrec06)
    check_scalars(report2.per_query.iloc[0])
    assert report.signature["mode"] == "qrels"


def test_madr_leaderboard_and_table2_ranking(example):
    # a second run that finds everything highly relevant first: better ADR
    best = ["h1", "h2", "h3", "h4", "h5", "h6", "m1", "m2", "m3", "m4", "m5", "o1", "o2", "o3"]
    (example / "runs" / "R0").mkdir()
    (example / "runs" / "R0" / "q").write_text("\n".join(best) + "\n")
    report = shrec_score.score([example / "runs"], example / "targets.cla", queries=example / "queries.cla",
                               grades="sister", rank_by="CG@10")
    board = report.to_dataframe()
    assert board[["rank", "run"]].values.tolist() == [[1, "R0"], [2, "R1"]]
    assert board.loc[0, "ADR"] == 1.0
    assert report.ranking.values.tolist() == [["q", 1, "R0", 6 * 2 + 4 * 1], ["q", 2, "R1", 12]]


def test_sister_grades_on_psb_test_cla():
    path = shared_path("psb", "test.cla")
    cla = shrec_score.read_classification(path)
    rel = shrec_score.Relevance.from_classification(cla, grades="sister")
    sizes = dict(zip(cla.class_names, np.bincount(cla.labels, minlength=len(cla.class_names)).tolist()))
    parent = dict(zip(cla.class_names, cla.class_parents))
    i = rel.query_ids.index("1119")  # a biplane; biplane's parent is airplane
    sisters = [c for c in cla.class_names if parent[c] == "airplane" and c != "biplane"]
    assert "commercial" in sisters
    assert rel.n_relevant(2)[i] == sizes["biplane"] - 1 == 13
    assert rel.n_relevant(1)[i] == 13 + sum(sizes[c] for c in sisters)
    # classes under the root have no sisters: relevant = highly relevant
    root_kids = [c for c in cla.class_names if parent[c] == "0" and sizes[c] > 0]
    j = next(k for k, q in enumerate(rel.query_ids) if rel.query_classes[k] in root_kids)
    assert rel.n_relevant(1)[j] == rel.n_relevant(2)[j]

    # every measure on random runs against the loop oracle of the seed formulas
    rng = np.random.default_rng(2006)
    n = rel.collection_size
    lists = {}
    for qi, q in enumerate(rel.query_ids):
        order = rng.permutation(n)
        order = order[order != rel.self_index[qi]]
        lists[q] = order[: int(rng.integers(30, n))]
    run = shrec_score.RankedRun.from_lists("random", lists)
    report = shrec_score.score([run], rel)
    pq = report.per_query.set_index("query")
    for qi in rng.choice(len(rel.query_ids), size=60, replace=False):
        q = rel.query_ids[qi]
        lst = lists[q]
        g = rel.gains(np.full(len(lst), qi), lst).tolist()
        ch, cr = int(rel.n_relevant(2)[qi]), int(rel.n_relevant(1)[qi])
        own = int(rel.self_index[qi] >= 0)  # all-against-all: Ds is what the query can retrieve, the collection less itself (docs/measures.md)
        want = ref.counts(g, ch, cr - ch, n - own) | ref.tiers(g, ch, cr - ch)
        want["AP_highly"], want["AP_relevant"] = ref.ap(g, 2), ref.ap(g, 1)
        want["ADR"] = ref.adr(g, ch, cr - ch)
        vec = ref.vectors(g, ch, cr - ch)
        for kind in ("CG", "DCG", "NCG", "NDCG"):
            for k in (5, 10, 25, 50, 100):
                want[f"{kind}@{k}"] = vec[kind][k - 1] if len(g) >= k else float("nan")
        for name, w in want.items():
            got = pq.loc[q, name]
            if isinstance(w, float) and np.isnan(w):
                assert np.isnan(got), (q, name)
            else:
                assert got == pytest.approx(w, rel=1e-12), (q, name)


def test_sister_grades_with_separate_queries_use_the_target_hierarchy(example):
    rel = shrec_score.load_relevance(example / "targets.cla", example / "queries.cla", grades="sister")
    assert rel.n_relevant(2).tolist() == [6] and rel.n_relevant(1).tolist() == [11]


def test_graded_default_sort_is_adr_and_terminal_shows_madr_subset(example):
    report = shrec_score.score([example / "runs"], example / "targets.cla", queries=example / "queries.cla", grades="sister")
    assert report.sort == "ADR" and report.shown[0] == "ADR"
    assert len(report.measures) == 39 and "TN_relevant" in report.per_run.columns
    assert os.path.basename(report.signature["relevance"]) == "graded: own class 2, sister classes 1"
