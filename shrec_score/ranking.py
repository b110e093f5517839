"""Tie rules and ranks in one place (the rules: docs/ties.md; TREC's order is join.trec_order): a matrix row
ranked by distance, equal distances by the lower column, without the query's own column; tie groups."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from .errors import InputError
from .model import MatrixRun, RankedRun, tie_starts

if TYPE_CHECKING:
    from .measures import RankBlock

#: Matrix cells read at once looking for the first NaN cell of a matrix (the error path).
BLOCK_CELLS = 2_000_000

#: The drop counter of NaN matrix cells (lenient scoring).
NAN_DROPS = "NaN cells ranked last"


def _columns(run: MatrixRun, self_index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The column of each target index (-1: none), and each query's own column (-1: none)."""
    col_of_target = np.full(max(int(run.col_target.max(initial=-1)) + 1, int(self_index.max(initial=-1)) + 1, 1), -1, dtype=np.int64)
    col_of_target[run.col_target] = np.arange(run.col_target.size)
    return col_of_target, np.where(self_index >= 0, col_of_target[np.maximum(self_index, 0)], -1)


def _distances(run: MatrixRun, queries: np.ndarray) -> np.ndarray:
    """The rows of ``queries`` (the engine's chunk: it bounds the memory), float32 or float64; a NaN cell is an
    InputError, or under lenient scoring inf (counted)."""
    rows = run.row_of_query[queries]
    contiguous = rows.size and rows[-1] - rows[0] == rows.size - 1 and (np.diff(rows) == 1).all()
    dist = np.asarray(run.matrix[int(rows[0]) : int(rows[-1]) + 1] if contiguous else run.matrix[rows])
    if not (dist.dtype.kind == "f" and dist.dtype.itemsize in (4, 8)):
        dist = dist.astype(np.float64)
    if dist.size and np.isnan(dist.max(axis=1)).any():  # max is NaN where a row holds one
        nan = np.isnan(dist)
        if run.drops is None:
            raise _nan_error(run, int(rows[int(nan.any(axis=1).argmax())]))
        run.drops[NAN_DROPS] += int(nan.sum())
        dist = np.where(nan, dist.dtype.type(np.inf), dist)
    return dist


def _nan_error(run: MatrixRun, row: int) -> InputError:
    """The error naming the first NaN cell in row order, then column order, of the queries' rows up to ``row`` (which
    holds one): the same cell whichever block of queries or Dask task met one first."""
    earlier = np.unique(run.row_of_query)
    earlier = earlier[earlier <= row]
    step = max(1, BLOCK_CELLS // max(1, run.matrix.shape[1]))
    for a in range(0, earlier.size, step):
        nan = np.isnan(np.asarray(run.matrix[earlier[a : a + step]]))
        if nan.any():
            i = int(nan.any(axis=1).argmax())
            row, column = int(earlier[a + i]), int(nan[i].argmax())
            break
    query = run.query_ids[int(np.flatnonzero(run.row_of_query == row)[0])]
    where, line = run.matrix.located(row) if hasattr(run.matrix, "located") else (run.path, row + 1)  # a row-block store: its file
    return InputError(where, line, f"expected a number in every cell; row {row + 1} (query {query!r}) column {column + 1}", "NaN")


def matrix_to_ranked_run(
    run: MatrixRun, self_index: np.ndarray, queries: np.ndarray, *, ties: bool = False,
) -> RankedRun:
    """The ranked lists of a matrix run's ``queries`` (positions); ``ties``: with tie groups (equal distances)."""
    _, self_col = _columns(run, self_index[queries])  # every query's column (all-against-all) or none's
    dist = _distances(run, queries)
    order = np.argsort(dist, axis=1, kind="stable")
    if queries.size and self_col[0] >= 0:
        order = order[order != self_col[:, None]].reshape(queries.size, order.shape[1] - 1)
    offsets = np.arange(queries.size + 1, dtype=np.int64) * order.shape[1]
    starts = None
    if ties:  # groups of equal distances (-0.0 == 0.0)
        ranked = np.take_along_axis(dist, order, axis=1).ravel()
        starts = tie_starts(ranked, offsets)
    ids = [run.query_ids[i] for i in queries.tolist()]
    return RankedRun(run.name, ids, run.col_target[order].ravel(), offsets, drops=run.drops, tie_start=starts)


def drop_own(run: RankedRun, own: np.ndarray) -> RankedRun:
    """``run`` without each query's own item (``own[q]``: its index in the collection, or -1).

    >>> run = RankedRun("r", ["a", "b"], np.array([3, 0, 1, 1]), np.array([0, 2, 4]))
    >>> drop_own(run, np.array([0, -1])).targets.tolist()
    [3, 1, 1]
    """
    if not (np.asarray(own) >= 0).any():
        return run
    return keep_entries(run, run.targets != np.repeat(own, run.lengths()))


def keep_entries(run: RankedRun, keep: np.ndarray) -> RankedRun:
    """``run`` with the entries ``keep`` only: lists shrink, later entries move up, tie groups shrink without merging."""
    offsets = np.r_[0, np.cumsum(keep, dtype=np.int64)][run.offsets]  # the entries kept before each list's start
    ties = None if run.tie_start is None else tie_starts(tie_group_ids(run.tie_start, run.offsets)[keep], offsets)  # shrunk, none merged
    return replace(run, targets=run.targets[keep], offsets=offsets, tie_start=ties)


def score_groups(queries: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """A number per group of consecutive lines with one query and one score: one tie group."""
    new = np.ones(queries.size, dtype=bool)
    new[1:] = (queries[1:] != queries[:-1]) | (scores[1:] != scores[:-1])
    return np.cumsum(new)


def tie_group_ids(tie_start: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """A number per tie group, increasing along the CSR entries (0-based).

    >>> tie_group_ids(np.array([0, 0, 2, 0, 0]), np.array([0, 3, 5])).tolist()
    [0, 0, 1, 2, 2]
    """
    place = np.arange(tie_start.size) - np.repeat(offsets[:-1], np.diff(offsets))  # each entry's place in its list
    return np.cumsum(tie_start == place) - 1  # a group starts where its entries' start is


def arrange_ties(tie_start: np.ndarray, offsets: np.ndarray, gains: np.ndarray, mode: str) -> np.ndarray:
    """The permutation that puts, inside each tie group, higher gains first (``"optimistic"``) or last (``"pessimistic"``); equal gains keep their order.

    >>> arrange_ties(np.array([0, 0, 0, 3]), np.array([0, 4]), np.array([0, 2, 1, 5]), "optimistic").tolist()
    [1, 2, 0, 3]
    """
    key = np.asarray(gains, dtype=np.int64) * (-1 if mode == "optimistic" else 1)
    return np.lexsort((key, tie_group_ids(tie_start, offsets)))


def matrix_rank_block(
    run: MatrixRun, relevant: Sequence[np.ndarray], n_relevant: np.ndarray, self_index: np.ndarray, queries: np.ndarray,
    *, ties: str = "rule", width: int | None = None,
) -> RankBlock:
    """Ranks of the relevant items of a matrix run's ``queries`` (positions; the other arguments are every query's;
    docs/performance.md); ``width`` (default: the largest K) keeps every chunk's sums on the same columns."""
    from .measures import RankBlock

    n_q, relevant, n_relevant = queries.size, [relevant[i] for i in queries.tolist()], n_relevant[queries]
    col_of_target, self_col = _columns(run, self_index[queries])
    width = max(1, int(n_relevant.max(initial=0))) if width is None else width
    ranks, start, size = np.full((n_q, width), np.inf), None, None
    q, slot, r, group = _rank_rows(_distances(run, queries), relevant, col_of_target, self_col, ties)
    ranks[q, slot] = r
    if group is not None:
        start, size = np.zeros((n_q, width)), np.zeros((n_q, width))
        start[q, slot], size[q, slot] = group
    n_retrieved = np.full(n_q, run.matrix.shape[1], dtype=np.int64) - (self_col >= 0)
    return RankBlock(ranks, n_relevant, n_retrieved, group_start=start, group_size=size)


def equal_before(row: np.ndarray, values: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Per item (``values[i]`` at column ``cols[i]`` of ``row``): the cells equal to it in lower columns.

    >>> equal_before(np.array([0.5, 0.2, 0.5, 0.5]), np.array([0.5, 0.5]), np.array([2, 3])).tolist()
    [1, 2]
    """
    ordered = np.sort(values)
    cells = np.flatnonzero((row == ordered[:, None]).any(axis=0))
    keys = np.sort(np.searchsorted(ordered, row[cells]) * row.size + cells)
    first = np.searchsorted(ordered, values) * row.size
    return np.searchsorted(keys, first + cols) - np.searchsorted(keys, first)


def _rank_rows(
    dist: np.ndarray, relevant: Sequence[np.ndarray], col_of_target: np.ndarray, self_col: np.ndarray, ties: str,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray] | None]:
    """(query, slot, rank) of the relevant items of the rows ``dist``, ranks ascending; "expected": their tie groups."""
    n_items = np.fromiter(map(len, relevant), dtype=np.int64, count=len(relevant))
    item_row = np.repeat(np.arange(len(relevant)), n_items)
    item_col = col_of_target[np.concatenate(relevant)] if n_items.sum() else np.zeros(0, dtype=np.int64)  # one lookup
    own = self_col[item_row]  # its query's own column (all-against-all), else -1
    mine = (item_col == own) & (own >= 0)  # the query's own item leaves with its column (no column: none to leave)
    if mine.any():
        item_row, item_col, own = item_row[~mine], item_col[~mine], own[~mine]
        n_items = np.bincount(item_row, minlength=len(relevant))
    v = dist[item_row, item_col]
    ordered = np.sort(dist, axis=1)
    first = np.cumsum(n_items) - n_items
    smaller, equal, before = (np.zeros(item_row.size, dtype=np.int64) for _ in range(3))
    for i in np.flatnonzero(n_items).tolist():
        s = slice(first[i], first[i] + n_items[i])
        smaller[s] = np.searchsorted(ordered[i], v[s], side="left")
        equal[s] = np.searchsorted(ordered[i], v[s], side="right") - smaller[s]
        tied = np.flatnonzero(equal[s] > 1) + first[i]
        if ties == "rule" and tied.size:  # the lower-column rule matters inside a group of equal values only
            before[tied] = equal_before(dist[i], v[tied], item_col[tied])
    has_own = own >= 0
    if has_own.any():
        vs = dist[item_row, np.maximum(own, 0)]
        same = has_own & (vs == v)
        smaller -= has_own & (vs < v)
        equal -= same
        before -= same & (own < item_col)
    slot = np.arange(item_row.size) - first[item_row]
    if ties == "rule":
        r = smaller + before + 1
        return item_row, slot, r[np.lexsort((r, item_row))], None
    ranks, start, size = rows_ranks_from_counts(item_row, smaller, equal, v, ties)
    return item_row, slot, ranks, (start, size) if ties == "expected" else None


def rows_ranks_from_counts(
    item_row: np.ndarray, smaller: np.ndarray, equal: np.ndarray, values: np.ndarray, mode: str,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row's ranks of its relevant items, ascending, and each slot's tie group (smaller, equal), from the items'
    smaller and equal counts (``item_row`` non-decreasing): in a group the r relevant items take the last r places
    (``"pessimistic"``), else the first r.

    >>> rows_ranks_from_counts(np.array([0, 0, 0]), np.array([0, 2, 2]), np.array([1, 4, 4]), np.array([0.1, 0.5, 0.5]), "pessimistic")[0].tolist()
    [1.0, 5.0, 6.0]
    """
    order = np.lexsort((values, item_row))  # stable: equal values keep their order
    r, v, s, e = item_row[order], values[order], smaller[order], equal[order]
    gid = score_groups(r, v) - 1
    i = np.arange(v.size) - np.searchsorted(gid, gid)  # place within its group
    ranks = s + i + 1 + (e - np.bincount(gid)[gid] if mode == "pessimistic" else 0)  # ascending in each row either way
    return ranks.astype(np.float64), s.astype(np.float64), e.astype(np.float64)
