"""The organiser's results page: one self-contained ``index.html``.

:func:`to_html` returns the page as text, :func:`html_files` as
``{"index.html": text}`` and :func:`write_html` writes it through
:mod:`shrec_score.outdir`'s transaction (``--html DIR`` on the command line).

The page needs nothing from the network (no CDN, no web font, no external
script or style sheet): it works opened from ``file://``, from a static web
host and offline.  Sections, in this order (each a ``<section>`` with a
stable ``id``): ``summary`` (title, description, date, signature),
``leaderboard`` (every measure column, the shown ones first, sortable, the best value of each
column in bold with a star, bootstrap intervals and the significance group
when computed), ``plots`` (matplotlib's SVGs inline, each with a
``<title>``), ``significance`` (the pairwise tests), ``per-class`` (a heat
map of the sort measure), ``per-query`` (an explorer written in a small
hand-written script) and ``files`` (links to the CSV files written beside
the page).

Generation uses the standard library only: every text from input (run
names, class names, query ids, the description, the signature) goes through
:func:`text` (control characters made visible, then :func:`html.escape`)
in HTML text and attributes, and through :func:`json_for_script` in the
``<script type="application/json">`` block, where ``<``, ``>``, ``&``,
U+2028 and U+2029 are written as ``\\uXXXX`` escapes, so no ``</script>``
or ``<!--`` can occur inside it.  The script reads that block with
``JSON.parse`` and writes into the page with ``textContent`` only.

Per-query values sit in the JSON block as whole numbers, value x 10^4
rounded (the page shows 4 decimals, as the Markdown and the terminal do;
the CSV files keep full precision), so a 20-run, 1,000-query contest with
the six default measures stays under 1 MB.  When runs x queries x measures
exceeds :data:`EXPLORER_BUDGET`, the explorer holds the shown measures
(the leaderboard's Markdown columns) and the rank-by measure only, and
says so.
"""

from __future__ import annotations

import datetime
import html
import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .errors import visible
from .measures.registry import column_higher_is_better, display_name
from .outdir import publish

if TYPE_CHECKING:
    from .report import Report

#: Explorer data: at most this many per-query values (runs x queries x measures) for every measure.
EXPLORER_BUDGET = 300_000

#: Printed, a wide leaderboard is cut into tables of rank, run and this many more columns (A4 at 9 pt).
PRINT_COLUMNS = 8

_RUN_TH = '<th scope="col" class="run">'

#: Plot file stem (see :func:`shrec_score.plots.plot_files`) -> accessible title.
PLOT_TITLES = {
    "pr_curves": "Precision-recall curves of every run (mean precision at each recall level)",
    "ndcg_vs_rank": "Mean normalized discounted cumulated gain (NDCG) against rank, every run",
    "cg_vs_recall": "Mean cumulated gain (CG) and discounted cumulated gain (DCG) against recall, every run",
}

BEST = "\u2605"  # the star next to a best value
NEAR_BEST = "\u2248"  # "not significantly different from the best"


def text(value: Any) -> str:
    """``value`` as HTML text or attribute value: control characters visible, then escaped.

    >>> text('<a href="x">&</a>')
    '&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;'
    """
    return html.escape(visible(str(value)), quote=True)


_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def json_for_script(data: Any) -> str:
    """``data`` as JSON safe inside ``<script type="application/json">``.

    ``<``, ``>``, ``&``, U+2028 and U+2029 are written as ``\\uXXXX``
    escapes (the same string for ``JSON.parse``), so neither ``</script>``
    nor ``<!--`` can appear in the block.

    >>> json_for_script({"run": "</script><!--"})
    '{"run":"\\\\u003c/script\\\\u003e\\\\u003c!--"}'
    """
    raw = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return re.sub("[<>&\u2028\u2029]", lambda m: _JSON_ESCAPES[m.group()], raw)


def fmt(value: Any) -> str:
    """A value as the tables show it: 4 decimals, empty when undefined."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{float(value):.4f}"
    return str(value)


def _num(value: Any) -> float | None:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def _dv(value: Any) -> str:
    """A cell's sort key (``data-v``): the number, or empty when undefined (sorted last)."""
    v = _num(value)
    return "" if v is None else repr(v)


def _scaled(value: Any) -> int | None:
    """A per-query value for the JSON block: round(value x 10^4), None when undefined."""
    v = _num(value)
    return None if v is None or math.isinf(v) else int(round(v * 10_000))


# -- the page ---------------------------------------------------------------


def to_html(
    report: Report,
    *,
    title: str | None = None,
    description: str | None = None,
    date: str | None = None,
    figures: Mapping[str, bytes] | None = None,
    plots: bool = True,
    links: Mapping[str, str] | None = None,
) -> str:
    """The results page of ``report``, one self-contained HTML document.

    Parameters
    ----------
    report : Report
        A scored report.
    title : str, optional
        The page's heading (default: "Results", after the description when given).
    description : str, optional
        The track's description (a preset's ``description``).
    date : str, optional
        The date shown (default: today, UTC, ``YYYY-MM-DD``); give it for a
        byte-identical page.
    figures : mapping of file name to bytes, optional
        The figures of :func:`shrec_score.plots.plot_files`; the ``.svg``
        ones are put inline.  When None and ``plots`` is true, they are
        drawn here if matplotlib is installed (else the page says so).
    plots : bool, default True
        False: no plot section.
    links : mapping of label to href, optional
        Files written beside the page (``per_run.csv`` -> ``../per_run.csv``).
    """
    if date is None:
        date = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    heading = title or "Retrieval results"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta name="generator" content="shrec-score {text(report.signature.get("version", ""))}">',
        f"<title>{text(description or heading)}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        '<a class="skip" href="#leaderboard">Skip to the leaderboard</a>',
        "<main>",
        _summary(report, heading, description, date),
        _leaderboard(report),
    ]
    if plots:
        parts.append(_plots(report, figures))
    if report.significance is not None:
        parts.append(_significance(report))
    parts.append(_per_class(report))
    parts.append(_explorer(report))
    parts.append(_files(links))
    parts += [
        "</main>",
        f'<script type="application/json" id="shrec-data">{json_for_script(_explorer_data(report))}</script>',
        f"<script>{_JS}</script>",
        "</body>",
        "</html>",
    ]
    return "\n".join(parts) + "\n"


def html_files(report: Report, **kwargs: Any) -> dict[str, str]:
    """``{"index.html": to_html(report, **kwargs)}``: the files of ``--html``."""
    return {"index.html": to_html(report, **kwargs)}


def write_html(report: Report, out_dir: str | os.PathLike[str], **kwargs: Any) -> list[str]:
    """Replace the folder ``out_dir`` with ``index.html``, as one unit (:func:`shrec_score.outdir.publish`).

    Keyword arguments are those of :func:`to_html`.  Returns the paths written.
    """
    return publish(out_dir, html_files(report, **kwargs))


def _section(ident: str, heading: str, body: Iterable[str]) -> str:
    return "\n".join([f'<section id="{ident}" aria-labelledby="{ident}-h">', f'<h2 id="{ident}-h">{heading}</h2>', *body, "</section>"])


def _summary(report: Report, heading: str, description: str | None, date: str) -> str:
    sig = "".join(f"<dt>{text(k)}</dt><dd>{text(v)}</dd>" for k, v in report.signature.items())
    out = ['<header id="summary">', f"<h1>{text(heading)}</h1>"]
    if description:
        out.append(f'<p class="description">{text(description)}</p>')
    runs, queries = len(report.leaderboard), report.per_query["query"].nunique() if len(report.per_query) else 0
    out.append(
        f'<p class="meta">Scored on <time datetime="{text(date)}">{text(date)}</time>; {runs} run{"s" if runs != 1 else ""}, '
        f"{queries} quer{'ies' if queries != 1 else 'y'}; leaderboard sorted by {text(display_name(report.sort))}.</p>"
    )
    out.append(f'<details class="signature" open><summary>Signature (every setting that changes a number)</summary><dl>{sig}</dl></details>')
    if report.warnings:
        out.append('<ul class="warnings">' + "".join(f"<li>{text(w)}</li>" for w in report.warnings) + "</ul>")
    out.append("</header>")
    return "\n".join(out)


def _head(label: str, column_kind: str, first: str, extra: str = "", title: str = "") -> str:
    """A sortable header cell: a ``<button>`` inside ``<th>``."""
    t = f' title="{text(title)}"' if title else ""
    return f'<th scope="col" data-kind="{column_kind}" data-first="{first}"{extra}><button type="button"{t}>{label}</button></th>'


def _arrow(higher: bool | None) -> str:
    if higher is None:
        return ""
    return ' <span class="dir" aria-hidden="true">' + ("\u2191" if higher else "\u2193") + "</span>"


def _best_of(values: Sequence[Any], higher: bool | None) -> str | None:
    """The formatted best value of a column (ties at 4 decimals are all best)."""
    nums = [v for v in (_num(x) for x in values) if v is not None]
    if higher is None or not nums:
        return None
    return fmt(max(nums) if higher else min(nums))


def _num_cell(value: Any, best: str | None) -> str:
    shown, data = fmt(value), _dv(value)
    if best is not None and shown and shown == best:
        return f'<td class="num best" data-v="{data}"><strong>{shown}</strong> <span class="star" role="img" aria-label="best">{BEST}</span></td>'
    return f'<td class="num" data-v="{data}">{shown}</td>'


def _near_best(report: Report) -> dict[str, tuple[str, float | None]]:
    """run -> (group label, Holm p against the best run), from the pairwise tests."""
    sig = report.significance
    if sig is None or not len(report.leaderboard):
        return {}
    best = str(report.leaderboard["run"].iloc[0])
    out: dict[str, tuple[str, float | None]] = {best: ("best", None)}
    for rec in sig.itertuples(index=False):
        a, b = str(rec.run_a), str(rec.run_b)
        if best not in (a, b):
            continue
        other = b if a == best else a
        p = _num(rec.p_adjusted)
        out[other] = ("not significantly different from the best" if not bool(rec.significant) else "significantly worse than the best", p)
    return out


def _leaderboard(report: Report) -> str:
    board = report.leaderboard
    # the shown columns first (those of the Markdown and the terminal, the sort measure among them), then every other
    measures = [m for m in dict.fromkeys([*report.shown, *report.measures]) if m in board.columns]
    ci_low, ci_high = f"{report.sort}_ci_low", f"{report.sort}_ci_high"
    has_ci = ci_low in board.columns and ci_high in board.columns
    groups = _near_best(report)
    # columns as (key, sortable header, plain header for print); the interval and the group follow the sort measure
    cols: list[tuple[str, str, str]] = [
        ("rank", _head("rank", "num", "asc", ""), "rank"),
        ("run", _head("run", "text", "asc", ' class="run"'), "run"),
        ("queries", _head("queries", "num", "desc"), "queries"),
    ]
    for m in measures:
        higher = column_higher_is_better(m)
        aria = ""
        if m == report.sort:
            aria = ' aria-sort="ascending"' if higher is False else ' aria-sort="descending"'
        where = "higher is better" if higher else "lower is better" if higher is False else "no direction"
        label = text(display_name(m)) + _arrow(higher)
        cols.append((m, _head(label, "num", "asc" if higher is False else "desc", aria, f"{display_name(m)}: {where}"), label))
        if m == report.sort and has_ci:
            ci_head = f"95% CI of {text(display_name(report.sort))}"
            cols.append(("ci", f'<th scope="col">{ci_head}</th>', ci_head))
        if m == report.sort and groups:
            cols.append(("group", _head("vs best", "num", "desc", "", "Holm-adjusted p-value against the best run (sorted: the best run, then the largest p)"), "vs best"))
    best = {m: _best_of(list(board[m]), column_higher_is_better(m)) for m in measures}
    rows: list[dict[str, str]] = []
    for i in range(len(board)):
        rec = board.iloc[i]
        run = str(rec["run"])
        cells = {
            "rank": f'<td class="num" data-v="{int(rec["rank"])}">{int(rec["rank"])}</td>',
            "run": f'<th scope="row" class="run">{text(run)}</th>',
            "queries": f'<td class="num" data-v="{int(rec["queries"])}">{int(rec["queries"])}</td>',
        }
        cells.update({m: _num_cell(rec[m], best[m]) for m in measures})
        if has_ci:
            lo, hi = fmt(rec[ci_low]), fmt(rec[ci_high])
            cells["ci"] = f'<td class="num ci">{lo}&ndash;{hi}</td>' if lo and hi else '<td class="num ci"></td>'
        if groups:
            label, p = groups.get(run, ("", None))
            if label == "best":
                cells["group"] = f'<td class="num group" data-v="2"><span class="g-best">best {BEST}</span></td>'
            elif label.startswith("not"):
                cells["group"] = f'<td class="num group" data-v="{_dv(p)}"><span class="g-near" title="{label}">{NEAR_BEST} best</span> <small>p={fmt(p)}</small></td>'
            elif label:
                cells["group"] = f'<td class="num group" data-v="{_dv(p)}"><span title="{label}">worse</span> <small>p={fmt(p)}</small></td>'
            else:
                cells["group"] = '<td class="num group" data-v=""></td>'
        rows.append(cells)
    heads = [h for _, h, _ in cols]
    body_rows = ["<tr>" + "".join(r[k] for k, _, _ in cols) + "</tr>" for r in rows]
    legend = [
        f"<li><strong>bold</strong> and {BEST}: the best value of the column (ties at 4 decimals all marked)</li>",
        "<li>\u2191 higher is better, \u2193 lower is better; the first click on a header sorts best first, the next one reverses</li>",
    ]
    if has_ci:
        legend.append(f"<li>95% CI: percentile bootstrap interval of the mean {text(display_name(report.sort))} over queries</li>")
    if groups:
        legend.append(
            f"<li>vs best: <span class=\"g-near\">{NEAR_BEST} best</span> = not significantly different from the best run "
            f"(paired randomization test on {text(display_name(report.sort))}, Holm-corrected, p &ge; 0.05); "
            "worse = significantly worse; p = Holm-adjusted p-value</li>"
        )
    caption = f"Mean of every measure per run, best first by {text(display_name(report.sort))}"
    chunks = [cols[i : i + PRINT_COLUMNS] for i in range(2, len(cols), PRINT_COLUMNS)]
    body = [
        f'<div class="scroll{" screen-only" if len(chunks) > 1 else ""}" tabindex="0" role="region" aria-labelledby="leaderboard-h">'
        f'<table class="sortable" id="leaderboard-table"><caption>{caption}</caption>'
        f"<thead><tr>{''.join(heads)}</tr></thead><tbody>{''.join(body_rows)}</tbody></table></div>",
    ]
    if len(chunks) > 1:  # printed: the same table in slices of columns that fit A4, each with rank and run
        for n, chunk in enumerate(chunks, 1):
            part = [*cols[:2], *chunk]
            head = "".join((_RUN_TH if k == "run" else "<th scope=\"col\">") + f"{label}</th>" for k, _, label in part)
            trs = "".join("<tr>" + "".join(r[k] for k, _, _ in part) + "</tr>" for r in rows)
            body.append(
                f'<div class="scroll print-only"><table><caption>{caption} ({n} of {len(chunks)})</caption>'
                f"<thead><tr>{head}</tr></thead><tbody>{trs}</tbody></table></div>"
            )
    body.append('<ul class="legend">' + "".join(legend) + "</ul>")
    return _section("leaderboard", "Leaderboard", body)


# -- plots ------------------------------------------------------------------


def _plot_title(stem: str, report: Report) -> str:
    if stem.startswith("per_class_"):
        return f"{display_name(report.sort)} per class, one bar per run"
    return PLOT_TITLES.get(stem, stem.replace("_", " "))


def _figures(report: Report, figures: Mapping[str, bytes] | None) -> dict[str, bytes] | None:
    if figures is not None:
        return dict(figures)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return None
    from .plots import plot_files

    return plot_files(report, formats=("svg",))


_SVG_JUNK = re.compile(r"<\?xml.*?\?>|<!DOCTYPE.*?>|<!--.*?-->|<metadata>.*?</metadata>", re.S)
_SVG_ID = re.compile(r'\bid="([^"]+)"')


def inline_svg(svg: str, prefix: str, title: str) -> str:
    """An SVG file's text made ready to sit inside the page.

    The XML prolog, the DOCTYPE, comments and metadata are dropped; every
    ``id`` becomes ``prefix`` and its number in order of appearance (two
    figures never share one, and matplotlib's random clip-path ids give way
    to the same ids at every scoring) and every reference to it follows; the root gets ``role="img"``, an ``aria-labelledby`` and
    a ``<title>`` (escaped).
    """
    svg = _SVG_JUNK.sub("", svg).strip()
    new = {old: f"{prefix}{i}" for i, old in enumerate(dict.fromkeys(_SVG_ID.findall(svg)))}
    if new:
        svg = _SVG_ID.sub(lambda m: f'id="{new[m.group(1)]}"', svg)
        svg = re.sub(r"#([A-Za-z_][\w.:-]*)", lambda m: f"#{new[m.group(1)]}" if m.group(1) in new else m.group(0), svg)
    title_id = f"{prefix}title"
    svg = re.sub(
        r"<svg\b([^>]*)>",
        lambda m: f'<svg{m.group(1)} role="img" aria-labelledby="{title_id}"><title id="{title_id}">{text(title)}</title>',
        svg,
        count=1,
    )
    return svg


def _plots(report: Report, figures: Mapping[str, bytes] | None) -> str:
    files = _figures(report, figures)
    if files is None:
        return _section("plots", "Plots", ['<p class="note">No plots: they need matplotlib (pip install \'shrec-score[plots]\').</p>'])
    body = []
    for i, (name, data) in enumerate((n, d) for n, d in files.items() if n.endswith(".svg")):
        stem = name[: -len(".svg")]
        title = _plot_title(stem, report)
        svg = inline_svg(data.decode("utf-8"), f"f{i}-", title)
        size = re.search(r'<svg[^>]*\bwidth="([\d.]+)pt"[^>]*\bheight="([\d.]+)pt"', svg)
        wide = size is not None and float(size.group(1)) > 1.7 * float(size.group(2))
        body.append(
            f'<figure class="plot{" wide" if wide else ""}"><div class="figbox">{svg}</div><figcaption>{text(title)}</figcaption></figure>'
        )
    if not body:
        return _section("plots", "Plots", ['<p class="note">No figure applies to this report.</p>'])
    return _section("plots", "Plots", ['<div class="plots">', *body, "</div>"])


# -- significance, per class ------------------------------------------------------


def _significance(report: Report) -> str:
    sig = report.significance
    assert sig is not None
    heads = [
        _head("run A", "text", "asc"),
        _head("run B", "text", "asc"),
        _head("mean diff", "num", "desc", "", "mean of A minus B, oriented: positive means A is better"),
        '<th scope="col">W/T/L</th>',
        _head("p", "num", "asc"),
        _head("p (Holm)", "num", "asc"),
        _head("significant", "text", "desc"),
    ]
    rows = []
    for rec in sig.itertuples(index=False):
        yes = bool(rec.significant)
        rows.append(
            "<tr>"
            f'<td>{text(rec.run_a)}</td><td>{text(rec.run_b)}</td>'
            f'<td class="num" data-v="{_dv(rec.mean_diff)}">{float(rec.mean_diff):+.4f}</td>'
            f'<td class="num">{int(rec.wins)}/{int(rec.ties)}/{int(rec.losses)}</td>'
            f'<td class="num" data-v="{_dv(rec.p_value)}">{fmt(rec.p_value)}</td>'
            f'<td class="num" data-v="{_dv(rec.p_adjusted)}">{fmt(rec.p_adjusted)}</td>'
            f"<td>{'<strong>yes</strong>' if yes else 'no'}</td>"
            "</tr>"
        )
    sort = text(display_name(report.sort))
    body = [
        f"<p>Paired randomization tests on {sort} between every two runs, Holm-corrected for the {len(sig)} comparisons; "
        "W/T/L: queries where run A wins, ties, loses.</p>",
        f'<div class="scroll" tabindex="0" role="region" aria-labelledby="significance-h"><table class="sortable"><caption>Pairwise tests on {sort}</caption>'
        f"<thead><tr>{''.join(heads)}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>",
    ]
    return _section("significance", "Pairwise significance", body)


def _per_class(report: Report) -> str:
    pc = getattr(report, "per_class", None)
    sort = report.sort
    if pc is None or sort not in pc.columns or not len(pc):
        return _section("per-class", "Per class", ['<p class="note">No per-class values in this scoring (TREC qrels and ground-truth scores have no classes).</p>'])
    runs = [str(r) for r in report.leaderboard["run"]]
    classes = list(dict.fromkeys(str(c) for c in pc["class"]))
    values: dict[tuple[str, str], Any] = {}
    counts: dict[str, int] = {}
    for run, cls, n, v in zip(pc["run"], pc["class"], pc["queries"], pc[sort]):
        values[(str(run), str(cls))] = v
        counts.setdefault(str(cls), int(n))
    higher = column_higher_is_better(sort)
    nums = [v for v in (_num(x) for x in values.values()) if v is not None]
    lo, hi = (min(nums), max(nums)) if nums else (0.0, 1.0)
    heads = [_head("class", "text", "asc", ' class="run"'), _head("queries", "num", "desc")]
    heads += [_head(text(r), "num", "asc" if higher is False else "desc") for r in runs]
    rows = []
    for cls in classes:
        row_vals = [values.get((r, cls)) for r in runs]
        best = _best_of(row_vals, higher)
        cells = [f'<th scope="row" class="run">{text(cls)}</th>', f'<td class="num" data-v="{counts.get(cls, 0)}">{counts.get(cls, 0)}</td>']
        for v in row_vals:
            cell = _num_cell(v, best)
            x = _num(v)
            if x is not None:
                good = 0.5 if hi == lo else (x - lo) / (hi - lo)
                if higher is False:
                    good = 1 - good
                light = 97 - round(35 * good)
                cell = cell.replace("<td ", f'<td style="background:hsl(205,75%,{light}%)" ', 1)
            cells.append(cell)
        rows.append("<tr>" + "".join(cells) + "</tr>")
    name = text(display_name(sort))
    body = [
        f"<p>Mean {name} per class (rows) and run (columns): the darker the cell, the better the value "
        f"(scale {fmt(lo)} to {fmt(hi)}); the best run of each class in bold with {BEST}.</p>",
        f'<div class="scroll" tabindex="0" role="region" aria-labelledby="per-class-h"><table class="sortable heat"><caption>{name} per class and run</caption>'
        f"<thead><tr>{''.join(heads)}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>",
    ]
    return _section("per-class", "Per class", body)


# -- per-query explorer ----------------------------------------------------------------


def explorer_measures(report: Report) -> list[str]:
    """The measures the explorer holds: every measure, or (past :data:`EXPLORER_BUDGET`) the shown ones and rank-by."""
    pq = report.per_query
    every = [m for m in report.measures if m in pq.columns]
    if len(pq) * len(every) <= EXPLORER_BUDGET:
        return every
    picked = [m for m in dict.fromkeys([report.sort, *report.shown, report.rank_by]) if m and m in pq.columns]
    return picked


def _explorer_data(report: Report) -> dict[str, Any]:
    pq = report.per_query
    runs = [str(r) for r in report.leaderboard["run"]]
    queries = list(dict.fromkeys(pq["query"]))
    qpos = {q: i for i, q in enumerate(queries)}
    measures = explorer_measures(report)
    has_class = "class" in pq.columns
    classes: list[str] | None = None
    if has_class:
        first = pq.drop_duplicates("query")
        cls_of = dict(zip(first["query"], first["class"]))
        classes = [visible(str(cls_of[q])) for q in queries]
    values: dict[str, list[list[int | None]]] = {m: [] for m in measures}
    groups = {str(r): sub for r, sub in pq.groupby("run", sort=False)}
    for run in runs:
        sub = groups.get(run)
        pos = [qpos[q] for q in sub["query"]] if sub is not None else []
        for m in measures:
            col: list[int | None] = [None] * len(queries)
            if sub is not None:
                for p, v in zip(pos, sub[m].tolist()):
                    col[p] = _scaled(v)
            values[m].append(col)
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


def _explorer(report: Report) -> str:
    measures = explorer_measures(report)
    left_out = [m for m in report.measures if m in report.per_query.columns and m not in measures]
    note = ""
    if left_out:
        note = (
            f'<p class="note">The explorer holds {len(measures)} of the {len(measures) + len(left_out)} measures '
            f"(the leaderboard's main columns; a page of every measure would be too large); "
            "every value of every measure is in per_query.csv.</p>"
        )
    has_class = "class" in report.per_query.columns
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
    return _section("per-query", "Per-query explorer", [b for b in body if b])


def _files(links: Mapping[str, str] | None) -> str:
    if not links:
        return _section("files", "Files", ['<p class="note">No data files were written beside this page (use --out with --html).</p>'])
    items = "".join(f'<li><a href="{text(href)}">{text(label)}</a></li>' for label, href in links.items())
    return _section("files", "Files", ["<p>Written beside this page by the same scoring:</p>", f'<ul class="files">{items}</ul>'])


_CSS = """
:root{--fg:#1a1a1a;--muted:#555;--line:#c8c8c8;--head:#f0f3f7;--best:#0b3d91}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);background:#fff}
main{max-width:1200px;margin:0 auto;padding:12px 16px 40px}
h1{font-size:1.6em;margin:.4em 0 .2em}h2{font-size:1.25em;margin:1.6em 0 .5em;border-bottom:1px solid var(--line);padding-bottom:.2em}
h3{font-size:1.05em}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:#fff;padding:4px;z-index:2}
.description{font-size:1.1em;margin:.2em 0}.meta,.note,.status{color:var(--muted)}
.signature dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:.4em 0;font-size:.9em}
.signature dt{font-weight:600}.signature dd{margin:0;overflow-wrap:anywhere}
.warnings{color:#8a4b00;font-size:.9em}
.scroll{overflow-x:auto;width:fit-content;max-width:100%;border:1px solid var(--line);border-radius:4px}
.scroll.tall{max-height:70vh;overflow-y:auto}
table{border-collapse:collapse;font-size:.9em;font-variant-numeric:tabular-nums}
caption{text-align:left;padding:4px 6px;color:var(--muted);font-size:.9em}
th,td{padding:3px 8px;border-bottom:1px solid #e4e4e4;white-space:nowrap;text-align:left}
td.num{text-align:right}
thead th{background:var(--head);position:sticky;top:0;z-index:1;vertical-align:bottom}
th.run{position:sticky;left:0;background:#fff;z-index:1;max-width:16em;overflow:hidden;text-overflow:ellipsis}
thead th.run{background:var(--head);z-index:2}
th button{font:inherit;font-weight:600;background:none;border:0;padding:2px 0;cursor:pointer;color:inherit;text-align:inherit;white-space:nowrap}
th button:focus-visible{outline:2px solid var(--best);outline-offset:1px}
th[aria-sort=ascending] button::after{content:" \\25B2"}th[aria-sort=descending] button::after{content:" \\25BC"}
.dir{color:var(--muted);font-weight:400}
td.best strong{color:var(--best)}.star{color:var(--best)}
.heat td.best strong,.heat .star{color:inherit}
.g-best,.g-near{font-weight:600}
.legend{font-size:.85em;color:var(--muted);padding-left:1.2em}
.plots{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,480px),1fr));gap:12px 24px}
figure.plot{margin:0;min-width:0}figure.wide{grid-column:1/-1}
.figbox{overflow-x:auto}
figure.plot svg{max-width:100%;height:auto;display:block}
figcaption{font-size:.9em;color:var(--muted)}
.controls{display:flex;flex-wrap:wrap;gap:8px 16px;margin:.5em 0}
.controls label{display:flex;flex-direction:column;font-size:.85em;color:var(--muted)}
.controls select,.controls input{font:inherit;font-size:1rem;max-width:80vw}
#pq-table td.q button{font:inherit;color:#0645ad;text-decoration:underline;background:none;border:0;padding:0;cursor:pointer;text-align:left}
#pq-table tr.sel{background:#fff6d5}#pq-table{min-width:min(28em,100%)}
.detail{margin-top:1em}
.files li{margin:.2em 0}
.print-only{display:none}
@media (max-width:600px){figure.wide svg{max-width:none;width:700px}body{font-size:14px}main{padding:8px}th,td{padding:3px 5px}.signature dl{grid-template-columns:auto 1fr;gap:2px 8px}}
@media print{
@page{size:A4;margin:12mm}
.screen-only{display:none!important}.print-only{display:block}
.skip,.controls,#per-query,.status{display:none!important}
thead{display:table-header-group}tr{break-inside:avoid}
figure.plot svg{max-height:24cm}figure.plot{break-inside:avoid}.plots{display:block}.figbox{overflow:visible}
h2{break-after:avoid}
td[style]{-webkit-print-color-adjust:exact;print-color-adjust:exact}
body{font-size:9pt}main{max-width:none;padding:0}
.scroll{overflow:visible;border:0;max-height:none}
thead th,th.run{position:static}th,td{padding:1px 4px}
}
html.printing body{font-size:9pt}html.printing main{max-width:none;padding:0}
html.printing .scroll{overflow:visible;border:0;max-height:none}
html.printing thead th,html.printing th.run{position:static}html.printing th,html.printing td{padding:1px 4px}
"""

_JS = r"""
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("shrec-data").textContent);
  var $ = function (id) { return document.getElementById(id); };
  function fmt(n) { return n === null || n === undefined ? "" : (n / D.scale).toFixed(4); }
  function el(tag, txt, cls) { var e = document.createElement(tag); if (txt !== undefined) e.textContent = txt; if (cls) e.className = cls; return e; }
  function cmp(a, b, asc, num) {
    var ea = a === null || a === "" || a === undefined, eb = b === null || b === "" || b === undefined;
    if (ea || eb) return ea === eb ? 0 : ea ? 1 : -1;  /* empty cells last, both ways */
    var r = num ? a - b : (a < b ? -1 : a > b ? 1 : 0);
    return asc ? r : -r;
  }
  function nextAsc(th) {
    var cur = th.getAttribute("aria-sort");
    return cur === "ascending" ? false : cur === "descending" ? true : th.getAttribute("data-first") === "asc";
  }
  function mark(ths, th, asc) {
    for (var i = 0; i < ths.length; i++) ths[i].removeAttribute("aria-sort");
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
  }
  /* static tables: every header with a button sorts its column */
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    var ths = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(ths, function (th, col) {
      var b = th.querySelector("button");
      if (!b) return;
      b.addEventListener("click", function () {
        var asc = nextAsc(th), num = th.getAttribute("data-kind") === "num", body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows).map(function (tr, i) {
          var c = tr.cells[col], v = num ? c.getAttribute("data-v") : c.textContent;
          return { tr: tr, i: i, v: num ? (v === "" || v === null ? null : parseFloat(v)) : v };
        });
        rows.sort(function (x, y) { return cmp(x.v, y.v, asc, num) || x.i - y.i; });
        rows.forEach(function (r) { body.appendChild(r.tr); });
        mark(ths, th, asc);
      });
    });
  });
  /* printing: the print sizes (class "printing", as @media print), then every table wider than
     the A4 text width (186 mm = 703 CSS px) shrunk to fit, so that none is cut */
  var A4 = 703;
  function fit() {
    document.documentElement.classList.add("printing");
    Array.prototype.forEach.call(document.querySelectorAll(".scroll > table"), function (t) {
      t.style.zoom = "";
      var need = t.scrollWidth;
      if (need > A4) t.style.zoom = String(Math.floor(A4 / need * 1000) / 1000);
    });
  }
  function unfit() {
    document.documentElement.classList.remove("printing");
    Array.prototype.forEach.call(document.querySelectorAll(".scroll > table"), function (t) { t.style.zoom = ""; });
  }
  window.addEventListener("beforeprint", fit);
  window.addEventListener("afterprint", unfit);
  window.shrecFitTables = fit;
  window.shrecUnfitTables = unfit;
  /* per-query explorer */
  var runSel = $("pq-run"), mSel = $("pq-measure"), cSel = $("pq-class"), qIn = $("pq-filter");
  if (!runSel) return;
  D.runs.forEach(function (r, i) { var o = el("option", r); o.value = i; runSel.appendChild(o); });
  D.measures.forEach(function (m, i) { var o = el("option", D.labels[i]); o.value = i; mSel.appendChild(o); if (m === D.sort) mSel.value = i; });
  if (cSel && D.classes) {
    var seen = {};
    D.classes.forEach(function (c) { if (!seen.hasOwnProperty(c)) { seen[c] = 1; var o = el("option", c); o.value = c; cSel.appendChild(o); } });
  }
  var table = $("pq-table"), ths = table.tHead.rows[0].cells, state = { key: null, asc: true }, selected = null;
  function render() {
    var run = +runSel.value, mi = +mSel.value, vals = D.values[D.measures[mi]][run];
    var cls = cSel ? cSel.value : "", q = qIn.value.toLowerCase(), idx = [];
    for (var i = 0; i < D.queries.length; i++) {
      if (cls && D.classes[i] !== cls) continue;
      if (q && D.queries[i].toLowerCase().indexOf(q) < 0) continue;
      idx.push(i);
    }
    if (state.key) {
      var key = state.key;
      idx.sort(function (a, b) {
        var x = key === "value" ? vals[a] : key === "class" ? D.classes[a] : D.queries[a];
        var y = key === "value" ? vals[b] : key === "class" ? D.classes[b] : D.queries[b];
        return cmp(x, y, state.asc, key === "value") || a - b;
      });
    }
    var body = document.createElement("tbody"), sum = 0, n = 0;
    idx.forEach(function (i) {
      var tr = document.createElement("tr"), td = el("td", undefined, "q"), b = el("button", D.queries[i]);
      b.type = "button"; b.setAttribute("data-q", i); td.appendChild(b); tr.appendChild(td);
      if (D.classes) tr.appendChild(el("td", D.classes[i]));
      tr.appendChild(el("td", fmt(vals[i]), "num"));
      if (i === selected) tr.className = "sel";
      body.appendChild(tr);
      if (vals[i] !== null) { sum += vals[i]; n++; }
    });
    table.replaceChild(body, table.tBodies[0]);
    $("pq-status").textContent = idx.length + " of " + D.queries.length + " queries shown; mean " + D.labels[mi] +
      " of the shown values: " + (n ? (sum / n / D.scale).toFixed(4) : "undefined") + " (" + n + " defined)";
  }
  Array.prototype.forEach.call(ths, function (th) {
    th.querySelector("button").addEventListener("click", function () {
      var key = th.getAttribute("data-key"), first = true;
      if (key === "value") { var h = D.higher[+mSel.value]; first = h === false; }
      var asc = state.key === key ? !state.asc : first;
      state = { key: key, asc: asc };
      mark(ths, th, asc);
      render();
    });
  });
  function detail(i) {
    selected = i;
    var box = $("pq-detail"), t = $("pq-detail-table");
    $("pq-detail-h").textContent = "Query " + D.queries[i] + (D.classes ? " (class " + D.classes[i] + ")" : "") + ": every run";
    var head = document.createElement("thead"), hr = document.createElement("tr");
    hr.appendChild(el("th", "run")); hr.cells[0].scope = "col";
    D.labels.forEach(function (l) { var th = el("th", l); th.scope = "col"; hr.appendChild(th); });
    head.appendChild(hr);
    var best = D.measures.map(function (m, mi) {
      var h = D.higher[mi], b = null;
      if (h === null) return null;
      D.runs.forEach(function (r, ri) { var v = D.values[m][ri][i]; if (v !== null && (b === null || (h ? v > b : v < b))) b = v; });
      return b;
    });
    var body = document.createElement("tbody");
    D.runs.forEach(function (r, ri) {
      var tr = document.createElement("tr"), th = el("th", r, "run"); th.scope = "row"; tr.appendChild(th);
      D.measures.forEach(function (m, mi) {
        var v = D.values[m][ri][i], td = el("td", undefined, "num");
        if (v !== null && v === best[mi]) { td.appendChild(el("strong", fmt(v))); td.appendChild(document.createTextNode(" \u2605")); td.className = "num best"; }
        else td.textContent = fmt(v);
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    t.replaceChild(head, t.tHead); t.replaceChild(body, t.tBodies[0]);
    box.hidden = false;
    render();
    box.focus();
  }
  table.addEventListener("click", function (ev) {
    var b = ev.target.closest ? ev.target.closest("button[data-q]") : null;
    if (b) detail(+b.getAttribute("data-q"));
  });
  [runSel, mSel, cSel].forEach(function (s) { if (s) s.addEventListener("change", render); });
  qIn.addEventListener("input", render);
  render();
})();
"""
