"""The result of a scoring: computed once, rendered many ways.

:class:`Report` keeps computing apart from rendering (as ranx's Report does):
``to_dataframe()``, ``to_csv_files()``, ``to_csv()``, ``to_json()``,
``to_markdown()`` and ``to_rich()``.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .io.writers import frame_to_csv, write_files_atomically

#: Display names on the terminal where they differ from the CSV column.
DISPLAY = {"AP": "mAP"}


@dataclass
class Report:
    """Scores of a set of runs.

    Attributes
    ----------
    per_query : DataFrame
        run, query, class, then one column per measure.
    leaderboard : DataFrame
        rank, run, queries, then the mean of each measure, best first.
    pr_curve : DataFrame
        run, recall, precision (mean over queries reaching that recall).
    measures : list of str
        Every measure computed (the CSV columns).
    shown : list of str
        The measures shown on the terminal and in Markdown.
    sort : str
        The measure the leaderboard is sorted by.
    signature : dict
        shrec-score version and every setting that changes a number.
    warnings : list of str
        Things the user must know (queries left out, files ignored).
    curves, gain_vs_recall : DataFrame or None
        SHREC 2006 curves (graded relevance): mean CG/DCG/NCG/NDCG at ranks
        1..100, and mean CG/DCG when recall first reaches each percentage.
    ranking : DataFrame
        query, rank, run, value: the runs ranked per query by ``rank_by``.
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

    # -- data -------------------------------------------------------------
    def to_dataframe(self) -> pd.DataFrame:
        """The leaderboard (a copy)."""
        return self.leaderboard.copy()

    @property
    def per_run(self) -> pd.DataFrame:
        """run, queries and the measure means, in leaderboard order."""
        return self.leaderboard.drop(columns=["rank"])

    def per_query_wide(self, measure: str | None = None) -> pd.DataFrame:
        """One row per query (query, class), one column per run, values of ``measure``."""
        measure = measure or self.sort
        runs = [str(r) for r in self.leaderboard["run"]]
        keys = self.per_query.drop_duplicates("query")[["query", "class"]].reset_index(drop=True)
        wide = self.per_query.pivot(index="query", columns="run", values=measure)
        wide = wide.reindex(keys["query"])[runs].reset_index(drop=True)
        return pd.concat([keys, wide], axis=1)

    # -- files --------------------------------------------------------------
    def csv_files(self) -> dict[str, str]:
        """The CSV files of ``--out``, name -> text."""
        files = {
            "per_query.csv": frame_to_csv(self.per_query),
            "per_run.csv": frame_to_csv(self.per_run),
        }
        if len(self.pr_curve):
            files["pr_curve.csv"] = frame_to_csv(self.pr_curve)
        if self.ranking is not None:
            files["per_query_ranking.csv"] = frame_to_csv(self.ranking)
        if self.curves is not None:
            files["curves.csv"] = frame_to_csv(self.curves)
        if self.gain_vs_recall is not None:
            files["gain_vs_recall.csv"] = frame_to_csv(self.gain_vs_recall)
        return files

    def to_csv_files(self, out_dir: str | os.PathLike[str]) -> list[str]:
        """Write the CSV files (see :meth:`csv_files`) atomically."""
        return write_files_atomically(out_dir, self.csv_files())

    # -- text renderings ----------------------------------------------------
    def to_csv(self, *, per_query: bool = False) -> str:
        return frame_to_csv(self.per_query if per_query else self.leaderboard)

    def to_json(self, *, per_query: bool = False) -> str:
        doc: dict[str, Any] = {
            "signature": self.signature,
            "sort": self.sort,
            "leaderboard": _records(self.leaderboard),
        }
        if per_query:
            doc["per_query"] = _records(self.per_query)
        return json.dumps(doc, indent=2, allow_nan=False) + "\n"

    def to_markdown(self) -> str:
        cols = ["rank", "run", "queries", *self.shown]
        head = ["rank", "run", "queries", *[DISPLAY.get(m, m) for m in self.shown]]
        lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---:", ":---", "---:"] + ["---:"] * len(self.shown)) + "|"]
        for rec in self.leaderboard[cols].itertuples(index=False):
            cells = [str(rec[0]), str(rec[1]), str(rec[2])] + [_fmt(v) for v in rec[3:]]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines) + "\n"

    def to_rich(self, console: Any, *, per_query: bool = False) -> None:
        """Print the leaderboard (and the per-query table) on a rich Console."""
        from rich import box
        from rich.table import Table

        sig = self.signature
        title = f"shrec-score leaderboard, sorted by {DISPLAY.get(self.sort, self.sort)}"
        caption = f"{sig['mode']}, {sig['relevance']}; {sig['queries']} queries; shrec-score {sig['version']}"
        table = Table(title=title, caption=caption, box=box.SIMPLE_HEAD)
        table.add_column("rank", justify="right", no_wrap=True)
        table.add_column("run", no_wrap=True)
        table.add_column("queries", justify="right", no_wrap=True)
        for m in self.shown:
            head = DISPLAY.get(m, m)
            table.add_column(head, justify="right", no_wrap=True, min_width=max(6, len(head)), style="bold" if m == self.sort else None)
        for rec in self.leaderboard[["rank", "run", "queries", *self.shown]].itertuples(index=False):
            table.add_row(str(rec[0]), str(rec[1]), str(rec[2]), *[_fmt(v) for v in rec[3:]])
        console.print(table)
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
            for rec in wide.itertuples(index=False):
                t2.add_row(str(rec[0]), str(rec[1]), *[_fmt(v) for v in rec[2:]])
            console.print(t2)


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    for rec in frame.to_dict(orient="records"):
        out.append({k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in rec.items()})
    return out
