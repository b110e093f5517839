"""Is run A really better than run B?  Paired tests over the per-query values.

* :func:`randomization_test`: paired, two-sided sign-flip randomization test of
  the mean difference (Fisher; Smucker, Allan & Carterette, CIKM 2007).  Exact
  (all 2^n sign patterns) for n <= 16 queries, else ``n_resamples`` random
  sign patterns with p = (hits + 1) / (n_resamples + 1).
* :func:`holm`: Holm's step-down correction for the m pairwise comparisons.
* :func:`bootstrap_ci`: percentile bootstrap confidence interval of a mean.
* :func:`pairwise`: every pair of runs, oriented by the measure's direction
  (a positive ``mean_diff`` and a win always mean run A is better).

Everything is seeded (``seed``) and reproducible.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from .measures.registry import column_higher_is_better

#: Up to this many queries, every sign pattern is enumerated (exact p-value).
EXACT_UP_TO = 16


def randomization_test(a: np.ndarray, b: np.ndarray, *, n_resamples: int = 10_000, seed: int = 0) -> float:
    """Two-sided p-value of H0 "mean(a - b) = 0" by flipping the signs of the differences.

    p = P(|mean(s * d)| >= |mean(d)|) over sign patterns s.  Identical runs
    give p = 1.

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
    if n <= EXACT_UP_TO:
        patterns = ((np.arange(2**n)[:, None] >> np.arange(n)[None, :]) & 1) * 2 - 1
        means = np.abs(patterns @ d) / n
        return float((means >= observed - tol).sum() / 2**n)
    rng = np.random.default_rng(seed)
    hits = 0
    done = 0
    chunk = max(1, 2_000_000 // n)
    while done < n_resamples:
        k = min(chunk, n_resamples - done)
        signs = rng.integers(0, 2, size=(k, n), dtype=np.int8) * 2 - 1
        hits += int((np.abs(signs @ d) / n >= observed - tol).sum())
        done += k
    return float((hits + 1) / (n_resamples + 1))


def holm(p_values: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error rate).

    p_(i) adjusted = max_{j <= i} min(1, (m - j + 1) p_(j)) for the sorted p.

    >>> holm(np.array([0.01, 0.04, 0.03])).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p_values, dtype=np.float64)
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.maximum.accumulate(scaled)
    out = np.empty(m)
    out[order] = adjusted
    return out


def bootstrap_ci(values: np.ndarray, *, n_resamples: int = 10_000, level: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean (queries resampled)."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    chunk = max(1, 2_000_000 // v.size)
    for start in range(0, n_resamples, chunk):
        k = min(chunk, n_resamples - start)
        idx = rng.integers(0, v.size, size=(k, v.size))
        means[start : start + k] = v[idx].mean(axis=1)
    lo, hi = np.quantile(means, [(1 - level) / 2, 1 - (1 - level) / 2])
    return float(lo), float(hi)


def pairwise(
    per_query: pd.DataFrame,
    measure: str,
    runs: list[str],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    alpha: float = 0.05,
    higher_is_better: bool | None = None,
) -> pd.DataFrame:
    """Every pair of runs, oriented so that a positive difference means run A is better.

    For each pair (A, B) in ``runs`` order (leaderboard order: A is the run
    ranked higher): the mean difference, win/tie/loss counts, the p-value of
    the randomization test on ``measure`` and its Holm-adjusted value.

    Parameters
    ----------
    per_query : DataFrame
        run, query and a column ``measure``.
    measure : str
        The measure compared.
    runs : list of str
        The runs, in the order the pairs are formed.
    n_resamples, seed : int
        Passed to :func:`randomization_test` (pair i uses ``seed + i``).
    alpha : float
        Level of the ``significant`` column (on the Holm-adjusted p-value).
    higher_is_better : bool, optional
        The measure's direction; by default the registry's
        (:func:`~shrec_score.measures.column_higher_is_better`; a column with
        no direction counts as higher-is-better).

    Returns
    -------
    DataFrame
        run_a, run_b, queries, mean_diff, wins, ties, losses, p_value,
        p_adjusted, significant.  ``mean_diff`` is mean(A - B) for a
        higher-is-better measure and mean(B - A) for a lower-is-better one
        (FP_*, FN_*), so positive always means A is better; ``wins`` counts
        the queries where A is better, ``losses`` those where B is.  The
        two-sided p-value does not depend on the orientation.

    Notes
    -----
    Only queries where both runs have a value are compared.

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
        rows.append(
            {
                "run_a": ra,
                "run_b": rb,
                "queries": len(pair),
                "mean_diff": float(better.mean()) if len(pair) else float("nan"),
                "wins": int((better > 0).sum()),
                "ties": int((better == 0).sum()),
                "losses": int((better < 0).sum()),
                "p_value": randomization_test(a, b, n_resamples=n_resamples, seed=seed + i),
            }
        )
    out = pd.DataFrame(rows, columns=["run_a", "run_b", "queries", "mean_diff", "wins", "ties", "losses", "p_value"])
    out["p_adjusted"] = holm(out["p_value"].to_numpy()) if len(out) else []
    out["significant"] = out["p_adjusted"] < alpha
    return out
