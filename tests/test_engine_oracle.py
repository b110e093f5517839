"""The whole pipeline (relevance -> rank blocks -> measures) against
pytrec_eval (trec_eval's C code) and the reference loops."""

import numpy as np
import pytest

import shrec_score
from shrec_score.measures import Settings
from shrec_score.model import Classification, RankedRun

from . import reference as ref

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is a test extra")


def random_classification(rng, n_models, n_classes, prefix="m", misc=False):
    labels = rng.integers(0, n_classes, size=n_models)
    names = [f"c{i}" for i in range(n_classes)]
    if misc:
        names[-1] = "-1"
    ids = [f"{prefix}{i}" for i in rng.permutation(n_models)]
    order = np.argsort(labels, kind="stable")
    return Classification("random.cla", names, ["0"] * n_classes, [ids[i] for i in order], labels[order].astype(np.int32))


def random_run(rng, name, query_ids, n_targets, self_index=None, truncate=True):
    lists = {}
    for i, q in enumerate(query_ids):
        order = rng.permutation(n_targets)
        if self_index is not None:
            order = order[order != self_index[i]]
        if truncate and rng.random() < 0.5:
            order = order[: int(rng.integers(1, len(order) + 1))]
        lists[q] = order
    return RankedRun.from_lists(name, lists)


def trec_eval_scores(rel, run):
    qrels, trec_run = {}, {}
    k = rel.n_relevant(1)
    for i, q in enumerate(rel.query_ids):
        rows = np.arange(rel.collection_size)
        g = rel.gains(np.full(rel.collection_size, i), rows)
        qrels[q] = {rel.target_ids[t]: int(g[t]) for t in rows if t != rel.self_index[i]}
        lst = run.ranked_list(i)
        trec_run[q] = {rel.target_ids[t]: float(len(lst) - r) for r, t in enumerate(lst)}
        assert sum(qrels[q].values()) == k[i]
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P_1", "Rprec", "recip_rank"})
    return ev.evaluate(trec_run)


@pytest.mark.parametrize("mode", ["all-against-all", "separate"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_ap_nn_ft_rr_equal_trec_eval(mode, seed):
    rng = np.random.default_rng(seed)
    targets = random_classification(rng, 120, 9, misc=(seed == 3))
    queries = None if mode == "all-against-all" else random_classification(rng, 40, 10, prefix="q")
    rel = shrec_score.Relevance.from_classification(targets, queries)
    runs = [
        random_run(rng, f"run{j}", rel.query_ids, rel.collection_size, rel.self_index if queries is None else None)
        for j in range(3)
    ]
    report = shrec_score.score(runs, rel, measures=["AP", "NN", "FT", "RR"])
    pq = report.per_query
    k = rel.n_relevant(1)
    for run in runs:
        te = trec_eval_scores(rel, run)
        sub = pq[pq["run"] == run.name].set_index("query")
        for i, q in enumerate(rel.query_ids):
            if k[i] == 0:
                assert sub.loc[q, ["AP", "NN", "FT", "RR"]].isna().all()
                continue
            assert sub.loc[q, "AP"] == pytest.approx(te[q]["map"], abs=1e-12)
            assert sub.loc[q, "NN"] == pytest.approx(te[q]["P_1"], abs=1e-12)
            assert sub.loc[q, "FT"] == pytest.approx(te[q]["Rprec"], abs=1e-12)
            assert sub.loc[q, "RR"] == pytest.approx(te[q]["recip_rank"], abs=1e-12)


def test_k_is_class_size_minus_one_all_against_all_and_class_size_with_separate_queries():
    t = Classification("t.cla", ["a", "b"], ["0", "0"], ["1", "2", "3", "4", "5"], np.array([0, 0, 0, 1, 1], dtype=np.int32))
    q = Classification("q.cla", ["b", "z"], ["0", "0"], ["s1", "s2"], np.array([0, 1], dtype=np.int32))
    assert shrec_score.Relevance.from_classification(t).n_relevant(1).tolist() == [2, 2, 2, 1, 1]
    sep = shrec_score.Relevance.from_classification(t, q)
    assert sep.n_relevant(1).tolist() == [2, 0]  # class z is unknown to the targets


def test_misc_class_is_never_query_nor_relevant():
    t = Classification("t.cla", ["a", "-1"], ["0", "0"], ["1", "2", "3", "4"], np.array([0, 0, 1, 1], dtype=np.int32))
    rel = shrec_score.Relevance.from_classification(t)
    assert rel.query_ids == ["1", "2"]
    assert rel.ignorable_queries == ["3", "4"]
    assert rel.gains(np.array([0, 0, 0]), np.array([1, 2, 3])).tolist() == [1, 0, 0]


def test_engine_equals_reference_loops_for_every_measure():
    rng = np.random.default_rng(11)
    targets = random_classification(rng, 80, 6)
    rel = shrec_score.Relevance.from_classification(targets)
    run = random_run(rng, "r", rel.query_ids, rel.collection_size, rel.self_index)
    report = shrec_score.score([run], rel, measures=["NN", "FT", "ST", "E", "DCG", "AP"])
    k = rel.n_relevant(1)
    for i, q in enumerate(rel.query_ids):
        lst = run.ranked_list(i)
        gains = rel.gains(np.full(len(lst), i), lst).tolist()
        row = report.per_query.iloc[i]
        assert row["query"] == q
        for name, f in [("NN", ref.nn), ("FT", ref.ft), ("ST", ref.st), ("E", ref.e_measure), ("DCG", ref.dcg), ("AP", ref.ap)]:
            assert row[name] == pytest.approx(f(gains, int(k[i])), rel=1e-12), name
    # the per-run mean is the mean of the per-query values
    for m in ["NN", "FT", "ST", "E", "DCG", "AP"]:
        assert report.leaderboard.loc[0, m] == pytest.approx(report.per_query[m].mean(), rel=1e-12)


def test_a_run_record_is_scored_by_query_id_whatever_the_order_of_its_lists():
    # classes a = {1, 2, 3}, b = {4, 5}; all-against-all, the query itself left out.  Target indices: id - 1.
    t = Classification("t.cla", ["a", "b"], ["0", "0"], ["1", "2", "3", "4", "5"], np.array([0, 0, 0, 1, 1], dtype=np.int32))
    rel = shrec_score.Relevance.from_classification(t)
    lists = {  # by hand: AP 1 (2, 3 first), 1/2 (5 at rank 2 of 1 relevant), 1 (4 first), (1/2 + 2/3) / 2, 1
        "1": [1, 2, 3, 4], "4": [0, 4, 1, 2], "5": [3, 0, 1, 2], "2": [3, 0, 2, 4], "3": [0, 1, 3, 4],
    }
    run = RankedRun.from_lists("r", {q: np.array(v) for q, v in lists.items()})  # not in the relevance's order
    per_query = shrec_score.score([run], rel, measures=["NN", "AP"]).per_query.set_index("query")
    assert per_query["AP"].to_dict() == pytest.approx({"1": 1.0, "2": (1 / 2 + 2 / 3) / 2, "3": 1.0, "4": 0.5, "5": 1.0})
    assert per_query["NN"].to_dict() == {"1": 1.0, "2": 0.0, "3": 1.0, "4": 0.0, "5": 1.0}
    del lists["3"]
    short = RankedRun.from_lists("r", {q: np.array(v) for q, v in lists.items()})
    with pytest.raises(shrec_score.OptionError, match=r"run 'r' has no ranked list for 1 of 5 queries, first: '3'"):
        shrec_score.score([short], rel)
    skipped = shrec_score.score([short], rel, measures=["AP"], settings=Settings(missing="skip")).per_query.set_index("query")["AP"]
    assert skipped.drop("3").to_dict() == pytest.approx({"1": 1.0, "2": (1 / 2 + 2 / 3) / 2, "4": 0.5, "5": 1.0}) and np.isnan(skipped["3"])
    with pytest.raises(shrec_score.OptionError, match="ranks for 1 queries the relevance does not have, first: '9'"):
        shrec_score.score([RankedRun.from_lists("r", {**lists, "9": np.array([0])})], rel)
