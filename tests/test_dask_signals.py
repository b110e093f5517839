"""Ctrl-C and SIGTERM during ``--dask local:2`` (issue 30.14): exit 130 / 143,
the one line ``shrec-score: interrupted`` on stderr (no log of distributed's,
no worker's traceback), no --out folder, no worker left, every time.

The CLI runs in a subprocess whose progress reports (after the CLI's own
callback, which is what is tested) also write one byte to a pipe: the test
waits for the first task's report on that pipe, not for a guessed time, then
waits a different short moment in each round (the last report is held until
the signal comes: on a loaded machine the scoring could otherwise end first,
and a signal after the command has returned finds Python's own handlers) (so that the signal falls at
different points of the run: between tasks, while results come back, while
the last ones finish) and sends the signal.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from .conftest import alive, children_of, foreground_job

pytest.importorskip("distributed")

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to find the worker processes")

#: The CLI, with its ProgressBar also writing a byte to fd MARK_FD once a task has come back.
CODE = """
import faulthandler, os, signal, sys, time
faulthandler.register(signal.SIGUSR1, all_threads=True)  # the test's dump of every thread if the CLI hangs
from shrec_score.cli import main, outputs
fd = int(os.environ["MARK_FD"])
real = outputs.ProgressBar.__call__
marked = []
def report(self, stage, done, total):
    if done >= 1 and not marked:  # once: the test closes its end of the pipe after one byte
        marked.append(os.write(fd, b"x"))
    real(self, stage, done, total)
    if done == total:  # the last report waits for the signal: it always falls while the scoring runs
        import click
        from shrec_score.cli.signals import Interrupts
        stops = click.get_current_context().find_object(Interrupts)
        for _ in range(2400):  # checked as each progress report checks it (a raise may have been swallowed)
            time.sleep(0.05)
            stops.check()
outputs.ProgressBar.__call__ = report
sys.argv[0] = "shrec-score"
main()
"""
#: Seconds waited after the first task's report, one per round.
PAUSES = [0.0, 0.3, 1.0]


@pytest.fixture(scope="module")
def contest(tmp_path_factory):
    """2,000 models in 20 classes, a float32 matrix in 100 shards of 20 rows: a few seconds of tasks."""
    from shrec_score.cli import main

    top = tmp_path_factory.mktemp("dask-signals")
    rng = np.random.default_rng(14)
    n = 2000
    labels = rng.integers(0, 20, n)
    lines = ["PSB 1", f"20 {n}"]
    for c in range(20):
        members = np.flatnonzero(labels == c)
        lines += ["", f"c{c} 0 {members.size}", *[f"m{k}" for k in members]]
    (top / "classes.cla").write_text("\n".join(lines) + "\n")
    np.save(top / "run.npy", rng.random((n, n)).astype(np.float32))
    with pytest.raises(SystemExit) as done:
        main(["convert", str(top / "run.npy"), str(top / "run"), "--to", "npy-shards", "--chunk-rows", "20"])
    assert done.value.code == 0
    return top




@pytest.mark.parametrize(("how", "status"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_signal_during_dask_ends_with_its_status_and_one_line_every_time(contest, tmp_path, how, status):
    seen = []
    for k, pause in enumerate(PAUSES):
        out = tmp_path / f"out{k}"
        mark, mark_w = os.pipe()
        proc = subprocess.Popen(
            [sys.executable, "-c", CODE, str(contest / "run"), "-r", str(contest / "classes.cla"), "--dask", "local:2", "--out", str(out), "--quiet"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group, as a shell job is
            preexec_fn=foreground_job,
            pass_fds=(mark_w,),
            env={**os.environ, "MARK_FD": str(mark_w)},
        )
        os.close(mark_w)
        try:
            first = os.read(mark, 1)  # the first task has come back (b"" if the CLI ended first)
        finally:
            os.close(mark)
        assert first == b"x", proc.communicate(timeout=60)
        time.sleep(pause)
        workers = children_of(proc.pid)
        if how == "SIGINT":
            os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole foreground group: the workers too
        else:
            os.kill(proc.pid, signal.SIGTERM)  # kill PID reaches the tool only
        try:
            stdout, stderr = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:  # say where it hangs: every thread's stack
            os.kill(proc.pid, signal.SIGUSR1)
            time.sleep(2)
            os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail(f"round {k} (pause {pause}): no exit 60 s after {how}; stacks:\n{proc.communicate()[1]}")
        seen.append((proc.returncode, stderr, stdout, out.exists()))
        deadline = time.monotonic() + 10
        while any(alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [w for w in workers if alive(w)] == [], f"round {k}: workers left"
        assert [n for n in os.listdir(tmp_path) if ".shrec-score-" in n] == []
    assert seen == [(status, "shrec-score: interrupted\n", "", False)] * len(PAUSES)
