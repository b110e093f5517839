"""SHREC 2006 measures on graded relevance (Veltkamp et al., SHREC 2006 report, section 4: seeds 002/003, errata in
seeds/README.md; docs/measures.md): Ds collection size, Ch / Cr highly / all relevant items, Vh / Vr the retrieved
ones, Va the list's length; ``level="highly"`` uses Ch and Vh, ``"relevant"`` Cr and Vr.  NaN where C = 0."""

from __future__ import annotations

import numpy as np

from .base import GainBlock, precision_sum, ratio, row_sum, undefined_without_relevant


def set_measure(b: GainBlock, *, level: str, of: str) -> np.ndarray:
    """SHREC 2006's measures of the ranked list as a set (``of``): TP, FP, TN, FN, precision P and recall R.

    .. math:: TP = V, \\quad FP = V_a - V, \\quad TN = D_s + V - V_a - C, \\quad FN = C - V,
              \\quad P = V / V_a, \\quad R = V / C

    TN as seed 002 writes it, NaN when Ds is unknown (``collection_size < 0``); P of an empty list is 0.

    >>> b = GainBlock.from_gains([[2, 2, 1, 2, 2, 1, 0, 1, 0, 1, 2, 0, 0, 0]], [6], [5], 1814)
    >>> [float(set_measure(b, level="highly", of=m)[0]) for m in ("TP", "FP", "TN", "FN", "P", "R")] == [
    ...     5, 14 - 5, 1814 + 5 - 14 - 6, 6 - 5, 5 / 14, 5 / 6]
    True
    >>> set_measure(b, level="relevant", of="TP").tolist()
    [9.0]
    """
    rel, c = b.level(level)
    v, va, ds = rel.sum(axis=1), b.n_retrieved, b.collection_size
    value = {"TP": v, "FP": va - v, "TN": ds + v - va - c, "FN": c - v,
             "P": v / np.maximum(va, 1), "R": v / np.maximum(c, 1)}[of]
    return np.where((c == 0) | (of == "TN" and ds < 0), np.nan, np.asarray(value, dtype=np.float64))


def tier(b: GainBlock, *, level: str, factor: int) -> np.ndarray:
    """First (factor 1) or Second (factor 2) Tier, SHREC 2006 form, as a fraction.

    .. math:: T = |\\{\\text{relevant in the first } d\\}| / d, \\quad d = \\min(V_a, f C)

    Seed 002 writes "else d1 = Ch" for the relevant form; its worked example (9/11) uses Cr (seeds/README.md,
    erratum 3).  A fraction (the report prints percentages); an empty list scores 0.

    >>> b = GainBlock.from_gains([[2, 2, 1, 2, 2, 1, 0, 1, 0, 1, 2, 0, 0, 0]], [6], [5], 1814)
    >>> [float(tier(b, level=lv, factor=f)[0] * d) for lv, f, d in
    ...  [("highly", 1, 6), ("relevant", 1, 11), ("highly", 2, 12), ("relevant", 2, 14)]]
    [4.0, 9.0, 5.0, 9.0]
    """
    rel, c = b.level(level)
    d = np.minimum(b.n_retrieved, factor * c)
    cum = np.cumsum(rel, axis=1)
    hits = np.take_along_axis(cum, np.maximum(d - 1, 0)[:, None], axis=1)[:, 0]
    return undefined_without_relevant(ratio(hits, d), c)


def average_precision_retrieved(b: GainBlock, *, level: str) -> np.ndarray:
    """SHREC 2006 Average Precision: mean precision after each *retrieved* relevant item.

    .. math:: AP = \\frac{1}{V} \\sum_{k=1}^{V} \\frac{k}{\\text{rank}_k}

    V the retrieved relevant items, not C as trec_eval's MAP (column ``AP``; erratum 4); 0 when V = 0.

    >>> b = GainBlock.from_gains([[2, 2, 1, 2, 2, 1, 0, 1, 0, 1, 2, 0, 0, 0]], [6], [5], 1814)
    >>> float(average_precision_retrieved(b, level="highly")[0]) == (1/1 + 2/2 + 3/4 + 4/5 + 5/11) / 5
    True
    """
    rel, c = b.level(level)
    return undefined_without_relevant(ratio(precision_sum(rel), rel.sum(axis=1)), c)


def average_dynamic_recall(b: GainBlock) -> np.ndarray:
    """Average Dynamic Recall (Typke, Veltkamp & Wiering, ICME 2006).

    .. math:: ADR = \\frac{1}{q} \\sum_{i=1}^{q} \\frac{f_i}{i}, \\quad q = \\min(V_a, C_r)

    f_i the highly relevant items in the first i while i <= Ch, all relevant ones after; an empty list scores 0.

    >>> b = GainBlock.from_gains([[2, 2, 1, 2, 2, 1, 0, 1, 0, 1, 2, 0, 0, 0]], [6], [5], 1814)
    >>> round(float(average_dynamic_recall(b)[0]), 6)
    0.819221
    """
    cr, ch = b.n_relevant, b.n_highly
    q = np.minimum(b.n_retrieved, cr)
    width = max(1, int(q.max(initial=0)))
    i = np.arange(1, width + 1)
    high, rel = b.level("highly")[0][:, :width], b.level("relevant")[0][:, :width]
    f = np.where(i[None, :] <= ch[:, None], np.cumsum(high, axis=1), np.cumsum(rel, axis=1))
    r = np.where(i[None, :] <= q[:, None], f / i[None, :], 0.0)
    return undefined_without_relevant(ratio(row_sum(r), q), cr)
