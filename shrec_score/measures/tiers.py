"""Nearest Neighbor, First Tier, Second Tier and the E-measure (PSB / SHREC 2018: seeds 000/001, seeds/README.md
errata 5 and 6; Shilane et al., "The Princeton Shape Benchmark", SMI 2004).  Each is NaN when K = 0."""

from __future__ import annotations

import numpy as np

from .base import hits_within, undefined_without_relevant

#: Depth of the E-measure: "only the first 32 retrieved objects".
E_DEPTH = 32


def nearest_neighbor(rel_ranks: np.ndarray, *, n_relevant: np.ndarray) -> np.ndarray:
    """Nearest Neighbor: 1 if the first result is relevant, else 0.

    .. math:: NN = [\\text{rank}_1 = 1]

    >>> nearest_neighbor(np.array([[1.0, 4.0], [2.0, np.inf]]), n_relevant=np.array([2, 2])).tolist()
    [1.0, 0.0]
    """
    return undefined_without_relevant(rel_ranks[:, 0] == 1, n_relevant)


def first_tier(rel_ranks: np.ndarray, *, n_relevant: np.ndarray) -> np.ndarray:
    """First Tier: share of the K relevant items found in the first K results.

    .. math:: FT = |\\{\\text{relevant in top } K\\}| / K = \\mathrm{Rprec}

    >>> first_tier(np.array([[1.0, 4.0, 10.0, 41.0, 44.0]]), n_relevant=np.array([5])).tolist()
    [0.4]
    """
    return undefined_without_relevant(hits_within(rel_ranks, n_relevant) / np.maximum(n_relevant, 1), n_relevant)


def second_tier(rel_ranks: np.ndarray, *, n_relevant: np.ndarray) -> np.ndarray:
    """Second Tier: relevant items in the first 2K results, divided by K.

    .. math:: ST = |\\{\\text{relevant in top } 2K\\}| / K \\le 1

    >>> second_tier(np.array([[1.0, 4.0, 10.0, 41.0, 44.0]]), n_relevant=np.array([5])).tolist()
    [0.6]
    """
    return undefined_without_relevant(hits_within(rel_ranks, 2 * n_relevant) / np.maximum(n_relevant, 1), n_relevant)


def e_measure(
    rel_ranks: np.ndarray, *, n_relevant: np.ndarray, n_retrieved: np.ndarray, depth: int = E_DEPTH
) -> np.ndarray:
    """E-measure as published by SHREC and the PSB: F1 over the first 32 results.

    .. math:: P = h / \\min(32, V_a), \\quad R = h / K, \\quad E = \\frac{2PR}{P + R} = \\frac{2h}{\\min(32, V_a) + K}

    h the relevant items in the first ``depth``; F as published, not the 1 - F defined (seeds/README.md, erratum 5).

    >>> e_measure(np.array([[1.0, 4.0, 10.0, 41.0, 44.0]]), n_relevant=np.array([5]),
    ...           n_retrieved=np.array([100])).tolist() == [2 * 3 / (32 + 5)]
    True
    """
    h = hits_within(rel_ranks, depth)
    return undefined_without_relevant(2.0 * h / np.maximum(np.minimum(depth, n_retrieved) + n_relevant, 1), n_relevant)
