"""ShapeNet Core55 (SHREC'16/'17): relevance graded by the official evaluator's synset / sub-synset taxonomy."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ..errors import InputError
from ..model import factorize
from . import Relevance


@dataclass(frozen=True)
class TaxonomyRelevance(Relevance):
    """SHREC'16/'17 ShapeNet Core55, grades 0-3 (docs/evaluators.md): every model is a query, keeps its own item and
    counts in its synset's size (``self_index`` -1); ``query_classes`` are the synset ids."""

    keeps_own_item: ClassVar[bool] = True

    #: Per target: synset code, sub-synset code, labelled only at synset level.
    _synset: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0, dtype=np.int64))
    _subsynset: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0, dtype=np.int64))
    _synset_level: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0, dtype=bool))

    @staticmethod
    def from_rows(
        path: str, ids: Sequence[str], synsets: Sequence[str], subsynsets: Sequence[str], splits: Sequence[str], *,
        split: str | None = None,
    ) -> TaxonomyRelevance:
        """The collection of one split of a ShapeNet ground truth; ``split`` None with several splits in the file is an error naming them."""
        present = list(dict.fromkeys(splits))
        if split is None and len(present) > 1:
            raise InputError(path, None, f"expected --split to choose the models scored (the ground truth holds the splits {', '.join(sorted(present))})")
        if split is not None and split not in present:
            raise InputError(path, None, f"expected --split to name a split of the ground truth ({', '.join(sorted(present))})", repr(split))
        keep = [i for i, s in enumerate(splits) if split is None or s == split]
        t_ids, syn, sub = ([column[i] for i in keep] for column in (ids, synsets, subsynsets))
        n = len(t_ids)
        return TaxonomyRelevance(
            query_ids=list(t_ids), query_classes=list(syn), target_ids=t_ids, self_index=np.full(n, -1, dtype=np.int64),
            ignorable_queries=[], mode="shapenet", max_grade=3, collection_size=n,
            description="ShapeNet taxonomy: same sub-synset 3, synset-level target 2, sibling sub-synset 1; own item kept" + (f"; split {split}" if split is not None else ""),
            matrix_row_ids=list(t_ids), matrix_row_source=path, matrix_col_source=path,
            _synset=factorize(syn)[1], _subsynset=factorize(sub)[1],  # codes in order of first appearance
            _synset_level=np.asarray([a == b for a, b in zip(syn, sub)], dtype=bool),
        )

    def gains(self, query_rows: np.ndarray, targets: np.ndarray) -> np.ndarray:
        q, t = np.asarray(query_rows, dtype=np.int64), np.asarray(targets, dtype=np.int64)  # query row = target index
        grade = np.where(self._subsynset[q] == self._subsynset[t], 3, np.where(self._synset_level[t], 2, 1))
        return np.where(self._synset[q] == self._synset[t], grade, 0).astype(np.int8)

    def _relevant_targets(self, level: int) -> list[np.ndarray]:
        keys = list(zip(self._synset.tolist(), self._subsynset.tolist()))  # a query's grades depend on these only
        by_key: dict[tuple[int, int], np.ndarray] = {}
        for q, key in enumerate(keys):
            if key not in by_key:
                members = np.flatnonzero(self._synset == key[0])
                by_key[key] = members[self.gains(np.full(members.size, q), members) >= level]
        return [by_key[key] for key in keys]
