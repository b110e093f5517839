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
from typing import NamedTuple

import numpy as np

from . import ties
from .base import RankBlock
from .cumgain import gain_at
from .dcg import dcg
from .graded import GainBlock
from .measure import (
    ALIASES,
    DISPLAY,
    OTHER_COLUMNS,
    PATTERN_ALIASES,
    PATTERNS,
    REGISTRY,
    Measure,
    Settings,
    column_higher_is_better,
    did_you_mean,
    display_name,
    get_measure,
    known_measures,
    register,
    register_pattern,
)
from .precision import average_precision, precision_at, recall_at, reciprocal_rank
from .shapenet import average_precision_retrieved as shapenet_ap
from .shapenet import f1_at_n, ndcg_retrieved, precision_at_n, recall_at_n
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
from .treceval import (
    IPREC_LEVELS,
    JudgedBlock,
    bpref,
    gm_map,
    iprec_at_recall,
    map_cut,
    ndcg,
    ndcg_cut,
    num_rel,
    num_rel_ret,
    num_ret,
    set_f,
    success,
)

#: The registry's names; the Measure type, the lookup by name and the column helpers come from :mod:`.measure`.
__all__ = [
    "ALIASES", "DISPLAY", "OTHER_COLUMNS", "PATTERN_ALIASES", "Measure", "Settings",
    "column_higher_is_better", "did_you_mean", "display_name", "get_measure", "known_measures", "register",
    "DEFAULT_BINARY", "DEFAULT_GRADED", "GAIN_CUTOFFS", "GAIN_KINDS", "MeasureInfo", "SHAPENET_MEASURES",
    "SHAPENET_OFFICIAL", "SHOWN_GRADED", "graded_defaults", "measure_listing", "measure_table",
    "measures_markdown",
]


def _summary(func: Callable[..., object]) -> str:
    return (func.__doc__ or "").strip().splitlines()[0]


def _binary(name: str, func: Callable[..., np.ndarray], trec_name: str | None, expected: Callable[..., np.ndarray] | None = None) -> None:
    register(Measure(name, _summary(func), lambda b, s: func(b.rel_ranks, n_relevant=b.n_relevant), func, trec_name=trec_name, expected=expected))


# trec_name only where the docstring's formula is trec_eval's: AP divides by all
# K relevant (map), FT is hits in the first K / K (Rprec), NN is [rank_1 = 1] (P_1).
# expected: the exact mean over tied orders (measures/ties.py).
_binary("NN", nearest_neighbor, "P_1", lambda b, s: ties.expected_share(b, 1, 1))
_binary("FT", first_tier, "Rprec", lambda b, s: ties.expected_share(b, b.n_relevant, b.n_relevant))
_binary("ST", second_tier, None, lambda b, s: ties.expected_share(b, 2 * b.n_relevant, b.n_relevant))
register(
    Measure(
        "E",
        f"E-measure as published by SHREC and the PSB: F1 over the first e_depth (default {E_DEPTH}) results.",
        lambda b, s: e_measure(b.rel_ranks, n_relevant=b.n_relevant, n_retrieved=b.n_retrieved, depth=s.e_depth),
        e_measure,
        params="e_depth: Settings.e_depth, --e-depth",
        expected=lambda b, s: ties.expected_e(b, s.e_depth),
    )
)
_binary("DCG", dcg, None, lambda b, s: ties.expected_dcg(b))  # PSB-normalised over the whole list: no trec_eval equivalent
_binary("AP", average_precision, "map", lambda b, s: ties.expected_ap(b))
_binary("RR", reciprocal_rank, "recip_rank", lambda b, s: ties.expected_rr(b))


def _cutoff_value(k: int | str, prefix: str) -> int:
    """The cutoff of a ``prefix@k`` measure; the listing's template ``prefix@k`` computes nothing."""
    if isinstance(k, str):
        raise TypeError(f"{prefix}@k is the listing's template; name a cutoff, e.g. {prefix}@10")
    return k


def _cutoff(prefix: str, func: Callable[..., np.ndarray], trec_prefix: str, divisor: Callable[[RankBlock, int], np.ndarray | float]) -> None:
    """Register ``prefix@k``: ``func`` on the ranks, and under ``--ties expected``
    the expected share of relevant items in the first k places over ``divisor(block, k)``."""

    def make(k: int | str) -> Measure:
        def compute(b: RankBlock, s: Settings) -> np.ndarray:
            cut = _cutoff_value(k, prefix)
            return func(b.rel_ranks, n_relevant=b.n_relevant, k=cut)

        def expected(b: RankBlock, s: Settings) -> np.ndarray:
            cut = _cutoff_value(k, prefix)
            return ties.expected_share(b, cut, divisor(b, cut))

        return Measure(
            f"{prefix}@{k}",
            _summary(func),
            compute,
            func,
            trec_name=f"{trec_prefix}_{k}",
            params=f"k: the cutoff in the name ({prefix}@10)",
            expected=expected,
        )

    register_pattern(prefix, rf"{re.escape(prefix)}@([1-9][0-9]*)", make)


_cutoff("P", precision_at, "P", lambda b, k: k)  # divisor k, as trec_eval's P_k
_cutoff("R", recall_at, "recall", lambda b, k: b.n_relevant)  # divisor K, as trec_eval's recall_k


def _graded(
    name: str, func: Callable[..., np.ndarray], summary: str, *, higher_is_better: bool = True, expected: Callable[..., np.ndarray] | None = None, **kw: object
) -> None:
    exp = None if expected is None else (lambda b, s: expected(b, **kw))
    register(Measure(name, summary, lambda b, s: func(b, **kw), func, kind="graded", higher_is_better=higher_is_better, expected=exp))


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
    _graded(f"AP_{_lv}", average_precision_retrieved, f"SHREC 2006 average precision ({_lv}): mean precision over the retrieved relevant items", level=_lv, expected=ties.expected_ap_retrieved)
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

    register_pattern(kind, rf"{kind}@([1-9][0-9]*)", make)


for _kind in GAIN_KINDS:
    _gain_pattern(_kind)

# SHREC'16/'17 ShapeNet Core55 (measures/shapenet.py): lists cut at 1000, taxonomy
# grades.  Namespaced: "mAP" is AP's alias and "NDCG" would differ from trec_eval's
# "ndcg" by case only; the official summary's names appear in the files of a
# ShapeNet scoring (SHAPENET_OFFICIAL, shapenet_summary_<run>.csv).
_SHAPENET_SOURCE = "SHREC'16/'17 ShapeNet Core55 evaluator (Metrics.js), issue 18"
for _name, _func in (
    ("shapenet.P@N", precision_at_n),
    ("shapenet.R@N", recall_at_n),
    ("shapenet.F1@N", f1_at_n),
    ("shapenet.mAP", shapenet_ap),
    ("shapenet.NDCG", ndcg_retrieved),
):
    register(
        Measure(
            _name, _summary(_func), (lambda f: lambda b, s: f(b))(_func), _func, kind="graded",
            params="lists cut at 1000; relevant = grade > 0 (--rel-level does not apply)", source=_SHAPENET_SOURCE,
            ties_exact=False,  # the cut at 1000 can split a tie group; no exact expectation written
        )
    )

#: The ShapeNet family in the official summary's order, and each one's name there.
SHAPENET_MEASURES = ("shapenet.P@N", "shapenet.R@N", "shapenet.F1@N", "shapenet.mAP", "shapenet.NDCG")
SHAPENET_OFFICIAL = {m: m.removeprefix("shapenet.") for m in SHAPENET_MEASURES}

# trec_eval's own measures (measures/treceval.py), on a JudgedBlock: the name
# is what users type (trec_eval's parameterised spelling, ndcg_cut.10), the
# trec_name what trec_eval prints (ndcg_cut_10).
_TREC_SOURCE = "trec_eval m_{}.c"


def _judged(
    name: str, func: Callable[..., np.ndarray], *, ir_name: str | None = None, source: str = "", aggregate: str = "mean", ties_exact: bool = True, **kw: object
) -> None:
    register(
        Measure(
            name,
            _summary(func),
            lambda b, s: func(b, **kw),
            func,
            kind="judged",
            trec_name=name,
            params="rel_level: Settings.rel_level, --rel-level" if func not in (ndcg, num_ret) else "",
            ir_name=ir_name,
            source=source or _TREC_SOURCE.format(name),
            aggregate=aggregate,
            ties_exact=ties_exact,
        )
    )


_judged("ndcg", ndcg)
_judged("bpref", bpref, ir_name="Bpref", ties_exact=False)
_judged("num_ret", num_ret, ir_name="NumRet", aggregate="sum")
_judged("num_rel", num_rel, ir_name="NumRel", aggregate="sum")
_judged("num_rel_ret", num_rel_ret, ir_name="NumRelRet", aggregate="sum")
_judged("gm_map", gm_map, aggregate="geometric", ties_exact=False)
_judged("set_F", set_f, ir_name="SetF")
for _x in IPREC_LEVELS:
    # trec_eval 10's lround cutoff; ir_measures' IPrec@x (pytrec_eval, trec_eval
    # 9's truncation of x R + 0.9) differs on some topics, so it is no alias.
    _judged(f"iprec_at_recall_{_x:.2f}", iprec_at_recall, source="trec_eval 10.0 m_iprec_at_recall.c", level=_x, rounding="v10", ties_exact=False)


def _judged_cutoff(prefix: str, func: Callable[..., np.ndarray], ir_prefix: str | None, expected_func: Callable[..., np.ndarray] | None = None) -> None:
    def make(k: int | str) -> Measure:
        def compute(b: JudgedBlock, s: Settings) -> np.ndarray:
            return func(b, k=_cutoff_value(k, prefix))

        def expected(b: JudgedBlock, s: Settings) -> np.ndarray:
            assert expected_func is not None
            return expected_func(b, k=_cutoff_value(k, prefix))

        return Measure(
            f"{prefix}.{k}",
            _summary(func),
            compute,
            func,
            kind="judged",
            trec_name=f"{prefix}_{k}",
            params=f"k: the cutoff in the name ({prefix}.10)" + ("" if func is ndcg_cut else "; rel_level: --rel-level"),
            ir_name=None if ir_prefix is None else f"{ir_prefix}@{k}",
            source=_TREC_SOURCE.format(prefix),
            expected=None if expected_func is None else expected,
        )

    register_pattern(prefix, rf"{re.escape(prefix)}\.([1-9][0-9]*)", make)


# nDCG@k is not an alias of ndcg_cut.k: NDCG@k (SHREC 2006) differs by one
# letter's case and means something else; see did_you_mean.
_judged_cutoff("ndcg_cut", ndcg_cut, None)
_judged_cutoff("map_cut", map_cut, "AP", ties.expected_map_cut)
_judged_cutoff("success", success, "Success", ties.expected_success)


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
    #: ir_measures' name of the same value, else None.
    ir_name: str | None = None
    #: Where the definition comes from.
    source: str = ""
    #: An exact expected value over tied orders exists (``--ties expected``); False: refused there.
    ties_exact: bool = True


#: ir_measures' names of the shrec-score measures that equal them (not aliases:
#: AP, RR, P@k, R@k are spelled the same; the others keep their PSB names).
_IR_NAMES = {"NN": "P@1", "FT": "Rprec", "AP": "AP", "RR": "RR", "P@k": "P@k", "R@k": "R@k"}
_SOURCES = {
    "NN": "PSB (Shilane et al. 2004), psbplot", "FT": "PSB, psbplot", "ST": "PSB, psbplot", "E": "PSB, psbplot; seeds/README erratum 5",
    "DCG": "PSB, psbplot", "AP": "trec_eval m_map.c", "RR": "trec_eval m_recip_rank.c", "P@k": "trec_eval m_P.c", "R@k": "trec_eval m_recall.c",
}


def _source(m: Measure) -> str:
    if m.source:
        return m.source
    if m.name in _SOURCES:
        return _SOURCES[m.name]
    return "SHREC 2006 report (Veltkamp et al.), section 5" if m.kind == "graded" else ""


def measure_table() -> list[MeasureInfo]:
    """Every measure in registry order, then the ``prefix@k`` families.

    The source of ``shrec-score measures`` and of the docs; families are shown
    with their parameter as ``k`` (``P@k``, trec_eval ``P_k``).

    >>> rows = {r.name: r for r in measure_table()}
    >>> rows["AP"][:3], rows["R@k"][:3], rows["FP_highly"].direction
    (('AP', 'higher', 'map'), ('R@k', 'higher', 'recall_k'), 'lower')
    >>> rows["ndcg_cut.k"][:3], rows["map_cut.k"].ir_name
    (('ndcg_cut.k', 'higher', 'ndcg_cut_k'), 'AP@k')
    """
    measures = list(REGISTRY.values()) + [p.make("k") for p in PATTERNS]
    return [
        MeasureInfo(m.name, m.direction, m.trec_name, m.summary, m.params, m.ir_name or _IR_NAMES.get(m.name), _source(m), m.ties_exact)
        for m in measures
    ]


def measures_markdown() -> str:
    """docs/measures.md: every measure with its definition, its trec_eval and
    ir_measures equivalents and its source (``tests`` check the file is this text)."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    aliases: dict[str, list[str]] = {}
    for alias, target in ALIASES.items():
        aliases.setdefault(target, []).append(alias)
    lines = [
        "# Measures",
        "",
        "Generated from `shrec_score/measures/registry.py` by `measure_table()`;",
        "`tests/test_treceval_measures.py` checks this part is up to date (the definitions",
        "after it are written by hand); its failure message gives the command that regenerates it.",
        "",
        "- **name**: the CSV column and what `--measures` takes.  A `prefix@k` or",
        "  `prefix.k` row is a family: give the cutoff (`P@10`, `ndcg_cut.10`).",
        "- **trec_eval**: trec_eval's name, given only where the value equals",
        "  trec_eval's; `--format trec` prints this name.  trec_eval prints",
        "  `ndcg_cut_10` for the measure it takes as `-m ndcg_cut.10`; both",
        "  spellings are accepted, the column is `ndcg_cut.10`.",
        "- **ir_measures**: ir_measures' name of the same value.",
        "- **also accepted**: other spellings of the same measure on the command line.",
        "",
        "Cutoff families also accept: `P.k` and `P_k` for `P@k`, `recall.k` and",
        "`recall_k` for `R@k`, `ndcg_cut_k`, `map_cut_k` and `AP@k` for",
        "`map_cut.k`, `success_k` and `Success@k` for `success.k`.",
        "",
        "Topics without a relevant document: the trec_eval-named measures added",
        "for trec_eval (`ndcg`, `ndcg_cut.k`, `map_cut.k`, `success.k`, `bpref`,",
        "`num_*`, `iprec_at_recall_*`, `gm_map`, `set_F`) score them as trec_eval",
        "does (0; `gm_map` ln(1e-5)) and count them in the run's value.  The",
        "shrec-score measures whose trec_eval name is `map`, `Rprec`,",
        "`recip_rank`, `P_k`, `recall_k`, `P_1` (`AP`, `FT`, `RR`, `P@k`, `R@k`,",
        "`NN`) leave such a topic empty and out of the mean (docs/conventions.md),",
        "where trec_eval counts a 0; they equal trec_eval on every other topic.",
        "",
        "A run's value is the mean over its topics, except: `gm_map` (per topic",
        "ln max(AP, 1e-5), as `trec_eval -q` prints it; the run's value is exp of",
        "the mean) and `num_ret`, `num_rel`, `num_rel_ret` (sums, as trec_eval).",
        "",
        "`iprec_at_recall_x` follows trec_eval 10 (the c-th relevant item with",
        "c = lround(x R)); trec_eval 9, pytrec_eval and ir_measures' `IPrec@x`",
        "use c = (long)(x R + 0.9) and differ on some topics, so `IPrec@x` is no",
        "alias.  ir_measures' `P(rel=2)@k` is no alias either: the relevance",
        "level is one setting for the whole scoring (`--rel-level 2`, then `P@k`).",
        "",
        "`--depth N` (trec_eval `-M N`) and `--judged-only` (trec_eval `-J`) change",
        "the ranked lists every measure sees.",
        "",
        "ir_measures' `nDCG@k` is **not** accepted: `NDCG@k` (one letter's case",
        "apart) is SHREC 2006's NDCG, with another discount and ideal; the error",
        "message points to `ndcg_cut.k`.",
        "",
        "The `shapenet.*` measures are the SHREC'16/'17 ShapeNet Core55 evaluator's",
        "summary (`configs/shrec2017-shapenet.yaml`); the files of a ShapeNet",
        "scoring name them as the official `summary.csv` does (`P@N`, `R@N`,",
        "`F1@N`, `mAP`, `NDCG`), on the command line they keep the prefix",
        "(`mAP` is `AP`'s alias and `NDCG` would differ from trec_eval's `ndcg`",
        "by case only).  Each list is cut at 1000 first and an item is relevant",
        "when its taxonomy grade is > 0.  `shapenet.P@N` divides by the list's",
        "own length N (`P@k` by a fixed k); `shapenet.R@N` by min(C, 1000) with",
        "the query counted in its synset (`R@k`: K, the query excluded);",
        "`shapenet.mAP` averages the precisions over the relevant items",
        "*retrieved* (as SHREC 2006's `AP_relevant`; `AP` = trec_eval's `map`",
        "divides by all K, so a short list scores lower there);",
        "`shapenet.NDCG` discounts as the PSB's `DCG` and SHREC 2006's `NDCG@k`",
        "(g_1 + g_i / log2 i) but its ideal is the retrieved list's own grades",
        "sorted descending, not the class's (nor trec_eval's `ndcg`, which also",
        "discounts by log2(i + 1)); it is 0 when nothing relevant is retrieved.",
        "",
        "- **ties expected**: `exact` where `--ties expected` computes the exact",
        "  mean over every order of tied items (`shrec_score/measures/ties.py`",
        "  says how); `refused` where no exact method is known: such a measure",
        "  is refused under `--ties expected` (never approximated); `rule`,",
        "  `optimistic` and `pessimistic` score every measure.",
        "",
        "| name | better | trec_eval | ir_measures | also accepted | definition | parameters | source | ties expected |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in measure_table():
        also = ", ".join(f"`{a}`" for a in aliases.get(row.name, []) if a != row.ir_name)
        lines.append(
            f"| `{row.name}` | {row.direction} | {'`' + row.trec_name + '`' if row.trec_name else '-'} | "
            f"{'`' + row.ir_name + '`' if row.ir_name else '-'} | {also or '-'} | {cell(row.summary)} | {cell(row.params) or '-'} | {cell(row.source) or '-'} | "
            f"{'exact' if row.ties_exact else 'refused'} |"
        )
    return "\n".join(lines) + "\n"


def measure_listing() -> str:
    """The text of ``shrec-score measures``: a header, then one line per measure.

    Columns: name, which way is better, trec_eval's name (``-``: none with
    the same value), the definition and, in brackets, its parameters.
    """
    lines = [f"{'measure':<12} {'better':<6} {'trec_eval':<10} definition"]
    for row in measure_table():
        text = f"{row.summary.rstrip('.')} [{row.params}]" if row.params else row.summary
        if not row.ties_exact:
            text += " (refused under --ties expected: no exact method)"
        lines.append(f"{row.name:<12} {row.direction:<6} {row.trec_name or '-':<10} {text}")
    return "\n".join(lines) + "\n"
