"""SIGINT and SIGTERM for the command line: exit 130 / 143, one line, no output published.

The library installs no handler; :func:`shrec_score.cli.main` installs these
for the call only.  A signal's handler runs in the main thread, between two
bytecodes of whatever that thread is running, which may be a place that
swallows exceptions: a ``gc`` callback (distributed registers one while a
scheduler lives in the process), a ``__del__`` method, a weakref callback,
or library code that catches every exception.  So the handler both raises
:class:`Stopped` (the fast way out, through every ``finally``) and records
the signal; the command checks the record (:meth:`Interrupts.check`) where
nothing swallows it: on every progress report and before an output folder
is published, and :func:`~shrec_score.cli.main` checks it once more on the
way out.  A swallowed :class:`Stopped` is not reported as "Exception
ignored" (its traceback would be many lines).
"""

from __future__ import annotations

import logging
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType, TracebackType
from typing import Any


class Stopped(BaseException):
    """SIGINT or SIGTERM, raised in the main thread so that every ``finally``
    and ``with`` block runs on the way out (workers stopped, staging folders
    removed, the terminal's cursor restored).  A BaseException, and not a
    KeyboardInterrupt, so that no ``except Exception`` and not click's own
    Ctrl-C handling ("Aborted!", exit 1) catches it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class Interrupts:
    """The handlers of one call of the command line, and the signal they got.

    ``with Interrupts() as stops:`` installs the SIGINT / SIGTERM handlers
    (from the main thread; elsewhere the caller's stay) and a filter of
    ``sys.unraisablehook``; both are put back on leaving.  ``stops.signum``
    is the first signal received (None before).  The first signal raises
    :class:`Stopped`; a later one raises only if Python reported the last
    raise swallowed (a second Ctrl-C must not break the clean-up of the
    first).
    """

    def __init__(self) -> None:
        self.signum: int | None = None
        self._previous: dict[int, Any] = {}
        self._hook: Any = None
        self._swallowed = False

    def __enter__(self) -> Interrupts:
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                self._previous[sig] = signal.signal(sig, self._handle)
            except ValueError:  # not the main thread: the caller's handlers stay
                break
        self._hook = sys.unraisablehook
        sys.unraisablehook = self._unraisable
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        if sys.unraisablehook == self._unraisable:
            sys.unraisablehook = self._hook

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is None or self._swallowed:
            self.signum = self.signum or signum
            self._swallowed = False
            raise Stopped(self.signum)

    def _unraisable(self, info: Any) -> None:
        if isinstance(info.exc_value, Stopped):  # ours: recorded in signum, acted on by check()
            self._swallowed = True
        else:
            self._hook(info)

    def check(self) -> None:
        """Raise :class:`Stopped` if a signal came (its first raise may have been swallowed)."""
        if self.signum is not None:
            raise Stopped(self.signum)


#: Loggers of distributed and of the event loops it runs, silenced by :func:`quiet_dask_logs`.
DASK_LOGGERS = ("distributed", "tornado", "asyncio", "bokeh")


@contextmanager
def quiet_dask_logs() -> Iterator[None]:
    """distributed's loggers (and tornado's and asyncio's, whose loops it
    runs) silent for the block, their levels put back after.  On a cluster
    the tool's own messages say what failed in one line; distributed's logs
    of a worker lost, a connection closed by Ctrl-C or a task cancelled would
    add dozens to hundreds of lines.  distributed is imported first: its
    import sets its loggers' levels (from dask's config), which must not undo
    these."""
    import distributed  # noqa: F401  (configures its loggers)

    names = [n for n in list(logging.root.manager.loggerDict) if n.split(".")[0] in DASK_LOGGERS]
    loggers = [logging.getLogger(n) for n in {*DASK_LOGGERS, *names}]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)
