"""The renderings of a :class:`~shrec_score.report.Report` (docs/outputs.md): :data:`FORMATS` (CSV, JSON,
Markdown, LaTeX, trec) and :func:`to_rich` (the terminal), each with the signature, and what every rendering (the
results page too) says beside the numbers: the best value, the blank-cell note, the pairwise tests as a matrix.
Text from input shows as itself: control characters made visible, then escaped for the format (:func:`md_escape`,
:func:`tex_escape`, :func:`rich_text`, :func:`trec_field`, :func:`html_template`; docs/inputs.md)."""

from __future__ import annotations

import io
import json
import math
import re
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from .aggregate import column_aggregate, wide_values
from .errors import visible
from .measures.measure import column_higher_is_better, display_name, get_measure, trec_name
from .table import Table, as_table, missing

__all__ = ["FORMATS", "md_escape", "rich_text", "tex_escape", "to_csv", "to_json", "to_latex", "to_markdown", "to_rich", "to_trec", "trec_field"]

if TYPE_CHECKING:
    import pandas as pd
    from jinja2 import Template
    from rich.text import Text


class Report(Protocol):
    """What a renderer reads of a :class:`shrec_score.report.Report`: render imports nothing of report."""

    tables: dict[str, Table]
    measures: list[str]
    shown: list[str]
    sort: str
    rank_by: str
    signature: dict[str, Any]
    run_tags: dict[str, str]

    def signature_text(self) -> str: ...


def to_csv(report: Report, *, per_query: bool = False) -> str:
    """The leaderboard (or, with ``per_query``, the per-query values) as CSV."""
    return report.tables["per_query" if per_query else "leaderboard"].to_csv()


def to_json(report: Report, *, per_query: bool = False) -> str:
    """signature, sort, leaderboard (and per_query, significance) as JSON; undefined values are ``null``."""
    names = ["leaderboard", "per_query", "significance"] if per_query else ["leaderboard", "significance"]
    doc: dict[str, Any] = {"signature": report.signature, "sort": report.sort}
    doc.update((name, _records(report.tables[name])) for name in names if name in report.tables)
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"


def _table_cells(report: Report) -> tuple[list[str], list[list[str]], list[list[bool]]]:
    """Header, formatted cells and which cells show their column's best mean (:func:`best_value`)."""
    board = report.tables["leaderboard"]
    best = {m: best_value(board[m].tolist(), column_higher_is_better(m)) for m in report.shown}
    records = zip(*(board[c].tolist() for c in ["rank", "run", "queries", *report.shown]))
    cells = [[str(v) for v in rec[:3]] + [_fmt(v) for v in rec[3:]] for rec in records]
    bold = [[False] * 3 + [c == best[m] for c, m in zip(row[3:], report.shown)] for row in cells]
    return ["rank", "run", "queries", *[display_name(m) for m in report.shown]], cells, bold


def _intervals(report: Report) -> list[tuple[float, float]] | None:
    """Each run's bootstrap interval of the sort measure, in leaderboard order; None without one."""
    board = report.tables["leaderboard"]
    lo, hi = f"{report.sort}_ci_low", f"{report.sort}_ci_high"
    return list(zip(board[lo].tolist(), board[hi].tolist())) if lo in board.columns and hi in board.columns else None


def _md_table(
    head: list[str], left: list[bool], rows: list[list[str]], bold: list[list[bool]] | None = None
) -> list[str]:
    """A Markdown table's lines, every cell escaped: ``left`` aligns a column left, ``bold`` marks cells."""
    cell = lambda text, strong: f"**{md_escape(text)}**" if strong else md_escape(text)
    marks = bold or [[False] * len(head)] * len(rows)
    align = "|" + "|".join(":---" if x else "---:" for x in left) + "|"
    body = ["| " + " | ".join(map(cell, row, m)) + " |" for row, m in zip(rows, marks)]
    return ["| " + " | ".join(map(md_escape, head)) + " |", align, *body]


def to_markdown(report: Report, *, per_query: bool = False) -> str:
    """The leaderboard as a Markdown table, the best value of each column in bold; with ``per_query``, then the
    terminal's per-query table (the sort measure, one column per run in leaderboard order)."""
    head, cells, bold = _table_cells(report)
    lines = [*_md_table(head, [i == 1 for i in range(len(head))], cells, bold), ""]
    if note := blank_note(report):
        lines += [md_escape(note), ""]
    lines.append(f"<sub>{md_escape(report.signature_text())}</sub>")
    if per_query:
        head, cells, keys = _wide(report)
        title = f"**{md_escape(display_name(report.sort))} per query**"
        lines += ["", title, "", *_md_table(head, [i < keys for i in range(len(head))], cells)]
    return "\n".join(lines) + "\n"


def to_latex(report: Report, *, per_query: bool = False) -> str:
    r"""The leaderboard as a booktabs ``table``; with significance the pairwise tests as a second one; with
    ``per_query`` the per-query table (as :func:`to_markdown`'s) as a ``longtable``, which breaks across pages
    (docs/outputs.md, "LaTeX").  The signature is a ``%`` comment, made visible so that no line break ends it."""
    head, cells, bold = _table_cells(report)
    sort = tex_escape(display_name(report.sort))
    at = 3 + report.shown.index(report.sort) if report.sort in report.shown else -1
    ci = _intervals(report) if at >= 0 else None
    versus = versus_best(report)
    head = [tex_escape(h) for h in head]
    cell = lambda text, strong: f"\\textbf{{{tex_escape(text)}}}" if strong else tex_escape(text)
    rows = [list(map(cell, row, marks)) for row, marks in zip(cells, bold)]
    for texed, run in zip(rows, (row[1] for row in cells)):
        if at >= 0 and run in versus and versus[run].significant:
            texed[at] += "$^\\dagger$"
    caption = f"Mean of each measure per run, best first by {sort}; bold: the best value of the column."
    if ci is not None:
        head.insert(at + 1, "95\\% CI")
        for texed, (low, high) in zip(rows, ci):
            texed.insert(at + 1, f"[{_fmt(low)}, {_fmt(high)}]")
        caption += f" 95\\% CI: percentile bootstrap interval of the mean {sort}."
    if versus:
        caption += f" $^\\dagger$: significantly worse than the best run (paired randomization test on {sort}, Holm-corrected, $p < 0.05$)."
    spec = f"rlr{'r' * (len(report.shown) + (ci is not None))}"
    note = blank_note(report)
    lines = [
        f"% {visible(report.signature_text())}",
        "% needs \\usepackage{booktabs} (\\toprule, \\midrule, \\bottomrule)",
        *_tex_table(caption, "tab:leaderboard", spec, head, rows, None if note is None else tex_escape(note)),
    ]
    if "significance" in report.tables:
        runs, pairs = significance_matrix(report)
        shown_p = {ab: _fmt(pair.p_adjusted) for ab, pair in pairs.items()}
        shown_p.update((ab, f"\\textbf{{{shown_p[ab]}}}") for ab, pair in pairs.items() if pair.significant)
        matrix = [[tex_escape(a), *(shown_p.get((a, b), "--") for b in runs)] for a in runs]
        caption = (
            f"Pairwise randomization tests on {sort}: Holm-adjusted $p$-value of the row run against the column run; "
            "bold: significantly different ($p < 0.05$)."
        )
        lines += ["", *_tex_table(caption, "tab:significance", "l" + "r" * len(runs), ["", *map(tex_escape, runs)], matrix)]
    if per_query:
        head, cells, keys = _wide(report)
        caption = f"{sort} per query, one column per run in leaderboard order; blank: the run has no value for the query."
        lines += [
            "",
            "% needs \\usepackage{longtable}",
            f"\\begin{{longtable}}{{{'l' * keys}{'r' * (len(head) - keys)}}}",
            f"\\caption{{{caption}}}\\label{{tab:per-query}} \\\\",
            *_tex_rules([tex_escape(h) for h in head], [[tex_escape(c) for c in row] for row in cells], "\\endhead"),
            "\\end{longtable}",
        ]
    return "\n".join(lines) + "\n"


def _tex_table(caption: str, label: str, spec: str, head: list[str], rows: list[list[str]], note: str | None = None) -> list[str]:
    """A booktabs ``table`` environment: caption, label, the head row, the rows and a note under the tabular."""
    return [
        "\\begin{table}[htbp]",
        "\\centering",
        f"\\caption{{{caption}}}",
        f"\\label{{{label}}}",
        f"\\begin{{tabular}}{{{spec}}}",
        *_tex_rules(head, rows),
        "\\end{tabular}",
        *([] if note is None else [f"\\par\\smallskip{{\\footnotesize {note}}}"]),
        "\\end{table}",
    ]


def _tex_rules(head: list[str], rows: list[list[str]], *after_head: str) -> list[str]:
    """A booktabs tabular's lines between its begin and end: the head row and the rows, ruled."""
    body = [" & ".join(row) + " \\\\" for row in rows]
    return ["\\toprule", " & ".join(head) + " \\\\", "\\midrule", *after_head, *body, "\\bottomrule"]


def to_trec(report: Report, *, per_query: bool = False) -> str:
    """trec_eval-style lines ``measure<TAB>query<TAB>value``: a block per run opened by its runid, the per-query
    lines (``per_query``), the summary under ``all`` (docs/outputs.md); every name one field (:func:`trec_field`)."""
    labels = {m: trec_field(trec_name(m) or m) for m in report.measures}
    sums = {m for m in report.measures if column_aggregate(m) == "sum"}
    per_topic = [m for m in report.measures if column_aggregate(m) != "geometric"]  # trec_eval -q prints gm_map under all only
    tags = Counter(report.run_tags.values())
    line = lambda m, query, value: f"{labels[m]:<22}\t{query}\t{int(value) if m in sums else f'{value:.4f}'}"
    lines, table = [], report.tables["per_query"]
    for row in _records(report.tables["leaderboard"]):  # undefined values None: left out
        run, tag = row["run"], report.run_tags.get(row["run"])
        lines.append(f"{'runid':<22}\tall\t{trec_field(tag if tag is not None and tags[tag] == 1 else str(run))}")
        if per_query:
            for rec in _records(table.take(table["run"] == run)):
                lines += [line(m, trec_field(str(rec["query"])), rec[m]) for m in per_topic if rec.get(m) is not None]
        lines.append(f"{'num_q':<22}\tall\t{int(row['queries'])}")
        lines += [line(m, "all", row[m]) for m in report.measures if row.get(m) is not None]
    return "\n".join(lines) + "\n"


def to_rich(report: Report, console: Any, *, per_query: bool = False) -> None:
    """Print the leaderboard (and the per-query table) on a rich Console, every text from input a :func:`rich_text`."""
    head, cells, bold = _table_cells(report)
    widths = [max(6, len(rich_text(h))) if i > 2 else None for i, h in enumerate(head)]
    ci = _intervals(report)
    if ci is not None:
        head, widths = [*head, "95% CI"], [*widths, None]
        cells = [[*row, f"{_fmt(low)}..{_fmt(high)}"] for row, (low, high) in zip(cells, ci)]
        bold = [[*marks, False] for marks in bold]
    title = f"shrec-score leaderboard, sorted by {display_name(report.sort)}"
    console.print(_rich_table(title, head, [i == 1 for i in range(len(head))], cells, bold, widths))
    if note := blank_note(report):
        console.print(rich_text(note), highlight=False)
    console.print(rich_text(report.signature_text(), "dim"), highlight=False, soft_wrap=True)  # the signature, once
    if "significance" in report.tables:
        _print_significance(report, console)
    if per_query:
        _print_per_query(report, console)


def _rich_table(
    title: str | None, head: list[str], left: list[bool], rows: list[list[str]],
    bold: list[list[bool]] | None = None, widths: list[int | None] | None = None, simple: bool = False,
) -> Any:
    """A rich Table of :func:`rich_text` cells, ``bold`` ones bold; ``widths`` (least widths): never wrapped."""
    from rich import box
    from rich.table import Table

    boxed = box.SIMPLE_HEAD if simple or widths else box.HEAVY_HEAD
    table = Table(title=None if title is None else rich_text(title), box=boxed)
    for h, is_left, width in zip(head, left, widths or [None] * len(head)):
        table.add_column(rich_text(h), justify="left" if is_left else "right", no_wrap=bool(widths), min_width=width)
    for row, marks in zip(rows, bold or [[False] * len(head)] * len(rows)):
        table.add_row(*[rich_text(c, "bold" if b else "") for c, b in zip(row, marks)])
    return table


def _print_significance(report: Report, console: Any) -> None:
    head = ["run A", "run B", "mean diff", "W/T/L", "p", "p (Holm)", "significant"]
    sig = report.tables["significance"]
    names = ("run_a", "run_b", "mean_diff", "wins", "ties", "losses", "p_value", "p_adjusted", "significant")
    rows = [
        [str(a), str(b), f"{diff:+.4f}", f"{w}/{t}/{lost}", f"{p:.4f}", f"{ph:.4f}", "yes" if yes else "no"]
        for a, b, diff, w, t, lost, p, ph, yes in zip(*(sig[c].tolist() for c in names))
    ]
    title = f"Pairwise randomization tests on {display_name(report.sort)} (Holm-corrected)"
    console.print(_rich_table(title, head, [h.startswith("run") for h in head], rows, simple=True))


def _print_per_query(report: Report, console: Any) -> None:
    ranking = report.tables.get("ranking")
    if ranking is not None and report.rank_by != report.sort:
        by_query: dict[Any, list[str]] = {}  # first-appearance order, missing left out
        for q, run, value in zip(*(ranking[c].tolist() for c in ("query", "run", "value"))):
            if not missing(q):
                by_query.setdefault(q, []).append(f"{run} {_fmt(value)}")
        rows = [[str(q), " > ".join(ranked)] for q, ranked in by_query.items()]
        title = f"Runs ranked per query by {display_name(report.rank_by)} (best first)"
        console.print(_rich_table(title, ["query", "ranking"], [True, True], rows))
        return
    head, cells, keys = _wide(report)
    title = f"{display_name(report.sort)} per query"
    console.print(_rich_table(title, head, [i < keys for i in range(len(head))], cells))


def _wide(report: Report) -> tuple[list[str], list[list[str]], int]:
    """Head, cells and key-column count (query[, class]) of ``Report.per_query_wide()``; blank: no value."""
    runs = [str(r) for r in report.tables["leaderboard"]["run"].tolist()]
    keys, values = wide_values(report.tables["per_query"], runs, report.sort)
    key_cols = [keys[k].tolist() for k in keys.columns]
    cells = [["" if col[i] is None else str(col[i]) for col in key_cols] + [_fmt(v) for v in values[:, i].tolist()] for i in range(len(keys))]
    return keys.columns + runs, cells, len(keys.columns)


#: ``--format`` name -> ``f(report, *, per_query=False) -> str``.
FORMATS: dict[str, Callable[..., str]] = {
    "csv": to_csv,
    "json": to_json,
    "markdown": to_markdown,
    "latex": to_latex,
    "trec": to_trec,
}


def _fmt(value: Any) -> str:
    if missing(value):
        return ""
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def trec_field(text: str) -> str:
    """``text`` as one whitespace-free field of a trec line: control characters visible, a space ``\\x20``."""
    return visible(text).replace(" ", "\\x20")


def _records(frame: Table | pd.DataFrame) -> list[dict[str, Any]]:
    """The rows as JSON objects (Python values; undefined values None)."""
    table = as_table(frame)
    return [{k: (None if missing(v) else v) for k, v in zip(table.columns, values)} for values in table.records()]


def frame_text(frame: pd.DataFrame, fmt: str) -> str:
    """A plain table (``shrec-score ties``) as ``csv``, ``json`` (records), ``markdown`` or ``table`` (rich) text."""
    if fmt == "csv":
        return frame.to_csv(index=False, na_rep="", lineterminator="\n")
    if fmt == "json":
        return json.dumps(_records(frame), indent=2, allow_nan=False) + "\n"
    head, cells = [str(c) for c in frame.columns], [[_fmt(v) for v in rec] for rec in frame.itertuples(index=False)]
    left = [frame[c].dtype.kind not in "if" for c in frame.columns]
    if fmt == "markdown":
        return "\n".join(_md_table(head, left, cells)) + "\n"
    from rich.console import Console

    console = Console(width=160, record=True, file=io.StringIO())
    console.print(_rich_table(None, head, left, cells))
    return console.export_text()


def best_value(values: list[Any], higher: bool | None) -> str | None:
    """The best of a column's values at 4 decimals (every value equal to it so is marked best): the largest, the
    smallest for a lower-is-better measure; None without a direction (``tau_b_std``) or a defined value."""
    nums = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    if higher is None or not nums:
        return None
    return f"{max(nums) if higher else min(nums):.4f}"


def blank_note(report: Report, columns: list[str] | None = None) -> str | None:
    """The one-line note under a leaderboard with blank cells (None without): the rule, then each of ``columns``
    (default ``report.shown``) with a blank, its runs whose mean is undefined and the measure's definition."""
    board = report.tables["leaderboard"]
    runs = [str(r) for r in board["run"].tolist()]
    parts = []
    for m in columns if columns is not None else report.shown:
        blank = [r for r, v in zip(runs, board[m].tolist() if m in board.columns else []) if missing(v)]
        if blank:
            try:
                why = get_measure(m).summary.replace("``", "").strip().rstrip(".")
            except KeyError:
                why = ""
            parts.append(f"{display_name(m)}: {', '.join(blank)}" + (f" ({why})" if why else ""))
    if not parts:
        return None
    return "Blank cells: no query of the run has a value of the measure, so it has no mean. " + "; ".join(parts) + "."


def versus_best(report: Report) -> dict[str, Pair]:
    """run -> the best run against it (:func:`significance_matrix`'s first row; the best run's own
    :class:`Pair` has ``best`` and no p-value); {} without significance."""
    runs, cells = significance_matrix(report)
    if "significance" not in report.tables or not runs:
        return {}
    return {runs[0]: Pair(0.0, None, False, best=True)} | {b: pair for (a, b), pair in cells.items() if a == runs[0]}


class Pair(NamedTuple):
    """One cell of :func:`significance_matrix`, the row run against the column run (randomization test, Holm)."""

    mean_diff: float  # row minus column, oriented: positive = the row run is better
    p_adjusted: float | None
    significant: bool  # p_adjusted < 0.05
    best: bool = False  # versus_best's entry of the best run itself


def significance_matrix(report: Report) -> tuple[list[str], dict[tuple[str, str], Pair]]:
    """The runs in leaderboard order and ``(row, column) -> Pair`` for every tested pair, both ways (the
    (B, A) cell holds the negated ``mean_diff``; the diagonal and untested pairs are absent)."""
    runs = [str(r) for r in report.tables["leaderboard"]["run"].tolist()]
    cells: dict[tuple[str, str], Pair] = {}
    sig = report.tables.get("significance")
    columns = [] if sig is None else [sig[c].tolist() for c in ("run_a", "run_b", "mean_diff", "p_adjusted", "significant")]
    for a, b, diff, p, yes in zip(*columns):
        cells[(str(a), str(b))] = Pair(float(diff), float(p), bool(yes))
        cells[(str(b), str(a))] = Pair(-float(diff), float(p), bool(yes))
    return runs, cells


def html_template(source: str, **filters: Callable[..., str]) -> Template:
    """``source`` as a Jinja2 template that writes every value as HTML text: control characters made
    visible, then escaped (autoescape); a ``Markup`` value (markup made here: an SVG, a style sheet) as it is.

    >>> html_template('<td title="{{ v }}">{{ v }}</td>').render(v='<b>"&\\n')
    '<td title="&lt;b&gt;&#34;&amp;\\\\n">&lt;b&gt;&#34;&amp;\\\\n</td>'
    """
    from jinja2 import Environment, StrictUndefined
    from markupsafe import Markup

    shown = lambda value: value if isinstance(value, Markup) else visible(str(value))
    env = Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True, undefined=StrictUndefined, finalize=shown)
    env.filters.update(filters)
    return env.from_string(source)


#: Markdown: ``< > &`` as HTML entities (no raw HTML passes); ``\ ` * [ ] $ | ~`` and an ``_`` that is not
#: between two letters or digits (there it cannot open or close emphasis, CommonMark) after a backslash.
_MD = re.compile(r"[<>&]|[\\`*\[\]$|~]|(?<![^\W_])_|_(?![^\W_])")
_MD_ENTITY = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}


def md_escape(text: str) -> str:
    """``text`` for a Markdown table cell: shows as itself, keeps the table's shape (``|`` as ``\\|``); a
    leading or trailing space becomes ``&#32;`` (a cell is trimmed); ``FP_relevant`` stays readable."""
    return _edge_spaces(_MD.sub(lambda m: _MD_ENTITY.get(m[0], "\\" + m[0]), visible(text)), "&#32;")


#: LaTeX: the ten special characters (and ``< > |``, which are other glyphs in the OT1 encoding).
_TEX = str.maketrans({
    "\\": "\\textbackslash{}", "{": "\\{", "}": "\\}", "$": "\\$", "&": "\\&", "#": "\\#", "^": "\\textasciicircum{}",
    "_": "\\_", "%": "\\%", "~": "\\textasciitilde{}", "<": "\\textless{}", ">": "\\textgreater{}", "|": "\\textbar{}",
})


def tex_escape(text: str) -> str:
    """``text`` for a LaTeX cell: one line (a newline is first made the visible ``\\n``), every special
    character escaped in one pass, a leading or trailing space as ``\\ `` (a cell drops plain ones)."""
    return _edge_spaces(visible(text).translate(_TEX), "\\ ")


def _edge_spaces(text: str, space: str) -> str:
    """``text`` with its leading and trailing spaces written as ``space`` (a table cell trims plain ones)."""
    return re.sub(r"^ +| +$", lambda m: space * len(m[0]), text)


def rich_text(text: str, style: str = "") -> Text:
    """``text`` as a rich ``Text``: no markup read, controls visible, ``style`` on the text, not a cell's padding."""
    from rich.text import Text

    return Text.styled(visible(text), style)
