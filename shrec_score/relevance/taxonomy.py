"""ShapeNet Core55 (SHREC'16/'17): relevance graded by the official evaluator's synset / sub-synset taxonomy."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..errors import InputError
from ..model import factorize
from . import ClassRelevance


@dataclass(frozen=True)
class TaxonomyRelevance(ClassRelevance):
    """SHREC'16/'17 ShapeNet Core55, grades 0-3 (docs/evaluators.md): each model a query that keeps its own item and
    counts in its synset's size (``self_index`` -1); ``query_classes``: synsets; classes: (synset, sub-synset) pairs."""

    keeps_own_item: ClassVar[bool] = True

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
        pairs, label = factorize(list(zip(syn, sub)))  # each (synset, sub-synset) pair a class, in order of first appearance
        synset = np.asarray([s for s, _ in pairs], dtype=object)
        at_synset = np.asarray([s == u for s, u in pairs], dtype=bool)  # a model labelled at synset level only
        table = np.where(synset[:, None] == synset[None, :], np.where(at_synset, 2, 1), 0)  # same synset: 2 or 1
        np.fill_diagonal(table, 3)  # same sub-synset
        n = len(t_ids)
        return TaxonomyRelevance(
            query_ids=list(t_ids), query_classes=list(syn), target_ids=t_ids, self_index=np.full(n, -1, dtype=np.int64),
            ignorable_queries=[], mode="shapenet", max_grade=3, collection_size=n,
            description="ShapeNet taxonomy: same sub-synset 3, synset-level target 2, sibling sub-synset 1; own item kept" + (f"; split {split}" if split is not None else ""),
            matrix_row_ids=list(t_ids), matrix_row_source=path, matrix_col_source=path,
            _query_label=label, _target_label=label, _table=table.astype(np.int8),
        )
