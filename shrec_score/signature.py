"""The output signature: the shrec-score version and every setting that changes a number, in field order,
unused (None) ones left out."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from . import __version__

#: The signature's ``ties`` entry per tie mode (``--ties``).
TIE_MODES = {
    "rule": "lists: file order; matrices: distance, then lower column; TREC: score desc, then id desc",
    "expected": "expected: exact mean over every order inside each tie group (equal distances in a matrix row or a list, equal TREC scores in a topic)",
    "optimistic": "optimistic: inside each tie group (equal distances or scores) higher grades first",
    "pessimistic": "pessimistic: inside each tie group (equal distances or scores) higher grades last",
}


@dataclass(frozen=True, kw_only=True)
class _Signature:
    version: str = __version__

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass(frozen=True, kw_only=True)
class ScoringSignature(_Signature):
    """Settings of a relevance scoring (see :func:`shrec_score.score`)."""

    mode: str
    relevance: str
    queries: int
    #: Ds, or why it is unknown.
    collection: int | str
    ties: str
    #: How the ranked lists were cut before scoring (--depth, --judged-only); None: whole lists.
    lists: str | None = None
    matrix_order: str
    rel_level: int
    e_depth: int
    pr_levels: str
    averaging: str
    lenient: str | None = None
    significance: str | None = None


@dataclass(frozen=True, kw_only=True)
class KendallSignature(_Signature):
    """Settings of a rank-correlation scoring (see :func:`shrec_score.score_kendall`)."""

    mode: str = "rank correlation"
    relevance: str
    queries: int
    ground_truth_higher_is_better: bool
    lower_is_better: bool
    ties: str = "tau-b (ties in either ranking)"
    averaging: str = "mean over queries; std with ddof = 1"
