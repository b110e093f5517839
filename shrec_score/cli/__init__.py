"""Command line: parse, call one API function, render; no arithmetic here.  :func:`main` runs the click
commands (:mod:`~shrec_score.cli.commands`) under a command-line tool's exit statuses and signal handling."""

from __future__ import annotations

import os
import sys
import traceback

import click

from .commands import cli
from .signals import Interrupts, Stopped


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point (exit statuses: docs/errors.md); leaves through ``SystemExit`` (``atexit`` and
    a caller's ``finally`` run); its SIGINT/SIGTERM handlers (:class:`.signals.Interrupts`) are the call's only."""
    with Interrupts() as stops:
        try:
            try:
                cli.main(args=argv, prog_name="shrec-score", standalone_mode=True, obj=stops)
            except SystemExit:
                stops.check()  # a signal whose first raise was swallowed: 130 / 143 even after a done command
                raise
        except Stopped as stop:
            click.echo("shrec-score: interrupted", err=True)
            sys.exit(128 + stop.signum)
        except MemoryError:
            click.echo("shrec-score: out of memory: the inputs need more memory than this process may use (score fewer runs at a time, or raise the limit)", err=True)
            sys.exit(2)
        except OSError as exc:  # an environment error no reader turned into an InputError: still the user's to fix
            from ..outdir import environment_error

            name = exc.filename if exc.filename is not None else "shrec-score"
            click.echo(str(environment_error(name, exc, doing=None)), err=True)
            sys.exit(2)
        except Exception as exc:  # an internal error: say so in one line
            if os.environ.get("SHREC_SCORE_DEBUG"):
                traceback.print_exc()
            lines = [line.strip() for line in str(exc).splitlines() if line.strip()] or [""]
            said = lines[0] if len(lines) == 1 else f"{lines[0]} ... {lines[-1]}"  # one line: the first and the last
            click.echo(f"shrec-score: internal error: {type(exc).__name__}: {said} "
                       "(please report it; SHREC_SCORE_DEBUG=1 shows the traceback)", err=True)
            sys.exit(1)
