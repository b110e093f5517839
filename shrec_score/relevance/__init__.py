"""Relevance: which targets are relevant to which query, and how much (docs/inputs.md, "Relevance"; the grades:
docs/measures.md); ShapeNet's taxonomy is in :mod:`.taxonomy`."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from typing import ClassVar, Literal

import numpy as np

from ..errors import InputError
from ..model import MISC_CLASS, Classification, Qrels

Grades = Literal["binary", "sister"]


@dataclass(frozen=True)
class Relevance:
    """Relevance of a target collection for a set of queries (base class), immutable once built. ``self_index``:
    each query's index among ``target_ids`` (all-against-all) or -1; ``ignorable_queries``: in the lists but not
    scored (class -1); ``max_grade``: 1 binary."""

    query_ids: list[str]
    query_classes: list[str]
    target_ids: list[str]
    self_index: np.ndarray
    ignorable_queries: list[str]
    mode: str
    max_grade: int
    #: Ds as declared (a classification's models, ``--collection[-size]``), never counted from the runs; None: unknown.
    collection_size: int | None = None
    #: How relevance was decided, for the output signature.
    description: str = ""
    #: Ids of the rows of a matrix run (listing order), and where they come from.
    matrix_row_ids: list[str] = field(repr=False, default_factory=list)
    matrix_row_source: str = ""
    matrix_col_source: str = ""
    #: Every target known (a ``.cla``): an unknown id is an error, not :attr:`unjudged` (gain 0).
    closed: bool = True
    #: A query is scored with its own item in its list (ShapeNet Core55; ``self_index`` -1).
    keeps_own_item: ClassVar[bool] = False
    #: K and the relevant targets per query and grade level: found once (every chunk and task asks), read-only.
    _n_relevant: dict[int, np.ndarray] = field(repr=False, default_factory=dict)
    _relevant: dict[int, tuple[np.ndarray, ...]] = field(repr=False, default_factory=dict)

    @functools.cached_property
    def target_index(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self.target_ids)}

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    def list_room(self, rows: np.ndarray) -> np.ndarray | None:
        """Ds per query row: the collection less the query itself where it is one of its models (all-against-all);
        None when Ds is unknown."""
        if self.collection_size is None:
            return None
        return self.collection_size - (self.self_index[rows] >= 0).astype(np.int64)

    @property
    def unjudged(self) -> int:
        """The target index every unknown id of an open collection maps to (gain 0)."""
        return len(self.target_ids)

    @property
    def graded(self) -> bool:
        return self.max_grade > 1

    @property
    def gain_curves(self) -> bool:
        """SHREC 2006's gain curves are drawn: graded relevance, but not the ShapeNet taxonomy."""
        return self.graded and self.mode != "shapenet"

    def gains(self, query_rows: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """Gain of ``targets[i]`` for query row ``query_rows[i]`` (broadcasting)."""
        raise NotImplementedError

    def list_gains(self, query_rows: np.ndarray, offsets: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """Gains of ranked lists end to end (CSR): ``targets[offsets[i]:offsets[i + 1]]`` is query row ``query_rows[i]``'s list."""
        return self.gains(np.repeat(np.asarray(query_rows), np.diff(offsets)), targets)

    def n_relevant(self, level: int = 1) -> np.ndarray:
        """Number of targets with gain >= ``level`` per query, itself excluded (read-only)."""
        if level not in self._n_relevant:
            k = np.asarray([targets.size for targets in self.relevant_targets(level)], dtype=np.int64)
            own = np.flatnonzero(self.self_index >= 0)  # all-against-all: the query itself is not counted
            k[own] -= self.gains(own, self.self_index[own]) >= level
            k.flags.writeable = False
            self._n_relevant[level] = k
        return self._n_relevant[level]

    def relevant_targets(self, level: int = 1) -> tuple[np.ndarray, ...]:
        """Per query, the target indices with gain >= ``level``, ascending (read-only); the query's own item may be
        among them (a matrix ranking leaves it out with its column)."""
        if level not in self._relevant:
            found = tuple(self._relevant_targets(level))
            for targets in found:
                targets.flags.writeable = False
            self._relevant[level] = found
        return self._relevant[level]

    def _relevant_targets(self, level: int) -> list[np.ndarray]:
        raise NotImplementedError

    @staticmethod
    def from_classification(
        targets: Classification, queries: Classification | None = None, *, grades: Grades = "binary",
    ) -> ClassRelevance:
        """Relevance from a target ``.cla`` and, optionally, a query ``.cla``."""
        q_source = targets if queries is None else queries
        # a query class takes the parent of the target class of its name (one unknown to the targets: K = 0)
        t_parent = dict(zip(targets.class_names, targets.class_parents))
        q_parents = [t_parent.get(n, p) for n, p in zip(q_source.class_names, q_source.class_parents)]
        qn, tn = np.array(q_source.class_names, dtype=object)[:, None], np.array(targets.class_names, dtype=object)
        qp, tp = np.array(q_parents, dtype=object)[:, None], np.array(targets.class_parents, dtype=object)
        top = 2 if grades == "sister" else 1
        sister = (qp == tp) & (qp != "0") & (grades == "sister")  # same parent, not the root
        table = np.where(qn == tn, top, sister).astype(np.int8) * ((qn != MISC_CLASS) & (tn != MISC_CLASS))
        misc = (qn[:, 0] == MISC_CLASS)[q_source.labels]
        keep = np.flatnonzero(~misc)
        query_label = q_source.labels[keep].astype(np.int64)
        return ClassRelevance(
            query_ids=[q_source.ids[i] for i in keep], query_classes=[q_source.class_names[i] for i in query_label],
            target_ids=list(targets.ids), ignorable_queries=[q_source.ids[i] for i in np.flatnonzero(misc)],
            self_index=keep.astype(np.int64) if queries is None else np.full(keep.size, -1, dtype=np.int64),
            max_grade=top, mode="all-against-all" if queries is None else "separate queries",
            _query_label=query_label, _target_label=targets.labels.astype(np.int64),
            _table=table, collection_size=len(targets.ids),
            description="graded: own class 2, sister classes 1" if grades == "sister" else "binary: same class",
            matrix_row_ids=list(q_source.ids), matrix_row_source=q_source.path, matrix_col_source=targets.path,
        )

    @staticmethod
    def from_qrels(
        qrels: Qrels, *, collection: Classification | None = None, collection_size: int | None = None,
    ) -> QrelsRelevance:
        """Relevance from TREC qrels; a ``collection``'s models are the targets (any other id an error),
        else any id is admitted (unjudged, gain 0) and Ds is ``collection_size``."""
        target_ids = list(qrels.target_ids if collection is None else collection.ids)
        t = np.asarray(qrels.target_codes, dtype=np.int64)
        if collection is not None:
            index = {m: i for i, m in enumerate(target_ids)}
            for tid in qrels.target_ids:
                if tid not in index:
                    raise InputError(qrels.path, None, f"expected judged targets to be models of {collection.path}", f"unknown id {tid!r}")
            t = np.asarray([index[x] for x in qrels.target_ids], dtype=np.int64)[t]
        query_ids = list(qrels.query_ids)  # order of first appearance
        q = qrels.query_codes.astype(np.int64)
        g = np.maximum(np.asarray(qrels.grades, dtype=np.int64), 0).astype(np.int8)
        keys = (q << 32) | t
        order = np.argsort(keys, kind="stable")
        top = 2 if int(g.max(initial=0)) >= 2 else 1
        return QrelsRelevance(
            query_ids=query_ids, query_classes=[""] * len(query_ids), target_ids=target_ids,
            self_index=np.full(len(query_ids), -1, dtype=np.int64), ignorable_queries=[], mode="qrels", max_grade=top,
            collection_size=collection_size if collection is None else len(target_ids), closed=collection is not None,
            description=f"qrels {os.path.basename(qrels.path)}", matrix_row_ids=list(query_ids),
            matrix_row_source=qrels.path, matrix_col_source=collection.path if collection is not None else qrels.path,
            _keys=keys[order], _grades=g[order],
        )


#: Largest class x target gain table :meth:`ClassRelevance.gains` builds.
GAINS_BY_TARGET_BYTES = 16 << 20
#: :meth:`ClassRelevance.list_gains` looks lists of at least this many entries on average up one at a time.
LIST_GAINS_MIN_MEAN = 256


@dataclass(frozen=True)
class ClassRelevance(Relevance):
    """Relevance decided by class membership (a gain table class x class)."""

    _query_label: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0, dtype=np.int64))
    _target_label: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0, dtype=np.int64))
    _table: np.ndarray = field(repr=False, default_factory=lambda: np.zeros((0, 0), dtype=np.int8))

    def gains(self, query_rows: np.ndarray, targets: np.ndarray) -> np.ndarray:
        return self._table[self._query_label[query_rows], self._target_label[targets]]

    def list_gains(self, query_rows: np.ndarray, offsets: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """:meth:`Relevance.list_gains`, long lists one ``take`` each in their query class's row of the gain table."""
        table, targets, cut = self._gains_by_target, np.asarray(targets), np.asarray(offsets).tolist()
        n = len(cut) - 1  # lists
        short = n < 1 or cut[0] != 0 or cut[-1] != targets.size or targets.size < LIST_GAINS_MIN_MEAN * n
        if table is None or short or not 0 <= int(targets.min()) <= int(targets.max()) < table.shape[1]:
            return super().list_gains(query_rows, offsets, targets)  # (an index out of range fails there as in gains)
        out = np.empty(targets.size, dtype=table.dtype)
        for label, a, b in zip(self._query_label[query_rows].tolist(), cut[:-1], cut[1:]):
            table[label].take(targets[a:b], out=out[a:b], mode="clip")  # in range: checked above
        return out

    @functools.cached_property
    def _gains_by_target(self) -> np.ndarray | None:
        """The gain table by query class and target; None when larger than :data:`GAINS_BY_TARGET_BYTES`."""
        if self._table.shape[0] * len(self._target_label) * self._table.itemsize > GAINS_BY_TARGET_BYTES:
            return None
        return np.ascontiguousarray(self._table[:, self._target_label])

    def _relevant_targets(self, level: int) -> list[np.ndarray]:
        labels = set(self._query_label.tolist())  # not np.unique: it imports numpy.ma (15 ms of start-up)
        by_label = {lab: np.flatnonzero(self._table[lab][self._target_label] >= level) for lab in labels}
        return [by_label[lab] for lab in self._query_label.tolist()]  # one array per class, shared by its queries


@dataclass(frozen=True)
class QrelsRelevance(Relevance):
    """Relevance from explicit judgments, looked up by sorted (query, target) keys."""

    _keys: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0, dtype=np.int64))
    _grades: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0, dtype=np.int8))

    def gains(self, query_rows: np.ndarray, targets: np.ndarray, missing: int = 0) -> np.ndarray:
        """:meth:`Relevance.gains`; ``missing``: the value of a pair no qrels line judges."""
        q, t = np.broadcast_arrays(np.asarray(query_rows, dtype=np.int64), np.asarray(targets, dtype=np.int64))
        out = np.full(t.shape, missing, dtype=np.int8)
        judged = t < len(self.target_ids)  # only the judged ids: each unjudged one is len(target_ids)
        inside = np.nonzero(judged) if t.ndim else judged  # (indices index faster; a single pair keeps its mask)
        if self._keys.size:  # each pair's place among the sorted (query, target) keys, if it is there
            keys = (q[inside] << 32) | t[inside]
            pos = np.minimum(np.searchsorted(self._keys, keys), self._keys.size - 1)
            out[inside] = np.where(self._keys[pos] == keys, self._grades[pos], missing)
        return out

    def judgments_of(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The judgments of the query ``rows``, in the order given: ``(position in rows, target index, grade)`` per judgment."""
        rows = np.asarray(rows, dtype=np.int64)
        lo = np.searchsorted(self._keys, rows << 32)  # a query's keys: from (row << 32) to ((row + 1) << 32)
        n = np.searchsorted(self._keys, (rows + 1) << 32) - lo
        starts = np.cumsum(n) - n
        pos = np.repeat(lo - starts, n) + np.arange(int(n.sum()), dtype=np.int64)
        return np.repeat(np.arange(rows.size), n), self._keys[pos] & 0xFFFFFFFF, self._grades[pos]

    def _relevant_targets(self, level: int) -> list[np.ndarray]:
        keys = self._keys[self._grades >= level]
        targets = (keys & 0xFFFFFFFF).astype(np.int64)
        bounds = np.searchsorted(keys, np.arange(self.n_queries + 1, dtype=np.int64) << 32)
        return [targets[bounds[i] : bounds[i + 1]] for i in range(self.n_queries)]


from .taxonomy import TaxonomyRelevance  # noqa: E402  (a subclass of Relevance, defined above)

__all__ = ["ClassRelevance", "Grades", "QrelsRelevance", "Relevance", "TaxonomyRelevance"]
