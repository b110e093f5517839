"""Exit statuses and one-line messages of the console: 0 done, 2 bad input or
an environment error, 130/143 interrupted, 1 a bug."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from shrec_score import api, cli
from shrec_score.outdir import MANIFEST, environment_error

SAMPLE = "sample_runs/psb-like"
ARGS = [f"{SAMPLE}/runs", "-r", f"{SAMPLE}/classes.cla", "--quiet", "--format", "csv"]


def run_main(argv, capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(argv)
    captured = capsys.readouterr()
    return done.value.code, captured.out, captured.err


@pytest.mark.parametrize(
    ("exc", "advice"),
    [
        (MemoryError(), "out of memory"),
        (OSError(errno.EROFS, "Read-only file system", "/srv/results/x.csv"), "/srv/results/x.csv: the file system is read-only"),
        (PermissionError(errno.EACCES, "Permission denied", "/srv/runs/a"), "/srv/runs/a: permission denied"),
        (OSError(errno.ENOTDIR, "Not a directory", "/srv/runs/a/b"), "/srv/runs/a/b: a part of the path is not a folder"),
    ],
)
def test_environment_errors_are_exit_2_in_one_line(exc, advice, monkeypatch, capsys):
    def fail(*a, **k):
        raise exc

    monkeypatch.setattr(api, "score", fail)
    code, out, err = run_main(ARGS, capsys)
    assert code == 2
    assert out == "" and err.count("\n") == 1 and advice in err
    assert "internal error" not in err


def test_a_bug_is_still_exit_1(monkeypatch, capsys):
    def bug(*a, **k):
        raise ZeroDivisionError("oops")

    monkeypatch.setattr(api, "score", bug)
    code, _, err = run_main(ARGS, capsys)
    assert code == 1 and err.startswith("shrec-score: internal error: ZeroDivisionError: oops")


def test_a_bug_with_a_message_of_several_lines_is_still_one_line(monkeypatch, capsys):
    """numpy's ImportError under a low memory limit (a contest's memory_mb) is 15 lines; the server shows
    the last line of the child's stderr, which was ' (please report it; ...)' alone (a bug hunt)."""

    def bug(*a, **k):
        raise ImportError("\n\nIMPORTANT: PLEASE READ THIS\n\nmore advice\n\nOriginal error was: failed to map segment\n")

    monkeypatch.setattr(api, "score", bug)
    code, _, err = run_main(ARGS, capsys)
    assert code == 1 and err == (
        "shrec-score: internal error: ImportError: IMPORTANT: PLEASE READ THIS ... Original error was: failed to map segment "
        "(please report it; SHREC_SCORE_DEBUG=1 shows the traceback)\n"
    )


def test_environment_error_advice_by_errno():
    assert str(environment_error("/o/per_query.csv", OSError(errno.ENOSPC, "No space left on device"))) == (
        "/o/per_query.csv: could not write: the disk is full: free some space or choose another folder"
    )
    assert str(environment_error("/o/x", OSError(errno.EIO, "Input/output error"), doing=None)) == "/o/x: Input/output error"
    assert str(environment_error("/o/a\nb", OSError(errno.EFBIG, "File too large"))).startswith("/o/a\\nb: could not write: the file size limit")


@pytest.mark.parametrize("flag", ["--out", "--plots"])
def test_an_output_folder_inside_runs_is_refused(tmp_path, flag, capsys):
    import shutil

    runs = tmp_path / "runs"
    shutil.copytree(f"{SAMPLE}/runs", runs)
    code, _, err = run_main([str(runs), "-r", f"{SAMPLE}/classes.cla", flag, str(runs / "results")], capsys)
    assert code == 2
    assert err == f"Error: {runs / 'results'}: expected a {flag} folder outside RUNS ({runs}); the next scoring would read it as a run\n"
    assert not (runs / "results").exists()


def test_plots_inside_out_are_one_unit(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = tmp_path / "out"
    code, _, err = run_main([*ARGS, "--out", str(out), "--plots", str(out / "plots")], capsys)
    assert code == 0, err
    listed = json.loads((out / MANIFEST).read_text())["files"]
    assert "per_query.csv" in listed and "plots/pr_curves.svg" in listed and "plots/pr_curves.png" in listed
    assert not (out / "plots" / MANIFEST).exists()  # one manifest: one unit
    # a rerun without --plots takes the plots away with the rest of the earlier set
    code, _, err = run_main([*ARGS, "--out", str(out)], capsys)
    assert code == 0 and not (out / "plots").exists()


def test_sigterm_during_the_progress_bar_restores_the_cursor(tmp_path):
    """With stderr on a terminal the progress bar hides the cursor; SIGTERM must show it again."""
    import pty
    import threading

    ready = tmp_path / "bar-shown"
    master, slave = pty.openpty()
    script = (
        "import sys, time\n"
        "from shrec_score import cli, api\n"
        "cli.outputs.ProgressBar.DELAY = 0.0\n"
        "def slow(*a, progress=None, **k):\n"
        "    progress('reading', 0, 4)\n"
        f"    open({str(ready)!r}, 'w').close()\n"
        "    time.sleep(30)\n"
        "api.score = slow\n"
        "sys.argv[0] = 'shrec-score'\n"
        "cli.main()\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script, *ARGS[:3]], stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    seen = bytearray()

    def drain():  # read the terminal as it is written, so the bar never blocks on a full pty
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the terminal closed with the process
                return
            if not chunk:
                return
            seen.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 20
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert ready.exists(), "the progress bar never started"
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 143
        reader.join(timeout=5)
    finally:
        proc.kill()
        os.close(master)
    out = bytes(seen)
    assert b"\x1b[?25l" in out  # the bar hid the cursor ...
    assert out.rindex(b"\x1b[?25h") > out.rindex(b"\x1b[?25l")  # ... and it was shown again
    assert out.rstrip().endswith(b"shrec-score: interrupted")
