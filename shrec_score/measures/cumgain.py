"""Cumulated gain (Järvelin & Kekäläinen, ACM TOIS 20(4), 2002) with the base-2 discount of seeds/README.md (errata
1, 2): the PSB's normalised DCG of binary relevance (Shilane et al. 2004; SHREC 2018, seed 000) and SHREC 2006's
vectors CG, DCG, NCG and NDCG (seeds 002, 003; ideal vectors of length Cr)."""

from __future__ import annotations

import numpy as np

from .base import GainBlock, ratio, row_sum, undefined_without_relevant


def discount(ranks: np.ndarray) -> np.ndarray:
    """Discount of a 1-based rank: 1 at rank 1 (log2 2 = 1), 1 / log2(i) from rank 2 on, 0 at rank inf."""
    return 1.0 / np.log2(np.maximum(ranks, 2.0))


def dcg(rel_ranks: np.ndarray, *, n_relevant: np.ndarray) -> np.ndarray:
    """Normalised DCG over the whole ranked list, PSB form (column ``DCG``).

    .. math:: DCG = \\frac{G_1 + \\sum_{i \\ge 2} G_i / \\log_2 i}{1 + \\sum_{i=2}^{K} 1 / \\log_2 i}

    with binary gains G_i.  NaN when K = 0.

    >>> round(float(dcg(np.array([[1.0, 2.0, np.inf]]), n_relevant=np.array([3]))[0]), 6)
    0.760188
    """
    actual = row_sum(discount(rel_ranks))  # inf rank -> 1/inf = 0
    return undefined_without_relevant(actual / psb_ideal(rel_ranks.shape[1], n_relevant), n_relevant)


def psb_ideal(width: int, n_relevant: np.ndarray) -> np.ndarray:
    """DCG's divisor, 1 + sum_{i=2}^{K} 1 / log2 i (1 where K = 0), summed in the block's shape and order so
    that a perfect ranking gives exactly 1."""
    cols = np.arange(1, width + 1)
    ideal = row_sum(np.where(cols[None, :] <= n_relevant[:, None], discount(cols)[None, :], 0.0))
    return np.where(ideal > 0, ideal, 1.0)


def cumulated_gain(gains: np.ndarray) -> np.ndarray:
    """CG[i] = G[1] + ... + G[i], row-wise.

    >>> cumulated_gain(np.array([[2, 2, 1, 2, 2, 1, 0, 1, 0, 1, 2, 0, 0, 0]])).tolist()
    [[2, 4, 5, 7, 9, 10, 10, 11, 11, 12, 14, 14, 14, 14]]
    """
    return np.cumsum(gains, axis=1, dtype=np.int64 if gains.dtype.kind in "iub" else np.float64)


def discounted_cumulated_gain(gains: np.ndarray) -> np.ndarray:
    """DCG[1] = G[1]; DCG[i] = DCG[i-1] + G[i] / log2(i), row-wise.

    >>> discounted_cumulated_gain(np.array([[2, 2, 1]])).round(5).tolist()
    [[2.0, 4.0, 4.63093]]
    """
    return np.cumsum(gains * discount(np.arange(1, gains.shape[1] + 1))[None, :], axis=1)


def ideal_gains(b: GainBlock, width: int) -> np.ndarray:
    """Ch items of the top grade, then Cm of grade 1, then 0."""
    i = np.arange(width)[None, :]
    return np.where(i < b.n_highly[:, None], b.top, i < b.n_relevant[:, None]).astype(np.int8)


def gain_vectors(b: GainBlock, width: int) -> dict[str, np.ndarray]:
    """CG, DCG, NCG and NDCG at ranks 1..width, NaN past the end of a list.  NCG[i] = CG[i] / ICG[i], NaN where Cr = 0
    (past Cr ICG stays at ICG[Cr], the seeds' ideal of length Cr)."""
    g = b.gain_values[:, :width]
    g = np.pad(g, ((0, 0), (0, width - g.shape[1])))
    ideal, cr = ideal_gains(b, width), b.n_relevant[:, None]
    cg, dcg = cumulated_gain(g).astype(np.float64), discounted_cumulated_gain(g)
    ncg = undefined_without_relevant(ratio(cg, cumulated_gain(ideal)), cr)
    ndcg = undefined_without_relevant(ratio(dcg, discounted_cumulated_gain(ideal)), cr)
    past_end = np.arange(1, width + 1)[None, :] > b.n_retrieved[:, None]
    return {k: np.where(past_end, np.nan, v) for k, v in {"CG": cg, "DCG": dcg, "NCG": ncg, "NDCG": ndcg}.items()}


def gain_at(b: GainBlock, *, kind: str, k: int) -> np.ndarray:
    """CG@k, DCG@k, NCG@k or NDCG@k: the vector's value at rank k; NaN when the list is shorter than k (or Cr = 0 for
    the normalised forms).

    >>> b = GainBlock.from_gains([[2, 2, 1, 2, 2, 1, 0, 1, 0, 1, 2, 0, 0, 0]], [6], [5], 1814)
    >>> round(float(gain_at(b, kind="NDCG", k=10)[0]), 7)
    0.8164226
    """
    return gain_vectors(b, k)[kind][:, k - 1]
