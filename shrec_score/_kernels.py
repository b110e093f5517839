"""Low-level array kernels, each beside a plain reference implementation.

The fast paths of the readers and the ranking step use these few tricks:
64-bit mixing of keys, a bitmap filter in front of a binary search, packing
short ids into sortable 64-bit integers (and hashing long ones), and a
hash-first check for repeated pairs.  Each ``fast`` function has a ``*_reference`` twin written the obvious
way; ``tests/test_kernels.py`` compares them on random and adversarial
inputs.  docs/performance.md says what each one gains.

This module imports nothing from the package: it is the bottom layer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Multiplier of 64-bit mixes (2**64 / golden ratio, odd: a bijection).
MIX64 = np.uint64(0x9E3779B97F4A7C15)
#: Second multiplier of (row, key) mixes: odd, so that for one row the mix is one-to-one in the key.
MIX_ROW = np.uint64(0xC2B2AE3D27D4EB4F)


# -- lookup of int64 keys ------------------------------------------------------


def lookup(keys: np.ndarray, sorted_keys: np.ndarray, values: np.ndarray, missing: Any) -> np.ndarray:
    """``values[i]`` for each key equal to ``sorted_keys[i]``, ``missing`` for the others.

    ``sorted_keys``: int64, ascending, distinct.  A one-hash bitmap of about
    32 slots per sorted key first rules out most keys that are absent (a
    random binary search costs a cache miss per step); the rest are
    confirmed by ``searchsorted`` and equality, so the answer is exact.

    >>> lookup(np.array([5, 7, 9]), np.array([1, 7]), np.array([10, 70]), -1).tolist()
    [-1, 70, -1]
    """
    out = np.full(keys.shape, missing, dtype=values.dtype)
    if sorted_keys.size == 0 or keys.size == 0:
        return out
    bits = int(min(24, max(10, np.ceil(np.log2(sorted_keys.size * 32)))))
    drop = np.uint64(64 - bits)
    table = np.zeros(1 << bits, dtype=bool)
    table[(sorted_keys.view(np.uint64) * MIX64) >> drop] = True
    maybe = np.flatnonzero(table[(keys.view(np.uint64) * MIX64) >> drop])
    pos = np.minimum(np.searchsorted(sorted_keys, keys[maybe]), sorted_keys.size - 1)
    hit = sorted_keys[pos] == keys[maybe]
    out[maybe[hit]] = values[pos[hit]]
    return out


def lookup_reference(keys: np.ndarray, sorted_keys: np.ndarray, values: np.ndarray, missing: Any) -> np.ndarray:
    """:func:`lookup` with a dictionary."""
    table = dict(zip(sorted_keys.tolist(), values.tolist()))
    return np.asarray([table.get(k, missing) for k in keys.tolist()], dtype=values.dtype).reshape(keys.shape)


def isin(keys: np.ndarray, among: np.ndarray) -> np.ndarray:
    """Bool per int64 key: whether it is one of ``among`` (any order, repeats allowed).

    ``np.isin`` for 64-bit keys spread over a wide range (there it sorts the
    keys and ``among`` together): ``among`` is sorted alone and each key goes
    through :func:`lookup`'s bitmap, so only the few keys that may be members
    are binary-searched.  On 500,000 (query, target) keys against 25,000
    judgments: 4 ms against 42-60 ms.

    >>> isin(np.array([5, 7, 9]), np.array([9, 1, 9])).tolist()
    [False, False, True]
    """
    keys = np.asarray(keys, dtype=np.int64)
    ordered = np.sort(np.asarray(among, dtype=np.int64))
    return lookup(keys, ordered, np.ones(ordered.size, dtype=bool), False)


def isin_reference(keys: np.ndarray, among: np.ndarray) -> np.ndarray:
    """:func:`isin` with a Python set."""
    members = set(np.asarray(among).tolist())
    return np.asarray([k in members for k in np.asarray(keys).tolist()], dtype=bool).reshape(np.shape(keys))


# -- (row, key) mixes and repeated pairs ---------------------------------------------


def mix(rows: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """A 64-bit mix of (row, key) pairs, one-to-one in the key for a fixed row."""
    return np.asarray(keys, dtype=np.int64).view(np.uint64) * MIX64 + np.asarray(rows).astype(np.uint64) * MIX_ROW


def has_repeats(rows: np.ndarray, keys: np.ndarray, lens: np.ndarray | None = None) -> bool:
    """Whether a (row, key) pair occurs twice.

    With ``lens`` (the pairs come row by row, ``lens`` pairs each) and rows of
    one length, as most runs have: each row's 32-bit hashes are sorted on
    their own (small sorts that stay in cache); a row where two hashes are
    equal is settled on its keys.  Otherwise a sort of one 64-bit mix per
    pair finds candidates; only when two mixes are equal is it settled on
    the pairs themselves.  Exact either way.

    >>> has_repeats(np.array([0, 0, 1]), np.array([4, 5, 4]))
    False
    >>> has_repeats(np.array([0, 0, 1]), np.array([4, 4, 5]))
    True
    """
    keys = np.asarray(keys, dtype=np.int64)
    rows = np.asarray(rows, dtype=np.int64)
    if lens is not None and lens.size and int(lens[0]) > 1 and (lens == lens[0]).all():
        width = int(lens[0])
        h = ((keys.view(np.uint64) * MIX64) >> np.uint64(32)).astype(np.uint32).reshape(lens.size, width)
        h.sort(axis=1)
        suspects = np.flatnonzero((h[:, 1:] == h[:, :-1]).any(axis=1))
        return any(np.unique(keys[i * width : (i + 1) * width]).size < width for i in suspects.tolist())
    mixed = mix(rows, keys)
    mixed.sort()
    if not (mixed[1:] == mixed[:-1]).any():
        return False
    order = np.lexsort((keys, rows))
    r, c = rows[order], keys[order]
    return bool(((r[1:] == r[:-1]) & (c[1:] == c[:-1])).any())


def has_repeats_reference(rows: np.ndarray, keys: np.ndarray) -> bool:
    """:func:`has_repeats` with a set of tuples."""
    pairs = list(zip(np.asarray(rows).tolist(), np.asarray(keys).tolist()))
    return len(set(pairs)) < len(pairs)


#: Masks of the n low bytes of a uint64, n = 0 to 8 (see :func:`hash_ids`).
_LOW_BYTES = np.array([0] + [(1 << (8 * n)) - 1 for n in range(1, 9)], dtype=np.uint64)


# -- ids packed into 64-bit keys ----------------------------------------------------


def _utf8_layout(ids: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The bytes of a pyarrow string array's ids, each id's start in them and
    its length; None for another type or a null."""
    import pyarrow as pa

    if not pa.types.is_string(ids.type) or ids.null_count:
        return None
    bufs = ids.buffers()
    offsets = np.frombuffer(bufs[1], dtype=np.int32, count=len(ids) + 1, offset=ids.offset * 4)
    lo, hi = int(offsets[0]), int(offsets[-1])
    data = np.frombuffer(bufs[2], dtype=np.uint8)[lo:hi] if hi > lo else np.zeros(0, dtype=np.uint8)
    return data, offsets[:-1] - lo, np.diff(offsets)


def _windows(data: np.ndarray, dtype: str) -> np.ndarray:
    """The 8 bytes starting at every position of ``data`` (zero-padded) as
    unaligned 64-bit words of ``dtype`` (``">u8"`` or ``"<u8"``)."""
    padded = np.zeros(data.size + 8, dtype=np.uint8)
    padded[: data.size] = data
    return np.ndarray((data.size + 1,), dtype=dtype, buffer=padded, strides=(1,))


def pack_ids(ids: Any) -> np.ndarray | None:
    """Each id of a pyarrow string array packed into an int64 key, or None.

    The UTF-8 bytes are read as a big-endian uint64 (zero-padded) and shifted
    by 2**63 into int64, so integer order is byte order and equal keys mean
    equal ids.  None when an id is longer than 8 bytes, empty, or holds a NUL
    byte (the packing would then not be one-to-one).  An id's first byte is
    not NUL, so every key is above -2**63 + 2**56 and can be negated.
    """
    layout = _utf8_layout(ids)
    if layout is None:
        return None
    data, start, length = layout
    if len(ids) == 0:
        return np.zeros(0, dtype=np.int64)
    if int(length.max()) > 8 or int(length.min()) < 1 or (data == 0).any():
        return None
    # the 8 bytes starting at every byte position (unaligned big-endian words)
    words = _windows(data, ">u8")[start].astype(np.uint64)
    shift = ((8 - length) * 8).astype(np.uint64)
    words = (words >> shift) << shift  # keep the id's own bytes only
    return (words ^ np.uint64(1 << 63)).view(np.int64)


def pack_ids_reference(ids: list[str]) -> np.ndarray | None:
    """:func:`pack_ids` with ``int.from_bytes`` per id."""
    out = []
    for i in ids:
        b = i.encode("utf-8")
        if not 1 <= len(b) <= 8 or b"\0" in b:
            return None
        out.append(int.from_bytes(b.ljust(8, b"\0"), "big") - (1 << 63))
    return np.asarray(out, dtype=np.int64)


def hash_ids(ids: Any) -> np.ndarray | None:
    """A 64-bit hash (int64) of each id of a pyarrow string array, or None.

    For ids of any length (ClueWeb's 25 bytes, UUIDs' 36), where
    :func:`pack_ids` gives up: equal ids have equal hashes, so a hash serves
    as a lookup key and an identity *candidate*, but two ids may share one
    (about n**2 / 2**65 for n distinct ids), so the caller confirms a hit on
    the ids themselves (a few per list) or takes a slow path when hashes
    repeat.  The order of hashes is not the ids' byte order.

    Each id is read as little-endian 8-byte words (unaligned views of the
    buffer, bytes past the id's end masked off) and folded into a mix of its
    length one word at a time, the ids of one length together (runs have
    few lengths): a few numpy passes over the batch, 29 ms for 500,000 ids
    of 25 and 36 bytes against 38 ms for pyarrow's ``dictionary_encode``,
    which also builds a table of the distinct ids.  None for a null or a
    type other than string.
    """
    layout = _utf8_layout(ids)
    if layout is None:
        return None
    data, start, length = layout
    if len(ids) == 0:
        return np.zeros(0, dtype=np.int64)
    windows = _windows(data, "<u8")
    out = np.empty(len(ids), dtype=np.uint64)
    shortest = int(length.min())
    counts = np.bincount(length - shortest)
    for n in (np.flatnonzero(counts) + shortest).tolist():  # ids of one length at a time
        sel = None if counts[n - shortest] == len(ids) else np.flatnonzero(length == n)
        at = start if sel is None else start[sel]
        h = np.full(at.size, (n + 1) * int(MIX_ROW) % (1 << 64), dtype=np.uint64)
        for k in range(0, n, 8):
            word = windows[at + k]
            if n - k < 8:
                word &= _LOW_BYTES[n - k]  # the id's own bytes only
            h ^= word
            h *= MIX64
            h ^= h >> np.uint64(31)
        if sel is None:
            out[:] = h
        else:
            out[sel] = h
    return out.view(np.int64)


def hash_ids_reference(ids: list[str]) -> np.ndarray:
    """:func:`hash_ids` one id at a time with ``int.from_bytes``."""
    m64, mrow, full = int(MIX64), int(MIX_ROW), (1 << 64) - 1
    out = []
    for i in ids:
        b = i.encode("utf-8")
        h = ((len(b) + 1) * mrow) & full
        for k in range(0, len(b), 8):
            h = ((h ^ int.from_bytes(b[k : k + 8], "little")) * m64) & full
            h ^= h >> 31
        out.append(h)
    return np.asarray(out, dtype=np.uint64).view(np.int64)


# -- ranks ----------------------------------------------------------------------------


def rank_of(order: np.ndarray) -> np.ndarray:
    """The inverse permutation: position of each item in ``order``."""
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(order.size)
    return rank


def byte_order_rank(ids: Any) -> np.ndarray:
    """Rank of each id in ascending UTF-8 byte order (= code point order).

    >>> byte_order_rank(["b", "a", "c"]).tolist()
    [1, 0, 2]
    """
    return rank_of(np.argsort(np.asarray(ids, dtype=str), kind="stable"))


# -- rank counts of chosen cells of a block of rows ---------------------------------

#: Cells of a block binned at once by :func:`rank_counts` (about 1-2 MB: stays in cache).
COUNT_CELLS = 1 << 18
#: Bins per row for :func:`rank_counts`, per relevant item of the row (rounded to a power of 2) ...
BINS_PER_ITEM = 64
#: ... but at most one bin per this many cells of the row (the bin counts are arrays too).
MIN_CELLS_PER_BIN = 2
#: Rows with more than one item per this many cells are argsorted instead (binning is then no cheaper).
SORT_ABOVE = 8


def rank_counts(block: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each item k, the cell ``block[rows[k], cols[k]]`` holding value v:

    * ``smaller[k]``: the cells of row ``rows[k]`` with a value < v,
    * ``equal_lower[k]``: the cells of that row with a value == v in a column < ``cols[k]``,
    * ``equal_all[k]``: the cells of that row with a value == v (the item included).

    So the item's position in a stable sort of its row is ``smaller + equal_lower``
    (0-based: the matrix tie rule), and tie-aware scores read the tie group
    ``[smaller, smaller + equal_all)``.  ``block`` is a float32/float64 array
    without NaN (callers refuse it or make it inf first); -0.0 == 0.0; rows
    must be non-decreasing.

    How, without sorting the rows: each row is cut into value bins spanning
    its items' values (an order-preserving linear map of the values,
    computed the same way for every cell); one ``bincount`` of (row, bin)
    counts the cells below each item's bin; only the cells sharing a bin
    with an item (a few per cent of the row) are then sorted, by (row,
    value) stably, which places each item among its equals.  Exact whatever
    the distribution (a crowded bin only costs time).  Work in slices of
    about :data:`COUNT_CELLS` cells.
    """
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    n_rows, n_cols = block.shape
    smaller = np.zeros(rows.size, dtype=np.int64)
    equal_lower = np.zeros(rows.size, dtype=np.int64)
    equal_all = np.zeros(rows.size, dtype=np.int64)
    if rows.size == 0:
        return smaller, equal_lower, equal_all
    step = max(1, COUNT_CELLS // max(1, n_cols))
    cut = np.searchsorted(rows, np.arange(0, n_rows + step, step))
    work = _CountBuffers(min(step, n_rows) * n_cols, block.dtype)
    for s in range(0, n_rows, step):
        i, j = cut[s // step], cut[s // step + 1]
        if i < j:
            part = slice(i, j)
            rows_of = block[s : s + step]
            count = _rank_counts_sorted if (j - i) * SORT_ABOVE > rows_of.size else _rank_counts_rows
            smaller[part], equal_lower[part], equal_all[part] = count(rows_of, rows[i:j] - s, cols[i:j], work)
    return smaller, equal_lower, equal_all


def _rank_counts_sorted(block: np.ndarray, rows: np.ndarray, cols: np.ndarray, work: _CountBuffers) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`rank_counts` for rows with many items (a large share of their
    cells), where binning is no cheaper than sorting: each row sorted by
    (value, column), stably (float32: as one 64-bit key per cell, which
    numpy's vectorised sort takes; float64: a stable argsort), then every
    place's tie group from neighbours."""
    n_rows, n_cols = block.shape
    if block.dtype == np.float32:
        pairs = np.sort((_sortable(block).astype(np.uint64) << np.uint64(32)) | np.arange(n_cols, dtype=np.uint64), axis=1)
        order = (pairs & np.uint64(0xFFFFFFFF)).astype(np.intp)
        ordered = pairs >> np.uint64(32)
    else:
        order = np.argsort(block, axis=1, kind="stable")  # -0.0 == 0.0: equal values keep column order
        ordered = np.take_along_axis(block, order, axis=1)
    place = np.empty_like(order)
    np.put_along_axis(place, order, np.broadcast_to(np.arange(n_cols), order.shape), axis=1)
    at = np.arange(n_cols)
    new = np.ones(ordered.shape, dtype=bool)
    new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    start = np.maximum.accumulate(np.where(new, at, 0), axis=1)  # first place of each place's tie group
    last = np.ones(ordered.shape, dtype=bool)
    last[:, :-1] = new[:, 1:]
    end = np.minimum.accumulate(np.where(last, at, n_cols)[:, ::-1], axis=1)[:, ::-1] + 1  # one past its last place
    p = place[rows, cols]
    first = start[rows, p]
    return first, p - first, end[rows, p] - first


def _sortable(values: np.ndarray) -> np.ndarray:
    """Unsigned integers in the order of the float values (-0.0 as 0.0; no NaN)."""
    v = values + values.dtype.type(0)
    bits = v.view(np.uint32 if v.dtype == np.float32 else np.uint64)
    top = bits.dtype.type(1) << bits.dtype.type(8 * bits.itemsize - 1)
    return np.where(v < 0, ~bits, bits | top)


class _CountBuffers:
    """Work arrays of :func:`rank_counts`, allocated once per call: fresh
    multi-megabyte arrays per slice would cost a page fault per 4 KiB."""

    def __init__(self, cells: int, dtype: np.dtype) -> None:
        self.y = np.empty(cells, dtype=dtype)
        self.small = np.empty(cells, dtype=np.int32)
        self.bins = np.empty(cells, dtype=np.intp)
        self.flags = np.empty(cells, dtype=bool)


def _rank_counts_rows(block: np.ndarray, rows: np.ndarray, cols: np.ndarray, work: _CountBuffers) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`rank_counts` for one slice of rows (items sorted by row)."""
    n_rows, n_cols = block.shape
    size = n_rows * n_cols
    ft = block.dtype.type
    v = block[rows, cols]
    # per row: the span of its items' finite values, cut into nb bins (bin 0 and nb + 1: outside)
    per_row = np.bincount(rows, minlength=n_rows)
    nb = 1 << int(np.ceil(np.log2(max(2, BINS_PER_ITEM * int(per_row.max())))))
    nb = min(nb, 1 << max(1, int(np.log2(max(2, n_cols // MIN_CELLS_PER_BIN)))))
    finite = np.isfinite(v)
    lo = np.full(n_rows, np.inf)
    hi = np.full(n_rows, -np.inf)
    present = per_row > 0
    first = (np.cumsum(per_row) - per_row)[present]  # items are sorted by row
    lo[present] = np.minimum.reduceat(np.where(finite, v, np.inf), first)
    hi[present] = np.maximum.reduceat(np.where(finite, v, -np.inf), first)
    none = ~np.isfinite(lo)
    lo[none], hi[none] = 0.0, 1.0
    span = hi - lo
    span = np.maximum(span, np.maximum(np.abs(lo), 1.0) * 1e-3)
    scale = np.minimum(nb * (1 - 1e-3) / span, np.finfo(ft).max / 4).astype(ft)
    y = work.y[:size].reshape(n_rows, n_cols)
    with np.errstate(over="ignore"):  # huge values become inf: still the top bin
        np.subtract(block, lo.astype(ft)[:, None], out=y)
        np.multiply(y, scale[:, None], out=y)
    np.clip(y, -1, nb, out=y)
    width = nb + 2
    small = work.small[:size].reshape(n_rows, n_cols)
    small[...] = y  # truncation is monotone: value order is kept (ties share a bin)
    bins = work.bins[:size]
    np.add(small, (np.arange(n_rows, dtype=np.intp) * width + 1)[:, None], out=bins.reshape(n_rows, n_cols))
    hist = np.bincount(bins, minlength=n_rows * width)
    item_bin = bins[rows * n_cols + cols]
    flagged = np.zeros(n_rows * width, dtype=bool)
    flagged[item_bin] = True
    # cells in bins below an item's bin, not counting the bins that hold items:
    # sums of the bin counts between consecutive (row start, item bin) bounds
    hist[item_bin] = 0
    bounds = np.sort(np.concatenate([np.arange(n_rows, dtype=np.intp) * width, item_bin]))
    bounds = bounds[np.append(True, bounds[1:] != bounds[:-1])]  # distinct: np.unique hashes first, 4x slower here
    before = np.zeros(bounds.size, dtype=np.int64)
    np.cumsum(np.add.reduceat(hist, bounds)[:-1], out=before[1:])  # cells before each bound
    outside = before[np.searchsorted(bounds, item_bin)] - before[np.searchsorted(bounds, rows * width)]
    # the cells that share a bin with some item: sorted by (row, value), stably (columns ascend)
    flags = work.flags[:size]
    np.take(flagged, bins, out=flags)
    cand = np.flatnonzero(flags)
    crow = cand // n_cols
    key = _sortable(block.ravel()[cand])
    if ft is np.float32:
        order = np.argsort((crow.astype(np.uint64) << np.uint64(32)) | key.astype(np.uint64), kind="stable")
    else:
        order = np.lexsort((key, crow))
    skey, srow = key[order], crow[order]
    new_group = np.ones(cand.size, dtype=bool)
    new_group[1:] = (skey[1:] != skey[:-1]) | (srow[1:] != srow[:-1])
    starts = np.flatnonzero(new_group)
    group = np.cumsum(new_group) - 1
    sizes = np.diff(np.append(starts, cand.size))
    new_row = np.ones(cand.size, dtype=bool)
    new_row[1:] = srow[1:] != srow[:-1]
    row_start = np.zeros(n_rows, dtype=np.int64)
    row_start[srow[new_row]] = np.flatnonzero(new_row)
    pos = np.empty(cand.size, dtype=np.int64)
    pos[order] = np.arange(cand.size)
    at = pos[np.searchsorted(cand, rows * n_cols + cols)]  # each item is a candidate cell
    g = group[at]
    smaller = outside + starts[g] - row_start[rows]
    return smaller, at - starts[g], sizes[g]


def rank_counts_reference(block: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`rank_counts` the plain way: a stable argsort of each item's row."""
    out = np.zeros((3, len(rows)), dtype=np.int64)
    for k, (r, c) in enumerate(zip(rows, cols)):
        row = block[r]
        position = int(np.flatnonzero(np.argsort(row, kind="stable") == c)[0])
        equal = row == row[c]
        out[:, k] = (position - int(equal[:c].sum()), int(equal[:c].sum()), int(equal.sum()))
    return out[0], out[1], out[2]


# -- long ids as rows of 64-bit words -----------------------------------------------

#: Widest id (in bytes) :func:`id_words` lays out; a batch with a wider one
#: takes the caller's general path (the rows would cost this much per id).
WORDS_MAX_BYTES = 128
#: Ids hashed at once by :func:`hash_words` (a slice of rows stays in cache).
HASH_ROWS = 1 << 15


def _word_multiplier(k: int) -> int:
    """Odd 64-bit multiplier of word ``k`` of an id (splitmix64 of k)."""
    x = (0x9E3779B97F4A7C15 * (k + 1)) % (1 << 64)
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) % (1 << 64)
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) % (1 << 64)
    return (x ^ (x >> 31)) | 1


def id_words(ids: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """Each id of a pyarrow string array as a row of 64-bit words, and its length.

    Returns ``(words, lengths)``: ``words`` is (m, K) uint64, K = ceil(longest
    id / 8) (at least 1), row i holding id i's UTF-8 bytes read as
    little-endian words, zero past its end; ``lengths`` its length in bytes
    (int64).  Rows of one width need no gather: pyarrow's ``ascii_rpad`` pads
    every id with NUL bytes to 8K bytes (byte-wise for any UTF-8, checked by
    the tests), and the padded buffer is viewed as the matrix (about 3 ms for
    300,000 ids of 25 and 36 bytes).  None for another type, a null, or an
    id longer than :data:`WORDS_MAX_BYTES`.

    >>> w, n = id_words(__import__("pyarrow").array(["ab", "abcdefghi"]))
    >>> w.shape, n.tolist(), hex(int(w[0, 0])), hex(int(w[1, 1]))
    ((2, 2), [2, 9], '0x6261', '0x69')
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    layout = _utf8_layout(ids)
    if layout is None:
        return None
    _, _, length = layout
    m = len(ids)
    longest = int(length.max(initial=0))
    if longest > WORDS_MAX_BYTES:
        return None
    width = 8 * max(1, (longest + 7) // 8)
    try:
        padded = pc.ascii_rpad(ids, width=width, padding="\0")
    except pa.ArrowException:  # (a pyarrow that checks for ASCII: the caller's general path)
        return None
    offsets = np.frombuffer(padded.buffers()[1], dtype=np.int32, count=m + 1, offset=padded.offset * 4)
    first = int(offsets[0])
    if int(offsets[-1]) - first != m * width:  # (not one width: never seen; the caller's general path)
        return None
    words = np.frombuffer(padded.buffers()[2], dtype="<u8", count=m * (width // 8), offset=first) if m else np.zeros(0, dtype="<u8")
    return words.astype(np.uint64, copy=False).reshape(m, width // 8), length.astype(np.int64)


def id_words_reference(ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`id_words` with ``int.from_bytes`` per word."""
    raw = [i.encode("utf-8") for i in ids]
    k = max(1, (max((len(b) for b in raw), default=0) + 7) // 8)
    words = np.zeros((len(raw), k), dtype=np.uint64)
    for r, b in enumerate(raw):
        for j in range(0, len(b), 8):
            words[r, j // 8] = int.from_bytes(b[j : j + 8], "little")
    return words, np.asarray([len(b) for b in raw], dtype=np.int64)


def hash_words(words: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """A 64-bit hash (int64) of each id laid out by :func:`id_words`.

    h = fmix(sum_k f(w_k) * M_k + (n + 1) * MIX_ROW) over the id's words w_k,
    with f(w) = w ^ (w >> 29) (so that bytes high in a word reach the low
    bits), M_k odd multipliers per word position and fmix an xor-shift /
    multiply finaliser; arithmetic modulo 2**64.  A zero word adds nothing,
    so the hash does not depend on the matrix's width (a batch's ids and the
    judged targets are laid out at their own widths).  Equal ids, equal
    hashes; the caller confirms a hit on the ids (:func:`words_equal`) and
    takes an exact path when two ids of one list share a hash.  The sum is
    one integer matrix product per slice of :data:`HASH_ROWS` rows (numpy
    wraps integer products); with :func:`id_words`, about 6 ms for 300,000
    ids of 25 and 36 bytes, against 11 ms for :func:`hash_ids`.
    """
    m, k = words.shape
    mult = np.array([_word_multiplier(j) for j in range(k)], dtype=np.uint64)
    out = (np.asarray(lengths, dtype=np.int64).astype(np.uint64) + np.uint64(1)) * MIX_ROW
    for a in range(0, m, HASH_ROWS):
        w = words[a : a + HASH_ROWS]
        x = w >> np.uint64(29)
        x ^= w
        out[a : a + HASH_ROWS] += x @ mult
    out ^= out >> np.uint64(32)
    out *= MIX64
    out ^= out >> np.uint64(29)
    return out.view(np.int64)


def hash_words_reference(ids: list[str]) -> np.ndarray:
    """:func:`hash_words` of :func:`id_words`, one id at a time with Python integers."""
    full = (1 << 64) - 1
    out = []
    for i in ids:
        b = i.encode("utf-8")
        h = (len(b) + 1) * int(MIX_ROW)
        for j in range(0, len(b), 8):
            w = int.from_bytes(b[j : j + 8], "little")
            h += (w ^ (w >> 29)) * _word_multiplier(j // 8)
        h &= full
        h ^= h >> 32
        h = (h * int(MIX64)) & full
        h ^= h >> 29
        out.append(h)
    return np.asarray(out, dtype=np.uint64).view(np.int64)


def words_equal(a: np.ndarray, a_len: np.ndarray, b: np.ndarray, b_len: np.ndarray) -> np.ndarray:
    """Bool per row: id i of ``(a, a_len)`` equals id i of ``(b, b_len)`` (rows of :func:`id_words`, any widths).

    Equal lengths n fit both widths, and both rows are zero past n, so the
    common words decide.
    """
    k = min(a.shape[1], b.shape[1])
    return (a_len == b_len) & (a[:, :k] == b[:, :k]).all(axis=1)

