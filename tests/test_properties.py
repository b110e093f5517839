"""Registry-wide properties, checked with hypothesis on random collections and runs."""

import os

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import shrec_score
from shrec_score.cli import cli
from shrec_score.measures import DEFAULT_BINARY, graded_defaults
from shrec_score.model import Classification, RankedRun
from shrec_score.relevance import Relevance

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

BOUNDED = [m for m in graded_defaults() if not m.startswith(("TP", "FP", "TN", "FN", "CG@", "DCG@"))]


@st.composite
def collections(draw):
    """A hierarchical classification (sisters under 2 parents) and a random run."""
    n = draw(st.integers(6, 40))
    n_classes = draw(st.integers(2, 6))
    labels = np.sort(np.array(draw(st.lists(st.integers(0, n_classes - 1), min_size=n, max_size=n)), dtype=np.int32))
    names = ["P0", "P1"] + [f"c{i}" for i in range(n_classes)]
    parents = ["0", "0"] + [f"P{i % 2}" for i in range(n_classes)]
    ids = [f"m{i}" for i in draw(st.permutations(list(range(n))))]
    cla = Classification("h.cla", names, parents, ids, (labels + 2).astype(np.int32))
    seed = draw(st.integers(0, 2**31))
    truncate = draw(st.booleans())
    return cla, seed, truncate


def random_run(rel, seed, truncate, name="r"):
    rng = np.random.default_rng(seed)
    lists = {}
    for i, q in enumerate(rel.query_ids):
        order = rng.permutation(rel.collection_size)
        order = order[order != rel.self_index[i]]
        if truncate:
            order = order[: int(rng.integers(1, order.size + 1))]
        lists[q] = order
    return RankedRun.from_lists(name, lists)


def perfect_run(rel):
    lists = {}
    for i, q in enumerate(rel.query_ids):
        t = np.arange(rel.collection_size)
        t = t[t != rel.self_index[i]]
        g = rel.gains(np.full(t.size, i), t)
        lists[q] = t[np.argsort(-g, kind="stable")]  # highly relevant, then marginal, then the rest
    return RankedRun.from_lists("perfect", lists)


@SETTINGS
@given(collections())
def test_every_measure_stays_in_its_range(case):
    cla, seed, truncate = case
    for grades in ("binary", "sister"):
        rel = Relevance.from_classification(cla, grades=grades)
        names = list(DEFAULT_BINARY) + ["RR", "P@5", "R@5"] + BOUNDED
        pq = shrec_score.score([random_run(rel, seed, truncate)], rel, measures=names).per_query
        values = pq[names].to_numpy(dtype=float)
        ok = np.isnan(values) | ((values >= 0) & (values <= 1 + 1e-12))
        assert ok.all(), pq[names][~ok.all(axis=1)]


@SETTINGS
@given(collections())
def test_a_perfect_ranking_scores_one(case):
    cla, _, _ = case
    for grades in ("binary", "sister"):
        rel = Relevance.from_classification(cla, grades=grades)
        names = ["NN", "FT", "AP", "DCG", "ADR", "NDCG@5", "AP_highly", "AP_relevant"]
        pq = shrec_score.score([perfect_run(rel)], rel, measures=names).per_query
        k = rel.n_relevant(1)
        for m in names:
            v = pq[m].to_numpy()[k > 0]
            v = v[~np.isnan(v)]  # NDCG@5 is empty where a list is shorter than 5
            assert (v == 1.0).all(), (grades, m, v)


@SETTINGS
@given(collections())
def test_reversing_a_perfect_ranking_never_raises_ap(case):
    # (reversing an arbitrary run can raise AP: a run worse than random gains by it)
    cla, seed, _ = case
    rel = Relevance.from_classification(cla)
    best = perfect_run(rel)
    rev = RankedRun.from_lists("rev", {q: best.ranked_list(i)[::-1] for i, q in enumerate(rel.query_ids)})
    shuffled = random_run(rel, seed, False, name="shuffled")
    pq = shrec_score.score([best, rev, shuffled], rel, measures=["AP"]).per_query.pivot(index="query", columns="run", values="AP")
    pq = pq.dropna()
    assert (pq["rev"] <= pq["perfect"]).all() and (pq["shuffled"] <= pq["perfect"]).all()


@SETTINGS
@given(collections())
def test_renaming_ids_changes_nothing(case):
    cla, seed, truncate = case
    rel = Relevance.from_classification(cla, grades="sister")
    run = random_run(rel, seed, truncate)
    rename = {m: f"x{len(m)}_{m[::-1]}" for m in cla.ids}
    cla2 = Classification("h2.cla", cla.class_names, cla.class_parents, [rename[m] for m in cla.ids], cla.labels)
    rel2 = Relevance.from_classification(cla2, grades="sister")
    run2 = RankedRun.from_lists("r", {rename[q]: run.ranked_list(i) for i, q in enumerate(rel.query_ids)})
    a = shrec_score.score([run], rel).per_query.drop(columns=["query"])
    b = shrec_score.score([run2], rel2).per_query.drop(columns=["query"])
    pd.testing.assert_frame_equal(a, b)


def test_per_run_means_equal_the_means_of_per_query_csv(tmp_path):
    root = os.path.join(os.path.dirname(os.path.dirname(__file__)), "sample_runs", "shrec2006-like")
    out = tmp_path / "o"
    r = CliRunner().invoke(cli, [os.path.join(root, "runs"), "-r", os.path.join(os.path.dirname(root), "psb-like", "classes.cla"),
                                 "-q", os.path.join(root, "queries.cla"), "--grades", "sister", "--out", str(out)])
    assert r.exit_code == 0, r.output
    pq = pd.read_csv(out / "per_query.csv")
    pr = pd.read_csv(out / "per_run.csv").set_index("run")
    for run, sub in pq.groupby("run"):
        for m in [c for c in pq.columns if c not in ("run", "query", "class")]:
            want = sub[m].mean()
            got = pr.loc[run, m]
            assert (np.isnan(want) and np.isnan(got)) or got == pytest.approx(want, rel=1e-12), (run, m)
