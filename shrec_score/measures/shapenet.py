"""SHREC'16/'17 ShapeNet Core55: the official summary measures (the organisers' Metrics.js; docs/evaluators.md).
Every list is cut to its first 1000 items: N its length after the cut, g_i the taxonomy grade at rank i (relevant
when > 0), C = min(models of the query's synset with the query, 1000); 0 / 0 is 0 unless said otherwise."""

from __future__ import annotations

import numpy as np

from .base import GainBlock, precision_sum, ratio, row_sum
from .cumgain import discount

#: Ranked lists are cut to this many items before scoring, and C is at most this.
CUTOFF = 1000


def precision_at_n(b: GainBlock) -> np.ndarray:
    """ShapeNet P@N: relevant (grade > 0) among the first N = min(Va, 1000) items / N.

    .. math:: P@N = |\\{i \\le N : g_i > 0\\}| / N

    >>> b = GainBlock.from_gains([[3, 0, 1, 2], []], [1, 1], [3, 3], -1, top=3)
    >>> precision_at_n(b).tolist()
    [0.75, 0.0]
    """
    return ratio((b.gains[:, :CUTOFF] > 0).sum(axis=1), np.minimum(b.n_retrieved, CUTOFF))


def recall_at_n(b: GainBlock) -> np.ndarray:
    """ShapeNet R@N: relevant among the first N items / C, C = min(synset size with the query, 1000).

    .. math:: R@N = |\\{i \\le N : g_i > 0\\}| / \\min(C_r, 1000)

    NaN when C = 0.

    >>> b = GainBlock.from_gains([[3, 0, 1, 2]], [1], [4], -1, top=3)
    >>> recall_at_n(b).tolist()  # 3 of C = 5
    [0.6]
    """
    c = np.minimum(b.n_relevant, CUTOFF)
    return np.where(c > 0, (b.gains[:, :CUTOFF] > 0).sum(axis=1) / np.maximum(c, 1), np.nan)


def f1_at_n(b: GainBlock) -> np.ndarray:
    """ShapeNet F1@N: 2 P R / (P + R) of P@N and R@N (0 when both are 0).

    .. math:: F1@N = \\frac{2 \\, P@N \\, R@N}{P@N + R@N}

    NaN when R@N is (C = 0).

    >>> b = GainBlock.from_gains([[3, 0, 1, 2], [0, 0]], [1, 1], [4, 4], -1, top=3)
    >>> [round(x, 12) for x in f1_at_n(b).tolist()]  # 2 * 0.75 * 0.6 / 1.35
    [0.666666666667, 0.0]
    """
    p, r = precision_at_n(b), recall_at_n(b)
    return np.where(np.isnan(r), np.nan, ratio(2 * p * r, p + r))


def average_precision_retrieved(b: GainBlock) -> np.ndarray:
    """ShapeNet AP (its mean is the summary's mAP): mean precision at the retrieved relevant items.

    .. math:: AP = \\frac{1}{V} \\sum_{i \\le N, g_i > 0} \\frac{|\\{j \\le i : g_j > 0\\}|}{i}

    V the relevant items among the first N (not K).

    >>> b = GainBlock.from_gains([[3, 0, 1, 2], [0, 0]], [1, 1], [4, 4], -1, top=3)
    >>> average_precision_retrieved(b).tolist() == [(1/1 + 2/3 + 3/4) / 3, 0.0]
    True
    """
    rel = b.gains[:, :CUTOFF] > 0
    return ratio(precision_sum(rel), rel.sum(axis=1))


def ndcg_retrieved(b: GainBlock) -> np.ndarray:
    """ShapeNet NDCG: DCG of the retrieved grades over the DCG of the same grades sorted descending.

    .. math:: NDCG = \\frac{g_1 + \\sum_{i=2}^{N} g_i / \\log_2 i}{g^*_1 + \\sum_{i=2}^{N} g^*_i / \\log_2 i}

    g* the first N grades sorted descending (0 / 0 is NaN in the official code).

    >>> import math
    >>> b = GainBlock.from_gains([[1, 3], [0, 0]], [1, 1], [4, 4], -1, top=3)
    >>> ndcg_retrieved(b).tolist() == [(1 + 3 / math.log2(2)) / (3 + 1 / math.log2(2)), 0.0]
    True
    """
    g = b.gains[:, :CUTOFF]
    dcg, ideal = (row_sum(x * discount(np.arange(1, x.shape[1] + 1))) for x in (g, -np.sort(-g, axis=1)))
    return ratio(dcg, ideal)
