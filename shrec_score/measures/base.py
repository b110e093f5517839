"""What the measures read, a block of queries at a time (:class:`RankBlock`: relevant items' ranks; :class:`GainBlock`:
gains; :class:`JudgedBlock`: judged grades), and the rules they share (K = 0, 0 / 0, a precision sum)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True)
class TieMeans:
    """A dense block's tie groups under ``ties="expected"``, per rank: the group's mean gain and relevance indicators
    (the expectation at that rank: what measures linear in them read), its 0-based start and size."""

    gain: np.ndarray
    highly: np.ndarray
    relevant: np.ndarray
    start: np.ndarray
    size: np.ndarray


@dataclass(frozen=True)
class RankBlock:
    """Where the relevant items of a block of queries landed: ``rel_ranks`` (float64, queries x k_max >= 1) row q the
    1-based ranks of query q's retrieved relevant items, ascending, padded with ``inf`` (unretrieved, and past its K);
    ``n_relevant`` K (int64, the query itself excluded); ``n_retrieved`` Va, the list's length.  Under
    ``ties="expected"``, ``group_start`` / ``group_size`` (like ``rel_ranks``; 0 in the padding) give per relevant item
    the entries ranked before its tie group and the group's size, ``rel_ranks`` one order (:mod:`.ties`)."""

    rel_ranks: np.ndarray
    n_relevant: np.ndarray
    n_retrieved: np.ndarray
    group_start: np.ndarray | None = None
    group_size: np.ndarray | None = None


@dataclass(frozen=True)
class GainBlock:
    """Gain vectors of a block of queries (SHREC 2006's measures): ``gains`` (int8, queries x width) G[i] the gain at
    rank i + 1 (2 highly relevant, 1 marginally, 0 not; padded with 0), ``n_retrieved`` Va (int64 per query),
    ``n_highly`` Ch (gain >= ``top``), ``n_relevant`` Cr = Ch + Cm (gain >= 1), ``collection_size`` Ds (-1: unknown;
    per query from the engine: :meth:`Relevance.list_room`), ``top`` the highest grade (2 graded; 1 binary: highly =
    relevant)."""

    gains: np.ndarray
    n_retrieved: np.ndarray
    n_highly: np.ndarray
    n_relevant: np.ndarray
    collection_size: int | np.ndarray
    top: int = 2
    #: Under ``ties="expected"``: the tie groups' means; ``gains`` keeps one order.
    ties: TieMeans | None = None

    @property
    def gain_values(self) -> np.ndarray:
        """The gain at each rank: ``gains``, or its expectation over tied orders."""
        return self.gains if self.ties is None else self.ties.gain

    @classmethod
    def from_gains(
        cls, rows: list[list[int]], n_highly: npt.ArrayLike, n_marginal: npt.ArrayLike, collection_size: int,
        top: int = 2,
    ) -> GainBlock:
        """A block from Python lists (tests, doctests)."""
        ch = np.asarray(n_highly, dtype=np.int64)
        lengths = np.asarray([len(r) for r in rows], dtype=np.int64)
        return cls(padded(rows, 0, np.int8), lengths, ch, ch + np.asarray(n_marginal, dtype=np.int64), collection_size, top)

    def level(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(is-relevant matrix, C) for ``"highly"`` or ``"relevant"``; expected indicators under ``ties="expected"``."""
        if name == "highly":
            return (self.gains >= self.top if self.ties is None else self.ties.highly), self.n_highly
        return (self.gains >= 1 if self.ties is None else self.ties.relevant), self.n_relevant


@dataclass(frozen=True)
class JudgedBlock:
    """The judged grade at each rank (trec_eval's measures): ``grades`` (int16, queries x width) the qrels grade at
    rank i + 1, -1 unjudged or past the list's end; ``n_retrieved``: ``num_ret``; ``grade_counts`` (queries x max
    grade + 1): judged documents per grade; grade >= ``rel_level`` is relevant (trec_eval ``-l``)."""

    grades: np.ndarray
    n_retrieved: np.ndarray
    grade_counts: np.ndarray
    rel_level: int = 1
    #: Under ``ties="expected"``: the tie groups' mean gain and relevance; ``grades`` keeps one order.
    ties: TieMeans | None = None

    @property
    def gain_values(self) -> np.ndarray:
        """The grade at each rank floored at 0 (nDCG's gain), or its expectation over tied orders (float)."""
        return np.maximum(self.grades, 0).astype(np.float64) if self.ties is None else self.ties.gain

    @classmethod
    def from_lists(cls, rows: list[list[int]], grade_counts: list[list[int]], rel_level: int = 1) -> JudgedBlock:
        """A block from Python lists (tests, doctests): ``rows[q]`` the grade per rank (-1 unjudged)."""
        lengths = np.asarray([len(r) for r in rows], dtype=np.int64)
        return cls(padded(rows, -1, np.int16), lengths, padded(grade_counts, 0, np.int64), rel_level)

    @property
    def relevant(self) -> np.ndarray:
        """Bool: the item at each rank is relevant (grade >= rel_level)."""
        return self.grades >= self.rel_level

    @property
    def n_relevant(self) -> np.ndarray:
        """trec_eval ``num_rel``: judged documents with grade >= rel_level."""
        return np.asarray(self.grade_counts[:, self.rel_level :].sum(axis=1), dtype=np.int64)

    def ideal_gains(self) -> np.ndarray:
        """Float: every judged grade > 0, largest first, padded with 0."""
        counts = self.grade_counts[:, 1:]
        width = max(1, int(counts.sum(axis=1).max(initial=0)))
        above = np.cumsum(counts[:, ::-1], axis=1)  # documents of grade >= top, >= top - 1, ..., >= 1
        return (above[:, :, None] > np.arange(width)).sum(axis=1).astype(np.float64)  # column j: grades t with j < above_t


def padded(rows: Sequence[Sequence[float]], fill: float, dtype: npt.DTypeLike) -> np.ndarray:
    """``rows`` as one array, padded with ``fill`` to the longest row (at least 1 wide; tests, doctests)."""
    out = np.full((len(rows), max([1] + [len(r) for r in rows])), fill, dtype=dtype)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


def hits_within(rel_ranks: np.ndarray, depth: float | np.ndarray) -> np.ndarray:
    """Number of relevant items ranked at or above ``depth`` (scalar or per row)."""
    depth = np.asarray(depth, dtype=np.float64)
    return (rel_ranks <= (depth[:, None] if depth.ndim else depth)).sum(axis=1)


def undefined_without_relevant(values: np.ndarray, n_relevant: np.ndarray) -> np.ndarray:
    """Queries with no relevant item (K = 0) get NaN: listed, left out of means."""
    return np.where(n_relevant > 0, np.asarray(values, dtype=np.float64), np.nan)


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den``, 0 where ``den`` is 0 (trec_eval's and the official evaluators' rule for 0 / 0)."""
    return np.where(den > 0, num / np.where(den > 0, den, 1), 0.0)


def row_sum(x: np.ndarray) -> np.ndarray:
    """Per row, the values added from left to right (trec_eval's order): a row's sum never depends on the zeros that
    pad it to its block's width, so a query's value is the same bits whatever the other lists of its chunk."""
    return np.cumsum(x, axis=1)[:, -1] if x.shape[1] else np.zeros(x.shape[0])


def precision_sum(rel: np.ndarray) -> np.ndarray:
    """Per row of the relevance matrix ``rel``, the precision at each relevant rank, summed."""
    return row_sum(np.where(rel, np.cumsum(rel, axis=1) / np.arange(1, rel.shape[1] + 1), 0.0))
