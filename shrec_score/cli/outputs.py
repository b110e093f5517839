"""Where a scoring goes: the report on stdout (:func:`render`), the ``--out``,
``--plots`` and ``--html`` folders as one transaction (:class:`Outputs`; folders
that conflict are an OptionError before any input is read) and the progress
bar on stderr (:class:`ProgressBar`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from ..errors import OptionError

if TYPE_CHECKING:
    from ..report import Report


def html_folder(given: str | bool | None, out: str | None, flag: str = "html") -> str | None:
    """The ``--html`` (or ``--plots``) folder: as given, or ``--out DIR/report``
    (``DIR/plots``) for the flag alone (``""``, YAML ``html: true``); None for none (YAML ``false``)."""
    if given is None or given is False:
        return None
    if given is True or given == "":
        sub = "report" if flag == "html" else flag
        if not out:
            raise click.UsageError(f"--{flag} without a folder writes under --out DIR/{sub}/: expected --out DIR (or --{flag} DIR)")
        return os.path.join(out, sub)
    return str(given)


def page_date() -> str:
    """Today (UTC), or the day of SOURCE_DATE_EPOCH when set (reproducible pages)."""
    import datetime

    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    when = datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc) if epoch.isdigit() else datetime.datetime.now(datetime.timezone.utc)
    return when.date().isoformat()


def prefix_in(out: str, folder: str, flag: str) -> str | None:
    """Where ``folder`` lies inside ``out`` ("" for ``out`` itself, "sub/" for
    a sub-folder; written in the same transaction), None when apart;
    OptionError when ``out`` lies inside ``folder``."""
    rel = os.path.relpath(os.path.realpath(folder), os.path.realpath(out))
    if rel == os.curdir:
        return ""
    if not rel.startswith(os.pardir):
        return rel.replace(os.sep, "/") + "/"
    if not os.path.relpath(os.path.realpath(out), os.path.realpath(folder)).startswith(os.pardir):
        raise OptionError(f"{out}: expected --out apart from {flag} {folder} or holding it, not inside it")
    return None


class Outputs:
    """``--out``, ``--plots`` and ``--html`` as transactions (:mod:`shrec_score.outdir`),
    locked on entry and replaced together by :meth:`commit`, all or none; a folder
    inside ``--out`` is part of its unit (the page then links the CSV files)."""

    def __init__(
        self, runs: Sequence[str], out: str | None, plots: str | None, html: str | None = None, page: dict[str, Any] | None = None
    ) -> None:
        from ..outdir import OutputFolder

        self.plots_prefix: str | None = None
        self.html_prefix: str | None = None
        self.page = page or {}
        for flag, folder in (("--out", out), ("--plots", plots), ("--html", html)):
            if folder is None:
                continue
            real = os.path.realpath(folder)
            for run in runs:
                top = os.path.realpath(run)
                if os.path.isdir(top) and (real == top or real.startswith(top + os.sep)):
                    raise OptionError(f"{folder}: expected a {flag} folder outside RUNS ({run}); the next scoring would read it as a run")
        if out and plots:
            self.plots_prefix = prefix_in(out, plots, "--plots")
        if out and html:
            self.html_prefix = prefix_in(out, html, "--html")
        if html and plots and self.html_prefix is None and self.plots_prefix is None:
            a, b = os.path.realpath(html), os.path.realpath(plots)
            if a == b or a.startswith(b + os.sep) or b.startswith(a + os.sep):
                raise OptionError(f"{html}: expected --html apart from --plots {plots} (or both inside --out)")
        self.out = OutputFolder(out) if out else None
        self.plots = OutputFolder(plots) if plots and self.plots_prefix is None else None
        self.html = OutputFolder(html) if html and self.html_prefix is None else None
        self.want_plots = bool(plots)
        self.want_html = bool(html)

    def __enter__(self) -> Outputs:
        from contextlib import ExitStack

        self.stack = ExitStack()
        with self.stack as stack:
            for folder in (self.out, self.plots, self.html):
                if folder is not None:
                    stack.enter_context(folder)
            self.stack = stack.pop_all()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stack.__exit__(*exc)

    def commit(self, report: Any) -> None:
        import warnings

        with warnings.catch_warnings(record=True) as caught:  # the figures' warnings join the report's (one line each; none with --quiet)
            warnings.simplefilter("always")
            self._commit(report)
        report.warnings.extend(str(w.message) for w in caught)

    def _commit(self, report: Any) -> None:
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
                up = "../" * self.html_prefix.count("/")
                links = {name: up + name for name in csv}
            pages = html_files(report, title=self.page.get("title"), description=self.page.get("description"), date=page_date(), figures=figures if self.want_plots else None, links=links)
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
        from ..outdir import commit_together

        # every folder of one scoring, or none (issue 30.13)
        commit_together([f for f in (self.out, self.plots, self.html) if f is not None])


def render(report: Report, fmt: str, per_query: bool, quiet: bool) -> None:
    from ..render import FORMATS, render_table

    if not quiet:
        for w in report.warnings:  # notes carry their own "note: " prefix (api._warnings)
            click.echo(w if w.startswith("note: ") else f"warning: {w}", err=True)
    if fmt == "auto":
        fmt = "table" if sys.stdout.isatty() else "csv"
    if fmt == "table":
        from rich.console import Console

        render_table(report, Console() if sys.stdout.isatty() else Console(width=160), per_query)
    else:
        click.echo(FORMATS[fmt](report, per_query=per_query), nl=False)


class ProgressBar:
    """A rich progress bar on stderr that appears only when the work lasts
    more than a second, and never when stderr is not a terminal or --quiet."""

    DELAY = 1.0

    def __init__(self, enabled: bool) -> None:
        import time

        self.enabled = enabled
        self.started = time.monotonic()
        self.bar: Any = None
        self.task: Any = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        import time

        if not self.enabled:
            return
        if self.bar is None:
            if time.monotonic() - self.started < self.DELAY or done >= total:
                return
            from rich.console import Console
            from rich.progress import Progress

            self.bar = Progress(console=Console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task(stage, total=total)
        self.bar.update(self.task, completed=done, total=total, description=f"{stage} runs")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
