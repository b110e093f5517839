"""Figures for the organiser's paper (matplotlib, the optional ``plots`` extra).

* ``pr_curves``: precision-recall curves of every run on one chart, the
  legend in leaderboard order;
* ``ndcg_vs_rank`` (SHREC 2006 Figure 3) and ``cg_vs_recall`` with graded
  relevance;
* ``per_class_<measure>``: grouped bars of the sort measure per class and run.

Each is written as PNG and SVG.  Line styles combine 10 colours, 4 dash
patterns and 7 markers with coprime cycle lengths, so 20+ runs stay apart,
also printed in grey.
"""

from __future__ import annotations

import os

from .errors import InputError
from .report import DISPLAY, Report

INSTALL_HINT = "pip install 'shrec-score[plots]' (or: pip install matplotlib)"

_DASHES = ["-", "--", ":", "-."]
_MARKERS = ["o", "s", "^", "D", "v", "x", "P"]


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError(None, None, f"--plots needs matplotlib; install it with: {INSTALL_HINT}") from None
    return plt


def styles(n: int) -> list[dict]:
    """n distinct (colour, dash, marker) combinations, distinguishable in grey too."""
    import matplotlib

    colours = list(matplotlib.colormaps["tab10"].colors)  # type: ignore[attr-defined]
    out = []
    for i in range(n):
        out.append(
            {
                "color": colours[i % 10],
                "linestyle": _DASHES[i % 4],
                "marker": _MARKERS[i % 7],
                "markersize": 4,
                "linewidth": 1.4,
            }
        )
    return out


def _save(fig, out_dir: str, name: str) -> list[str]:
    paths = []
    for ext in ("png", "svg"):
        path = os.path.join(out_dir, f"{name}.{ext}")
        tmp = path + ".tmp"
        fig.savefig(tmp, format=ext, dpi=150, bbox_inches="tight", metadata={"Date": None} if ext == "svg" else None)
        os.replace(tmp, path)
        paths.append(path)
    return paths


def write_plots(report: Report, out_dir: str | os.PathLike[str]) -> list[str]:
    """Write every figure the report supports into ``out_dir``; returns the paths."""
    plt = _pyplot()
    out_dir = os.fspath(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    runs = [str(r) for r in report.leaderboard["run"]]
    st = dict(zip(runs, styles(len(runs))))
    label = {r: f"{r} ({DISPLAY.get(report.sort, report.sort)} {v:.3f})" for r, v in zip(runs, report.leaderboard[report.sort])}
    written: list[str] = []
    ncol = 1 if len(runs) <= 12 else 2

    if len(report.pr_curve):
        fig, ax = plt.subplots(figsize=(6.4, 4.8))
        for r in runs:
            sub = report.pr_curve[report.pr_curve["run"] == r]
            ax.plot(sub["recall"], sub["precision"], label=label[r], **st[r])
        ax.set(xlabel="Recall", ylabel="Precision", xlim=(0, 1.02), ylim=(0, 1.02), title="Precision-recall")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=ncol, loc="best")
        written += _save(fig, out_dir, "pr_curves")
        plt.close(fig)

    if report.curves is not None:
        fig, ax = plt.subplots(figsize=(6.4, 4.8))
        for r in runs:
            sub = report.curves[report.curves["run"] == r]
            ax.plot(sub["rank"], sub["NDCG"], label=label[r], markevery=10, **st[r])
        ax.set(xlabel="Rank", ylabel="Mean NDCG", xlim=(1, int(report.curves["rank"].max())), title="Normalized discounted cumulated gain")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=ncol, loc="best")
        written += _save(fig, out_dir, "ndcg_vs_rank")
        plt.close(fig)

    if report.gain_vs_recall is not None:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
        for kind, ax in zip(("CG", "DCG"), axes):
            for r in runs:
                sub = report.gain_vs_recall[report.gain_vs_recall["run"] == r]
                ax.plot(sub["recall_pct"], sub[kind], label=label[r], markevery=10, **st[r])
            ax.set(xlabel="Recall (%)", ylabel=f"Mean {kind}", title=f"Average {kind} vs recall")
            ax.grid(alpha=0.3)
        axes[1].legend(fontsize=7, ncol=ncol, loc="best")
        written += _save(fig, out_dir, "cg_vs_recall")
        plt.close(fig)

    if report.per_class is not None and report.sort in report.per_class:
        import numpy as np

        pc = report.per_class
        classes = list(dict.fromkeys(pc["class"]))
        width = 0.8 / max(1, len(runs))
        fig, ax = plt.subplots(figsize=(max(6.4, 0.35 * len(classes) * max(1, len(runs)) ** 0.5 + 2), 4.8))
        x = np.arange(len(classes))
        hatches = ["", "//", "..", "xx", "\\\\", "++", "oo"]
        for i, r in enumerate(runs):
            sub = pc[pc["run"] == r].set_index("class").reindex(classes)
            ax.bar(x + i * width - 0.4 + width / 2, sub[report.sort], width, label=r, color=st[r]["color"], hatch=hatches[i % 7], edgecolor="black", linewidth=0.3)
        ax.set_xticks(x, [str(c) for c in classes], rotation=60, ha="right", fontsize=7)
        ax.set(ylabel=DISPLAY.get(report.sort, report.sort), title=f"{DISPLAY.get(report.sort, report.sort)} per class")
        ax.legend(fontsize=7, ncol=ncol)
        safe = "".join(c if c.isalnum() else "_" for c in report.sort)
        written += _save(fig, out_dir, f"per_class_{safe}")
        plt.close(fig)
    return written


__all__ = ["write_plots", "styles", "INSTALL_HINT"]
