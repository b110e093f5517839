"""The fixed-layout reader of ranked-list folders (io/lists_fixed.py): its id
table against a dict, its 8-bytes-at-a-time check against the per-byte rule,
and whole runs against the reference reader (io/lists.py) and the general
batch path: the same lists, the same errors and line numbers."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from shrec_score import model
from shrec_score.io import lists_batch, lists_fixed
from shrec_score.io.cla import read_classification
from shrec_score.io.lists_fixed import IdTable, Layout
from shrec_score.model import Classification, RankedRun
from shrec_score.relevance import Relevance

from .conftest import shared_path
from .test_lists_batch import INDEX, QUERIES, TARGETS, assert_same, read, write_run


def _probe(table: IdTable, rng: np.random.Generator, n: int) -> list[bytes]:
    """Random ids whose every byte lies in the table's range at its place (the lookup's precondition)."""
    cols = [rng.integers(int(a), int(b) + 1, n) for a, b in zip(table.lo, table.hi)]
    return [bytes(int(c[k]) for c in cols) for k in range(n)]


def _lookup(table: IdTable, ids: list[bytes]) -> list[int]:
    width = len(table.lo)
    rows = np.frombuffer(b"".join(ids), dtype=np.uint8).reshape(len(ids), width)
    out = np.empty(len(ids), dtype=np.int64)
    table.lookup(rows, out, np.empty((2, len(ids)), dtype=np.int32))
    return out.tolist()


@pytest.mark.parametrize(
    "make",
    [
        lambda rng: [f"M{i:05d}" for i in rng.choice(99_999, 3000, replace=False) + 1],  # SHREC 2014-like, with gaps
        lambda rng: [str(i) for i in range(1000, 1815)],  # PSB-like numbers of one width
        lambda rng: ["".join(chr(c) for c in rng.integers(97, 103, 4)) for _ in range(600)],  # letters a-f
        lambda rng: [f"{c}{i:03d}" for c in "ABZ" for i in range(0, 1000, 3)],  # a varying first byte
        lambda rng: ["x"],  # one id: no varying place
    ],
    ids=["shrec14", "psb", "letters", "prefixes", "single"],
)
def test_id_table_against_a_dict(make):
    """Every id in the table's ranges gets its index or -1, as a dict lookup."""
    rng = np.random.default_rng(20)
    ids = list(dict.fromkeys(make(rng)))
    index = {t: 3 * k + 1 for k, t in enumerate(ids)}
    width = len(ids[0])
    table = IdTable.build([t.encode() for t in ids], np.array(list(index.values())), width)
    assert table is not None
    probe = [t.encode() for t in ids] + _probe(table, rng, 2000)
    assert _lookup(table, probe) == [index.get(p.decode(), -1) for p in probe]


def test_id_table_refuses_what_it_cannot_hold():
    rng = np.random.default_rng(21)
    wide = ["".join(chr(c) for c in rng.integers(33, 127, 8)) for _ in range(100)]  # 94^8 values
    assert IdTable.build([t.encode() for t in wide], np.arange(100), 8) is None
    assert IdTable.build([b"ab", b"cd"], np.arange(2), 3) is None  # no id of that width
    assert IdTable.build(["é1".encode(), "é2".encode()], np.arange(2), 3) is None  # not ASCII
    mixed = IdTable.build([b"a1", b"b22", b"a3"], np.arange(3), 2)  # only the ids of the width
    assert mixed is not None and _lookup(mixed, [b"a1", b"a3", b"a2"]) == [0, 2, -1]


@pytest.mark.parametrize("line", [b"M00001 0.123456", b"M00001 12", b"ab .5", b"1234 5.", b"M00001", b"q9 3.25"])
def test_check_against_the_per_byte_rule(line):
    """The SWAR check of a byte matrix equals the plain rule (every byte within
    its column's range) on valid matrices with one byte changed, for line
    lengths that are and are not a multiple of 8, and line counts with a tail."""
    rng = np.random.default_rng(22)
    shape = Layout.of(line)
    assert shape is not None
    fields, width = shape
    ids = [line[:width][:-1] + bytes([c]) for c in range(48, 58)]
    table = IdTable.build(ids, np.arange(10), width)
    assert table is not None
    layout = Layout(line, fields, table)
    for n_lines in (1, 7, layout.pattern_lines - 1, layout.pattern_lines * 3 + 5):
        base = np.frombuffer(line + b"\n", dtype=np.uint8)
        m = np.tile(base, (n_lines, 1))
        digits = (layout.lo == 48) & (layout.hi == 57)
        m[:, digits] = rng.integers(48, 58, (n_lines, int(digits.sum())))
        m[:, width - 1] = rng.integers(48, 58, n_lines)
        work = np.empty((2, max(lists_fixed.BLOCK_BYTES // 8, layout.add.size)), dtype=np.uint64)
        assert layout.check(np.ascontiguousarray(m).ravel(), n_lines, work)
        for _ in range(60):
            bad = m.copy()
            r, c = int(rng.integers(n_lines)), int(rng.integers(layout.line))
            bad[r, c] = rng.integers(0, 256)
            expected = bool(((bad >= layout.lo) & (bad <= layout.hi)).all())
            assert layout.check(np.ascontiguousarray(bad).ravel(), n_lines, work) == expected


def _fixed_run(tmp_path, rng, **kw):
    write_run(tmp_path / "r", rng, **kw)
    return [(q, str(tmp_path / "r" / f"{q}.txt")) for q in QUERIES]


def test_machine_written_runs_take_only_the_fixed_path(tmp_path, monkeypatch):
    """With and without a header line, with and without distances, in chunks
    of a few files and two threads: every file taken by lists_fixed, the same
    lists as the reference reader, one array without a concatenation."""
    monkeypatch.setattr(lists_batch, "CHUNK_BYTES", 10_000)
    taken = []
    real = lists_batch.read_fixed
    one_array = model._one_array
    joined: list[bool] = []
    monkeypatch.setattr(lists_batch, "read_fixed", lambda *a: taken.append(real(*a)) or taken[-1])
    for k, style in enumerate([{}, {"header": True}, {"distances": False}, {"decimals": 2, "n_targets": 77}]):
        taken.clear()
        folder = tmp_path / str(k)
        _fixed_run(folder, np.random.default_rng(23 + k), **style)
        expected = read(folder / "r", batch=False)
        joined.clear()  # RankedRun.from_lists found the lists laid end to end in one array: no concatenation
        monkeypatch.setattr(model, "_one_array", lambda arrays: (lambda r: joined.append(r is not None) or r)(one_array(arrays)))
        got = read(folder / "r", batch=True)
        monkeypatch.setattr(model, "_one_array", one_array)
        assert got == expected and joined == [True]
        assert len(taken) > 2 and all(not rest for _, rest in taken)
        assert sum(len(done) for done, _ in taken) == len(QUERIES)


def test_a_run_longer_than_its_first_chunk_foretells(tmp_path, monkeypatch):
    """The first chunk's lines are long (17 decimals), the later ones short
    (no decimals): the array sized from the first chunk overflows, the later
    chunks get arrays of their own, and the run is joined by a copy: the
    same lists as the reference."""
    monkeypatch.setattr(lists_batch, "CHUNK_BYTES", 30_000)
    rng = np.random.default_rng(31)
    write_run(tmp_path / "r", rng, decimals=0)
    write_run(tmp_path / "long", rng, decimals=17)
    for q in QUERIES[:4]:
        (tmp_path / "r" / f"{q}.txt").write_bytes((tmp_path / "long" / f"{q}.txt").read_bytes())
    assert_same(tmp_path / "r")
    joined, taken = [], []
    real = RankedRun.from_lists
    monkeypatch.setattr(RankedRun, "from_lists", lambda *a: joined.append(1) or real(*a))
    real_fixed = lists_batch.read_fixed
    monkeypatch.setattr(lists_batch, "read_fixed", lambda *a: taken.append(real_fixed(*a)) or taken[-1])
    assert read(tmp_path / "r", batch=True) == read(tmp_path / "r", batch=False)
    assert all(not rest for _, rest in taken) and sum(len(done) for done, _ in taken) == len(QUERIES)
    assert joined == [1, 1]  # the batch read joined its lists by a copy (and the reference read)


def test_files_of_other_layouts_in_a_chunk(tmp_path):
    """Files whose lines have another length or layout than the chunk's first
    (other decimals, CRLF, a header only in some, ids of another width) go to
    the general path; the run reads as with the reference."""
    rng = np.random.default_rng(30)
    write_run(tmp_path / "r", rng)
    for k, style in enumerate([{"decimals": 3}, {"eol": "\r\n"}, {"header": True}, {"distances": False}]):
        write_run(tmp_path / f"o{k}", rng, **style)
        for q in QUERIES[k::5]:
            (tmp_path / "r" / f"{q}.txt").write_bytes((tmp_path / f"o{k}" / f"{q}.txt").read_bytes())
    path = tmp_path / "r" / f"{QUERIES[4]}.txt"
    path.write_text(path.read_text().replace("M", "MM"))  # ids of another width: unknown ids
    assert "expected a target id of the collection" in assert_same(tmp_path / "r")
    index = dict(INDEX) | {"M" + t: len(INDEX) + k for k, t in enumerate(TARGETS)}
    assert not isinstance(assert_same(tmp_path / "r", index=index), str)


@pytest.mark.parametrize("column", range(16))
def test_a_byte_changed_in_any_column(tmp_path, column):
    """``M00001 0.123456``: one byte of one line (the 8th file, line 120) set to a
    space, a tab, a letter, a digit, a dot, a non-ASCII byte or a CR: the same
    lists or the same one-line error as the reference, strict and lenient."""
    rng = np.random.default_rng(40 + column)
    write_run(tmp_path / "r", rng)
    path = tmp_path / "r" / f"{QUERIES[7]}.txt"
    original = path.read_bytes()
    start = sum(len(line) for line in original.splitlines(keepends=True)[:119])
    for value in b" \tZ7.\xff\r":
        data = bytearray(original)
        data[start + column] = value
        path.write_bytes(bytes(data))
        assert_same(tmp_path / "r")


def _ragged_run(folder, rng, *, header=False):
    """Distances of several lengths (``5.25``, ``12.125``, ``7``, ``.5``), as
    a ``%g``-like writer gives them: lines of one id width, several lengths."""
    folder.mkdir(parents=True, exist_ok=True)
    for q in QUERIES:
        order = rng.permutation(len(TARGETS))
        dist = np.sort(rng.random(order.size) * 40)
        rows = [f"{TARGETS[j]} {d:.{k}f}".replace(" 0.", " .") for j, d, k in zip(order, dist, rng.integers(0, 5, order.size))]
        (folder / f"{q}.txt").write_text((f"{q}\n" if header else "") + "\n".join(rows) + "\n")


@pytest.mark.parametrize("header", [False, True])
def test_ragged_lines_take_the_fixed_path(tmp_path, monkeypatch, header):
    """Lines of one id width whose distances have several lengths: every file
    read by lists_fixed (the ragged parse), the same lists as the reference."""
    monkeypatch.setattr(lists_batch, "CHUNK_BYTES", 20_000)
    _ragged_run(tmp_path / "r", np.random.default_rng(80), header=header)
    taken = []
    real = lists_batch.read_fixed
    monkeypatch.setattr(lists_batch, "read_fixed", lambda *a: taken.append(real(*a)) or taken[-1])
    assert_same(tmp_path / "r")
    assert taken and all(not rest for _, rest in taken)


def test_a_byte_changed_in_a_ragged_file(tmp_path):
    """Random bytes of ragged lines set to a space, a tab, a letter, a digit,
    a dot, a minus, a newline, a non-ASCII byte or a CR: the same lists or the
    same one-line error as the reference, strict and lenient."""
    rng = np.random.default_rng(81)
    _ragged_run(tmp_path / "r", rng)
    path = tmp_path / "r" / f"{QUERIES[7]}.txt"
    original = path.read_bytes()
    for value in b" \tZ7.-\n\xff\r":
        for at in rng.integers(0, len(original) - 1, 3).tolist():
            data = bytearray(original)
            data[at] = value
            path.write_bytes(bytes(data))
            assert_same(tmp_path / "r")


def test_a_distance_longer_than_a_line_may_be(tmp_path):
    """A ragged line whose distance makes it longer than 1 MiB: the
    reference's error (line too long, its number), not a list."""
    _ragged_run(tmp_path / "r", np.random.default_rng(82))
    path = tmp_path / "r" / f"{QUERIES[5]}.txt"
    rows = path.read_text().splitlines()
    path.write_text("\n".join(rows[:2] + [rows[2].split()[0] + " 1" + "0" * (1 << 20)] + rows[3:]) + "\n")
    assert ":3: " in assert_same(tmp_path / "r")
    path.write_text("\n".join(rows[:2] + [rows[2].split()[0] + " 1" + "0" * ((1 << 20) - 8)] + rows[3:]) + "\n")
    assert not isinstance(assert_same(tmp_path / "r"), str)  # just under: a (large) distance


def test_unknown_ids_in_range_and_repeats(tmp_path):
    """Ids within the table's ranges that no target has (M00301-M00399 with
    300 targets), and a repeated target: the reference's errors, its line."""
    write_run(tmp_path / "r", np.random.default_rng(50))
    path = tmp_path / "r" / f"{QUERIES[12]}.txt"
    rows = path.read_text().splitlines()
    path.write_text("\n".join(rows[:9] + ["M00350 0.500000"] + rows[10:]) + "\n")
    assert f"{path}:10: expected a target id of the collection" in assert_same(tmp_path / "r")
    path.write_text("\n".join(rows[:9] + [rows[3]] + rows[10:]) + "\n")
    assert f"{path}:10: expected each target once" in assert_same(tmp_path / "r")
    assert "expected each target once" in assert_same(tmp_path / "r", unjudged=300)


@pytest.mark.parametrize("ragged", [False, True], ids=["fixed", "ragged"])
def test_the_fixed_path_imports_no_pyarrow(tmp_path, ragged):
    """A machine-written run is read without importing pyarrow (its import is
    start-up time that the fixed path does not need)."""
    if ragged:
        _ragged_run(tmp_path / "r", np.random.default_rng(60))
    else:
        _fixed_run(tmp_path, np.random.default_rng(60))
    code = (
        "import sys\n"
        "from shrec_score.io.lists_batch import parse_lists\n"
        f"index = {{f'M{{i:05d}}': i - 1 for i in range(1, {len(TARGETS) + 1})}}\n"
        f"files = [(q, f'{tmp_path}/r/{{q}}.txt') for q in {QUERIES!r}]\n"
        "out = parse_lists(files, index, threads=2)\n"
        "assert all(o is not None for o in out)\n"
        "print('pyarrow' in sys.modules)\n"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"


def test_class_gains_against_the_table_lookup():
    """ClassRelevance.gains (one take in a class x target table) against two
    lookups in the class x class table, with sister grades; targets outside
    the collection fall back to the plain lookup."""
    rng = np.random.default_rng(70)
    names = ["p0", "p1", "p2"] + [f"c{c}" for c in range(12)]
    parents = ["0", "0", "0"] + [f"p{c % 3}" for c in range(12)]
    t_labels = rng.integers(3, 15, 500)
    q_labels = rng.integers(3, 15, 40)
    targets = Classification("t.cla", names, parents, [f"t{i}" for i in range(500)], t_labels.astype(np.int32))
    queries = Classification("q.cla", names, parents, [f"q{i}" for i in range(40)], q_labels.astype(np.int32))
    rel = Relevance.from_classification(targets, queries, grades="sister")
    rows = rng.integers(0, 40, 20_000)
    cols = rng.integers(0, 500, 20_000)
    got = rel.gains(rows, cols)
    assert got.tolist() == rel.gains_reference(rows, cols).tolist()
    assert set(got.tolist()) == {0, 1, 2}
    hand = [2 if q == t else int(parents[q] == parents[t]) for q, t in zip(q_labels[rows].tolist(), t_labels[cols].tolist())]
    assert got.tolist() == hand
    assert rel.gains(rows[:3], np.array([-1, 0, 1])).tolist() == rel.gains_reference(rows[:3], np.array([-1, 0, 1])).tolist()


@pytest.mark.parametrize("name", ["MeshNN.run4.txt", "RVN.run5.txt", "TL.run1.txt"])
def test_real_contest_runs_through_the_fixed_tiers(tmp_path, monkeypatch, name):
    """SHREC 2021 CH (shape challenge) runs, real distances with massive ties
    in RVN, written as ranked-list folders over the targets whose ids have 3
    digits (one id width: the fixed and ragged tiers, ``%.6f`` distances of
    one or two integer digits): every file taken by lists_fixed, the same
    lists as the reference, which are the matrix rows' stable order."""
    folder = shared_path("shrec2021-ch", "shape")
    targets = read_classification(os.path.join(folder, "datasetShape.cla"))
    queries = read_classification(os.path.join(folder, "queryShape.cla"))
    index = {t: i for i, t in enumerate(targets.ids)}
    cols = np.array(sorted(int(t) for t in targets.ids if len(t) == 3))
    matrix = np.loadtxt(os.path.join(folder, name))
    run = tmp_path / "run"
    run.mkdir()
    expected = []
    for q in queries.ids:
        row = matrix[int(q)][cols]
        order = np.argsort(row, kind="stable")
        (run / f"{q}.txt").write_text(f"{q}\n" + "".join(f"{cols[j]} {row[j]:.6f}\n" for j in order.tolist()))
        expected.extend(index[str(cols[j])] for j in order.tolist())
    taken = []
    real = lists_batch.read_fixed
    monkeypatch.setattr(lists_batch, "read_fixed", lambda *a: taken.append(real(*a)) or taken[-1])
    fast = assert_same(run, index=index, queries=queries.ids)
    assert fast[0] == expected
    assert taken and all(not rest for _, rest in taken)
