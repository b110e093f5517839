"""The output folder is replaced as one unit (shrec_score.outdir).

Fault injection: every operating-system call the commit makes is failed (or
the process killed) in turn, and after each the folder must hold exactly the
previous set or exactly the new one, with the user's own files untouched.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import sys
import textwrap
import time
import types

import pytest

from shrec_score import outdir
from shrec_score.errors import InputError
from shrec_score.outdir import MANIFEST, OutputFolder, publish

OLD = {"per_query.csv": "old per query\n", "significance.csv": "old significance\n", "plots/pr.svg": "<svg>old</svg>\n"}
NEW = {"per_query.csv": "new per query\n", "per_run.csv": "new per run\n", "plots/pr.svg": "<svg>new</svg>\n"}
USER = {"notes.txt": "the organiser's notes\n", "plots/README": "kept by hand\n", "mine/deep.txt": "deep\n"}

STEPS = ("open", "write", "fsync", "mkdir", "link", "rename", "chmod", "symlink")


def snapshot(folder):
    """{relative path: text} of every file under ``folder``."""
    out = {}
    for root, _, files in os.walk(folder):
        for f in files:
            path = os.path.join(root, f)
            with open(path) as fh:
                out[os.path.relpath(path, folder).replace(os.sep, "/")] = fh.read()
    return out


def expected(files):
    return {**USER, **files, MANIFEST: None}


def same_set(folder, files):
    got = snapshot(folder)
    want = expected(files)
    manifest = got.pop(MANIFEST, None)
    want.pop(MANIFEST)
    return got == want and manifest is not None and json.loads(manifest)["files"] == sorted(files)


def leftovers(parent):
    return [n for n in os.listdir(parent) if ".shrec-score-" in n]


@pytest.fixture
def folder(tmp_path):
    """An output folder holding the OLD set of an earlier scoring and the user's own files."""
    out = tmp_path / "out"
    publish(out, OLD)
    for name, text in USER.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text)
    assert same_set(out, OLD)
    return out


class Faulty:
    """Stands in for the ``os`` module inside shrec_score.outdir: the k-th call
    of the listed functions fails (or ends the process)."""

    def __init__(self, fail_at, action):
        self.calls = 0
        self.fail_at = fail_at
        self.action = action
        self.seen = []

    def install(self, monkeypatch):
        real = os
        proxy = types.SimpleNamespace(**{n: getattr(real, n) for n in dir(real) if not n.startswith("__")})
        for name in STEPS:
            setattr(proxy, name, self._wrap(name, getattr(real, name)))
        monkeypatch.setattr(outdir, "os", proxy)
        renameat2 = outdir._renameat2  # the swap's RENAME_EXCHANGE (and a rescue's RENAME_NOREPLACE)
        monkeypatch.setattr(outdir, "_renameat2", self._wrap("renameat2", renameat2))

    def _wrap(self, name, fn):
        def call(*args, **kwargs):
            self.calls += 1
            self.seen.append(name)
            if self.calls == self.fail_at:
                self.action()
            return fn(*args, **kwargs)

        return call


def _raise_enospc():
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_commit_makes_a_known_number_of_steps(folder, monkeypatch):
    counter = Faulty(fail_at=-1, action=None)
    counter.install(monkeypatch)
    publish(folder, NEW)
    assert same_set(folder, NEW)
    # the steps the fault tests walk through: staging, carrying the user's files, writing, syncing, the swap
    assert {"mkdir", "link", "open", "write", "fsync", "renameat2"} <= set(counter.seen)
    assert counter.calls > 20


def test_a_failure_at_every_step_leaves_the_old_set_or_the_new_one(folder, monkeypatch):
    total = 0
    with monkeypatch.context() as m:
        counter = Faulty(fail_at=-1, action=None)
        counter.install(m)
        publish(folder, NEW)
        total = counter.calls
    outcomes = []
    for k in range(1, total + 2):
        publish(folder, OLD)  # back to the old set
        with monkeypatch.context() as m:
            Faulty(fail_at=k, action=_raise_enospc).install(m)
            try:
                publish(folder, NEW)
                outcomes.append("new")
            except InputError as exc:
                outcomes.append("old")
                assert "the disk is full" in str(exc)
                assert str(folder) in str(exc) and ".tmp" not in str(exc)  # the user's path, never a staging name
        assert same_set(folder, OLD if outcomes[-1] == "old" else NEW), (k, snapshot(folder))
        assert leftovers(folder.parent) == [], k
    assert "old" in outcomes and outcomes[-1] == "new"


def test_a_kill_at_every_step_leaves_the_old_set_or_the_new_one(folder, monkeypatch):
    """The process dies (as with kill -9) at each step in turn, in a forked child."""
    with monkeypatch.context() as m:
        counter = Faulty(fail_at=-1, action=None)
        counter.install(m)
        publish(folder, NEW)
        total = counter.calls
    for k in range(1, total + 1):
        publish(folder, OLD)
        pid = os.fork()
        if pid == 0:  # the child: commit, dying at step k
            try:
                Faulty(fail_at=k, action=lambda: os._exit(9)).install(monkeypatch)
                publish(folder, NEW)
            finally:
                os._exit(0)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status)
        now = snapshot(folder)
        assert same_set(folder, OLD) or same_set(folder, NEW), (k, now)
        # the next scoring removes what the dead one left beside the folder
        publish(folder, NEW)
        assert same_set(folder, NEW) and leftovers(folder.parent) == [], k


def test_without_an_atomic_exchange_two_renames_and_recovery(folder, monkeypatch):
    monkeypatch.setattr(outdir, "_renameat2", lambda a, b, flags: False)  # no renameat2: two renames
    publish(folder, NEW)
    assert same_set(folder, NEW)
    # cut between the two renames: the folder is missing, the previous one under .old
    old = folder.parent / f".{folder.name}.shrec-score-cut.old"
    os.rename(folder, old)
    publish(folder, OLD)  # the next scoring first puts the previous folder back, then replaces it
    assert same_set(folder, OLD) and leftovers(folder.parent) == []


def test_a_leftover_that_is_not_a_folder_is_removed_not_put_back(tmp_path):
    """A dangling link and a file named as a swap's previous folder, with the output folder missing: not put back
    (os.open raised FileNotFoundError out of the scoring before), removed by the staging."""
    out = tmp_path / "out"
    os.symlink(tmp_path / "gone", tmp_path / ".out.shrec-score-aaaa.old")
    (tmp_path / ".out.shrec-score-bbbb.old").write_text("not a folder\n")
    assert publish(out, NEW) == [str(out / name) for name in NEW]
    assert {k: v for k, v in snapshot(out).items() if k != MANIFEST} == NEW and leftovers(tmp_path) == []


def test_files_of_an_earlier_scoring_go_the_users_stay(folder):
    publish(folder, NEW)
    assert not (folder / "significance.csv").exists()
    assert (folder / "notes.txt").read_text() == USER["notes.txt"]
    assert (folder / "plots" / "README").read_text() == USER["plots/README"]


def test_a_folder_without_manifest_keeps_every_file(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "per_query.csv").write_text("hand-made\n")
    (out / "keep.txt").write_text("x\n")
    publish(out, {"per_run.csv": "a\n"})
    assert snapshot(out) == {"per_query.csv": "hand-made\n", "keep.txt": "x\n", "per_run.csv": "a\n", MANIFEST: snapshot(out)[MANIFEST]}


def test_files_honour_the_umask_and_the_folder_keeps_its_mode(tmp_path):
    script = textwrap.dedent(
        f"""
        import os, stat
        os.umask(0o022)
        from shrec_score.outdir import publish
        publish({str(tmp_path / 'a')!r}, {{"x.csv": "1\\n", "sub/y.svg": "2"}})
        os.chmod({str(tmp_path / 'a')!r}, 0o750)
        publish({str(tmp_path / 'a')!r}, {{"x.csv": "1\\n"}})
        os.umask(0o077)
        publish({str(tmp_path / 'b')!r}, {{"x.csv": "1\\n"}})
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True)
    mode = lambda p: stat.S_IMODE(os.stat(p).st_mode)  # noqa: E731
    assert mode(tmp_path / "a" / "x.csv") == 0o644
    assert mode(tmp_path / "a") == 0o750  # the user's chmod survives the rerun
    assert mode(tmp_path / "b" / "x.csv") == 0o600
    assert mode(tmp_path / "b") == 0o700


def test_a_second_writer_fails_at_once_naming_the_folder_and_the_holder(tmp_path):
    out = tmp_path / "out"
    holder = subprocess.Popen(
        [sys.executable, "-c", f"from shrec_score.outdir import OutputFolder\nwith OutputFolder({str(out)!r}):\n    print('locked', flush=True)\n    input()"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "locked\n"
        start = time.monotonic()
        with pytest.raises(InputError) as err:
            with OutputFolder(out):
                pass
        assert time.monotonic() - start < 30  # refused at once: a lock that waited would wait for the holder, forever
        assert str(err.value).startswith(f"{out}: expected a folder no other scoring is writing; process {holder.pid}")
    finally:
        holder.communicate("\n", timeout=10)
    with OutputFolder(out) as free:  # released when the holder ended
        free.add("a.csv", "1\n")
        free.commit()
    assert (out / "a.csv").read_text() == "1\n"


def test_the_lock_dies_with_its_process(tmp_path):
    out = tmp_path / "out"
    holder = subprocess.Popen(
        [sys.executable, "-c", f"from shrec_score.outdir import OutputFolder\nimport time\nwith OutputFolder({str(out)!r}):\n    print('locked', flush=True)\n    time.sleep(60)"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline() == "locked\n"
    holder.kill()
    holder.wait(timeout=10)
    publish(out, {"a.csv": "1\n"})
    assert (out / "a.csv").read_text() == "1\n"


def test_an_aborted_transaction_leaves_no_trace(tmp_path):
    out = tmp_path / "new-folder"
    with pytest.raises(RuntimeError):
        with OutputFolder(out) as o:
            o.add("a.csv", "1\n")
            raise RuntimeError("scoring failed")
    assert not out.exists() and leftovers(tmp_path) == []


def test_the_folder_may_not_hold_the_current_directory(tmp_path, monkeypatch):
    (tmp_path / "out").mkdir()
    monkeypatch.chdir(tmp_path / "out")
    with pytest.raises(InputError, match="does not hold the current directory"):
        publish(".", {"a.csv": "1\n"})


def test_a_file_in_place_of_the_folder(tmp_path):
    (tmp_path / "out").write_text("x")
    with pytest.raises(InputError, match=r"out: expected a folder for the output, got a file"):
        publish(tmp_path / "out", {"a.csv": "1\n"})


@pytest.mark.parametrize("below", ["y", "y/z"])
def test_a_file_on_the_way_to_the_folder_is_named(tmp_path, below):
    # bug hunt: --plots DIR/afile/y said "could not create the output folder: File exists" (makedirs' EEXIST)
    (tmp_path / "afile").write_text("x")
    target = tmp_path / "afile" / below
    with pytest.raises(InputError) as caught:
        publish(target, {"a.csv": "1\n"})
    assert str(caught.value) == (
        f"{target}: could not create the output folder: a part of the path is not a folder ({tmp_path / 'afile'} is a file)"
    )
    assert (tmp_path / "afile").read_text() == "x"


def test_plots_under_a_file_is_one_line_naming_the_file(tmp_path):
    from click.testing import CliRunner

    from shrec_score.cli import cli

    from .conftest import SAMPLES

    pytest.importorskip("matplotlib")
    (tmp_path / "afile").write_text("x")
    psb = os.path.join(SAMPLES, "psb-like")
    args = [os.path.join(psb, "runs"), "-r", os.path.join(psb, "classes.cla"), "-m", "NN", "--plots", str(tmp_path / "afile" / "y")]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr == (
        f"Error: {tmp_path / 'afile' / 'y'}: could not create the output folder: "
        f"a part of the path is not a folder ({tmp_path / 'afile'} is a file)\n"
    )


def test_names_outside_the_folder_are_refused(tmp_path):
    with OutputFolder(tmp_path / "o") as o:
        for bad in ("../x", "/etc/x", "a//b", MANIFEST):
            with pytest.raises(ValueError):
                o.add(bad, "")


def test_a_file_size_limit_is_exit_2_naming_the_output_file(tmp_path):
    """RLIMIT_FSIZE while writing: one line naming the user's file, exit 2 (not a crash)."""
    import resource

    runs, cla = "sample_runs/psb-like/runs", "sample_runs/psb-like/classes.cla"
    out = tmp_path / "out"

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    r = subprocess.run(
        [sys.executable, "-c", "import sys; from shrec_score.cli import main; sys.argv[0] = 'shrec-score'; main()", runs, "-r", cla, "--out", str(out), "--quiet"],
        capture_output=True,
        text=True,
        preexec_fn=limit,
        timeout=60,
    )
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1
    assert r.stderr.startswith(f"Error: {out}{os.sep}") and "file size limit" in r.stderr
    assert not out.exists() and leftovers(tmp_path) == []


def test_a_commit_outside_the_with_block_is_refused_and_writes_nothing(tmp_path):
    """Without the with block there is no lock: commit() refuses at once (the ninth pass had dropped the check,
    and the commit then wrote a staging folder beside the target and failed on a misleading error; a review)."""
    out = OutputFolder(tmp_path / "x")
    out.add("a.txt", "a")
    with pytest.raises(RuntimeError, match=r"OutputFolder.commit\(\) outside its 'with' block"):
        out.commit()
    assert os.listdir(tmp_path) == []
