"""Registry of measures by name: the one source of the CSV columns, the ``shrec-score measures`` listing, the help
texts and each measure's direction and trec_eval name (docs/measures.md)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from . import shapenet, shrec06, ties, treceval
from .cumgain import dcg, gain_at
from .measure import PATTERNS, REGISTRY, Measure, Settings, aliases_of, register
from .precision import average_precision, map_at_r, precision_at, recall_at, reciprocal_rank
from .tiers import E_DEPTH, e_measure, first_tier, nearest_neighbor, second_tier
from .treceval import IPREC_LEVELS

_PSB = "PSB, psbplot"
_SHREC06 = "SHREC 2006 report (Veltkamp et al.), section 5"
_REL_LEVEL = "rel_level: Settings.rel_level, --rel-level"
_CUTOFF = "k: the cutoff in the name ({})"


def _add(
    spelling: str, func: Callable[..., np.ndarray], *, kind: str = "binary", kw: dict[str, Any] | None = None,
    expected: Callable[..., np.ndarray] | None = None, **fields: Any,
) -> None:
    """Register ``func(rel_ranks, n_relevant=K, **kw)`` (``kind="binary"``) or ``func(block, **kw)`` as ``spelling``,
    with ``expected(block, **kw)`` under ``--ties expected``, its summary the docstring's first line unless given.  A
    spelling with fields in braces (``P@{k}``) is a family: a name's numbers go to both as keywords and into the braces
    of its other names; ``{}`` in ``params`` is the name at k = 10."""
    fields["summary"] = fields.get("summary") or (func.__doc__ or "").strip().splitlines()[0]

    def make(*numbers: Any) -> Measure:
        at = dict(zip(re.findall(r"\{([a-z])\}", spelling), numbers))
        args = {**(kw or {}), **at}
        named = {f: v and v.format(**at) for f, v in fields.items() if at and f in ("trec_name", "ir_name", "summary")}
        binary = lambda b, s: func(b.rel_ranks, n_relevant=b.n_relevant, **args)
        return Measure(
            spelling.format(**at), compute=binary if kind == "binary" else lambda b, s: func(b, **args), kind=kind,
            expected=expected and (lambda b, s: expected(b, **args)), **(fields | named),
        )

    if "{" not in spelling:
        return register(make())
    fields["params"] = fields.get("params", _CUTOFF).format(spelling.format(k=10, r=2))
    PATTERNS[spelling] = make


# trec_name only where the formula is trec_eval's (AP: map, FT: Rprec, NN: P_1); expected: the mean over tied orders
_add("NN", nearest_neighbor, trec_name="P_1", source="PSB (Shilane et al. 2004), psbplot",
     expected=lambda b: ties.expected_share(b, 1, 1))
_add("FT", first_tier, trec_name="Rprec", source=_PSB,
     expected=lambda b: ties.expected_share(b, b.n_relevant, b.n_relevant))
_add("ST", second_tier, source=_PSB, expected=lambda b: ties.expected_share(b, 2 * b.n_relevant, b.n_relevant))
register(Measure(
    "E", f"E-measure as published by SHREC and the PSB: F1 over the first e_depth (default {E_DEPTH}) results.",
    lambda b, s: e_measure(b.rel_ranks, n_relevant=b.n_relevant, n_retrieved=b.n_retrieved, depth=s.e_depth),
    params="e_depth: Settings.e_depth, --e-depth", source=f"{_PSB}; seeds/README erratum 5",
    expected=lambda b, s: 2 * ties.expected_share(b, s.e_depth, np.minimum(s.e_depth, b.n_retrieved) + b.n_relevant),
))
_add("DCG", dcg, source=_PSB, expected=ties.expected_dcg)
_add("AP", average_precision, trec_name="map", source="trec_eval m_map.c", expected=ties.expected_ap)
_add("RR", reciprocal_rank, trec_name="recip_rank", source="trec_eval m_recip_rank.c",
     expected=lambda b: ties.expected_precision_at_hits(b, hits=1)[:, 0])  # the precision at the first hit
_add("P@{k}", precision_at, trec_name="P_{k}", source="trec_eval m_P.c",
     expected=lambda b, k: ties.expected_share(b, k, k))
_add("R@{k}", recall_at, trec_name="recall_{k}", source="trec_eval m_recall.c",
     expected=lambda b, k: ties.expected_share(b, k, b.n_relevant))

# SHREC 2006 (measures/shrec06.py), per level: highly relevant (Ch, Vh) or all relevant (Cr, Vr).
_func: Callable[..., np.ndarray]
for _lv, _C, _V in (("highly", "Ch", "Vh"), ("relevant", "Cr", "Vr")):
    for _m, _func, _what, _kw in (
        ("TP", shrec06.set_measure, f"true positives ({_lv}): {_V}", {"of": "TP"}),
        ("FP", shrec06.set_measure, f"false positives ({_lv}): Va - {_V}", {"of": "FP"}),
        ("TN", shrec06.set_measure, f"true negatives ({_lv}): Ds + {_V} - Va - {_C}", {"of": "TN"}),
        ("FN", shrec06.set_measure, f"false negatives ({_lv}): {_C} - {_V}", {"of": "FN"}),
        ("FT", shrec06.tier, f"First Tier ({_lv}): hits in the first d / d, d = min(Va, {_C})", {"factor": 1}),
        ("ST", shrec06.tier, f"Second Tier ({_lv}): hits in the first d / d, d = min(Va, 2 {_C})", {"factor": 2}),
        ("P", shrec06.set_measure, f"precision ({_lv}): {_V} / Va", {"of": "P"}),
        ("R", shrec06.set_measure, f"recall ({_lv}): {_V} / {_C}", {"of": "R"}),
        ("AP", shrec06.average_precision_retrieved,
         f"average precision ({_lv}): mean precision over the retrieved relevant items", {}),
    ):
        _add(f"{_m}_{_lv}", _func, kind="graded", summary=f"SHREC 2006 {_what}", kw={"level": _lv, **_kw},
             higher_is_better=_m not in ("FP", "FN"), expected=ties.expected_ap_retrieved if _m == "AP" else None,
             source=_SHREC06)
_add("ADR", shrec06.average_dynamic_recall, kind="graded", source=_SHREC06)

GAIN_KINDS = ("CG", "DCG", "NCG", "NDCG")
for _kind in GAIN_KINDS:
    # No trec_name: SHREC 2006 discounts by log2(i) from i = 2 on and takes the ideal over the whole class
    _add(f"{_kind}@{{k}}", gain_at, kw={"kind": _kind}, kind="graded", params="k: the rank in the name ({})",
         source=_SHREC06, summary=f"{_kind} vector at rank k (SHREC 2006; empty when the list is shorter than k)")

#: SHREC'16/'17 ShapeNet Core55 (measures/shapenet.py), namespaced (docs/measures.md), in the official summary's
#: order, and each one's name there (shapenet_summary_<run>.csv).
SHAPENET_MEASURES = ("shapenet.P@N", "shapenet.R@N", "shapenet.F1@N", "shapenet.mAP", "shapenet.NDCG")
SHAPENET_OFFICIAL = {m: m.removeprefix("shapenet.") for m in SHAPENET_MEASURES}
for _name, _func in zip(SHAPENET_MEASURES, (shapenet.precision_at_n, shapenet.recall_at_n, shapenet.f1_at_n,
                                     shapenet.average_precision_retrieved, shapenet.ndcg_retrieved)):
    _add(_name, _func, kind="graded", params="lists cut at 1000; relevant = grade > 0 (--rel-level does not apply)",
         source="SHREC'16/'17 ShapeNet Core55 evaluator (Metrics.js), issue 18",
         ties_exact=False)  # the cut at 1000 can split a tie group; no exact expectation written


def _trec(spelling: str, func: Callable[..., np.ndarray], *, params: str = _REL_LEVEL, **fields: Any) -> None:
    """A trec_eval measure (measures/treceval.py): named as -m takes it (``ndcg_cut.10``), trec_name as printed."""
    fields.setdefault("source", f"trec_eval m_{spelling.split('.')[0]}.c")
    _add(spelling, func, kind="judged", trec_name=spelling.replace(".{", "_{"), params=params, **fields)


_trec("ndcg", treceval.ndcg, params="")
_trec("bpref", treceval.bpref, ir_name="Bpref", ties_exact=False)
for _name, _ir_name, _what, _params in (
    ("num_ret", "NumRet", "number of items retrieved (the length of the ranked list)", ""),
    ("num_rel", "NumRel", "number of judged relevant documents of the topic (grade >= rel_level)", _REL_LEVEL),
    ("num_rel_ret", "NumRelRet", "number of relevant items retrieved", _REL_LEVEL),
):
    _trec(_name, treceval.count, summary=f"trec_eval {_name}: {_what}.", kw={"of": _name}, ir_name=_ir_name,
          aggregate="sum", params=_params)
_trec("gm_map", treceval.gm_map, aggregate="geometric", ties_exact=False)
_trec("set_F", treceval.set_f, ir_name="SetF")
for _x in IPREC_LEVELS:
    _trec(f"iprec_at_recall_{_x:.2f}", treceval.iprec_at_recall, source="trec_eval 10.0 m_iprec_at_recall.c",
          kw={"level": _x, "rounding": "v10"}, ties_exact=False)
_trec("ndcg_cut.{k}", treceval.ndcg, params=_CUTOFF,
      summary="trec_eval ndcg_cut.k: DCG of the first k grades over the ideal DCG at k.")
_trec("map_cut.{k}", treceval.map_cut, ir_name="AP@{k}", expected=ties.expected_map_cut,
      params=_CUTOFF + "; rel_level: --rel-level")
_trec("success.{k}", treceval.success, ir_name="Success@{k}", expected=ties.expected_success,
      params=_CUTOFF + "; rel_level: --rel-level")


def graded_defaults(cutoffs: tuple[int, ...] = Settings.dcg_cutoffs) -> tuple[str, ...]:
    """Every SHREC 2006 measure, in the report's order (the graded default)."""
    sets = [f"{m}_{lv}" for m in ("TP", "FP", "TN", "FN", "FT", "ST", "P", "R", "AP") for lv in ("highly", "relevant")]
    return (*sets, "ADR", *(f"{kind}@{k}" for kind in GAIN_KINDS for k in cutoffs))


DEFAULT_GRADED = graded_defaults()
#: Shown on the terminal with graded relevance (per_run.csv holds them all).
SHOWN_GRADED = ("ADR", "AP_highly", "AP_relevant", "FT_highly", "FT_relevant", "ST_highly", "ST_relevant", "NDCG@100")
#: Measures shown when none are asked for (binary relevance).
DEFAULT_BINARY = ("NN", "FT", "ST", "E", "DCG", "AP")


_add("MAP@R", map_at_r, expected=lambda b: ties.expected_ap(b, b.n_relevant.astype(np.float64)),  # AP's, cut at R
     source="Musgrave, Belongie & Lim 2020, A Metric Learning Reality Check, sec. 3.2; "
     "pytorch-metric-learning AccuracyCalculator")


def _twin(name: str, ours: Measure, trec_name: str, ir_name: str) -> Measure:
    """``ours`` under trec_eval's name and ir_measures' (its AP, RR, P@k, R@k): 0, counted, where ``ours`` is empty."""
    zero = lambda f: lambda b, s: np.where(b.n_relevant > 0, f(b, s), 0.0)  # trec_eval's rule
    prefix = name.split(".")[0]
    return Measure(
        name, f"trec_eval's {trec_name}: {ours.name}, but a topic without relevant documents scores 0 and counts in the mean",
        zero(ours.compute), trec_name=trec_name, source=f"trec_eval m_{prefix}.c", ir_name=ir_name,
        params=_CUTOFF.format(f"{prefix}.10") if "." in name else "", expected=zero(ours.expected or ours.compute),
    )


for _name, _ours, _ir in (("map", "AP", "AP"), ("Rprec", "FT", "Rprec"), ("recip_rank", "RR", "RR")):
    register(_twin(_name, REGISTRY[_ours], _name, _ir))
for _prefix, _ours in (("P", "P@{k}"), ("recall", "R@{k}")):
    PATTERNS[_prefix + ".{k}"] = lambda k, p=_prefix, o=_ours: _twin(
        f"{p}.{k}", PATTERNS[o](k), f"{p}_{k}", o.format(k=k))

_add("P(rel={r})@{k}", treceval.precision_at_level, kind="judged",
     params="r, k: the level and the cutoff in the name ({})",
     summary="ir_measures' P(rel=r)@k: grade >= r in the first k ranks / k (r: the name's level, not --rel-level)",
     source="ir_measures P(rel=r)@k; trec_eval m_P.c with -l r",
     ties_exact=False)  # the tie groups' means are kept for --rel-level only

# ir_measures' IPrec@x: trec_eval 9's cutoff, which differs from iprec_at_recall_x's (docs/measures.md)
for _x in IPREC_LEVELS:
    _add(f"IPrec@{_x:.1f}", treceval.iprec_at_recall, kind="judged", kw={"level": _x, "rounding": "v9"},
         summary="ir_measures' IPrec@x: interpolated precision at recall x, trec_eval 9's cutoff (long)(x R + 0.9)",
         params=_REL_LEVEL, ties_exact=False,
         source="ir_measures IPrec@x (pytrec_eval: trec_eval 9.0 m_iprec_at_recall.c)")


def measure_table() -> list[Measure]:
    """Every measure in registry order, then the families, each made with its fields' names (``P@k``, trec_eval
    ``P_k``): the source of ``shrec-score measures`` and of the docs (tests/test_treceval_measures.py pins them)."""
    return list(REGISTRY.values()) + [make(*re.findall(r"\{([a-z])\}", s)) for s, make in PATTERNS.items()]


def measures_markdown() -> str:
    """The generated top of docs/measures.md: every measure with its definition, its trec_eval and ir_measures
    equivalents and its source (a test checks the file holds this text)."""
    lines = [
        "# Measures",
        "",
        "Generated from `shrec_score/measures/registry.py` by `measure_table()`; `tests/test_treceval_measures.py`",
        "checks this part is up to date; its failure message gives the command that regenerates it.  The columns",
        "and the conventions behind them are explained under the table, written by hand.",
        "",
        "| name | better | trec_eval | ir_measures | also accepted | definition | parameters | source | ties expected |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in measure_table():
        also = ", ".join(f"`{a}`" for a in aliases_of(row.name) if a != row.ir_name)
        names = [f"`{n}`" if n else "-" for n in (row.name, row.trec_name, row.ir_name)]
        cells = [names[0], row.direction, *names[1:], also or "-", row.summary, row.params or "-", row.source or "-",
                 "exact" if row.ties_exact else "refused"]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def measure_listing() -> str:
    """The text of ``shrec-score measures``: a header, then per measure its name, which way is better, trec_eval's
    name (``-``: none with the same value), the definition and, in brackets, its parameters."""
    lines = [f"{'measure':<12} {'better':<6} {'trec_eval':<10} definition"]
    for row in measure_table():
        text = f"{row.summary.rstrip('.')} [{row.params}]" if row.params else row.summary
        if not row.ties_exact:
            text += " (refused under --ties expected: no exact method)"
        if also := aliases_of(row.name):
            text += f" (also: {', '.join(also)})"
        lines.append(f"{row.name:<12} {row.direction:<6} {row.trec_name or '-':<10} {text}")
    return "\n".join(lines) + "\n"
