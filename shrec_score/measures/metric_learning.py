"""Metric-learning measures: MAP@R, pytorch-metric-learning's ``AccuracyCalculator`` keys as aliases and the
refusal of "Recall@k", which means two things (docs/coming-from.md#pytorch-metric-learning)."""

from __future__ import annotations

import re

import numpy as np

from .base import undefined_without_relevant

#: AccuracyCalculator's key -> the shrec-score measure of the same value.
ACCURACY_CALCULATOR = {
    "precision_at_1": "NN",
    "r_precision": "FT",
    "mean_average_precision_at_r": "MAP@R",
    "mean_reciprocal_rank": "RR",
}

SOURCE = "Musgrave, Belongie & Lim 2020, A Metric Learning Reality Check, sec. 3.2; pytorch-metric-learning AccuracyCalculator"


def map_at_r(rel_ranks: np.ndarray, *, n_relevant: np.ndarray) -> np.ndarray:
    """MAP@R: average precision over the first R results, R = K the relevant items.

    .. math:: \\text{MAP@R} = \\frac{1}{R} \\sum_{i=1}^{R} P(i)\\,\\text{rel}(i)
              = \\frac{1}{R} \\sum_{j:\\ \\text{rank}_j \\le R} \\frac{j}{\\text{rank}_j}

    P(i) the precision at rank i, rank_j the rank of the j-th relevant item: unlike AP, a relevant item past rank R
    adds nothing.  NaN when K = 0.  Source: Musgrave, Belongie & Lim, "A Metric Learning Reality Check", ECCV 2020,
    sec. 3.2 (pytorch-metric-learning's ``mean_average_precision_at_r``).

    >>> map_at_r(np.array([[1.0, 3.0, 4.0]]), n_relevant=np.array([3])).tolist() == [(1 / 1 + 2 / 3) / 3]
    True
    """
    j = np.arange(1, rel_ranks.shape[1] + 1, dtype=np.float64)
    total = np.where(rel_ranks <= n_relevant[:, None], j / rel_ranks, 0.0).sum(axis=1)
    return undefined_without_relevant(total / np.maximum(n_relevant, 1), n_relevant)


#: Names read as "recall at k" that mean two things in evaluate(): R@k, Recall@k (any case).
_RECALL = re.compile(r"(?:R|(?i:recall))@([1-9][0-9]*)")


def ambiguous_recall(name: object) -> str | None:
    """The message for a recall-at-k name whose meaning depends on the field, or None.

    >>> ambiguous_recall("AP") is None, ambiguous_recall("recall.10") is None
    (True, True)
    >>> print(ambiguous_recall("Recall@1"))  # doctest: +NORMALIZE_WHITESPACE
    measures: 'Recall@1' means two things, so it is not guessed: IR recall at 1 (relevant items
    in the first 1 / K: ask for 'recall.1') or the metric-learning Recall@1 (1 if a relevant item
    is in the first 1: ask for 'success.1')
    """
    m = _RECALL.fullmatch(name) if isinstance(name, str) else None
    if m is None:
        return None
    k = m.group(1)
    return (
        f"measures: {name!r} means two things, so it is not guessed: IR recall at {k} "
        f"(relevant items in the first {k} / K: ask for 'recall.{k}') or the metric-learning "
        f"Recall@{k} (1 if a relevant item is in the first {k}: ask for 'success.{k}')"
    )
