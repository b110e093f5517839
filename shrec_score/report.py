"""The result of a scoring, computed once and rendered many ways (docs/outputs.md): :class:`Report` holds the
tables; its ``to_*`` methods call the renderers of :mod:`shrec_score.render`."""

from __future__ import annotations

import os
from contextlib import suppress
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
else:
    from ._lazy import pd  # imported on first use (see _lazy)

from .aggregate import macro_table, per_run_table, wide_values
from .errors import shown, visible
from .measures.measure import column_for
from .measures.registry import SHAPENET_MEASURES, SHAPENET_OFFICIAL
from .table import Table, as_table

#: The tables of a report, in the order of its constructor.
TABLES = ("per_query", "leaderboard", "pr_curve", "curves", "gain_vs_recall", "ranking", "per_class", "significance")


#: The notebook's table (:meth:`Report._repr_html_`).
_NOTEBOOK = """<div class="shrec-score-report">
<table><thead><tr>{% for h in head %}<th>{{ h }}</th>{% endfor %}{% if ci %}<th>95% CI</th>{% endif %}</tr></thead>
<tbody>{% for row in rows %}<tr>
{%- for c, bold in row %}<td>{% if bold %}<b>{{ c }}</b>{% else %}{{ c }}{% endif %}</td>{% endfor %}
{%- if ci %}<td>{{ intervals[loop.index0] }}</td>{% endif %}</tr>{% endfor %}</tbody></table>
<p class="signature"><small>{{ signature }}</small></p>
{% if warnings %}<ul class="warnings">{% for w in warnings %}<li>{{ w }}</li>{% endfor %}</ul>
{% endif %}</div>"""


def _frame(name: str, doc: str) -> property:
    """A property that gives the table ``name`` as a new DataFrame at each access (None when absent)."""
    return property(lambda self: self.tables[name].to_pandas() if name in self.tables else None, doc=doc)


def _render() -> Any:
    """:mod:`shrec_score.render`, imported on first use (it is a layer below and imports nothing back)."""
    from . import render

    return render


class Report:
    """Scores of a set of runs.

    ``report.tables`` holds the tables as :class:`~shrec_score.table.Table` (the CSV files and renderings are
    made of them, without pandas); each DataFrame attribute (``per_query``, ``leaderboard``...) is a copy made
    at each access (to change one, build a new :class:`Report`: it takes a DataFrame or a Table per table).

    Attributes
    ----------
    measures : list of str
        Every measure computed (the CSV columns).
    shown : list of str
        The measures shown on the terminal, in Markdown and LaTeX.
    sort : str
        The measure the leaderboard is sorted by.
    signature : dict
        shrec-score version and every setting that changes a number.
    warnings : list of str
        Things the user must know (queries left out, files ignored).
    csv_columns : dict
        Column renames in per_query.csv, per_run.csv and per_class.csv (ShapeNet: ``shapenet.mAP`` as ``mAP``).
    run_tags : dict
        run -> the one tag of a TREC run's lines, if one (trec_eval's runid, printed by ``to_trec()``).
    """

    def __init__(
        self, *, per_query: Table | pd.DataFrame, leaderboard: Table | pd.DataFrame, pr_curve: Table | pd.DataFrame,
        measures: list[str], shown: list[str], sort: str, signature: dict[str, Any], warnings: list[str] | None = None,
        curves: Table | pd.DataFrame | None = None, gain_vs_recall: Table | pd.DataFrame | None = None,
        ranking: Table | pd.DataFrame | None = None, rank_by: str = "", per_class: Table | pd.DataFrame | None = None,
        significance: Table | pd.DataFrame | None = None, csv_columns: dict[str, str] | None = None,
        summaries: dict[str, Table | pd.DataFrame] | None = None, run_tags: dict[str, str] | None = None,
    ) -> None:
        given = dict(zip(TABLES, (per_query, leaderboard, pr_curve, curves, gain_vs_recall, ranking, per_class, significance)))
        self.tables: dict[str, Table] = {k: as_table(v) for k, v in given.items() if v is not None}
        self.summary_tables: dict[str, Table] = {run: as_table(t) for run, t in (summaries or {}).items()}
        self.measures, self.shown, self.sort, self.rank_by = list(measures), list(shown), sort, rank_by
        self.signature, self.warnings = signature, list(warnings or [])
        self.csv_columns, self.run_tags = dict(csv_columns or {}), dict(run_tags or {})

    per_query = _frame("per_query", "run, query, class, then one column per measure (a DataFrame).")
    leaderboard = _frame(
        "leaderboard", "rank, run, queries, then the mean of each measure, best first by ``sort`` (the smallest first "
        "for a lower-is-better measure) and, with significance, the bootstrap interval of the sort measure (a DataFrame).",
    )
    pr_curve = _frame("pr_curve", "run, recall, precision: the mean over the queries reaching that recall (a DataFrame).")
    curves = _frame("curves", "run, rank, CG, DCG, NCG, NDCG at ranks 1..100, graded relevance only (a DataFrame or None).")
    gain_vs_recall = _frame("gain_vs_recall", "run, recall_pct, CG, DCG, queries, graded relevance only (a DataFrame or None).")
    ranking = _frame("ranking", "query, rank, run, value: the runs ranked per query by ``rank_by`` (a DataFrame or None).")
    per_class = _frame("per_class", "run, class, queries, mean of each measure (a DataFrame or None).")
    significance = _frame(
        "significance", "run_a, run_b, queries, mean_diff, wins, ties, losses, p_value, p_adjusted, significant: a "
        "positive mean_diff and a win mean run_a is better (:func:`~shrec_score.significance.pairwise`; a DataFrame or None).",
    )

    @property
    def summaries(self) -> dict[str, pd.DataFrame] | None:
        """run -> the official ShapeNet summary (DataFrames), or None."""
        return {run: t.to_pandas() for run, t in self.summary_tables.items()} or None

    def __repr__(self) -> str:
        """A few lines: the runs, the queries, the measures and the best run (not every table)."""
        board = self.tables.get("leaderboard")
        runs = [] if board is None else [str(r) for r in board["run"]]
        named = runs[:5]  # the rest counted
        listed = ", ".join(shown(r, 40) for r in named) + (f", ... ({len(runs) - len(named)} more)" if len(runs) > len(named) else "")
        queries = self.signature.get("queries", None if board is None or not len(board) else int(np.max(board["queries"])))
        lines = [
            f"<shrec-score Report: {len(runs)} run{'s' if len(runs) != 1 else ''}, {queries} queries>",
            f"  runs: {listed or '-'}",
            f"  measures: {', '.join(visible(m) for m in self.shown)} (sorted by {visible(self.sort)})",
        ]
        if len(self.measures) > len(self.shown):
            lines[-1] += f"; {len(self.measures)} computed (report.measures)"
        if runs and board is not None and self.sort in board:
            lines.append(f"  best run: {shown(runs[0], 40)} ({visible(self.sort)} {float(board[self.sort][0]):.4f})")
        if self.warnings:
            lines.append(f"  warnings: {len(self.warnings)} (report.warnings)")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """The leaderboard as an HTML table for notebooks, best values in bold (the rule of Markdown and LaTeX),
        the signature and the warnings; every text made visible, then escaped."""
        render = _render()
        head, cells, bold = render._table_cells(self)
        ci = render._intervals(self)
        return render.html_template(_NOTEBOOK).render(
            head=head, ci=ci is not None, rows=[list(zip(row, marks)) for row, marks in zip(cells, bold)],
            intervals=[f"{low:.4f}..{high:.4f}" for low, high in ci or []], signature=self.signature_text(),
            warnings=[w if w.startswith("note: ") else "warning: " + w for w in self.warnings],
        )

    def to_dataframe(self) -> pd.DataFrame:
        """The leaderboard (a copy)."""
        return self.leaderboard.copy()

    @property
    def per_run(self) -> pd.DataFrame:
        """run, queries and the measure means, in leaderboard order."""
        return self.leaderboard.drop(columns=["rank"])

    def signature_text(self) -> str:
        """One line: version and every setting that changes a number."""
        return "; ".join([f"shrec-score {self.signature['version']}", *(f"{k}: {v}" for k, v in self.signature.items() if k != "version")])

    def per_query_wide(self, measure: str | None = None) -> pd.DataFrame:
        """One row per query (query, class), one column per run, values of ``measure`` (any spelling of a
        measure of the report; default: the sort measure)."""
        runs = [str(r) for r in self.tables["leaderboard"]["run"]]
        column = measure or self.sort
        with suppress(KeyError):  # (no measure of any spelling)
            column = column if column in self.measures else column_for(column, self.measures) or column
        if column not in self.measures:
            raise ValueError(f"measure: expected one of the report's measures {', '.join(self.measures)}, got {measure or self.sort!r}")
        keys, values = wide_values(self.tables["per_query"], runs, column)
        return pd.concat([keys.to_pandas(), pd.DataFrame(values.T, columns=runs)], axis=1)

    def table(self, name: str) -> Table | None:
        """The table ``name`` (``per_query``, ``leaderboard``...) without pandas, or None."""
        return self.tables.get(name)

    def csv_files(self) -> dict[str, str]:
        """The files of ``--out``, name -> text."""
        named = {f"{k}{end}": f"{v}{end}" for k, v in self.csv_columns.items() for end in ("", "_ci_low", "_ci_high")}
        board = self.tables["leaderboard"]
        tables = {**self.tables, "per_run": Table({k: board[k] for k in board.columns if k != "rank"})}
        files = {}
        order = ("per_query", "per_run", "pr_curve", "ranking", "curves", "gain_vs_recall", "per_class", "significance")
        for key in order:  # the page's links follow it
            if key in tables and (key != "pr_curve" or len(tables[key])):  # no PR curve: no file
                table = tables[key].rename(named) if key in ("per_query", "per_run", "per_class") else tables[key]
                files[f"{'per_query_ranking' if key == 'ranking' else key}.csv"] = table.to_csv()
        for run, summary in self.summary_tables.items():
            files[f"shapenet_summary_{run}.csv"] = summary.to_csv()
        files["leaderboard.md"] = self.to_markdown()
        files["leaderboard.tex"] = self.to_latex()
        files["signature.txt"] = "".join(f"{k}: {v}\n" for k, v in self.signature.items())
        return files

    def to_csv_files(self, out_dir: str | os.PathLike[str]) -> list[str]:
        """Replace the folder ``out_dir`` with the files of :meth:`csv_files` as one unit (docs/outputs.md)."""
        from .outdir import publish  # secrets, shutil: for writing folders only

        return publish(out_dir, self.csv_files())

    def to_csv(self, *, per_query: bool = False) -> str:
        """The leaderboard (or the per-query values) as CSV: :func:`shrec_score.render.to_csv`."""
        return str(_render().to_csv(self, per_query=per_query))

    def to_json(self, *, per_query: bool = False) -> str:
        """The report as JSON: :func:`shrec_score.render.to_json`."""
        return str(_render().to_json(self, per_query=per_query))

    def to_markdown(self, *, per_query: bool = False) -> str:
        """The leaderboard as a Markdown table: :func:`shrec_score.render.to_markdown`."""
        return str(_render().to_markdown(self, per_query=per_query))

    def to_latex(self, *, per_query: bool = False) -> str:
        """The leaderboard as a LaTeX table: :func:`shrec_score.render.to_latex`."""
        return str(_render().to_latex(self, per_query=per_query))

    def to_trec(self, *, per_query: bool = False) -> str:
        """trec_eval-style lines: :func:`shrec_score.render.to_trec`."""
        return str(_render().to_trec(self, per_query=per_query))

    def to_rich(self, console: Any, *, per_query: bool = False) -> None:
        """Print the leaderboard on a rich Console: :func:`shrec_score.render.to_rich`."""
        _render().to_rich(self, console, per_query=per_query)


def shapenet_summaries(per_query: Table, per_class: Table, run_names: list[str]) -> dict[str, Table]:
    """Per run, the official ShapeNet Core55 ``summary.csv`` layout: header ``class,P@N,R@N,F1@N,mAP,NDCG``;
    rows ``microALL`` (mean over the queries), one per synset (mean over its queries, ground-truth order),
    ``macroALL`` (mean of the per-synset means); values in full precision."""
    names = list(SHAPENET_MEASURES)
    micro, macro = per_run_table(per_query, names, run_names), macro_table(per_class, names, run_names)
    out = {}
    for i, run in enumerate(run_names):
        rows = (per_class["run"] == run) & (per_class["queries"] > 0)
        values = {SHAPENET_OFFICIAL[m]: np.concatenate([micro[m][i : i + 1], per_class[m][rows], macro[m][i : i + 1]]) for m in names}
        out[run] = Table({"class": ["microALL", *per_class["class"][rows].tolist(), "macroALL"], **values})
    return out
