"""The input of the graded (SHREC 2006) measures: gain vectors of ranked lists."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .base import TieMeans, padded

if TYPE_CHECKING:
    import numpy.typing as npt


@dataclass(frozen=True)
class GainBlock:
    """Gain vectors of a block of queries: ``gains`` (int8, queries x width) G[i] the gain at rank
    i + 1 (2 highly relevant, 1 marginally, 0 not; padded with 0), ``n_retrieved`` Va (int64 per
    query), ``n_highly`` Ch (gain >= ``top``), ``n_relevant`` Cr = Ch + Cm (gain >= 1),
    ``collection_size`` Ds (-1: unknown; per query from the engine: :meth:`Relevance.list_room`), ``top`` the highest grade (2 graded; 1 binary: highly = relevant)."""

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
    def from_gains(cls, rows: list[list[int]], n_highly: npt.ArrayLike, n_marginal: npt.ArrayLike, collection_size: int, top: int = 2) -> GainBlock:
        """A block from Python lists (tests, doctests)."""
        ch = np.asarray(n_highly, dtype=np.int64)
        lengths = np.asarray([len(r) for r in rows], dtype=np.int64)
        return cls(padded(rows, 0, np.int8), lengths, ch, ch + np.asarray(n_marginal, dtype=np.int64), collection_size, top)

    def level(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(is-relevant matrix, C) for ``"highly"`` or ``"relevant"``; under
        ``ties="expected"`` the matrix holds the expected indicator (a float)."""
        highly = name == "highly"
        if self.ties is not None:
            return (self.ties.highly, self.n_highly) if highly else (self.ties.relevant, self.n_relevant)
        return (self.gains >= self.top, self.n_highly) if highly else (self.gains >= 1, self.n_relevant)
