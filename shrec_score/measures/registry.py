"""Registry of measures by name: the CLI's measure list, the CSV columns and
``shrec-score measures`` all come from here."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .cumgain import gain_at
from .dcg import dcg
from .precision import average_precision, precision_at, recall_at, reciprocal_rank
from .shrec06 import (
    average_dynamic_recall,
    average_precision_retrieved,
    false_negatives,
    false_positives,
    precision,
    recall,
    tier,
    true_negatives,
    true_positives,
)
from .tiers import E_DEPTH, e_measure, first_tier, nearest_neighbor, second_tier


@dataclass(frozen=True)
class Settings:
    """Every setting that changes a number (part of the output signature)."""

    e_depth: int = E_DEPTH
    #: Binary measures count gain >= rel_level as relevant (trec_eval -l).
    rel_level: int = 1
    #: Ranks 1..curve_depth of the CG/DCG/NCG/NDCG curves (SHREC 2006 Figure 3).
    curve_depth: int = 100
    #: Number of recall levels of the PR curve: 1/n, 2/n, ..., 1 (PSB: 20).
    pr_levels: int = 20
    #: k of CG@k, DCG@k, NCG@k, NDCG@k in the graded default measures.
    dcg_cutoffs: tuple[int, ...] = (5, 10, 25, 50, 100)

    def recall_levels(self) -> np.ndarray:
        return np.round(np.arange(1, self.pr_levels + 1) / self.pr_levels, 10)


@dataclass(frozen=True)
class Measure:
    """A named per-query measure on a :class:`RankBlock`."""

    name: str
    summary: str
    compute: Callable[..., np.ndarray]
    func: Callable[..., np.ndarray]
    #: "binary": computed on a RankBlock; "graded": on a GainBlock (SHREC 2006).
    kind: str = "binary"


_REGISTRY: dict[str, Measure] = {}
_PATTERNS: list[tuple[re.Pattern[str], Callable[[re.Match[str]], Measure]]] = []


def register(measure: Measure) -> Measure:
    if measure.name in _REGISTRY:
        raise ValueError(f"measure {measure.name!r} is registered twice")
    _REGISTRY[measure.name] = measure
    return measure


def _summary(func: Callable[..., object]) -> str:
    return (func.__doc__ or "").strip().splitlines()[0]


register(Measure("NN", _summary(nearest_neighbor), lambda b, s: nearest_neighbor(b.rel_ranks, n_relevant=b.n_relevant), nearest_neighbor))
register(Measure("FT", _summary(first_tier), lambda b, s: first_tier(b.rel_ranks, n_relevant=b.n_relevant), first_tier))
register(Measure("ST", _summary(second_tier), lambda b, s: second_tier(b.rel_ranks, n_relevant=b.n_relevant), second_tier))
register(
    Measure(
        "E",
        _summary(e_measure),
        lambda b, s: e_measure(b.rel_ranks, n_relevant=b.n_relevant, n_retrieved=b.n_retrieved, depth=s.e_depth),
        e_measure,
    )
)
register(Measure("DCG", _summary(dcg), lambda b, s: dcg(b.rel_ranks, n_relevant=b.n_relevant), dcg))
register(Measure("AP", _summary(average_precision), lambda b, s: average_precision(b.rel_ranks, n_relevant=b.n_relevant), average_precision))
register(Measure("RR", _summary(reciprocal_rank), lambda b, s: reciprocal_rank(b.rel_ranks, n_relevant=b.n_relevant), reciprocal_rank))


def _cutoff(prefix: str, func: Callable[..., np.ndarray]) -> None:
    def make(m: re.Match[str]) -> Measure:
        k = int(m.group(1))
        return Measure(f"{prefix}@{k}", _summary(func), lambda b, s: func(b.rel_ranks, n_relevant=b.n_relevant, k=k), func)

    _PATTERNS.append((re.compile(rf"{re.escape(prefix)}@([1-9][0-9]*)"), make))


_cutoff("P", precision_at)
_cutoff("R", recall_at)

def _graded(name: str, func: Callable[..., np.ndarray], summary: str, **kw: object) -> None:
    register(Measure(name, summary, lambda b, s: func(b, **kw), func, kind="graded"))


for _lv in ("highly", "relevant"):
    _C = "Ch" if _lv == "highly" else "Cr"
    _V = "Vh" if _lv == "highly" else "Vr"
    _graded(f"TP_{_lv}", true_positives, f"SHREC 2006 true positives ({_lv}): {_V}", level=_lv)
    _graded(f"FP_{_lv}", false_positives, f"SHREC 2006 false positives ({_lv}): Va - {_V}", level=_lv)
    _graded(f"TN_{_lv}", true_negatives, f"SHREC 2006 true negatives ({_lv}): Ds + {_V} - Va - {_C}", level=_lv)
    _graded(f"FN_{_lv}", false_negatives, f"SHREC 2006 false negatives ({_lv}): {_C} - {_V}", level=_lv)
    _graded(f"FT_{_lv}", tier, f"SHREC 2006 First Tier ({_lv}): hits in the first d / d, d = min(Va, {_C})", level=_lv, factor=1)
    _graded(f"ST_{_lv}", tier, f"SHREC 2006 Second Tier ({_lv}): hits in the first d / d, d = min(Va, 2 {_C})", level=_lv, factor=2)
    _graded(f"P_{_lv}", precision, f"SHREC 2006 precision ({_lv}): {_V} / Va", level=_lv)
    _graded(f"R_{_lv}", recall, f"SHREC 2006 recall ({_lv}): {_V} / {_C}", level=_lv)
    _graded(f"AP_{_lv}", average_precision_retrieved, f"SHREC 2006 average precision ({_lv}): mean precision over the retrieved relevant items", level=_lv)
_graded("ADR", average_dynamic_recall, _summary(average_dynamic_recall))

GAIN_KINDS = ("CG", "DCG", "NCG", "NDCG")
GAIN_CUTOFFS = (5, 10, 25, 50, 100)


def _gain_pattern(kind: str) -> None:
    def make(m: re.Match[str]) -> Measure:
        k = int(m.group(1))
        return Measure(
            f"{kind}@{k}",
            f"{kind} vector at rank k (SHREC 2006; empty when the list is shorter than k)",
            lambda b, s: gain_at(b, kind=kind, k=k),
            gain_at,
            kind="graded",
        )

    _PATTERNS.append((re.compile(rf"{kind}@([1-9][0-9]*)"), make))


for _kind in GAIN_KINDS:
    _gain_pattern(_kind)

def graded_defaults(cutoffs: tuple[int, ...] = GAIN_CUTOFFS) -> tuple[str, ...]:
    """Every SHREC 2006 measure, in the report's order (the graded default)."""
    return tuple(
        [f"{m}_{lv}" for m in ("TP", "FP", "TN", "FN", "FT", "ST", "P", "R", "AP") for lv in ("highly", "relevant")]
        + ["ADR"]
        + [f"{kind}@{k}" for kind in GAIN_KINDS for k in cutoffs]
    )


DEFAULT_GRADED = graded_defaults()
#: Shown on the terminal with graded relevance (per_run.csv holds them all).
SHOWN_GRADED = ("ADR", "AP_highly", "AP_relevant", "FT_highly", "FT_relevant", "ST_highly", "ST_relevant", "NDCG@100")

#: Measures shown when none are asked for (binary relevance).
DEFAULT_BINARY = ("NN", "FT", "ST", "E", "DCG", "AP")

#: Alternative spellings accepted on the command line.
ALIASES = {"mAP": "AP", "MAP": "AP", "map": "AP", "Rprec": "FT", "recip_rank": "RR", "T1": "FT", "T2": "ST"}


def get_measure(name: str) -> Measure:
    """The measure called ``name`` (``P@10`` style names are built on demand)."""
    name = ALIASES.get(name, name)
    if name in _REGISTRY:
        return _REGISTRY[name]
    for pattern, make in _PATTERNS:
        m = pattern.fullmatch(name)
        if m:
            return make(m)
    raise KeyError(name)


def known_measures() -> list[str]:
    """Registered names plus the cutoff patterns, for help texts."""
    return list(_REGISTRY) + ["P@k", "R@k"] + [f"{k}@k" for k in GAIN_KINDS]
