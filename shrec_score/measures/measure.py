"""What a measure is, and how a name finds one.

:class:`Measure` is a named per-query measure and its semantics,
:class:`Settings` every setting that changes a number.  The table of
measures (:mod:`shrec_score.measures.registry`) fills the store with
:func:`register` (fixed names) and :func:`register_pattern` (families named
``prefix@k``, built on demand); :func:`get_measure` resolves a name typed on
the command line: an alias (:data:`ALIASES`, another tool's spelling of a
cutoff, :data:`PATTERN_ALIASES`), a registered name, or a family with its
cutoff.  :func:`column_higher_is_better` and :func:`display_name` answer
for any leaderboard column, measure or not.

>>> get_measure("mAP").name, get_measure("P_5").name, get_measure("ndcg@10").trec_name
('AP', 'P.5', 'ndcg_cut_10')
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .tiers import E_DEPTH


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
    #: Each ranked list cut to its first ``depth`` items before scoring (trec_eval -M; None: whole lists).
    depth: int | None = None
    #: Unjudged items left out of the ranked lists, the rest moving up (trec_eval -J).
    judged_only: bool = False
    #: A query the run ranks nothing for: ``"error"`` (a run must rank every
    #: query), ``"skip"`` (left out of the means, trec_eval's default) or
    #: ``"zero"`` (an empty list, every measure 0 where it is defined: trec_eval -c).
    missing: str = "error"
    #: Queries of a class with fewer models than this (counted among the
    #: queries: all-against-all, the class's size) keep empty values and stay
    #: out of every mean, curve and test; 3 is psbTable's ``CUTOFF 2``.
    #: 1: every query counts.
    min_class_size: int = 1
    #: How tied items (equal distances or scores) are ordered: ``"rule"`` (the
    #: documented tie rule, :mod:`shrec_score.ranking`), ``"expected"`` (the
    #: exact mean over every order inside each tie group), ``"optimistic"`` /
    #: ``"pessimistic"`` (higher grades first / last inside each group).
    ties: str = "rule"

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
    ir_name : str or None
        ir_measures' name of the same value (accepted as an alias), if any.
    source : str
        Where the definition comes from (the docs table).
    aggregate : {"mean", "geometric", "sum"}
        How per-query values become a run's value (trec_eval's ``all``):
        the mean; ``"geometric"`` for ``gm_map``, whose per-query value is
        already a logarithm (exp of the mean of the logs); ``"sum"`` for
        trec_eval's counts (``num_ret``, ``num_rel``, ``num_rel_ret``).
    """

    name: str
    summary: str
    compute: Callable[..., np.ndarray]
    func: Callable[..., np.ndarray]
    kind: str = "binary"
    higher_is_better: bool = True
    trec_name: str | None = None
    params: str = ""
    ir_name: str | None = None
    source: str = ""
    aggregate: str = "mean"
    #: ``compute(block, settings)`` under ``ties="expected"`` when ``compute``
    #: itself is not linear in the block's (group-averaged) values; None: ``compute``.
    expected: Callable[..., np.ndarray] | None = None
    #: False: no exact expectation over tied orders is known; refused under ``ties="expected"``.
    ties_exact: bool = True

    @property
    def direction(self) -> str:
        """``"higher"`` or ``"lower"``: which values are better.

        >>> get_measure("FN_highly").direction
        'lower'
        """
        return "higher" if self.higher_is_better else "lower"



class Pattern(NamedTuple):
    """A family of measures named ``prefix@k``, built on demand."""

    prefix: str
    regex: re.Pattern[str]
    #: make(*params) -> Measure, one int per group of ``regex``; ``make(*placeholders)``
    #: gives the template shown in listings (its ``compute`` raises TypeError).
    make: Callable[..., Measure]
    #: The listing's names of the parameters (``P@k``, ``P(rel=r)@k``).
    placeholders: tuple[str, ...] = ("k",)

    def template(self) -> Measure:
        """The family's row in listings (``P@k``)."""
        return self.make(*self.placeholders)


#: Every measure of a fixed name, in registration order (the listing's order).
REGISTRY: dict[str, Measure] = {}
#: The ``prefix@k`` families, in registration order.
PATTERNS: list[Pattern] = []

#: Alternative spellings accepted on the command line: trec_eval's, ranx's
#: and ir_measures' names of the same value (:func:`register` adds each
#: measure's ir_measures name).  ``map``, ``Rprec`` and ``recip_rank`` are
#: registered measures of their own (:mod:`.names`: trec_eval's values).
ALIASES = {
    "mAP": "AP", "MAP": "AP", "T1": "FT", "T2": "ST",
    "mrr": "recip_rank", "r-precision": "Rprec",  # ranx
    "nDCG": "ndcg",  # ir_measures
}

#: Spellings of the cutoff families, ``{k}`` the cutoff: trec_eval's printed
#: names (``P_5``, ``ndcg_cut_10``), ranx's and ir_measures' names where the
#: value is the same.  Each entry: (spelling, our name, whose spelling).
PATTERN_ALIASES: tuple[tuple[str, str, str], ...] = (
    ("P_{k}", "P.{k}", "trec_eval"),
    ("precision@{k}", "P.{k}", "ranx"),
    ("recall_{k}", "recall.{k}", "trec_eval"),
    ("recall@{k}", "recall.{k}", "ranx"),
    ("ndcg_cut_{k}", "ndcg_cut.{k}", "trec_eval"),
    ("ndcg@{k}", "ndcg_cut.{k}", "ranx"),
    ("nDCG@{k}", "ndcg_cut.{k}", "ir_measures"),
    ("map_cut_{k}", "map_cut.{k}", "trec_eval"),
    ("map@{k}", "map_cut.{k}", "ranx"),
    ("AP@{k}", "map_cut.{k}", "ir_measures"),
    ("success_{k}", "success.{k}", "trec_eval"),
    ("hit_rate@{k}", "success.{k}", "ranx"),
    ("Success@{k}", "success.{k}", "ir_measures"),
)
_PATTERN_ALIAS_RES = tuple(
    (re.compile(re.escape(spelling).replace(re.escape("{k}"), "([1-9][0-9]*)")), target) for spelling, target, _ in PATTERN_ALIASES
)


def register(measure: Measure) -> Measure:
    """Add ``measure`` to the registry; a name can be registered only once."""
    if measure.name in REGISTRY:
        raise ValueError(f"measure {measure.name!r} is registered twice")
    REGISTRY[measure.name] = measure
    if measure.ir_name:
        ALIASES[measure.ir_name] = measure.name
    return measure


def register_pattern(prefix: str, regex: str, make: Callable[..., Measure], placeholders: tuple[str, ...] = ("k",)) -> None:
    """Add the family ``prefix@k``: a name matching ``regex`` is ``make(*groups)``, each group an int."""
    PATTERNS.append(Pattern(prefix, re.compile(regex), make, placeholders))


def get_measure(name: str) -> Measure:
    """The measure called ``name`` (``P@10`` style names are built on demand).

    Raises
    ------
    KeyError
        When ``name`` is neither registered, an alias, nor a ``prefix@k`` name.
    """
    name = ALIASES.get(name, name)
    for alias, target in _PATTERN_ALIAS_RES:
        m = alias.fullmatch(name)
        if m:
            name = target.format(k=m.group(1))
            break
    if name in REGISTRY:
        return REGISTRY[name]
    for pattern in PATTERNS:
        m = pattern.regex.fullmatch(name)
        if m:
            return pattern.make(*(int(g) for g in m.groups()))
    raise KeyError(name)


def aliases_of(name: str) -> list[str]:
    """Every other spelling that :func:`get_measure` takes for ``name`` (a family: its template).

    >>> aliases_of("recip_rank"), aliases_of("P.k")
    (['mrr'], ['P_k', 'precision@k'])
    """
    fixed = [a for a, target in ALIASES.items() if target == name]
    family = [spelling.format(k="k") for spelling, target, _ in PATTERN_ALIASES if target.format(k="k") == name]
    return fixed + family


def spellings(k: str = "k") -> list[str]:
    """Every name and alias, families with cutoff ``k`` (what :func:`did_you_mean` compares with)."""
    families = [p.template().name for p in PATTERNS] + [s.format(k="k") for s, _, _ in PATTERN_ALIASES]
    return list(REGISTRY) + list(ALIASES) + [f[: -1] + k if f.endswith("k") else f for f in families]


def did_you_mean(name: str) -> str:
    """A hint for an unknown name: the nearest names (difflib), or empty.

    >>> did_you_mean("presicion@10"), did_you_mean("XX")
    (" (did you mean 'precision@10'?)", '')
    """
    import difflib

    m = re.search(r"[0-9]+$", name)
    near = difflib.get_close_matches(name, spellings(m.group(0) if m else "k"), n=3, cutoff=0.75)
    if not near:
        return ""
    return f" (did you mean {' or '.join(repr(n) for n in near)}?)"


def known_measures() -> list[str]:
    """Registered names plus the cutoff patterns, for help texts."""
    return list(REGISTRY) + [p.template().name for p in PATTERNS]


#: Display names on the terminal and in tables where they differ from the CSV column.
DISPLAY = {"AP": "mAP"}

#: Leaderboard columns that are not registered measures, and which way is
#: better (None: no direction; such a column is never marked best).
OTHER_COLUMNS: dict[str, bool | None] = {"rank": None, "run": None, "queries": None, "tau_b": True, "tau_b_std": None}


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
