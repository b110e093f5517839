"""Registry of measures by name: the single source of the CSV columns, the
``shrec-score measures`` listing, the help texts and the semantics every
renderer and test relies on.

Each :class:`Measure` says which way is better (``higher_is_better``) and,
only where our value equals trec_eval's exactly, trec_eval's name
(``trec_name``).  :func:`column_higher_is_better` answers the direction
question for any leaderboard column, measure or not, and
:func:`measure_table` / :func:`measure_listing` give the listing.

>>> get_measure("FP_relevant").higher_is_better, get_measure("P@5").trec_name
(False, 'P_5')
>>> get_measure("NDCG@10").trec_name is None  # SHREC 2006 NDCG is not ndcg_cut_10
True
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .base import RankBlock
from .cumgain import gain_at
from .dcg import dcg
from .graded import GainBlock
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

    #: Depth of the E-measure (``--e-depth``).
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
        """The recall levels of the PR curve, 1/n, 2/n, ..., 1 (n = ``pr_levels``).

        >>> Settings(pr_levels=4).recall_levels().tolist()
        [0.25, 0.5, 0.75, 1.0]
        """
        return np.round(np.arange(1, self.pr_levels + 1) / self.pr_levels, 10)


@dataclass(frozen=True)
class Measure:
    """A named per-query measure and its semantics.

    Parameters
    ----------
    name : str
        The CSV column and the name on the command line.
    summary : str
        One-line definition (``shrec-score measures``, help texts).
    compute : callable
        ``compute(block, settings) -> ndarray`` of one value per query.
    func : callable
        The measure function of ``measures/`` (its docstring has the formula).
    kind : {"binary", "graded"}
        ``"binary"``: computed on a RankBlock; ``"graded"``: on a GainBlock
        (SHREC 2006).
    higher_is_better : bool
        False only for the SHREC 2006 error counts (FP_*, FN_*): leaderboards
        sort them ascending and mark the minimum as best.
    trec_name : str or None
        trec_eval's name, given only where our value equals trec_eval's
        exactly (``--format trec`` prints our own name otherwise).
    params : str
        The parameters that change the value and where they are set (empty
        when there are none).
    """

    name: str
    summary: str
    compute: Callable[..., np.ndarray]
    func: Callable[..., np.ndarray]
    kind: str = "binary"
    higher_is_better: bool = True
    trec_name: str | None = None
    params: str = ""

    @property
    def direction(self) -> str:
        """``"higher"`` or ``"lower"``: which values are better.

        >>> get_measure("FN_highly").direction
        'lower'
        """
        return "higher" if self.higher_is_better else "lower"


class _Pattern(NamedTuple):
    """A family of measures named ``prefix@k``, built on demand."""

    prefix: str
    regex: re.Pattern[str]
    #: make(k) -> Measure; ``make("k")`` gives the template shown in listings
    #: (its ``compute`` raises TypeError).
    make: Callable[[int | str], Measure]


_REGISTRY: dict[str, Measure] = {}
_PATTERNS: list[_Pattern] = []


def register(measure: Measure) -> Measure:
    """Add ``measure`` to the registry; a name can be registered only once."""
    if measure.name in _REGISTRY:
        raise ValueError(f"measure {measure.name!r} is registered twice")
    _REGISTRY[measure.name] = measure
    return measure


def _summary(func: Callable[..., object]) -> str:
    return (func.__doc__ or "").strip().splitlines()[0]


def _binary(name: str, func: Callable[..., np.ndarray], trec_name: str | None) -> None:
    register(Measure(name, _summary(func), lambda b, s: func(b.rel_ranks, n_relevant=b.n_relevant), func, trec_name=trec_name))


# trec_name only where the docstring's formula is trec_eval's: AP divides by all
# K relevant (map), FT is hits in the first K / K (Rprec), NN is [rank_1 = 1] (P_1).
_binary("NN", nearest_neighbor, "P_1")
_binary("FT", first_tier, "Rprec")
_binary("ST", second_tier, None)
register(
    Measure(
        "E",
        f"E-measure as published by SHREC and the PSB: F1 over the first e_depth (default {E_DEPTH}) results.",
        lambda b, s: e_measure(b.rel_ranks, n_relevant=b.n_relevant, n_retrieved=b.n_retrieved, depth=s.e_depth),
        e_measure,
        params="e_depth: Settings.e_depth, --e-depth",
    )
)
_binary("DCG", dcg, None)  # PSB-normalised over the whole list: no trec_eval equivalent
_binary("AP", average_precision, "map")
_binary("RR", reciprocal_rank, "recip_rank")


def _cutoff_value(k: int | str, prefix: str) -> int:
    """The cutoff of a ``prefix@k`` measure; the listing's template ``prefix@k`` computes nothing."""
    if isinstance(k, str):
        raise TypeError(f"{prefix}@k is the listing's template; name a cutoff, e.g. {prefix}@10")
    return k


def _cutoff(prefix: str, func: Callable[..., np.ndarray], trec_prefix: str) -> None:
    def make(k: int | str) -> Measure:
        def compute(b: RankBlock, s: Settings) -> np.ndarray:
            cut = _cutoff_value(k, prefix)
            return func(b.rel_ranks, n_relevant=b.n_relevant, k=cut)

        return Measure(
            f"{prefix}@{k}",
            _summary(func),
            compute,
            func,
            trec_name=f"{trec_prefix}_{k}",
            params=f"k: the cutoff in the name ({prefix}@10)",
        )

    _PATTERNS.append(_Pattern(prefix, re.compile(rf"{re.escape(prefix)}@([1-9][0-9]*)"), make))


_cutoff("P", precision_at, "P")  # divisor k, as trec_eval's P_k
_cutoff("R", recall_at, "recall")  # divisor K, as trec_eval's recall_k


def _graded(name: str, func: Callable[..., np.ndarray], summary: str, *, higher_is_better: bool = True, **kw: object) -> None:
    register(Measure(name, summary, lambda b, s: func(b, **kw), func, kind="graded", higher_is_better=higher_is_better))


for _lv in ("highly", "relevant"):
    _C = "Ch" if _lv == "highly" else "Cr"
    _V = "Vh" if _lv == "highly" else "Vr"
    _graded(f"TP_{_lv}", true_positives, f"SHREC 2006 true positives ({_lv}): {_V}", level=_lv)
    _graded(f"FP_{_lv}", false_positives, f"SHREC 2006 false positives ({_lv}): Va - {_V}", higher_is_better=False, level=_lv)
    _graded(f"TN_{_lv}", true_negatives, f"SHREC 2006 true negatives ({_lv}): Ds + {_V} - Va - {_C}", level=_lv)
    _graded(f"FN_{_lv}", false_negatives, f"SHREC 2006 false negatives ({_lv}): {_C} - {_V}", higher_is_better=False, level=_lv)
    _graded(f"FT_{_lv}", tier, f"SHREC 2006 First Tier ({_lv}): hits in the first d / d, d = min(Va, {_C})", level=_lv, factor=1)
    _graded(f"ST_{_lv}", tier, f"SHREC 2006 Second Tier ({_lv}): hits in the first d / d, d = min(Va, 2 {_C})", level=_lv, factor=2)
    _graded(f"P_{_lv}", precision, f"SHREC 2006 precision ({_lv}): {_V} / Va", level=_lv)
    _graded(f"R_{_lv}", recall, f"SHREC 2006 recall ({_lv}): {_V} / {_C}", level=_lv)
    _graded(f"AP_{_lv}", average_precision_retrieved, f"SHREC 2006 average precision ({_lv}): mean precision over the retrieved relevant items", level=_lv)
_graded("ADR", average_dynamic_recall, _summary(average_dynamic_recall))

GAIN_KINDS = ("CG", "DCG", "NCG", "NDCG")
GAIN_CUTOFFS = (5, 10, 25, 50, 100)


def _gain_pattern(kind: str) -> None:
    # No trec_name: SHREC 2006 discounts by log2(i) from i = 2 on and takes the
    # ideal over the whole class, so NDCG@k is not trec_eval's ndcg_cut_k.
    def make(k: int | str) -> Measure:
        def compute(b: GainBlock, s: Settings) -> np.ndarray:
            return gain_at(b, kind=kind, k=_cutoff_value(k, kind))

        return Measure(
            f"{kind}@{k}",
            f"{kind} vector at rank k (SHREC 2006; empty when the list is shorter than k)",
            compute,
            gain_at,
            kind="graded",
            params=f"k: the rank in the name ({kind}@10)",
        )

    _PATTERNS.append(_Pattern(kind, re.compile(rf"{kind}@([1-9][0-9]*)"), make))


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

#: Display names on the terminal and in tables where they differ from the CSV column.
DISPLAY = {"AP": "mAP"}

#: Leaderboard columns that are not registered measures, and which way is
#: better (None: no direction; such a column is never marked best).
OTHER_COLUMNS: dict[str, bool | None] = {"rank": None, "run": None, "queries": None, "tau_b": True, "tau_b_std": None}


def get_measure(name: str) -> Measure:
    """The measure called ``name`` (``P@10`` style names are built on demand).

    Raises
    ------
    KeyError
        When ``name`` is neither registered, an alias, nor a ``prefix@k`` name.
    """
    name = ALIASES.get(name, name)
    if name in _REGISTRY:
        return _REGISTRY[name]
    for pattern in _PATTERNS:
        m = pattern.regex.fullmatch(name)
        if m:
            return pattern.make(int(m.group(1)))
    raise KeyError(name)


def known_measures() -> list[str]:
    """Registered names plus the cutoff patterns, for help texts."""
    return list(_REGISTRY) + [f"{p.prefix}@k" for p in _PATTERNS]


def column_higher_is_better(column: str) -> bool | None:
    """Which way is better in a leaderboard column, measure or not.

    Returns
    -------
    bool or None
        The measure's ``higher_is_better`` for a measure; the entry of
        :data:`OTHER_COLUMNS` for the known non-measure columns (``tau_b``:
        True; ``tau_b_std``, ``queries``, ``rank``: None); None for the
        bootstrap bounds (``*_ci_low``, ``*_ci_high``); True for any other
        column (a column added by the user keeps the old "highest is best").
        None means: no direction, never marked best (sorting by it is
        descending).

    >>> [column_higher_is_better(c) for c in ("AP", "FP_highly", "tau_b_std", "AP_ci_low", "my_score")]
    [True, False, None, None, True]
    """
    if column in OTHER_COLUMNS:
        return OTHER_COLUMNS[column]
    if column.endswith(("_ci_low", "_ci_high")):
        return None
    try:
        return get_measure(column).higher_is_better
    except KeyError:
        return True


def display_name(column: str) -> str:
    """The column's name in tables (``AP`` is shown as ``mAP``)."""
    return DISPLAY.get(column, column)


class MeasureInfo(NamedTuple):
    """One row of :func:`measure_table`."""

    name: str
    #: "higher" or "lower": which values are better.
    direction: str
    #: trec_eval's name where the value is exactly trec_eval's, else None.
    trec_name: str | None
    summary: str
    #: Parameters that change the value (empty when none).
    params: str


def measure_table() -> list[MeasureInfo]:
    """Every measure in registry order, then the ``prefix@k`` families.

    The source of ``shrec-score measures`` and of the docs; families are shown
    with their parameter as ``k`` (``P@k``, trec_eval ``P_k``).

    >>> rows = {r.name: r for r in measure_table()}
    >>> rows["AP"][:3], rows["R@k"][:3], rows["FP_highly"].direction
    (('AP', 'higher', 'map'), ('R@k', 'higher', 'recall_k'), 'lower')
    """
    measures = list(_REGISTRY.values()) + [p.make("k") for p in _PATTERNS]
    return [MeasureInfo(m.name, m.direction, m.trec_name, m.summary, m.params) for m in measures]


def measure_listing() -> str:
    """The text of ``shrec-score measures``: a header, then one line per measure.

    Columns: name, which way is better, trec_eval's name (``-``: none with
    the same value), the definition and, in brackets, its parameters.
    """
    lines = [f"{'measure':<12} {'better':<6} {'trec_eval':<10} definition"]
    for row in measure_table():
        text = f"{row.summary.rstrip('.')} [{row.params}]" if row.params else row.summary
        lines.append(f"{row.name:<12} {row.direction:<6} {row.trec_name or '-':<10} {text}")
    return "\n".join(lines) + "\n"
