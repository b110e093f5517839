"""Ranked-list runs read by forked workers give exactly what reading them here gives."""

import shutil
import sys

import numpy as np
import pytest

import shrec_score
from shrec_score import api, loading
from shrec_score.errors import InputError

SAMPLE = "sample_runs/psb-like"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux only")


def _runs(paths, rel):
    return api.load_runs(paths, rel)[0]


def test_workers_read_the_same_runs_as_this_process(monkeypatch):
    rel = api.load_relevance(f"{SAMPLE}/classes.cla")
    used = []
    real = loading._ListWorkers
    monkeypatch.setattr(loading, "_ListWorkers", lambda *a: used.append(real(*a)) or used[-1])
    forked = _runs([f"{SAMPLE}/runs"], rel)
    assert used and used[0].active and len(used[0].results) == 4  # the four sample runs went to the workers
    monkeypatch.setattr(loading.os, "cpu_count", lambda: 1)  # one core: read here
    here = _runs([f"{SAMPLE}/runs"], rel)
    assert [r.name for r in forked] == [r.name for r in here] == ["D2", "LFD", "MVCNN", "SHD"]
    for a, b in zip(forked, here):
        assert a.query_ids == b.query_ids
        np.testing.assert_array_equal(a.offsets, b.offsets)
        np.testing.assert_array_equal(a.targets, b.targets)


def test_the_first_broken_run_in_order_is_the_error_raised(tmp_path, monkeypatch):
    runs = tmp_path / "runs"
    shutil.copytree(f"{SAMPLE}/runs", runs)
    files = sorted((runs / "SHD").iterdir())
    lines = files[0].read_text().splitlines()
    files[0].write_text("\n".join(lines[:2] + ["no-such-model 0.5"] + lines[2:]) + "\n")
    (sorted((runs / "MVCNN").iterdir())[1]).write_text("garbage\n")  # broken too, but later in order
    (runs / "D2" / files[0].name).unlink()  # and the first run misses a query: the error raised
    with pytest.raises(InputError, match=r"D2: expected a ranked list for every query; run 'D2' has none for 1 of"):
        shrec_score.score([runs], f"{SAMPLE}/classes.cla")
    shutil.copy(f"{SAMPLE}/runs/D2/{files[0].name}", runs / "D2" / files[0].name)
    with pytest.raises(InputError) as forked:  # the line number survives the trip back from the worker
        shrec_score.score([runs], f"{SAMPLE}/classes.cla")
    assert str(forked.value).startswith(f"{sorted((runs / 'MVCNN').iterdir())[1]}:1: expected")
    assert forked.value.line == 1
    monkeypatch.setattr(loading.os, "cpu_count", lambda: 1)  # one core: read here
    with pytest.raises(InputError) as here:
        shrec_score.score([runs], f"{SAMPLE}/classes.cla")
    assert str(here.value) == str(forked.value)


def test_no_worker_outlives_the_call(tmp_path):
    """After a scoring, and after one that fails, no child process is left."""
    import multiprocessing

    shrec_score.score([f"{SAMPLE}/runs"], f"{SAMPLE}/classes.cla")
    assert multiprocessing.active_children() == []
    runs = tmp_path / "runs"
    shutil.copytree(f"{SAMPLE}/runs", runs)
    (sorted((runs / "D2").iterdir())[0]).write_text("garbage\n")
    with pytest.raises(InputError):
        shrec_score.score([runs], f"{SAMPLE}/classes.cla")
    assert multiprocessing.active_children() == []
