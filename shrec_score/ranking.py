"""Tie rules, in one place.

* Ranked-list files: the order of the lines is the ranking.
* Dissimilarity matrices: a row is sorted by distance ascending; equal
  distances are broken by the lower column (target) position (a stable sort).
  In all-against-all mode the query's own column is removed first.
* TREC run files: as trec_eval ranks them: score descending (parsed as a
  double), equal scores by target id descending (byte order), the rank column
  ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ._kernels import byte_order_rank, rank_of  # noqa: F401  (re-exported)
from .errors import InputError
from .model import MatrixRun, RankedRun, tie_starts

if TYPE_CHECKING:
    from .measures import RankBlock

#: Matrix cells ranked at once (bounds memory: about 16 bytes per cell).
BLOCK_CELLS = 2_000_000


def matrix_blocks(
    run: MatrixRun, self_col: np.ndarray, *, block_cells: int = BLOCK_CELLS, ties: bool = False
) -> Iterator[tuple[slice, np.ndarray, np.ndarray | None]]:
    """Ranked target indices for consecutive blocks of queries.

    Yields ``(query_slice, targets, equal)`` where ``targets`` has shape
    (n_block, n_cols) or (n_block, n_cols - 1) when every query of the block
    has its own column (``self_col >= 0``), which is removed.  ``equal``
    (only with ``ties``, else None): bool of the same shape, the entry's
    distance equals the one before it in its row (a tie group goes on).
    """
    n_q = len(run.query_ids)
    n_cols = run.matrix.shape[1]
    step = max(1, block_cells // max(1, n_cols))
    for a in range(0, n_q, step):
        b = min(n_q, a + step)
        rows = run.row_of_query[a:b]
        dist = np.array(run.matrix[rows], dtype=np.float64 if run.matrix.dtype.kind != "f" else run.matrix.dtype)
        bad = np.isnan(dist)
        if run.drops is not None and bad.any():
            run.drops["NaN cells ranked last"] += int(bad.sum())
            dist[bad] = np.inf
            bad[:] = False
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise InputError(run.path, int(rows[r]) + 1, f"expected a number in every cell; row {int(rows[r]) + 1} (query {run.query_ids[a + r]!r}) column {c + 1}", "NaN")
        order = np.argsort(dist, axis=1, kind="stable")
        own = self_col[a:b]
        if (own >= 0).any():
            if not (own >= 0).all():
                raise ValueError("a block mixes queries with and without their own column")
            keep = order != own[:, None]
            order = order[keep].reshape(b - a, n_cols - 1)
        equal = None
        if ties:
            ranked = np.take_along_axis(dist, order, axis=1) + 0.0  # -0.0 == 0.0
            equal = np.zeros(order.shape, dtype=bool)
            equal[:, 1:] = ranked[:, 1:] == ranked[:, :-1]
        yield slice(a, b), run.col_target[order], equal


def matrix_to_ranked_run(run: MatrixRun, self_index: np.ndarray, *, ties: bool = False) -> RankedRun:
    """The ranked lists of a matrix run (all queries), by the matrix tie rule;
    with ``ties`` also its tie groups (equal distances, :attr:`RankedRun.tie_start`)."""
    col_of_target = np.full(int(run.col_target.max(initial=-1)) + 1, -1, dtype=np.int64)
    col_of_target[run.col_target] = np.arange(run.col_target.size)
    self_col = np.where(self_index >= 0, col_of_target[np.maximum(self_index, 0)], -1)
    if (self_col >= 0).any() and not (self_col >= 0).all():
        raise ValueError("all-against-all needs every query among the columns")
    parts, equal = [], []
    for _, targets, eq in matrix_blocks(run, self_col, ties=ties):
        parts.append(targets.ravel())
        if eq is not None:
            equal.append(eq.ravel())
    n_q = len(run.query_ids)
    width = run.matrix.shape[1] - (1 if n_q and self_col[0] >= 0 else 0)
    offsets = np.arange(n_q + 1, dtype=np.int64) * width
    targets = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    out = RankedRun(run.name, list(run.query_ids), targets, offsets, [run.path], drops=run.drops)
    if ties:
        out.tie_start = tie_starts(np.concatenate(equal) if equal else np.zeros(0, dtype=bool), offsets)
    return out


def drop_own_items(targets: np.ndarray, query_of: np.ndarray, own: np.ndarray) -> np.ndarray:
    """Which entries to keep: every one but the query's own item (all-against-all).

    ``targets[i]`` is ranked for query ``query_of[i]``; ``own[q]`` is query
    q's index in the collection, or -1 when it is not a target (separate
    queries, qrels).  The one place where the query's own item leaves its
    ranked list, for every run format (matrices drop the own column in
    :func:`matrix_blocks` and :func:`matrix_rank_block`, by the same rule).

    >>> drop_own_items(np.array([3, 0, 1, 1]), np.array([0, 0, 1, 1]), np.array([0, -1])).tolist()
    [True, False, True, True]
    """
    return np.asarray(targets) != np.asarray(own)[query_of]


def drop_own(run: RankedRun, own: np.ndarray) -> RankedRun:
    """``run`` without each query's own item (see :func:`drop_own_items`);
    ``own[i]`` belongs to ``run.query_ids[i]``."""
    if not (np.asarray(own) >= 0).any():
        return run
    n_q = len(run.query_ids)
    query_of = np.repeat(np.arange(n_q), run.lengths())
    keep = drop_own_items(run.targets, query_of, own)
    offsets = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(np.bincount(query_of[keep], minlength=n_q), out=offsets[1:])
    ties = None if run.tie_start is None else keep_ties(run.tie_start, run.offsets, keep, offsets)
    return RankedRun(run.name, run.query_ids, run.targets[keep], offsets, run.sources, drops=run.drops, tie_start=ties)


def score_groups(queries: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """A number per group of consecutive lines with one query and one score
    (lines in ranked order): equal numbers, one tie group (:func:`tie_starts`)."""
    new = np.ones(queries.size, dtype=bool)
    new[1:] = (queries[1:] != queries[:-1]) | (scores[1:] != scores[:-1])
    return np.cumsum(new)

def tie_group_ids(tie_start: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """A number per tie group, increasing along the CSR entries (0-based).

    >>> tie_group_ids(np.array([0, 0, 2, 0, 0]), np.array([0, 3, 5])).tolist()
    [0, 0, 1, 2, 2]
    """
    n = tie_start.size
    new = np.ones(n, dtype=bool)
    new[1:] = tie_start[1:] != tie_start[:-1]
    firsts = offsets[:-1]
    new[firsts[firsts < n]] = True
    return np.cumsum(new) - 1


def keep_ties(tie_start: np.ndarray, offsets: np.ndarray, keep: np.ndarray, new_offsets: np.ndarray) -> np.ndarray:
    """The tie groups of the entries ``keep`` leaves (lists ``new_offsets``):
    the groups shrink, entries move up, no two groups merge."""
    g = tie_group_ids(tie_start, offsets)[keep]
    equal = np.zeros(g.size, dtype=bool)
    equal[1:] = g[1:] == g[:-1]
    return tie_starts(equal, new_offsets)


def tie_group_sizes(tie_start: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Per entry, the number of entries of its tie group."""
    g = tie_group_ids(tie_start, offsets)
    return np.bincount(g)[g] if g.size else np.zeros(0, dtype=np.int64)


def arrange_ties(tie_start: np.ndarray, offsets: np.ndarray, gains: np.ndarray, mode: str) -> np.ndarray:
    """The permutation of the CSR entries that puts, inside each tie group,
    higher gains first (``"optimistic"``) or last (``"pessimistic"``); equal
    gains keep their order.  Nothing moves across groups.

    >>> arrange_ties(np.array([0, 0, 0, 3]), np.array([0, 4]), np.array([0, 2, 1, 5]), "optimistic").tolist()
    [1, 2, 0, 3]
    """
    g = tie_group_ids(tie_start, offsets)
    key = -np.asarray(gains, dtype=np.int64) if mode == "optimistic" else np.asarray(gains, dtype=np.int64)
    return np.lexsort((key, g))


def trec_order(queries: np.ndarray, scores: np.ndarray, doc_rank: Callable[[np.ndarray | None], np.ndarray]) -> np.ndarray | None:
    """Order of TREC run lines as trec_eval ranks them, or None when the file is in that order.

    Sorted by query (ascending code), then score descending, then target id
    descending.  ``doc_rank(pos)`` is a callable returning, for the lines at
    positions ``pos`` (all lines when None), ranks of their target ids in
    ascending byte order, comparable among those lines; it is only asked
    for when scores tie, and then only for the tied lines.
    A file grouped by query with scores non-increasing (the usual case) is
    fixed up inside its runs of equal scores only; anything else is sorted.
    """
    same = queries[1:] == queries[:-1]
    if not (queries[1:] >= queries[:-1]).all() or (same & (scores[1:] > scores[:-1])).any():
        return np.lexsort((-doc_rank(None), -scores, queries))
    tied = same & (scores[1:] == scores[:-1])
    if not tied.any():
        return None
    # positions in runs of equal (query, score): sort each run by target id descending
    in_run = np.zeros(queries.size, dtype=bool)
    in_run[:-1] |= tied
    in_run[1:] |= tied
    pos = np.flatnonzero(in_run)
    rank = np.zeros(queries.size, dtype=np.int64)
    rank[pos] = doc_rank(pos)
    if (rank[:-1][tied] > rank[1:][tied]).all():
        return None
    # a run of ties starts at a position not tied to the one before it
    starts = np.ones(pos.size, dtype=bool)
    inner = pos > 0
    starts[inner] = ~tied[pos[inner] - 1]
    run_id = np.cumsum(starts)
    order = np.arange(queries.size)
    order[pos] = pos[np.lexsort((-rank[pos], run_id))]
    return order


#: Rows of a matrix ranked at once by :func:`matrix_rank_block`.
BLOCK_ROWS = 256
#: Above this many comparisons a row with tied relevant distances is argsorted instead.
TIE_CELLS = 200_000


def matrix_rank_block(
    run: MatrixRun, relevant: Sequence[np.ndarray], n_relevant: np.ndarray, self_index: np.ndarray, *, ties: str = "rule"
) -> RankBlock:
    """Ranks of the relevant items of every query of a matrix run, without ranking everything.

    Every binary measure depends only on where the relevant items land, so a
    row needs the ranks of its relevant columns: each block of rows is sorted
    by value once (``np.sort``, much cheaper than ``argsort``), and the rank of
    a relevant column c with distance v is 1 + (number of distances < v)
    from ``searchsorted``.  The tie rule (equal distances: lower column first)
    is kept exactly: a tied relevant item adds the number of equal cells in
    lower columns, counted for the whole block at once (:func:`_block_ties`;
    row by row, or by a stable argsort of the row, where that cannot be
    used).  The query's own column (all-against-all) is
    taken out of the ranks.  Memory: one block of rows at a time; pages of a
    memory-mapped matrix are released after their block.

    Every relevant item is located by two counts in its row (the own
    column left out): ``smaller`` cells and ``equal`` cells (itself
    included).  ``ties`` other than ``"rule"`` need nothing more (see
    :func:`ranks_from_counts`); ``"rule"`` adds the equal cells in lower
    columns.

    Returns a :class:`~shrec_score.measures.RankBlock` (with ``ties="expected"``
    carrying each item's tie group, ``group_start`` and ``group_size``).
    """
    from .measures import RankBlock

    m = run.matrix
    n_q = len(run.query_ids)
    n_cols = m.shape[1]
    col_of_target = np.full(max(int(run.col_target.max(initial=-1)) + 1, int(self_index.max(initial=-1)) + 1, 1), -1, dtype=np.int64)
    col_of_target[run.col_target] = np.arange(n_cols)
    self_col = np.where(self_index >= 0, col_of_target[np.maximum(self_index, 0)], -1)
    width = max(1, int(n_relevant.max(initial=0)))
    ranks = np.full((n_q, width), np.inf)
    groups = (np.zeros((n_q, width)), np.zeros((n_q, width))) if ties == "expected" else None
    table = np.full(1 << _HASH_BITS, -1, dtype=np.int64)
    starts = list(range(0, n_q, BLOCK_ROWS))

    def prepare(a: int) -> tuple[int, int, np.ndarray, np.ndarray, np.ndarray]:
        """Copy, normalise and sort one block of rows (numpy releases the GIL here)."""
        b = min(n_q, a + BLOCK_ROWS)
        rows = run.row_of_query[a:b]
        contiguous = rows.size and rows[-1] - rows[0] == rows.size - 1 and (np.diff(rows) == 1).all()
        raw = m[int(rows[0]) : int(rows[-1]) + 1] if contiguous else m[rows]
        dist = np.asarray(raw)
        if dist.dtype.kind != "f" or dist.dtype.itemsize not in (4, 8):
            dist = dist.astype(np.float64)
        dist = dist + dist.dtype.type(0)  # a copy, and -0.0 becomes 0.0 (equal values, equal bits)
        if run.drops is not None:
            nan = np.isnan(dist)
            if nan.any():
                run.drops["NaN cells ranked last"] += int(nan.sum())
                dist[nan] = np.inf
        return a, b, rows, dist, np.sort(dist, axis=1)

    # a helper thread prepares block n + 1 while this one locates the items of block n
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(prepare, starts[0]) if starts else None
        for k in range(len(starts)):
            assert pending is not None  # one pending block per start, by construction
            a, b, rows, dist, ordered = pending.result()
            pending = pool.submit(prepare, starts[k + 1]) if k + 1 < len(starts) else None
            if ties == "rule":
                _rank_rows(run, a, b, rows, dist, ordered, relevant, col_of_target, self_col, ranks, table)
            else:
                _rank_rows_ties(run, a, b, rows, dist, ordered, relevant, col_of_target, self_col, ranks, groups, ties)
            if run.owned:  # never madvise memory the caller owns
                _release(m, rows)
    n_retrieved = np.full(n_q, n_cols, dtype=np.int64) - (self_col >= 0)
    if groups is not None:
        return RankBlock(ranks, n_relevant, n_retrieved, group_start=groups[0], group_size=groups[1])
    return RankBlock(ranks, n_relevant, n_retrieved)


def _check_nan(run: MatrixRun, a: int, rows: np.ndarray, dist: np.ndarray, ordered: np.ndarray) -> None:
    if dist.size:
        bad = np.isnan(ordered[:, -1])  # NaN sorts last
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            c = int(np.flatnonzero(np.isnan(dist[r]))[0])
            raise InputError(run.path, int(rows[r]) + 1, f"expected a number in every cell; row {int(rows[r]) + 1} (query {run.query_ids[a + r]!r}) column {c + 1}", "NaN")


def relevant_counts(dist_row: np.ndarray, ordered_row: np.ndarray, cols: np.ndarray, own: int) -> tuple[np.ndarray, np.ndarray]:
    """The two counts that place each relevant column ``cols`` of a row:
    cells with a smaller distance and cells with an equal one (itself
    included), the own column ``own`` (>= 0, all-against-all) left out.
    ``ordered_row`` is the row sorted.  Every tie mode is a function of
    these counts (:func:`ranks_from_counts`); the rule mode adds the equal
    cells in lower columns.
    """
    v = dist_row[cols]
    n_cols = dist_row.size
    bounds = np.searchsorted(ordered_row, np.concatenate([v, np.nextafter(v, v.dtype.type(np.inf))]))
    smaller = bounds[: v.size]
    equal = np.where(v == np.inf, n_cols, bounds[v.size :]) - smaller
    if own >= 0:
        vs = dist_row[own]
        smaller = smaller - (vs < v)
        equal = equal - (vs == v)
    return smaller, equal


def ranks_from_counts(smaller: np.ndarray, equal: np.ndarray, values: np.ndarray, mode: str) -> np.ndarray:
    """1-based ranks of relevant items from their counts (:func:`relevant_counts`),
    ascending: inside a tie group (one value) the r relevant items take the
    first r places (``"optimistic"``, also used as the order of ``"expected"``)
    or the last r (``"pessimistic"``).

    >>> ranks_from_counts(np.array([0, 2, 2]), np.array([1, 4, 4]), np.array([0.1, 0.5, 0.5]), "pessimistic").tolist()
    [1, 5, 6]
    """
    order = np.argsort(values, kind="stable")
    v, s, e = values[order], smaller[order], equal[order]
    new = np.ones(v.size, dtype=bool)
    new[1:] = v[1:] != v[:-1]
    gid = np.cumsum(new) - 1
    first = np.flatnonzero(new)
    i = np.arange(v.size) - first[gid]
    if mode == "pessimistic":
        r = np.bincount(gid)[gid]
        return np.sort(s + e - r + i + 1)
    return s + i + 1  # sorted: groups by value, places within them


def _rank_rows_ties(
    run: MatrixRun,
    a: int,
    b: int,
    rows: np.ndarray,
    dist: np.ndarray,
    ordered: np.ndarray,
    relevant: Sequence[np.ndarray],
    col_of_target: np.ndarray,
    self_col: np.ndarray,
    ranks: np.ndarray,
    groups: tuple[np.ndarray, np.ndarray] | None,
    mode: str,
) -> None:
    """:func:`_rank_rows` for the tie modes other than the rule, from the two counts."""
    _check_nan(run, a, rows, dist, ordered)
    for i in range(b - a):
        cols = col_of_target[relevant[a + i]]
        if cols.size == 0:
            continue
        q = a + i
        smaller, equal = relevant_counts(dist[i], ordered[i], cols, int(self_col[q]))
        v = dist[i][cols]
        ranks[q, : cols.size] = ranks_from_counts(smaller, equal, v, mode)
        if groups is not None:
            order = np.argsort(v, kind="stable")
            groups[0][q, : cols.size] = smaller[order]
            groups[1][q, : cols.size] = equal[order]


def _rank_rows(
    run: MatrixRun,
    a: int,
    b: int,
    rows: np.ndarray,
    dist: np.ndarray,
    ordered: np.ndarray,
    relevant: Sequence[np.ndarray],
    col_of_target: np.ndarray,
    self_col: np.ndarray,
    ranks: np.ndarray,
    table: np.ndarray,
) -> None:
    """Ranks of the relevant items of rows a..b (see :func:`matrix_rank_block`).

    Per row: 1 + the number of smaller distances (``searchsorted`` in the
    sorted row).  The items whose distance is tied with other cells then
    get, for the whole block at once, the number of equal cells in lower
    columns (:func:`_block_ties`); the query's own column is taken out last.
    """
    n_cols = dist.shape[1]
    bits = dist.view(np.uint32 if dist.dtype.itemsize == 4 else np.uint64)
    if dist.size:
        bad = np.isnan(ordered[:, -1])  # NaN sorts last
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            c = int(np.flatnonzero(np.isnan(dist[r]))[0])
            raise InputError(run.path, int(rows[r]) + 1, f"expected a number in every cell; row {int(rows[r]) + 1} (query {run.query_ids[a + r]!r}) column {c + 1}", "NaN")
    lists = []  # per row with relevant items: (row in block, cols, values, ranks so far, tied items)
    for i in range(b - a):
        cols = col_of_target[relevant[a + i]]
        if cols.size == 0:
            continue
        v = dist[i][cols]
        # one search for both bounds: the first cell >= v and the first cell > v
        bounds = np.searchsorted(ordered[i], np.concatenate([v, np.nextafter(v, v.dtype.type(np.inf))]))
        left = bounds[: v.size]
        right = np.where(v == np.inf, n_cols, bounds[v.size :])
        lists.append((i, cols, v, left + 1, np.flatnonzero(right - left > 1)))
    tied_lists = [x for x in lists if x[4].size]
    if tied_lists:
        t_row = np.concatenate([np.full(t.size, i) for i, _, _, _, t in tied_lists])
        t_val = np.concatenate([v[t] for _, _, v, _, t in tied_lists])
        t_col = np.concatenate([cols[t] for _, cols, _, _, t in tied_lists])
        extra = _block_ties(bits, t_row, t_val.view(bits.dtype), t_col)
        k = 0
        for i, cols, v, r_q, t in tied_lists:
            if extra is not None:
                r_q[t] += extra[k : k + t.size]
                k += t.size
                continue
            row_extra = _equal_in_lower_columns(dist[i], bits[i], v[t], cols[t], table)
            if row_extra is None:  # hash collision or massive ties: a stable sort of the row
                inv = np.empty(n_cols, dtype=np.int64)
                inv[np.argsort(dist[i], kind="stable")] = np.arange(n_cols)
                r_q[:] = inv[cols] + 1
            else:
                r_q[t] += row_extra
    for i, cols, v, r_q, _ in lists:
        q = a + i
        own = int(self_col[q])
        if own >= 0:
            vs = dist[i][own]
            r_q -= (vs < v) | ((vs == v) & (own < cols))
        r_q.sort()
        ranks[q, : r_q.size] = r_q


def _block_ties(bits: np.ndarray, t_row: np.ndarray, t_bits: np.ndarray, t_col: np.ndarray) -> np.ndarray | None:
    """For each tied item (row ``t_row[k]`` of the block, value bits
    ``t_bits[k]``, column ``t_col[k]``): how many cells of its row hold the
    same value in a lower column (the tie rule), for a block of rows at once.

    Each (row, value) pair is a 64-bit key: the row above the bits for
    float32 (exact), the bits xor-ed with a mix of the row for float64 (a
    match is then confirmed on row and bits).  One pass over the block's
    cells sets apart, by a one-hash bitmap of about 32 slots per item, the
    few cells that may hold a tied value of their row; those are looked up
    among the sorted keys and kept on an exact match, so the counts are
    exact whatever collides.  None only when two different float64 pairs
    share a key (the caller then settles the rows one by one).  One set of
    numpy calls per block instead of one per row.
    """
    n_rows, n_cols = bits.shape
    dt = bits.dtype.type
    width = 8 * bits.dtype.itemsize
    mult = _MULT32 if width == 32 else _MULT64
    salt = np.arange(n_rows, dtype=bits.dtype) * dt(0x9E3779B1 if width == 32 else 0x9E3779B97F4A7C15)
    hb = int(min(22, max(10, np.ceil(np.log2(32 * max(1, t_row.size))))))
    shift = dt(width - hb)
    flags = np.zeros(1 << hb, dtype=bool)
    flags[((t_bits ^ salt[t_row]) * mult) >> shift] = True
    cand = np.flatnonzero(flags[((bits ^ salt[:, None]) * mult) >> shift])  # cells that may hold a tied value
    crow, ccol = np.divmod(cand, n_cols)
    cbits = bits.ravel()[cand].astype(np.uint64)
    t_bits64 = t_bits.astype(np.uint64)
    if width == 32:
        t_key = (t_row.astype(np.uint64) << np.uint64(32)) | t_bits64
        c_key = (crow.astype(np.uint64) << np.uint64(32)) | cbits
    else:
        t_key = t_bits64 ^ (t_row.astype(np.uint64) * _MULT64)
        c_key = cbits ^ (crow.astype(np.uint64) * _MULT64)
    keys, first, pair_id = np.unique(t_key, return_index=True, return_inverse=True)
    pair_id = pair_id.ravel()
    if width != 32 and not ((t_row == t_row[first][pair_id]) & (t_bits64 == t_bits64[first][pair_id])).all():
        return None  # two different float64 pairs with one key
    pos = np.minimum(np.searchsorted(keys, c_key), keys.size - 1)
    hit = keys[pos] == c_key
    if width != 32:
        hit &= (crow == t_row[first][pos]) & (cbits == t_bits64[first][pos])
    cells = pos[hit].astype(np.int64) * n_cols + ccol[hit]  # sorted by (pair, column)
    cells.sort()
    own = pair_id.astype(np.int64) * n_cols
    at = np.searchsorted(cells, np.concatenate([own + t_col, own]))
    return at[: t_row.size] - at[t_row.size :]


_HASH_BITS = 16


_MULT32 = np.uint32(2654435761)
_MULT64 = np.uint64(11400714819323198485)


def _slots(x: np.ndarray) -> np.ndarray:
    """Multiplicative hash of float bits into 2**_HASH_BITS slots."""
    if x.dtype == np.uint32:
        return (x * _MULT32) >> np.uint32(32 - _HASH_BITS)
    return (x * _MULT64) >> np.uint64(64 - _HASH_BITS)


def _equal_in_lower_columns(d: np.ndarray, bits: np.ndarray, vt: np.ndarray, ct: np.ndarray, table: np.ndarray) -> np.ndarray | None:
    """For each tied relevant item (value vt[k], column ct[k]): how many cells of
    the row hold the same value in a lower column (the tie rule).

    The columns holding a tied value are found with a multiplicative hash of
    the value's bits into ``table`` (one gather over the row, exact bit check
    after), not by sorting.  Items with equal values share a slot's owner.
    Returns None when two different tied values share a slot or the tied
    cells are too many; the caller then sorts the row.
    """
    vbits = vt.view(bits.dtype)
    slots = _slots(vbits)
    n = vt.size
    table[slots] = np.arange(n)
    try:
        owner = table[slots]  # items with equal values get the same owner
        if (vbits[owner] != vbits).any():
            return None  # two different values in one slot
        found = table[_slots(bits)]
    finally:
        table[slots] = -1
    cand = np.flatnonzero(found >= 0)
    vidx = found[cand]
    exact = bits[cand] == vbits[vidx]
    cand, vidx = cand[exact], vidx[exact]
    if cand.size > TIE_CELLS // 8:
        return None
    n_cols = d.size
    keys = vidx * n_cols + cand  # sorted by (owner, column): cand ascends within an owner
    keys.sort()
    pos = np.searchsorted(keys, np.concatenate([owner * n_cols + ct, owner * n_cols]))
    return pos[:n] - pos[n:]


def _release(m: np.ndarray, rows: np.ndarray) -> None:
    """Give the pages of rows already ranked back to the OS (read-only memory maps
    the reader opened itself: MADV_DONTNEED drops clean pages, re-read on demand)."""
    import mmap

    mm = getattr(m, "_mmap", None)
    if mm is None or not hasattr(mm, "madvise"):
        base = getattr(m, "base", None)
        mm = base if isinstance(base, mmap.mmap) else None
    if mm is None or not hasattr(mm, "madvise") or not len(rows) or getattr(m, "mode", "r") != "r":
        return
    try:
        offset = getattr(m, "offset", 0) or 0
        row_bytes = m.shape[1] * m.dtype.itemsize
        start = offset + int(rows.min()) * row_bytes
        end = offset + (int(rows.max()) + 1) * row_bytes
        page = mmap.PAGESIZE
        start -= start % page
        mm.madvise(mmap.MADV_DONTNEED, start, min(end, len(mm)) - start)
    except (OSError, ValueError):
        pass
