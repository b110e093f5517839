"""Signals: Ctrl-C and SIGTERM end a scoring with 130 / 143, one line, the
previous --out intact and no process left behind (ranked lists are parsed by
threads of the tool's own process, not by forked workers); kill -9 closes the
pipes; two scorings into one folder do not mix."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from .conftest import SAMPLES, alive, children_of, foreground_job

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to see what the tool is doing")

CLI = [sys.executable, "-c", "import sys; from shrec_score.cli import main; sys.argv[0] = 'shrec-score'; main()"]


@pytest.fixture(scope="module")
def contest(tmp_path_factory):
    """4 ranked-list runs, 300 queries x 1,500 targets each (1.8M lines): long enough to be interrupted while it reads."""
    top = tmp_path_factory.mktemp("contest")
    n, per_class = 1500, 50
    ids = [f"m{i:05d}" for i in range(n)]
    lines = ["PSB 1", f"{n // per_class} {n}"]
    for c in range(n // per_class):
        lines += ["", f"class{c} 0 {per_class}", *ids[c * per_class : (c + 1) * per_class]]
    (top / "classes.cla").write_text("\n".join(lines) + "\n")
    queries = ["PSB 1", f"{n // per_class} 300"]  # the first 10 models of every class are the queries
    for c in range(n // per_class):
        queries += ["", f"class{c} 0 10", *ids[c * per_class : c * per_class + 10]]
    (top / "queries.cla").write_text("\n".join(queries) + "\n")
    rng = np.random.default_rng(0)
    for r in range(4):
        run = top / "runs" / f"run{r}"
        run.mkdir(parents=True)
        for q in [ids[c * per_class + i] for c in range(n // per_class) for i in range(10)]:
            order = rng.permutation(n)
            (run / q).write_text("".join(f"{ids[j]} {k}\n" for k, j in enumerate(order)))
    return top




def start(contest, out):
    return subprocess.Popen(
        [*CLI, str(contest / "runs"), "-r", str(contest / "classes.cla"), "-q", str(contest / "queries.cla"), "--out", str(out), "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a shell job is
        preexec_fn=foreground_job,
    )


def wait_for_reading(proc, contest, timeout=20.0):
    """Wait until the tool has a run file open; its child processes then (none expected)."""
    runs = str(contest / "runs")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            fds = os.listdir(f"/proc/{proc.pid}/fd")
            if any(os.readlink(f"/proc/{proc.pid}/fd/{fd}").startswith(runs) for fd in fds):
                return children_of(proc.pid)
        except OSError:
            pass
        if proc.poll() is not None:
            break
        time.sleep(0.002)
    pytest.fail("the scoring never started reading its runs")


def snapshot(folder):
    return {n: (folder / n).read_bytes() for n in sorted(os.listdir(folder))}


@pytest.fixture(scope="module")
def previous(contest, tmp_path_factory):
    """A complete earlier scoring's --out, to check it survives interrupted ones."""
    out = tmp_path_factory.mktemp("results") / "out"
    r = subprocess.run([*CLI, str(contest / "runs"), "-r", str(contest / "classes.cla"), "-q", str(contest / "queries.cla"), "--out", str(out), "--quiet"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return out, snapshot(out)


@pytest.mark.parametrize(("how", "status"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_signal_ends_the_scoring_cleanly(contest, previous, how, status):
    out, before = previous
    proc = start(contest, out)
    kids = wait_for_reading(proc, contest)
    if how == "SIGINT":
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole foreground group
    else:
        os.kill(proc.pid, signal.SIGTERM)  # kill PID reaches the tool only
    stdout, stderr = proc.communicate(timeout=10)  # a $(...) read returns
    assert proc.returncode == status
    assert stderr == "shrec-score: interrupted\n"
    assert stdout == ""
    time.sleep(2)
    assert [k for k in kids if alive(k)] == []
    assert snapshot(out) == before
    assert [n for n in os.listdir(out.parent) if ".shrec-score-" in n] == []


def test_a_sigint_ignored_by_the_parent_stays_ignored(contest, tmp_path):
    """A job a script starts in the background (``shrec-score ... &``) inherits
    SIGINT ignored, so that a Ctrl-C meant for the foreground leaves it alone;
    Python keeps that, and so does the tool: the scoring ends normally with
    exit 0 and its --out, as without the Ctrl-C."""

    def background_job() -> None:
        foreground_job()
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    out = tmp_path / "out"
    proc = subprocess.Popen(
        [*CLI, str(contest / "runs"), "-r", str(contest / "classes.cla"), "-q", str(contest / "queries.cla"), "--out", str(out), "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=background_job,
    )
    wait_for_reading(proc, contest)
    os.killpg(proc.pid, signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert (proc.returncode, stderr) == (0, "")
    assert "per_run.csv" in os.listdir(out)


def test_kill_9_leaves_nothing_behind(contest, tmp_path):
    proc = start(contest, tmp_path / "out")
    kids = wait_for_reading(proc, contest)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=10)  # the pipes close: no child holds them
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline and any(alive(k) for k in kids):
        time.sleep(0.05)
    assert [k for k in kids if alive(k)] == []


def test_two_scorings_into_one_folder_one_waits_for_nothing_and_fails(contest, tmp_path):
    out = tmp_path / "out"
    first = start(contest, out)
    wait_for_reading(first, contest)  # the first holds the folder's lock from before it reads
    # paused while the second starts: the reader is fast enough to finish
    # before a second interpreter has imported, which would leave no lock to meet
    # (the second ends while the first is stopped: it cannot have waited for the lock, no clock needed)
    os.kill(first.pid, signal.SIGSTOP)
    try:
        second = subprocess.run(
            [*CLI, str(contest / "runs"), "-r", str(contest / "classes.cla"), "-q", str(contest / "queries.cla"), "--out", str(out), "--quiet"], capture_output=True, text=True, timeout=60
        )
    finally:
        os.kill(first.pid, signal.SIGCONT)
    assert second.returncode == 2
    assert second.stderr == f"Error: {out}: expected a folder no other scoring is writing; process {first.pid} ({os.path.basename(sys.executable)} -c) is writing it (wait for it to end, or choose another folder)\n"
    _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    # the folder holds exactly the first scoring's set
    written = sorted(n for n in os.listdir(out) if not n.startswith("."))
    assert written == ["leaderboard.md", "leaderboard.tex", "per_class.csv", "per_query.csv", "per_query_ranking.csv", "per_run.csv", "pr_curve.csv", "signature.txt"]


@pytest.mark.parametrize("where", ["gc callback", "__del__"])
@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_swallowed_where_it_was_raised_still_ends_the_scoring(tmp_path, capfd, monkeypatch, default_signals, where, sig, status):
    """The handler runs between two bytecodes of whatever the main thread is
    running: inside a gc callback (distributed registers one) or a __del__,
    Python swallows the exception ("Exception ignored in ...") and the scoring
    went on to exit 0 and publish --out.  Here the signal is sent from inside
    each of them at the first progress report: still exit 130 / 143, one line,
    no --out."""
    import gc

    from shrec_score.cli import main, outputs

    class Sender:
        def __del__(self):
            send()

    def send():
        os.kill(os.getpid(), sig)
        for _ in range(1000):  # bytecodes after the kill: the handler runs in here
            pass

    armed = []

    def callback(phase, info):
        if armed and phase == "start":
            armed.clear()
            send()

    real = outputs.ProgressBar.__call__

    def first_report(self, stage, done, total):
        if not armed and not getattr(first_report, "done", False):
            first_report.done = True
            if where == "gc callback":
                armed.append(1)
                gc.collect()
            else:
                Sender()  # dropped at once: __del__ runs here
        return real(self, stage, done, total)

    monkeypatch.setattr(outputs.ProgressBar, "__call__", first_report)
    gc.callbacks.append(callback)
    try:
        with pytest.raises(SystemExit) as exit_:
            main([os.path.join(SAMPLES, "psb-like", "runs"), "-r", os.path.join(SAMPLES, "psb-like", "classes.cla"), "--out", str(tmp_path / "out"), "--quiet"])
    finally:
        gc.callbacks.remove(callback)
    assert getattr(first_report, "done", False)
    assert exit_.value.code == status
    out, err = capfd.readouterr()
    assert err == "shrec-score: interrupted\n" and out == ""
    assert os.listdir(tmp_path) == []
    assert signal.getsignal(sig) in (signal.default_int_handler, signal.SIG_DFL)  # put back


def test_a_second_signal_raises_again_only_after_a_swallowed_raise(capfd, default_signals):
    """A second Ctrl-C during the clean-up of the first is recorded, not
    raised (the clean-up must finish); after a raise Python swallowed (and
    reported to sys.unraisablehook, which stays silent about it), the next
    signal raises again, with the first signal's status."""
    from shrec_score.cli.signals import Interrupts, Stopped

    def send(sig):
        os.kill(os.getpid(), sig)
        for _ in range(1000):  # the handler runs in here
            pass

    class Sender:
        def __del__(self):
            send(signal.SIGTERM)

    with Interrupts() as stops:
        with pytest.raises(Stopped) as raised:
            send(signal.SIGTERM)
        assert raised.value.signum == signal.SIGTERM
        send(signal.SIGINT)  # during the clean-up: recorded only
        assert stops.signum == signal.SIGTERM
    with Interrupts() as stops:
        Sender()  # raised in __del__: swallowed
        assert stops.signum == signal.SIGTERM
        with pytest.raises(Stopped) as raised:
            send(signal.SIGINT)
        assert raised.value.signum == signal.SIGTERM
        with pytest.raises(Stopped):
            stops.check()
    assert capfd.readouterr().err == ""  # no "Exception ignored in"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_signal_inside_distributeds_code_is_recorded_and_raised_by_the_next_check(default_signals):
    """While the main thread runs distributed's code (its client shares
    locks with its event-loop thread) the handler raises nothing: an
    exception between two bytecodes there could leave a lock held and the
    tool hung; the next check() raises it.  In the tool's own code a first
    signal raises at once."""
    from shrec_score.cli.signals import Interrupts, Stopped

    theirs = {"__name__": "distributed.client", "os": os, "signal": signal, "time": time}
    exec("def wait():\n    os.kill(os.getpid(), signal.SIGTERM)\n    time.sleep(0.01)\n    return 'returned'\n", theirs)
    with Interrupts() as stops:
        assert theirs["wait"]() == "returned"  # the handler ran in there, raising nothing
        assert stops.signum == signal.SIGTERM
        with pytest.raises(Stopped) as raised:
            stops.check()
        assert raised.value.signum == signal.SIGTERM
    with Interrupts() as stops, pytest.raises(Stopped) as raised:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.01)
    assert raised.value.signum == signal.SIGINT
