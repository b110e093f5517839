"""The listing of every measure: ``shrec-score measures`` and the generated top of docs/measures.md, both
from :func:`measure_table`."""

from __future__ import annotations

import re

from .measure import PATTERNS, REGISTRY, Measure, aliases_of


def measure_table() -> list[Measure]:
    """Every measure in registry order, then the families, each made with its fields' names (``P@k``, trec_eval
    ``P_k``): the source of ``shrec-score measures`` and of the docs.

    >>> rows = {r.name: r for r in measure_table()}
    >>> [(r.name, r.direction, r.trec_name) for r in (rows["AP"], rows["R@k"], rows["ndcg_cut.k"])]
    [('AP', 'higher', 'map'), ('R@k', 'higher', 'recall_k'), ('ndcg_cut.k', 'higher', 'ndcg_cut_k')]
    >>> rows["FP_highly"].direction, rows["map_cut.k"].ir_name
    ('lower', 'AP@k')
    """
    return list(REGISTRY.values()) + [make(*re.findall(r"\{([a-z])\}", s)) for s, make in PATTERNS.items()]


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
