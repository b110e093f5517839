"""Is run A really better than run B?  Paired tests over the per-query values (docs/outputs.md): sign-flip
randomization test (Smucker, Allan & Carterette, CIKM 2007; exact up to :data:`EXACT_UP_TO` queries), Holm's
correction, percentile bootstrap; every draw seeded."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations

import numpy as np
import pandas as pd

from .measures.measure import column_higher_is_better

#: Up to this many queries, every sign pattern is enumerated (exact p-value).
EXACT_UP_TO = 16


def randomization_test(a: np.ndarray, b: np.ndarray, *, n_resamples: int = 10_000, seed: int = 0) -> float:
    """Two-sided p-value of H0 "mean(a - b) = 0": P(|mean(s * d)| >= |mean(d)|) over sign patterns s: every
    pattern up to :data:`EXACT_UP_TO` queries, else ``n_resamples`` ones, p = (hits + 1) / (n_resamples + 1).

    >>> randomization_test(np.array([0.5, 0.6, 0.7]), np.array([0.5, 0.6, 0.7]))
    1.0
    >>> randomization_test(np.ones(3), np.zeros(3))  # exact: 2 of 8 patterns reach |mean| = 1
    0.25
    """
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    n = d.size
    if n == 0:
        return float("nan")
    observed = abs(d.mean())
    tol = 1e-12 * max(1.0, observed)
    exact = n <= EXACT_UP_TO
    bits = [(np.arange(2**n)[:, None] >> np.arange(n)[None, :]) & 1] if exact else _draws(seed, n_resamples, 2, n, np.int8)
    hits = sum(int((np.abs((s * 2 - 1) @ d) / n >= observed - tol).sum()) for s in bits)
    return float(hits / 2**n) if exact else float((hits + 1) / (n_resamples + 1))


def _draws(seed: int, n_resamples: int, high: int, width: int, dtype: type = np.int64) -> Iterator[np.ndarray]:
    """``n_resamples`` rows of ``width`` integers in [0, ``high``), seeded, a bounded block of rows at a time."""
    rng = np.random.default_rng(seed)
    chunk = max(1, 2_000_000 // width)
    for done in range(0, n_resamples, chunk):
        yield rng.integers(0, high, size=(min(chunk, n_resamples - done), width), dtype=dtype)


def holm(p_values: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values: p_(i) = max_{j <= i} min(1, (m - j + 1) p_(j)).

    >>> holm(np.array([0.01, 0.04, 0.03])).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p_values, dtype=np.float64)
    m = p.size
    order = np.argsort(p, kind="stable")
    out = np.empty(m)
    out[order] = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * p[order]))
    return out


def bootstrap_ci(
    values: np.ndarray, *, classes: np.ndarray | None = None, how: str = "mean", n_resamples: int = 10_000, level: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of a run's value (docs/outputs.md): the queries resampled (within each of
    ``classes`` for a macro average, the k-th seeded ``seed + k``), the value taken as the measure's ``how``:
    ``mean``, ``sum``, or ``geometric`` (exp of the mean of per-query logs, as gm_map).

    >>> [round(x, 9) for x in bootstrap_ci(np.full(4, np.log(0.5)), how="geometric")]
    [0.5, 0.5]
    >>> bootstrap_ci(np.array([1.0, 2.0, 4.0]), how="sum", n_resamples=100)[0] >= 3.0
    True
    """
    v = np.asarray(values, dtype=np.float64)
    keep = np.isfinite(v)
    groups = np.zeros(v.size, dtype=np.int64) if classes is None else np.unique(np.asarray(classes), return_inverse=True)[1]
    v, groups = v[keep], groups[keep]
    if v.size == 0:
        return float("nan"), float("nan")
    stats = np.zeros(n_resamples)
    present = np.unique(groups)
    for k, g in enumerate(present):
        x = v[groups == g]
        means = np.concatenate([x[idx].mean(axis=1) for idx in _draws(seed + k, n_resamples, x.size, x.size)])
        stats += means * x.size if how == "sum" else means
    if how != "sum":
        stats /= present.size
    if how == "geometric":
        stats = np.exp(stats)
    lo, hi = np.quantile(stats, [(1 - level) / 2, 1 - (1 - level) / 2])
    return float(lo), float(hi)


def pairwise(
    per_query: pd.DataFrame, measure: str, runs: list[str], *, n_resamples: int = 10_000, seed: int = 0,
    higher_is_better: bool | None = None,
) -> pd.DataFrame:
    """Every pair of runs (A ranked above B in ``runs``), oriented so that a positive difference means A is better
    (the registry's direction unless ``higher_is_better`` is given).  Columns run_a, run_b, queries (both have a
    value), mean_diff, wins, ties, losses, p_value (:func:`randomization_test`, pair i seeded ``seed + i``),
    p_adjusted (:func:`holm`), significant (p_adjusted < 0.05).

    >>> pq = pd.DataFrame({"run": ["A", "A", "B", "B"], "query": ["x", "y"] * 2, "FN_relevant": [1.0, 2.0, 3.0, 2.0]})
    >>> pairwise(pq, "FN_relevant", ["A", "B"])[["mean_diff", "wins", "ties", "losses"]].values.tolist()
    [[1.0, 1.0, 1.0, 0.0]]
    """
    if higher_is_better is None:
        higher_is_better = column_higher_is_better(measure) is not False
    sign = 1.0 if higher_is_better else -1.0
    wide = per_query.pivot(index="query", columns="run", values=measure)
    rows = []
    for i, (ra, rb) in enumerate(combinations(runs, 2)):
        pair = wide[[ra, rb]].dropna()
        a, b = pair[ra].to_numpy(), pair[rb].to_numpy()
        better = sign * (a - b)  # > 0 where A is better
        mean_diff = float(better.mean()) if len(pair) else float("nan")
        p = randomization_test(a, b, n_resamples=n_resamples, seed=seed + i)
        rows.append((ra, rb, len(pair), mean_diff, int((better > 0).sum()), int((better == 0).sum()), int((better < 0).sum()), p))
    out = pd.DataFrame(rows, columns=["run_a", "run_b", "queries", "mean_diff", "wins", "ties", "losses", "p_value"])
    out["p_adjusted"] = holm(out["p_value"].to_numpy()) if len(out) else []
    out["significant"] = out["p_adjusted"] < 0.05
    return out
