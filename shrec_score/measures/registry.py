"""Registry of measures by name: the CLI's measure list, the CSV columns and
``shrec-score measures`` all come from here."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .base import RankBlock
from .dcg import dcg
from .precision import average_precision, precision_at, recall_at, reciprocal_rank
from .tiers import E_DEPTH, e_measure, first_tier, nearest_neighbor, second_tier


@dataclass(frozen=True)
class Settings:
    """Every setting that changes a number (part of the output signature)."""

    e_depth: int = E_DEPTH


@dataclass(frozen=True)
class Measure:
    """A named per-query measure on a :class:`RankBlock`."""

    name: str
    summary: str
    compute: Callable[[RankBlock, Settings], np.ndarray]
    func: Callable[..., np.ndarray]


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
    return list(_REGISTRY) + ["P@k", "R@k"]
