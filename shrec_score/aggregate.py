"""From per-query values to per-run means and a sorted leaderboard."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd


def per_run_means(per_query: pd.DataFrame, measures: Sequence[str], run_order: Sequence[str]) -> pd.DataFrame:
    """Mean of each measure over the queries where it is defined.

    Columns: run, queries (number of queries scored: at least one measure
    defined), then one column per measure.  Queries with an undefined value
    (K = 0) are left out of the means.
    """
    rows = []
    for run in run_order:
        sub = per_query[per_query["run"] == run]
        values = sub[list(measures)]
        row: dict[str, object] = {"run": run, "queries": int(values.notna().any(axis=1).sum())}
        for m in measures:
            col = values[m].dropna()
            row[m] = float(col.mean()) if len(col) else float("nan")
        rows.append(row)
    return pd.DataFrame(rows, columns=["run", "queries", *measures])


def leaderboard(per_run: pd.DataFrame, sort: str) -> pd.DataFrame:
    """Runs sorted by ``sort`` descending (ties: run name ascending), ranked from 1.

    A run whose sort value is undefined goes last.
    """
    board = per_run.sort_values(["run"], kind="mergesort")
    board = board.sort_values([sort], ascending=False, kind="mergesort", na_position="last")
    board = board.reset_index(drop=True)
    board.insert(0, "rank", range(1, len(board) + 1))
    return board
