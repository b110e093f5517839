"""Discounted cumulated gain, PSB form (binary relevance): Järvelin & Kekäläinen, ACM TOIS 20(4), 2002, as normalised
by the PSB (Shilane et al. 2004) and SHREC 2018 (seed 000), base-2 logarithm (seeds/README.md, erratum 1)."""

from __future__ import annotations

import numpy as np

from .base import undefined_without_relevant


def discount(ranks: np.ndarray) -> np.ndarray:
    """Discount of a 1-based rank: 1 at rank 1, 1 / log2(i) from rank 2 on."""
    ranks = np.asarray(ranks, dtype=np.float64)
    with np.errstate(divide="ignore"):
        d = 1.0 / np.log2(ranks)
    return np.where(ranks <= 1, 1.0, d)


def dcg(rel_ranks: np.ndarray, *, n_relevant: np.ndarray) -> np.ndarray:
    """Normalised DCG over the whole ranked list, PSB form (column ``DCG``).

    .. math:: DCG = \\frac{G_1 + \\sum_{i \\ge 2} G_i / \\log_2 i}{1 + \\sum_{i=2}^{K} 1 / \\log_2 i}

    with binary gains G_i.  NaN when K = 0.

    >>> round(float(dcg(np.array([[1.0, 2.0, np.inf]]), n_relevant=np.array([3]))[0]), 6)
    0.760188
    """
    actual = discount(rel_ranks).sum(axis=1)  # inf rank -> 1/inf = 0
    return undefined_without_relevant(actual / psb_ideal(rel_ranks.shape[1], n_relevant), n_relevant)


def psb_ideal(width: int, n_relevant: np.ndarray) -> np.ndarray:
    """DCG's divisor, 1 + sum_{i=2}^{K} 1 / log2 i (1 where K = 0), summed in the block's shape and order so
    that a perfect ranking gives exactly 1."""
    cols = np.arange(1, width + 1)
    ideal = np.where(cols[None, :] <= n_relevant[:, None], discount(cols)[None, :], 0.0).sum(axis=1)
    return np.where(ideal > 0, ideal, 1.0)
