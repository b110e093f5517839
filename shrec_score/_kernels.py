"""The one array kernel that no numpy or pyarrow call matches: membership of
64-bit keys among a few, filtered by a bitmap before a binary search.

The engine marks which (query, target) pairs of a TREC run are judged: ten
million keys against some hundred thousand judgments.  ``np.isin`` sorts
both sides together (5 s on the bench machine), ``pyarrow.compute.is_in``
hashes (2 s); :func:`isin` sorts only the judgments and rules out most
absent keys with one bitmap probe each (0.5 s).  ``tests/test_kernels.py``
holds it to a Python set and to ``np.isin``.

This module imports nothing from the package: it is the bottom layer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Multiplier of the bitmap's hash (2**64 / golden ratio, odd: a bijection of 64-bit keys).
MIX64 = np.uint64(0x9E3779B97F4A7C15)


def lookup(keys: np.ndarray, sorted_keys: np.ndarray, values: np.ndarray, missing: Any) -> np.ndarray:
    """``values[i]`` for each key equal to ``sorted_keys[i]``, ``missing`` for the others.

    ``sorted_keys``: int64, ascending, distinct.  A bitmap of about 32 slots
    per sorted key (a multiplicative hash: the top bits of ``key * MIX64``)
    first rules out most keys that are absent (a random binary search costs
    a cache miss per step); the rest are confirmed by ``searchsorted`` and
    equality, so the answer is exact whatever the hash does.

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


def isin(keys: np.ndarray, among: np.ndarray) -> np.ndarray:
    """Bool per int64 key: whether it is one of ``among`` (any order, repeats allowed).

    >>> isin(np.array([5, 7, 9]), np.array([9, 1, 9])).tolist()
    [False, False, True]
    """
    keys = np.asarray(keys, dtype=np.int64)
    ordered = np.sort(np.asarray(among, dtype=np.int64))
    return lookup(keys, ordered, np.ones(ordered.size, dtype=bool), False)
