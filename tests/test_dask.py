"""Scoring on a Dask cluster (issue 23): the same CSVs as the single-process
path, byte for byte, for matrices stored by blocks of rows (Zarr, .npy row
shards) and for run folders; a worker killed mid-run; bad shards named;
``convert`` round-trips.

One LocalCluster of 2 worker processes serves the whole module.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("distributed")
pytest.importorskip("zarr")

from distributed import Client, LocalCluster  # noqa: E402

import shrec_score  # noqa: E402
from shrec_score import distributed as dist  # noqa: E402
from shrec_score.cli import main  # noqa: E402
from shrec_score.measures import Settings  # noqa: E402

from .conftest import foreground_job  # noqa: E402

CSVS = ("per_query.csv", "per_run.csv", "pr_curve.csv")


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0") as lc, Client(lc) as client:
        yield client
    # distributed and zarr each keep helper threads for the whole process (Dask-Offload; zarr's
    # event loop and its executor): stop them, so that the tests after these see a process
    # without threads (the ranked-list readers fork only then); both start again when used
    import threading
    from concurrent.futures import ThreadPoolExecutor

    import distributed.utils
    import zarr.core.sync

    distributed.utils._offload_executor.shutdown(wait=True)
    distributed.utils._offload_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="Dask-Offload")
    zarr.core.sync.cleanup_resources()
    for t in threading.enumerate():
        if t is not threading.main_thread():
            t.join(timeout=10)  # a loaded machine may take a moment
    assert threading.active_count() == 1, [t.name for t in threading.enumerate()]


def _cla(path, labels, prefix="m"):
    names = sorted(set(labels))
    lines = ["PSB 1", f"{len(names)} {len(labels)}"]
    for n in names:
        members = [k for k, lab in enumerate(labels) if lab == n]
        lines += ["", f"{n} 0 {len(members)}", *[f"{prefix}{k}" for k in members]]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """240 models in 9 classes (listed class by class, so listing order is not
    id order), a float32 matrix with many exact ties, and the same matrix as
    .npy, Zarr (blocks of 37 rows) and .npy shards (blocks of 50 rows)."""
    root = tmp_path_factory.mktemp("dask")
    rng = np.random.default_rng(23)
    n = 240
    labels = [f"c{k}" for k in rng.integers(0, 9, n)]
    cla = _cla(root / "classes.cla", labels)
    m = rng.random((n, n)).astype(np.float32)
    m[rng.random((n, n)) < 0.25] = 0.5  # exact ties: the lower column first
    m = np.round(m, 2)  # and many more
    for d in ("one", "z", "s"):
        (root / d).mkdir()
    np.save(root / "one" / "run.npy", m)
    _ok(["convert", str(root / "one" / "run.npy"), str(root / "z" / "run.zarr"), "--to", "zarr", "--chunk-rows", "37"])
    _ok(["convert", str(root / "one" / "run.npy"), str(root / "s" / "run"), "--to", "npy-shards", "--chunk-rows", "50"])
    return root, cla, m


def _run(argv):
    try:
        main(argv)
    except SystemExit as exc:
        return exc.code
    return 0


def _ok(argv):
    assert _run(argv) == 0, argv


def _same_csvs(a, b, names=CSVS):
    for name in names:
        with open(os.path.join(a, name), "rb") as fa, open(os.path.join(b, name), "rb") as fb:
            assert fa.read() == fb.read(), name


@pytest.mark.parametrize("layout", ["z/run.zarr", "s/run"])
def test_row_block_matrix_on_the_cluster_writes_the_single_process_csvs(data, cluster, tmp_path, layout):
    root, cla, _ = data
    single, on_cluster = tmp_path / "single", tmp_path / "cluster"
    _ok([str(root / "one" / "run.npy"), "-r", cla, "--out", str(single), "--format", "csv", "--quiet"])
    address = cluster.scheduler.address
    _ok([str(root / layout), "-r", cla, "--out", str(on_cluster), "--dask", address, "--format", "csv", "--quiet"])
    _same_csvs(single, on_cluster)
    text = (single / "per_query.csv").read_text()
    assert text.count("\n") == 241 and "nan" not in text  # every query scored


def test_graded_cut_and_small_classes_match_too(data, cluster):
    """The other branch (score_run on the engine's chunks): SHREC 2006 grades
    with their curves, --depth, and --min-class-size, every CSV identical."""
    root, cla, _ = data
    for kw in (dict(grades="sister"), dict(measures=["AP", "NN", "DCG"], settings=Settings(depth=20, min_class_size=30))):
        single = shrec_score.score([str(root / "one" / "run.npy")], cla, **kw).csv_files()
        for layout in ("z/run.zarr", "s/run"):
            got = dist.score([str(root / layout)], cla, dask=cluster, **kw).csv_files()
            assert {k: v for k, v in got.items() if k.endswith(".csv")} == {k: v for k, v in single.items() if k.endswith(".csv")}


def test_the_relevant_targets_are_found_once_for_every_task_of_a_run(data, monkeypatch):
    """docs/scale-out.md: the relevant targets are built once per worker, not once per task (every row-block
    task scoring through engine.score_run found them again: a review).  In this process (dask=None): the shards'
    5 blocks, each its own task, with the same relevance object."""
    from shrec_score.relevance import ClassRelevance

    root, cla, _ = data
    calls = []
    found = ClassRelevance._relevant_targets
    monkeypatch.setattr(ClassRelevance, "_relevant_targets", lambda self, level: calls.append(level) or found(self, level))
    single = shrec_score.score([str(root / "one" / "run.npy")], cla, measures=["AP", "NN"]).csv_files()
    calls.clear()
    got = dist.score([str(root / "s" / "run")], cla, measures=["AP", "NN"]).csv_files()
    assert calls == [1] and got["per_query.csv"] == single["per_query.csv"]
    rel = shrec_score.load_relevance(cla)
    assert rel.relevant_targets(1) is rel.relevant_targets(1) and not rel.relevant_targets(1)[0].flags.writeable


def test_the_engine_chunks_are_followed_where_a_matrix_spans_several(tmp_path, monkeypatch):
    """With chunks of 2,000 list entries (8 queries here) the gain-curve sums
    are added chunk by chunk in both paths: curves.csv identical too.  In
    this process (dask=None): the same tasks, no cluster."""
    from shrec_score import engine

    rng = np.random.default_rng(5)
    n = 260
    cla = _cla(tmp_path / "c.cla", [f"k{k}" for k in rng.integers(0, 6, n)])
    m = rng.random((n, n))
    np.save(tmp_path / "run.npy", m)
    _ok(["convert", str(tmp_path / "run.npy"), str(tmp_path / "run"), "--to", "npy-shards", "--chunk-rows", "40"])
    monkeypatch.setattr(engine, "CHUNK_ENTRIES", 2_000)
    single = shrec_score.score([str(tmp_path / "run.npy")], cla, grades="sister").csv_files()
    got = dist.score([str(tmp_path / "run")], cla, grades="sister").csv_files()
    assert got["curves.csv"] == single["curves.csv"] and got["gain_vs_recall.csv"] == single["gain_vs_recall.csv"]
    assert got["per_query.csv"] == single["per_query.csv"]


def _lists_runs(root, m, n_runs=3, seed=1):
    """Ranked-list runs (one file per query) from noisy copies of the matrix."""
    rng = np.random.default_rng(seed)
    folder = root / "lists"
    for r in range(n_runs):
        run = folder / f"run{r}"
        run.mkdir(parents=True)
        noisy = m + rng.random(m.shape).astype(np.float32) * 0.3
        for q in range(m.shape[0]):
            order = np.argsort(noisy[q], kind="stable")[: 60 + 10 * r]
            (run / f"m{q}.txt").write_text("".join(f"m{t} {noisy[q, t]:.4f}\n" for t in order))
    return folder


def test_run_folders_on_the_cluster_write_the_single_process_csvs(data, cluster, tmp_path):
    root, cla, m = data
    runs = _lists_runs(tmp_path, m)
    np.save(runs / "matrix.npy", m)  # a matrix file beside the ranked-list folders: a task of its own
    single, on_cluster = tmp_path / "single", tmp_path / "cluster"
    _ok([str(runs), "-r", cla, "--out", str(single), "--format", "csv", "--quiet"])
    _ok([str(runs), "-r", cla, "--out", str(on_cluster), "--dask", cluster.scheduler.address, "--format", "csv", "--quiet"])
    _same_csvs(single, on_cluster)
    assert (single / "per_run.csv").read_text().count("\n") == 5  # four runs


def test_one_run_folder_on_the_cluster_is_told_by_its_file_names(data, cluster, tmp_path):
    # a lone ranked-list folder (not a folder of runs) is recognised by its files named after the queries, as
    # score() recognises it: --dask was refused with "cannot tell the run format" for want of the query ids
    root, cla, m = data
    one = _lists_runs(tmp_path, m, n_runs=1) / "run0"
    single, on_cluster = tmp_path / "single", tmp_path / "cluster"
    _ok([str(one), "-r", cla, "--out", str(single), "--format", "csv", "--quiet"])
    _ok([str(one), "-r", cla, "--out", str(on_cluster), "--dask", cluster.scheduler.address, "--format", "csv", "--quiet"])
    _same_csvs(single, on_cluster)
    assert (on_cluster / "per_run.csv").read_text().count("\n") == 2  # one run


def test_trec_runs_on_the_cluster_write_the_single_process_csvs(cluster, tmp_path):
    rng = np.random.default_rng(3)
    qrels = "".join(f"q{q} 0 d{d} {g}\n" for q in range(30) for d in rng.choice(300, 25, replace=False) for g in [int(rng.integers(0, 3))])
    (tmp_path / "qrels.txt").write_text(qrels)
    runs = tmp_path / "runs"
    runs.mkdir()
    for r in range(3):
        lines = []
        for q in range(30):
            scores = np.round(rng.random(100), 2)  # ties: trec_eval's order
            docs = rng.choice(300, 100, replace=False)
            lines += [f"q{q} Q0 d{d} {k + 1} {s} tag{r}\n" for k, (d, s) in enumerate(zip(docs, scores))]
        (runs / f"r{r}.run").write_text("".join(lines))
    for ties in ("rule", "expected"):  # scores of 2 decimals: many ties
        single, on_cluster = tmp_path / f"single-{ties}", tmp_path / f"cluster-{ties}"
        _ok([str(runs), "-r", str(tmp_path / "qrels.txt"), "--out", str(single), "--format", "csv", "--quiet", "--ties", ties])
        _ok([str(runs), "-r", str(tmp_path / "qrels.txt"), "--out", str(on_cluster), "--dask", cluster.scheduler.address, "--format", "csv", "--quiet", "--ties", ties])
        _same_csvs(single, on_cluster)
        assert (single / "per_query.csv").read_text().count("\n") == 91
    assert (tmp_path / "single-rule" / "per_run.csv").read_text() != (tmp_path / "single-expected" / "per_run.csv").read_text()
    # what the report reads of a run scored on a worker comes back with its scores: the TREC tag (--format trec
    # writes it) was lost there; the lists' lengths make the coverage note, as in one process
    kw = {"measures": ["AP", "TP_relevant"], "collection_size": 300}
    alone = shrec_score.score([str(runs)], str(tmp_path / "qrels.txt"), **kw)
    there = dist.score([str(runs)], str(tmp_path / "qrels.txt"), dask=cluster, **kw)
    assert there.run_tags == alone.run_tags == {f"r{r}.run": f"tag{r}" for r in range(3)}
    assert there.warnings == alone.warnings == ["note: 90 of 90 ranked lists are shorter than the collection (Va < Ds): "
                                                 "P, R and the TP/FP/TN/FN counts are meaningful"]


def test_relevance_is_one_task_and_tasks_carry_no_block(data, cluster):
    """The shared object (relevance, measures, settings) is submitted once, as
    a task of its own (issue 30.15: scattered data has no lineage and died
    with the workers); nothing is scattered; every other task's arguments are
    that task's future, a path, a name and row numbers; the progress callback
    counts the tasks (one per stored block) up to the total."""
    from distributed import Future

    root, cla, _ = data
    scattered, submitted, seen = [], [], []
    real_scatter, real_submit = cluster.scatter, cluster.submit

    def scatter(data, **kw):
        scattered.append((data, kw))
        return real_scatter(data, **kw)

    def submit(fn, *args, **kw):
        submitted.append(args)
        return real_submit(fn, *args, **kw)

    cluster.scatter, cluster.submit = scatter, submit
    try:
        dist.score([str(root / "z" / "run.zarr")], cla, dask=cluster, progress=lambda *a: seen.append(a))
    finally:
        del cluster.scatter, cluster.submit
    assert scattered == []
    (shared,), blocks = submitted[0], submitted[1:]
    assert type(shared).__name__ == "_Shared" and sorted(shared.relevance.query_ids) == sorted(f"m{k}" for k in range(240))
    assert len(blocks) == 7  # 240 rows in blocks of 37
    for args in blocks:
        assert isinstance(args[0], Future) and all(isinstance(a, (str, int)) for a in args[1:])
    counts = [d for _, d, _ in seen]  # each task's report, and the same count again every 0.1 s of waiting
    assert seen[-1] == ("scoring", 7, 7) and sorted(counts) == counts and sorted(set(counts)) == list(range(8))
    assert [d for d, e in zip(counts, counts[1:]) if e == d + 1] == list(range(7))


@pytest.mark.parametrize("n_workers", [1, 2])
def test_every_worker_killed_mid_run_the_tasks_run_again(data, tmp_path, n_workers):
    """issue 30.15: with one worker, or when every worker dies, SIGKILL of the
    worker processes (their pids from the client) after the first block came
    back: the nannies start new workers, the scheduler computes the shared
    object again (a task, not scattered data) and runs the tasks that died;
    the tables are the single process's.  It ended in FutureCancelledError."""
    import logging
    import signal

    root, cla, _ = data
    big = tmp_path / "run"
    _ok(["convert", str(root / "one" / "run.npy"), str(big), "--to", "npy-shards", "--chunk-rows", "6"])  # 40 tasks
    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0", silence_logs=logging.CRITICAL) as lc, Client(lc) as client:
        pids = sorted(client.run(os.getpid).values())
        killed = []

        def progress(stage, done, total):
            if done >= 1 and not killed:
                for pid in pids:
                    os.kill(pid, signal.SIGKILL)
                killed.extend(pids)

        got = dist.score([str(big)], cla, dask=client, progress=progress).csv_files()
        client.wait_for_workers(n_workers, timeout=60)
        assert set(client.run(os.getpid).values()).isdisjoint(killed)
    single = shrec_score.score([str(root / "one" / "run.npy")], cla).csv_files()
    assert len(killed) == n_workers and all(got[name] == single[name] for name in CSVS)


def test_a_corrupt_shard_is_exit_2_naming_it(data, cluster, tmp_path, capsys):
    root, cla, m = data
    import shutil

    bad = tmp_path / "s" / "run"
    shutil.copytree(root / "s" / "run", bad)
    shard = bad / "rows-000002.npy"
    shard.write_bytes(shard.read_bytes()[:-100])  # cut short
    capsys.readouterr()
    assert _run([str(bad), "-r", cla, "--dask", cluster.scheduler.address, "--format", "csv"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and str(shard) in err and "bytes" in err
    # a NaN cell: the shard and the row's line in it, 17 (row 117 of the whole matrix is in rows 101..150)
    shard.write_bytes((root / "s" / "run" / "rows-000002.npy").read_bytes())
    cells = np.load(shard)
    cells[16, 5] = np.nan
    np.save(shard, cells)
    assert _run([str(bad), "-r", cla, "--dask", cluster.scheduler.address, "--format", "csv"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"{shard}:17: expected a number in every cell; row 117 " in err and "NaN" in err


def test_a_corrupt_zarr_chunk_is_exit_2_naming_it(data, cluster, tmp_path, capsys):
    import shutil

    root, cla, _ = data
    bad = tmp_path / "run.zarr"
    shutil.copytree(root / "z" / "run.zarr", bad)
    chunk = bad / "c" / "3" / "0"
    chunk.write_bytes(chunk.read_bytes()[:-7])
    capsys.readouterr()
    assert _run([str(bad), "-r", cla, "--dask", cluster.scheduler.address, "--format", "csv"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and str(chunk) in err and "rows 112..148" in err


def test_convert_round_trips_every_matrix_form(tmp_path):
    from shrec_score.io.chunked import open_row_blocks

    rng = np.random.default_rng(9)
    m32 = rng.random((23, 17)).astype(np.float32)
    np.save(tmp_path / "a.npy", m32)
    m32.tofile(tmp_path / "psb.bin")  # PSB binary: float32, no header
    m64 = rng.random((11, 11))
    (tmp_path / "a.txt").write_text("".join(" ".join(repr(float(x)) for x in row) + "\n" for row in m64))
    m32[:11, :11].tofile(tmp_path / "square.bin")
    cases = [
        ("a.npy", [], m32),
        ("psb.bin", ["--shape", "23x17"], m32),
        ("square.bin", [], m32[:11, :11]),
        ("a.txt", [], m64),  # ASCII: float64, as the single-process reader parses it
    ]
    for src, extra, want in cases:
        for layout, rows in (("zarr", "5"), ("npy-shards", "4")):
            out = tmp_path / f"{src}.{layout}"
            _ok(["convert", str(tmp_path / src), str(out), "--to", layout, "--chunk-rows", rows, *extra])
            got = open_row_blocks(str(out))
            assert got.dtype == want.dtype and got.shape == want.shape
            assert np.array_equal(got[:], want)
            assert got.blocks[0] == (0, int(rows)) and got.blocks[-1][1] == want.shape[0]
            for a, b in got.blocks:
                assert np.array_equal(got.read(a, b), want[a:b])
    # a Zarr format 2 array (written by zarr 2 or by others) reads alike; messages name its chunk files
    import zarr

    v2 = zarr.create_array(store=str(tmp_path / "v2.zarr"), shape=m32.shape, chunks=(5, 17), dtype="float32", zarr_format=2)
    v2[:] = m32
    got = open_row_blocks(str(tmp_path / "v2.zarr"))
    assert np.array_equal(got[:], m32) and got.blocks[-1] == (20, 23)
    where, line = got.located(7)  # row 8 of the matrix, the third row of its second chunk
    assert os.path.isfile(where) and where.endswith("1.0") and line == 3
    # float32 on request
    _ok(["convert", str(tmp_path / "a.txt"), str(tmp_path / "a32"), "--to", "npy-shards", "--dtype", "float32"])
    assert np.array_equal(open_row_blocks(str(tmp_path / "a32"))[:], m64.astype(np.float32))


@pytest.mark.parametrize("shape", ["11x7", "10x11", "11x12"])
def test_convert_checks_both_sides_of_shape_for_ascii_and_npy(tmp_path, capsys, shape):
    # --shape on an 11 x 11 matrix: ASCII took any number of columns and named the classifications
    m = np.arange(121, dtype=np.float64).reshape(11, 11)
    (tmp_path / "a.txt").write_text("".join(" ".join(str(x) for x in row) + "\n" for row in m))
    np.save(tmp_path / "a.npy", m)
    rows, cols = shape.split("x")
    for src in ("a.txt", "a.npy"):
        capsys.readouterr()
        assert _run(["convert", str(tmp_path / src), str(tmp_path / "out"), "--to", "zarr", "--shape", shape]) == 2
        assert capsys.readouterr().err == f"Error: {tmp_path / src}: expected a {rows} x {cols} matrix (--shape), got 11 x 11\n"
        assert not (tmp_path / "out").exists()


def test_convert_never_leaves_a_half_written_folder(tmp_path, capsys):
    rows = ["0.1 0.2 0.3\n"] * 50 + ["0.1 x 0.3\n"]
    (tmp_path / "bad.txt").write_text("".join(rows))
    for layout in ("zarr", "npy-shards"):
        assert _run(["convert", str(tmp_path / "bad.txt"), str(tmp_path / "out"), "--to", layout, "--chunk-rows", "7"]) == 2
        err = capsys.readouterr().err
        assert "bad.txt:51" in err
        assert sorted(os.listdir(tmp_path)) == ["bad.txt"]  # no OUT, no staging folder
    (tmp_path / "out").mkdir()
    np.save(tmp_path / "ok.npy", np.zeros((2, 2)))
    assert _run(["convert", str(tmp_path / "ok.npy"), str(tmp_path / "out"), "--to", "zarr"]) == 2
    assert "exists" in capsys.readouterr().err


def test_without_the_extra_dask_is_exit_2_with_the_pip_command_and_never_imported(data, tmp_path):
    root, cla, _ = data
    block = "import sys\nfor name in ('dask', 'distributed', 'zarr'): sys.modules[name] = None\n"
    code = block + (
        "from shrec_score.cli import main\n"
        "try:\n"
        f"    main([{str(root / 'one' / 'run.npy')!r}, '-r', {cla!r}, '--dask', 'local:2', '--format', 'csv'])\n"
        "except SystemExit as e:\n"
        "    print('exit', e.code)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "exit 2"
    assert out.stderr.strip().endswith("pip install 'shrec-score[dask]'") and out.stderr.count("\n") == 1
    # an ordinary scoring, and shards scored without --dask (the same tasks in this
    # process), given as the shard folder or as a RUNS folder holding it, import
    # nothing of dask or zarr; the shards give the .npy's CSVs
    code = (
        "import sys\nfrom shrec_score.cli import main\n"
        "for args in (['one/run.npy', '--out', 'o1'], ['s/run', '--out', 'o2'], ['s', '--out', 'o3']):\n"
        "    try:\n"
        f"        main([{str(root)!r} + '/' + args[0], '-r', {cla!r}, '--format', 'csv', '--quiet', '--out', {str(tmp_path)!r} + '/' + args[2]])\n"
        "    except SystemExit as e:\n        assert e.code == 0\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed', 'zarr')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stderr
    _same_csvs(tmp_path / "o1", tmp_path / "o2")
    _same_csvs(tmp_path / "o1", tmp_path / "o3")


def test_a_hidden_row_block_folder_is_not_a_run(data, tmp_path):
    """A runs folder holding a hidden store (``.old``: hidden entries are never runs) beside a visible one: the
    discovery finds the visible one only."""
    from shrec_score.io.runs import discover_runs

    root, cla, _ = data
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copytree(root / "s" / "run", runs / ".old")
    shutil.copytree(root / "s" / "run", runs / "run")
    found, _ = discover_runs([str(runs)], row_blocks=True)
    assert [(r.name, r.path, type(r).__name__) for r in found] == [("run", str(runs / "run"), "BlockSource")]


def test_dask_addresses_name_a_scheduler_or_local_workers():
    assert dist.cluster_target("tcp://10.0.0.5:8786") == ("tcp://10.0.0.5:8786", None)
    assert dist.cluster_target("local:2") == (None, 2)
    assert dist.cluster_target(None) == (None, None)


def test_bad_dask_addresses_are_exit_2(data, capsys, tmp_path):
    root, cla, _ = data
    for bad in ("local:0", "local:x", "nohost"):
        assert _run([str(root / "one" / "run.npy"), "-r", cla, "--dask", bad]) == 2
        assert "local:N" in capsys.readouterr().err
    # the YAML key dask: is read like the flag
    config = tmp_path / "track.yaml"
    config.write_text(f"runs: [{str(root / 'one' / 'run.npy')}]\nrelevance: {cla}\ndask: local:0\n")
    assert _run(["--config", str(config)]) == 2
    assert "got 'local:0'" in capsys.readouterr().err


def test_a_worker_killed_mid_run_is_retried_and_the_result_is_complete(data, cluster, tmp_path):
    """SIGKILL of one worker process after the first block came back: the
    scheduler gives its tasks (and results it held) to the other worker and
    the nanny starts a new one; the tables are those of the single process."""
    import signal

    root, cla, m = data
    big = tmp_path / "run"
    _ok(["convert", str(root / "one" / "run.npy"), str(big), "--to", "npy-shards", "--chunk-rows", "6"])  # 40 tasks
    pids = cluster.run(os.getpid)
    killed = []

    def progress(stage, done, total):
        if done >= 1 and not killed:
            victim = sorted(pids.values())[0]
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)

    got = dist.score([str(big)], cla, dask=cluster, progress=progress).csv_files()
    single = shrec_score.score([str(root / "one" / "run.npy")], cla).csv_files()
    assert killed and all(got[name] == single[name] for name in CSVS)
    cluster.wait_for_workers(2, timeout=30)
    assert killed[0] not in cluster.run(os.getpid).values()


def test_progress_runs_while_the_workers_are_busy_and_a_raise_there_cancels(data, cluster):
    """While no task comes back the progress callback is still called every
    0.1 s (each worker's one thread held by a task of the test's, which waits
    for an Event), so that a callback that raises (the CLI's check for a
    signal) cancels the tasks without waiting for one to end; the scheduler
    is left with none of ours."""
    import time

    from distributed import Event

    root, cla, _ = data
    release = Event("release-the-workers", client=cluster)
    workers = list(cluster.scheduler_info()["workers"])
    held = [cluster.submit(_wait_for, "release-the-workers", workers=[w], pure=False) for w in workers]
    deadline = time.monotonic() + 30
    while sum(len(keys) for keys in cluster.processing().values()) < len(workers) and time.monotonic() < deadline:
        time.sleep(0.02)
    seen = []

    class Enough(Exception):
        pass

    def progress(stage, done, total):
        seen.append(done)
        if len(seen) == 6:
            raise Enough

    try:
        with pytest.raises(Enough):
            dist.score([str(root / "z" / "run.zarr")], cla, dask=cluster, progress=progress)
    finally:
        release.set()
    assert seen == [0] * 6  # the first report, then five while the workers were held
    assert cluster.gather(held) == [True] * len(workers)
    cluster.cancel(held)  # the test's own tasks, released

    def tasks(dask_scheduler):
        return len(dask_scheduler.tasks)

    while cluster.run_on_scheduler(tasks) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert cluster.run_on_scheduler(tasks) == 0


def test_the_error_is_the_first_failing_tasks_in_order_not_the_first_back(cluster):
    """Two tasks fail, the second at once, the first after a second: the error raised is the first
    task's, as the tasks run one after the other would raise (the same error as in one process), not
    whichever came back first (a bug hunt saw the error change from run to run of --dask local:2)."""
    import time

    def slow_fail(shared):
        time.sleep(1.0)
        raise ValueError("the first task's error")

    def fast_fail(shared):
        raise ValueError("the second task's error")

    def fine(shared):
        return "fine"

    tasks = [(fine, (), 0), (slow_fail, (), 1), (fast_fail, (), 2), (fine, (), 3)]
    with pytest.raises(ValueError, match="the first task's error"):
        dist._run_on_cluster(cluster, None, None, None, tasks, lambda stage, done, total: None)
    assert dist._run_on_cluster(cluster, None, None, None, [(fine, (), 0), (fine, (), 1)], lambda *a: None) == ["fine", "fine"]


def _wait_for(name):
    """A task that holds its worker's thread until the Event ``name`` is set (30 s at most)."""
    from distributed import Event

    return Event(name).wait(30)


def test_ctrl_c_cancels_the_tasks_and_exits_130(data, cluster, tmp_path):
    """SIGINT while the cluster works: exit 130, 'interrupted', and the
    scheduler is left with no task of ours (the futures were cancelled)."""
    import signal
    import time

    root, cla, _ = data
    many = tmp_path / "run"
    _ok(["convert", str(root / "one" / "run.npy"), str(many), "--to", "npy-shards", "--chunk-rows", "3"])  # 80 tasks

    def tasks(dask_scheduler):
        return len(dask_scheduler.tasks)

    assert cluster.run_on_scheduler(tasks) == 0
    proc = subprocess.Popen(
        [sys.executable, "-m", "shrec_score.cli", str(many), "-r", cla, "--dask", cluster.scheduler.address, "--format", "csv"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=foreground_job,
    )
    deadline = time.monotonic() + 30
    while cluster.run_on_scheduler(tasks) < 5 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "shrec-score: interrupted" and out == ""
    while cluster.run_on_scheduler(tasks) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert cluster.run_on_scheduler(tasks) == 0


def test_miscellaneous_rows_and_separate_queries_match_the_single_process(tmp_path):
    """A class '-1' (its rows are no queries: a block may hold none) and a
    separate query classification (a rectangular matrix), with --matrix-order
    numeric; in this process (dask=None), the same tasks as on a cluster."""
    rng = np.random.default_rng(11)
    n = 90
    labels = [("-1" if k < 12 else f"c{k % 5}") for k in range(n)]
    cla = _cla(tmp_path / "all.cla", labels, prefix="")  # integer ids, listed class by class
    m = np.round(rng.random((n, n)), 1)
    np.save(tmp_path / "run.npy", m)
    _ok(["convert", str(tmp_path / "run.npy"), str(tmp_path / "run"), "--to", "npy-shards", "--chunk-rows", "10"])
    seen = []
    for kw in (dict(matrix_order="listing"), dict(matrix_order="numeric")):
        single = shrec_score.score([str(tmp_path / "run.npy")], cla, **kw).csv_files()
        got = dist.score([str(tmp_path / "run")], cla, **kw).csv_files()
        assert got["per_query.csv"] == single["per_query.csv"] and got["pr_curve.csv"] == single["pr_curve.csv"]
        assert single["per_query.csv"].count("\n") == n - 12 + 1
        seen.append(single["per_query.csv"])
    assert seen[0] != seen[1]  # the two orders read the rows differently
    # 30 queries against the 90 targets
    qcla = tmp_path / "queries.cla"
    qcla.write_text("PSB 1\n2 30\n\nc1 0 15\n" + "".join(f"q{k}\n" for k in range(15)) + "\nc2 0 15\n" + "".join(f"q{k}\n" for k in range(15, 30)))
    kw = dict(matrix_order="listing")
    np.save(tmp_path / "rect.npy", np.round(rng.random((30, n)), 1))
    _ok(["convert", str(tmp_path / "rect.npy"), str(tmp_path / "rect"), "--to", "zarr", "--chunk-rows", "7"])
    single = shrec_score.score([str(tmp_path / "rect.npy")], cla, queries=str(qcla), **kw).csv_files()
    got = dist.score([str(tmp_path / "rect")], cla, queries=str(qcla), **kw).csv_files()
    assert got["per_query.csv"] == single["per_query.csv"] and got["per_run.csv"] == single["per_run.csv"]


@pytest.mark.parametrize("ties", ["expected", "pessimistic"])
def test_tie_modes_on_the_cluster_write_the_single_process_csvs(data, cluster, ties):
    """--ties: the blocks carry their tie groups (binary measures) or are
    ranked with them (graded), as the single process does."""
    root, cla, _ = data
    rule = shrec_score.score([str(root / "one" / "run.npy")], cla).csv_files()["per_query.csv"]
    for kw in (dict(), dict(grades="sister")):
        single = shrec_score.score([str(root / "one" / "run.npy")], cla, ties=ties, **kw).csv_files()
        got = dist.score([str(root / "z" / "run.zarr")], cla, dask=cluster, ties=ties, **kw).csv_files()
        assert {k: v for k, v in got.items() if k.endswith(".csv")} == {k: v for k, v in single.items() if k.endswith(".csv")}
        if not kw:
            assert single["per_query.csv"] != rule  # the matrix's ties do move the values


def test_bad_input_on_a_local_cluster_is_one_line_on_stderr(tmp_path):
    """The local:N workers write to our stderr: a task's bad input must come
    back as the one-line error only, not also as the workers' error log."""
    folder = tmp_path / "runs"
    folder.mkdir()
    np.save(folder / "short.npy", np.zeros((3, 6), dtype=np.float32))  # 3 rows for 6 queries
    cla = tmp_path / "c.cla"
    cla.write_text("PSB 1\n2 6\n\na 0 3\n0\n1\n2\nb 0 3\n3\n4\n5\n")
    out = subprocess.run(
        [sys.executable, "-m", "shrec_score.cli", str(folder), "-r", str(cla), "--dask", "local:1", "--format", "csv"],
        capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.startswith("Error: ") and "short.npy" in out.stderr and "6 x 6" in out.stderr


def test_a_missing_zarr_chunk_is_refused_naming_it(data, tmp_path, capsys):
    """issue 30.4: zarr reads a missing chunk as its fill value (zeros): refused, with or without --dask."""
    root, cla, _ = data
    bad = tmp_path / "run.zarr"
    shutil.copytree(root / "z" / "run.zarr", bad)
    os.remove(bad / "c" / "2" / "0")
    capsys.readouterr()
    assert _run([str(bad), "-r", cla, "--format", "csv"]) == 2
    err = capsys.readouterr().err
    assert err == f"Error: {bad / 'c' / '2' / '0'}: expected every chunk of the Zarr array (a missing one would be read as zeros), got 1 of 7 chunks missing\n"


def test_a_manifest_naming_one_shard_twice_or_a_string_shape_is_refused(data, tmp_path, capsys):
    """issue 30.11 and 30.25: one file for two row ranges; "shape": "44"."""
    import json

    root, cla, _ = data
    bad = tmp_path / "run"
    shutil.copytree(root / "s" / "run", bad)
    manifest = json.loads((bad / "manifest.json").read_text())
    manifest["shards"][1]["file"] = manifest["shards"][0]["file"]
    (bad / "manifest.json").write_text(json.dumps(manifest))
    capsys.readouterr()
    assert _run([str(bad), "-r", cla, "--format", "csv"]) == 2
    assert capsys.readouterr().err == f"Error: {bad / 'manifest.json'}: expected one shard file per row range, got 'rows-000000.npy' named twice\n"
    manifest = json.loads((root / "s" / "run" / "manifest.json").read_text())
    manifest["shape"] = "44"
    (bad / "manifest.json").write_text(json.dumps(manifest))
    assert _run([str(bad), "-r", cla, "--format", "csv"]) == 2
    assert capsys.readouterr().err == f"Error: {bad / 'manifest.json'}: expected \"shape\": [rows, columns] (a list of two whole numbers) in the manifest, got '44'\n"


def test_convert_never_writes_a_block_larger_than_the_matrix(tmp_path):
    """issue 30.18: a 4 x 4 matrix with --chunk-rows 100000000 is one block of 4 rows (64 bytes of data)."""
    from shrec_score.io.chunked import open_row_blocks

    np.save(tmp_path / "m.npy", np.arange(16, dtype=np.float32).reshape(4, 4))
    for layout in ("zarr", "npy-shards"):
        out = tmp_path / layout
        _ok(["convert", str(tmp_path / "m.npy"), str(out), "--to", layout, "--chunk-rows", "100000000"])
        assert open_row_blocks(str(out)).blocks == [(0, 4)]
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(out) for f in fs)
        assert size < 4096, size


def test_convert_names_out_and_the_rows_it_wrote(tmp_path, capsys):
    """A bug hunt: into a folder that does not exist, --to npy-shards named its staging folder
    ('.run.shrec-score-....tmp: No such file or directory') and --to zarr made the parents; without
    --chunk-rows a 40-row matrix said 'blocks of 209715 rows'.  Now both refuse naming OUT and its
    missing folder, and the summary says the block it wrote."""
    np.save(tmp_path / "m.npy", np.arange(1600, dtype=np.float32).reshape(40, 40))
    for layout in ("zarr", "npy-shards"):
        out = tmp_path / "nowhere" / "run"
        capsys.readouterr()
        assert _run(["convert", str(tmp_path / "m.npy"), str(out), "--to", layout]) == 2
        assert capsys.readouterr().err == f"Error: {out}: expected a new folder in a folder that exists, got no folder '{tmp_path / 'nowhere'}'\n"
        assert not (tmp_path / "nowhere").exists()
        _ok(["convert", str(tmp_path / "m.npy"), str(tmp_path / layout), "--to", layout])
        assert capsys.readouterr().err == f"{tmp_path / layout}: 40 x 40 float32, blocks of 40 rows ({layout})\n"


def test_check_reads_zarr_and_shards_as_score_does(data, tmp_path, capsys):
    """issue 30.19: check passes the Zarr and .npy-shard runs that score scores,
    and refuses a missing chunk, a NaN cell or a wrong shape as score does."""
    root, cla, _ = data
    for run in (root / "z" / "run.zarr", root / "s" / "run"):
        capsys.readouterr()
        assert _run(["check", str(run), "-r", cla]) == 0, capsys.readouterr()
        assert capsys.readouterr().err.endswith("0 error(s), 0 warning(s): the runs would score\n")
    bad = tmp_path / "run.zarr"
    shutil.copytree(root / "z" / "run.zarr", bad)
    os.remove(bad / "c" / "2" / "0")
    capsys.readouterr()
    assert _run(["check", str(bad), "-r", cla]) == 2
    out = capsys.readouterr().out
    assert out == f"{bad / 'c' / '2' / '0'}: error: expected every chunk of the Zarr array (a missing one would be read as zeros), got 1 of 7 chunks missing\n"
    shards = tmp_path / "s"
    shutil.copytree(root / "s" / "run", shards)
    cells = np.load(shards / "rows-000002.npy")
    cells[16, 5] = np.nan
    np.save(shards / "rows-000002.npy", cells)
    assert _run(["check", str(shards), "-r", cla]) == 2
    assert capsys.readouterr().out == f"{shards / 'rows-000002.npy'}:17: error: row 117 column 6 is NaN\n"
    # two broken shards (one cut short, one not a .npy) and the NaN cell: each named, none stops the others
    (shards / "rows-000001.npy").write_bytes((shards / "rows-000001.npy").read_bytes()[:-100])
    (shards / "rows-000004.npy").write_bytes(b"not a npy file\n")
    assert _run(["check", str(shards), "-r", cla]) == 2
    out = capsys.readouterr().out.splitlines()
    assert [line.split(": error: ")[0] for line in out] == [str(shards / f) for f in ("rows-000001.npy", "rows-000002.npy:17", "rows-000004.npy")]


def test_the_cli_silences_distributed_s_loggers_for_the_call_only(data, cluster, tmp_path, monkeypatch):
    """issue 30.14: while --dask runs, no logger of distributed (nor tornado's,
    asyncio's) writes even a CRITICAL record; after the call each has its own
    level back (here one a user set).  The library alone changes no level."""
    import logging

    root, cla, _ = data
    names = ["distributed", "distributed.client", "distributed.scheduler", "distributed.worker", "tornado", "asyncio"]
    monkeypatch.setattr(logging.getLogger("distributed.client"), "level", logging.INFO)  # a user's choice
    before = {n: logging.getLogger(n).level for n in names}
    during = []
    real = dist._run_on_cluster

    def spy(*args, **kwargs):
        during.append({n: logging.getLogger(n).isEnabledFor(logging.CRITICAL) for n in names})
        return real(*args, **kwargs)

    monkeypatch.setattr(dist, "_run_on_cluster", spy)
    _ok([str(root / "z" / "run.zarr"), "-r", cla, "--dask", cluster.scheduler.address, "--format", "csv", "--quiet", "--out", str(tmp_path / "o")])
    assert during == [dict.fromkeys(names, False)]
    assert {n: logging.getLogger(n).level for n in names} == before
    dist.score([str(root / "z" / "run.zarr")], cla, dask=cluster)
    assert during[1] == dict.fromkeys(names, True)
    assert {n: logging.getLogger(n).level for n in names} == before


def test_a_nan_cell_is_named_alike_whatever_the_layout_and_the_query_order(cluster, tmp_path):
    """Queries listed 5 4 3 2 1 0, rows in numeric order 0..5, NaN cells at rows 1 and 4: every layout, in one
    process or on the cluster, names the first NaN cell in row order (row 2, column 3), not the first met in
    query order (row 5, the .npy path's answer before) or in the first task's rows (a Zarr chunk's, before)."""
    from shrec_score.errors import InputError

    (tmp_path / "c.cla").write_text("PSB 1\n2 6\n\nA 0 3\n5\n4\n3\n\nB 0 3\n2\n1\n0\n")
    m = np.arange(36, dtype=np.float32).reshape(6, 6)
    m[4, 0] = m[1, 2] = np.nan
    np.save(tmp_path / "m.npy", m)
    (tmp_path / "m.txt").write_text("".join(" ".join(str(x) for x in row) + "\n" for row in m.tolist()))
    for layout in ("zarr", "npy-shards"):
        _ok(["convert", str(tmp_path / "m.npy"), str(tmp_path / layout), "--to", layout, "--chunk-rows", "2"])
    said = "expected a number in every cell; row 2 (query '1') column 3, got NaN"
    for run, where in (("m.npy", "m.npy"), ("m.txt", "m.txt"), ("zarr", "zarr/c/0/0"), ("npy-shards", "npy-shards/rows-000000.npy")):
        for dask in (None, cluster) if run in ("zarr", "npy-shards") else (None,):
            score = shrec_score.score if dask is None and run.startswith("m.") else dist.score
            kwargs = {} if score is shrec_score.score else {"dask": dask}
            with pytest.raises(InputError) as got:
                score([tmp_path / run], tmp_path / "c.cla", matrix_order="numeric", **kwargs)
            assert str(got.value) == f"{tmp_path / where}:2: {said}", (run, dask)
    # the NaN left, row 5 column 1, is the first row of the third block: a store names its file and line 1 there
    m[1, 2] = 1.0
    np.save(tmp_path / "m.npy", m)
    for layout in ("zarr", "npy-shards"):
        _ok(["convert", str(tmp_path / "m.npy"), str(tmp_path / f"{layout}2"), "--to", layout, "--chunk-rows", "2"])
    said = "expected a number in every cell; row 5 (query '4') column 1, got NaN"
    for run, where in (("m.npy", "m.npy:5"), ("zarr2", "zarr2/c/2/0:1"), ("npy-shards2", "npy-shards2/rows-000002.npy:1")):
        for dask in (None, cluster) if run != "m.npy" else (None,):
            score = shrec_score.score if dask is None and run == "m.npy" else dist.score
            with pytest.raises(InputError) as got:
                score([tmp_path / run], tmp_path / "c.cla", matrix_order="numeric", **({} if dask is None else {"dask": dask}))
            assert str(got.value) == f"{tmp_path / where}: {said}", (run, dask)
