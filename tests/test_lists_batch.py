"""The pyarrow pass over ranked-list folders (io/lists.py: parse_batch) against the
line reader (io/lists.py:parse_list): the same lists, the same distances and
tie groups, the same ``--lenient`` drops and the same one-line errors with
the same line numbers, on generated folders, malformed files, every byte of
a line changed, and real contest data turned into lists."""

from __future__ import annotations

import os
from collections import Counter

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from shrec_score.errors import InputError
from shrec_score.io import lists
from shrec_score.io.cla import read_classification
from shrec_score.model import Classification, RunSource
from shrec_score.relevance import Relevance

from .conftest import shared_path

TARGETS = [f"M{i:05d}" for i in range(1, 301)]
INDEX = {t: i for i, t in enumerate(TARGETS)}
QUERIES = [f"S{i:05d}" for i in range(1, 41)]


def read(folder, *, batch, drops=None, unjudged=None, index=INDEX, queries=QUERIES, missing_ok=False, header=True, ties=False):
    """(targets, offsets, tie starts) of the run, or the error's text; ``batch``:
    every chunk through the pyarrow pass (False: the line reader only)."""
    saved = lists.BATCH_MIN_BYTES
    lists.BATCH_MIN_BYTES = 0 if batch else 1 << 62
    try:
        run = lists.read_list_run(
            RunSource("r", str(folder), "lists"), queries, index, drops=drops, unjudged=unjudged, missing_ok=missing_ok, header=header, ties=ties
        )
    except InputError as exc:
        return f"InputError: {exc}"
    finally:
        lists.BATCH_MIN_BYTES = saved
    return run.targets.tolist(), run.offsets.tolist(), None if run.tie_start is None else run.tie_start.tolist()


def assert_same(folder, **kw):
    """Both readers agree (lists and tie groups, or error text), strict and
    ``--lenient`` (same drop counts); a lenient read that drops nothing gives
    the strict read's tie groups.  Returns the strict (targets, offsets)."""
    for ties in (False, True):
        fast, ref = read(folder, batch=True, ties=ties, **kw), read(folder, batch=False, ties=ties, **kw)
        assert fast == ref
        d_fast, d_ref = Counter(), Counter()
        lenient = read(folder, batch=True, drops=d_fast, ties=ties, **kw)
        assert lenient == read(folder, batch=False, drops=d_ref, ties=ties, **kw)
        assert d_fast == d_ref
        if not d_ref and not isinstance(fast, str):
            assert lenient == fast  # nothing dropped: the same run, tie groups included (issue 30)
    return fast if isinstance(fast, str) else read(folder, batch=True, **kw)[:2]


def write_run(folder, rng, *, header=False, distances=True, eol="\n", decimals=6, trailing="", shuffle=True, n_targets=None):
    folder.mkdir(parents=True, exist_ok=True)
    for q in QUERIES:
        order = rng.permutation(len(TARGETS))[: n_targets or len(TARGETS)] if shuffle else np.arange(len(TARGETS))
        dist = np.sort(rng.random(order.size) * 3)
        rows = [f"{TARGETS[j]} {d:.{decimals}f}" if distances else TARGETS[j] for j, d in zip(order, dist)]
        text = ((q + eol) if header else "") + eol.join(rows) + eol + trailing
        (folder / f"{q}.txt").write_bytes(text.encode())


def line_reader_calls(monkeypatch):
    """The paths :func:`lists.parse_list` is called for, from now on."""
    seen = []
    real = lists.parse_list
    monkeypatch.setattr(lists, "parse_list", lambda path, *a, **k: seen.append(path) or real(path, *a, **k))
    return seen


@pytest.mark.parametrize(
    "style",
    [
        {},
        {"header": True},
        {"distances": False},
        {"header": True, "distances": False},
        {"eol": "\r\n"},
        {"trailing": "\n\n  \n"},
        {"decimals": 17},
        {"n_targets": 37},
    ],
    ids=["plain", "header", "ids-only", "header-ids-only", "crlf", "trailing-blanks", "17-decimals", "short-lists"],
)
def test_generated_runs_read_alike(tmp_path, style):
    write_run(tmp_path / "r", np.random.default_rng(1), **style)
    result = assert_same(tmp_path / "r")
    assert not isinstance(result, str)
    targets, offsets = result
    assert offsets[-1] == len(targets) == len(QUERIES) * (style.get("n_targets") or len(TARGETS))


def test_distances_read_by_the_batch_equal_float_of_the_text(tmp_path):
    """The distances the batch parser checks are what ``float()`` reads (pyarrow
    rounds as Python does): its own reading of the numbers, compared exactly."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    rng = np.random.default_rng(5)
    values = rng.random(2000) * 10.0 ** rng.integers(-30, 30, 2000)
    digits = ["".join(map(str, rng.integers(0, 10, 25))) for _ in range(500)]  # 25 digits: rounding decides
    tokens = [repr(x) for x in values.tolist()] + [f"{x:.25g}" for x in values[:500]] + [f"0.{d}" for d in digits] + [f"{d[:12]}.{d[12:]}e-7" for d in digits] + ["1e308", "2.2250738585072014e-308", "5e-324", "0.1", "+.5", "5.", "-0", "inf"]
    text = "".join(f"M00001 {t}\n" for t in tokens).encode()
    table = pcsv.read_csv(
        pa.py_buffer(text),
        read_options=pcsv.ReadOptions(autogenerate_column_names=True),
        parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False),
        convert_options=pcsv.ConvertOptions(column_types={"f1": pa.float64()}, null_values=[], strings_can_be_null=False),
    )
    assert table.column(1).to_pylist() == [float(t) for t in tokens]


NUMBERS = ["1", "+5", "-5", "5.", ".5", "+.5", "1e5", "1E+05", "1e-5", "inf", "-Infinity", "INF", "00012", "1e400", "-0", "1e-400", "5.e3", ".5e-3"]
NOT_NUMBERS = ["1e", "e5", ".", "+", "1_000", "0x1p3", "0x10", "1.5f", "1,5", "١٢", "１", "1.2.3", "--1", "nan", "NaN", "-nan", "nan(1)", "true", "1.0e+1_0", "5e+"]


@pytest.mark.parametrize("token", NUMBERS + NOT_NUMBERS)
def test_the_number_grammar_is_the_same(tmp_path, token):
    """Each token as the distance on line 3 of one file: both readers accept it or give the same error."""
    write_run(tmp_path / "r", np.random.default_rng(2))
    path = tmp_path / "r" / f"{QUERIES[5]}.txt"
    rows = path.read_text().splitlines()
    rows[2] = f"{rows[2].split()[0]} {token}"
    path.write_text("\n".join(rows) + "\n")
    result = assert_same(tmp_path / "r")
    assert isinstance(result, str) == (token in NOT_NUMBERS)
    if token in NOT_NUMBERS:
        assert f"{path}:3: expected a number as distance" in result


BROKEN = {
    "unknown id": lambda rows: rows[:4] + ["X99999 0.5"] + rows[4:],
    "repeated id": lambda rows: rows[:6] + [rows[1]] + rows[6:],
    "three fields": lambda rows: rows[:2] + [rows[2] + " extra"] + rows[3:],
    "no distance on one line": lambda rows: rows[:3] + [rows[3].split()[0]] + rows[4:],
    "blank line inside": lambda rows: rows[:5] + [""] + rows[5:],
    "indented line": lambda rows: rows[:5] + ["  " + rows[5]] + rows[6:],
    "two spaces": lambda rows: rows[:5] + [rows[5].replace(" ", "  ")] + rows[6:],
    "trailing space": lambda rows: rows[:5] + [rows[5] + " "] + rows[6:],
    "tabs": lambda rows: [r.replace(" ", "\t") for r in rows],
    "one tab": lambda rows: rows[:5] + [rows[5].replace(" ", "\t")] + rows[6:],
    "vertical tab": lambda rows: rows[:5] + [rows[5].replace(" ", "\x0b")] + rows[6:],
    "file separator": lambda rows: rows[:5] + [rows[5].replace(" ", "\x1c")] + rows[6:],
    "lone CR": lambda rows: rows[:5] + [rows[5] + "\r" + rows[6]] + rows[7:],
    "distance first": lambda rows: [" ".join(reversed(r.split())) for r in rows],
    "distance first, one unknown": lambda rows: [" ".join(reversed(r.split())) for r in rows[:-1]] + ["0.9 X1"],
    "non-ASCII id": lambda rows: rows[:5] + ["Mé0001 0.5"] + rows[5:],
    "no-break space": lambda rows: rows[:5] + [rows[5].replace(" ", "\u00a0")] + rows[6:],
    "DEL in id": lambda rows: rows[:5] + ["M0\x7f001 0.5"] + rows[5:],
    "NUL in id": lambda rows: rows[:5] + ["M0\x00001 0.5"] + rows[5:],
    "header only": lambda rows: [QUERIES[7]],
    "empty": lambda rows: [],
    "blank lines only": lambda rows: ["", "  ", ""],
    "header then ids only then distances": lambda rows: [QUERIES[7], rows[0].split()[0]] + rows[1:],
    "another query's header": lambda rows: [QUERIES[8]] + rows,
    "header twice": lambda rows: [QUERIES[7], QUERIES[7]] + rows,
}


@pytest.mark.parametrize("case", list(BROKEN))
@pytest.mark.parametrize("unjudged", [None, 300], ids=["closed", "open"])
def test_malformed_files_give_the_reference_error(tmp_path, case, unjudged):
    """One file of a run is broken (the 8th of 40, so that it sits in a chunk
    with good files): the same lists or the same one-line error, strict and
    lenient, for a closed and an open collection."""
    write_run(tmp_path / "r", np.random.default_rng(3))
    path = tmp_path / "r" / f"{QUERIES[7]}.txt"
    rows = BROKEN[case](path.read_text().splitlines())
    path.write_bytes(("\n".join(rows) + ("\n" if rows else "")).encode())
    assert_same(tmp_path / "r", unjudged=unjudged)


def test_a_bad_file_leaves_the_others_of_its_chunk_to_the_batch(tmp_path, monkeypatch):
    """Only the bad file goes to the line reader; and in query order its
    error is raised before a later file's."""
    write_run(tmp_path / "r", np.random.default_rng(4))
    bad = tmp_path / "r" / f"{QUERIES[3]}.txt"
    bad.write_text(bad.read_text().replace("\n", "\n\n", 1))  # a blank line: pyarrow refuses the joined text
    seen = line_reader_calls(monkeypatch)
    assert not isinstance(read(tmp_path / "r", batch=True), str)
    assert seen == [str(bad)]
    later = tmp_path / "r" / f"{QUERIES[30]}.txt"
    later.write_text("X1 0.5\n")
    bad.write_text("M00001 0.1\nM00001 0.2\n")
    assert read(tmp_path / "r", batch=True) == f"InputError: {bad}:2: expected each target once; 'M00001' is already ranked at line 1"


def test_files_the_reader_must_refuse_before_parsing(tmp_path):
    """UTF-16, bad UTF-8, a line over 1 MiB, a FIFO, a missing query, gzip: the reference's error (or lists)."""
    import gzip

    write_run(tmp_path / "r", np.random.default_rng(6))
    folder = tmp_path / "r"
    cases = {
        QUERIES[1]: lambda t: t.encode("utf-16"),
        QUERIES[2]: lambda t: t.encode()[:100] + b"\xff" + t.encode()[100:],
        QUERIES[3]: lambda t: b"\xef\xbb\xbf" + t.encode(),  # a UTF-8 BOM is dropped: fine
        QUERIES[4]: lambda t: gzip.compress(t.encode()),  # compressed: fine
        QUERIES[5]: lambda t: t.encode() + b"M00002" + b"9" * (1 << 20) + b" 0.5\n",
    }
    for q in reversed(list(cases)):  # each alone, then with the ones before it in order
        path = folder / f"{q}.txt"
        path.write_bytes(cases[q](path.read_text()))
        assert_same(folder)
    fifo = folder / f"{QUERIES[0]}.txt"
    fifo.unlink()
    assert_same(folder)  # missing query file
    os.mkfifo(fifo)
    assert_same(folder)


def test_open_collection_unknown_ids_and_their_repeats(tmp_path):
    """Qrels alone: unknown ids get the unjudged index; a repeated unknown id is the reference's error."""
    write_run(tmp_path / "r", np.random.default_rng(7))
    path = tmp_path / "r" / f"{QUERIES[9]}.txt"
    rows = path.read_text().splitlines()
    path.write_text("\n".join(rows[:3] + ["doc-unknown-1 0.5", "doc-unknown-2 0.6"] + rows[3:]) + "\n")
    targets, _ = assert_same(tmp_path / "r", unjudged=300)
    assert targets.count(300) == 2
    path.write_text("\n".join(rows[:3] + ["doc-unknown-1 0.5", "doc-unknown-1 0.6"] + rows[3:]) + "\n")
    assert "expected each target once" in assert_same(tmp_path / "r", unjudged=300)


def test_runs_of_mixed_widths_and_chunks(tmp_path, monkeypatch):
    """Files of width 1 and 2 in one run, in chunks of a few files: every
    file taken by the pyarrow pass, the same lists as the line reader."""
    monkeypatch.setattr(lists, "CHUNK_BYTES", 20_000)
    rng = np.random.default_rng(8)
    write_run(tmp_path / "r", rng)
    write_run(tmp_path / "ids", rng, distances=False, header=True)
    for q in QUERIES[::3]:
        os.replace(tmp_path / "ids" / f"{q}.txt", tmp_path / "r" / f"{q}.txt")
    assert_same(tmp_path / "r")
    seen = line_reader_calls(monkeypatch)
    assert not isinstance(read(tmp_path / "r", batch=True, ties=True), str) and seen == []


def test_machine_written_runs_take_only_the_pyarrow_pass(tmp_path, monkeypatch):
    """With and without a header line, with and without distances, CRLF,
    trailing blank lines, short lists: no file is left to the line reader."""
    for k, style in enumerate([{}, {"header": True}, {"distances": False}, {"decimals": 2, "n_targets": 77}, {"eol": "\r\n", "trailing": "\r\n\r\n"}]):
        write_run(tmp_path / str(k), np.random.default_rng(23 + k), **style)
        seen = line_reader_calls(monkeypatch)
        assert not isinstance(read(tmp_path / str(k), batch=True, ties=True), str) and seen == []
        assert_same(tmp_path / str(k))


def test_real_contest_rankings_as_lists(tmp_path):
    """SHREC 2021 cultural heritage runs (real distances, massive ties in RVN)
    written as ranked-list folders, one file per query with the ids of the
    track's .cla files: both readers give the same lists, which are the
    matrix rows' order."""
    folder = shared_path("shrec2021-ch", "culture")
    targets = read_classification(os.path.join(folder, "datasetCulture.cla"))
    queries = read_classification(os.path.join(folder, "queryCulture.cla"))
    index = {t: i for i, t in enumerate(targets.ids)}
    for name in ("RVN.run2.txt", "MVCNN.run1.txt"):
        matrix = np.loadtxt(os.path.join(folder, name))
        run = tmp_path / name
        run.mkdir()
        expected = []
        for q in queries.ids:
            row = matrix[int(q)].tolist()
            order = np.argsort(row, kind="stable").tolist()
            (run / f"{q}.txt").write_text(f"{q}\n" + "".join(f"{j} {row[j]!r}\n" for j in order))
            expected.extend(index[str(j)] for j in order)
        fast = assert_same(run, index=index, queries=queries.ids)
        assert fast[0] == expected


def test_psb_ids_as_a_collection(tmp_path):
    """The PSB test set's 907 model ids (real ids, 1-4 digits) as the collection."""
    cla = read_classification(shared_path("psb", "test.cla"))
    index = {t: i for i, t in enumerate(cla.ids)}
    rng = np.random.default_rng(9)
    run = tmp_path / "psb"
    run.mkdir()
    for q in cla.ids[:50]:
        order = rng.permutation(len(cla.ids))
        (run / q).write_text("".join(f"{cla.ids[j]} {k * 0.25}\n" for k, j in enumerate(order)))
    fast = assert_same(run, index=index, queries=cla.ids[:50])
    assert len(fast[0]) == 50 * len(cla.ids)


@pytest.mark.parametrize("header", [True, False])
def test_a_first_line_holding_the_query_id_with_and_without_header(tmp_path, header):
    """Queries that are targets too (ShapeNet: the query may retrieve itself):
    with ``header=False`` a first line holding only the query id is the query
    ranked first; with ``header=True`` it is cut."""
    rng = np.random.default_rng(11)
    run = tmp_path / "r"
    run.mkdir()
    queries = TARGETS[:40]
    for q in queries:
        order = [TARGETS[j] for j in rng.permutation(len(TARGETS)) if TARGETS[j] != q]
        (run / q).write_text("\n".join([q, *order]) + "\n")
    targets, offsets = assert_same(run, queries=queries, header=header)
    assert offsets[1] == len(TARGETS) - (1 if header else 0)
    assert (targets[0] == INDEX[queries[0]]) != header


def test_open_collection_unknown_ids_of_the_collections_width(tmp_path):
    """Unknown ids as long as the collection's: the unjudged index, and a
    repeated one is the line reader's error, naming the line."""
    write_run(tmp_path / "r", np.random.default_rng(12))
    path = tmp_path / "r" / f"{QUERIES[9]}.txt"
    rows = path.read_text().splitlines()
    path.write_text("\n".join(rows[:3] + ["Z00001 0.500000", "Z00002 0.600000"] + rows[3:]) + "\n")
    targets, _ = assert_same(tmp_path / "r", unjudged=300)
    assert targets.count(300) == 2
    path.write_text("\n".join(rows[:3] + ["Z00001 0.500000", "Z00001 0.600000"] + rows[3:]) + "\n")
    assert f"{path}:5: expected each target once" in assert_same(tmp_path / "r", unjudged=300)


def test_files_of_other_layouts_in_a_chunk(tmp_path):
    """Files whose lines have another length or layout than the chunk's first
    (other decimals, CRLF, a header only in some, ids of another width): the
    run reads as with the line reader."""
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
    space, a tab, a letter, a digit, a dot, a non-ASCII byte, a CR or a form
    feed: the same lists or the same one-line error, strict and lenient."""
    rng = np.random.default_rng(40 + column)
    write_run(tmp_path / "r", rng)
    path = tmp_path / "r" / f"{QUERIES[7]}.txt"
    original = path.read_bytes()
    start = sum(len(line) for line in original.splitlines(keepends=True)[:119])
    for value in b" \tZ7.\xff\r\x0c":
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
def test_ragged_lines_read_alike(tmp_path, monkeypatch, header):
    """Lines of one id width whose distances have several lengths (many ties
    at 0 decimals): the same lists and tie groups, every file by pyarrow."""
    _ragged_run(tmp_path / "r", np.random.default_rng(80), header=header)
    assert_same(tmp_path / "r")
    seen = line_reader_calls(monkeypatch)
    assert not isinstance(read(tmp_path / "r", batch=True, ties=True), str) and seen == []


def test_a_byte_changed_in_a_ragged_file(tmp_path):
    """Random bytes of ragged lines set to a space, a tab, a letter, a digit,
    a dot, a minus, a newline, a non-ASCII byte or a CR: the same lists or the
    same one-line error, strict and lenient."""
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
    """A line whose distance makes it longer than 1 MiB: the line-length
    error naming its line, not a list."""
    _ragged_run(tmp_path / "r", np.random.default_rng(82))
    path = tmp_path / "r" / f"{QUERIES[5]}.txt"
    rows = path.read_text().splitlines()
    path.write_text("\n".join(rows[:2] + [rows[2].split()[0] + " 1" + "0" * (1 << 20)] + rows[3:]) + "\n")
    assert ":3: " in assert_same(tmp_path / "r")
    path.write_text("\n".join(rows[:2] + [rows[2].split()[0] + " 1" + "0" * ((1 << 20) - 8)] + rows[3:]) + "\n")
    assert not isinstance(assert_same(tmp_path / "r"), str)  # just under: a (large) distance


def test_unknown_ids_and_repeats_name_their_line(tmp_path):
    """An id no target has (M00350 with 300 targets), and a repeated target:
    the line reader's errors, with the line."""
    write_run(tmp_path / "r", np.random.default_rng(50))
    path = tmp_path / "r" / f"{QUERIES[12]}.txt"
    rows = path.read_text().splitlines()
    path.write_text("\n".join(rows[:9] + ["M00350 0.500000"] + rows[10:]) + "\n")
    assert f"{path}:10: expected a target id of the collection" in assert_same(tmp_path / "r")
    path.write_text("\n".join(rows[:9] + [rows[3]] + rows[10:]) + "\n")
    assert f"{path}:10: expected each target once" in assert_same(tmp_path / "r")
    assert "expected each target once" in assert_same(tmp_path / "r", unjudged=300)


@pytest.mark.parametrize("name", ["MeshNN.run4.txt", "RVN.run5.txt", "TL.run1.txt"])
def test_real_contest_runs_with_ties(tmp_path, name):
    """SHREC 2021 CH (shape challenge) runs, real distances with massive ties
    in RVN, written as ranked-list folders (``%.6f``): the same lists and tie
    groups by both readers, which are the matrix rows' stable order."""
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
    assert assert_same(run, index=index, queries=queries.ids)[0] == expected


def test_lenient_keeps_the_tie_groups_of_a_file_the_pyarrow_pass_declines(tmp_path):
    """Issue 30: a valid file that only the line reader takes (tabs, a form
    feed) keeps its distances under --lenient, so its tie groups; and a list
    whose distance is dropped, or given on some lines only, has none (in
    every mode, strict or lenient, either reader)."""
    write_run(tmp_path / "r", np.random.default_rng(90), decimals=1)
    path = tmp_path / "r" / f"{QUERIES[2]}.txt"
    rows = path.read_text().splitlines()
    expected = read(tmp_path / "r", batch=True, ties=True)
    for sep in ("\t", "\x0c"):
        path.write_text("\n".join(r.replace(" ", sep) for r in rows) + "\n")
        assert read(tmp_path / "r", batch=True, ties=True, drops=Counter()) == expected
        assert_same(tmp_path / "r")
    for broken in (rows[:5] + [rows[5].split()[0] + " x"] + rows[6:], rows[:5] + [rows[5].split()[0]] + rows[6:]):
        path.write_text("\n".join(broken) + "\n")
        drops = Counter()
        _, offsets, ties = read(tmp_path / "r", batch=True, ties=True, drops=drops)
        assert ties[offsets[2] : offsets[3]] == list(range(offsets[3] - offsets[2]))  # no tie group
        assert ties[: offsets[2]] == expected[2][: offsets[2]]
        assert_same(tmp_path / "r")


@st.composite
def list_files(draw):
    ids = [f"t{i}" for i in range(12)]
    chosen = draw(st.lists(st.sampled_from(ids + ["zz", "q"]), min_size=0, max_size=15))
    with_dist = draw(st.booleans())
    lines = [f"{t} {draw(st.sampled_from(['0.5', '1e-3', 'nan', 'x', '-0', 'inf', '0.5']))}" if with_dist else t for t in chosen]
    if draw(st.booleans()):
        lines.insert(0, "q")
    if lines and draw(st.booleans()):
        lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(["", "   ", "a b c", "t1", " t2", "t3 ", "t4  0.5", "t5\t1", "t6\x0c1", "t7\r1"])))
    sep = draw(st.sampled_from(["\n", "\r\n"]))
    return sep.join(lines) + draw(st.sampled_from(["", sep, sep + " " + sep])), ids


@settings(max_examples=300, deadline=None)
@given(list_files(), st.booleans(), st.booleans())
@example(("q", ["t0"]), True, True)  # the header line alone, no newline: an empty list, not the id q
@example(("t1 1\r\nt2 1\r\n", ["t1", "t2"]), False, True)
def test_what_the_pyarrow_pass_takes_the_line_reader_reads_alike(case, is_open, header):
    """Random small files: where the pyarrow pass takes a file, the line
    reader gives the same indices and distances, strict and lenient (with
    nothing dropped); where it declines, nothing is lost."""
    text, ids = case
    index = {t: i for i, t in enumerate(ids)}
    unjudged = len(ids) if is_open else None
    fast = lists.parse_batch([("q", text.encode())], lists.id_table(index), unjudged, header=header)[0]
    if fast is None:
        return
    for drops in (None, Counter()):
        indices, dist = lists.parse_list("q.txt", text, "q", index, drops=drops, unjudged=unjudged, header=header)
        assert indices.tolist() == fast[0].tolist() and not drops
        assert (dist is None and fast[1] is None) or (dist is not None and fast[1] is not None and dist.tolist() == fast[1].tolist())


def test_class_gains_against_the_table_lookup():
    """ClassRelevance.gains (a lookup in the class x class table) against the
    hand, with sister grades.  (From test_lists_fixed.py,
    deleted with io/lists_fixed.py; this test is about relevance.py.)"""
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
    assert set(got.tolist()) == {0, 1, 2}
    hand = [2 if q == t else int(parents[q] == parents[t]) for q, t in zip(q_labels[rows].tolist(), t_labels[cols].tolist())]
    assert got.tolist() == hand
    ends = np.array([-1, 0, 1])  # -1: numpy's last target, as the class lookup indexes it
    assert rel.gains(rows[:3], ends).tolist() == [2 if q == t else int(parents[q] == parents[t]) for q, t in zip(q_labels[rows[:3]].tolist(), t_labels[ends].tolist())]
