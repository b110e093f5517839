"""Average precision, precision and recall at a cutoff, reciprocal rank: trec_eval's forms (``map``, ``P_k``,
``recall_k``, ``recip_rank``) but NaN for a query without a relevant item (K = 0), where trec_eval scores 0 (its
names: :mod:`.names`).  SHREC 2006's AP is :mod:`.shrec06`'s (erratum 4)."""

from __future__ import annotations

import numpy as np

from .base import hits_within, undefined_without_relevant


def average_precision(rel_ranks: np.ndarray, *, n_relevant: np.ndarray) -> np.ndarray:
    """Average precision over all K relevant items (trec_eval ``map`` per query).

    .. math:: AP = \\frac{1}{K} \\sum_{k=1}^{V_r} \\frac{k}{\\text{rank}_k}

    rank_k the rank of the k-th relevant item retrieved; unretrieved relevant items count 0.

    >>> round(float(average_precision(np.array([[1.0, 4.0, 10.0, 41.0, 44.0]]),
    ...                               n_relevant=np.array([5]))[0]), 6)
    0.402239
    """
    prec = np.arange(1, rel_ranks.shape[1] + 1, dtype=np.float64) / rel_ranks  # inf rank -> 0
    return undefined_without_relevant(prec.sum(axis=1) / np.maximum(n_relevant, 1), n_relevant)


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
