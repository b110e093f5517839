"""Tie-aware scoring (issue 19): every measure under ``ties="expected"`` against
the mean over every distinct arrangement of the grades inside each tie group,
enumerated exhaustively; ``optimistic`` / ``pessimistic`` against the best /
worst arrangement.  Matrices (both engine paths) and ranked lists with tie
groups; binary measures, AP, RR and the PR curve.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from shrec_score.engine import score_run
from shrec_score.measures import RankBlock, Settings, get_measure
from shrec_score.measures.precision import pr_curve
from shrec_score.model import Classification, MatrixRun, RankedRun
from shrec_score.ranking import matrix_to_ranked_run, tie_starts
from shrec_score.relevance import Relevance

BINARY = ["NN", "FT", "ST", "E", "DCG", "AP", "RR", "P@1", "P@3", "P@5", "R@2", "R@4"]
SETTINGS = Settings(e_depth=4, pr_levels=7)


def multiset_permutations(items: list[int]) -> list[tuple[int, ...]]:
    """Every distinct order of a multiset (plain recursion, the oracle's own)."""
    if not items:
        return [()]
    out = []
    for v in sorted(set(items)):
        rest = list(items)
        rest.remove(v)
        out += [(v, *p) for p in multiset_permutations(rest)]
    return out


def arrangements(grades: list[int], groups: list[int]) -> np.ndarray:
    """Every distinct arrangement of ``grades`` (in list order) with the grades
    permuted inside each group; ``groups[i]`` is the group of entry i (runs)."""
    bounds = np.flatnonzero(np.diff(np.r_[-1, groups, -2]))
    parts = [multiset_permutations(list(grades[a:b])) for a, b in zip(bounds[:-1], bounds[1:])]
    return np.array([sum(combo, ()) for combo in itertools.product(*parts)], dtype=np.int64)


def brute_binary(grades: list[int], groups: list[int], k_rel: int, n_ret: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Every binary measure (rule-mode formulas) and the PR curve on each arrangement (rows)."""
    arr = arrangements(grades, groups)
    width = max(1, k_rel, int((arr[0] >= 1).sum()))
    ranks = np.full((len(arr), width), np.inf)
    for i, a in enumerate(arr):
        pos = np.flatnonzero(a >= 1) + 1
        ranks[i, : pos.size] = pos
    block = RankBlock(ranks, np.full(len(arr), k_rel), np.full(len(arr), n_ret))
    values = {m: get_measure(m).compute(block, SETTINGS) for m in BINARY}
    return values, pr_curve(ranks, n_relevant=block.n_relevant, levels=SETTINGS.recall_levels())


def tie_relevance(seed: int) -> tuple[Relevance, np.ndarray]:
    """Separate queries over 11 targets of 3 classes, and integer distances with
    tie groups from 1 (the whole row) to every entry apart."""
    rng = np.random.default_rng(seed)
    n = 11
    labels = rng.integers(0, 3, n).astype(np.int32)
    cla = Classification("t.cla", ["a", "b", "c"], ["0"] * 3, [f"t{i}" for i in range(n)], labels)
    nq = 10
    queries = Classification("q.cla", ["a", "b", "c"], ["0"] * 3, [f"q{i}" for i in range(nq)], rng.integers(0, 3, nq).astype(np.int32))
    rel = Relevance.from_classification(cla, queries)
    levels = [1, 2, 3, 4, 6, 11, 2, 3, 5, 8]
    d = np.stack([rng.integers(0, levels[i], n) for i in range(nq)]).astype(np.float64)
    return rel, d


def check_against_brute(rel: Relevance, scores: dict[str, dict[str, np.ndarray]], prs: dict[str, np.ndarray], lists: list[tuple[list[int], list[int]]]) -> None:
    moved = np.nan_to_num(scores["optimistic"]["AP"] - scores["pessimistic"]["AP"])
    assert (moved > 0).sum() >= 3  # the ties matter on several queries
    for q, (grades, groups) in enumerate(lists):
        k_rel = int(rel.n_relevant(1)[q])
        if k_rel == 0:
            continue
        values, pr = brute_binary(grades, groups, k_rel, len(grades))
        for m in BINARY:
            assert scores["expected"][m][q] == pytest.approx(values[m].mean(), abs=1e-12), (m, q)
            assert scores["optimistic"][m][q] == pytest.approx(values[m].max(), abs=1e-12), (m, q)
            assert scores["pessimistic"][m][q] == pytest.approx(values[m].min(), abs=1e-12), (m, q)
        np.testing.assert_allclose(prs["expected"][q], pr.mean(axis=0), atol=1e-12)
        np.testing.assert_allclose(prs["optimistic"][q], pr.max(axis=0), atol=1e-12)
        np.testing.assert_allclose(prs["pessimistic"][q], pr.min(axis=0), atol=1e-12)


def matrix_lists(rel: Relevance, d: np.ndarray) -> list[tuple[list[int], list[int]]]:
    """Each row's grades in distance order and its tie groups (the oracle's own sort)."""
    out = []
    for q in range(d.shape[0]):
        order = sorted(range(d.shape[1]), key=lambda c: (d[q, c], c))
        grades = [int(rel.gains(np.array([q]), np.array([c]))[0]) for c in order]
        groups = [int(d[q, c]) for c in order]
        out.append((grades, groups))
    return out


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("path", ["matrix", "lists"])
def test_binary_measures_match_brute_force(seed: int, path: str) -> None:
    rel, d = tie_relevance(seed)
    measures = [get_measure(m) for m in BINARY]
    scores, prs = {}, {}
    for mode in ("expected", "optimistic", "pessimistic"):
        run = MatrixRun("m", "m.npy", d, rel.query_ids, np.arange(d.shape[0]), np.arange(d.shape[1]))
        settings = Settings(e_depth=4, pr_levels=7, ties=mode)
        if path == "lists":  # the chunked path: ranked lists carrying their tie groups
            lists = matrix_to_ranked_run(run, rel.self_index, np.arange(rel.n_queries), ties=True)
            sc = score_run(lists, rel, measures, settings)
        else:  # the matrix kernel: two counts per relevant item
            sc = score_run(run, rel, measures, settings)
        scores[mode], prs[mode] = sc.values, sc.pr
    check_against_brute(rel, scores, prs, matrix_lists(rel, d))


def test_tie_starts_of_a_matrix_follow_equal_distances() -> None:
    rel, d = tie_relevance(0)
    run = MatrixRun("m", "m.npy", d, rel.query_ids, np.arange(d.shape[0]), np.arange(d.shape[1]))
    lists = matrix_to_ranked_run(run, rel.self_index, np.arange(rel.n_queries), ties=True)
    assert lists.tie_start is not None
    for q in range(d.shape[0]):
        ranked = d[q][lists.ranked_list(q)]
        starts = lists.tie_start[lists.offsets[q] : lists.offsets[q + 1]]
        # hand rule: an entry's group starts at the first place holding its distance
        assert starts.tolist() == [int(np.flatnonzero(ranked == v)[0]) for v in ranked]


def test_all_tied_row_scores_random_ranking() -> None:
    """Every distance equal: P@k = K / N, R@k = k / N, NN = K / N, by hand."""
    labels = np.array([0, 0, 0, 1, 1, 1, 1, 1], dtype=np.int32)  # N = 8 targets, K = 3 for class a
    cla = Classification("t.cla", ["a", "b"], ["0", "0"], [f"t{i}" for i in range(8)], labels)
    queries = Classification("q.cla", ["a", "b"], ["0", "0"], ["qa", "qb"], np.array([0, 1], dtype=np.int32))
    rel = Relevance.from_classification(cla, queries)
    run = MatrixRun("m", "m.npy", np.ones((2, 8)), rel.query_ids, np.arange(2), np.arange(8))
    names = ["NN", "P@2", "P@5", "R@2", "FT", "AP"]
    sc = score_run(run, rel, [get_measure(m) for m in names], Settings(ties="expected")).values
    assert sc["NN"].tolist() == pytest.approx([3 / 8, 5 / 8])
    assert sc["P@2"].tolist() == pytest.approx([3 / 8, 5 / 8])
    assert sc["P@5"].tolist() == pytest.approx([3 / 8, 5 / 8])
    assert sc["R@2"].tolist() == pytest.approx([2 / 8, 2 / 8])
    assert sc["FT"].tolist() == pytest.approx([3 / 8, 5 / 8])
    # AP of a random order, K = 3 of N = 8, by hand: (1/K) sum_k E[k / rank_k]
    # = (1/N) sum_{p=1..N} (1 + (p-1)(K-1)/(N-1)) / p
    ap = sum((1 + (p - 1) * 2 / 7) / p for p in range(1, 9)) / 8
    assert sc["AP"][0] == pytest.approx(ap)


def test_no_ties_same_in_every_mode() -> None:
    rel, d = tie_relevance(1)
    d = d + np.arange(d.shape[1])[None, :] * 100.0  # every distance of a row apart
    measures = [get_measure(m) for m in BINARY]
    out = {}
    for mode in ("rule", "expected", "optimistic", "pessimistic"):
        run = MatrixRun("m", "m.npy", d, rel.query_ids, np.arange(d.shape[0]), np.arange(d.shape[1]))
        sc = score_run(run, rel, measures, Settings(ties=mode))
        out[mode] = (sc.values, sc.pr)
    for mode in ("expected", "optimistic", "pessimistic"):
        for m in BINARY:
            np.testing.assert_allclose(out[mode][0][m], out["rule"][0][m], rtol=0, atol=1e-15)
        np.testing.assert_allclose(out[mode][1], out["rule"][1], atol=1e-15)


def test_lists_with_given_tie_groups() -> None:
    """A RankedRun with tie_start (as a reader with distances gives it): groups
    split relevant items; brute force per list."""
    rel, _ = tie_relevance(2)
    rng = np.random.default_rng(7)
    lists, tie_parts, oracle = {}, [], []
    for q in range(len(rel.query_ids)):
        order = rng.permutation(11)[: rng.integers(6, 12)]  # lists shorter than the collection
        values = np.sort(rng.integers(0, 4, order.size))
        lists[rel.query_ids[q]] = order
        tie_parts.append(tie_starts(values, np.array([0, order.size])))
        oracle.append(([int(rel.gains(np.array([q]), np.array([t]))[0]) for t in order], values.tolist()))
    measures = [get_measure(m) for m in BINARY]
    scores, prs = {}, {}
    for mode in ("expected", "optimistic", "pessimistic"):
        run = RankedRun.from_lists("l", lists)
        run.tie_start = np.concatenate(tie_parts)
        sc = score_run(run, rel, measures, Settings(e_depth=4, pr_levels=7, ties=mode))
        scores[mode], prs[mode] = sc.values, sc.pr
    check_against_brute(rel, scores, prs, oracle)


@pytest.mark.parametrize("seed", range(3))
def test_all_against_all_own_column_left_out(seed: int) -> None:
    """All-against-all: the query's own column (its distance tied with others
    or not) leaves its row before the tie groups count; both matrix paths."""
    rng = np.random.default_rng(100 + seed)
    n = 10
    labels = rng.integers(0, 3, n).astype(np.int32)
    cla = Classification("t.cla", ["a", "b", "c"], ["0"] * 3, [f"t{i}" for i in range(n)], labels)
    rel = Relevance.from_classification(cla)
    d = rng.integers(0, 3, (n, n)).astype(np.float64)  # the diagonal ties with other cells too
    measures = [get_measure(m) for m in BINARY]
    scores, prs, lists_scores = {}, {}, {}
    for mode in ("expected", "optimistic", "pessimistic"):
        settings = Settings(e_depth=4, pr_levels=7, ties=mode)
        run = MatrixRun("m", "m.npy", d, rel.query_ids, np.arange(n), np.arange(n))
        sc = score_run(run, rel, measures, settings)
        scores[mode], prs[mode] = sc.values, sc.pr
        lists = matrix_to_ranked_run(run, rel.self_index, np.arange(rel.n_queries), ties=True)
        lists_scores[mode] = score_run(lists, rel, measures, settings).values
    oracle = []
    for q in range(n):
        cols = [c for c in sorted(range(n), key=lambda c: (d[q, c], c)) if c != q]
        oracle.append(([int(labels[c] == labels[q]) for c in cols], [int(d[q, c]) for c in cols]))
    check_against_brute(rel, scores, prs, oracle)
    check_against_brute(rel, lists_scores, prs, oracle)
