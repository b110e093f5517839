"""One scoring in a child process: ``python -m shrec_score.server.worker CPU_SECONDS MEMORY_MB SERVER_PID
PRESET RUN OUT`` (:mod:`.jobs` starts it) sets its CPU-time and address-space limits (they hold across
``exec``), asks to die with the server (Linux's ``PR_SET_PDEATHSIG``: no orphan scoring writes while a
restarted server recovers) and becomes ``shrec-score score --config PRESET RUN --out OUT``: a contest's
numbers are the CLI's by construction.  Exit status: the CLI's; killed by SIGXCPU or SIGKILL past the CPU
time.  The wall-clock limit is :mod:`.jobs`'.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys


def main(argv: list[str] | None = None) -> None:
    cpu, memory, parent, preset, run, out = sys.argv[1:] if argv is None else argv
    try:  # SIGKILL this process when the server dies (Linux's prctl; elsewhere nothing)
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    else:
        if os.getppid() != int(parent):  # the server died before the prctl
            sys.exit(1)
    resource.setrlimit(resource.RLIMIT_CPU, (int(cpu), int(cpu) + 1))
    resource.setrlimit(resource.RLIMIT_AS, (int(memory) << 20, int(memory) << 20))
    cmd = [sys.executable, "-m", "shrec_score.cli", "score", "--config", preset, run, "--out", out, "--quiet", "--format", "csv"]
    sys.stdout.flush()
    os.execv(cmd[0], cmd)


if __name__ == "__main__":
    main()
