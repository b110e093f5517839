"""Matrix ranking (ranking.matrix_rank_block: one sort per block of rows and
searchsorted of the relevant distances) against a stable argsort of every row
written here, in every tie mode, on blocks full of ties, signed zeros,
infinities and extreme values; the first NaN cell named, lenient NaN counts."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from shrec_score import ranking
from shrec_score.errors import InputError
from shrec_score.measures import RankBlock
from shrec_score.model import Classification, MatrixRun
from shrec_score.relevance import Relevance


def classes(rng: np.random.Generator, n: int, n_classes: int = 9, prefix: str = "") -> Classification:
    labels = np.sort(rng.integers(0, n_classes, n)).astype(np.int32)
    return Classification("r.cla", [f"c{i}" for i in range(n_classes)], ["0"] * n_classes, [f"{prefix}{i}" for i in range(n)], labels)


def all_against_all(seed: int, n: int = 150, levels: int = 7, dtype: type = np.float32) -> tuple[Relevance, np.ndarray]:
    rng = np.random.default_rng(seed)
    rel = Relevance.from_classification(classes(rng, n))
    d = (rng.integers(0, levels, size=(n, n)) / 3).astype(dtype)
    d[rng.random(d.shape) < 0.02] = -0.0
    d[rng.random(d.shape) < 0.02] = np.inf
    return rel, d


def oracle(rel: Relevance, d: np.ndarray, mode: str = "rule") -> tuple[list[list[int]], list[list[tuple[int, int]]]]:
    """Per query, the 1-based ranks of its relevant items ascending, from a
    stable argsort of the row (equal distances: lower column first), own
    column out; in the other modes the relevant items of a tie group move to
    its front (optimistic) or its end (pessimistic).  And per query the tie
    groups (cells before the group, its size) of those ranks."""
    ranks, groups = [], []
    relevant = rel.relevant_targets(1)
    for q in range(d.shape[0]):
        own = rel.self_index[q]
        order = [c for c in np.argsort(d[q] + 0.0, kind="stable").tolist() if c != own]
        values = [d[q, c] + 0.0 for c in order]
        rel_cols = set(relevant[q].tolist())
        mine, tie = [], []
        start = 0
        while start < len(order):
            end = start
            while end < len(order) and values[end] == values[start]:
                end += 1
            hits = [i for i in range(start, end) if order[i] in rel_cols]
            if mode == "rule":
                places = [i + 1 for i in hits]
            elif mode == "pessimistic":
                places = list(range(end - len(hits) + 1, end + 1))
            else:
                places = list(range(start + 1, start + len(hits) + 1))
            mine += places
            tie += [(start, end - start)] * len(hits)
            start = end
        ranks.append(mine)
        groups.append(tie)
    return ranks, groups


def rank(rel: Relevance, d: np.ndarray, *, ties: str = "rule", drops: Counter[str] | None = None, rows: np.ndarray | None = None) -> RankBlock:
    rows = np.arange(d.shape[0]) if rows is None else rows
    run = MatrixRun("m", "m.npy", d, rel.query_ids, rows, np.arange(d.shape[1]), drops=drops)
    every = np.arange(len(rows))  # the queries ranked
    return ranking.matrix_rank_block(run, rel.relevant_targets(1), rel.n_relevant(1), rel.self_index, every, ties=ties)


def assert_as_oracle(block: RankBlock, rel: Relevance, d: np.ndarray, mode: str) -> None:
    want, groups = oracle(rel, d, mode)
    for q, ranks in enumerate(want):
        assert block.rel_ranks[q, : len(ranks)].tolist() == ranks
        assert np.isinf(block.rel_ranks[q, len(ranks) :]).all()
        if mode == "expected":
            assert block.group_start[q, : len(ranks)].tolist() == [s for s, _ in groups[q]]
            assert block.group_size[q, : len(ranks)].tolist() == [n for _, n in groups[q]]


@pytest.fixture
def small_blocks(monkeypatch):
    """The first NaN cell looked for 8 rows of 150 at a time: a matrix of 150 rows is 19 blocks."""
    monkeypatch.setattr(ranking, "BLOCK_CELLS", 8 * 150)


@pytest.mark.parametrize("ties", ["rule", "expected", "optimistic", "pessimistic"])
@pytest.mark.parametrize("seed", range(4))
def test_ranks_and_tie_groups_as_a_stable_argsort(seed, ties):
    rel, d = all_against_all(seed, levels=[3, 7, 60, 10**6][seed], dtype=np.float32 if seed % 2 else np.float64)
    assert_as_oracle(rank(rel, d, ties=ties), rel, d, ties)


@pytest.mark.parametrize("ties", ["rule", "optimistic", "pessimistic", "expected"])
def test_separate_queries_and_rows_out_of_order(ties):
    """Queries that are not targets (no own column) whose rows lie in any order (read by a fancy index)."""
    rng = np.random.default_rng(3)
    rel = Relevance.from_classification(classes(rng, 150), classes(rng, 40, prefix="q"))
    d = (rng.integers(0, 5, size=(40, 150)) / 2).astype(np.float32)
    rows = rng.permutation(40)
    block = rank(rel, d, ties=ties, rows=rows)
    assert_as_oracle(block, rel, d[rows], ties)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("seed", range(4))
def test_extreme_values_and_whole_rows_of_one_value(seed, dtype):
    rng = np.random.default_rng(seed)
    rel, _ = all_against_all(seed, n=120)
    d = (rng.integers(-40, 40, (120, 120)) / 7).astype(dtype)
    d[rng.random(d.shape) < 0.05] = np.inf
    d[rng.random(d.shape) < 0.03] = -np.inf
    d[rng.random(d.shape) < 0.05] = -0.0
    d[rng.random(d.shape) < 0.02] = np.finfo(dtype).max
    d[rng.random(d.shape) < 0.02] = np.finfo(dtype).tiny / 4  # subnormal
    d[0] = 0.25  # one value in the whole row
    d[1] = np.inf
    d[2] = 10.0 ** rng.uniform(-30, 30, 120)  # far apart
    for ties in ("rule", "pessimistic"):
        assert_as_oracle(rank(rel, d, ties=ties), rel, d, ties)


def test_integer_and_strided_matrices_rank_as_float64():
    rel, d = all_against_all(9, levels=5, dtype=np.float64)
    want = rank(rel, d).rel_ranks
    wide = np.zeros((d.shape[0], 2 * d.shape[1]))
    wide[:, ::2] = d
    np.testing.assert_array_equal(rank(rel, wide[:, ::2]).rel_ranks, want)
    np.testing.assert_array_equal(rank(rel, np.asfortranarray(d)).rel_ranks, want)
    finite = np.where(np.isinf(d), 99, d * 3).astype(np.int16)
    assert_as_oracle(rank(rel, finite), rel, finite.astype(np.float64), "rule")


def test_equal_before_counts_equal_cells_in_lower_columns():
    row = np.array([0.5, -0.0, 0.5, 0.0, np.inf, 0.5, np.inf])
    cols = np.array([5, 2, 3, 6, 0])
    assert ranking.equal_before(row, row[cols], cols).tolist() == [2, 1, 1, 1, 0]


def test_the_first_nan_cell_is_named(small_blocks):
    rel, d = all_against_all(1)
    d[131, 7] = np.nan  # block 16
    d[42, 99] = np.nan  # block 5: the first in row order
    d[42, 120] = np.nan
    with pytest.raises(InputError) as err:
        rank(rel, d)
    assert err.value.line == 43
    assert "row 43 (query '42') column 100" in err.value.expected


def test_lenient_nan_cells_are_counted_once_each_and_ranked_last(small_blocks):
    rel, d = all_against_all(2)
    rng = np.random.default_rng(0)
    cells = rng.choice(d.size, 37, replace=False)
    d.ravel()[cells] = np.nan
    drops: Counter[str] = Counter()
    block = rank(rel, d, drops=drops)
    assert drops[ranking.NAN_DROPS] == 37
    np.testing.assert_array_equal(block.rel_ranks, rank(rel, np.where(np.isnan(d), np.inf, d)).rel_ranks)


@pytest.mark.parametrize("mode", ["expected", "optimistic", "pessimistic"])
@pytest.mark.parametrize("seed", range(5))
def test_block_ranks_from_counts_equal_the_row_by_row_ones(mode, seed):
    """Counts made from real rows (so that they are consistent), many rows at once."""
    rng = np.random.default_rng(seed)
    n_rows, n_cols = 40, 60
    block = (rng.integers(0, [2, 5, 30, 1000, 3][seed], (n_rows, n_cols)) / 4).astype(np.float32)
    block[rng.random(block.shape) < 0.05] = -0.0
    rows, cols = [], []
    for r in range(n_rows):
        c = np.sort(rng.choice(n_cols, int(rng.integers(0, 12)), replace=False))
        rows += [r] * c.size
        cols += c.tolist()
    item_row, item_col = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
    values = block[item_row, item_col]
    smaller = np.asarray([(block[r] < v).sum() for r, v in zip(rows, values)], dtype=np.int64)
    equal = np.asarray([(block[r] == v).sum() for r, v in zip(rows, values)], dtype=np.int64)
    ranks, start, size = ranking.rows_ranks_from_counts(item_row, smaller, equal, values, mode)
    for r in range(n_rows):
        part = np.flatnonzero(item_row == r)
        order = np.argsort(values[part], kind="stable")
        v, s, e = values[part][order], smaller[part][order], equal[part][order]
        hits_before = np.asarray([(v[:i] == v[i]).sum() for i in range(v.size)], dtype=np.int64)
        hits_in = np.asarray([(v == x).sum() for x in v], dtype=np.int64)
        want = s + hits_before + 1 if mode != "pessimistic" else s + e - hits_in + hits_before + 1
        assert ranks[part].tolist() == want.tolist()
        assert start[part].tolist() == s.tolist() and size[part].tolist() == e.tolist()


def test_a_matrix_scores_the_same_through_lists_cut_into_chunks(monkeypatch):
    """Issue 30 item 9: the binary matrix path, and its ranked lists (a no-op
    depth) cut into chunks whose queries have different largest K, give the
    same values to the last bit (every chunk padded to the whole run's K)."""
    import pandas as pd

    import shrec_score
    from shrec_score import engine
    from shrec_score.measures import Settings

    rng = np.random.default_rng(4)
    labels = np.repeat(np.arange(12), rng.integers(2, 40, 12))
    d = np.round(rng.random((labels.size, labels.size)), 2).astype(np.float32)
    monkeypatch.setattr(engine, "CHUNK_ENTRIES", 5 * labels.size)
    measures = ["NN", "FT", "ST", "E", "DCG", "AP", "RR"]
    whole = shrec_score.evaluate(distances=d, labels=labels, measures=measures)
    cut = shrec_score.evaluate(distances=d, labels=labels, measures=measures, settings=Settings(depth=labels.size))
    pd.testing.assert_frame_equal(whole.per_query, cut.per_query, check_exact=True)
    pd.testing.assert_frame_equal(whole.pr_curve, cut.pr_curve, check_exact=True)
