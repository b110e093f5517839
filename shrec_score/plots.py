"""Figures for the organiser's paper (matplotlib, the optional ``plots`` extra; docs/outputs.md, "Charts"), each a
private ``Figure`` saved through its own canvas: no pyplot, no backend switch, ``rcParams`` only read."""

from __future__ import annotations

import io
import os
import re
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import InputError
from .measures.measure import display_name
from .outdir import publish
from .report import Report

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

INSTALL_HINT = "pip install 'shrec-score[plots]' (or: pip install matplotlib)"

_DASHES = ["-", "--", ":", "-."]
_MARKERS = ["o", "s", "^", "D", "v", "X", "P", "*", "<", ">", "h"]
_HATCHES = ["", "//", "..", "xx", "\\\\", "++", "oo"]
#: matplotlib's tab10, then ten colours chosen one by one as the farthest (RGB distance) from those
#: already taken, none light enough to vanish on white: any two are at least 0.22 apart.
PALETTE = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    "#000075", "#800000", "#252525", "#808000", "#393b79", "#f032e6", "#911eb4", "#1b9e77", "#e7ba52", "#637939",
]
#: Line charts' size in inches: drawn at 150 dpi, shown at the page's width.
LINE_FIGSIZE = (8.0, 5.0)


def figure_class() -> type[Figure]:
    """matplotlib's ``Figure`` class; InputError naming :data:`INSTALL_HINT` when matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401  (the package and its module: a half-removed install is none)
        from matplotlib.figure import Figure
    except ImportError:
        raise InputError(None, None, f"--plots needs matplotlib; install it with: {INSTALL_HINT}") from None
    return Figure


def styles(n: int) -> list[dict]:
    """One ``Axes.plot`` keyword dict per run: 20 colours, then 4 dashes x 11 markers (coprime: 44 pairs)."""
    return [
        {"color": PALETTE[i % 20], "linestyle": _DASHES[i % 4], "marker": _MARKERS[i % 11], "markersize": 4, "linewidth": 1.4}
        for i in range(n)
    ]


_SVG_ID = re.compile(r'\bid="([^"]+)"')
_SVG_REF = re.compile(r'(href="#|url\(#)([^")]+)')


def renumber_svg_ids(svg: str, prefix: str) -> str:
    """``svg`` with every ``id`` (matplotlib's are random) renamed ``prefix`` + its number in order of appearance,
    the references following: the same at every scoring, unique in a page of several figures (one prefix each)."""
    new = {old: f"{prefix}{i}" for i, old in enumerate(dict.fromkeys(_SVG_ID.findall(svg)))}
    svg = _SVG_ID.sub(lambda m: f'id="{new[m.group(1)]}"', svg)
    return _SVG_REF.sub(lambda m: m.group(1) + new.get(m.group(2), m.group(2)), svg)  # not a "#" in a text


def _save(fig: Any, name: str, formats: tuple[str, ...]) -> dict[str, bytes]:
    """``fig`` as ``{"<name>.<format>": bytes}`` through its own canvas, without dates, SVG ids renumbered."""
    files = {}
    for ext in formats:
        buf = io.BytesIO()
        metadata = {"svg": {"Date": None}, "pdf": {"CreationDate": None}}.get(ext)
        fig.savefig(buf, format=ext, dpi=150, bbox_inches="tight", metadata=metadata)
        data = buf.getvalue()
        files[f"{name}.{ext}"] = renumber_svg_ids(data.decode("utf-8"), "s").encode("utf-8") if ext == "svg" else data
    return files


def legend_outside(ax: Axes, ncol: int = 1) -> None:
    """The legend to the right of the axes, its top at the axes' top: it covers no curve and no bar."""
    ax.legend(fontsize=8, ncol=ncol, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, frameon=False)


def write_plots(report: Report, out_dir: str | os.PathLike[str]) -> list[str]:
    """Replace the folder ``out_dir`` with every figure the report supports (docs/outputs.md, "Charts"; a PNG then
    an SVG each) as one unit; returns the paths written.  InputError when matplotlib is missing."""
    return publish(out_dir, plot_files(report))


def plot_pr_curves(report: Report, ax: Axes | None = None) -> Axes:
    """Draw the precision-recall curves of every run of ``report`` on ``ax`` (omitted: a new standalone Figure's)
    and return it: one line per run in leaderboard order, labelled "run (measure value)", nothing else touched.
    ValueError without a precision-recall table; InputError when ``ax`` is omitted and matplotlib is missing."""
    pr = report.pr_curve  # (each read of a report's table makes a new DataFrame)
    if not len(pr):
        raise ValueError("report: expected a report with precision-recall curves (report.pr_curve is empty)")
    if ax is None:
        ax = figure_class()(figsize=LINE_FIGSIZE).subplots()
    _draw(ax, report, pr, "recall", "precision")
    ax.set(xlabel="Recall", ylabel="Precision", xlim=(0, 1.02), ylim=(0, 1.02), title="Precision-recall")
    return ax


def _draw(ax: Axes, report: Report, table: Any, x: str, y: str, legend: bool = True, **options: Any) -> None:
    """One styled line per run of ``table`` (``x`` against ``y``), labelled "run (measure value)", on a grid."""
    board = report.leaderboard
    runs = [str(r) for r in board["run"]]
    for r, value, style in zip(runs, board[report.sort], styles(len(runs))):
        sub = table[table["run"] == r]
        ax.plot(sub[x], sub[y], label=f"{r} ({display_name(report.sort)} {value:.3f})", **options, **style)
    ax.grid(alpha=0.3)
    if legend:
        legend_outside(ax, 1 if len(runs) <= 20 else 2)


def plot_files(report: Report, formats: tuple[str, ...] = ("png", "svg")) -> dict[str, bytes]:
    """Every figure the report supports (:func:`write_plots`) as ``{file name: bytes}``, in ``formats``.

    Run names with characters the font has no glyph for (CJK, emoji, a tab) are drawn with empty boxes:
    matplotlib's warning per glyph and figure is replaced by one ``UserWarning`` that names the runs."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        files = _plot_files(report, formats)
    missing = {m.group(1) for w in caught for m in [_GLYPH.search(str(w.message))] if m}
    for w in caught:
        if not _GLYPH.search(str(w.message)):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if missing:
        runs = [str(r) for r in report.leaderboard["run"] if any(chr(int(c)) in str(r) for c in missing)]
        shown = ", ".join(repr(r) for r in runs[:3]) + (f" and {len(runs) - 3} more" if len(runs) > 3 else "")
        warnings.warn(f"plots: the font has no glyph for {len(missing)} character(s) of the run names {shown}: they are drawn as empty boxes", UserWarning, stacklevel=2)
    return files


#: matplotlib's warning for a character the font cannot draw ("Glyph 20013 (...) missing from font(s) ...").
_GLYPH = re.compile(r"Glyph (\d+) .*missing from font")


def _plot_files(report: Report, formats: tuple[str, ...]) -> dict[str, bytes]:
    Figure = figure_class()
    runs = [str(r) for r in report.leaderboard["run"]]
    written: dict[str, bytes] = {}

    if len(report.pr_curve):
        written.update(_save(plot_pr_curves(report).figure, "pr_curves", formats))

    curves = report.curves
    if curves is not None:
        ax = Figure(figsize=LINE_FIGSIZE).subplots()
        _draw(ax, report, curves, "rank", "NDCG", markevery=10)
        ax.set(xlabel="Rank", ylabel="Mean NDCG", xlim=(1, int(curves["rank"].max())), title="Normalized discounted cumulated gain")
        written.update(_save(ax.figure, "ndcg_vs_rank", formats))

    gains = report.gain_vs_recall
    if gains is not None:
        axes = Figure(figsize=(11, 4.5)).subplots(1, 2)
        for kind, ax in zip(("CG", "DCG"), axes):
            _draw(ax, report, gains, "recall_pct", kind, legend=kind == "DCG", markevery=10)
            ax.set(xlabel="Recall (%)", ylabel=f"Mean {kind}", title=f"Average {kind} vs recall")
        written.update(_save(axes[1].figure, "cg_vs_recall", formats))

    pc = report.per_class
    if pc is not None and report.sort in pc:
        classes = list(dict.fromkeys(pc["class"]))
        width = 0.8 / max(1, len(runs))
        ax = Figure(figsize=(max(6.4, 0.35 * len(classes) * max(1, len(runs)) ** 0.5 + 2), 4.8)).subplots()
        x = np.arange(len(classes))
        for i, r in enumerate(runs):
            sub = pc[pc["run"] == r].set_index("class").reindex(classes)
            ax.bar(x + i * width - 0.4 + width / 2, sub[report.sort], width, label=r, color=PALETTE[i % 20], hatch=_HATCHES[i % 7], edgecolor="black", linewidth=0.3)
        ax.set_xticks(x, [str(c) for c in classes], rotation=60, ha="right", fontsize=7)
        ax.set(ylabel=display_name(report.sort), title=f"{display_name(report.sort)} per class")
        legend_outside(ax, 1 if len(runs) <= 20 else 2)
        safe = "".join(c if c.isalnum() else "_" for c in report.sort)
        written.update(_save(ax.figure, f"per_class_{safe}", formats))
    return written


__all__ = ["write_plots", "plot_files", "plot_pr_curves", "styles", "legend_outside", "INSTALL_HINT", "PALETTE", "figure_class"]
