"""The output signature: the shrec-score version and every setting that changes a number, in field order, unused (None) ones left out."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from . import __version__

TIE_RULE = "lists: file order; matrices: distance, then lower column; TREC: score desc, then id desc"

#: The signature's ``ties`` entry per tie mode (``--ties``); ``rule`` is :data:`TIE_RULE`.
TIE_MODES = {
    "rule": TIE_RULE,
    "expected": "expected: exact mean over every order inside each tie group (equal distances in a matrix row or a list, equal TREC scores in a topic)",
    "optimistic": "optimistic: inside each tie group (equal distances or scores) higher grades first",
    "pessimistic": "pessimistic: inside each tie group (equal distances or scores) higher grades last",
}


def tie_text(mode: str) -> str:
    """The signature's ``ties`` entry for a tie mode.

    >>> tie_text("rule") == TIE_RULE
    True
    """
    return TIE_MODES[mode]


@dataclass(frozen=True)
class _Signature:
    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if getattr(self, f.name) is not None}


@dataclass(frozen=True)
class ScoringSignature(_Signature):
    """Settings of a relevance scoring (see :func:`shrec_score.score`)."""

    mode: str
    relevance: str
    queries: int
    collection: int | None
    matrix_order: str
    rel_level: int
    e_depth: int
    pr_levels: str
    averaging: str
    lenient: str | None = None
    significance: str | None = None
    version: str = __version__
    ties: str = TIE_RULE
    #: How the ranked lists were cut before scoring (--depth, --judged-only); None: whole lists.
    lists: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        if d.get("collection") is None:
            d["collection"] = "unknown (TN columns empty)"
        order = ["version", "mode", "relevance", "queries", "collection", "ties", "lists", "matrix_order", "rel_level", "e_depth", "pr_levels", "averaging", "lenient", "significance"]
        return {k: d[k] for k in order if k in d}


@dataclass(frozen=True)
class KendallSignature(_Signature):
    """Settings of a rank-correlation scoring (see :func:`shrec_score.score_kendall`)."""

    relevance: str
    queries: int
    ground_truth_higher_is_better: bool
    lower_is_better: bool
    version: str = __version__
    mode: str = "rank correlation"
    ties: str = "tau-b (ties in either ranking)"
    averaging: str = "mean over queries; std with ddof = 1"

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        order = ["version", "mode", "relevance", "queries", "ground_truth_higher_is_better", "lower_is_better", "ties", "averaging"]
        return {k: d[k] for k in order}
