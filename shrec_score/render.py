"""Text renderings of a :class:`~shrec_score.report.Report`, apart from its data.

Plain functions of a report: :func:`to_csv`, :func:`to_json`,
:func:`to_markdown`, :func:`to_latex`, :func:`to_trec` return text and
:func:`to_rich` prints a table on a rich Console.  :data:`FORMATS` maps the
``--format`` names to the text renderers, all called the same way::

    FORMATS[name](report, per_query=per_query)

and :func:`render_table` is the ``table`` format.  Every rendering carries
the signature (the shrec-score version and every setting that changes a
number).  The best value of a column is the largest, or the smallest for a
lower-is-better measure (FP_*, FN_*); a column without a direction
(``tau_b_std``, see :func:`~shrec_score.measures.column_higher_is_better`)
has no best value.

Every text cell that comes from input (run names, query ids, class names,
column names, the signature with its file names) is escaped for its format,
so a hostile name keeps the shape of the output and shows as itself:
:func:`md_escape` (Markdown), :func:`tex_escape` (LaTeX), :func:`trec_field`
(trec) and :func:`rich_text` (the terminal, these three in
:mod:`shrec_score.escape`); each first makes control and format characters
visible (:func:`shrec_score.errors.visible`).  CSV and
JSON need nothing more: their own quoting carries any text.
"""

from __future__ import annotations

import io
import json
import math
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from .aggregate import wide_values
from .errors import visible
from .escape import md_escape, rich_text, tex_escape
from .io.writers import frame_to_csv
from .measures.names import trec_name
from .measures.registry import column_higher_is_better, display_name, get_measure
from .notes import blank_note, significance_matrix, versus_best
from .table import Table

__all__ = ["FORMATS", "md_escape", "render_table", "rich_text", "tex_escape", "to_csv", "to_json", "to_latex", "to_markdown", "to_rich", "to_trec", "trec_field"]

if TYPE_CHECKING:
    import pandas as pd


class Report(Protocol):
    """What a renderer reads of a report: the tables of
    :class:`shrec_score.report.Report`, which holds them (and calls the
    renderers), named here so that the data flows one way, into the renderers."""

    per_query: pd.DataFrame
    leaderboard: pd.DataFrame
    measures: list[str]
    shown: list[str]
    sort: str
    signature: dict[str, Any]
    ranking: pd.DataFrame | None
    rank_by: str
    significance: pd.DataFrame | None
    run_tags: dict[str, str]

    def table(self, name: str) -> Table | None: ...

    def signature_text(self) -> str: ...


def _table(report: Report, name: str) -> Table:
    """A table of the report without pandas (:meth:`shrec_score.report.Report.table`)."""
    table = report.table(name)
    if table is None:
        raise ValueError(f"the report has no {name} table")
    return table


def to_csv(report: Report, *, per_query: bool = False) -> str:
    """The leaderboard (or, with ``per_query``, the per-query values) as CSV."""
    return frame_to_csv(_table(report, "per_query" if per_query else "leaderboard"))


def to_json(report: Report, *, per_query: bool = False) -> str:
    """signature, sort, leaderboard (and per_query, significance) as a JSON document.

    Undefined values are ``null``.
    """
    doc: dict[str, Any] = {"signature": report.signature, "sort": report.sort, "leaderboard": _records(_table(report, "leaderboard"))}
    if per_query:
        doc["per_query"] = _records(_table(report, "per_query"))
    significance = report.table("significance")
    if significance is not None:
        doc["significance"] = _records(significance)
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"


def best_values(report: Report) -> dict[str, float]:
    """The best mean of each shown column that has a direction.

    The maximum, or the minimum for a lower-is-better measure (undefined
    values left out); a column with no direction (``tau_b_std``) is left
    out, so nothing in it is marked.
    """
    board = _table(report, "leaderboard")
    best = {}
    for m in report.shown:
        higher = column_higher_is_better(m)
        if higher is not None:
            values = np.asarray(board[m], dtype=np.float64)
            values = values[~np.isnan(values)]
            best[m] = float("nan") if not len(values) else float(values.max() if higher else values.min())
    return best


def _table_cells(report: Report) -> tuple[list[str], list[list[str]], list[list[bool]]]:
    """Header, formatted cells and which cells hold the best value of their column."""
    shown = report.shown
    cols = ["rank", "run", "queries", *shown]
    head = ["rank", "run", "queries", *[display_name(m) for m in shown]]
    best = best_values(report)
    cells, bold = [], []
    for values in _table(report, "leaderboard").select(cols).records():
        cells.append([str(values[0]), str(values[1]), str(values[2])] + [_fmt(v) for v in values[3:]])
        bold.append([False, False, False] + [m in best and _fmt(v) != "" and _fmt(v) == _fmt(best[m]) for v, m in zip(values[3:], shown)])
    return head, cells, bold


def to_markdown(report: Report) -> str:
    """Leaderboard as a Markdown table, the best value of each column in bold.

    Every cell and the signature line are escaped by :func:`md_escape`.
    """
    head, cells, bold = _table_cells(report)
    head, cells = [md_escape(h) for h in head], [[md_escape(c) for c in row] for row in cells]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---:", ":---", "---:"] + ["---:"] * len(report.shown)) + "|"]
    for row, b in zip(cells, bold):
        lines.append("| " + " | ".join(f"**{c}**" if is_b else c for c, is_b in zip(row, b)) + " |")
    lines.append("")
    note = blank_note(report)
    if note:
        lines += [md_escape(note), ""]
    lines.append(f"<sub>{md_escape(report.signature_text())}</sub>")
    return "\n".join(lines) + "\n"


def to_latex(report: Report) -> str:
    r"""The leaderboard as a complete LaTeX ``table`` (booktabs), and the pairwise tests as a second one.

    The first table: a caption and ``\label{tab:leaderboard}``, rank, run,
    queries and the shown columns, the best value of each column in bold;
    with significance, the sort measure's bootstrap 95% interval as a column
    after it and a dagger on the sort value of every run significantly worse
    than the best (Holm-adjusted p < 0.05, :func:`shrec_score.notes.versus_best`);
    blank cells explained in a note under the tabular
    (:func:`shrec_score.notes.blank_note`).  The second table (with
    significance, ``\label{tab:significance}``): the Holm-adjusted p-value of
    every pair of runs, row against column, in bold when significant.
    A comment names the package the tables need (booktabs).

    Every cell is escaped by :func:`tex_escape`, so a row is one line with
    one unescaped ``&`` between cells.  The signature is a ``%`` comment,
    where only a line break could do harm: it is made visible
    (:func:`~shrec_score.errors.visible`) and otherwise kept as it reads.
    """
    head, cells, bold = _table_cells(report)
    board = _table(report, "leaderboard")
    sort = display_name(report.sort)
    lo, hi = f"{report.sort}_ci_low", f"{report.sort}_ci_high"
    at = 3 + report.shown.index(report.sort) if report.sort in report.shown else None
    has_ci = at is not None and lo in board.columns and hi in board.columns
    versus = versus_best(report)
    rows = []
    for r, (row, b) in enumerate(zip(cells, bold)):
        texed = [f"\\textbf{{{tex_escape(c)}}}" if is_b else tex_escape(c) for c, is_b in zip(row, b)]
        if at is not None and versus.get(row[1], None) is not None and versus[row[1]].significant:
            texed[at] += "$^\\dagger$"
        if has_ci and at is not None:
            texed.insert(at + 1, f"[{_fmt(board[lo][r].item())}, {_fmt(board[hi][r].item())}]")
        rows.append(" & ".join(texed) + " \\\\")
    head_tex = [tex_escape(h) for h in head]
    if has_ci and at is not None:
        head_tex.insert(at + 1, "95\\% CI")
    caption = f"Mean of each measure per run, best first by {tex_escape(sort)}; bold: the best value of the column."
    if has_ci:
        caption += f" 95\\% CI: percentile bootstrap interval of the mean {tex_escape(sort)}."
    if versus:
        caption += f" $^\\dagger$: significantly worse than the best run (paired randomization test on {tex_escape(sort)}, Holm-corrected, $p < 0.05$)."
    lines = [
        f"% {visible(report.signature_text())}",
        "% needs \\usepackage{booktabs} (\\toprule, \\midrule, \\bottomrule)",
        "\\begin{table}[htbp]",
        "\\centering",
        f"\\caption{{{caption}}}",
        "\\label{tab:leaderboard}",
        f"\\begin{{tabular}}{{rlr{'r' * (len(report.shown) + has_ci)}}}",
        "\\toprule",
        " & ".join(head_tex) + " \\\\",
        "\\midrule",
        *rows,
        "\\bottomrule",
        "\\end{tabular}",
    ]
    note = blank_note(report)
    if note:
        lines.append(f"\\par\\smallskip{{\\footnotesize {tex_escape(note)}}}")
    lines.append("\\end{table}")
    if report.table("significance") is not None:
        lines += ["", *_latex_matrix(report)]
    return "\n".join(lines) + "\n"


def _latex_matrix(report: Report) -> list[str]:
    """The second LaTeX table: Holm-adjusted p-values, row run against column run, bold when significant."""
    runs, pairs = significance_matrix(report)
    sort = tex_escape(display_name(report.sort))
    lines = [
        "\\begin{table}[htbp]",
        "\\centering",
        f"\\caption{{Pairwise randomization tests on {sort}: Holm-adjusted $p$-value of the row run against the column run; "
        "bold: significantly different ($p < 0.05$).}",
        "\\label{tab:significance}",
        f"\\begin{{tabular}}{{l{'r' * len(runs)}}}",
        "\\toprule",
        " & ".join(["", *(tex_escape(r) for r in runs)]) + " \\\\",
        "\\midrule",
    ]
    for a in runs:
        cells = [tex_escape(a)]
        for b in runs:
            pair = pairs.get((a, b))
            if pair is None:
                cells.append("--")
            else:
                cells.append(f"\\textbf{{{_fmt(pair.p_adjusted)}}}" if pair.significant else _fmt(pair.p_adjusted))
        lines.append(" & ".join(cells) + " \\\\")
    return [*lines, "\\bottomrule", "\\end{tabular}", "\\end{table}"]


def _trec_value(column: str, value: float) -> str:
    """A value as trec_eval prints it: counts (``num_ret``, summed over
    topics) as whole numbers, every other value with 4 decimals.

    >>> _trec_value("num_rel_ret", 131.0), _trec_value("AP", 0.17854)
    ('131', '0.1785')
    """
    return f"{int(value)}" if _aggregate(column) == "sum" else f"{value:.4f}"


def _aggregate(column: str) -> str:
    """How a column's per-query values make its mean (``Measure.aggregate``; ``"mean"`` for a column that is no measure)."""
    try:
        return get_measure(column).aggregate
    except KeyError:
        return "mean"


def to_trec(report: Report, *, per_query: bool = False) -> str:
    """trec_eval-style lines ``measure<TAB>query<TAB>value`` (summary under ``all``).

    One block per run, opened by ``runid<TAB>all<TAB><tag>`` as trec_eval
    does (:func:`runids`); values with 4 decimals, ``gm_map`` (a logarithm
    per query) under ``all`` only.  A measure carries trec_eval's name only
    where its values are trec_eval's (``map``, ``P.5`` or ``precision@5`` as
    ``P_5``, ``ndcg@10`` as ``ndcg_cut_10``); ``AP``, ``FT``, ``P@5``, ``NN``
    (a topic without relevant documents left out of the mean, where
    trec_eval counts 0) and ``NDCG@10`` (SHREC 2006's) keep their names.

    Every line has exactly three tab-separated fields, whatever the names:
    the run name, the query ids and the measure names are written by
    :func:`trec_field`, which makes control and format characters visible
    (a tab becomes the two characters ``\\t``, a newline ``\\n``, an ESC
    ``\\x1b``) and writes a space as ``\\x20``.  So a name never adds a
    field or a line, even for a reader that splits on any whitespace.
    """
    labels = {m: trec_field(trec_name(m) or m) for m in report.measures}
    per_topic = [m for m in report.measures if _aggregate(m) != "geometric"]  # trec_eval -q prints gm_map under all only
    board = _table(report, "leaderboard")
    table = _table(report, "per_query") if per_query else None
    lines = []
    runid = runids(report.run_tags, board["run"].tolist())
    for run in board["run"].tolist():
        lines.append(f"{'runid':<22}\tall\t{trec_field(runid[run])}")
        if table is not None:
            sub = table.take(table["run"] == run)
            names = sub.columns
            for values in sub.records():
                rec = dict(zip(names, values))
                for m in per_topic:
                    if m in rec and not _isnan(rec[m]):
                        lines.append(f"{labels[m]:<22}\t{trec_field(str(rec['query']))}\t{_trec_value(m, rec[m])}")
        row = dict(zip(board.columns, board.take(np.flatnonzero(board["run"] == run)[:1]).records()[0]))
        lines.append(f"{'num_q':<22}\tall\t{int(row['queries'])}")
        for m in report.measures:
            if m in row and not _isnan(row[m]):
                lines.append(f"{labels[m]:<22}\tall\t{_trec_value(m, row[m])}")
    return "\n".join(lines) + "\n"


def runids(tags: dict[str, str], runs: list[Any]) -> dict[Any, str]:
    """Each run's runid: the tag of its TREC lines when all carry the same one
    and no other run has it, else the run's name (a file name, as shown).

    >>> runids({"a.txt": "STANDARD", "b.txt": "x", "c.txt": "x"}, ["a.txt", "b.txt", "c.txt", "d"])
    {'a.txt': 'STANDARD', 'b.txt': 'b.txt', 'c.txt': 'c.txt', 'd': 'd'}
    """
    count = Counter(tags.values())
    return {r: tags[r] if r in tags and count[tags[r]] == 1 else str(r) for r in runs}


def to_rich(report: Report, console: Any, *, per_query: bool = False) -> None:
    """Print the leaderboard (and the per-query table) on a rich Console.

    Every text from input reaches rich as a :class:`rich.text.Text` made by
    :func:`rich_text`: no markup is read in it (``[bold]x[/]`` prints as
    written) and control characters show escaped, never reach the terminal.
    """
    from rich import box
    from rich.table import Table

    title = rich_text(f"shrec-score leaderboard, sorted by {display_name(report.sort)}")
    table = Table(title=title, box=box.SIMPLE_HEAD)
    head, cells, bold = _table_cells(report)
    for i, h in enumerate(head):
        text = rich_text(h)
        if i == 1:
            table.add_column(text, no_wrap=True)
        else:
            table.add_column(text, justify="right", no_wrap=True, min_width=max(6, len(text)) if i > 2 else None)
    board = _table(report, "leaderboard")
    ci = [c for c in board.columns if c.endswith("_ci_low")]
    if ci:
        table.add_column("95% CI", justify="right", no_wrap=True)
    for r, (row, b) in enumerate(zip(cells, bold)):
        styled = [rich_text(c, "bold" if is_b else "") for c, is_b in zip(row, b)]
        if ci:
            lo, hi = board[ci[0]][r].item(), board[ci[0].replace("_low", "_high")][r].item()
            styled.append(rich_text(f"{_fmt(lo)}..{_fmt(hi)}"))
        table.add_row(*styled)
    console.print(table)
    note = blank_note(report)
    if note:
        console.print(rich_text(note), highlight=False)
    console.print(rich_text(report.signature_text(), "dim"), highlight=False, soft_wrap=True)  # the signature, once
    if report.significance is not None:
        _print_significance(report, console)
    if per_query:
        _print_per_query(report, console)


def render_table(report: Report, console: Any, per_query: bool) -> None:
    """The ``table`` format: :func:`to_rich` on ``console``."""
    to_rich(report, console, per_query=per_query)


def _print_significance(report: Report, console: Any) -> None:
    from rich import box
    from rich.table import Table

    title = rich_text(f"Pairwise randomization tests on {display_name(report.sort)} (Holm-corrected)")
    t3 = Table(title=title, box=box.SIMPLE_HEAD)
    for c in ("run A", "run B", "mean diff", "W/T/L", "p", "p (Holm)", "significant"):
        t3.add_column(c, justify="left" if c.startswith("run") else "right")
    for rec in report.significance.itertuples(index=False):  # type: ignore[union-attr]
        t3.add_row(
            rich_text(str(rec.run_a)), rich_text(str(rec.run_b)), f"{rec.mean_diff:+.4f}", f"{rec.wins}/{rec.ties}/{rec.losses}",
            f"{rec.p_value:.4f}", f"{rec.p_adjusted:.4f}", "yes" if rec.significant else "no",
        )
    console.print(t3)


def _print_per_query(report: Report, console: Any) -> None:
    from rich.table import Table as RichTable

    ranking = report.table("ranking")
    if ranking is not None and report.rank_by != report.sort:
        t2 = RichTable(title=rich_text(f"Runs ranked per query by {display_name(report.rank_by)} (best first)"))
        t2.add_column("query")
        t2.add_column("ranking")
        runs, values = ranking["run"].tolist(), ranking["value"].tolist()
        for q, rows in _rows_by_key(ranking["query"].tolist()).items():
            t2.add_row(rich_text(str(q)), rich_text(" > ".join(f"{runs[i]} {_fmt(values[i])}" for i in rows)))
        console.print(t2)
        return
    head, cells = _wide(report)
    t2 = RichTable(title=rich_text(f"{display_name(report.sort)} per query"))
    for c in head:
        t2.add_column(rich_text(c), justify="left" if c in ("query", "class") else "right")
    n_keys = 2 if "class" in head else 1
    for row in cells:
        t2.add_row(*[rich_text(v) for v in row[:n_keys]], *row[n_keys:])
    console.print(t2)


def _rows_by_key(keys: list[Any]) -> dict[Any, list[int]]:
    """Row numbers of each key, keys in first-appearance order (missing keys left out, as a groupby)."""
    out: dict[Any, list[int]] = {}
    for i, k in enumerate(keys):
        if not (k is None or _isnan(k)):
            out.setdefault(k, []).append(i)
    return out


def _wide(report: Report) -> tuple[list[str], list[list[str]]]:
    """The cells of :meth:`~shrec_score.report.Report.per_query_wide` for the sort
    measure: query (and class), then one formatted value per run in leaderboard order."""
    runs = [str(r) for r in _table(report, "leaderboard")["run"].tolist()]
    keys, values = wide_values(_table(report, "per_query"), runs, report.sort)
    key_cols = [keys[k].tolist() for k in keys.columns]
    cells = [["" if col[i] is None else str(col[i]) for col in key_cols] + [_fmt(v) for v in values[:, i].tolist()] for i in range(len(keys))]
    return keys.columns + runs, cells


def _whole(render: Callable[[Report], str]) -> Callable[..., str]:
    """A renderer of the leaderboard only: ``per_query`` is accepted and ignored."""

    def call(report: Report, *, per_query: bool = False) -> str:
        return render(report)

    call.__name__ = call.__qualname__ = render.__name__
    call.__doc__ = render.__doc__
    return call


#: ``--format`` name -> ``f(report, *, per_query=False) -> str``.
FORMATS: dict[str, Callable[..., str]] = {
    "csv": to_csv,
    "json": to_json,
    "markdown": _whole(to_markdown),
    "latex": _whole(to_latex),
    "trec": to_trec,
}


def _isnan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _fmt(value: Any) -> str:
    if value is None or _isnan(value):
        return ""
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def trec_field(text: str) -> str:
    """``text`` as one whitespace-free field of a trec line (see :func:`to_trec`).

    >>> trec_field("my run\\tv2\\n")
    'my\\\\x20run\\\\tv2\\\\n'
    """
    return visible(text).replace(" ", "\\x20")


def _records(frame: Table | pd.DataFrame) -> list[dict[str, Any]]:
    """The rows as JSON objects (Python values; undefined values None)."""
    table = frame if isinstance(frame, Table) else Table.from_pandas(frame)
    names = table.columns
    return [{k: (None if _isnan(v) else v) for k, v in zip(names, values)} for values in table.records()]


def frame_text(frame: pd.DataFrame, fmt: str) -> str:
    """A plain table (``shrec-score ties``) as ``csv``, ``json`` (records),
    ``markdown`` (escaped cells, numbers to 4 decimals) or ``table`` text (rich)."""
    if fmt == "csv":
        return frame_to_csv(frame)
    if fmt == "json":
        return json.dumps(_records(frame), indent=2, allow_nan=False) + "\n"
    cells = [[_fmt(v) for v in rec] for rec in frame.itertuples(index=False)]
    if fmt == "markdown":
        head = [md_escape(str(c)) for c in frame.columns]
        align = ["---:" if frame[c].dtype.kind in "if" else ":---" for c in frame.columns]
        lines = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
        lines += ["| " + " | ".join(md_escape(c) for c in row) + " |" for row in cells]
        return "\n".join(lines) + "\n"
    from rich.console import Console
    from rich.table import Table

    table = Table()
    for c in frame.columns:
        table.add_column(rich_text(str(c)), justify="right" if frame[c].dtype.kind in "if" else "left")
    for row in cells:
        table.add_row(*(rich_text(c) for c in row))
    console = Console(width=160, record=True, file=io.StringIO())
    console.print(table)
    return console.export_text()
