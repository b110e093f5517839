"""Each input file is checked once per read (issue 29): stat'ed at most once by our code (click's own Path check
aside) and opened once per read, through shrec_score.score and through the CLI."""

from __future__ import annotations

import os
import sys
from collections import Counter

import numpy as np
import pytest

import shrec_score
from shrec_score import cli

#: a classification of 4 models in 2 classes (a: m1 m2, b: m3 m4)
CLA = "PSB 1\n2 4\na 0 2\nm1\nm2\nb 0 2\nm3\nm4\n"
IDS = ["m1", "m2", "m3", "m4"]
_counts: list[Counter[tuple[str, str]]] = []  # the counting test's counters (an audit hook cannot be removed)


def _audit(event: str, args: tuple) -> None:
    if _counts and event in ("open", "os.listdir", "os.scandir") and args and isinstance(args[0], (str, bytes, os.PathLike)):
        _counts[-1][(event.removeprefix("os."), os.fsdecode(args[0]))] += 1


sys.addaudithook(_audit)


@pytest.fixture
def counted(monkeypatch):
    """Opens, listings and stats per path while the test runs; the stats of click's Path check and of pyarrow's
    CSV reader (it opens an uncompressed TREC file itself, an open no audit event shows) are not ours."""
    import pyarrow.csv as pcsv

    counts: Counter[tuple[str, str]] = Counter()
    in_pyarrow = []
    for name in ("stat", "lstat"):
        real = getattr(os, name)

        def wrapper(path, *a, _real=real, **k):
            if not in_pyarrow and not sys._getframe(1).f_globals.get("__name__", "").startswith("click") and isinstance(path, (str, bytes, os.PathLike)):
                counts[("stat", os.fsdecode(path))] += 1
            return _real(path, *a, **k)

        monkeypatch.setattr(os, name, wrapper)

    def read_csv(*a, _real=pcsv.read_csv, **k):
        in_pyarrow.append(True)
        try:
            return _real(*a, **k)
        finally:
            in_pyarrow.pop()

    monkeypatch.setattr(pcsv, "read_csv", read_csv)
    _counts.append(counts)
    yield counts
    _counts.remove(counts)


def _inputs(tmp_path, case):
    """(RUNS, relevance, extra options, the input files and folders) of a case: every one of them in tmp_path."""
    (tmp_path / "c.cla").write_text(CLA)
    if case == "matrix":
        np.save(tmp_path / "m.npy", np.array([[0, 1, 2, 3], [1, 0, 3, 2], [2, 3, 0, 1], [3, 2, 1, 0]], dtype=np.float32))
        return [tmp_path / "m.npy"], tmp_path / "c.cla", ["--matrix-order", "listing"]
    if case == "lists":
        for run in ("A", "B"):
            (tmp_path / "runs" / run).mkdir(parents=True)
            for q in IDS:
                (tmp_path / "runs" / run / f"{q}.txt").write_text("".join(f"{t} {k}\n" for k, t in enumerate(IDS if run == "A" else IDS[::-1])))
        return [tmp_path / "runs"], tmp_path / "c.cla", []
    (tmp_path / "q.qrels").write_text("".join(f"{q} 0 {t} {int(q[1] <= '2' and t[1] <= '2' or q[1] > '2' and t[1] > '2')}\n" for q in IDS for t in IDS))
    (tmp_path / "r.run").write_text("".join(f"{q} Q0 {t} {k} {9 - k} tag\n" for q in IDS for k, t in enumerate(IDS, 1)))
    return [tmp_path / "r.run"], tmp_path / "q.qrels", []


def _checked(counts, tmp_path):
    """The counts of tmp_path's files and folders, each file's opens and stats and each folder's listings."""
    mine = {(what, p): n for (what, p), n in list(counts.items()) if p.startswith(str(tmp_path)) and os.path.exists(p)}
    files = {p for _, p in mine if os.path.isfile(p)}
    folders = {p for _, p in mine if os.path.isdir(p)}
    return (
        {p: mine.get(("open", p), 0) for p in files},
        {p: mine.get(("stat", p), 0) for p in files},
        {p: mine.get(("listdir", p), 0) + mine.get(("scandir", p), 0) for p in folders},
    )


@pytest.mark.parametrize("case", ["matrix", "lists", "trec"])
@pytest.mark.parametrize("how", ["api", "cli"])
def test_each_input_file_is_stat_ed_once_and_opened_once(tmp_path, counted, case, how):
    runs, relevance, extra = _inputs(tmp_path, case)
    counted.clear()  # (writing them opened them)
    if how == "api":
        report = shrec_score.score([str(r) for r in runs], str(relevance), matrix_order="listing" if extra else None)
        assert report.leaderboard.shape[0] == (2 if case == "lists" else 1)
    else:
        with pytest.raises(SystemExit) as done:
            cli.main([*map(str, runs), "-r", str(relevance), "--format", "csv", "--quiet", *extra])
        assert done.value.code == 0
    opens, stats, listings = _checked(counted, tmp_path)
    inputs = {str(relevance), *(str(p) for r in runs for p in ([r] if r.is_file() else r.rglob("*.txt")))}
    # a run file told by its content is read twice: its head and first line (--run-format auto), then whole;
    # a .npy matrix: its header, then its rows (a RowFile opens it for each read of rows)
    twice = {str(tmp_path / "r.run"), str(tmp_path / "m.npy")}
    assert {p: 2 if p in twice else 1 for p in inputs} == opens
    assert {p: n for p, n in stats.items() if n > 1} == {}
    assert {str(f): 1 for r in runs if r.is_dir() for f in (r, *r.iterdir())} == listings  # a folder of runs and each run folder


@pytest.mark.parametrize("kind", ["gzip", "bz2", "lzma", "zstd"])
def test_a_compressed_relevance_is_told_and_read_through_one_open(tmp_path, counted, kind):
    """The head that tells qrels from a .cla is read from the open decompressed stream, which then starts again
    (Decompressed.seek(0)).  AP by hand: q1, q2 find their two relevant targets at ranks 1, 2 (AP 1); q3, q4 at
    ranks 3, 4 ((1/3 + 2/4) / 2 = 5/12): MAP = (2 + 10/12) / 4 = 17/24."""
    if kind == "zstd":
        zstd = pytest.importorskip("zstandard", reason="the zstd extra")
        pack = zstd.ZstdCompressor().compress
    else:
        pack = __import__(kind).compress
    runs, relevance, _ = _inputs(tmp_path, "trec")
    packed = tmp_path / "q.qrels.packed"
    packed.write_bytes(pack(relevance.read_bytes()))
    counted.clear()
    report = shrec_score.score([str(runs[0])], str(packed), measures=["AP"])
    assert report.leaderboard["AP"].tolist() == [pytest.approx(17 / 24, abs=1e-12)]
    opens, stats, _ = _checked(counted, tmp_path)
    assert (opens[str(packed)], stats[str(packed)]) == (1, 1)


def test_a_folder_holding_a_row_block_matrix_is_listed_once_by_the_cli(tmp_path, counted, capsys):
    """The CLI's one discovery finds the .npy shards among the ranked-list runs (it listed every RUNS folder
    once more before).  NN by hand: the matrix puts each model's class mate first (1.0); run A lists m1..m4
    for every query (the own item left out), so m1 and m2 find theirs first, m3 and m4 do not (0.5)."""
    from shrec_score.io.chunked import write_row_blocks

    runs, relevance, _ = _inputs(tmp_path, "lists")
    m = np.array([[0, 1, 2, 3], [1, 0, 3, 2], [2, 3, 0, 1], [3, 2, 1, 0]], dtype=np.float32)
    write_row_blocks(str(tmp_path / "runs" / "S"), "npy-shards", m, m.dtype, 2)
    counted.clear()
    with pytest.raises(SystemExit) as done:
        cli.main([str(runs[0]), "-r", str(relevance), "--format", "csv", "--quiet", "-m", "NN", "--matrix-order", "listing"])
    assert done.value.code == 0
    rows = dict(line.split(",")[1::2] for line in capsys.readouterr().out.splitlines()[1:])  # run -> NN
    assert {run: float(nn) for run, nn in rows.items()} == {"S": 1.0, "A": 0.5, "B": 0.5}
    assert _checked(counted, tmp_path)[2][str(runs[0])] == 1


@pytest.mark.parametrize("how", ["api", "cli"])
def test_collection_and_id_map_are_each_opened_once(tmp_path, counted, capsys, how):
    """Qrels, a --collection .cla and an --id-map file: one stat and one open each.  The run spells the ids without
    their "m", the id map maps them back (1 -> m1 ...); AP by hand as in the compressed-relevance test: 17/24."""
    runs, relevance, _ = _inputs(tmp_path, "trec")
    runs[0].write_text(runs[0].read_text().replace("m", ""))  # 1 Q0 1 ... for m1 Q0 m1 ...
    (tmp_path / "ids.map").write_text("".join(f"{i} m{i}\n" for i in range(1, 5)))
    counted.clear()
    if how == "api":
        report = shrec_score.score([str(runs[0])], str(relevance), collection=str(tmp_path / "c.cla"), id_map=str(tmp_path / "ids.map"), measures=["AP"])
        assert report.leaderboard["AP"].tolist() == [pytest.approx(17 / 24, abs=1e-12)]
    else:
        with pytest.raises(SystemExit) as done:
            cli.main([str(runs[0]), "-r", str(relevance), "--collection", str(tmp_path / "c.cla"), "--id-map", str(tmp_path / "ids.map"), "-m", "AP", "--format", "csv", "--quiet"])
        assert done.value.code == 0 and float(capsys.readouterr().out.splitlines()[1].split(",")[-1]) == pytest.approx(17 / 24, abs=1e-12)
    opens, stats, _ = _checked(counted, tmp_path)
    assert {p: opens[p] for p in (str(relevance), str(tmp_path / "c.cla"), str(tmp_path / "ids.map"))} == dict.fromkeys(
        (str(relevance), str(tmp_path / "c.cla"), str(tmp_path / "ids.map")), 1)
    assert {p: n for p, n in stats.items() if n > 1} == {}


@pytest.mark.parametrize("how", ["score", "check"])
def test_a_run_folder_is_listed_once_with_its_clutter_note(tmp_path, counted, capsys, how):
    """A RUNS argument that is one run folder holding a readme.txt: discovery lists it once, and its note on the
    clutter, the reader and check_runs use that listing.  NN by hand: run A lists m1..m4 for every query (the own
    item left out), so m1 and m2 find their class mate first, m3 and m4 do not: 0.5."""
    from shrec_score.check import check_runs

    runs, relevance, _ = _inputs(tmp_path, "lists")
    (runs[0] / "A" / "readme.txt").write_text("our method\n")
    rel = shrec_score.load_relevance(str(relevance))
    counted.clear()
    note = f"{runs[0] / 'A'}: 1 entries that are not ranked lists passed over (readme.txt)"
    if how == "check":
        assert [str(p) for p in check_runs([str(runs[0] / "A")], rel)] == [note.replace(": 1", ": note: 1")]
    else:
        report = shrec_score.score([str(runs[0] / "A")], rel, measures=["NN"])
        assert (report.leaderboard["NN"].tolist(), report.warnings) == ([0.5], [note])
    assert _checked(counted, tmp_path)[2] == {str(runs[0] / "A"): 1}
