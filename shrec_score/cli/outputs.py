"""Where a scoring goes: the report on stdout, the output folders and the progress bar on stderr."""

from __future__ import annotations

import os
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
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


@contextmanager
def outputs(
    runs: Sequence[str], out: str | None, plots: str | None, html: str | None, page: dict[str, Any]
) -> Iterator[Callable[[Report], None]]:
    """``--out``, ``--plots``, ``--html`` as transactions (:mod:`shrec_score.outdir`) locked on entry (conflicts: an
    OptionError before any input is read); what it yields writes a report's files into all or none; a folder inside
    ``--out`` is part of its unit (the page then links the CSV files).  ``page``: the page's title and description."""
    from ..outdir import OutputFolder

    for flag, folder in (("--out", out), ("--plots", plots), ("--html", html)):
        for run in runs:
            if folder is not None and os.path.isdir(run) and _inside(folder, run):
                raise OptionError(f"{folder}: expected a {flag} folder outside RUNS ({run}); the next scoring would read it as a run")
    unit = OutputFolder(out) if out else None  # (nothing touched before entry)
    where: dict[str, tuple[Any, str]] = {"csv": (unit, "")} if out else {}  # kind -> folder, prefix
    for kind, folder in (("plots", plots), ("html", html)):
        if not folder:
            continue
        if out and _inside(folder, out):  # written in the --out unit, under its path there ("" or "sub/")
            rel = os.path.relpath(os.path.realpath(folder), os.path.realpath(out))
            where[kind] = (unit, "" if rel == os.curdir else rel.replace(os.sep, "/") + "/")
        elif out and _inside(out, folder):
            raise OptionError(f"{out}: expected --out apart from --{kind} {folder} or holding it, not inside it")
        else:
            where[kind] = (OutputFolder(folder), "")
    if html and plots and unit not in (where["html"][0], where["plots"][0]):  # neither inside --out
        if _inside(html, plots) or _inside(plots, html):
            raise OptionError(f"{html}: expected --html apart from --plots {plots} (or both inside --out)")
    with ExitStack() as stack:
        folders = [stack.enter_context(folder) for folder in dict.fromkeys(folder for folder, _ in where.values())]
        yield lambda report: _commit(report, where, folders, page)


def _commit(report: Report, where: dict[str, Any], folders: list[Any], page: dict[str, Any]) -> None:
    """Write the report's files where :func:`outputs` put each kind, all or none (issue 30.13)."""
    from ..outdir import commit_together

    with warnings.catch_warnings(record=True) as caught:  # the figures' warnings join the report's (one line each; none with --quiet)
        warnings.simplefilter("always")
        files: dict[str, dict[str, Any]] = {"csv": report.csv_files() if "csv" in where else {}}
        if "plots" in where:
            from ..plots import plot_files

            files["plots"] = plot_files(report)
        if "html" in where:
            from ..html import to_html

            folder, prefix = where["html"]
            beside = "csv" in where and folder is where["csv"][0]  # the CSV files are written beside the page
            links = {name: "../" * prefix.count("/") + name for name in files["csv"]} if beside else None
            files["html"] = {"index.html": to_html(report, figures=files.get("plots"), links=links, **page)}
        for kind, (folder, prefix) in where.items():
            for name, data in files[kind].items():
                folder.add(prefix + name, data)
        commit_together(folders)
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
    """A rich progress bar on stderr, shown once the work lasts :attr:`DELAY` seconds (never with --quiet or stderr
    not a terminal: ``enabled``); each step first calls ``check`` (a signal a library swallowed ends the work there)."""

    DELAY = 1.0

    def __init__(self, enabled: bool, check: Callable[[], None] = lambda: None) -> None:
        self.enabled, self.check = enabled, check
        self.started = time.monotonic()
        self.bar: Any = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        self.check()
        if self.bar is None and self.enabled and done < total and time.monotonic() - self.started >= self.DELAY:
            from rich.console import Console
            from rich.progress import Progress

            self.bar = Progress(console=Console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task(stage, total=total)
        if self.bar is not None:
            self.bar.update(self.task, completed=done, total=total, description=f"{stage} runs")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
