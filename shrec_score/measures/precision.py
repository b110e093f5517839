"""Precision-based measures of binary relevance (AP, P@k, R@k, RR, MAP@R, the PSB's PR curve), each NaN where K = 0
(their trec_eval twins, ``map`` ..., score 0: docs/measures.md)."""

from __future__ import annotations

import numpy as np

from .base import hits_within, row_sum, undefined_without_relevant

#: The 20 recall levels 0.05, 0.10, ..., 1.00 of the PR curve.
PR_LEVELS = np.round(np.arange(1, 21) * 0.05, 10)

_EPS = 1e-9


def average_precision(rel_ranks: np.ndarray, *, n_relevant: np.ndarray) -> np.ndarray:
    """Average precision over all K relevant items (trec_eval ``map`` per query).

    .. math:: AP = \\frac{1}{K} \\sum_{k=1}^{V_r} \\frac{k}{\\text{rank}_k}

    rank_k the rank of the k-th relevant item retrieved (V_r of them; the unretrieved count 0).

    >>> round(float(average_precision(np.array([[1.0, 4.0, 10.0, 41.0, 44.0]]),
    ...                               n_relevant=np.array([5]))[0]), 6)
    0.402239
    """
    prec = np.arange(1, rel_ranks.shape[1] + 1, dtype=np.float64) / rel_ranks  # inf rank -> 0
    return undefined_without_relevant(row_sum(prec) / np.maximum(n_relevant, 1), n_relevant)


def precision_at(rel_ranks: np.ndarray, *, n_relevant: np.ndarray, k: int) -> np.ndarray:
    """Precision at cutoff k: relevant items in the first k results, divided by k.

    .. math:: P@k = |\\{\\text{relevant in top } k\\}| / k = \\mathrm{P\\_k}

    >>> precision_at(np.array([[1.0, 4.0, 10.0]]), n_relevant=np.array([3]), k=5).tolist()
    [0.4]
    """
    return undefined_without_relevant(hits_within(rel_ranks, k) / k, n_relevant)


def recall_at(rel_ranks: np.ndarray, *, n_relevant: np.ndarray, k: int) -> np.ndarray:
    """Recall at cutoff k: relevant items in the first k results, divided by K.

    .. math:: R@k = |\\{\\text{relevant in top } k\\}| / K

    >>> recall_at(np.array([[1.0, 4.0, 10.0]]), n_relevant=np.array([4]), k=5).tolist()
    [0.5]
    """
    return undefined_without_relevant(hits_within(rel_ranks, k) / np.maximum(n_relevant, 1), n_relevant)


def reciprocal_rank(rel_ranks: np.ndarray, *, n_relevant: np.ndarray) -> np.ndarray:
    """Reciprocal rank of the first relevant item (0 if none is retrieved).

    .. math:: RR = 1 / \\text{rank}_1

    >>> reciprocal_rank(np.array([[4.0, 10.0], [np.inf, np.inf]]), n_relevant=np.array([2, 2])).tolist()
    [0.25, 0.0]
    """
    return undefined_without_relevant(1.0 / rel_ranks[:, 0], n_relevant)


def map_at_r(rel_ranks: np.ndarray, *, n_relevant: np.ndarray) -> np.ndarray:
    """MAP@R: average precision over the first R results, R = K the relevant items.

    .. math:: \\text{MAP@R} = \\frac{1}{R} \\sum_{i=1}^{R} P(i)\\,\\text{rel}(i)
              = \\frac{1}{R} \\sum_{j:\\ \\text{rank}_j \\le R} \\frac{j}{\\text{rank}_j}

    Musgrave, Belongie & Lim, "A Metric Learning Reality Check", ECCV 2020, sec. 3.2.

    >>> map_at_r(np.array([[1.0, 3.0, 4.0]]), n_relevant=np.array([3])).tolist() == [(1 / 1 + 2 / 3) / 3]
    True
    """
    j = np.arange(1, rel_ranks.shape[1] + 1, dtype=np.float64)
    total = row_sum(np.where(rel_ranks <= n_relevant[:, None], j / rel_ranks, 0.0))
    return undefined_without_relevant(total / np.maximum(n_relevant, 1), n_relevant)


def pr_curve(rel_ranks: np.ndarray, *, n_relevant: np.ndarray, levels: np.ndarray = PR_LEVELS) -> np.ndarray:
    """Per-query precision at the recall levels (queries x levels), PSB convention (psbPlot; SHREC 2018, seed 000).

    .. math:: P(r) = P_{\\lfloor p \\rfloor} + (p - \\lfloor p \\rfloor)
              (P_{\\lceil p \\rceil} - P_{\\lfloor p \\rfloor}), \\quad p = rK

    P_k = k / rank_k the precision at the k-th hit (0 if not retrieved); NaN below 1/K (p < 1) and where K = 0.

    >>> r = np.array([[1.0, 4.0, 10.0, 41.0, 44.0]])
    >>> pr_curve(r, n_relevant=np.array([5]), levels=np.array([0.1, 0.2, 0.3, 1.0])).round(6).tolist()
    [[nan, 1.0, 0.75, 0.113636]]
    """
    k = np.arange(1, rel_ranks.shape[1] + 1, dtype=np.float64)
    prec = np.where(k[None, :] <= n_relevant[:, None], k[None, :] / rel_ranks, np.nan)  # past K: NaN
    return interpolate_pr(prec, n_relevant=n_relevant, levels=levels)


def interpolate_pr(prec: np.ndarray, *, n_relevant: np.ndarray, levels: np.ndarray = PR_LEVELS) -> np.ndarray:
    """The PSB interpolation of :func:`pr_curve` from the precision at each hit (``prec[q, j - 1]``: the j-th), linear
    in ``prec`` with weights of K and the levels only: of expected precisions, it is the expected curve."""
    k = n_relevant.astype(np.float64)[:, None]
    pos = np.asarray(levels, dtype=np.float64)[None, :] * k
    lo = np.floor(pos + _EPS)
    frac = np.where(pos - lo > _EPS, pos - lo, 0.0)
    hi = np.where(frac > 0, lo + 1, lo)
    width = prec.shape[1]
    p_lo, p_hi = (np.take_along_axis(prec, np.clip(x.astype(np.int64) - 1, 0, width - 1), axis=1) for x in (lo, hi))
    return np.where((lo >= 1) & (k > 0), p_lo + frac * (p_hi - p_lo), np.nan)
