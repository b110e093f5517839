"""Runs x queries -> per-query values (docs/architecture.md): a chunk of complete queries at a time, a run's
lists become ranks of the relevant items, gain vectors or judged grades, which every measure reads as a block."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, fields, replace

import numpy as np

from .measures import GainBlock, Measure, RankBlock, Settings, pr_curve
from .measures.base import TieMeans
from .measures.cumgain import discounted_cumulated_gain, gain_vectors
from .measures.precision import interpolate_pr
from .measures.ties import expected_precision_at_hits
from .measures.treceval import JudgedBlock
from .model import MatrixRun, RankedRun
from .ranking import (
    arrange_ties,
    keep_entries,
    matrix_rank_block,
    matrix_to_ranked_run,
    tie_group_ids,
)
from .relevance import QrelsRelevance, Relevance
from .table import Table

#: Cells of a chunk's lists laid out one row per list (bounds the engine's temporaries and dense blocks).
CHUNK_ENTRIES = 2_000_000
#: The recall levels (per cent) of the SHREC 2006 gain-versus-recall curves.
RECALL_PCT = np.arange(1, 101)


def rank_block(
    run: RankedRun, relevance: Relevance, rows: np.ndarray, gains: np.ndarray, *, level: int = 1,
    ties: TieMeans | None = None, width: int = 1,
) -> RankBlock:
    """Ranks of the relevant items (gain >= ``level``) of the lists of ``run`` (relevance ``rows``; ``ties``: by
    :func:`tie_means`), at least ``width`` columns (the largest K: sums add the same columns whatever the chunk)."""
    hit = np.flatnonzero(gains >= level)  # the few relevant entries: index them, not every entry
    hit_rows = np.searchsorted(run.offsets, hit, side="right") - 1
    col = np.arange(hit_rows.size) - np.searchsorted(hit_rows, hit_rows)  # place among its list's hits
    k = relevance.n_relevant(level)[rows]
    width = max(width, int(k.max(initial=0)), int(col.max(initial=-1)) + 1)

    def placed(values: np.ndarray, fill: float = 0.0) -> np.ndarray:
        out = np.full((len(run.query_ids), width), fill)
        out[hit_rows, col] = values
        return out
    start, size = (None, None) if ties is None else (placed(ties.start[hit]), placed(ties.size[hit]))
    ranks = placed(hit - run.offsets[hit_rows] + 1, np.inf)
    return RankBlock(ranks, k, run.lengths().astype(np.int64), group_start=start, group_size=size)


def tie_means(run: RankedRun, gains: np.ndarray, highly: int, relevant: int) -> TieMeans:
    """Per entry of ``run`` (which carries its tie groups): its group's mean gain, mean of gain >= ``highly``, mean
    of gain >= ``relevant``, start and size."""
    assert run.tie_start is not None
    g = tie_group_ids(run.tie_start, run.offsets)
    count = np.bincount(g).astype(np.float64)
    indicators = (gains, gains >= highly, gains >= relevant)
    gain, high, rel = (np.bincount(g, weights=np.asarray(x, dtype=np.float64)) / count for x in indicators)
    return TieMeans(gain[g], high[g], rel[g], run.tie_start.astype(np.float64), count[g])


def _dense(values: np.ndarray, run: RankedRun, dtype: type = np.float64, fill: int = 0) -> np.ndarray:
    """Per-entry ``values`` of ``run`` as one row per list, as wide as the longest, ``fill`` after a list's end."""
    lens = run.lengths()
    out: np.ndarray = np.full((lens.size, max(1, int(lens.max(initial=0)))), fill, dtype=dtype)
    out[np.arange(out.shape[1]) < lens[:, None]] = values
    return out


def _dense_means(ties: TieMeans | None, run: RankedRun) -> TieMeans | None:
    return None if ties is None else TieMeans(*(_dense(getattr(ties, f.name), run) for f in fields(ties)))


def gain_block(
    run: RankedRun, relevance: Relevance, rows: np.ndarray, gains: np.ndarray, *, ties: TieMeans | None = None,
) -> GainBlock:
    """The gain vectors of the lists of ``run`` (relevance ``rows``)."""
    top, room = relevance.max_grade, relevance.list_room(rows)
    ds = np.full(rows.size, -1, dtype=np.int64) if room is None else room  # -1: Ds unknown
    ch, cr = relevance.n_relevant(top)[rows], relevance.n_relevant(1)[rows]
    dense, means = _dense(gains, run, np.int8), _dense_means(ties, run)
    return GainBlock(dense, run.lengths().astype(np.int64), ch, cr, ds, top, ties=means)


def judged_mask(run: RankedRun, relevance: Relevance, rows: np.ndarray) -> np.ndarray:
    """Bool per entry of ``run`` (relevance ``rows``): somebody judged it (a qrels line of any grade); with classes every target is."""
    if not isinstance(relevance, QrelsRelevance):
        return np.ones(run.targets.size, dtype=bool)
    return relevance.gains(np.repeat(rows, run.lengths()), run.targets, missing=-1) >= 0


def judged_block(
    run: RankedRun, relevance: Relevance, rows: np.ndarray, gains: np.ndarray, *, level: int,
    ties: TieMeans | None = None,
) -> JudgedBlock:
    """The judged grade at every rank of ``run`` (-1: not judged) and the judged documents of each grade 0, 1, ...,
    max per query (trec_eval ``rel_levels``)."""
    dense = _dense(np.where(judged_mask(run, relevance, rows), gains, -1), run, np.int16, fill=-1)
    if isinstance(relevance, QrelsRelevance):
        pos, _, grades = relevance.judgments_of(rows)
        width = int(grades.max(initial=1)) + 1
        counts = np.bincount(pos * width + grades, minlength=rows.size * width).reshape(rows.size, width)
    else:  # a classification judges its whole collection (less the query itself)
        k = [relevance.n_relevant(g)[rows] for g in range(1, relevance.max_grade + 1)]  # at least grade g
        at_least = np.stack([*k, np.zeros(rows.size, dtype=np.int64)], axis=1)
        room = relevance.list_room(rows)
        counts = -np.diff(at_least, axis=1, prepend=at_least[:, :1] if room is None else room[:, None]).astype(np.int64)
    return JudgedBlock(dense, run.lengths().astype(np.int64), counts, level, ties=_dense_means(ties, run))


def restrict(run: RankedRun, relevance: Relevance, rows: np.ndarray, gains: np.ndarray, settings: Settings) -> tuple[RankedRun, np.ndarray]:
    """The run as trec_eval sees it under ``-M depth`` and then ``-J`` (unjudged entries left out, the rest moving up)."""
    keep = np.ones(run.targets.size, dtype=bool)
    if settings.depth is not None:  # each entry's place in its list
        keep &= np.arange(run.targets.size) - np.repeat(run.offsets[:-1], run.lengths()) < settings.depth
    if settings.judged_only:
        keep &= judged_mask(run, relevance, rows)
    return (run, gains) if keep.all() else (keep_entries(run, keep), gains[keep])


def run_chunks(run: RankedRun) -> Iterator[tuple[np.ndarray, RankedRun]]:
    """A run (its lists in relevance order, as readers make them) in ``(relevance rows, sub-run)`` chunks of at most
    :data:`CHUNK_ENTRIES` cells with a row as long as the longest list for every list (and at least one list)."""
    lens = np.maximum(run.lengths(), 1)  # an empty list takes a cell
    a = 0
    while a < lens.size:
        widest = np.maximum.accumulate(lens[a : a + CHUNK_ENTRIES])  # (a list takes a cell at least)
        b = a + max(1, int(np.count_nonzero(widest * np.arange(1, widest.size + 1) <= CHUNK_ENTRIES)))
        lo, hi = run.offsets[a], run.offsets[b]
        ties = None if run.tie_start is None else run.tie_start[lo:hi]
        yield np.arange(a, b), RankedRun(run.name, run.query_ids[a:b], run.targets[lo:hi], run.offsets[a : b + 1] - lo, tie_start=ties)
        a = b


@dataclass
class Evaluation:
    """Raw results as tables: one row per (run, query), and the curves per run."""

    per_query: Table
    pr_curve: Table
    #: run, rank, CG, DCG, NCG, NDCG: means over queries at ranks 1..100 (graded).
    curves: Table | None = None
    #: run, recall_pct, CG, DCG, queries: mean gain when recall first reaches r% (graded).
    gain_vs_recall: Table | None = None
    #: run -> queries it ranks nothing for (see :attr:`RunScores.unranked`).
    unranked: dict[str, int] = field(default_factory=dict)


class MeanAccumulator:
    """Column means over rows with a finite value, accumulated chunk by chunk."""

    def __init__(self, width: int) -> None:
        self.total = np.zeros(width)
        self.count = np.zeros(width, dtype=np.int64)

    def add(self, values: np.ndarray) -> None:
        ok = np.isfinite(values)
        self.total += np.where(ok, values, 0.0).sum(axis=0)
        self.count += ok.sum(axis=0)

    def mean(self) -> np.ndarray:
        return np.where(self.count > 0, self.total / np.maximum(self.count, 1), np.nan)


def _gain_at_recall(block: GainBlock) -> tuple[np.ndarray, np.ndarray]:
    """CG and DCG at the j-th relevant item, j = ceil(p Cr / 100), where recall first reaches each p%; NaN where not retrieved or Cr = 0."""
    g = block.gains
    cr = block.n_relevant[:, None]
    j = (RECALL_PCT[None, :] * cr + 99) // 100  # ceil(p Cr / 100), exact
    row, col = np.nonzero(g >= 1)  # the relevant items retrieved, row by row, in rank order
    found = np.bincount(row, minlength=g.shape[0])[:, None]
    valid = (j <= found) & (cr > 0)
    nth = np.where(valid, np.cumsum(found)[:, None] - found + j - 1, 0)  # the j-th one's place in col
    at = col[nth] if col.size else np.zeros(j.shape, dtype=np.int64)
    cg = np.cumsum(g, axis=1, dtype=np.int64).astype(np.float64)
    cg_at = np.where(valid, np.take_along_axis(cg, at, axis=1), np.nan)
    return cg_at, np.where(valid, np.take_along_axis(discounted_cumulated_gain(g), at, axis=1), np.nan)


def matrix_chunks(relevance: Relevance, n_cols: int, rows: np.ndarray) -> list[np.ndarray]:
    """The query ``rows`` of a matrix run cut where :func:`run_chunks` cuts its lists, whatever ``rows`` holds."""
    width = n_cols - (1 if relevance.self_index.size and relevance.self_index[0] >= 0 else 0)  # a list's length
    step = max(1, CHUNK_ENTRIES // max(1, width))
    return np.split(rows, np.flatnonzero(np.diff(rows // step)) + 1) if rows.size else []


@dataclass
class RunScores:
    """One run's per-query values, per-query PR curves and curve accumulators."""

    name: str
    values: dict[str, np.ndarray]
    pr: np.ndarray
    vectors: dict[str, MeanAccumulator]
    gain_at_recall: dict[str, MeanAccumulator]
    #: Queries the run ranks nothing for (no line, or an empty list).
    unranked: int = 0

    @classmethod
    def empty(cls, name: str, n_q: int, measures: Sequence[Measure], settings: Settings) -> RunScores:
        """No value yet (NaN) and empty curve sums."""
        values = {m.name: np.full(n_q, np.nan) for m in measures}
        vectors = {k: MeanAccumulator(settings.curve_depth) for k in ("CG", "DCG", "NCG", "NDCG")}
        return cls(name, values, np.full((n_q, settings.pr_levels), np.nan), vectors, {k: MeanAccumulator(100) for k in ("CG", "DCG")})


def small_class_queries(relevance: Relevance, min_class_size: int) -> np.ndarray:
    """Mask of the queries whose class has fewer than ``min_class_size`` queries (psbTable's ``CUTOFF``).

    >>> from types import SimpleNamespace
    >>> small_class_queries(SimpleNamespace(query_classes=["a", "b", "b", "c", "c", "c"]), 3).tolist()
    [True, True, True, False, False, False]
    """
    _, where, sizes = np.unique(np.asarray(relevance.query_classes, dtype=object), return_inverse=True, return_counts=True)
    return np.asarray(sizes[where] < min_class_size, dtype=bool)


def measure_values(m: Measure, block: RankBlock | GainBlock | JudgedBlock, settings: Settings) -> np.ndarray:
    """A measure's values; under ``ties="expected"`` its exact expectation on the queries with a tie group of two or more (others keep the rule's bits)."""
    sizes = block.group_size if isinstance(block, RankBlock) else None if block.ties is None else block.ties.size
    tied = None if sizes is None else np.asarray((sizes > 1).any(axis=1))  # per query: a tie group of two or more
    if m.expected is None or tied is None or not tied.any():
        return m.compute(block, settings)
    values = m.expected(block, settings)
    return values if tied.all() else np.where(tied, values, m.compute(block, settings))


def ranks_suffice(measures: Sequence[Measure], settings: Settings, *, curves: bool) -> bool:
    """Binary measures only, no curve, nothing cut: a matrix's ranks of the relevant items suffice (any chunks)."""
    cut = curves or settings.depth is not None or settings.judged_only
    return not cut and all(m.kind == "binary" for m in measures)


def score_run(
    run: RankedRun | MatrixRun, relevance: Relevance, measures: Sequence[Measure], settings: Settings = Settings(), *,
    curves: bool = False, rows: np.ndarray | None = None,
) -> RunScores:
    """Score one run on every query of ``relevance`` (``rows``, a matrix run's: these only, ascending, the others
    left empty), a chunk of complete queries at a time.  ``settings.missing == "skip"``: a query the run ranks
    nothing for keeps empty values and stays out of the curves (as trec_eval); otherwise its empty list is scored."""
    pr_levels = settings.recall_levels()
    binary, graded, judged = ([m for m in measures if m.kind == kind] for kind in ("binary", "graded", "judged"))
    level, ties = settings.rel_level, settings.ties
    n_q = relevance.n_queries
    scores = RunScores.empty(run.name, n_q, measures, settings)
    values, pr, vec_acc, gvr_acc = scores.values, scores.pr, scores.vectors, scores.gain_at_recall
    skip = settings.missing == "skip"
    ranked = np.zeros(n_q, dtype=bool)  # the queries the run ranks something for
    small = small_class_queries(relevance, settings.min_class_size)
    relevant, n_relevant, own = relevance.relevant_targets(level), relevance.n_relevant(level), relevance.self_index
    width = max(1, int(n_relevant.max(initial=0)))  # every chunk's ranks as wide: sums add alike whatever the chunk
    ranks_only = isinstance(run, MatrixRun) and ranks_suffice(measures, settings, curves=curves)
    chunks = run_chunks(run) if isinstance(run, RankedRun) else (  # a matrix a chunk of queries' rows at a time
        (q, run) for q in matrix_chunks(relevance, run.matrix.shape[1], np.arange(n_q) if rows is None else rows)
    )
    for rows, part in chunks:
        if isinstance(part, MatrixRun) and ranks_only:  # no ranked lists: the ranks of the relevant items only
            block = matrix_rank_block(part, relevant, n_relevant, own, rows, ties=ties, width=width)
            ranked[rows] = True
        else:
            sub = part if isinstance(part, RankedRun) else matrix_to_ranked_run(part, own, rows, ties=ties != "rule")
            ranked[rows] = sub.lengths() > 0
            gains = relevance.list_gains(rows, sub.offsets, sub.targets)
            if ties in ("optimistic", "pessimistic") and sub.tie_start is not None:
                perm = arrange_ties(sub.tie_start, sub.offsets, gains, ties)
                sub, gains = replace(sub, targets=sub.targets[perm]), gains[perm]
            sub, gains = restrict(sub, relevance, rows, gains, settings)
            expected = ties == "expected" and sub.tie_start is not None
            if judged:  # relevant: grade >= level; nDCG's gain is the grade floored at 0
                means = tie_means(sub, gains, level, level) if expected else None
                jb = judged_block(sub, relevance, rows, gains, level=level, ties=means)
                for m in judged:
                    values[m.name][rows] = measure_values(m, jb, settings)
            means = tie_means(sub, gains, relevance.max_grade, 1) if expected else None
            block = rank_block(sub, relevance, rows, gains, level=level, ties=means, width=width)
        for m in binary:
            values[m.name][rows] = measure_values(m, block, settings)
        if block.group_start is None:
            pr[rows] = pr_curve(block.rel_ranks, n_relevant=block.n_relevant, levels=pr_levels)
        else:  # the expected curve over the tied orders
            pr[rows] = interpolate_pr(expected_precision_at_hits(block), n_relevant=block.n_relevant, levels=pr_levels)
        if ranks_only or not (graded or curves):
            continue
        gb = gain_block(sub, relevance, rows, gains, ties=means)
        for m in graded:
            values[m.name][rows] = measure_values(m, gb, settings)
        if curves:
            counted = (ranked[rows] | (not skip)) & ~small[rows]
            scored = (gb.n_relevant > 0) & counted
            for k, v in gain_vectors(gb, settings.curve_depth).items():
                vec_acc[k].add(v[scored])
            if gb.ties is None:  # (no exact expectation under ties: collect() leaves gain_vs_recall out)
                for k, v in zip(("CG", "DCG"), _gain_at_recall(gb)):
                    gvr_acc[k].add(v[counted])
    left_out = small | (~ranked if skip else False)  # no values for these queries
    for v in (*values.values(), pr):
        v[left_out] = np.nan
    scores.unranked = int((~ranked).sum())
    return scores


def collect(scores: Sequence[RunScores], relevance: Relevance, measures: Sequence[Measure], settings: Settings = Settings(), *, curves: bool = False) -> Evaluation:
    """The tables of an :class:`Evaluation` (per-query values, the mean PR curve, with ``curves`` the SHREC 2006 gain curves) from each run's scores."""
    pr_levels = settings.recall_levels()
    depth = settings.curve_depth
    frames, prs, curve_frames, gvr_frames = [], [], [], []
    for sc in scores:
        acc = MeanAccumulator(len(pr_levels))
        acc.add(sc.pr)
        prs.append(Table({"run": sc.name, "recall": np.asarray(pr_levels, dtype=np.float64), "precision": acc.mean()}))
        if curves:
            curve_frames.append(Table({"run": sc.name, "rank": np.arange(1, depth + 1), **{k: a.mean() for k, a in sc.vectors.items()}}))
            gvr = sc.gain_at_recall
            gvr_frames.append(Table({"run": sc.name, "recall_pct": RECALL_PCT, "CG": gvr["CG"].mean(), "DCG": gvr["DCG"].mean(), "queries": gvr["CG"].count}))
        ids = {"run": sc.name, "query": relevance.query_ids, "class": relevance.query_classes}
        frames.append(Table(ids | {m.name: sc.values[m.name] for m in measures}, relevance.n_queries))
    columns = ["run", "query", "class", *[m.name for m in measures]]
    ev = Evaluation(Table.concat(frames, columns), Table.concat(prs, ["run", "recall", "precision"]), unranked={sc.name: sc.unranked for sc in scores})
    if curves and curve_frames:
        ev.curves = Table.concat(curve_frames)
        if settings.ties != "expected":  # CG / DCG where recall first reaches r%: no exact expectation over tied orders
            ev.gain_vs_recall = Table.concat(gvr_frames)
    return ev
