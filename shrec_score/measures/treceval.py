"""trec_eval's measures under trec_eval's names (each as its ``m_<name>.c``, 9.0 and 10.0 alike but iprec_at_recall),
on the judged grade at each rank (:class:`JudgedBlock`); a value whose divisor is 0 (R = 0) is 0, counted in means."""

from __future__ import annotations

import numpy as np

from .base import JudgedBlock, precision_sum, ratio, row_sum

#: The 11 recall levels of ``iprec_at_recall`` (0.0, 0.1, ..., 1.0, as trec_eval parses them).
IPREC_LEVELS = tuple(i / 10 for i in range(11))


def ndcg(block: JudgedBlock, *, k: int | None = None) -> np.ndarray:
    """trec_eval ndcg: DCG of the whole ranked list over the ideal DCG of all judged documents.

    .. math:: \\mathrm{nDCG@k} = \\sum_{i=1}^{k} g_i / \\log_2(i + 1) \\Big/ \\sum_{i=1}^{k} g^*_i / \\log_2(i + 1)

    g_i the grade at rank i (0 unjudged or negative), g* the topic's judged grades descending; without k (ndcg_cut.k)
    the sums run over the list and every grade above 0 (m_ndcg.c; with k, m_ndcg_cut.c).

    >>> b = JudgedBlock.from_lists([[0, 2, 1]], [[1, 1, 1]])
    >>> round(float(ndcg(b, k=2)[0]), 6), round(float((2 / np.log2(3)) / (2 + 1 / np.log2(3))), 6)
    (0.479625, 0.479625)
    """
    dcg, ideal = (
        row_sum(g * (1.0 / np.log2(np.arange(2, g.shape[1] + 2, dtype=np.float64))))
        for g in (block.gain_values[:, :k], block.ideal_gains()[:, :k])
    )
    return ratio(dcg, ideal)


def map_cut(block: JudgedBlock, *, k: int | None = None) -> np.ndarray:
    """trec_eval map_cut.k: average precision over the first k ranks, divided by all R relevant.

    .. math:: \\mathrm{AP@k} = \\frac{1}{R} \\sum_{i \\le k,\\ \\mathrm{rel}(i)} \\frac{|\\{j \\le i: \\mathrm{rel}(j)\\}|}{i}

    >>> float(map_cut(JudgedBlock.from_lists([[1, 0, 1]], [[1, 3]]), k=2)[0]) == (1 / 1) / 3
    True
    """
    return ratio(precision_sum(block.relevant[:, :k]), block.n_relevant)


def success(block: JudgedBlock, *, k: int) -> np.ndarray:
    """trec_eval success.k: 1 if a relevant item is in the first k ranks, else 0.

    .. math:: \\mathrm{Success@k} = [\\exists i \\le k: \\mathrm{rel}(i)]

    >>> success(JudgedBlock.from_lists([[0, 0, 1]], [[2, 1]]), k=2).tolist()
    [0.0]
    """
    return np.asarray(block.relevant[:, :k].any(axis=1), dtype=np.float64)


def bpref(block: JudgedBlock) -> np.ndarray:
    """trec_eval bpref: how often relevant items come before judged non-relevant ones.

    .. math:: \\mathrm{bpref} = \\frac{1}{R} \\sum_{r\\ \\mathrm{retrieved\\ relevant}} \\left(1 - \\frac{\\min(n_r, R)}{\\min(N, R)}\\right)

    n_r judged non-relevant items above r (the term is 1 when 0), R judged relevant, N judged non-relevant; unjudged
    items are passed over (Buckley & Voorhees 2004).

    >>> float(bpref(JudgedBlock.from_lists([[1, 0, -1, 1]], [[2, 2]]))[0]) == (1 + (1 - 1 / 2)) / 2
    True
    """
    rel = block.relevant
    nonrel = (block.grades >= 0) & ~rel
    before = np.cumsum(nonrel, axis=1) - nonrel  # judged non-relevant strictly above each rank
    r = block.n_relevant[:, None]
    n = block.grade_counts[:, : block.rel_level].sum(axis=1)[:, None]  # judged non-relevant
    term = np.where(before > 0, 1.0 - np.minimum(before, r) / np.maximum(np.minimum(n, r), 1), 1.0)
    return ratio(row_sum(np.where(rel, term, 0.0)), block.n_relevant)


def count(block: JudgedBlock, *, of: str) -> np.ndarray:
    """trec_eval's counts ``of``: items retrieved, judged relevant documents (grade >= rel_level), relevant retrieved.

    .. math:: \\mathrm{num\\_ret} = V_a, \\quad \\mathrm{num\\_rel} = R,
              \\quad \\mathrm{num\\_rel\\_ret} = |\\{i \\le V_a: \\mathrm{rel}(i)\\}|

    >>> b = JudgedBlock.from_lists([[0, -1, 1]], [[1, 1, 2]])
    >>> [count(b, of=name).tolist() for name in ("num_ret", "num_rel", "num_rel_ret")]
    [[3.0], [3.0], [1.0]]
    """
    n = {"num_ret": block.n_retrieved, "num_rel": block.n_relevant}.get(of)
    return (block.relevant.sum(axis=1) if n is None else n).astype(np.float64)


def iprec_at_recall(block: JudgedBlock, *, level: float, rounding: str = "v9") -> np.ndarray:
    """trec_eval iprec_at_recall: interpolated precision at a recall level (0.0, 0.1, ..., 1.0).

    .. math:: \\mathrm{iprec}(x) = \\max_{i \\ge r_c} \\frac{|\\{j \\le i: \\mathrm{rel}(j)\\}|}{i}, \\quad c = \\mathrm{lround}(x R)

    r_c the rank of the c-th relevant item retrieved (the first when c = 0); 0 when fewer than c are.  Source:
    trec_eval 10.0 m_iprec_at_recall.c; ``rounding="v9"``: trec_eval 9.0's c = (long)(x R + 0.9) (pytrec_eval).

    >>> float(iprec_at_recall(JudgedBlock.from_lists([[0, 1, 0, 1]], [[2, 2]]), level=0.5)[0])
    0.5
    """
    found = np.cumsum(block.relevant, axis=1)
    ranks = np.arange(1, found.shape[1] + 1)
    prec = np.where(ranks[None, :] <= block.n_retrieved[:, None], found / ranks, -np.inf)
    best_after = np.maximum.accumulate(prec[:, ::-1], axis=1)[:, ::-1]  # max precision at rank >= i
    cut = np.floor(np.float64(level) * block.n_relevant + (0.9 if rounding == "v9" else 0.5)).astype(np.int64)
    pos = np.argmax(found >= np.maximum(cut, 1)[:, None], axis=1)  # where the running count first reaches c (>= 1)
    hits = found[:, -1]
    return np.where((hits > 0) & (cut <= hits), best_after[np.arange(found.shape[0]), pos], 0.0)


def gm_map(block: JudgedBlock) -> np.ndarray:
    """trec_eval gm_map: per topic, the natural log of AP (floored at 1e-5); the mean is exp of the mean log.

    .. math:: \\mathrm{gm\\_map}_q = \\ln \\max(\\mathrm{AP}_q, 10^{-5}), \\qquad \\mathrm{GMAP} = \\exp\\Big(\\frac{1}{Q}\\sum_q \\mathrm{gm\\_map}_q\\Big)

    10^-5 is trec_eval's MIN_GEO_MEAN (Robertson 2006).

    >>> round(float(gm_map(JudgedBlock.from_lists([[1, 0]], [[1, 2]]))[0]), 6), round(float(np.log(0.5)), 6)
    (-0.693147, -0.693147)
    """
    return np.asarray(np.log(np.maximum(map_cut(block), 0.00001)), dtype=np.float64)


def set_f(block: JudgedBlock) -> np.ndarray:
    """trec_eval set_F: F-measure of the whole retrieved set (beta = 1: F1).

    .. math:: F = \\frac{2 P R}{P + R}, \\quad P = \\frac{\\mathrm{num\\_rel\\_ret}}{\\mathrm{num\\_ret}},\\ R = \\frac{\\mathrm{num\\_rel\\_ret}}{\\mathrm{num\\_rel}}

    >>> float(set_f(JudgedBlock.from_lists([[1, 0]], [[1, 2]]))[0]) == 2 * (1 / 2) * (1 / 2) / (1 / 2 + 1 / 2)
    True
    """
    hits = block.relevant.sum(axis=1).astype(np.float64)
    p = hits / np.maximum(block.n_retrieved, 1)
    r = hits / np.maximum(block.n_relevant, 1)
    return ratio(2.0 * p * r, p + r)


def precision_at_level(block: JudgedBlock, *, r: int, k: int) -> np.ndarray:
    """ir_measures' P(rel=r)@k: items of grade >= r in the first k ranks, divided by k.

    .. math:: P_r@k = |\\{i \\le k: g_i \\ge r\\}| / k

    r is the name's, not ``--rel-level``.  Source: ir_measures ``P(rel=r)@k`` (= trec_eval m_P.c with ``-l r``).

    >>> precision_at_level(JudgedBlock.from_lists([[2, 1, 3, -1]], [[0, 1, 1, 1]]), r=2, k=4).tolist()
    [0.5]
    """
    return np.asarray((block.grades[:, :k] >= r).sum(axis=1) / k, dtype=np.float64)
