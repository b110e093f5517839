"""The batch reader of ranked-list folders (io/lists_batch.py) against the
reference, file-by-file reader (io/lists.py): the same lists, the same
``--lenient`` drops and the same one-line errors with the same line numbers,
on generated folders, malformed files and real contest data turned into lists."""

from __future__ import annotations

import os
from collections import Counter

import numpy as np
import pytest

from shrec_score.errors import InputError
from shrec_score.io import lists, lists_batch
from shrec_score.io.cla import read_classification
from shrec_score.model import RunSource

from .conftest import shared_path

TARGETS = [f"M{i:05d}" for i in range(1, 301)]
INDEX = {t: i for i, t in enumerate(TARGETS)}
QUERIES = [f"S{i:05d}" for i in range(1, 41)]


def read(folder, *, batch, drops=None, unjudged=None, index=INDEX, queries=QUERIES, missing_ok=False, header=True):
    """(targets, offsets) of the run, or the error's text."""
    try:
        run = lists.read_list_run(
            RunSource("r", str(folder), "lists"), queries, index, drops=drops, unjudged=unjudged, missing_ok=missing_ok, header=header, batch=batch
        )
    except InputError as exc:
        return f"InputError: {exc}"
    return run.targets.tolist(), run.offsets.tolist()


def assert_same(folder, **kw):
    """The batch and the reference reader agree (lists or error text); also
    ``--lenient``: same lists and same drop counts.  Returns the result."""
    fast, ref = read(folder, batch=True, **kw), read(folder, batch=False, **kw)
    assert fast == ref
    d_fast, d_ref = Counter(), Counter()
    assert read(folder, batch=True, drops=d_fast, **kw) == read(folder, batch=False, drops=d_ref, **kw)
    assert d_fast == d_ref
    return fast


def write_run(folder, rng, *, header=False, distances=True, eol="\n", decimals=6, trailing="", shuffle=True, n_targets=None):
    folder.mkdir(parents=True, exist_ok=True)
    for q in QUERIES:
        order = rng.permutation(len(TARGETS))[: n_targets or len(TARGETS)] if shuffle else np.arange(len(TARGETS))
        dist = np.sort(rng.random(order.size) * 3)
        rows = [f"{TARGETS[j]} {d:.{decimals}f}" if distances else TARGETS[j] for j, d in zip(order, dist)]
        text = ((q + eol) if header else "") + eol.join(rows) + eol + trailing
        (folder / f"{q}.txt").write_bytes(text.encode())


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
    """Only the bad file goes to the reference reader; and in query order its
    error is raised before a later file's."""
    write_run(tmp_path / "r", np.random.default_rng(4))
    bad = tmp_path / "r" / f"{QUERIES[3]}.txt"
    bad.write_text(bad.read_text().replace("\n", "\n\n", 1))  # a blank line: pyarrow refuses the whole chunk
    seen = []
    real = lists.read_ranked_list
    monkeypatch.setattr(lists, "read_ranked_list", lambda path, *a, **k: seen.append(path) or real(path, *a, **k))
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
    """Files of width 1 and 2 in one run, and chunks of a few files (threads on)."""
    monkeypatch.setattr(lists_batch, "CHUNK_BYTES", 20_000)
    rng = np.random.default_rng(8)
    write_run(tmp_path / "r", rng)
    write_run(tmp_path / "ids", rng, distances=False, header=True)
    for q in QUERIES[::3]:
        os.replace(tmp_path / "ids" / f"{q}.txt", tmp_path / "r" / f"{q}.txt")
    fast = assert_same(tmp_path / "r")
    files = [(q, str(tmp_path / "r" / f"{q}.txt")) for q in QUERIES]
    one = lists_batch.parse_lists(files, INDEX, threads=1)
    two = lists_batch.parse_lists(files, INDEX, threads=2)
    assert all(a is not None and np.array_equal(a, b) for a, b in zip(one, two))
    assert np.concatenate(one).tolist() == fast[0]


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


@pytest.mark.parametrize("decimals", [0, 3, 6])
@pytest.mark.parametrize("distances", [True, False], ids=["distances", "ids-only"])
def test_fixed_layout_and_the_csv_parser_agree(tmp_path, monkeypatch, decimals, distances):
    """Machine-written files (every line one length and one layout) are read
    by lists_fixed; with it off they take the general path's byte matrix, and
    with that off too pyarrow's CSV parser: the three give the same lists."""
    write_run(tmp_path / "r", np.random.default_rng(10), decimals=decimals, distances=distances)
    files = [(q, str(tmp_path / "r" / f"{q}.txt")) for q in QUERIES]
    taken = []
    real_fixed = lists_batch.read_fixed
    monkeypatch.setattr(lists_batch, "read_fixed", lambda *a: taken.append(real_fixed(*a)) or taken[-1])
    fixed = lists_batch.parse_lists(files, INDEX, threads=1)
    assert taken and all(not rest for _, rest in taken) and sum(len(done) for done, _ in taken) == len(QUERIES)
    monkeypatch.setattr(lists_batch, "read_fixed", lambda chunk, *a: ([], [c[:3] for c in chunk]))
    used = []
    real = lists_batch._fixed_layout
    monkeypatch.setattr(lists_batch, "_fixed_layout", lambda *a: used.append(real(*a)) or used[-1])
    matrix = lists_batch.parse_lists(files, INDEX, threads=1)
    assert used and all(u is not None for u in used)
    monkeypatch.setattr(lists_batch, "_fixed_layout", lambda *a: None)
    csv = lists_batch.parse_lists(files, INDEX, threads=1)
    assert all(a is not None and np.array_equal(a, b) and np.array_equal(a, c) for a, b, c in zip(fixed, matrix, csv))


@pytest.mark.parametrize(
    "text",
    [b"M00001 0.5\nM00002 .25\n", b"M00001 0.5\nM00002 5.0\n", b"M00001 1.5\nM00002 -1.\n", b"M00001 0.5\nM0002 0.25\n", b"M00001 1e-5\nM00002 2e-05\n"],
)
def test_fixed_layout_takes_only_one_layout(text):
    """Lines of one length but another layout (or a number the layout check
    does not read) are left to the CSV parser."""
    expected = text == b"M00001 0.5\nM00002 5.0\n"
    assert (lists_batch._fixed_layout(text, 2, 2) is not None) == expected


def test_open_collection_unknown_ids_in_the_byte_matrix(tmp_path, monkeypatch):
    """Unknown ids of the collection's length (the byte-matrix path): the
    unjudged index, and a repeated one is the reference's error."""
    write_run(tmp_path / "r", np.random.default_rng(12))
    path = tmp_path / "r" / f"{QUERIES[9]}.txt"
    rows = path.read_text().splitlines()
    used = []
    real = lists_batch._fixed_layout
    monkeypatch.setattr(lists_batch, "_fixed_layout", lambda *a: used.append(real(*a)) or used[-1])
    path.write_text("\n".join(rows[:3] + ["Z00001 0.500000", "Z00002 0.600000"] + rows[3:]) + "\n")
    targets, _ = assert_same(tmp_path / "r", unjudged=300)
    assert targets.count(300) == 2 and used and all(u is not None for u in used)
    path.write_text("\n".join(rows[:3] + ["Z00001 0.500000", "Z00001 0.600000"] + rows[3:]) + "\n")
    assert f"{path}:5: expected each target once" in assert_same(tmp_path / "r", unjudged=300)


def test_repeat_table_against_sets():
    """``_repeats`` (a reused position table) against a set per file, with
    unknown lines left out, on random files with and without repeats."""
    rng = np.random.default_rng(13)
    lens = rng.integers(0, 60, 300)
    starts = np.concatenate([[0], np.cumsum(lens)])
    indices = rng.integers(0, 500, int(lens.sum()))
    for k in range(0, 300, 2):  # half the files: distinct targets
        indices[starts[k] : starts[k + 1]] = rng.permutation(500)[: lens[k]]
    miss = rng.random(indices.size) < 0.05
    for m in (None, miss):
        expected = []
        for k in range(300):
            t = [int(x) for j, x in enumerate(indices[starts[k] : starts[k + 1]]) if m is None or not m[starts[k] + j]]
            expected.append(len(set(t)) < len(t))
        assert lists_batch._repeats(indices, m, starts, 500).tolist() == expected
        assert 0 < sum(expected) < 300
