"""What every rendering's tables say beside their numbers (docs/outputs.md); each renderer escapes them."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from .measures.measure import display_name, get_measure
from .table import missing


def best_value(values: list[Any], higher: bool | None) -> str | None:
    """The best of a column's values at 4 decimals (every value equal to it so is marked best): the largest, the
    smallest for a lower-is-better measure; None without a direction (``tau_b_std``) or a defined value."""
    nums = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    if higher is None or not nums:
        return None
    return f"{max(nums) if higher else min(nums):.4f}"


def blank_note(report: Any, columns: list[str] | None = None) -> str | None:
    """The one-line note under a leaderboard with blank cells (None without): the rule, then each of ``columns``
    (default ``report.shown``) with a blank, its runs whose mean is undefined and the measure's definition."""
    board = report.table("leaderboard")
    runs = [str(r) for r in board["run"].tolist()]
    parts = []
    for m in columns if columns is not None else report.shown:
        blank = [r for r, v in zip(runs, board[m].tolist() if m in board.columns else []) if missing(v)]
        if blank:
            try:
                why = get_measure(m).summary.replace("``", "").strip().rstrip(".")
            except KeyError:
                why = ""
            parts.append(f"{display_name(m)}: {', '.join(blank)}" + (f" ({why})" if why else ""))
    if not parts:
        return None
    return "Blank cells: no query of the run has a value of the measure, so it has no mean. " + "; ".join(parts) + "."


def versus_best(report: Any) -> dict[str, Pair]:
    """run -> the best run against it (:func:`significance_matrix`'s first row; the best run's own
    :class:`Pair` has ``best`` and no p-value); {} without significance."""
    runs, cells = significance_matrix(report)
    if report.table("significance") is None or not runs:
        return {}
    best = runs[0]
    return {best: Pair(0.0, None, False, best=True)} | {b: pair for (a, b), pair in cells.items() if a == best}


class Pair(NamedTuple):
    """One cell of :func:`significance_matrix`, the row run against the column run (randomization test, Holm)."""

    mean_diff: float  # row minus column, oriented: positive = the row run is better
    p_adjusted: float | None
    significant: bool  # p_adjusted < 0.05
    best: bool = False  # versus_best's entry of the best run itself


def significance_matrix(report: Any) -> tuple[list[str], dict[tuple[str, str], Pair]]:
    """The runs in leaderboard order and ``(row, column) -> Pair`` for every tested pair, both ways (the
    (B, A) cell holds the negated ``mean_diff``; the diagonal and untested pairs are absent)."""
    runs = [str(r) for r in report.table("leaderboard")["run"].tolist()]
    cells: dict[tuple[str, str], Pair] = {}
    sig = report.table("significance")
    columns = [] if sig is None else [sig[c].tolist() for c in ("run_a", "run_b", "mean_diff", "p_adjusted", "significant")]
    for a, b, diff, p, yes in zip(*columns):
        cells[(str(a), str(b))] = Pair(float(diff), float(p), bool(yes))
        cells[(str(b), str(a))] = Pair(-float(diff), float(p), bool(yes))
    return runs, cells
