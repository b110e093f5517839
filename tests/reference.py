"""Slow, obviously-correct reference implementations used as test oracles.

Each works on one query: ``gains`` is the list of gains of the ranked list
(1 = relevant, 0 = not), ``k`` the number of relevant items in the collection.
"""

import math


def nn(gains, k):
    return float(bool(gains) and gains[0] > 0)


def hits(gains, depth):
    return sum(1 for g in gains[:depth] if g > 0)


def ft(gains, k):
    return hits(gains, k) / k


def st(gains, k):
    return hits(gains, 2 * k) / k


def e_measure(gains, k, depth=32):
    h = hits(gains, depth)
    if h == 0:
        return 0.0
    p = h / min(depth, len(gains))
    r = h / k
    return 2 * p * r / (p + r)


def dcg(gains, k):
    actual = 0.0
    for i, g in enumerate(gains, start=1):
        if g > 0:
            actual += 1.0 if i == 1 else 1.0 / math.log2(i)
    ideal = 1.0 + sum(1.0 / math.log2(i) for i in range(2, k + 1))
    return actual / ideal


def ap(gains, k):
    found = 0
    total = 0.0
    for i, g in enumerate(gains, start=1):
        if g > 0:
            found += 1
            total += found / i
    return total / k


def rr(gains, k):
    for i, g in enumerate(gains, start=1):
        if g > 0:
            return 1.0 / i
    return 0.0


def p_at(gains, k, cutoff):
    return hits(gains, cutoff) / cutoff


def pr_curve(gains, k, levels):
    """PSB convention: precision k/rank_k at each hit, linear interpolation in hit position."""
    prec = []
    found = 0
    for i, g in enumerate(gains, start=1):
        if g > 0:
            found += 1
            prec.append(found / i)
    prec += [0.0] * (k - len(prec))
    out = []
    for r in levels:
        p = r * k
        if p < 1 - 1e-9:
            out.append(float("nan"))
            continue
        lo = math.floor(p + 1e-9)
        frac = p - lo if p - lo > 1e-9 else 0.0
        hi = lo + 1 if frac > 0 else lo
        out.append(prec[lo - 1] + frac * (prec[hi - 1] - prec[lo - 1]))
    return out
