"""How much of a leaderboard the tie rule decides (``shrec-score ties``, check's tie warning; docs/ties.md):
each run scored under every tie mode, its best and worst place from its bounds against the others'."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from .api import Scoring, runs_for, score
from .loading import PathLike
from .measures import column_higher_is_better, get_measure
from .options import Options, measure_name
from .relevance import Relevance

if TYPE_CHECKING:
    import pandas as pd
else:
    from ._lazy import pd

#: The modes scored, in the columns' order.
MODES = ("pessimistic", "rule", "optimistic", "expected")
#: ``shrec-score check`` warns when the ties move a run's mean by more than this.
CHECK_THRESHOLD = 0.001


def tie_report(
    runs: Sequence[PathLike], relevance: PathLike | Relevance, *, measures: Sequence[str] | None = None,
    options: Options | None = None, **settings: Any,
) -> pd.DataFrame:
    """Per (measure, run), in the rule's leaderboard order: its mean under each mode, the spread,
    tied_queries and the places the ties allow.  Arguments as :func:`shrec_score.score`; ``measures``: default
    the sort measure.  Run records carry tie groups only when read with ``load_runs(..., ties=True)``."""
    opts = Options.of(options, settings)
    scoring = Scoring.start(relevance, opts)
    rel = scoring.relevance
    names = [measure_name(m) for m in measures] if measures else [scoring.sort]
    computed = [*scoring.names, *(m for m in names if m not in scoring.names)]
    exact = all(get_measure(m).ties_exact for m in computed) and opts.settings.depth is None
    run_objs, _ = runs_for(runs, rel, opts, ties=True)
    fixed = replace(opts, measures=tuple(computed), sort=scoring.sort, rank_by=scoring.rank_by, significance=False)
    modes = [m for m in MODES if m != "expected" or exact]  # only the leaderboards' means are read: no significance
    reports = {m: score(run_objs, rel, options=replace(fixed, settings=replace(opts.settings, ties=m))) for m in modes}
    boards = {mode: report.leaderboard.set_index("run") for mode, report in reports.items()}  # (a copy per read)
    per_query = {mode: reports[mode].per_query.set_index(["run", "query"]) for mode in ("pessimistic", "optimistic")}
    rows = [row for m in names for row in _rows(m, boards, per_query)]
    return pd.DataFrame(rows, columns=["measure", "run", *MODES, "spread", "tied_queries", "place", "best_place", "worst_place"])


def _rows(measure: str, boards: dict[str, pd.DataFrame], per_query: dict[str, pd.DataFrame]) -> Iterator[dict[str, Any]]:
    sign = -1.0 if column_higher_is_better(measure) is False else 1.0
    means = {mode: board[measure] for mode, board in boards.items()}

    def key(mean: float, run: str) -> tuple[float, str]:  # the leaderboard's order: best first, no value last, by name
        return (-sign * mean if np.isfinite(mean) else np.inf, run)

    order = sorted(means["rule"].index, key=lambda r: key(means["rule"][r], r))
    at_worst, at_best = means["pessimistic"].to_dict(), means["optimistic"].to_dict()  # whichever way is better
    for place, a in enumerate(order, 1):
        best = 1 + sum(key(at_worst[b], b) < key(at_best[a], a) for b in order if b != a)
        worst = 1 + sum(key(at_best[b], b) < key(at_worst[a], a) for b in order if b != a)
        p, o = (per_query[mode][measure].loc[a].to_numpy() for mode in ("pessimistic", "optimistic"))
        ok = np.isfinite(p) & np.isfinite(o)
        tied = float((p[ok] != o[ok]).mean()) if ok.any() else float("nan")
        values = {mode: float(means[mode].loc[a]) if mode in means else float("nan") for mode in MODES}
        yield {"measure": measure, "run": a, **values, "spread": abs(values["optimistic"] - values["pessimistic"]),
               "tied_queries": tied, "place": place, "best_place": min(best, place), "worst_place": max(worst, place)}


def tie_warnings(report: pd.DataFrame) -> list[str]:
    """One line per (run, measure) whose mean the ties move by more than :data:`CHECK_THRESHOLD`.

    >>> frame = pd.DataFrame([{"measure": "NN", "run": "a", "pessimistic": 0.5, "rule": 0.6, "optimistic": 0.7,
    ...     "spread": 0.2, "tied_queries": 0.25, "best_place": 1, "worst_place": 2}])
    >>> tie_warnings(frame)
    ["run 'a': ties move NN between 0.5000 (pessimistic) and 0.7000 (optimistic), rule 0.6000; 25% of the queries depend on the tie order; leaderboard place 1 to 2 (see 'shrec-score ties')"]
    """
    return [
        f"run {row.run!r}: ties move {row.measure} between {row.pessimistic:.4f} (pessimistic) and {row.optimistic:.4f} (optimistic), "
        f"rule {row.rule:.4f}; {row.tied_queries:.0%} of the queries depend on the tie order; "
        f"leaderboard place {row.best_place} to {row.worst_place} (see 'shrec-score ties')"
        for row in report.itertuples()
        if row.spread > CHECK_THRESHOLD
    ]

