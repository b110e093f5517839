"""From per-query values to per-run means and a sorted leaderboard, in numpy on Tables; every mean summed in
:func:`group_sums`' order (docs/architecture.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .measures.measure import column_higher_is_better, get_measure
from .table import Table, object_column


def group_sums(values: np.ndarray, group: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group and column: the sum of the defined (non-NaN) values, and their count; ``group`` is each row's
    group (-1: none).  The one order of summation of every mean: a group's rows in input order, NaN as 0,
    pairwise ``np.sum`` (tests/test_table.py::test_group_sums_by_hand)."""
    order = np.argsort(group, kind="stable")
    bounds = np.searchsorted(group[order], np.arange(n_groups + 1))
    defined = ~np.isnan(values[order])
    filled = np.ascontiguousarray(np.where(defined, values[order], 0.0).T)  # columns x rows: each column's values contiguous
    counted = np.ascontiguousarray(defined.T)
    sums = np.zeros((n_groups, values.shape[1]))
    counts = np.zeros((n_groups, values.shape[1]), dtype=np.int64)
    for g in range(n_groups):
        sums[g] = filled[:, bounds[g] : bounds[g + 1]].sum(axis=1)
        counts[g] = counted[:, bounds[g] : bounds[g + 1]].sum(axis=1)
    return sums, counts


def column_aggregate(column: str) -> str:
    """How a run's value of the measure ``column`` comes from its per-query values: mean, sum or geometric."""
    try:
        return get_measure(column).aggregate
    except KeyError:
        return "mean"


def _codes(values: np.ndarray, known: dict[Any, int] | None = None) -> tuple[np.ndarray, dict[Any, int]]:
    """Each value's place in ``known`` (else first-appearance order); -1 for None, NaN or unknown."""
    index: dict[Any, int] = {} if known is None else known
    get = (lambda v: index.get(v, -1)) if known is not None else (lambda v: index.setdefault(v, len(index)))
    return np.asarray([-1 if v is None or v != v else get(v) for v in values.tolist()], dtype=np.int64), index


def _grouped(per_query: Table, measures: Sequence[str], group: np.ndarray, keys: dict[str, np.ndarray]) -> Table:
    """``keys`` (a row per group), queries (scored: a measure defined), each measure's aggregate (NaN: none defined)."""
    n = len(keys["run"])
    values = np.array([per_query[m] for m in measures], dtype=np.float64).reshape(len(measures), len(per_query)).T
    sums, counts = group_sums(values, group, n)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(counts > 0, sums / np.maximum(counts, 1).astype(np.float64), np.nan)
    for j, m in enumerate(measures):
        how = column_aggregate(m)
        if how == "sum":
            out[:, j] = np.where(counts[:, j] > 0, sums[:, j], np.nan)
        elif how == "geometric":
            out[:, j] = np.exp(out[:, j])
    scored = (~np.isnan(values)).any(axis=1) & (group >= 0)
    queries = np.bincount(group[scored], minlength=n).astype(np.int64)
    return Table({**keys, "queries": queries, **{m: out[:, j] for j, m in enumerate(measures)}}, n)


def per_run_table(per_query: Table, measures: Sequence[str], run_order: Sequence[str]) -> Table:
    """Columns run, queries (scored: a measure defined), then each measure's mean over its defined values."""
    runs = list(dict.fromkeys(run_order))
    place = {r: i for i, r in enumerate(runs)}
    table = _grouped(per_query, measures, _codes(per_query["run"], place)[0], {"run": object_column(runs)})
    return table.take(np.asarray([place[r] for r in run_order], dtype=np.int64))


def per_class_table(per_query: Table, measures: Sequence[str], run_order: Sequence[str]) -> Table:
    """Columns run, class, queries, then each measure's mean over the class's queries (classes in first-appearance order)."""
    runs = list(dict.fromkeys(run_order))
    run_code, _ = _codes(per_query["run"], {r: i for i, r in enumerate(runs)})
    class_code, classes = _codes(per_query["class"])
    n_c = max(len(classes), 1)
    pair = np.where((run_code >= 0) & (class_code >= 0), run_code * n_c + class_code, -1)
    present = np.flatnonzero(np.bincount(pair[pair >= 0], minlength=len(runs) * n_c))  # (run, class) pairs in run order, then class order
    group = np.searchsorted(present, pair)
    group[pair < 0] = -1
    run_of, class_of = np.divmod(present, n_c)
    names = list(classes)
    keys = {"run": object_column([runs[i] for i in run_of]), "class": object_column([names[i] for i in class_of])}
    return _grouped(per_query, measures, group, keys)


def macro_table(per_class: Table, measures: Sequence[str], run_order: Sequence[str]) -> Table:
    """Per-run mean of the per-class means (PSB's -macro; docs/outputs.md): classes without a scored query left
    out, a summed measure (num_*) summed, a geometric one (gm_map) the geometric mean of the class values."""
    queries = np.asarray(per_class["queries"], dtype=np.int64)
    runs = per_class["run"].astype(object)
    runs[queries <= 0] = None  # a class left out
    cols: dict[str, Any] = {"run": runs, **{m: per_class[m] for m in measures}}
    with np.errstate(divide="ignore"):  # a class value of 0 (every AP floored): log 0 = -inf, exp gives 0 back
        logs = [m for m in measures if column_aggregate(m) == "geometric"]
        cols.update((m, np.log(np.asarray(cols[m], dtype=np.float64))) for m in logs)
    table = per_run_table(Table(cols, len(runs)), measures, run_order)
    return table.assign("queries", np.asarray([queries[runs == run].sum() for run in run_order], dtype=np.int64), at=1)


def sort_order(values: np.ndarray, ascending: bool) -> np.ndarray:
    """The stable order of ``values`` (ties keep their order), undefined values last."""
    if values.dtype.kind not in "fiub":  # text: Python's order
        return np.argsort(values, kind="stable")
    nan = np.isnan(values) if values.dtype.kind == "f" else np.zeros(len(values), dtype=bool)
    defined = np.flatnonzero(~nan)
    key = values[defined] if ascending else -values[defined].astype(np.float64)  # largest first, ties in their order
    return np.concatenate([defined[np.argsort(key, kind="stable")], np.flatnonzero(nan)])


def leaderboard_table(per_run: Table, sort: str) -> Table:
    """Runs sorted best first by ``sort`` (its direction; none: descending), ranked from 1; ties by run name, NaN last."""
    by_name = per_run.take(sort_order(per_run["run"], True))
    board = by_name.take(sort_order(by_name[sort], column_higher_is_better(sort) is False))
    return board.assign("rank", np.arange(1, len(board) + 1, dtype=np.int64), at=0)


def wide_values(per_query: Table, runs: Sequence[str], measure: str) -> tuple[Table, np.ndarray]:
    """The key columns (query[, class]) in first-appearance order and a (runs x queries) array of ``measure`` (NaN: no value)."""
    q_code, first = _codes(per_query["query"])
    order = np.argsort(q_code, kind="stable")
    at = order[np.searchsorted(q_code[order], np.arange(len(first)))]  # each query's first row
    keys = Table({k: per_query[k][at] for k in (("query", "class") if "class" in per_query else ("query",))}, len(first))
    run_names = object_column([str(r) for r in per_query["run"].tolist()])
    r_code, _ = _codes(run_names, {str(r): j for j, r in enumerate(runs)})
    values = np.full((len(runs), len(first)), np.nan)
    known = r_code >= 0
    values[r_code[known], q_code[known]] = np.asarray(per_query[measure], dtype=np.float64)[known]
    return keys, values


def ranking_table(per_query: Table, measure: str) -> Table:
    """Per query (input order), the runs ranked by ``measure``: query, rank, run, value; ties by run name, NaN last (SHREC 2006 Table 2)."""
    q, _ = _codes(per_query["query"])  # the queries' input order
    frame = Table({"query": per_query["query"], "run": per_query["run"], "value": per_query[measure], "_q": q}, len(per_query))
    frame = frame.take(sort_order(frame["run"], True))
    frame = frame.take(sort_order(np.asarray(frame["value"]), column_higher_is_better(measure) is False))
    frame = frame.take(np.argsort(frame["_q"], kind="stable"))
    rank = np.arange(len(frame)) - np.searchsorted(frame["_q"], frame["_q"]) + 1  # place within its query
    return Table({"query": frame["query"], "rank": rank.astype(np.int64), "run": frame["run"], "value": frame["value"]}, len(frame))

