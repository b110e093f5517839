"""The result of a scoring: computed once, rendered many ways.

:class:`Report` holds the tables and the data helpers (``to_dataframe()``,
``per_query_wide()``, ``csv_files()``, ``to_csv_files()``,
``signature_text()``); the text renderings live in :mod:`shrec_score.render`
(as ranx keeps its Report apart from its tables).  The ``to_markdown()``,
``to_latex()``, ``to_csv()``, ``to_json()``, ``to_trec()`` and ``to_rich()``
methods are thin conveniences for notebooks that call :mod:`~shrec_score.render`.
Every rendering carries the signature: the shrec-score version and every
setting that changes a number.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
else:
    from ._lazy import pd  # imported on first use (see _lazy)

from .aggregate import macro_table, per_run_table, wide_values
from .errors import shown, visible
from .io.writers import frame_to_csv
from .measures.registry import SHAPENET_MEASURES, SHAPENET_OFFICIAL
from .table import Table, as_table

#: Runs named in ``repr(report)`` (the rest are counted).
REPR_RUNS = 5

#: The tables of a report, in the order of its constructor.
TABLES = ("per_query", "leaderboard", "pr_curve", "curves", "gain_vs_recall", "ranking", "per_class", "significance")


def _frame(name: str, doc: str) -> property:
    def get(self: Report) -> pd.DataFrame | None:
        table = self.tables.get(name)
        return None if table is None else table.to_pandas()

    return property(get, doc=doc)


class Report:
    """Scores of a set of runs.

    The report holds its tables as :class:`~shrec_score.table.Table`
    (``report.tables``: what the CSV files and the renderings are made of,
    without pandas).  The attributes below are pandas DataFrames made from
    them at each access: a copy, so changing one changes nothing in the report
    (build a new :class:`Report` from changed DataFrames instead; the
    constructor takes a DataFrame or a Table for each table).

    Attributes
    ----------
    per_query : DataFrame
        run, query, class, then one column per measure.
    leaderboard : DataFrame
        rank, run, queries, then the mean of each measure, best first by
        ``sort`` (the smallest first for a lower-is-better measure) and, with
        significance, the bootstrap interval of the sort measure.
    pr_curve : DataFrame
        run, recall, precision (mean over queries reaching that recall).
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
    curves, gain_vs_recall : DataFrame or None
        SHREC 2006 curves (graded relevance).
    ranking : DataFrame or None
        query, rank, run, value: the runs ranked per query by ``rank_by``.
    per_class : DataFrame or None
        run, class, queries, mean of each measure.
    significance : DataFrame or None
        run_a, run_b, queries, mean_diff, wins, ties, losses, p_value,
        p_adjusted, significant; a positive mean_diff and a win mean run_a
        is better (see :func:`~shrec_score.significance.pairwise`).
    csv_columns : dict
        Column renames in per_query.csv, per_run.csv and per_class.csv
        (ShapeNet: ``shapenet.mAP`` is written ``mAP``, the official name).
    summaries : dict of DataFrame or None
        run -> the official ShapeNet summary (``shapenet_summary_<run>.csv``).
    run_tags : dict
        run -> the tag of a TREC run's lines, where it is one for the whole
        file (trec_eval's runid, printed by ``to_trec()``).
    """

    def __init__(
        self,
        *,
        per_query: Table | pd.DataFrame,
        leaderboard: Table | pd.DataFrame,
        pr_curve: Table | pd.DataFrame,
        measures: list[str],
        shown: list[str],
        sort: str,
        signature: dict[str, Any],
        warnings: list[str] | None = None,
        curves: Table | pd.DataFrame | None = None,
        gain_vs_recall: Table | pd.DataFrame | None = None,
        ranking: Table | pd.DataFrame | None = None,
        rank_by: str = "",
        per_class: Table | pd.DataFrame | None = None,
        significance: Table | pd.DataFrame | None = None,
        csv_columns: dict[str, str] | None = None,
        summaries: dict[str, Table | pd.DataFrame] | None = None,
        run_tags: dict[str, str] | None = None,
    ) -> None:
        given = dict(zip(TABLES, (per_query, leaderboard, pr_curve, curves, gain_vs_recall, ranking, per_class, significance)))
        self.tables: dict[str, Table] = {k: as_table(v) for k, v in given.items() if v is not None}
        self.summary_tables: dict[str, Table] = {run: as_table(t) for run, t in (summaries or {}).items()}
        self.measures, self.shown, self.sort, self.rank_by = list(measures), list(shown), sort, rank_by
        self.signature = signature
        self.warnings = list(warnings or [])
        self.csv_columns = dict(csv_columns or {})
        self.run_tags = dict(run_tags or {})

    per_query = _frame("per_query", "run, query, class, then one column per measure (a DataFrame).")
    leaderboard = _frame("leaderboard", "rank, run, queries, then the mean of each measure, best first (a DataFrame).")
    pr_curve = _frame("pr_curve", "run, recall, precision (a DataFrame).")
    curves = _frame("curves", "run, rank, CG, DCG, NCG, NDCG at ranks 1..100, graded relevance only (a DataFrame or None).")
    gain_vs_recall = _frame("gain_vs_recall", "run, recall_pct, CG, DCG, queries, graded relevance only (a DataFrame or None).")
    ranking = _frame("ranking", "query, rank, run, value: the runs ranked per query by ``rank_by`` (a DataFrame or None).")
    per_class = _frame("per_class", "run, class, queries, mean of each measure (a DataFrame or None).")
    significance = _frame("significance", "The pairwise tests of the runs (a DataFrame or None).")

    @property
    def summaries(self) -> dict[str, pd.DataFrame] | None:
        """run -> the official ShapeNet summary (DataFrames), or None."""
        return {run: t.to_pandas() for run, t in self.summary_tables.items()} or None

    # -- notebooks ----------------------------------------------------------
    def __repr__(self) -> str:
        """A few lines: the runs, the queries, the measures and the best run (not every table)."""
        board = self.tables.get("leaderboard")
        runs = [] if board is None else [str(r) for r in board["run"]]
        listed = ", ".join(shown(r, 40) for r in runs[:REPR_RUNS]) + (f", ... ({len(runs) - REPR_RUNS} more)" if len(runs) > REPR_RUNS else "")
        queries = self.signature.get("queries", None if board is None or not len(board) else int(np.max(board["queries"])))
        lines = [
            f"<shrec-score Report: {len(runs)} run{'s' if len(runs) != 1 else ''}, {queries} queries>",
            f"  runs: {listed or '-'}",
            f"  measures: {', '.join(visible(m) for m in self.shown)} (sorted by {visible(self.sort)})",
        ]
        if len(self.measures) > len(self.shown):
            lines[-1] += f"; {len(self.measures)} computed (report.measures)"
        if runs and board is not None and self.sort in board:
            value = float(board[self.sort][0])
            lines.append(f"  best run: {shown(runs[0], 40)} ({visible(self.sort)} {value:.4f})")
        if self.warnings:
            lines.append(f"  warnings: {len(self.warnings)} (report.warnings)")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """The leaderboard as an HTML table for notebooks: the best value of each
        column in bold (as in Markdown and LaTeX), the signature in one line and
        the warnings; every text escaped (:func:`html.escape` after
        :func:`~shrec_score.errors.visible`)."""
        import html

        from .render import _table_cells  # the one rule for cells and best marks

        def text(value: str) -> str:
            return html.escape(visible(value), quote=True)

        head, cells, bold = _table_cells(self)
        board = self.tables["leaderboard"]
        ci = next((c for c in board.columns if c.endswith("_ci_low")), None)
        ths = "".join(f"<th>{text(h)}</th>" for h in head) + ("<th>95% CI</th>" if ci else "")
        rows = []
        for r, (row, marks) in enumerate(zip(cells, bold)):
            tds = "".join(f"<td><b>{text(c)}</b></td>" if b else f"<td>{text(c)}</td>" for c, b in zip(row, marks))
            if ci:
                low, high = float(board[ci][r]), float(board[ci.replace("_low", "_high")][r])
                tds += f"<td>{low:.4f}..{high:.4f}</td>"
            rows.append(f"<tr>{tds}</tr>")
        parts = [
            '<div class="shrec-score-report">',
            f"<table><thead><tr>{ths}</tr></thead><tbody>{''.join(rows)}</tbody></table>",
            f'<p class="signature"><small>{text(self.signature_text())}</small></p>',
        ]
        if self.warnings:
            items = "".join(f"<li>{text(w if w.startswith('note: ') else 'warning: ' + w)}</li>" for w in self.warnings)
            parts.append(f'<ul class="warnings">{items}</ul>')
        parts.append("</div>")
        return "\n".join(parts)

    # -- data -------------------------------------------------------------
    def to_dataframe(self) -> pd.DataFrame:
        """The leaderboard (a copy)."""
        return self.leaderboard.copy()

    @property
    def per_run(self) -> pd.DataFrame:
        """run, queries and the measure means, in leaderboard order."""
        return self.leaderboard.drop(columns=["rank"])

    def signature_text(self) -> str:
        """One line: version and every setting that changes a number."""
        sig = self.signature
        parts = [f"shrec-score {sig['version']}"] + [f"{k}: {v}" for k, v in sig.items() if k != "version"]
        return "; ".join(parts)

    def per_query_wide(self, measure: str | None = None) -> pd.DataFrame:
        """One row per query (query, class), one column per run, values of ``measure``."""
        runs = [str(r) for r in self.tables["leaderboard"]["run"]]
        keys, values = wide_values(self.tables["per_query"], runs, measure or self.sort)
        return pd.concat([keys.to_pandas(), pd.DataFrame(values.T, columns=runs)], axis=1)

    # -- files --------------------------------------------------------------
    def table(self, name: str) -> Table | None:
        """The table ``name`` (``per_query``, ``leaderboard``...) without pandas:
        what the renderers and the CSV files read."""
        return self.tables.get(name)

    def csv_files(self) -> dict[str, str]:
        """The files of ``--out``, name -> text."""
        named = {f"{k}{end}": f"{v}{end}" for k, v in self.csv_columns.items() for end in ("", "_ci_low", "_ci_high")}
        per_query, board, pr = self.table("per_query"), self.table("leaderboard"), self.table("pr_curve")
        assert per_query is not None and board is not None and pr is not None
        files = {
            "per_query.csv": frame_to_csv(per_query.rename(named)),
            "per_run.csv": frame_to_csv(board.drop(["rank"]).rename(named)),
        }
        if len(pr):
            files["pr_curve.csv"] = frame_to_csv(pr)
        per_class = self.table("per_class")
        optional = {
            "per_query_ranking.csv": self.table("ranking"),
            "curves.csv": self.table("curves"),
            "gain_vs_recall.csv": self.table("gain_vs_recall"),
            "per_class.csv": None if per_class is None else per_class.rename(named),
            "significance.csv": self.table("significance"),
        }
        for name, frame in optional.items():
            if frame is not None:
                files[name] = frame_to_csv(frame)
        for run, summary in self.summary_tables.items():
            files[f"shapenet_summary_{run}.csv"] = frame_to_csv(summary)
        files["leaderboard.md"] = self.to_markdown()
        files["leaderboard.tex"] = self.to_latex()
        files["signature.txt"] = "".join(f"{k}: {v}\n" for k, v in self.signature.items())
        return files

    def to_csv_files(self, out_dir: str | os.PathLike[str]) -> list[str]:
        """Replace the folder ``out_dir`` with the files of :meth:`csv_files`, as one unit.

        The folder then holds exactly these files plus what the user keeps
        there; files an earlier scoring wrote and this one does not are
        removed (see :mod:`shrec_score.outdir`).
        """
        # imported here: outdir's imports (secrets, shutil) serve writing folders only
        from .outdir import publish

        return publish(out_dir, self.csv_files())

    # -- text renderings (shrec_score.render; imported here, not at module level: render imports report)
    def to_csv(self, *, per_query: bool = False) -> str:
        """The leaderboard (or the per-query values) as CSV: :func:`shrec_score.render.to_csv`."""
        from .render import to_csv

        return to_csv(self, per_query=per_query)

    def to_json(self, *, per_query: bool = False) -> str:
        """The report as JSON: :func:`shrec_score.render.to_json`."""
        from .render import to_json

        return to_json(self, per_query=per_query)

    def to_markdown(self) -> str:
        """The leaderboard as a Markdown table: :func:`shrec_score.render.to_markdown`."""
        from .render import to_markdown

        return to_markdown(self)

    def to_latex(self) -> str:
        """The leaderboard as a LaTeX tabular: :func:`shrec_score.render.to_latex`."""
        from .render import to_latex

        return to_latex(self)

    def to_trec(self, *, per_query: bool = False) -> str:
        """trec_eval-style lines: :func:`shrec_score.render.to_trec`."""
        from .render import to_trec

        return to_trec(self, per_query=per_query)

    def to_rich(self, console: Any, *, per_query: bool = False) -> None:
        """Print the leaderboard on a rich Console: :func:`shrec_score.render.to_rich`."""
        from .render import to_rich

        to_rich(self, console, per_query=per_query)


def shapenet_summaries(per_query: Table, per_class: Table, run_names: list[str]) -> dict[str, Table]:
    """Per run, the official ShapeNet Core55 ``summary.csv`` layout.

    Header ``class,P@N,R@N,F1@N,mAP,NDCG``; rows ``microALL`` (mean over the
    queries), one per synset (mean over its queries, ground-truth order),
    ``macroALL`` (mean of the per-synset means).  Values in full precision.
    """
    names = list(SHAPENET_MEASURES)
    micro = per_run_table(per_query, names, run_names)
    macro = macro_table(per_class, names, run_names)
    out = {}
    for i, run in enumerate(run_names):
        rows = (per_class["run"] == run) & (per_class["queries"] > 0)
        cols: dict[str, Any] = {"class": ["microALL", *per_class["class"][rows].tolist(), "macroALL"]}
        for m in names:
            cols[SHAPENET_OFFICIAL[m]] = np.concatenate([micro[m][i : i + 1], per_class[m][rows], macro[m][i : i + 1]]).astype(np.float64)
        out[run] = Table(cols)
    return out
