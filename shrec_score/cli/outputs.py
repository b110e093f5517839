"""Where a scoring goes: the report on stdout (:func:`render`), the ``--out``, ``--plots`` and ``--html``
folders as one transaction (:class:`Outputs`; folders that conflict are an OptionError before any input is
read) and the progress bar on stderr (:class:`ProgressBar`).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import click

from ..errors import OptionError

if TYPE_CHECKING:
    from ..report import Report


def format_option(*choices: str) -> Callable[[Any], Any]:
    """``--format``: one of ``choices``, or ``auto`` (the command sees ``table`` or ``csv``)."""
    return click.option("--format", "fmt", type=click.Choice(["auto", *choices]), default="auto", show_default=True,
                        callback=lambda ctx, param, fmt: ("table" if sys.stdout.isatty() else "csv") if fmt == "auto" else fmt,
                        help="auto = a table on a terminal, CSV otherwise.")


#: The ``--format`` of a report (``score``, ``demo``).
REPORT_FORMAT = format_option("table", "csv", "json", "markdown", "latex", "trec")


def _inside(path: str, folder: str) -> bool:
    a, b = os.path.realpath(path), os.path.realpath(folder)
    return a == b or a.startswith(b + os.sep)


def prefix_in(out: str, folder: str, flag: str) -> str | None:
    """Where ``folder`` lies inside ``out`` ("" for ``out`` itself, "sub/" for a sub-folder; written in the
    same transaction), None when apart; OptionError when ``out`` lies inside ``folder``."""
    rel = os.path.relpath(os.path.realpath(folder), os.path.realpath(out))
    if rel == os.curdir:
        return ""
    if not rel.startswith(os.pardir):
        return rel.replace(os.sep, "/") + "/"
    if not os.path.relpath(os.path.realpath(out), os.path.realpath(folder)).startswith(os.pardir):
        raise OptionError(f"{out}: expected --out apart from {flag} {folder} or holding it, not inside it")
    return None


class Outputs:
    """``--out``, ``--plots`` and ``--html`` as transactions (:mod:`shrec_score.outdir`), locked on entry and
    replaced together by :meth:`commit`, all or none; a folder inside ``--out`` is part of its unit (the
    page then links the CSV files)."""

    def __init__(
        self, runs: Sequence[str], out: str | None, plots: str | None, html: str | None = None, page: dict[str, Any] | None = None
    ) -> None:
        from ..outdir import OutputFolder

        self.page = page or {}
        for flag, folder in (("--out", out), ("--plots", plots), ("--html", html)):
            for run in runs:
                if folder is not None and os.path.isdir(run) and _inside(folder, run):
                    raise OptionError(f"{folder}: expected a {flag} folder outside RUNS ({run}); the next scoring would read it as a run")
        self.plots_prefix = prefix_in(out, plots, "--plots") if out and plots else None
        self.html_prefix = prefix_in(out, html, "--html") if out and html else None
        apart = self.html_prefix is None and self.plots_prefix is None
        if html and plots and apart and (_inside(html, plots) or _inside(plots, html)):
            raise OptionError(f"{html}: expected --html apart from --plots {plots} (or both inside --out)")
        self.out = OutputFolder(out) if out else None
        self.plots = OutputFolder(plots) if plots and self.plots_prefix is None else None
        self.html = OutputFolder(html) if html and self.html_prefix is None else None
        self.folders = [f for f in (self.out, self.plots, self.html) if f is not None]
        self.want_plots, self.want_html = bool(plots), bool(html)

    def __enter__(self) -> Outputs:
        from contextlib import ExitStack

        with ExitStack() as stack:
            for folder in self.folders:
                stack.enter_context(folder)
            self.stack = stack.pop_all()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stack.__exit__(*exc)

    def commit(self, report: Any) -> None:
        """Write the report's files into every folder, all or none (issue 30.13)."""
        import warnings

        from ..outdir import commit_together

        with warnings.catch_warnings(record=True) as caught:  # the figures' warnings join the report's (one line each; none with --quiet)
            warnings.simplefilter("always")
            figures: dict[str, bytes] = {}
            if self.want_plots:
                from ..plots import plot_files

                figures = plot_files(report)
            csv = report.csv_files() if self.out is not None else {}
            pages: dict[str, str] = {}
            if self.want_html:
                from ..html import html_files

                links = None
                if self.html_prefix is not None:  # the CSV files are written beside the page
                    links = {name: "../" * self.html_prefix.count("/") + name for name in csv}
                pages = html_files(
                    report, title=self.page.get("title"), description=self.page.get("description"),
                    figures=figures if self.want_plots else None, links=links,
                )
            places: list[tuple[Any, str | None, dict[str, Any]]] = [
                (self.plots, "", figures),
                (self.html, "", pages),
                (self.out, "", csv),
                (self.out, self.plots_prefix, figures),
                (self.out, self.html_prefix, pages),
            ]
            for folder, prefix, files in places:
                if folder is not None and prefix is not None:
                    for name, data in files.items():
                        folder.add(prefix + name, data)
            commit_together(self.folders)
        report.warnings.extend(str(w.message) for w in caught)


def render(report: Report, fmt: str, per_query: bool, quiet: bool) -> None:
    from ..render import FORMATS, to_rich

    if not quiet:
        for w in report.warnings:  # notes carry their own "note: " prefix (api._warnings)
            click.echo(w if w.startswith("note: ") else f"warning: {w}", err=True)
    if fmt == "table":
        from rich.console import Console

        to_rich(report, Console() if sys.stdout.isatty() else Console(width=160), per_query=per_query)
    else:
        click.echo(FORMATS[fmt](report, per_query=per_query), nl=False)


class ProgressBar:
    """A rich progress bar on stderr that appears only when the work lasts more than a second, and never
    when stderr is not a terminal or --quiet."""

    DELAY = 1.0

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.started = time.monotonic()
        self.bar: Any = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.enabled or self.bar is None and (time.monotonic() - self.started < self.DELAY or done >= total):
            return
        if self.bar is None:
            from rich.console import Console
            from rich.progress import Progress

            self.bar = Progress(console=Console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task(stage, total=total)
        self.bar.update(self.task, completed=done, total=total, description=f"{stage} runs")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
