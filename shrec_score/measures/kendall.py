"""Kendall's rank correlation tau-b in O(n log n) (Knight, JASA 61, 1966; the algorithm of ``scipy.stats.kendalltau``)
for seed 004: every unordered pair counts once (seeds/README.md erratum 7; docs/measures.md)."""

from __future__ import annotations

import math

import numpy as np


def count_inversions(a: np.ndarray) -> int:
    """Number of pairs i < j with a[i] > a[j], for integers a >= 0: a bottom-up merge sort in log2(n) vectorised
    passes, each counting an element's greater ones in its left block by one ``searchsorted`` (blocks kept apart by
    adding ``pair * base`` to the values).

    >>> count_inversions(np.array([3, 1, 2, 0]))
    5
    """
    a = np.asarray(a, dtype=np.int64)
    base = int(a.max(initial=0)) + 1
    idx = np.arange(a.size, dtype=np.int64)
    inversions, width = 0, 1
    while width < a.size:
        pair = idx // (2 * width)
        in_right = (idx % (2 * width)) >= width
        key = pair * base + a
        not_greater = np.searchsorted(key[~in_right], key[in_right], side="right")
        inversions += int(((pair[in_right] + 1) * width - not_greater).sum())  # the left blocks before are full
        key.sort()
        a = key % base  # the values, now sorted within each block of 2 * width
        width *= 2
    return inversions


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau-b of two orderings of the same items (ties allowed).

    .. math:: \\tau_B = \\frac{|C| - |D|}{\\sqrt{(|C| + |D| + |T_x|)(|C| + |D| + |T_y|)}}

    over all unordered pairs: C concordant, D discordant, T_x / T_y tied only in x / y.  Both oriented the same way
    ("higher = more similar"); NaN with fewer than 2 items or when every item is tied in x or in y.

    >>> kendall_tau_b(np.array([1, 2, 3, 4]), np.array([10, 20, 30, 40]))
    1.0
    >>> kendall_tau_b(np.array([1, 2, 3]), np.array([3, 2, 1]))
    -1.0
    """
    tied_pairs = lambda sizes: int((sizes * (sizes - 1) // 2).sum())  # pairs inside groups of these sizes
    x_rank, y_rank = (np.unique(v, return_inverse=True)[1].reshape(-1) for v in (x, y))
    order = np.lexsort((y_rank, x_rank))  # by x, then by y: within ties of x, y ascends
    x_rank, y_rank = x_rank[order], y_rank[order]
    joint = np.concatenate([[True], (x_rank[1:] != x_rank[:-1]) | (y_rank[1:] != y_rank[:-1]), [True]])
    tied_both = tied_pairs(np.diff(np.flatnonzero(joint)))
    tied_x, tied_y = tied_pairs(np.bincount(x_rank)), tied_pairs(np.bincount(y_rank))
    total = x_rank.size * (x_rank.size - 1) // 2
    if tied_x == total or tied_y == total:  # no pair untied on that side (so also fewer than 2 items)
        return float("nan")
    con_minus_dis = total - tied_x - tied_y + tied_both - 2 * count_inversions(y_rank)
    a, b = total - tied_x, total - tied_y
    # Python integers: the product is exact; equal factors give the exact denominator, so identical orders give 1
    denom = float(a) if a == b else math.sqrt(a * b)
    return float(min(1.0, max(-1.0, con_minus_dis / denom)))

