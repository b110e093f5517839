"""Ranked-list runs: parsed in chunks by pyarrow (io/lists.py: parse_batch), they give
exactly what the line reader gives; the first broken run in order is the
error raised; no thread or process outlives the call."""

import shutil

import numpy as np
import pytest

import shrec_score
from shrec_score import api
from shrec_score.errors import InputError

SAMPLE = "sample_runs/psb-like"

def _runs(paths, rel):
    return api.load_runs(paths, rel)[0]


def test_batches_read_the_same_runs_as_the_reference(monkeypatch):
    from shrec_score.io import lists

    rel = api.load_relevance(f"{SAMPLE}/classes.cla")
    monkeypatch.setattr(lists, "BATCH_MIN_BYTES", 0)
    monkeypatch.setattr(lists, "CHUNK_BYTES", 50_000)  # several chunks a run
    batched = _runs([f"{SAMPLE}/runs"], rel)
    monkeypatch.setattr(lists, "BATCH_MIN_BYTES", 1 << 62)  # the line reader, file by file
    here = _runs([f"{SAMPLE}/runs"], rel)
    assert [r.name for r in batched] == [r.name for r in here] == ["D2", "LFD", "MVCNN", "SHD"]
    for a, b in zip(batched, here):
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
    from shrec_score.io import lists

    monkeypatch.setattr(lists, "BATCH_MIN_BYTES", 0)
    with pytest.raises(InputError) as batched:
        shrec_score.score([runs], f"{SAMPLE}/classes.cla")
    assert str(batched.value).startswith(f"{sorted((runs / 'MVCNN').iterdir())[1]}:1: expected")
    assert batched.value.line == 1
    monkeypatch.setattr(lists, "BATCH_MIN_BYTES", 1 << 62)
    with pytest.raises(InputError) as here:
        shrec_score.score([runs], f"{SAMPLE}/classes.cla")
    assert str(here.value) == str(batched.value)


def test_no_thread_or_process_outlives_the_call(tmp_path, monkeypatch):
    """After a scoring, and after one that fails, no thread and no child process is left."""
    import multiprocessing
    import threading

    from shrec_score.io import lists

    monkeypatch.setattr(lists, "BATCH_MIN_BYTES", 0)
    monkeypatch.setattr(lists, "CHUNK_BYTES", 50_000)
    before = threading.active_count()
    shrec_score.score([f"{SAMPLE}/runs"], f"{SAMPLE}/classes.cla")
    assert multiprocessing.active_children() == []
    assert threading.active_count() == before
    runs = tmp_path / "runs"
    shutil.copytree(f"{SAMPLE}/runs", runs)
    (sorted((runs / "D2").iterdir())[0]).write_text("garbage\n")
    with pytest.raises(InputError):
        shrec_score.score([runs], f"{SAMPLE}/classes.cla")
    assert multiprocessing.active_children() == []
    assert threading.active_count() == before
