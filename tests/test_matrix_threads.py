"""Matrix ranking on two threads (ranking.in_threads, matrix_rank_block's
``threads``): the same ranks, tie groups, errors and NaN counts as on one
thread, and ranks equal to a stable argsort of every row written here."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from shrec_score import ranking
from shrec_score.errors import InputError
from shrec_score.measures import RankBlock
from shrec_score.model import Classification, MatrixRun
from shrec_score.relevance import Relevance


def all_against_all(seed: int, n: int = 150, levels: int = 7, dtype: type = np.float32) -> tuple[Relevance, np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = np.sort(rng.integers(0, 9, n)).astype(np.int32)
    cla = Classification("r.cla", [f"c{i}" for i in range(9)], ["0"] * 9, [str(i) for i in range(n)], labels)
    rel = Relevance.from_classification(cla)
    d = (rng.integers(0, levels, size=(n, n)) / 3).astype(dtype)
    d[rng.random(d.shape) < 0.02] = -0.0
    d[rng.random(d.shape) < 0.02] = np.inf
    return rel, d


def argsort_ranks(rel: Relevance, d: np.ndarray) -> list[list[int]]:
    """Per query, the 1-based ranks of its relevant items ascending: a stable
    argsort of the row (equal distances: lower column first), own column out."""
    out = []
    relevant = rel.relevant_targets(1)
    for q in range(d.shape[0]):
        order = [c for c in np.argsort(d[q] + 0.0, kind="stable").tolist() if c != q]
        place = {c: i + 1 for i, c in enumerate(order)}
        out.append(sorted(place[c] for c in relevant[q].tolist()))
    return out


def rank(rel: Relevance, d: np.ndarray, threads: int, *, ties: str = "rule", drops: Counter[str] | None = None) -> RankBlock:
    run = MatrixRun("m", "m.npy", d, rel.query_ids, np.arange(d.shape[0]), np.arange(d.shape[1]), drops=drops)
    return ranking.matrix_rank_block(run, rel.relevant_targets(1), rel.n_relevant(1), rel.self_index, ties=ties, threads=threads)


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 8 rows and no size floor: a 150-row matrix is 19 blocks shared by the threads."""
    monkeypatch.setattr(ranking, "BLOCK_ROWS", 8)
    monkeypatch.setattr(ranking, "THREAD_CELLS", 0)


@pytest.mark.parametrize("seed", range(4))
def test_two_threads_rank_as_a_stable_argsort(seed, small_blocks):
    rel, d = all_against_all(seed, dtype=np.float32 if seed % 2 else np.float64)
    one, two = rank(rel, d, 1), rank(rel, d, 2)
    np.testing.assert_array_equal(one.rel_ranks, two.rel_ranks)
    want = argsort_ranks(rel, d)
    for q, ranks in enumerate(want):
        assert two.rel_ranks[q, : len(ranks)].tolist() == ranks
        assert np.isinf(two.rel_ranks[q, len(ranks) :]).all()


@pytest.mark.parametrize("ties", ["expected", "optimistic", "pessimistic"])
def test_two_threads_keep_the_tie_modes(ties, small_blocks):
    rel, d = all_against_all(5, levels=3)
    one, two = rank(rel, d, 1, ties=ties), rank(rel, d, 2, ties=ties)
    np.testing.assert_array_equal(one.rel_ranks, two.rel_ranks)
    if ties == "expected":
        np.testing.assert_array_equal(one.group_start, two.group_start)
        np.testing.assert_array_equal(one.group_size, two.group_size)


def test_the_first_nan_cell_is_named_whatever_the_threads(small_blocks):
    rel, d = all_against_all(1)
    d[131, 7] = np.nan  # block 16
    d[42, 99] = np.nan  # block 5: the first in row order
    d[42, 120] = np.nan
    d[9, 3] = 0.5
    for threads in (1, 2, 3):
        with pytest.raises(InputError) as err:
            rank(rel, d, threads)
        assert err.value.line == 43
        assert "row 43 (query '42') column 100" in err.value.expected


def test_lenient_nan_cells_are_counted_once_each(small_blocks):
    rel, d = all_against_all(2)
    rng = np.random.default_rng(0)
    cells = rng.choice(d.size, 37, replace=False)
    d.ravel()[cells] = np.nan
    counts = []
    for threads in (1, 2):
        drops: Counter[str] = Counter()
        block = rank(rel, d, threads, drops=drops)
        counts.append(drops[ranking.NAN_DROPS])
        np.testing.assert_array_equal(block.rel_ranks, rank(rel, np.where(np.isnan(d), np.inf, d), 1).rel_ranks)
    assert counts == [37, 37]


def test_in_threads_raises_the_lowest_failing_index():
    done: list[int] = []

    def work(i: int) -> int:
        if i in (11, 4, 30):
            raise ValueError(f"index {i}")
        done.append(i)
        return i * i

    for threads in (1, 2, 4):
        done.clear()
        with pytest.raises(ValueError, match="index 4$"):
            ranking.in_threads(work, 40, threads)
        assert set(range(4)) <= set(done)  # every index below the failure ran
    assert ranking.in_threads(lambda i: i * i, 25, 2) == [i * i for i in range(25)]
    assert ranking.in_threads(lambda i: i, 0, 2) == []


def test_in_threads_never_leaves_a_slot_silently_empty():
    """A BaseException (SystemExit here) in whichever thread takes index 3 is
    raised, not swallowed with the thread, leaving out[3] at its initial 0."""
    import threading

    def work(i: int) -> int:
        if i == 3:
            raise SystemExit(f"stop at {i} in {threading.current_thread().name}")
        return 10 + i

    for threads in (1, 2, 3):
        with pytest.raises(SystemExit, match="stop at 3"):
            ranking.in_threads(work, 6, threads)


def ranks_row_by_row(item_row, smaller, equal, values, mode):
    """The plain way: :func:`ranking.ranks_from_counts` and a stable argsort, one row at a time."""
    ranks, start, size = (np.empty(item_row.size) for _ in range(3))
    for row in np.unique(item_row).tolist():
        part = np.flatnonzero(item_row == row)
        ranks[part] = ranking.ranks_from_counts(smaller[part], equal[part], values[part], mode)
        order = np.argsort(values[part], kind="stable")
        start[part], size[part] = smaller[part][order], equal[part][order]
    return ranks, start, size


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
    got = ranking.rows_ranks_from_counts(item_row, smaller, equal, values, mode)
    want = ranks_row_by_row(item_row, smaller, equal, values, mode)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
