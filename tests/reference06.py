"""SHREC 2006 measures written as plain loops from seeds 002/003 (test oracle).

``g`` is the gain vector of one ranked list (2, 1, 0); ch, cm the numbers of
highly and marginally relevant items in the collection, ds its size.
"""

import math


def counts(g, ch, cm, ds):
    cr = ch + cm
    va = len(g)
    vh = sum(1 for x in g if x == 2)
    vr = sum(1 for x in g if x >= 1)
    return {
        "TP_highly": vh, "TP_relevant": vr, "FP_highly": va - vh, "FP_relevant": va - vr,
        "TN_highly": ds + (vh - va) - ch, "TN_relevant": ds + vr - va - cr,
        "FN_highly": ch - vh, "FN_relevant": cr - vr,
        "P_highly": vh / va, "P_relevant": vr / va, "R_highly": vh / ch, "R_relevant": vr / cr,
    }


def tiers(g, ch, cm):
    cr = ch + cm
    va = len(g)
    out = {}
    for name, c, lv in (("highly", ch, 2), ("relevant", cr, 1)):
        d1 = va if va < c else c
        d2 = va if va < 2 * c else 2 * c
        out[f"FT_{name}"] = sum(1 for x in g[:d1] if x >= lv) / d1
        out[f"ST_{name}"] = sum(1 for x in g[:d2] if x >= lv) / d2
    return out


def ap(g, lv):
    precs = []
    for i in range(len(g)):
        if g[i] >= lv:
            precs.append(sum(1 for x in g[: i + 1] if x >= lv) / (i + 1))
    return sum(precs) / len(precs) if precs else 0.0


def adr(g, ch, cm):
    cr = ch + cm
    q = len(g) if len(g) < cr else cr
    total = 0.0
    for i in range(1, q + 1):
        if i <= ch:
            f = sum(1 for x in g[:i] if x == 2)
        else:
            f = sum(1 for x in g[:i] if x >= 1)
        total += f / i
    return total / q


def vectors(g, ch, cm):
    cr = ch + cm
    ideal = [2] * ch + [1] * cm
    cg, dcg, icg, idcg = [], [], [], []
    for vec, out, disc in ((g, cg, False), (g, dcg, True), (ideal, icg, False), (ideal, idcg, True)):
        acc = 0.0
        for i, x in enumerate(vec, start=1):
            acc = x if i == 1 else acc + (x / math.log2(i) if disc else x)
            out.append(acc)
    ncg = [cg[i] / icg[min(i + 1, cr) - 1] for i in range(len(g))]
    ndcg = [dcg[i] / idcg[min(i + 1, cr) - 1] for i in range(len(g))]
    return {"CG": cg, "DCG": dcg, "NCG": ncg, "NDCG": ndcg, "ICG": icg, "IDCG": idcg}
