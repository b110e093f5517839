"""Output folders while the user works in them, and several folders as one commit (issue 30, items 12 and 13).

The races are driven, not hoped for: a subclass of OutputFolder runs the
user's action between the stage and swap steps (or right after the swap),
so every case happens the same way on every run.
"""

from __future__ import annotations

import errno
import os
from contextlib import ExitStack

import pytest

from shrec_score.errors import InputError
from shrec_score.outdir import MANIFEST, OutputFolder, commit_together, publish

from .test_outdir import NEW, OLD, USER, Faulty, leftovers, snapshot


class Racing(OutputFolder):
    """An output folder whose user acts while it commits: ``before_swap(path)``
    runs once the new set is staged, ``after_swap(path)`` once it is in place
    (before the previous folder is cleaned)."""

    def __init__(self, path, before_swap=None, after_swap=None):
        super().__init__(path)
        self.before_swap = before_swap
        self.after_swap = after_swap

    def swap(self):
        if self.before_swap:
            self.before_swap(self.path)
        super().swap()
        if self.after_swap:
            self.after_swap(self.path)


class FailingSwap(OutputFolder):
    """An output folder whose swap fails (or is interrupted) with ``error``."""

    def __init__(self, path, error):
        super().__init__(path)
        self.error = error

    def swap(self):
        raise self.error


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)


def save_as_an_editor(path, text):
    """Write a temporary file beside ``path`` and rename it over ``path``."""
    tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.swp")
    write(tmp, text)
    os.replace(tmp, path)


def commit(folder, files, **hooks):
    with Racing(folder, **hooks) as out:
        for name, data in files.items():
            out.add(name, data)
        return out.commit()


def publish_together(folders):
    """Replace each folder (path -> its files) in one commit_together, as cli/outputs commits --out and --plots."""
    with ExitStack() as stack:
        outs = [stack.enter_context(OutputFolder(path)) for path in folders]
        for out, files in zip(outs, folders.values()):
            for name, data in files.items():
                out.add(name, data)
        return commit_together(outs)


def without_manifest(folder):
    got = snapshot(folder)
    got.pop(MANIFEST)
    return got


@pytest.fixture
def folder(tmp_path):
    """An output folder holding the OLD set of an earlier scoring and the user's own files."""
    out = tmp_path / "out"
    publish(out, OLD)
    for name, text in USER.items():
        write(str(out / name), text)
    return out


# -- item 12: what the user adds while a scoring commits is kept, at any depth --------------


def test_a_file_added_in_a_users_sub_folder_is_kept(folder):
    commit(folder, NEW, before_swap=lambda d: write(f"{d}/mine/late.txt", "late\n"))
    assert without_manifest(folder) == {**USER, **NEW, "mine/late.txt": "late\n"}
    assert leftovers(folder.parent) == []


def test_a_folder_added_at_depth_is_kept(folder):
    commit(folder, NEW, before_swap=lambda d: write(f"{d}/a/b/c.txt", "deep\n"))
    assert without_manifest(folder) == {**USER, **NEW, "a/b/c.txt": "deep\n"}


def test_a_file_saved_by_an_editor_is_kept(folder):
    commit(folder, NEW, before_swap=lambda d: save_as_an_editor(f"{d}/notes.txt", "edited\n"))
    assert without_manifest(folder) == {**USER, **NEW, "notes.txt": "edited\n"}


def test_a_file_saved_by_an_editor_in_a_sub_folder_is_kept(folder):
    commit(folder, NEW, before_swap=lambda d: save_as_an_editor(f"{d}/plots/README", "edited\n"))
    assert without_manifest(folder) == {**USER, **NEW, "plots/README": "edited\n"}


def test_a_file_edited_in_place_is_kept(folder):
    def append(d):
        with open(f"{d}/notes.txt", "a") as fh:
            fh.write("one more line\n")

    commit(folder, NEW, before_swap=append)
    assert without_manifest(folder) == {**USER, **NEW, "notes.txt": USER["notes.txt"] + "one more line\n"}


def test_a_file_added_under_a_folder_the_scoring_writes_is_kept(folder):
    commit(folder, NEW, before_swap=lambda d: write(f"{d}/plots/late.svg", "<svg>mine</svg>\n"))
    assert without_manifest(folder) == {**USER, **NEW, "plots/late.svg": "<svg>mine</svg>\n"}


def test_a_file_added_under_a_folder_only_the_previous_scoring_wrote_is_kept(tmp_path):
    out = tmp_path / "out"
    publish(out, {"per_query.csv": "old\n", "plots/pr.svg": "<svg>old</svg>\n"})
    commit(out, {"per_query.csv": "new\n"}, before_swap=lambda d: write(f"{d}/plots/late.svg", "mine\n"))
    assert without_manifest(out) == {"per_query.csv": "new\n", "plots/late.svg": "mine\n"}


def test_a_later_edit_in_the_new_folder_wins(folder):
    commit(
        folder,
        NEW,
        before_swap=lambda d: save_as_an_editor(f"{d}/notes.txt", "first save\n"),
        after_swap=lambda d: save_as_an_editor(f"{d}/notes.txt", "second save\n"),
    )
    assert without_manifest(folder) == {**USER, **NEW, "notes.txt": "second save\n"}


def test_at_a_path_the_scoring_writes_the_scorings_file_wins(folder):
    commit(folder, NEW, before_swap=lambda d: write(f"{d}/per_run.csv", "the user's\n"))
    assert without_manifest(folder) == {**USER, **NEW}


def test_a_file_added_after_the_swap_is_kept(folder):
    commit(folder, NEW, after_swap=lambda d: write(f"{d}/plots/after.txt", "after\n"))
    assert without_manifest(folder) == {**USER, **NEW, "plots/after.txt": "after\n"}


def test_without_an_atomic_exchange_the_users_changes_are_kept_too(folder, monkeypatch):
    from shrec_score import outdir

    monkeypatch.setattr(outdir, "_renameat2", lambda a, b, flags: False)  # the two-rename swap

    def user(d):
        save_as_an_editor(f"{d}/notes.txt", "edited\n")
        write(f"{d}/plots/late.svg", "mine\n")

    commit(folder, NEW, before_swap=user)
    assert without_manifest(folder) == {**USER, **NEW, "notes.txt": "edited\n", "plots/late.svg": "mine\n"}
    assert leftovers(folder.parent) == []


# -- item 13: several folders commit together, or none does ----------------------------------


@pytest.fixture
def two(tmp_path):
    """Two output folders (say --out and --plots) holding an earlier scoring's files."""
    a, b = tmp_path / "out", tmp_path / "figures"
    publish_together({a: OLD, b: {"pr.svg": "<svg>old</svg>\n"}})
    write(str(a / "notes.txt"), "mine\n")
    return a, b


def state(folder):
    return os.stat(folder).st_ino, snapshot(folder)


def test_two_folders_commit_together(two):
    a, b = two
    written = publish_together({a: NEW, b: {"pr.svg": "<svg>new</svg>\n"}})
    assert written == [str(a / n) for n in NEW] + [str(b / "pr.svg")]
    assert without_manifest(a) == {**NEW, "notes.txt": "mine\n"}
    assert without_manifest(b) == {"pr.svg": "<svg>new</svg>\n"}
    assert leftovers(a.parent) == []


def test_a_failure_staging_the_second_folder_leaves_the_first_untouched(two):
    a, b = two
    before = state(a), state(b)
    with pytest.raises(InputError) as err:
        publish_together({a: NEW, b: {"x" * 300 + ".svg": "<svg/>"}})  # a write the file system refuses
    assert str(err.value).startswith(f"{b}{os.sep}xxx") and "the name is too long" in str(err.value)
    assert (state(a), state(b)) == before
    assert leftovers(a.parent) == []


def test_a_failure_swapping_the_second_folder_puts_the_first_back(two):
    a, b = two
    before = state(a), state(b)
    with Racing(a, after_swap=lambda d: write(f"{d}/late.txt", "late\n")) as first, FailingSwap(b, OSError(errno.EACCES, "denied")) as second:
        for name, text in NEW.items():
            first.add(name, text)
        second.add("pr.svg", "<svg>new</svg>\n")
        with pytest.raises(InputError) as err:
            commit_together([first, second])
    assert str(err.value) == f"{b}: could not write: permission denied: check the folder's permissions or choose another folder"
    assert state(b) == before[1]
    # the first folder is the previous one again, with the file the user added while it was new
    assert os.stat(a).st_ino == before[0][0]
    assert snapshot(a) == {**before[0][1], "late.txt": "late\n"}
    assert leftovers(a.parent) == []


def test_an_interrupt_between_the_swaps_puts_the_first_back(two):
    a, b = two
    before = state(a), state(b)
    with pytest.raises(KeyboardInterrupt):
        with OutputFolder(a) as first, FailingSwap(b, KeyboardInterrupt()) as second:
            first.add("per_query.csv", "new\n")
            second.add("pr.svg", "<svg>new</svg>\n")
            commit_together([first, second])
    assert (state(a), state(b)) == before
    assert leftovers(a.parent) == []


def test_a_failure_at_every_step_from_the_second_staging_on_leaves_both_old_or_both_new(tmp_path, monkeypatch):
    """ENOSPC (or any error) at each operating-system call from the second folder's staging to the end."""
    a, b = tmp_path / "out", tmp_path / "figures"
    old = {a: {"per_query.csv": "old\n"}, b: {"pr.svg": "old\n"}}
    new = {a: {"per_query.csv": "new\n", "per_run.csv": "new\n"}, b: {"pr.svg": "new\n", "roc.svg": "new\n"}}
    counter = Faulty(fail_at=-1, action=None)
    second_stage_starts = []

    class Marked(OutputFolder):
        def stage(self):
            second_stage_starts.append(counter.calls)
            super().stage()

    publish_together(old)
    with monkeypatch.context() as m:
        counter.install(m)
        with OutputFolder(a) as first, Marked(b) as second:
            for out, files in ((first, new[a]), (second, new[b])):
                for name, text in files.items():
                    out.add(name, text)
            commit_together([first, second])
        total = counter.calls

    def enospc():
        raise OSError(errno.ENOSPC, "No space left on device")

    outcomes = []
    for k in range(second_stage_starts[0] + 1, total + 2):
        publish_together(old)
        with monkeypatch.context() as m:
            Faulty(fail_at=k, action=enospc).install(m)
            try:
                publish_together(new)
                outcomes.append("new")
            except InputError as exc:
                outcomes.append("old")
                assert "the disk is full" in str(exc) and ".tmp" not in str(exc)
        want = old if outcomes[-1] == "old" else new
        assert (without_manifest(a), without_manifest(b)) == (want[a], want[b]), k
        assert leftovers(tmp_path) == [], k
    assert outcomes.count("old") > 5 and outcomes[-1] == "new"


def test_a_scoring_that_fails_writing_out_leaves_plots_untouched(tmp_path):
    """--out whose staging name is too long for the file system: exit 2, and --plots is not replaced."""
    import subprocess
    import sys

    out = tmp_path / ("o" * 240)  # the folder can be made; ".<name>.shrec-score-<token>.tmp" beside it cannot
    out.mkdir()
    plots = tmp_path / "plots"
    publish(plots, {"pr_curves.svg": "<svg>old</svg>\n"})
    before = state(plots)
    r = subprocess.run(
        [sys.executable, "-c", "import sys; from shrec_score.cli import main; sys.argv[0] = 'shrec-score'; main()",
         "sample_runs/psb-like/runs", "-r", "sample_runs/psb-like/classes.cla", "--out", str(out), "--plots", str(plots), "--quiet"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 2 and r.stderr == f"Error: {out}: could not write: the name is too long\n"
    assert state(plots) == before
    assert leftovers(tmp_path) == []
