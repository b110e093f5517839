"""From per-query values to per-run means and a sorted leaderboard.

Every ordering follows the measure's direction in the registry: best first
is the largest value, or the smallest for a lower-is-better measure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .measures.registry import column_higher_is_better, get_measure

if TYPE_CHECKING:
    import pandas as pd
else:
    from ._lazy import pd  # imported on first use (see _lazy)


def per_run_means(per_query: pd.DataFrame, measures: Sequence[str], run_order: Sequence[str]) -> pd.DataFrame:
    """Mean of each measure over the queries where it is defined.

    Columns: run, queries (number of queries scored: at least one measure
    defined), then one column per measure.  Queries with an undefined value
    (K = 0) are left out of the means.
    """
    measures = list(measures)
    scored = per_query[measures].notna().any(axis=1)
    means = _summarise(per_query.groupby("run", sort=False), measures)
    counts = scored.groupby(per_query["run"], sort=False).sum()
    out = means.reindex(list(run_order))
    out.insert(0, "queries", counts.reindex(list(run_order)).fillna(0).astype(int))
    out = out.reset_index().rename(columns={"index": "run"})
    return out[["run", "queries", *measures]]


def _how(column: str) -> str:
    try:
        return get_measure(column).aggregate
    except KeyError:
        return "mean"


def _summarise(groups: pd.api.typing.DataFrameGroupBy, measures: list[str]) -> pd.DataFrame:
    """Each group's value of each measure: the mean over the queries where it
    is defined, or what the measure asks for (``Measure.aggregate``: the
    geometric mean of gm_map, the sums of trec_eval's counts)."""
    out = groups[measures].mean()
    for m in measures:
        how = _how(m)
        if how == "sum":
            out[m] = groups[m].sum(min_count=1)
        elif how == "geometric":
            out[m] = np.exp(out[m])
    return out


def leaderboard(per_run: pd.DataFrame, sort: str) -> pd.DataFrame:
    """Runs sorted best first by ``sort``, ranked from 1.

    Parameters
    ----------
    per_run : DataFrame
        run, queries, then one column per measure (:func:`per_run_means`).
    sort : str
        The column to sort by.  Descending when higher is better, ascending
        for a lower-is-better measure (FP_*, FN_*); a column without a
        direction (see :func:`~shrec_score.measures.column_higher_is_better`)
        sorts descending.

    Returns
    -------
    DataFrame
        rank, then the columns of ``per_run``.  Ties keep run name ascending;
        a run whose sort value is undefined goes last.

    >>> import pandas as pd
    >>> per_run = pd.DataFrame({"run": ["b", "a", "c"], "queries": [2, 2, 2], "FP_relevant": [3.0, 3.0, 1.0]})
    >>> leaderboard(per_run, "FP_relevant")[["rank", "run"]].values.tolist()
    [[1, 'c'], [2, 'a'], [3, 'b']]
    """
    board = per_run.sort_values(["run"], kind="mergesort")
    board = board.sort_values([sort], ascending=_ascending(sort), kind="mergesort", na_position="last")
    board = board.reset_index(drop=True)
    board.insert(0, "rank", range(1, len(board) + 1))
    return board


def per_query_ranking(per_query: pd.DataFrame, measure: str) -> pd.DataFrame:
    """For each query, the runs ranked by ``measure`` (Table 2 of SHREC 2006).

    Columns query, rank, run, value; best first (the smallest value first
    for a lower-is-better measure), ties by run name, undefined values last.
    Queries keep their input order.
    """
    frame = per_query[["query", "run", measure]].rename(columns={measure: "value"})
    order = {q: i for i, q in enumerate(dict.fromkeys(frame["query"]))}
    frame = frame.assign(_q=frame["query"].map(order))
    frame = frame.sort_values("run", kind="mergesort")
    frame = frame.sort_values("value", ascending=_ascending(measure), kind="mergesort", na_position="last")
    frame = frame.sort_values("_q", kind="mergesort")
    frame["rank"] = frame.groupby("_q").cumcount() + 1
    return frame[["query", "rank", "run", "value"]].reset_index(drop=True)


def _ascending(column: str) -> bool:
    """Sort ``column`` ascending only when lower is better."""
    return column_higher_is_better(column) is False


def per_class_means(per_query: pd.DataFrame, measures: Sequence[str], run_order: Sequence[str]) -> pd.DataFrame:
    """Columns run, class, queries, then the mean of each measure over the class's queries.

    Runs in ``run_order``, classes in first-appearance order; queries with
    undefined values are left out of each mean (as in :func:`per_run_means`).
    """
    measures = list(measures)
    keys = [per_query["run"], per_query["class"]]
    means = _summarise(per_query.groupby(keys, sort=False), measures)
    counts = per_query[measures].notna().any(axis=1).groupby(keys, sort=False).sum()
    out = means.reset_index()
    out.insert(2, "queries", counts.to_numpy().astype(int))
    class_pos = {c: i for i, c in enumerate(dict.fromkeys(per_query["class"]))}
    run_pos = {r: i for i, r in enumerate(run_order)}
    out = out.assign(_r=out["run"].map(run_pos), _c=out["class"].map(class_pos))
    out = out.sort_values(["_r", "_c"], kind="mergesort").drop(columns=["_r", "_c"]).reset_index(drop=True)
    return out[["run", "class", "queries", *measures]]


def macro_means(per_class: pd.DataFrame, measures: Sequence[str], run_order: Sequence[str]) -> pd.DataFrame:
    """Per-run mean of the per-class means (PSB's -macro): every class weighs the same.

    (For gm_map and trec_eval's counts: the mean of the per-class values.)

    Classes with no scored query are left out.  ``queries`` is the total
    number of scored queries.
    """
    rows = []
    for run in run_order:
        sub = per_class[(per_class["run"] == run) & (per_class["queries"] > 0)]
        row: dict[str, object] = {"run": run, "queries": int(sub["queries"].sum())}
        for m in measures:
            col = sub[m].dropna()
            row[m] = float(col.mean()) if len(col) else float("nan")
        rows.append(row)
    return pd.DataFrame(rows, columns=["run", "queries", *measures])
