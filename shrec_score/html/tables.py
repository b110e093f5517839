"""The leaderboard, the pairwise tests and the per-class heat map of the results page: static tables that
the page's script sorts by any column."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..measures.registry import column_higher_is_better, display_name
from ..notes import Versus, blank_note, significance_matrix, versus_best
from .cells import (
    BEST,
    NEAR_BEST,
    arrow,
    best_of,
    fmt,
    header,
    num_cell,
    number,
    section,
    sort_key,
    text,
)

if TYPE_CHECKING:
    from ..report import Report

#: Printed, a wide leaderboard is cut into tables of rank, run and this many more columns (A4 at 9 pt).
PRINT_COLUMNS = 8

_RUN_TH = '<th scope="col" class="run">'


def leaderboard(report: Report) -> str:
    """The leaderboard section: the table, the note on its blank cells, the legend, then the report's warnings and notes."""
    board = report.leaderboard
    # then the shown columns (those of the Markdown and the terminal), then every other
    # the sort measure first, so a phone shows it beside the run without scrolling (issue 31.15)
    measures = [m for m in dict.fromkeys([report.sort, *report.shown, *report.measures]) if m in board.columns]
    ci_low, ci_high = f"{report.sort}_ci_low", f"{report.sort}_ci_high"
    has_ci = ci_low in board.columns and ci_high in board.columns
    groups = versus_best(report)
    # columns as (key, sortable header, plain header for print); the interval and the group follow the sort measure
    cols: list[tuple[str, str, str]] = [
        ("rank", header("rank", "num", "asc", ""), "rank"),
        ("run", header("run", "text", "asc", ' class="run"'), "run"),
        ("queries", header("queries", "num", "desc"), "queries"),
    ]
    for m in measures:
        higher = column_higher_is_better(m)
        aria = f' aria-sort="{"ascending" if higher is False else "descending"}"' if m == report.sort else ""
        where = "higher is better" if higher else "lower is better" if higher is False else "no direction"
        label = text(display_name(m)) + arrow(higher)
        cols.append((m, header(label, "num", "asc" if higher is False else "desc", aria, f"{display_name(m)}: {where}"), label))
        if m == report.sort and has_ci:
            ci_head = f"95% CI of {text(display_name(report.sort))}"
            cols.append(("ci", f'<th scope="col">{ci_head}</th>', ci_head))
        if m == report.sort and groups:
            cols.append(("group", header("vs best", "num", "desc", "", "Holm-adjusted p-value against the best run (sorted: the best run, then the largest p)"), "vs best"))
    best = {m: best_of(list(board[m]), column_higher_is_better(m)) for m in measures}
    rows: list[dict[str, str]] = []
    for i in range(len(board)):
        rec = board.iloc[i]
        run = str(rec["run"])
        cells = {
            "rank": f'<td class="num" data-v="{int(rec["rank"])}">{int(rec["rank"])}</td>',
            "run": f'<th scope="row" class="run">{text(run)}</th>',
            "queries": f'<td class="num" data-v="{int(rec["queries"])}">{int(rec["queries"])}</td>',
        }
        cells.update({m: num_cell(rec[m], best[m]) for m in measures})
        if has_ci:
            lo, hi = fmt(rec[ci_low]), fmt(rec[ci_high])
            cells["ci"] = f'<td class="num ci">{lo}&ndash;{hi}</td>' if lo and hi else '<td class="num ci"></td>'
        if groups:
            cells["group"] = _group_cell(groups.get(run))
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
    note = blank_note(report, measures)
    if note:
        body.append(f'<p class="note blank-note">{text(note)}</p>')
    body.append('<ul class="legend">' + "".join(legend) + "</ul>")
    if report.warnings:
        items = "".join(f"<li>{text(w)}</li>" for w in report.warnings)
        body.append(f'<ul class="warnings" aria-label="Warnings and notes">{items}</ul>')
    return section("leaderboard", "Leaderboard", body)


def _group_cell(v: Versus | None) -> str:
    """The "vs best" cell of a run (empty for a run the tests do not compare with the best)."""
    if v is None:
        return '<td class="num group" data-v=""></td>'
    if v.best:
        return f'<td class="num group" data-v="2"><span class="g-best">best {BEST}</span></td>'
    if v.significant:
        mark = '<span title="significantly worse than the best">worse</span>'
    else:
        mark = f'<span class="g-near" title="not significantly different from the best">{NEAR_BEST} best</span>'
    return f'<td class="num group" data-v="{sort_key(v.p_adjusted)}">{mark} <small>p={fmt(v.p_adjusted)}</small></td>'


def significance(report: Report) -> str:
    sig = report.significance
    assert sig is not None
    heads = [
        header("run A", "text", "asc"),
        header("run B", "text", "asc"),
        header("mean diff", "num", "desc", "", "mean of A minus B, oriented: positive means A is better"),
        '<th scope="col">W/T/L</th>',
        header("p", "num", "asc"),
        header("p (Holm)", "num", "asc"),
        header("significant", "text", "desc"),
    ]
    rows = []
    for rec in sig.itertuples(index=False):
        yes = bool(rec.significant)
        rows.append(
            "<tr>"
            f'<td>{text(rec.run_a)}</td><td>{text(rec.run_b)}</td>'
            f'<td class="num" data-v="{sort_key(rec.mean_diff)}">{float(rec.mean_diff):+.4f}</td>'
            f'<td class="num">{int(rec.wins)}/{int(rec.ties)}/{int(rec.losses)}</td>'
            f'<td class="num" data-v="{sort_key(rec.p_value)}">{fmt(rec.p_value)}</td>'
            f'<td class="num" data-v="{sort_key(rec.p_adjusted)}">{fmt(rec.p_adjusted)}</td>'
            f"<td>{'<strong>yes</strong>' if yes else 'no'}</td>"
            "</tr>"
        )
    sort = text(display_name(report.sort))
    body = [
        f"<p>Paired randomization tests on {sort} between every two runs, Holm-corrected for the {len(sig)} comparisons. "
        f"A cell is the row run against the column run: {UP} significantly better, {DOWN} significantly worse, "
        f"{SAME} not significantly different (p &ge; 0.05); the number is the Holm-adjusted p-value.</p>",
        _matrix(report),
        f'<details class="pairs"><summary>Every pair ({len(sig)} tests: mean difference, W/T/L, p-values)</summary>'
        "<p>W/T/L: queries where run A wins, ties, loses.</p>"
        f'<div class="scroll" tabindex="0" role="region" aria-labelledby="significance-h"><table class="sortable" id="pairs-table"><caption>Pairwise tests on {sort}</caption>'
        f"<thead><tr>{''.join(heads)}</tr></thead><tbody>{''.join(rows)}</tbody></table></div></details>",
    ]
    return section("significance", "Pairwise significance", body)


UP, DOWN, SAME = "\u25b2", "\u25bc", "\u2248"


def _matrix(report: Report) -> str:
    """The pairwise tests as a compact run x run matrix (:func:`shrec_score.notes.significance_matrix`)."""
    runs, cells = significance_matrix(report)
    heads = '<th scope="col" class="run">run</th>' + "".join(f'<th scope="col" class="m-col" title="{text(r)}">{text(r)}</th>' for r in runs)
    rows = []
    for a in runs:
        tds = [f'<th scope="row" class="run">{text(a)}</th>']
        for b in runs:
            pair = cells.get((a, b))
            if a == b or pair is None:
                tds.append('<td class="num m-diag"></td>')
                continue
            mark = (UP if pair.mean_diff > 0 else DOWN) if pair.significant else SAME
            kind = ("m-up" if pair.mean_diff > 0 else "m-down") if pair.significant else "m-same"
            what = ("significantly better than" if pair.mean_diff > 0 else "significantly worse than") if pair.significant else "not significantly different from"
            title = f"{a} {what} {b}: mean difference {pair.mean_diff:+.4f}, p (Holm) {fmt(pair.p_adjusted)}"
            tds.append(f'<td class="num {kind}" title="{text(title)}">{mark} <small>{fmt(pair.p_adjusted)}</small></td>')
        rows.append("<tr>" + "".join(tds) + "</tr>")
    sort = text(display_name(report.sort))
    return (
        f'<div class="scroll" tabindex="0" role="region" aria-label="Significance matrix"><table class="matrix" id="significance-matrix">'
        f"<caption>Row run against column run on {sort}</caption><thead><tr>{heads}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def per_class(report: Report) -> str:
    pc = getattr(report, "per_class", None)
    sort = report.sort
    if pc is None or sort not in pc.columns or not len(pc):
        return section("per-class", "Per class", ['<p class="note">No per-class values in this scoring (TREC qrels and ground-truth scores have no classes).</p>'])
    runs = [str(r) for r in report.leaderboard["run"]]
    classes = list(dict.fromkeys(str(c) for c in pc["class"]))
    values: dict[tuple[str, str], Any] = {}
    counts: dict[str, int] = {}
    for run, cls, n, v in zip(pc["run"], pc["class"], pc["queries"], pc[sort]):
        values[(str(run), str(cls))] = v
        counts.setdefault(str(cls), int(n))
    higher = column_higher_is_better(sort)
    nums = [v for v in (number(x) for x in values.values()) if v is not None]
    lo, hi = (min(nums), max(nums)) if nums else (0.0, 1.0)
    heads = [header("class", "text", "asc", ' class="run"'), header("queries", "num", "desc")]
    heads += [header(text(r), "num", "asc" if higher is False else "desc") for r in runs]
    rows = []
    for cls in classes:
        row_vals = [values.get((r, cls)) for r in runs]
        best = best_of(row_vals, higher)
        cells = [f'<th scope="row" class="run">{text(cls)}</th>', f'<td class="num" data-v="{counts.get(cls, 0)}">{counts.get(cls, 0)}</td>']
        for v in row_vals:
            cell = num_cell(v, best)
            x = number(v)
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
    return section("per-class", "Per class", body)
