"""The scoring queue: one run at a time, scored by the CLI in a child process under limits (docs/server.md)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import sys
from typing import Any

from .contest import Contest, stamp
from .store import Store


async def score_forever(contest: Contest, store: Store, wake: asyncio.Event) -> None:
    """Take the queued runs of ``store`` in order and score each (``wake``: a run was queued)."""
    while True:
        wake.clear()  # before the look: a run queued while it looks wakes the wait below
        job = await asyncio.to_thread(store.next_queued)
        if job is None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(wake.wait(), timeout=5)
            continue
        try:
            await asyncio.to_thread(store.finish, job["id"], stamp(), **await _score(contest, store, job))
        except Exception as exc:  # a bug or the disk, not the run: say so on the run, keep the queue going
            reason = f"internal error while scoring: {type(exc).__name__}: {exc}"[:500]
            await asyncio.to_thread(store.finish, job["id"], stamp(), reason=reason)
            await asyncio.sleep(1)


async def _score(contest: Contest, store: Store, job: dict[str, Any]) -> dict[str, str]:
    """The run's scores (``per_run``) or why it has none (``reason``)."""
    limits = contest.limits
    out = os.path.join(store.work, f"{job['id']}-{secrets.token_hex(4)}")
    run = store.run_path(job)
    args = (str(int(limits["cpu_seconds"])), str(int(limits["memory_mb"])), str(os.getpid()), contest.preset, run, out)
    cmd = [sys.executable, "-m", "shrec_score.server.jobs", *args]
    proc = await asyncio.create_subprocess_exec(*cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    wall = limits["wall_seconds"]
    try:
        _, err = await asyncio.wait_for(proc.communicate(), timeout=wall)
        if proc.returncode == 0:
            with open(os.path.join(out, "per_run.csv"), encoding="utf-8") as f:
                return {"per_run": f.read()}
    except BaseException as exc:  # past the wall-clock limit, or cancelled (the server stops: the run stays queued)
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        if not isinstance(exc, asyncio.TimeoutError):
            raise
        return {"reason": f"stopped at the wall-clock limit of {wall:g} s"}
    finally:
        shutil.rmtree(out, ignore_errors=True)  # before the commit: a scored run leaves nothing in work/
    if proc.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        return {"reason": f"stopped at the CPU-time limit of {limits['cpu_seconds']:g} s"}
    lines = [ln for ln in err.decode("utf-8", "replace").splitlines() if ln.strip()]
    text = lines[-1] if lines else f"the scoring ended with status {proc.returncode}"
    return {"reason": text.replace(os.path.dirname(run) + os.sep, "").replace(run, job["label"])[:500]}  # no server path shown


if __name__ == "__main__":  # the child: limits set (they hold across exec), dies with the server, becomes the CLI
    import ctypes
    import resource

    cpu, memory, parent, preset, run, out = sys.argv[1:]
    with contextlib.suppress(OSError, AttributeError):  # SIGKILL when the server dies (Linux; elsewhere nothing)
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: no orphan writes
        if os.getppid() != int(parent):  # the server died before the prctl
            sys.exit(1)
    resource.setrlimit(resource.RLIMIT_CPU, (int(cpu), int(cpu) + 1))  # past it: SIGXCPU, a second later SIGKILL
    resource.setrlimit(resource.RLIMIT_AS, (int(memory) << 20, int(memory) << 20))
    cmd = [sys.executable, "-m", "shrec_score.cli", "score", "--config", preset, run, "--out", out, "--quiet", "--format", "csv"]
    os.execv(cmd[0], cmd)
