"""The per-query explorer of the results page: its section and the JSON block the page's script reads
(per-query values as whole numbers, value x 10^4 rounded)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import visible
from ..measures.registry import column_higher_is_better, display_name
from .cells import scaled, section

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


def explorer(report: Report) -> str:
    measures = explorer_measures(report)
    columns = report.tables["per_query"].columns
    left_out = [m for m in report.measures if m in columns and m not in measures]
    note = ""
    if left_out:
        note = (
            f'<p class="note">The explorer holds {len(measures)} of the {len(measures) + len(left_out)} measures '
            f"(the leaderboard's main columns; a page of every measure would be too large); "
            "every value of every measure is in per_query.csv.</p>"
        )
    has_class = "class" in columns
    body = [
        "<p>Choose a run and a measure to see its value on every query; filter by class or query id; "
        "sort by clicking a header; click a query to see every run's values on it side by side. "
        "Values are shown with 4 decimals.</p>",
        note,
        '<noscript><p class="note">The explorer needs JavaScript; the same values are in per_query.csv.</p></noscript>',
        '<div class="controls" id="pq-controls" role="group" aria-label="Explorer settings">',
        '<label>Run <select id="pq-run"></select></label>',
        '<label>Measure <select id="pq-measure"></select></label>',
        '<label>Class <select id="pq-class"><option value="">every class</option></select></label>' if has_class else "",
        '<label>Query id contains <input id="pq-filter" type="search" size="12"></label>',
        "</div>",
        '<p id="pq-status" class="status" aria-live="polite"></p>',
        '<div class="scroll tall" tabindex="0" role="region" aria-labelledby="per-query-h"><table id="pq-table">'
        "<caption>Per-query values of the chosen run and measure</caption>"
        '<thead><tr><th scope="col" data-key="query"><button type="button">query</button></th>'
        + ('<th scope="col" data-key="class"><button type="button">class</button></th>' if has_class else "")
        + '<th scope="col" data-key="value"><button type="button">value</button></th></tr></thead>'
        "<tbody></tbody></table></div>",
        '<div id="pq-detail" class="detail" hidden tabindex="-1"><h3 id="pq-detail-h"></h3>'
        '<div class="scroll" tabindex="0" role="region" aria-labelledby="pq-detail-h"><table id="pq-detail-table"><thead></thead><tbody></tbody></table></div></div>',
    ]
    return section("per-query", "Per-query explorer", [b for b in body if b])
