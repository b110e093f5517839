"""The listing of every measure: ``shrec-score measures`` and the generated top of docs/measures.md, both
from :func:`measure_table`."""

from __future__ import annotations

from typing import NamedTuple

from .measure import PATTERNS, REGISTRY, Measure, aliases_of


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


#: ir_measures' names of the same values where they are not aliases (ir_measures'
#: AP, RR, P@k and R@k are spelled as our SHREC measures, which leave a topic
#: without relevant documents out of the mean where ir_measures counts 0).
_IR_NAMES = {"map": "AP", "Rprec": "Rprec", "recip_rank": "RR", "P.k": "P@k", "recall.k": "R@k"}
_SOURCES = {
    "NN": "PSB (Shilane et al. 2004), psbplot", "FT": "PSB, psbplot", "ST": "PSB, psbplot", "E": "PSB, psbplot; seeds/README erratum 5",
    "DCG": "PSB, psbplot", "AP": "trec_eval m_map.c", "RR": "trec_eval m_recip_rank.c", "P@k": "trec_eval m_P.c", "R@k": "trec_eval m_recall.c",
}


def _source(m: Measure) -> str:
    graded = "SHREC 2006 report (Veltkamp et al.), section 5" if m.kind == "graded" else ""
    return m.source or _SOURCES.get(m.name, graded)


def measure_table() -> list[MeasureInfo]:
    """Every measure in registry order, then the ``prefix@k`` families, shown with their parameter as ``k``
    (``P@k``, trec_eval ``P_k``): the source of ``shrec-score measures`` and of the docs.

    >>> rows = {r.name: r for r in measure_table()}
    >>> rows["AP"][:3], rows["R@k"][:3], rows["FP_highly"].direction
    (('AP', 'higher', 'map'), ('R@k', 'higher', 'recall_k'), 'lower')
    >>> rows["ndcg_cut.k"][:3], rows["map_cut.k"].ir_name
    (('ndcg_cut.k', 'higher', 'ndcg_cut_k'), 'AP@k')
    """
    measures = list(REGISTRY.values()) + [p.template() for p in PATTERNS]
    return [
        MeasureInfo(m.name, m.direction, m.trec_name, m.summary, m.params, m.ir_name or _IR_NAMES.get(m.name), _source(m), m.ties_exact)
        for m in measures
    ]


def measures_markdown() -> str:
    """The generated top of docs/measures.md: every measure with its definition, its trec_eval and
    ir_measures equivalents and its source (a test checks the file holds this text)."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = [
        "# Measures",
        "",
        "Generated from `shrec_score/measures/registry.py` by `measure_table()`; `tests/test_treceval_measures.py`",
        "checks this part is up to date (the definitions after it are written by hand); its failure message gives",
        "the command that regenerates it.",
        "",
        "- **name**: what `--measures` takes.  A `prefix@k` or `prefix.k` row is a family: give the cutoff (`P@10`,",
        "  `ndcg_cut.10`).  A column is named as its measure was typed: `-m ndcg_cut_10` gives `ndcg_cut_10`, `-m",
        "  ndcg@10` gives `ndcg@10` (docs/usage.md, measure names and columns).",
        "- **trec_eval**: trec_eval's name of the value.  trec_eval prints `ndcg_cut_10` for the measure it takes",
        "  as `-m ndcg_cut.10`; both spellings are accepted.  `--format trec` prints this name only where the",
        "  values are trec_eval's (not for `AP`, `FT`, `RR`, `NN`, `P@k`, `R@k`: see below).",
        "- **ir_measures**: ir_measures' name of the same value.",
        "- **also accepted**: other spellings of the same measure (trec_eval's, ranx's, ir_measures');",
        "  docs/coming-from.md has a table per tool.",
        "",
        "**A name another tool defines gives that tool's value.**  trec_eval scores a topic without a relevant",
        "document (at `--rel-level`) as 0 and counts it in the mean; so do its names here: `map`, `Rprec`,",
        "`recip_rank`, `P.k`, `recall.k` (and `P_k`, `recall_k`, ranx's `mrr`, `precision@k`, `recall@k`, ...),",
        "`ndcg`, `ndcg_cut.k`, `map_cut.k`, `success.k`, `bpref`, `num_*`, `iprec_at_recall_*`, `gm_map`",
        "(ln(1e-5)), `set_F`. The SHREC measures `AP`, `FT`, `RR`, `P@k`, `R@k`, `NN` keep the contests'",
        "convention: such a topic is empty and left out of the mean (docs/conventions.md); on every other topic",
        "`AP` = `map`, `FT` = `Rprec`, `RR` = `recip_rank`, `P@k` = `P.k`, `R@k` = `recall.k`, `NN` = `P.1`, which",
        "is why their trec_eval column names a measure; under `--format trec` they keep their own names.",
        "",
        "A run's value is the mean over its topics, except: `gm_map` (per topic ln max(AP, 1e-5), as `trec_eval -q`",
        "prints it; the run's value is exp of the mean) and `num_ret`, `num_rel`, `num_rel_ret` (sums, as",
        "trec_eval).",
        "",
        "`iprec_at_recall_x` follows trec_eval 10 (the c-th relevant item with c = lround(x R)); trec_eval 9,",
        "pytrec_eval and ir_measures use c = (long)(x R + 0.9): that value is `IPrec@x`.  `P(rel=r)@k` counts grade",
        ">= r whatever `--rel-level` says (ir_measures' spelling). `-m official` is trec_eval's default set;",
        "`all_trec` is refused (not every trec_eval measure is here).  `-m P.5,10,20` is `P.5,P.10,P.20`.",
        "",
        "`--depth N` (trec_eval `-M N`) and `--judged-only` (trec_eval `-J`) change the ranked lists every measure",
        "sees.",
        "",
        "ir_measures' `nDCG@k` and ranx's `ndcg@k` are trec_eval's `ndcg_cut.k`; `NDCG@k` (one letter's case apart)",
        "is SHREC 2006's NDCG, with another discount and ideal.",
        "",
        "The `shapenet.*` measures are the SHREC'16/'17 ShapeNet Core55 evaluator's summary",
        "(`configs/shrec2017-shapenet.yaml`); the files of a ShapeNet scoring name them as the official",
        "`summary.csv` does (`P@N`, `R@N`, `F1@N`, `mAP`, `NDCG`), on the command line they keep the prefix (`mAP`",
        "is `AP`'s alias and `NDCG` would differ from trec_eval's `ndcg` by case only).  Each list is cut at 1000",
        "first and an item is relevant when its taxonomy grade is > 0.  `shapenet.P@N` divides by the list's own",
        "length N (`P@k` by a fixed k); `shapenet.R@N` by min(C, 1000) with the query counted in its synset (`R@k`:",
        "K, the query excluded); `shapenet.mAP` averages the precisions over the relevant items *retrieved* (as",
        "SHREC 2006's `AP_relevant`; `AP` = trec_eval's `map` divides by all K, so a short list scores lower",
        "there); `shapenet.NDCG` discounts as the PSB's `DCG` and SHREC 2006's `NDCG@k` (g_1 + g_i / log2 i) but",
        "its ideal is the retrieved list's own grades sorted descending, not the class's (nor trec_eval's `ndcg`,",
        "which also discounts by log2(i + 1)); it is 0 when nothing relevant is retrieved.",
        "",
        "- **ties expected**: `exact` where `--ties expected` computes the exact mean over every order of tied",
        "  items (`shrec_score/measures/ties.py` says how); `refused` where no exact method is known: such a",
        "  measure is refused under `--ties expected` (never approximated); `rule`, `optimistic` and `pessimistic`",
        "  score every measure.",
        "",
        "| name | better | trec_eval | ir_measures | also accepted | definition | parameters | source | ties expected |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in measure_table():
        also = ", ".join(f"`{a}`" for a in aliases_of(row.name) if a != row.ir_name)
        lines.append(
            f"| `{row.name}` | {row.direction} | {'`' + row.trec_name + '`' if row.trec_name else '-'} | "
            f"{'`' + row.ir_name + '`' if row.ir_name else '-'} | {also or '-'} | {cell(row.summary)} | {cell(row.params) or '-'} | {cell(row.source) or '-'} | "
            f"{'exact' if row.ties_exact else 'refused'} |"
        )
    return "\n".join(lines) + "\n"


def measure_listing() -> str:
    """The text of ``shrec-score measures``: a header, then per measure its name, which way is better,
    trec_eval's name (``-``: none with the same value), the definition and, in brackets, its parameters."""
    lines = [f"{'measure':<12} {'better':<6} {'trec_eval':<10} definition"]
    for row in measure_table():
        text = f"{row.summary.rstrip('.')} [{row.params}]" if row.params else row.summary
        if not row.ties_exact:
            text += " (refused under --ties expected: no exact method)"
        also = aliases_of(row.name)
        if also:
            text += f" (also: {', '.join(also)})"
        lines.append(f"{row.name:<12} {row.direction:<6} {row.trec_name or '-':<10} {text}")
    return "\n".join(lines) + "\n"
