"""The renderings of a :class:`~shrec_score.report.Report` (docs/outputs.md): :data:`FORMATS` (CSV, JSON,
Markdown, LaTeX, trec) and :func:`to_rich` (the terminal), each with the signature.  Text from input is escaped
for its format (:mod:`shrec_score.escape`, :func:`trec_field`; docs/inputs.md); CSV and JSON quote it themselves."""

from __future__ import annotations

import io
import json
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from .aggregate import column_aggregate, wide_values
from .errors import visible
from .escape import md_escape, rich_text, tex_escape
from .measures.measure import column_higher_is_better, display_name, trec_name
from .notes import best_value, blank_note, significance_matrix, versus_best
from .table import Table, as_table, missing

__all__ = ["FORMATS", "md_escape", "rich_text", "tex_escape", "to_csv", "to_json", "to_latex", "to_markdown", "to_rich", "to_trec", "trec_field"]

if TYPE_CHECKING:
    import pandas as pd


class Report(Protocol):
    """What a renderer reads of a :class:`shrec_score.report.Report`: render imports nothing of report."""

    tables: dict[str, Table]
    measures: list[str]
    shown: list[str]
    sort: str
    rank_by: str
    signature: dict[str, Any]
    run_tags: dict[str, str]

    def table(self, name: str) -> Table | None: ...

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
    """Header, formatted cells and which cells show their column's best mean (:func:`notes.best_value`)."""
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
    marks = bold or [[False] * len(head)] * len(rows)
    align = "|" + "|".join(":---" if x else "---:" for x in left) + "|"
    lines = ["| " + " | ".join(map(md_escape, head)) + " |", align]
    for row, m in zip(rows, marks):
        lines.append("| " + " | ".join(f"**{md_escape(c)}**" if b else md_escape(c) for c, b in zip(row, m)) + " |")
    return lines


def to_markdown(report: Report, *, per_query: bool = False) -> str:
    """The leaderboard as a Markdown table, the best value of each column in bold; with ``per_query``, then the
    terminal's per-query table (the sort measure, one column per run in leaderboard order)."""
    head, cells, bold = _table_cells(report)
    lines = [*_md_table(head, [i == 1 for i in range(len(head))], cells, bold), ""]
    note = blank_note(report)
    if note:
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
    rows = []
    for row, marks in zip(cells, bold):
        texed = [f"\\textbf{{{tex_escape(c)}}}" if is_b else tex_escape(c) for c, is_b in zip(row, marks)]
        if at >= 0 and row[1] in versus and versus[row[1]].significant:
            texed[at] += "$^\\dagger$"
        rows.append(texed)
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
    if report.table("significance") is not None:
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
    board, table = report.tables["leaderboard"], report.tables["per_query"]
    lines = []

    def line(m: str, query: str, value: float) -> str:
        return f"{labels[m]:<22}\t{query}\t{int(value) if m in sums else f'{value:.4f}'}"

    for row in (dict(zip(board.columns, values)) for values in board.records()):
        run, tag = row["run"], report.run_tags.get(row["run"])
        lines.append(f"{'runid':<22}\tall\t{trec_field(tag if tag is not None and tags[tag] == 1 else str(run))}")
        if per_query:
            sub = table.take(table["run"] == run)
            for rec in (dict(zip(sub.columns, v)) for v in sub.records()):
                lines += [line(m, trec_field(str(rec["query"])), rec[m]) for m in per_topic if m in rec and not missing(rec[m])]
        lines.append(f"{'num_q':<22}\tall\t{int(row['queries'])}")
        lines += [line(m, "all", row[m]) for m in report.measures if m in row and not missing(row[m])]
    return "\n".join(lines) + "\n"


def to_rich(report: Report, console: Any, *, per_query: bool = False) -> None:
    """Print the leaderboard (and the per-query table) on a rich Console; every text from input as a
    :func:`rich_text` (no markup read, control characters shown escaped)."""
    head, cells, bold = _table_cells(report)
    widths = [max(6, len(rich_text(h))) if i > 2 else None for i, h in enumerate(head)]
    ci = _intervals(report)
    if ci is not None:
        head, widths = [*head, "95% CI"], [*widths, None]
        cells = [[*row, f"{_fmt(low)}..{_fmt(high)}"] for row, (low, high) in zip(cells, ci)]
        bold = [[*marks, False] for marks in bold]
    title = f"shrec-score leaderboard, sorted by {display_name(report.sort)}"
    console.print(_rich_table(title, head, [i == 1 for i in range(len(head))], cells, bold, widths))
    note = blank_note(report)
    if note:
        console.print(rich_text(note), highlight=False)
    console.print(rich_text(report.signature_text(), "dim"), highlight=False, soft_wrap=True)  # the signature, once
    if report.table("significance") is not None:
        _print_significance(report, console)
    if per_query:
        _print_per_query(report, console)


def _rich_table(
    title: str | None, head: list[str], left: list[bool], rows: list[list[str]],
    bold: list[list[bool]] | None = None, widths: list[int | None] | None = None, simple: bool = False,
) -> Any:
    """A rich Table of text cells, each a :func:`rich_text`, ``bold`` ones bold; with ``widths`` (each column's
    least width), the leaderboard's: never wrapped, ``simple``'s box."""
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
    ranking = report.table("ranking")
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
    """``text`` as one whitespace-free field of a trec line: control characters visible, a space ``\\x20``.

    >>> trec_field("my run\\tv2\\n")
    'my\\\\x20run\\\\tv2\\\\n'
    """
    return visible(text).replace(" ", "\\x20")


def _records(frame: Table | pd.DataFrame) -> list[dict[str, Any]]:
    """The rows as JSON objects (Python values; undefined values None)."""
    table = as_table(frame)
    return [{k: (None if missing(v) else v) for k, v in zip(table.columns, values)} for values in table.records()]


def frame_text(frame: pd.DataFrame, fmt: str) -> str:
    """A plain table (``shrec-score ties``) as ``csv``, ``json`` (records),
    ``markdown`` (escaped cells, numbers to 4 decimals) or ``table`` text (rich)."""
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
