"""What the results page's tables show, as plain values for its template (``page.html``): the leaderboard's
columns and rows and the per-class heat map; numbers as shown (:func:`fmt`) and sorted (:func:`sort_key`), the
JSON block's escaping (:func:`json_for_script`)."""

from __future__ import annotations

import json
import math
import re
from typing import TYPE_CHECKING, Any, NamedTuple

from ..measures.registry import column_higher_is_better, display_name
from ..notes import best_value, blank_note, versus_best

if TYPE_CHECKING:
    from ..report import Report

#: Printed, a wide leaderboard is cut into tables of rank, run and this many more columns (A4 at 9 pt).
PRINT_COLUMNS = 8


class Column(NamedTuple):
    """A header cell: sortable (a ``<button>``) when it has a ``kind``, with an arrow when ``higher`` is not None."""

    key: str
    label: str
    kind: str = ""  # "num" or "text"; "" for a header that does not sort
    first: str = "desc"  # the first click's order
    title: str = ""
    cls: str = ""
    sort: str = ""  # aria-sort of the column the table is sorted by
    higher: bool | None = None


def json_for_script(data: Any) -> str:
    """``data`` as JSON safe inside ``<script type="application/json">``: ``< > &``, U+2028 and U+2029 as
    ``\\uXXXX`` escapes (the same string for ``JSON.parse``), so neither ``</script>`` nor ``<!--`` appears.

    >>> json_for_script({"run": "</script><!--"})
    '{"run":"\\\\u003c/script\\\\u003e\\\\u003c!--"}'
    """
    raw = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return re.sub("[<>&\u2028\u2029]", lambda m: f"\\u{ord(m[0]):04x}", raw)


def number(value: Any) -> float | None:
    """``value`` as a float, None when it is undefined (NaN, None) or no number."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def fmt(value: Any) -> str:
    """A value as the tables show it: 4 decimals, empty when undefined."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return f"{float(value):.4f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


def sort_key(value: Any) -> str:
    """A cell's sort key (``data-v``): the number, or empty when undefined (sorted last)."""
    v = number(value)
    return "" if v is None else repr(v)


def _first(higher: bool | None) -> str:
    return "asc" if higher is False else "desc"


def leaderboard(report: Report) -> dict[str, Any]:
    """The leaderboard's columns (:class:`Column`), rows (dicts), best value per column and notes."""
    board = report.leaderboard
    # the sort measure first, so a phone shows it beside the run without scrolling (issue 31.15),
    # then the shown columns (those of the Markdown and the terminal), then every other
    measures = [m for m in dict.fromkeys([report.sort, *report.shown, *report.measures]) if m in board.columns]
    ci_low, ci_high = f"{report.sort}_ci_low", f"{report.sort}_ci_high"
    has_ci = ci_low in board.columns and ci_high in board.columns
    groups = versus_best(report)
    cols = [Column("rank", "rank", "num", "asc"), Column("run", "run", "text", "asc", cls="run")]
    cols.append(Column("queries", "queries", "num"))
    for m in measures:  # the interval and the group follow the sort measure
        higher = column_higher_is_better(m)
        where = "higher is better" if higher else "lower is better" if higher is False else "no direction"
        sort = ("ascending" if higher is False else "descending") if m == report.sort else ""
        name = display_name(m)
        cols.append(Column(m, name, "num", _first(higher), f"{name}: {where}", sort=sort, higher=higher))
        if m == report.sort and has_ci:
            cols.append(Column("ci", f"95% CI of {name}"))
        if m == report.sort and groups:
            title = "Holm-adjusted p-value against the best run (sorted: the best run, then the largest p)"
            cols.append(Column("group", "vs best", "num", title=title))
    rows = board.to_dict("records")
    for row in rows:
        row["run"] = str(row["run"])
        row.update(ci_low=row.get(ci_low), ci_high=row.get(ci_high), versus=groups.get(row["run"]))
    best = {m: best_value(list(board[m]), column_higher_is_better(m)) for m in measures}
    note = blank_note(report, measures)
    return {"cols": cols, "rows": rows, "best": best, "note": note, "has_ci": has_ci, "has_group": bool(groups)}


def per_class(report: Report) -> dict[str, Any] | None:
    """The heat map of the sort measure per class (rows) and run (columns); None without per-class values."""
    pc, sort = report.per_class, report.sort
    if pc is None or sort not in pc.columns or not len(pc):
        return None
    runs = [str(r) for r in report.leaderboard["run"]]
    values: dict[tuple[str, str], Any] = {}
    counts: dict[str, int] = {}
    for run, cls, n, v in zip(pc["run"], pc["class"], pc["queries"], pc[sort]):
        values[(str(run), str(cls))] = v
        counts.setdefault(str(cls), int(n))
    higher = column_higher_is_better(sort)
    nums = [v for v in (number(x) for x in values.values()) if v is not None]
    lo, hi = (min(nums), max(nums)) if nums else (0.0, 1.0)

    def light(value: Any) -> int | None:
        x = number(value)
        if x is None:
            return None
        good = 0.5 if hi == lo else (x - lo) / (hi - lo)
        return 97 - round(35 * (1 - good if higher is False else good))

    rows = []
    for cls in counts:
        row = [values.get((r, cls)) for r in runs]
        cells = [(v, light(v)) for v in row]
        rows.append({"cls": cls, "queries": counts[cls], "best": best_value(row, higher), "cells": cells})
    cols = [Column("class", "class", "text", "asc", cls="run"), Column("queries", "queries", "num")]
    cols += [Column(r, r, "num", _first(higher)) for r in runs]
    return {"cols": cols, "rows": rows, "lo": lo, "hi": hi}
