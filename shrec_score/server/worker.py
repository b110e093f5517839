"""One scoring in a child process, under limits: ``python -m shrec_score.server.worker
--cpu SECONDS --memory MB PRESET RUN OUT``.

The worker sets its own CPU-time and address-space limits
(``resource.setrlimit``: they hold across ``exec``), then becomes the
command line itself, ``python -m shrec_score.cli score --config PRESET RUN
--out OUT`` (``os.execv``): the numbers a contest shows are the CLI's, on
the same preset, by construction.  The wall-clock limit is the parent's
(:mod:`~shrec_score.server.queue` kills a worker that outlives it).

On Linux the worker also asks to be killed when the server dies
(``PR_SET_PDEATHSIG``, kept across ``exec``): after a kill -9 of the server no
orphan scoring goes on writing while the restarted server recovers its folders.

Exit status: the CLI's (0 scored, 2 the run or the limits refused it); killed
by SIGXCPU or SIGKILL when the CPU time ran out.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys


def command(preset: str, run: str, out: str) -> list[str]:
    """The command line the worker becomes."""
    return [sys.executable, "-m", "shrec_score.cli", "score", "--config", preset, run, "--out", out, "--quiet", "--format", "csv"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m shrec_score.server.worker")
    parser.add_argument("--cpu", type=int, required=True, help="CPU seconds")
    parser.add_argument("--memory", type=int, required=True, help="MB of address space")
    parser.add_argument("--parent", type=int, help="the server's pid: die with it (Linux)")
    parser.add_argument("preset")
    parser.add_argument("run")
    parser.add_argument("out")
    args = parser.parse_args(argv)
    if args.parent is not None:
        _die_with(args.parent)
    resource.setrlimit(resource.RLIMIT_CPU, (args.cpu, args.cpu + 1))
    memory = args.memory << 20
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    cmd = command(args.preset, args.run, args.out)
    sys.stdout.flush()
    os.execv(cmd[0], cmd)


def _die_with(parent: int) -> None:
    """SIGKILL this process when its parent dies (Linux's prctl; elsewhere nothing)."""
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the prctl
        sys.exit(1)


if __name__ == "__main__":
    main()
