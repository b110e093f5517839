"""Precision-recall curve at fixed recall levels, PSB convention: the PSB utilities (psbPlot), Shilane et al. 2004;
SHREC 2018 (seed 000, "Precision-Recall")."""

from __future__ import annotations

import numpy as np

#: The 20 recall levels 0.05, 0.10, ..., 1.00.
PR_LEVELS = np.round(np.arange(1, 21) * 0.05, 10)

_EPS = 1e-9


def pr_curve(rel_ranks: np.ndarray, *, n_relevant: np.ndarray, levels: np.ndarray = PR_LEVELS) -> np.ndarray:
    """Per-query precision at the given recall levels (n_queries x levels), PSB convention.

    .. math:: P(r) = P_{\\lfloor p \\rfloor} + (p - \\lfloor p \\rfloor)
              (P_{\\lceil p \\rceil} - P_{\\lfloor p \\rfloor}), \\quad p = rK

    P_k = k / rank_k the precision at the k-th hit (0 if not retrieved), interpolated between the hits on either
    side of p.  NaN below 1/K (p < 1) and where K = 0.

    >>> r = np.array([[1.0, 4.0, 10.0, 41.0, 44.0]])
    >>> pr_curve(r, n_relevant=np.array([5]), levels=np.array([0.1, 0.2, 0.3, 1.0])).round(6).tolist()
    [[nan, 1.0, 0.75, 0.113636]]
    """
    k = np.arange(1, rel_ranks.shape[1] + 1, dtype=np.float64)
    prec = np.where(k[None, :] <= n_relevant[:, None], k[None, :] / rel_ranks, np.nan)  # past K: NaN
    return interpolate_pr(prec, n_relevant=n_relevant, levels=levels)


def interpolate_pr(prec: np.ndarray, *, n_relevant: np.ndarray, levels: np.ndarray = PR_LEVELS) -> np.ndarray:
    """The PSB interpolation of :func:`pr_curve` from the precision at each hit (``prec[q, j - 1]``: at the j-th
    relevant item).  Linear in ``prec`` with weights that depend only on K and the levels, so the interpolation of
    expected precisions is the expected curve (``ties="expected"``)."""
    k = n_relevant.astype(np.float64)[:, None]
    pos = np.asarray(levels, dtype=np.float64)[None, :] * k
    lo = np.floor(pos + _EPS)
    frac = np.where(pos - lo > _EPS, pos - lo, 0.0)
    hi = np.where(frac > 0, lo + 1, lo)
    width = prec.shape[1]
    p_lo, p_hi = (np.take_along_axis(prec, np.clip(x.astype(np.int64) - 1, 0, width - 1), axis=1) for x in (lo, hi))
    return np.where((lo >= 1) & (k > 0), p_lo + frac * (p_hi - p_lo), np.nan)
