"""SIGINT and SIGTERM for the command line: exit 130 / 143, one line, no output published.

The handler runs between two bytecodes of the main thread, maybe where an exception is swallowed (a ``gc``
callback as distributed registers, a ``__del__``, code that catches everything).  So it both raises
:class:`Stopped` and records the signal, which the command checks where nothing swallows it
(:meth:`Interrupts.check`: every progress report, before publishing, on the way out of ``main``).
Around code that waits on other threads (distributed's client) the handler only records the signal
(:meth:`Interrupts.held`): an exception raised there between two bytecodes can leave a lock held, and the
process waiting for it forever.
"""

from __future__ import annotations

import logging
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any


class Stopped(BaseException):
    """SIGINT or SIGTERM, raised in the main thread so that every ``finally`` runs; no KeyboardInterrupt,
    so that neither ``except Exception`` nor click's Ctrl-C handling ("Aborted!", exit 1) catches it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class Interrupts:
    """The handlers of one call of the command line (installed from the main thread only, with a filter
    of ``sys.unraisablehook``, all put back on leaving) and ``signum``, the first signal received.  A
    later signal raises only if the last raise was swallowed (a second Ctrl-C must not break the first's
    clean-up)."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._previous: dict[int, Any] = {}
        self._swallowed = False
        self._held = False

    def __enter__(self) -> Interrupts:
        for sig in (signal.SIGINT, signal.SIGTERM):
            if signal.getsignal(sig) is signal.SIG_IGN:  # ignored by whoever started us (a background job, nohup): stays so, as Python leaves it
                continue
            try:
                self._previous[sig] = signal.signal(sig, self._handle)
            except ValueError:  # not the main thread: the caller's handlers stay
                break
        self._hook = sys.unraisablehook
        sys.unraisablehook = self._unraisable
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        if sys.unraisablehook == self._unraisable:
            sys.unraisablehook = self._hook

    @contextmanager
    def held(self) -> Iterator[None]:
        """Within the block a signal is only recorded, for the next :meth:`check` to raise: the block's
        code must call it often (the cluster's wait reports progress every 0.1 s)."""
        self._held = True
        try:
            yield
        finally:
            self._held = False

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        first = self.signum is None
        self.signum = self.signum or signum  # held: only recorded
        if not self._held and (first or self._swallowed):
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
    """distributed's loggers (and those of the loops it runs) silent for the block, their levels put back
    after: the tool says what failed in one line, where distributed would log hundreds.  distributed is
    imported first (its import sets its loggers' levels, which must not undo these)."""
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
