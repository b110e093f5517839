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
