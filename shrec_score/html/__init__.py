"""The organiser's results page, one self-contained ``index.html`` (docs/outputs.md, "The results page"; its
escaping, printing and size rules: docs/architecture.md): the values of the Jinja2 template ``page.html`` (a
``<section>`` with a stable id per part), whose style sheet and script are ``report.css`` and ``report.js``."""

from __future__ import annotations

import html
import json
import math
import os
import re
import time
from collections.abc import Mapping
from importlib.resources import files
from typing import TYPE_CHECKING, Any, NamedTuple

from markupsafe import Markup

from ..aggregate import wide_values
from ..errors import InputError, visible
from ..measures.measure import column_higher_is_better, display_name
from ..outdir import publish
from ..plots import plot_files, renumber_svg_ids
from ..render import best_value, blank_note, html_template, significance_matrix, versus_best

if TYPE_CHECKING:
    from ..report import Report

__all__ = ["EXPLORER_BUDGET", "PLOT_TITLES", "PRINT_COLUMNS", "inline_svg", "json_for_script", "to_html", "write_html"]

#: Plot file stem (see :func:`shrec_score.plots.plot_files`) -> accessible title.
PLOT_TITLES = {
    "pr_curves": "Precision-recall curves of every run (mean precision at each recall level)",
    "ndcg_vs_rank": "Mean normalized discounted cumulated gain (NDCG) against rank, every run",
    "cg_vs_recall": "Mean cumulated gain (CG) and discounted cumulated gain (DCG) against recall, every run",
}
#: Printed, a wide leaderboard is cut into tables of rank, run and this many more columns (A4 at 9 pt).
PRINT_COLUMNS = 8

#: Explorer data: at most this many per-query values (runs x queries x measures) for every measure.
EXPLORER_BUDGET = 300_000


def to_html(
    report: Report, *, title: str | None = None, description: str | None = None, date: str | None = None,
    figures: Mapping[str, bytes] | None = None, plots: bool = True, links: Mapping[str, str] | None = None,
) -> str:
    """The results page of ``report``, one self-contained HTML document.

    ``title``: the heading and window title (default "Retrieval results"; the window then takes the
    description's first paragraph).  ``description``: plain text, escaped, a paragraph per block of lines.
    ``date``: shown as given (default: today, UTC, or SOURCE_DATE_EPOCH's day as reproducible builds do).
    ``figures``: :func:`shrec_score.plots.plot_files`'s files, the ``.svg`` ones put inline (None: drawn here if
    matplotlib is installed).  ``plots=False``: no plot section.  ``links``: label -> href of the files beside it.
    """
    sig, texts = report.significance, paragraphs(description or "")
    if date is None:
        epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
        date = time.strftime("%Y-%m-%d", time.gmtime(int(epoch) if epoch.isdigit() else None))
    matrix_runs, matrix = significance_matrix(report)
    data, columns = explorer_data(report), report.tables["per_query"].columns
    left_out = [m for m in report.measures if m in columns and m not in data["measures"]]
    page, css, script = (files(__name__).joinpath(name).read_text(encoding="utf-8")  # shipped beside this module
                         for name in ("page.html", "report.css", "report.js"))
    return html_template(page, fmt=fmt, key=sort_key).render(
        css=Markup(css), script=Markup(script), signature=report.signature,
        heading=title or "Retrieval results", window=title or (texts[0] if texts else "Retrieval results"),
        description=texts, date=date,
        runs=len(report.tables["leaderboard"]), queries=len(set(report.tables["per_query"]["query"].tolist())),
        sort=display_name(report.sort), board=leaderboard(report), print_columns=PRINT_COLUMNS, warnings=report.warnings,
        plots=_plots(report, figures) if plots else None, matrix_runs=matrix_runs, matrix=matrix,
        pairs=None if sig is None else list(sig.itertuples(index=False)), heat=per_class(report),
        explorer={"held": len(data["measures"]), "left_out": len(left_out), "classes": "class" in columns},
        links=links or {}, data=Markup(json_for_script(data)),
    )


def write_html(report: Report, out_dir: str | os.PathLike[str], **kwargs: Any) -> list[str]:
    """Replace the folder ``out_dir`` with ``index.html`` as one unit (keywords: :func:`to_html`'s); the paths written."""
    return publish(out_dir, {"index.html": to_html(report, **kwargs)})


def paragraphs(description: str) -> list[str]:
    """A plain-text description's paragraphs: split at blank lines, each one's lines joined by a space.

    >>> paragraphs("One\\nline.\\n\\n  Two.\\n")
    ['One line.', 'Two.']
    """
    blocks = re.split(r"\n[ \t]*\n", description.replace("\r\n", "\n").replace("\r", "\n"))
    return [" ".join(line.strip() for line in b.splitlines() if line.strip()) for b in blocks if b.strip()]


_SVG_JUNK = re.compile(r"<\?xml.*?\?>|<!DOCTYPE.*?>|<!--.*?-->|<metadata>.*?</metadata>", re.S)


def inline_svg(svg: str, prefix: str, title: str) -> str:
    """An SVG file's text ready to sit in the page: prolog, DOCTYPE, comments and metadata dropped, ids renumbered
    (:func:`~shrec_score.plots.renumber_svg_ids`), the root with ``role="img"`` and an escaped ``<title>``."""
    svg = renumber_svg_ids(_SVG_JUNK.sub("", svg).strip(), prefix)
    label = html.escape(visible(title))
    head = f' role="img" aria-labelledby="{prefix}title"><title id="{prefix}title">{label}</title>'
    return re.sub(r"<svg\b([^>]*)>", lambda m: f"<svg{m.group(1)}{head}", svg, count=1)


def _plots(report: Report, figures: Mapping[str, bytes] | None) -> str | list[dict[str, Any]]:
    """The figures to inline (svg, title, wide), or the note that says why there is none."""
    if figures is None:
        try:
            figures = plot_files(report, formats=("svg",))
        except InputError:  # what plot_files raises without matplotlib
            return "No plots: they need matplotlib (pip install 'shrec-score[plots]')."
    out = []
    for i, (name, data) in enumerate((n, d) for n, d in figures.items() if n.endswith(".svg")):
        stem = name[: -len(".svg")]
        bars = f"{display_name(report.sort)} per class, one bar per run" if stem.startswith("per_class_") else None
        title = bars or PLOT_TITLES.get(stem, stem.replace("_", " "))
        svg = inline_svg(data.decode("utf-8"), f"f{i}-", title)
        size = re.search(r'<svg[^>]*\bwidth="([\d.]+)pt"[^>]*\bheight="([\d.]+)pt"', svg)
        wide = size is not None and float(size.group(1)) > 1.7 * float(size.group(2))
        out.append({"svg": Markup(svg), "title": title, "wide": wide})
    return out or "No figure applies to this report."


class Column(NamedTuple):
    """A header cell: sortable (a ``<button>``) when it has a ``kind`` (``text``: a row's name), with an arrow when
    ``higher`` is not None."""

    key: str
    label: str
    kind: str = ""  # "num" or "text"; "" for a header that does not sort
    first: str = "desc"  # the first click's order
    title: str = ""
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
    """A value as the tables show it: 4 decimals, empty when undefined; a text (a user's own column) as it is."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return f"{float(value):.4f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


def sort_key(value: Any) -> str:
    """A cell's sort key (``data-v``): the number, or empty when undefined (sorted last)."""
    v = number(value)
    return "" if v is None else repr(v)


def leaderboard(report: Report) -> dict[str, Any]:
    """The leaderboard's columns (:class:`Column`), rows (dicts), best value per column and notes."""
    board, sort = report.leaderboard, report.sort
    # the sort measure first, so a phone shows it beside the run without scrolling (issue 31.15),
    # then the shown columns (those of the Markdown and the terminal), then every other
    measures = [m for m in dict.fromkeys([sort, *report.shown, *report.measures]) if m in board.columns]
    ci_low, ci_high = f"{sort}_ci_low", f"{sort}_ci_high"
    has_ci = ci_low in board.columns and ci_high in board.columns
    groups = versus_best(report)
    cols = [Column("rank", "rank", "num", "asc"), Column("run", "run", "text", "asc")]
    cols.append(Column("queries", "queries", "num"))
    for m in measures:  # the interval and the group follow the sort measure
        higher, name = column_higher_is_better(m), display_name(m)
        where = "higher is better" if higher else "lower is better" if higher is False else "no direction"
        first, aria = ("asc", "ascending") if higher is False else ("desc", "descending")
        cols.append(Column(m, name, "num", first, f"{name}: {where}", sort=aria if m == sort else "", higher=higher))
        if m == sort and has_ci:
            cols.append(Column("ci", f"95% CI of {name}"))
        if m == sort and groups:
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
    values = {(str(run), str(cls)): v for run, cls, v in zip(pc["run"], pc["class"], pc[sort])}
    first = pc.drop_duplicates("class")  # a class's queries: its first row's
    counts = {str(cls): int(n) for cls, n in zip(first["class"], first["queries"])}
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
    cols = [Column("class", "class", "text", "asc"), Column("queries", "queries", "num")]
    cols += [Column(r, r, "num", "asc" if higher is False else "desc") for r in runs]
    return {"cols": cols, "rows": rows, "lo": lo, "hi": hi}


def explorer_data(report: Report) -> dict[str, Any]:
    """The explorer's JSON block: runs, queries (and classes), each measure's (runs x queries) round(value x 10^4)
    (None: undefined); every measure, or past :data:`EXPLORER_BUDGET` the shown ones and rank-by."""
    pq = report.tables["per_query"]
    measures = [m for m in report.measures if m in pq.columns]
    if len(pq) * len(measures) > EXPLORER_BUDGET:
        measures = [m for m in dict.fromkeys([report.sort, *report.shown, report.rank_by]) if m and m in pq.columns]
    runs = [str(r) for r in report.tables["leaderboard"]["run"].tolist()]
    queries = list(dict.fromkeys(pq["query"].tolist()))
    values = {}
    for m in measures:  # a run outside the leaderboard left out
        wide = wide_values(pq, runs, m)[1].tolist()
        values[m] = [[int(round(v * 10_000)) if math.isfinite(v) else None for v in row] for row in wide]
    classes = None
    if "class" in pq.columns:
        cls_of = dict(zip(reversed(pq["query"].tolist()), reversed(pq["class"].tolist())))  # each query's first row
        classes = [visible(str(cls_of[q])) for q in queries]
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
