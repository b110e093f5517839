"""SIGINT and SIGTERM for the command line: exit 130 / 143, one line, no output published; in :data:`THREADED`
code the handler only records the signal (why: docs/scale-out.md#failures-and-interruptions)."""

from __future__ import annotations

import logging
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from traceback import walk_stack
from types import FrameType
from typing import Any

#: Top-level packages whose code, running in the main thread, shares locks with their own threads.
THREADED = frozenset({"distributed", "tornado", "asyncio", "threading", "queue", "concurrent"})


class Stopped(BaseException):
    """SIGINT or SIGTERM, raised in the main thread so that every ``finally`` runs; no KeyboardInterrupt,
    so that neither ``except Exception`` nor click's Ctrl-C handling ("Aborted!", exit 1) catches it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class Interrupts:
    """The handlers of one call of the command line (installed from the main thread only, with a filter of
    ``sys.unraisablehook``, all put back on leaving) and ``signum``, the first signal received.  A later signal
    raises only if the last raise was swallowed (a second Ctrl-C must not break the first's clean-up)."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._previous: dict[int, Any] = {}
        self._swallowed = False

    def __enter__(self) -> Interrupts:
        with suppress(ValueError):  # not the main thread: the caller's handlers stay
            for sig in (signal.SIGINT, signal.SIGTERM):
                if signal.getsignal(sig) is not signal.SIG_IGN:  # ignored (a background job, nohup): stays so
                    self._previous[sig] = signal.signal(sig, self._handle)
        self._hook, sys.unraisablehook = sys.unraisablehook, self._unraisable
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        if sys.unraisablehook == self._unraisable:
            sys.unraisablehook = self._hook

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        first = self.signum is None
        self.signum = self.signum or signum
        stack = [] if frame is None else walk_stack(frame)  # the main thread inside a THREADED package's code?
        threaded = any(str(f.f_globals.get("__name__", "")).partition(".")[0] in THREADED for f, _ in stack)
        if (first or self._swallowed) and not threaded:
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


@contextmanager
def quiet_dask_logs() -> Iterator[None]:
    """Logging off for the block (``logging.disable``, undone after; no logger's level changes): the tool
    says what failed in one line, where distributed, tornado and asyncio would log hundreds."""
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        yield
    finally:
        logging.disable(previous)
