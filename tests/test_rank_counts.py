"""_kernels.rank_counts (the matrix ranking kernel) against its plain twin, a
stable argsort of each row, and against counts written out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from shrec_score import _kernels as k


def plain_counts(block: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """The three counts by direct comparison (a second, independent oracle)."""
    out = []
    for r, c in zip(rows, cols):
        row, v = block[r], block[r, c]
        out.append(((row < v).sum(), (row[:c] == v).sum(), (row == v).sum()))
    return np.asarray(out, dtype=np.int64).reshape(-1, 3).T


def check(block: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    got = k.rank_counts(block, rows, cols)
    want = k.rank_counts_reference(block, rows, cols)
    for g, w, p in zip(got, want, plain_counts(block, rows, cols)):
        np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(g, p)
    return got


def test_hand_example():
    # row 0: 0.5 0.2 0.5 0.1 0.5 ; row 1: -0.0 0.0 inf 3 inf
    block = np.array([[0.5, 0.2, 0.5, 0.1, 0.5], [-0.0, 0.0, np.inf, 3.0, np.inf]], dtype=np.float32)
    smaller, equal_lower, equal_all = k.rank_counts(block, np.array([0, 0, 0, 1, 1, 1]), np.array([4, 2, 1, 1, 4, 2]))
    # (0, 4): 0.2 and 0.1 smaller; 0.5 in columns 0 and 2 before it; three 0.5 in all
    # (0, 2): 2 smaller, column 0 before it; (0, 1): 0.1 smaller, alone
    # (1, 1): -0.0 == 0.0, so column 0 ties before it; (1, 4) and (1, 2): -0.0, 0.0, 3 smaller, the two infs tie
    assert smaller.tolist() == [2, 2, 1, 0, 3, 3]
    assert equal_lower.tolist() == [2, 1, 0, 1, 1, 0]
    assert equal_all.tolist() == [3, 3, 1, 2, 2, 2]


@pytest.mark.parametrize("path", ["binned", "sorted"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("seed", range(6))
def test_random_blocks_with_heavy_ties(seed, dtype, path, monkeypatch):
    """Both ways of counting (bins; a sort of the rows, taken when the items are many) on the same blocks."""
    rng = np.random.default_rng(seed)
    monkeypatch.setattr(k, "SORT_ABOVE", 10**9 if path == "sorted" else 0)
    if seed % 2:  # small slices: many rows per call cut across slices
        monkeypatch.setattr(k, "COUNT_CELLS", 512)
    for trial in range(12):
        n_rows, n_cols = int(rng.integers(1, 30)), int(rng.integers(1, 400))
        levels = [2, 5, 40, 10**6][trial % 4]
        block = (rng.integers(-levels, levels, (n_rows, n_cols)) / 7).astype(dtype)
        block[rng.random(block.shape) < 0.05] = np.inf
        block[rng.random(block.shape) < 0.03] = -np.inf
        block[rng.random(block.shape) < 0.05] = -0.0
        block[rng.random(block.shape) < 0.02] = np.finfo(dtype).max
        block[rng.random(block.shape) < 0.02] = np.finfo(dtype).tiny / 4  # subnormal
        if trial % 3 == 0:
            block[0] = 0.25  # one value in the whole row
        if trial % 5 == 1 and n_rows > 1:
            block[1] = np.inf
        n_items = int(rng.integers(0, n_rows * 6 + 1))
        rows = np.sort(rng.integers(0, n_rows, n_items))
        cols = rng.integers(0, n_cols, n_items)
        check(block, rows, cols)


@pytest.mark.parametrize("sort_above", [0, 8, 10**9])
def test_far_apart_values_and_skewed_rows(sort_above, monkeypatch):
    """Items spread over many orders of magnitude, outliers, one crowded bin: exact anyway."""
    monkeypatch.setattr(k, "SORT_ABOVE", sort_above)
    rng = np.random.default_rng(7)
    block = np.concatenate(
        [
            10.0 ** rng.uniform(-30, 30, (3, 2000)),
            np.where(rng.random((3, 2000)) < 0.99, 1.0 + rng.integers(0, 3, (3, 2000)) * 1e-7, 1e30),
            -(10.0 ** rng.uniform(-5, 5, (2, 2000))),
        ]
    )
    for dtype in (np.float32, np.float64):
        b = block.astype(dtype)
        rows = np.repeat(np.arange(b.shape[0]), 40)
        cols = rng.integers(0, b.shape[1], rows.size)
        check(b, rows, cols)


def test_position_in_a_stable_sort():
    """smaller + equal_lower is the item's 0-based position in a stable sort of its row."""
    rng = np.random.default_rng(11)
    block = rng.integers(0, 9, (20, 500)).astype(np.float32)
    rows = np.repeat(np.arange(20), 30)
    cols = rng.integers(0, 500, rows.size)
    smaller, equal_lower, _ = k.rank_counts(block, rows, cols)
    for r, c, pos in zip(rows, cols, smaller + equal_lower):
        assert np.flatnonzero(np.argsort(block[r], kind="stable") == c)[0] == pos


def test_empty_items_and_rows():
    block = np.ones((3, 4), dtype=np.float32)
    out = k.rank_counts(block, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    assert [x.size for x in out] == [0, 0, 0]
    out = k.rank_counts(block, np.array([2]), np.array([3]))
    assert [int(x[0]) for x in out] == [0, 3, 4]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_wide_rows_like_the_bench(dtype):
    """Rows of 20,000 values with 4 decimals (ties), 50 items a row: the many-bin case."""
    rng = np.random.default_rng(13)
    block = np.round(rng.random((4, 20_000)), 4).astype(dtype)
    block[:, :50] -= 0.35  # the items' class: the smallest distances, as in a good run
    rows = np.repeat(np.arange(4), 50)
    cols = np.tile(np.arange(50), 4)
    cols[::7] = rng.integers(50, 20_000, cols[::7].size)  # and some anywhere in the row
    smaller, _, equal_all = check(block, rows, cols)
    assert smaller.max() > 1000 and equal_all.max() > 1


def test_strided_and_fortran_blocks():
    """A view with strides (every other column) or a Fortran-ordered block: same counts as a C copy."""
    rng = np.random.default_rng(17)
    base = np.round(rng.random((12, 600)), 2)
    rows = np.repeat(np.arange(12), 9)
    cols = rng.integers(0, 300, rows.size)
    want = k.rank_counts(np.ascontiguousarray(base[:, ::2]), rows, cols)
    for block in (base[:, ::2], np.asfortranarray(base[:, ::2])):
        for g, w in zip(check(block, rows, cols), want):
            np.testing.assert_array_equal(g, w)
