"""The per-query explorer of the results page: its section and the JSON block the page's script reads
(per-query values as whole numbers, value x 10^4 rounded)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..errors import visible
from ..measures.registry import column_higher_is_better, display_name
from .tables import number

if TYPE_CHECKING:
    from ..report import Report

#: Explorer data: at most this many per-query values (runs x queries x measures) for every measure.
EXPLORER_BUDGET = 300_000


def explorer_measures(report: Report) -> list[str]:
    """The measures the explorer holds: every measure, or (past :data:`EXPLORER_BUDGET`) the shown ones and rank-by."""
    pq = report.tables["per_query"]
    every = [m for m in report.measures if m in pq.columns]
    if len(pq) * len(every) <= EXPLORER_BUDGET:
        return every
    return [m for m in dict.fromkeys([report.sort, *report.shown, report.rank_by]) if m and m in pq.columns]


def scaled(value: Any) -> int | None:
    """A per-query value for the JSON block: round(value x 10^4), None when undefined."""
    v = number(value)
    return None if v is None or math.isinf(v) else int(round(v * 10_000))


def explorer_data(report: Report) -> dict[str, Any]:
    pq = report.per_query
    runs = [str(r) for r in report.leaderboard["run"]]
    queries = list(dict.fromkeys(pq["query"]))
    qpos, rpos = {q: i for i, q in enumerate(queries)}, {r: i for i, r in enumerate(runs)}
    measures = explorer_measures(report)
    classes = None
    if "class" in pq.columns:
        first = pq.drop_duplicates("query")
        cls_of = dict(zip(first["query"], first["class"]))
        classes = [visible(str(cls_of[q])) for q in queries]
    row_runs = [rpos.get(str(r)) for r in pq["run"]]  # None: a run outside the leaderboard, left out
    row_queries = [qpos[q] for q in pq["query"]]
    values: dict[str, list[list[int | None]]] = {m: [[None] * len(queries) for _ in runs] for m in measures}
    for m in measures:
        for r, q, v in zip(row_runs, row_queries, pq[m].tolist()):
            if r is not None:
                values[m][r][q] = scaled(v)
    return {
        "scale": 10_000,
        "runs": [visible(r) for r in runs],
        "queries": [visible(str(q)) for q in queries],
        "classes": classes,
        "measures": measures,
        "labels": [display_name(m) for m in measures],
        "higher": [column_higher_is_better(m) for m in measures],
        "sort": report.sort,
        "values": values,
    }


def explorer(report: Report) -> dict[str, Any]:
    """What the explorer's section says: how many measures it holds and leaves out, whether it filters by class."""
    held, columns = explorer_measures(report), report.tables["per_query"].columns
    left_out = [m for m in report.measures if m in columns and m not in held]
    return {"held": len(held), "left_out": len(left_out), "classes": "class" in columns}
