"""Exact expected values over every order of tied items (``ties="expected"``; McSherry & Najork, ECIR 2008); the model,
the notation (``s``, ``n``, ``r``, ``b`` of a relevant item's tie group) and each formula's derivation: docs/ties.md."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .base import GainBlock, JudgedBlock, RankBlock, ratio, undefined_without_relevant
from .cumgain import discount, psb_ideal

#: Terms of the order-statistic sums evaluated at once (bounds memory).
CHUNK_TERMS = 4_000_000


def _prefix_sums(f: Any, top: int) -> np.ndarray:
    """S[0..top]: S[m] = f(1) + ... + f(m) (``f = np.reciprocal``: harmonic numbers, ``np.log``: log m!)."""
    out = np.zeros(top + 1)
    np.cumsum(f(np.arange(1, top + 1, dtype=np.float64)), out=out[1:])
    return out


class Items:
    """The retrieved relevant items of a block with their tie groups, flattened: per item (rows in order, ranks
    ascending) ``row``, ``col`` (its index among the row's relevant items), ``s``, ``n``, ``r`` and ``b``."""

    def __init__(self, block: Any, relevant: np.ndarray | None = None) -> None:
        """A RankBlock's items, or those of a dense block's tie groups (``relevant``: its indicator matrix)."""
        if relevant is None:
            start, size, valid = block.group_start, block.group_size, np.isfinite(block.rel_ranks)
        else:
            start, size, valid = block.ties.start, block.ties.size, relevant
        self.shape = valid.shape
        self.row = np.nonzero(valid)[0]
        self.col = np.arange(self.row.size) - np.searchsorted(self.row, self.row)  # index among the row's relevant items
        self.s = start[valid].astype(np.int64)
        self.n = np.maximum(size[valid].astype(np.int64), 1)
        #: the first item of each group: group sums are taken once per group (r times an item's expectation, one
        #: rounding), so that a group whose every entry is relevant gives exact integers
        self.leader = (np.diff(self.s, prepend=-1) != 0) | (np.diff(self.row, prepend=-1) != 0)
        gid = np.cumsum(self.leader) - 1
        self.r = np.bincount(gid, minlength=1)[gid]
        self.b = self.col[np.flatnonzero(self.leader)[gid]]

    def per_row(self, values: np.ndarray) -> np.ndarray:
        """Sum of per-item values per row."""
        return np.bincount(self.row, weights=values, minlength=self.shape[0])[: self.shape[0]]

    def within(self, depth: float | np.ndarray) -> np.ndarray:
        """Per item, the places of its group within the first ``depth`` ranks (depth scalar or per row)."""
        d = np.asarray(depth, dtype=np.float64)
        return np.clip(np.minimum((d[self.row] if d.ndim else d) - self.s, self.n), 0, None)


def expected_precision_sum(items: Items, cutoff: float | np.ndarray = np.inf) -> np.ndarray:
    """E[sum over relevant items ranked within ``cutoff`` of the precision at their rank] per row."""
    s, n, r, b = items.s, items.n, items.r, items.b
    m = items.within(cutoff).astype(np.int64)
    h = _prefix_sums(np.reciprocal, int((s + m).max(initial=0)))
    dh = h[s + m] - h[s]
    share = np.where(n > 1, (r - 1) / np.maximum(n - 1, 1), 0.0)
    return items.per_row(((b + 1) * dh + share * (m - (s + 1) * dh)) / n)


def expected_inverse_rank(s: np.ndarray, n: np.ndarray, r: np.ndarray, i: np.ndarray) -> np.ndarray:
    """E[1 / (s + P)], P the place of the i-th (1-based) of r relevant items in a group of n (docs/ties.md)."""
    out = 1.0 / (s + i)  # n == r: every place relevant, P = i
    todo = np.flatnonzero(n > r)
    lf = _prefix_sums(np.log, int(n[todo].max(initial=0)))
    ends = np.cumsum(n[todo] - r[todo] + 1)  # the items' terms, summed: chunks of about CHUNK_TERMS terms
    for idx in np.split(todo, np.searchsorted(ends, np.arange(CHUNK_TERMS, ends.max(initial=0), CHUNK_TERMS))):
        t = n[idx] - r[idx] + 1
        item = np.repeat(np.arange(idx.size), t)
        p = i[idx][item] + (np.arange(item.size) - (np.cumsum(t) - t)[item])
        nn, rr, ii = n[idx][item], r[idx][item], i[idx][item]
        logp = (lf[p - 1] - lf[ii - 1] - lf[p - ii]) + (lf[nn - p] - lf[rr - ii] - lf[nn - p - rr + ii]) - (lf[nn] - lf[rr] - lf[nn - rr])
        out[idx] = np.bincount(item, weights=np.exp(logp) / (s[idx][item] + p), minlength=idx.size)
    return out


def expected_precision_at_hits(block: RankBlock, hits: int | None = None) -> np.ndarray:
    """E[j / rank_j] for the j-th relevant item, j <= ``hits`` (queries x k_max, 0 past ``hits``, NaN past K): what
    ``interpolate_pr`` reads."""
    items = Items(block)
    take = items.col < (hits or items.shape[1])
    row, j, i = items.row[take], items.col[take] + 1, (items.col - items.b + 1)[take]
    prec = np.zeros(items.shape)
    prec[row, j - 1] = j * expected_inverse_rank(items.s[take], items.n[take], items.r[take], i)
    k = np.arange(1, items.shape[1] + 1)
    return np.where(k[None, :] <= block.n_relevant[:, None], prec, np.nan)


def expected_ap(block: RankBlock, cutoff: float | np.ndarray = np.inf) -> np.ndarray:
    """Expected AP (trec_eval map per query): E[precision sum within ``cutoff``] / K (MAP@R: cutoff K); NaN when K = 0."""
    k = block.n_relevant
    return undefined_without_relevant(expected_precision_sum(Items(block), cutoff) / np.maximum(k, 1), k)


def expected_dcg(block: RankBlock) -> np.ndarray:
    """Expected PSB DCG: E[sum over relevant items of discount(rank)] over the ideal (the same in every order)."""
    items = Items(block)
    cum = _prefix_sums(discount, int((items.s + items.n).max(initial=0)))
    actual = items.per_row((cum[items.s + items.n] - cum[items.s]) / items.n)
    return undefined_without_relevant(actual / psb_ideal(block.rel_ranks.shape[1], block.n_relevant), block.n_relevant)


def expected_share(block: RankBlock, depth: np.ndarray | float, divisor: np.ndarray | float) -> np.ndarray:
    """E[hits in the first ``depth``] / ``divisor`` (NN, FT, ST, P@k, R@k; E is twice that over min(depth, Va) + K);
    NaN when K = 0."""
    items = Items(block)
    hits = items.per_row(np.where(items.leader, items.r * items.within(depth) / items.n, 0.0))
    return undefined_without_relevant(hits / np.maximum(divisor, 1), block.n_relevant)


def expected_ap_retrieved(b: GainBlock, *, level: str) -> np.ndarray:
    """Expected SHREC 2006 AP_*: E[precision sum over the retrieved relevant] / V (V is the same in every order)."""
    rel, c = dataclasses.replace(b, ties=None).level(level)  # the one order's indicators, not the tie groups' means
    return undefined_without_relevant(ratio(expected_precision_sum(Items(b, rel)), rel.sum(axis=1)), c)


def expected_map_cut(block: JudgedBlock, *, k: int) -> np.ndarray:
    """Expected trec_eval map_cut.k: E[precision sum within k] / R; 0 when R = 0."""
    return ratio(expected_precision_sum(Items(block, block.relevant), k), block.n_relevant)


def expected_success(block: JudgedBlock, *, k: int) -> np.ndarray:
    """Expected trec_eval success.k: P(a relevant item in the first k), 1 - C(n - m, r) / C(n, r) for the first
    group holding one, m = clip(k - s, 0, n) of its places within k (docs/ties.md)."""
    items = Items(block, block.relevant)
    first = items.col == 0
    s, n, r = items.s[first], items.n[first], items.r[first]
    rest = n - np.clip(k - s, 0, n)
    lf = _prefix_sums(np.log, int(n.max(initial=0)))
    none = np.where(rest >= r, np.exp((lf[rest] - lf[np.maximum(rest - r, 0)]) - (lf[n] - lf[n - r])), 0.0)
    out = np.zeros(items.shape[0])
    out[items.row[first]] = 1.0 - none
    return out
