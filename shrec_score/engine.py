"""Runs x queries -> per-query values, on whole arrays.

A ranked list is turned into the ranks of its relevant items (a
:class:`~shrec_score.measures.RankBlock`) in one vectorised pass over all the
lists of a run; every binary measure is then a few numpy operations on that
block.  No Python loop over ranked items.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .measures import PR_LEVELS, Measure, RankBlock, Settings, pr_curve
from .model import RankedRun
from .relevance import Relevance


def rank_block(run: RankedRun, relevance: Relevance, *, level: int = 1) -> RankBlock:
    """Ranks of the relevant items (gain >= ``level``) of every query of ``run``.

    ``run.query_ids`` must be ``relevance.query_ids`` (see :func:`align`).
    """
    n_q = len(run.query_ids)
    lengths = run.lengths()
    row = np.repeat(np.arange(n_q), lengths)
    gains = relevance.gains(row, run.targets)
    hit = gains >= level
    hit_rows = row[hit]
    hit_pos = (np.arange(run.targets.size) - run.offsets[row])[hit] + 1
    counts = np.bincount(hit_rows, minlength=n_q)
    starts = np.zeros(n_q, dtype=np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    col = np.arange(hit_rows.size) - starts[hit_rows]
    k = relevance.n_relevant(level)
    width = max(1, int(k.max(initial=0)), int(counts.max(initial=0)))
    ranks = np.full((n_q, width), np.inf)
    ranks[hit_rows, col] = hit_pos
    return RankBlock(ranks, k, lengths.astype(np.int64))


def align(run: RankedRun, query_ids: Sequence[str]) -> RankedRun:
    """Reorder a run's lists to ``query_ids`` (every query must be present)."""
    if list(run.query_ids) == list(query_ids):
        return run
    pos = {q: i for i, q in enumerate(run.query_ids)}
    lists = {q: run.ranked_list(pos[q]) for q in query_ids}
    return RankedRun.from_lists(run.name, lists)


@dataclass
class Evaluation:
    """Raw results: one row per (run, query), and the mean PR curve per run."""

    per_query: pd.DataFrame
    pr_curve: pd.DataFrame


def evaluate(
    runs: Sequence[RankedRun],
    relevance: Relevance,
    measures: Sequence[Measure],
    settings: Settings = Settings(),
    *,
    pr_levels: np.ndarray = PR_LEVELS,
) -> Evaluation:
    """Score every run on every query of ``relevance``.

    Returns per-query values (columns run, query, class, then one per
    measure; NaN where a measure is undefined, e.g. K = 0) and the PR curve
    averaged over the queries that reach each recall level.
    """
    frames = []
    curves = []
    for run in runs:
        block = rank_block(align(run, relevance.query_ids), relevance)
        data: dict[str, object] = {
            "run": run.name,
            "query": relevance.query_ids,
            "class": relevance.query_classes,
        }
        for m in measures:
            data[m.name] = m.compute(block, settings)
        frames.append(pd.DataFrame(data))
        pr = pr_curve(block.rel_ranks, n_relevant=block.n_relevant, levels=pr_levels)
        with np.errstate(invalid="ignore"):
            counts = np.isfinite(pr).sum(axis=0)
            mean = np.where(counts > 0, np.nansum(pr, axis=0) / np.maximum(counts, 1), np.nan)
        curves.append(pd.DataFrame({"run": run.name, "recall": pr_levels, "precision": mean}))
    columns = ["run", "query", "class", *[m.name for m in measures]]
    per_query = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)
    pr = pd.concat(curves, ignore_index=True) if curves else pd.DataFrame(columns=["run", "recall", "precision"])
    return Evaluation(per_query, pr)
