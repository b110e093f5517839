"""The result of a scoring: computed once, rendered many ways.

:class:`Report` keeps computing apart from rendering (as ranx's Report does):
``to_dataframe()``, ``to_csv_files()``, ``to_csv()``, ``to_json()``,
``to_markdown()``, ``to_latex()``, ``to_trec()`` and ``to_rich()``.  Every
rendering carries the signature: the shrec-score version and every setting
that changes a number.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
else:
    from ._lazy import pd  # imported on first use (see _lazy)

from .io.writers import frame_to_csv, write_files_atomically

#: Display names on the terminal and in tables where they differ from the CSV column.
DISPLAY = {"AP": "mAP"}
#: trec_eval's names of our measures (``--format trec``).
TREC_NAMES = {"AP": "map", "FT": "Rprec", "RR": "recip_rank", "NN": "P_1"}


def trec_name(measure: str) -> str:
    if measure in TREC_NAMES:
        return TREC_NAMES[measure]
    if measure.startswith("P@"):
        return "P_" + measure[2:]
    if measure.startswith("R@"):
        return "recall_" + measure[2:]
    if measure.startswith("NDCG@"):
        return "ndcg_cut_" + measure[5:]
    return measure


@dataclass
class Report:
    """Scores of a set of runs.

    Attributes
    ----------
    per_query : DataFrame
        run, query, class, then one column per measure.
    leaderboard : DataFrame
        rank, run, queries, then the mean of each measure, best first (and,
        with significance, the bootstrap interval of the sort measure).
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
        p_adjusted, significant.
    """

    per_query: pd.DataFrame
    leaderboard: pd.DataFrame
    pr_curve: pd.DataFrame
    measures: list[str]
    shown: list[str]
    sort: str
    signature: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    curves: pd.DataFrame | None = None
    gain_vs_recall: pd.DataFrame | None = None
    ranking: pd.DataFrame | None = None
    rank_by: str = ""
    per_class: pd.DataFrame | None = None
    significance: pd.DataFrame | None = None

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
        measure = measure or self.sort
        runs = [str(r) for r in self.leaderboard["run"]]
        keys_cols = ["query", "class"] if "class" in self.per_query else ["query"]
        keys = self.per_query.drop_duplicates("query")[keys_cols].reset_index(drop=True)
        wide = self.per_query.pivot(index="query", columns="run", values=measure)
        wide = wide.reindex(keys["query"])[runs].reset_index(drop=True)
        return pd.concat([keys, wide], axis=1)

    # -- files --------------------------------------------------------------
    def csv_files(self) -> dict[str, str]:
        """The files of ``--out``, name -> text."""
        files = {
            "per_query.csv": frame_to_csv(self.per_query),
            "per_run.csv": frame_to_csv(self.per_run),
        }
        if len(self.pr_curve):
            files["pr_curve.csv"] = frame_to_csv(self.pr_curve)
        optional = {
            "per_query_ranking.csv": self.ranking,
            "curves.csv": self.curves,
            "gain_vs_recall.csv": self.gain_vs_recall,
            "per_class.csv": self.per_class,
            "significance.csv": self.significance,
        }
        for name, frame in optional.items():
            if frame is not None:
                files[name] = frame_to_csv(frame)
        files["leaderboard.md"] = self.to_markdown()
        files["leaderboard.tex"] = self.to_latex()
        files["signature.txt"] = "".join(f"{k}: {v}\n" for k, v in self.signature.items())
        return files

    def to_csv_files(self, out_dir: str | os.PathLike[str]) -> list[str]:
        """Write the files (see :meth:`csv_files`) atomically; other files in the folder are left alone."""
        return write_files_atomically(out_dir, self.csv_files())

    # -- text renderings ----------------------------------------------------
    def to_csv(self, *, per_query: bool = False) -> str:
        return frame_to_csv(self.per_query if per_query else self.leaderboard)

    def to_json(self, *, per_query: bool = False) -> str:
        doc: dict[str, Any] = {"signature": self.signature, "sort": self.sort, "leaderboard": _records(self.leaderboard)}
        if per_query:
            doc["per_query"] = _records(self.per_query)
        if self.significance is not None:
            doc["significance"] = _records(self.significance)
        return json.dumps(doc, indent=2, allow_nan=False) + "\n"

    def _table_cells(self) -> tuple[list[str], list[list[str]], list[list[bool]]]:
        """Header, formatted cells and which cells hold the best value of their column."""
        cols = ["rank", "run", "queries", *self.shown]
        head = ["rank", "run", "queries", *[DISPLAY.get(m, m) for m in self.shown]]
        best = {m: self.leaderboard[m].max() for m in self.shown}
        cells, bold = [], []
        for rec in self.leaderboard[cols].itertuples(index=False):
            values = list(rec)
            cells.append([str(values[0]), str(values[1]), str(values[2])] + [_fmt(v) for v in values[3:]])
            bold.append([False, False, False] + [_fmt(v) != "" and _fmt(v) == _fmt(best[m]) for v, m in zip(values[3:], self.shown)])
        return head, cells, bold

    def to_markdown(self) -> str:
        """Leaderboard as a Markdown table, the best value of each column in bold."""
        head, cells, bold = self._table_cells()
        lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---:", ":---", "---:"] + ["---:"] * len(self.shown)) + "|"]
        for row, b in zip(cells, bold):
            lines.append("| " + " | ".join(f"**{c}**" if is_b else c for c, is_b in zip(row, b)) + " |")
        lines.append("")
        lines.append(f"<sub>{self.signature_text()}</sub>")
        return "\n".join(lines) + "\n"

    def to_latex(self) -> str:
        """Leaderboard as a LaTeX tabular (booktabs), the best value of each column in bold."""
        head, cells, bold = self._table_cells()
        spec = "rlr" + "r" * len(self.shown)
        lines = [
            f"% {self.signature_text()}",
            f"\\begin{{tabular}}{{{spec}}}",
            "\\toprule",
            " & ".join(_tex(h) for h in head) + " \\\\",
            "\\midrule",
        ]
        for row, b in zip(cells, bold):
            lines.append(" & ".join(f"\\textbf{{{_tex(c)}}}" if is_b else _tex(c) for c, is_b in zip(row, b)) + " \\\\")
        lines += ["\\bottomrule", "\\end{tabular}"]
        return "\n".join(lines) + "\n"

    def to_trec(self, *, per_query: bool = False) -> str:
        """trec_eval-style lines ``measure<TAB>query<TAB>value`` (summary under ``all``).

        One block per run, opened by ``runid<TAB>all<TAB><run>`` as trec_eval
        does; values with 4 decimals as trec_eval prints them.  Measures keep
        trec_eval's names where they have one (map, Rprec, P_5, recip_rank).
        """
        lines = []
        for run in self.leaderboard["run"]:
            lines.append(f"{'runid':<22}\tall\t{run}")
            if per_query:
                sub = self.per_query[self.per_query["run"] == run]
                for rec in sub.to_dict(orient="records"):
                    for m in self.measures:
                        if m in rec and not _isnan(rec[m]):
                            lines.append(f"{trec_name(m):<22}\t{rec['query']}\t{rec[m]:.4f}")
            row = self.leaderboard[self.leaderboard["run"] == run].iloc[0]
            lines.append(f"{'num_q':<22}\tall\t{int(row['queries'])}")
            for m in self.measures:
                if m in row and not _isnan(row[m]):
                    lines.append(f"{trec_name(m):<22}\tall\t{row[m]:.4f}")
        return "\n".join(lines) + "\n"

    def to_rich(self, console: Any, *, per_query: bool = False) -> None:
        """Print the leaderboard (and the per-query table) on a rich Console."""
        from rich import box
        from rich.table import Table

        sig = self.signature
        title = f"shrec-score leaderboard, sorted by {DISPLAY.get(self.sort, self.sort)}"
        caption = f"{sig['mode']}, {sig['relevance']}; {sig['queries']} queries; shrec-score {sig['version']}"
        table = Table(title=title, caption=caption, box=box.SIMPLE_HEAD)
        head, cells, bold = self._table_cells()
        for i, h in enumerate(head):
            if i == 1:
                table.add_column(h, no_wrap=True)
            else:
                table.add_column(h, justify="right", no_wrap=True, min_width=max(6, len(h)) if i > 2 else None)
        ci = [c for c in self.leaderboard.columns if c.endswith("_ci_low")]
        if ci:
            table.add_column("95% CI", justify="right", no_wrap=True)
        for r, (row, b) in enumerate(zip(cells, bold)):
            styled = [f"[bold]{c}[/bold]" if is_b else c for c, is_b in zip(row, b)]
            if ci:
                lo, hi = self.leaderboard[ci[0]].iat[r], self.leaderboard[ci[0].replace("_low", "_high")].iat[r]
                styled.append(f"{_fmt(lo)}..{_fmt(hi)}")
            table.add_row(*styled)
        console.print(table)
        console.print(f"[dim]{self.signature_text()}[/dim]", highlight=False, soft_wrap=True)
        if self.significance is not None:
            t3 = Table(title=f"Pairwise randomization tests on {DISPLAY.get(self.sort, self.sort)} (Holm-corrected)", box=box.SIMPLE_HEAD)
            for c in ("run A", "run B", "mean diff", "W/T/L", "p", "p (Holm)", "significant"):
                t3.add_column(c, justify="left" if c.startswith("run") else "right")
            for rec in self.significance.itertuples(index=False):
                t3.add_row(
                    rec.run_a, rec.run_b, f"{rec.mean_diff:+.4f}", f"{rec.wins}/{rec.ties}/{rec.losses}",
                    f"{rec.p_value:.4f}", f"{rec.p_adjusted:.4f}", "yes" if rec.significant else "no",
                )
            console.print(t3)
        if per_query and self.ranking is not None and self.rank_by != self.sort:
            t2 = Table(title=f"Runs ranked per query by {DISPLAY.get(self.rank_by, self.rank_by)} (best first)")
            t2.add_column("query")
            t2.add_column("ranking")
            for q, sub in self.ranking.groupby("query", sort=False):
                t2.add_row(str(q), " > ".join(f"{r} {_fmt(v)}" for r, v in zip(sub["run"], sub["value"])))
            console.print(t2)
        elif per_query:
            wide = self.per_query_wide()
            t2 = Table(title=f"{DISPLAY.get(self.sort, self.sort)} per query")
            for c in wide.columns:
                t2.add_column(str(c), justify="left" if c in ("query", "class") else "right")
            n_keys = 2 if "class" in wide.columns else 1
            for rec in wide.itertuples(index=False):
                t2.add_row(*[str(v) for v in rec[:n_keys]], *[_fmt(v) for v in rec[n_keys:]])
            console.print(t2)


def _isnan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _fmt(value: Any) -> str:
    if value is None or _isnan(value):
        return ""
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def _tex(text: str) -> str:
    for a, b in (("\\", "\\textbackslash{}"), ("_", "\\_"), ("&", "\\&"), ("%", "\\%"), ("#", "\\#"), ("@", "@")):
        text = text.replace(a, b)
    return text


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    for rec in frame.to_dict(orient="records"):
        out.append({k: (None if _isnan(v) else (v.item() if hasattr(v, "item") else v)) for k, v in rec.items()})
    return out
