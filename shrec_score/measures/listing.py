"""The listing of every measure: ``shrec-score measures`` and the generated top of docs/measures.md, both
from :func:`measure_table`."""

from __future__ import annotations

import re
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
    # a family's row is made with its fields' names (P@k), which no block can compute
    measures = list(REGISTRY.values()) + [make(*re.findall(r"\{([a-z])\}", s)) for s, make in PATTERNS.items()]
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
        "checks this part is up to date; its failure message gives the command that regenerates it.  The columns",
        "and the conventions behind them are explained under the table, written by hand.",
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
