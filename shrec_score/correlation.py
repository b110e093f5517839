"""Rank correlation against human ground truth (seed 004): per query tau-b (docs/measures.md).  A system's
value for an item is its distance (lower = more similar unless ``lower_is_better=False``), else its rank, or a
TREC score; the ground truth is a mean user score; both are oriented "higher = more similar" first."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .errors import InputError
from .io.lists import parse_list, query_files
from .io.text import read_text
from .io.trec import duplicate_error, encode, read_trec_lines
from .join import repeated_lines
from .measures.kendall import kendall_tau_b
from .model import RunSource


def _check_items(path: str, run: str, query: str, ranked: list[str], expected: set[str]) -> None:
    if missing := expected.difference(ranked):
        raise InputError(path, None, f"expected run {run!r} to rank every item of query {query!r}; {len(missing)} of "
                         f"{len(expected)} are not ranked", f"first missing: {min(missing)!r}")
    if extra := [x for x in ranked if x not in expected]:
        raise InputError(path, None, f"expected only items of query {query!r} in the ground truth", f"unknown item {extra[0]!r}")


def run_values(source: RunSource, gt: pd.DataFrame, *, lower_is_better: bool = True) -> dict[str, tuple[list[str], np.ndarray]]:
    """Per query: the items and the system's values, oriented higher = more similar."""
    items_of = {q: list(sub["item"]) for q, sub in gt.groupby("query", sort=False)}
    out: dict[str, tuple[list[str], np.ndarray]] = {}
    if source.format == "lists":
        files = query_files(source, items_of, queries_of="the ground truth")
        for q, items in items_of.items():
            if q not in files:
                raise InputError(source.path, None, f"expected a ranked list for every query; run {source.name!r} has none for query {q!r}")
            idx, dist = parse_list(files[q], read_text(files[q]), q, {it: i for i, it in enumerate(items)})
            ranked = [items[i] for i in idx]
            _check_items(files[q], source.name, q, ranked, set(items))
            values = np.arange(1, len(ranked) + 1, dtype=np.float64) if dist is None else dist  # no distances: the rank
            out[q] = (ranked, -values if dist is None or lower_is_better else values)  # a rank: lower is better
    elif source.format == "trec":
        lines = read_trec_lines(source.path)
        (queries, q_codes), (docs, d_codes) = encode(lines.queries), encode(lines.docs)
        again = repeated_lines(q_codes, d_codes)
        if again.size:  # a target ranked twice for one query: name both lines
            dup = int(again[0])
            raise duplicate_error(source.path, queries[int(q_codes[dup])], docs[int(d_codes[dup])])
        code = {q: i for i, q in enumerate(queries)}
        for q, items in items_of.items():
            rows = np.flatnonzero(q_codes == code.get(q, -1))  # the query's lines, in file order
            if not rows.size:
                raise InputError(source.path, None, f"expected a ranking for every query; run {source.name!r} has none for query {q!r}")
            ranked = [docs[d] for d in d_codes[rows]]
            _check_items(source.path, source.name, q, ranked, set(items))
            out[q] = (ranked, np.asarray(lines.scores[rows], dtype=np.float64))
    else:
        raise InputError(source.path, None, "expected ranked-list folders or TREC runs for a ground-truth (Kendall) evaluation", f"a {source.format} run")
    return out


def evaluate_kendall(
    sources: list[RunSource], gt: pd.DataFrame, *, ground_truth_higher_is_better: bool = True,
    lower_is_better: bool = True,
) -> pd.DataFrame:
    """The per-query frame: run, query, items, tau_b."""
    rows = []
    gt_by_query = {q: dict(zip(sub["item"], sub["score"])) for q, sub in gt.groupby("query", sort=False)}
    sign = 1.0 if ground_truth_higher_is_better else -1.0
    for source in sources:
        for q, (ranked, system) in run_values(source, gt, lower_is_better=lower_is_better).items():
            x = sign * np.asarray([gt_by_query[q][it] for it in ranked], dtype=np.float64)
            rows.append({"run": source.name, "query": q, "items": len(ranked), "tau_b": kendall_tau_b(x, system)})
    return pd.DataFrame(rows, columns=["run", "query", "items", "tau_b"])
