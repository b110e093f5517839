"""The input every binary measure works on: ranks of the relevant items."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt


@dataclass(frozen=True)
class TieMeans:
    """A dense block's tie groups under ``ties="expected"``, per rank: the group's mean gain and
    relevance indicators (the exact expectation at that rank), where it starts (0-based) and its
    size.  Measures linear in the per-rank gains read the means, the others ``start`` / ``size``."""

    gain: np.ndarray
    highly: np.ndarray
    relevant: np.ndarray
    start: np.ndarray
    size: np.ndarray


@dataclass(frozen=True)
class RankBlock:
    """Where the relevant items of a block of queries landed: ``rel_ranks`` (float64, queries x
    k_max >= 1) row q the 1-based ranks of query q's retrieved relevant items, ascending, padded
    with ``inf`` (unretrieved, and past its K); ``n_relevant`` K (int64, the query itself
    excluded); ``n_retrieved`` Va, the list's length.  Only under ``ties="expected"``,
    ``group_start`` / ``group_size`` (like ``rel_ranks``): per relevant item the entries ranked
    before its tie group and the group's size (0 in the padding); ``rel_ranks`` then holds one
    order and the measures take the mean over all (:mod:`shrec_score.measures.ties`)."""

    rel_ranks: np.ndarray
    n_relevant: np.ndarray
    n_retrieved: np.ndarray
    group_start: np.ndarray | None = None
    group_size: np.ndarray | None = None

    @classmethod
    def from_ranks(cls, ranks: list[list[int]], n_relevant: npt.ArrayLike, n_retrieved: npt.ArrayLike) -> RankBlock:
        """Build a block from Python lists (tests, doctests, small inputs)."""
        k = np.asarray(n_relevant, dtype=np.int64)
        out = padded([sorted(r) for r in ranks], np.inf, np.float64, int(k.max(initial=0)))
        return cls(out, k, np.asarray(n_retrieved, dtype=np.int64))


def padded(rows: Sequence[Sequence[float]], fill: float, dtype: npt.DTypeLike, width: int = 1) -> np.ndarray:
    """``rows`` as one array, padded with ``fill`` to the longest row, at least ``width`` wide (tests, doctests)."""
    out = np.full((len(rows), max([width, 1] + [len(r) for r in rows])), fill, dtype=dtype)
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


def precision_sum(rel: np.ndarray) -> np.ndarray:
    """Per row of the relevance matrix ``rel``, the precision at each relevant rank, summed."""
    return np.where(rel, np.cumsum(rel, axis=1) / np.arange(1, rel.shape[1] + 1), 0.0).sum(axis=1)
