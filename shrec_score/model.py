"""Typed records passed between the readers, the relevance model and the engine."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

#: Name of the PSB "miscellaneous" class: never a query, never relevant.
MISC_CLASS = "-1"


@dataclass(frozen=True)
class RunSource:
    """A run discovery found (name, path, format); ``listing``: its folder's entries (None: its reader lists them)."""

    name: str
    path: str
    format: str
    listing: tuple[str, ...] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Classification:
    """A PSB ``.cla`` classification: class names and parents (``"0"``: root) in file order, model ids in listing order and each one's class index."""

    path: str
    class_names: list[str]
    class_parents: list[str]
    ids: list[str]
    labels: np.ndarray


@dataclass
class RankedRun:
    """One run in CSR form: the ranked list of ``query_ids[i]`` is ``targets[offsets[i]:offsets[i + 1]]`` (target indices, best first)."""

    name: str
    query_ids: list[str]
    targets: np.ndarray
    offsets: np.ndarray
    #: Lenient scoring: what was dropped, by reason (a Counter).
    drops: Counter[str] | None = None
    #: Tie groups (any ``ties`` mode but ``"rule"``): per entry, where its group starts in its list; None: unknown.
    tie_start: np.ndarray | None = None
    #: The target ids its indices point into (those of the relevance it was read against); None: not known.
    target_ids: list[str] | None = None
    #: A TREC run's tag when every line carries the same one (trec_eval's runid), else None.
    tag: str | None = None

    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def ranked_list(self, i: int) -> np.ndarray:
        return self.targets[self.offsets[i] : self.offsets[i + 1]]

    @classmethod
    def from_lists(cls, name: str, lists: dict[str, np.ndarray]) -> RankedRun:
        """A run from each query's list of target indices, in ``lists``' order."""
        arrays = [np.asarray(a, dtype=np.int64) for a in lists.values()]
        offsets = np.cumsum([0, *(a.size for a in arrays)], dtype=np.int64)
        return cls(name, list(lists), np.concatenate([np.zeros(0, dtype=np.int64), *arrays]), offsets)


def tie_starts(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Per entry of CSR lists, the 0-based place in its list where its tie group starts (a group: equal consecutive
    ``values`` of a list; NaN equals nothing, -0.0 equals 0.0).

    >>> tie_starts(np.array([1, 1, 2, 2, 2, 2]), np.array([0, 4, 6])).tolist()
    [0, 0, 2, 2, 0, 0]
    """
    new = np.r_[True, values[1:] != values[:-1]]
    firsts = offsets[:-1]
    new[firsts[firsts < new.size]] = True  # a list's first entry starts a group
    return np.flatnonzero(new)[np.cumsum(new) - 1] - np.repeat(firsts, np.diff(offsets))


@dataclass
class MatrixRun:
    """A dissimilarity-matrix run (smaller = closer): ``row_of_query`` the row of each scored query, ``col_target`` the target index of each column."""

    name: str
    path: str
    matrix: np.ndarray
    query_ids: list[str]
    row_of_query: np.ndarray
    col_target: np.ndarray
    #: Lenient scoring: NaN cells rank last (as +inf) and are counted here.
    drops: Counter[str] | None = None


@dataclass(frozen=True)
class Qrels:
    """Judgments in file order, dictionary-encoded (distinct ids in order of first appearance): query ``query_ids[query_codes[i]]``, target ``target_ids[target_codes[i]]``, grade ``grades[i]``."""

    path: str
    query_ids: list[str]
    query_codes: np.ndarray
    target_ids: list[str]
    target_codes: np.ndarray
    grades: np.ndarray

    @classmethod
    def from_lists(cls, path: str, queries: list[str], targets: list[str], grades: list[int]) -> Qrels:
        q_ids, q_codes = factorize(queries)
        t_ids, t_codes = factorize(targets)
        return cls(path, q_ids, q_codes, t_ids, t_codes, np.asarray(grades, dtype=np.int64))


def factorize(values: list) -> tuple[list, np.ndarray]:
    """Distinct values in order of first appearance, and each value's code."""
    index: dict = {}
    codes = np.fromiter((index.setdefault(v, len(index)) for v in values), dtype=np.int64, count=len(values))
    return list(index), codes
