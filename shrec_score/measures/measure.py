"""What a measure is (:class:`Measure`, :class:`Settings`) and every rule of its names: a name or other tools' spelling
finds one (:func:`get_measure`), trec_eval's ``official`` and ``P.5,10`` expand, a typed name is a column, "Recall@k" is
refused; :mod:`.registry` fills the store with :func:`register` and :data:`PATTERNS` (docs/measures.md, coming-from.md).

>>> get_measure("mAP").name, get_measure("P_5").name, get_measure("ndcg@10").trec_name
('AP', 'P.5', 'ndcg_cut_10')
>>> get_measure("FP_relevant").higher_is_better, get_measure("P@5").trec_name, get_measure("NDCG@10").trec_name
(False, 'P_5', None)
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from .tiers import E_DEPTH
from .treceval import IPREC_LEVELS


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
    #: A query the run ranks nothing for: ``"error"``, ``"skip"`` (left out of the means) or ``"zero"`` (trec_eval -c).
    missing: str = "error"
    #: Queries of a class with fewer queries than this stay out of every mean (3: psbTable's ``CUTOFF 2``).
    min_class_size: int = 1
    #: How tied items are ordered: ``"rule"``, ``"expected"``, ``"optimistic"`` or ``"pessimistic"`` (docs/ties.md).
    ties: str = "rule"

    def recall_levels(self) -> np.ndarray:
        """The recall levels of the PR curve, 1/n, 2/n, ..., 1 (n = ``pr_levels``).

        >>> Settings(pr_levels=4).recall_levels().tolist()
        [0.25, 0.5, 0.75, 1.0]
        """
        return np.round(np.arange(1, self.pr_levels + 1) / self.pr_levels, 10)


@dataclass(frozen=True)
class Measure:
    """A named per-query measure: ``compute(block, settings)`` gives one value per query, ``kind`` names the block it
    reads (``"binary"``: RankBlock, ``"graded"``: GainBlock, ``"judged"``: JudgedBlock), ``trec_name`` and ``ir_name``
    are set only where our value equals trec_eval's / ir_measures', ``aggregate`` makes a run's value (``"mean"``,
    ``"geometric"``, ``"sum"``).  One row of the listing (:func:`.registry.measure_table`)."""

    name: str
    summary: str
    compute: Callable[..., np.ndarray]
    kind: str = "binary"
    higher_is_better: bool = True
    trec_name: str | None = None
    params: str = ""
    ir_name: str | None = None
    source: str = ""
    aggregate: str = "mean"
    #: ``compute`` under ``ties="expected"`` where it is not linear in the group-averaged values.
    expected: Callable[..., np.ndarray] | None = None
    #: False: no exact expectation over tied orders is known; refused under ``ties="expected"``.
    ties_exact: bool = True

    @property
    def direction(self) -> str:
        """``"higher"`` or ``"lower"``: which values are better."""
        return "higher" if self.higher_is_better else "lower"


#: Every measure of a fixed name, in registration order (the listing's order).
REGISTRY: dict[str, Measure] = {}
#: The families in registration order: spelling (``P(rel={r})@{k}``, fields >= 1) -> ``make(*numbers in order)``.
PATTERNS: dict[str, Callable[..., Measure]] = {}
#: What a family's field is: ``P(rel={r})@{k}``.
FIELDS = {"k": "a cutoff k", "r": "a level r"}
#: Leaderboard columns that are not registered measures, and which way is better (None: no direction, never best).
OTHER_COLUMNS: dict[str, bool | None] = {"rank": None, "run": None, "queries": None, "tau_b": True, "tau_b_std": None}

#: Other tools' spellings of the same value (:func:`register` adds each ir_measures name).
ALIASES = {
    "mAP": "AP", "MAP": "AP", "T1": "FT", "T2": "ST",
    "mrr": "recip_rank", "r-precision": "Rprec",  # ranx
    "nDCG": "ndcg", "IPrec@0": "IPrec@0.0", "IPrec@1": "IPrec@1.0",  # ir_measures
    # pytorch-metric-learning's AccuracyCalculator keys (docs/coming-from.md)
    "precision_at_1": "NN", "r_precision": "FT", "mean_average_precision_at_r": "MAP@R", "mean_reciprocal_rank": "RR",
}

#: Other tools' spellings of the cutoff families -> our family, ``{k}`` the cutoff; per family trec_eval's (``P_{k}``),
#: ranx's (``precision@{k}``), then ir_measures' (``nDCG@{k}``) where it differs.
PATTERN_ALIASES = {
    "P_{k}": "P.{k}", "precision@{k}": "P.{k}",
    "recall_{k}": "recall.{k}", "recall@{k}": "recall.{k}",
    "ndcg_cut_{k}": "ndcg_cut.{k}", "ndcg@{k}": "ndcg_cut.{k}", "nDCG@{k}": "ndcg_cut.{k}",
    "map_cut_{k}": "map_cut.{k}", "map@{k}": "map_cut.{k}", "AP@{k}": "map_cut.{k}",
    "success_{k}": "success.{k}", "hit_rate@{k}": "success.{k}", "Success@{k}": "success.{k}",
}  # fmt: skip

#: trec_eval's group ``-m official``, as a shortcut.
OFFICIAL = (
    "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    *(f"iprec_at_recall_{x:.2f}" for x in IPREC_LEVELS),
    *(f"P.{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
)
#: The default measures of graded qrels (issue 31.18) shown on the terminal (per_run.csv holds every one).
SHOWN_OFFICIAL = ("map", "gm_map", "Rprec", "bpref", "recip_rank", "P.5", "P.10", "P.20")
_PARAMETER = re.compile(r"([A-Za-z_]+\.)[0-9]+")
#: Names read as "recall at k" that mean two things in evaluate(): R@k, Recall@k (any case).
_RECALL = re.compile(r"(?:R|(?i:recall))@([1-9][0-9]*)")


def register(measure: Measure) -> None:
    """Add ``measure`` to the registry; a name can be registered only once.  Its ir_measures name becomes an
    alias unless it is a registered name (ir_measures' ``AP`` is ``map``'s value, our ``AP`` another)."""
    if measure.name in REGISTRY:
        raise ValueError(f"measure {measure.name!r} is registered twice")
    REGISTRY[measure.name] = measure
    if measure.ir_name and measure.ir_name not in REGISTRY:
        ALIASES[measure.ir_name] = measure.name


@functools.cache
def _fields_regex(spelling: str, field: str = "([1-9][0-9]*)") -> re.Pattern[str]:
    """The names a family's spelling covers (``P@{k}``: ``P@10``), each number matching ``field``."""
    return re.compile(re.sub(r"\\\{[a-z]\\\}", field, re.escape(spelling)))


def get_measure(name: str) -> Measure:
    """The measure called ``name`` (``P@10`` style names built on demand); KeyError for an unknown name."""
    name = ALIASES.get(name, name)
    if name in REGISTRY:
        return REGISTRY[name]
    for spelling, family in _families():
        if m := _fields_regex(spelling).fullmatch(name):
            return PATTERNS[family](*(int(g) for g in m.groups()))
    raise KeyError(name)


def aliases_of(name: str) -> list[str]:
    """Every other spelling that :func:`get_measure` takes for ``name`` (a family: its template).

    >>> aliases_of("recip_rank"), aliases_of("P.k")
    (['mrr'], ['P_k', 'precision@k'])
    """
    fixed = [a for a, target in ALIASES.items() if target == name]
    return fixed + [s.format(k="k") for s, target in PATTERN_ALIASES.items() if target.format(k="k") == name]


def _families() -> list[tuple[str, str]]:
    """Every family's spelling, its own and other tools' (``P_{k}``), with the family it makes."""
    return [*((s, s) for s in PATTERNS), *PATTERN_ALIASES.items()]


def _bad_field(name: str) -> str:
    """What breaks :func:`get_measure`'s rule for a family's numbers (>= 1, no leading zeros), or empty."""
    for spelling, _ in _families():
        if m := _fields_regex(spelling, "([0-9]+)").fullmatch(name):
            fields = dict(zip(re.findall(r"\{([a-z])\}", spelling), m.groups()))
            for field, got in fields.items():
                if int(got) < 1:
                    return f" (expected {FIELDS[field]} >= 1, got {got})"
            for field, got in fields.items():
                if got != str(int(got)):
                    plain = spelling.format(**{f: int(v) for f, v in fields.items()})
                    return f" (expected {FIELDS[field]} without leading zeros, got {got}: did you mean {plain!r}?)"
    return ""


def did_you_mean(name: str) -> str:
    """A hint for an unknown name: what is wrong with a family's number, else the nearest names (difflib), or empty.

    >>> did_you_mean("presicion@10"), did_you_mean("XX"), did_you_mean("P@0"), did_you_mean("p@5")
    (" (did you mean 'precision@10'?)", '', ' (expected a cutoff k >= 1, got 0)', " (did you mean 'P@5' or 'map@5'?)")
    """
    import difflib

    if bad := _bad_field(name):
        return bad
    m = re.search(r"[0-9]+$", name)
    k = str(int(m.group(0))) if m and int(m.group(0)) >= 1 else "k"  # never a name get_measure refuses
    names = list(REGISTRY) + list(ALIASES) + [f.format(k=k, r="r") for f, _ in _families()]
    same = [n for n in names if n.lower() == name.lower()]  # names are case-sensitive: 'p@5' is 'P@5' miswritten
    near = [n for n in dict.fromkeys(same + difflib.get_close_matches(name, names, n=4, cutoff=0.75)) if n != name][:3]
    return f" (did you mean {' or '.join(repr(n) for n in near)}?)" if near else ""


def known_measures() -> list[str]:
    """Registered names plus the cutoff patterns, for help texts."""
    return list(REGISTRY) + [s.format(k="k", r="r") for s in PATTERNS]


def column_higher_is_better(column: str) -> bool | None:
    """Which way is better in a leaderboard column: a measure's direction, :data:`OTHER_COLUMNS`' entry, None for
    bootstrap bounds, True for any other column.

    >>> [column_higher_is_better(c) for c in ("AP", "FP_highly", "tau_b_std", "AP_ci_low", "my_score")]
    [True, False, None, None, True]
    """
    if column in OTHER_COLUMNS or column.endswith(("_ci_low", "_ci_high")):
        return OTHER_COLUMNS.get(column)  # a bootstrap bound: None
    try:
        return get_measure(column).higher_is_better
    except KeyError:
        return True


def display_name(column: str) -> str:
    """The column's name on the terminal and in tables where it differs from the CSV column (``AP`` is ``mAP``)."""
    return {"AP": "mAP"}.get(column, column)


def expand_names(names: Iterable[str]) -> list[str]:
    """Measure names with trec_eval's shortcuts expanded: a group (``official``) becomes its measures, a bare number
    continues the ``name.k`` before it (``P.5,10``).  KeyError (why) for ``all_trec`` and a bare number without one.

    >>> expand_names(["P.5,10", "ndcg_cut.20", "30", "AP"])
    ['P.5', 'P.10', 'ndcg_cut.20', 'ndcg_cut.30', 'AP']
    """
    out: list[str] = []
    prefix = None
    for name in filter(None, (part.strip() for text in names for part in text.split(","))):
        if name == "all_trec":
            raise KeyError("all_trec: shrec-score has only some of trec_eval's measures (not 11pt_avg, infAP, rbp, "
                           "relstring, set_P, utility ...); ask for 'official' or name the measures")
        if name.isdigit():
            if prefix is None:
                raise KeyError(f"{name}: a bare number continues a trec_eval name with a dot (P.5,10), but nothing precedes it")
            name = prefix + name
        m = _PARAMETER.fullmatch(name)
        prefix = m.group(1) if m else None
        out.extend(OFFICIAL if name == "official" else [name])
    return out


def typed_measure(name: str) -> Measure:
    """The measure ``name`` computes, under ``name`` as typed (``-m ndcg@10``: ``ndcg_cut.10`` in a column ``ndcg@10``):
    the one place a typed name becomes a column; every other lookup by column resolves the typed name again.

    >>> m = typed_measure("ndcg@10"); m.name, m.trec_name, typed_measure("AP") is get_measure("AP")
    ('ndcg@10', 'ndcg_cut_10', True)
    """
    m = get_measure(name)
    return m if m.name == name else replace(m, name=name)


def column_for(name: str, columns: Sequence[str]) -> str | None:
    """The first of ``columns`` (typed names) that computes the measure ``name`` in any spelling, or None.

    >>> column_for("ndcg_cut_10", ["map", "ndcg@10"]), column_for("AP", ["map"])
    ('ndcg@10', None)
    """
    target = get_measure(name).name
    return next((c for c in columns if get_measure(c).name == target), None)


def trec_name(column: str) -> str | None:
    """trec_eval's name of a column where its values are trec_eval's, else None (a SHREC measure with a trec_eval
    twin, ``AP``, leaves a topic without relevant documents out of the mean; a column that is no measure).

    >>> [trec_name(c) for c in ("map", "precision@5", "ndcg@10", "AP", "P@5", "NN", "NDCG@10", "tau_b")]
    ['map', 'P_5', 'ndcg_cut_10', None, None, None, None, None]
    """
    try:
        m = get_measure(column)
    except KeyError:
        return None
    if m.trec_name is None or (m.kind == "binary" and get_measure(m.trec_name).name != m.name):
        return None  # a SHREC measure whose trec_eval name is its twin's (AP: map)
    return m.trec_name


def ambiguous_recall(name: object) -> str | None:
    """The message for a recall-at-k name whose meaning depends on the field, or None.

    >>> ambiguous_recall("AP") is None, ambiguous_recall("recall.10") is None
    (True, True)
    >>> print(ambiguous_recall("Recall@1"))  # doctest: +NORMALIZE_WHITESPACE
    measures: 'Recall@1' means two things, so it is not guessed: IR recall at 1 (relevant items
    in the first 1 / K: ask for 'recall.1') or the metric-learning Recall@1 (1 if a relevant item
    is in the first 1: ask for 'success.1')
    """
    if not (isinstance(name, str) and (m := _RECALL.fullmatch(name))):
        return None
    k = m.group(1)
    return (
        f"measures: {name!r} means two things, so it is not guessed: IR recall at {k} "
        f"(relevant items in the first {k} / K: ask for 'recall.{k}') or the metric-learning "
        f"Recall@{k} (1 if a relevant item is in the first {k}: ask for 'success.{k}')"
    )
