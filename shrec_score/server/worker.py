"""One scoring in a child process: ``python -m shrec_score.server.worker --cpu SECONDS --memory MB
[--parent PID] PRESET RUN OUT`` sets its CPU-time and address-space limits (they hold across
``exec``), asks to die with the server (Linux's ``PR_SET_PDEATHSIG``: no orphan scoring writes while
a restarted server recovers) and becomes ``shrec-score score --config PRESET RUN --out OUT``: a
contest's numbers are the CLI's by construction.  Exit status: the CLI's; killed by SIGXCPU or
SIGKILL past the CPU time.  The wall-clock limit is :mod:`.jobs`'.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import signal
import sys


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m shrec_score.server.worker")
    parser.add_argument("--cpu", type=int, required=True, help="CPU seconds")
    parser.add_argument("--memory", type=int, required=True, help="MB of address space")
    parser.add_argument("--parent", type=int, help="the server's pid: die with it (Linux)")
    parser.add_argument("preset")
    parser.add_argument("run")
    parser.add_argument("out")
    args = parser.parse_args(argv)
    if args.parent is not None:  # SIGKILL this process when the server dies (Linux's prctl; elsewhere nothing)
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
        else:
            if os.getppid() != args.parent:  # the server died before the prctl
                sys.exit(1)
    resource.setrlimit(resource.RLIMIT_CPU, (args.cpu, args.cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (args.memory << 20, args.memory << 20))
    cmd = [sys.executable, "-m", "shrec_score.cli", "score", "--config", args.preset, args.run, "--out", args.out,
           "--quiet", "--format", "csv"]
    sys.stdout.flush()
    os.execv(cmd[0], cmd)


if __name__ == "__main__":
    main()
