"""Readers of TREC files: qrels (``query_id iteration target_id grade``) and
runs read whole (``query_id Q0 target_id rank score tag``).

pyarrow's CSV reader parses them; its float parser reads the number grammar
of :mod:`shrec_score.io.numbers` (``nan`` is a null for it, and NaN is
refused as a score anyway), and the line readers that report errors check
every score against that grammar.  Lines longer than
:data:`~shrec_score.io.text.MAX_LINE_BYTES` are refused before pyarrow
parses them (pyarrow itself admits rows of up to two blocks).

trec_eval's line rule (get_trec_results.c): a run line has at least six
whitespace-separated fields; the tag is the sixth field's first word and
anything after it is ignored (tags such as ``COMPILED (ID:425883)``).  Such
lines are counted for a note (:func:`extra_fields_note`).  A qrels line has
exactly four fields: get_qrels.c refuses a fifth, and so do we.
Compressed files (gzip, bzip2, xz, zstd) are parsed a piece at a time.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError, shown
from ..model import Qrels
from .numbers import is_integer, parse_number
from .text import (
    is_compressed,
    pieces,
    plain,
    read_head,
    regular_file,
    scan_line_lengths,
    text_lines,
)


def read_qrels(path: str | os.PathLike[str]) -> Qrels:
    """Read a TREC qrels file; a pair judged twice is an error.

    Grades are integers; as in trec_eval, grade >= 1 is relevant and a
    negative grade (-1) marks an item in the pool but unjudged: its
    judgment is left out (see :func:`_without_unjudged`).  Large files are
    read with pyarrow; any irregularity is reported by the line-by-line
    reader.
    """
    path = regular_file(path)
    read_head(path)  # UTF-16 / UTF-32 named as such
    fast = None
    if os.path.getsize(path) >= FAST_QRELS_BYTES or is_compressed(path):
        fast = _read_qrels_fast(path)
    if fast is not None:
        return _without_unjudged(fast)
    queries: list[str] = []
    targets: list[str] = []
    grades: list[int] = []
    seen: dict[tuple[str, str], int] = {}
    for n, line in text_lines(path):
        f = line.split()
        if not f:
            continue
        if len(f) != 4:  # trec_eval's get_qrels.c refuses more fields too
            raise InputError(path, n, 'expected "query_id iteration target_id grade"', f"{len(f)} fields")
        if not is_integer(f[3]):
            raise InputError(path, n, "expected a whole number as grade", shown(f[3]))
        grade = int(f[3])
        key = (f[0], f[2])
        if key in seen:
            raise InputError(path, n, f"expected each (query, target) pair once; {_pair(f[0], f[2])} is already judged at line {seen[key]}")
        seen[key] = n
        queries.append(f[0])
        targets.append(f[2])
        grades.append(grade)
    if not queries:
        raise InputError(path, None, "expected at least one judgment", "an empty file")
    return _without_unjudged(Qrels.from_lists(path, queries, targets, grades))


def _without_unjudged(qrels: Qrels) -> Qrels:
    """The judgments of grade >= 0; the ids of every line stay listed.

    trec_eval (form_res_rels.c) takes a negative grade for "in the pool but
    unjudged" (RELVALUE_UNJUDGED): not relevant, not counted among the
    judged documents of any grade (bpref's non-relevant, ``rel_levels``)
    and left out under ``-J``, exactly as a document missing from the
    qrels, for every measure shrec-score computes.  So the line is dropped
    here; its query stays a topic of the qrels (with nothing judged, if
    every line of it is negative).  A pair judged twice is still refused,
    whatever its grades (checked before).
    """
    keep = qrels.grades >= 0
    if keep.all():
        return qrels
    return Qrels(qrels.path, qrels.query_ids, qrels.query_codes[keep], qrels.target_ids, qrels.target_codes[keep], qrels.grades[keep])


#: Qrels files from this size are read with pyarrow (below, the line reader is as fast).
FAST_QRELS_BYTES = 1 << 20


def _read_qrels_fast(path: str) -> Qrels | None:
    names, types, keep = ["query", "iter", "doc", "grade"], {"query": "string", "doc": "string", "grade": "int64"}, ["query", "doc", "grade"]
    if is_compressed(path):
        tbl, _ = _read_pieces(path, names, types, keep, lambda t: t is not None and not t.column("grade").null_count, False)
    else:
        scan_line_lengths(path)
        tbl = _read_columns_arrow(path, names, types, keep)
    if tbl is None or tbl.num_rows == 0 or tbl.column("grade").null_count:
        return None
    queries, q_codes = _encode(tbl.column("query"))
    docs, d_codes = _encode(tbl.column("doc"))
    keys = np.sort(q_codes * max(1, len(docs)) + d_codes)
    if (keys[1:] == keys[:-1]).any():
        return None  # the line reader names both lines
    return Qrels(path, queries, q_codes, docs, d_codes, arrow_numpy(tbl.column("grade")).astype(np.int64))


TREC_RUN_FIELDS = "query_id Q0 target_id rank score tag"
#: Fields of a TREC run line that are read; words after the sixth (the tag's
#: first word) are ignored, as trec_eval's get_trec_results.c does.
RUN_FIELDS = 6


def _pair(query: str, target: str) -> str:
    """``query target`` as a message shows them (see :func:`~shrec_score.io.text.plain`)."""
    return f"{plain(query)} {plain(target)}"


def _locate_trec_problem(path: str) -> None:
    """Slow path: find the first malformed line of a TREC run and raise."""
    lines = 0
    for n, line in text_lines(path):
        f = line.split()
        if not f:
            continue
        lines += 1
        if len(f) < RUN_FIELDS:
            raise InputError(path, n, f'expected "{TREC_RUN_FIELDS}"', f"{len(f)} fields")
        score = parse_number(f[4])
        if score is None:
            raise InputError(path, n, "expected a number as score (5th field)", shown(f[4]))
        if math.isnan(score):
            raise InputError(path, n, "expected a number as score (5th field)", "NaN")
    raise InputError(path, None, f'expected lines "{TREC_RUN_FIELDS}"', None if lines else "an empty file")


@dataclass
class TrecLines:
    """A TREC run's lines in file order: query and target ids as pyarrow
    chunked string arrays, scores as floats."""

    path: str
    queries: Any
    docs: Any
    scores: np.ndarray
    #: Lines with more than six fields (the words after the tag ignored).
    extra_field_lines: int = 0


@dataclass
class TrecColumns:
    """A TREC run as columns: query and target ids dictionary-encoded, scores as floats."""

    path: str
    queries: list[str]
    q_codes: np.ndarray
    docs: list[str]
    d_codes: np.ndarray
    scores: np.ndarray


def _delimiter(path: Any) -> str:
    if not isinstance(path, str):
        return " "
    head = read_head(path, 65536)
    first = head.split(b"\n", 1)[0]
    return "\t" if b"\t" in first else " "


def _read_columns_arrow(source: Any, names: list[str], types: dict[str, str], keep: list[str], *, delimiter: str | None = None) -> Any:
    """pyarrow's CSV reader (on its own threads) over a path or a buffer;
    None if the layout is irregular (the caller then normalises the
    whitespace or finds the malformed line)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    try:
        return pcsv.read_csv(
            source,
            read_options=pcsv.ReadOptions(column_names=names, block_size=16 << 20),
            parse_options=pcsv.ParseOptions(delimiter=delimiter or _delimiter(source), quote_char=False),
            convert_options=pcsv.ConvertOptions(include_columns=keep, column_types={k: getattr(pa, v)() for k, v in types.items()}),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError, OSError):
        return None


def normalised(data: bytes) -> bytes:
    """``data`` with every run of blanks (spaces, tabs, CR) made one space
    and lines trimmed: trec_eval splits lines on any whitespace, pyarrow on
    one delimiter.

    >>> normalised(b"q1  0\\td1 1\\r\\n")
    b'q1 0 d1 1\\n'
    """
    import re

    data = re.sub(rb"[ \t\r\f\v]+", b" ", data.removeprefix(b"\xef\xbb\xbf"))
    return re.sub(rb"(?m)^ | $", b"", data)


#: Blanks other than the tab: trec_eval (isspace) splits fields on them too.
_OTHER_BLANKS = (b" ", b"\v", b"\f")


def blanks_in_tab_fields(data: bytes | bytearray, end: int | None = None) -> bool:
    """Whether tab-separated text (``data[:end]``) holds a space, vertical
    tab or form feed, which would split a field for trec_eval (a tag such
    as ``COMPILED (ID:425883)``) but not for pyarrow's tab delimiter.
    Three ``find`` scans in C, no copy (about 1 ms for 16 MiB).

    >>> blanks_in_tab_fields(b"q\\tQ0\\td\\t1\\t2\\tCOMPILED (ID:4)\\n"), blanks_in_tab_fields(b"q\\tQ0\\td\\t1\\t2\\trun\\n")
    (True, False)
    """
    end = len(data) if end is None else end
    return any(data.find(b, 0, end) >= 0 for b in _OTHER_BLANKS)


def _blanks_in_tab_file(path: str) -> bool:
    """:func:`blanks_in_tab_fields` over a whole (uncompressed) file, 16 MiB at a time."""
    with open(path, "rb") as fh:
        while chunk := fh.read(16 << 20):
            if blanks_in_tab_fields(chunk):
                return True
    return False


def wider_names(fields: int) -> list[str]:
    """Column names for lines of ``fields`` > 6 fields: the six of a run, then ``more1``, ...."""
    return ["query", "q0", "doc", "rank", "score", "tag"] + [f"more{i}" for i in range(1, fields - RUN_FIELDS + 1)]


def wider_table(tbl: Any, keep: list[str]) -> Any:
    """The ``keep`` columns of a table parsed with every column a string but the score, or
    None when a field is empty (two delimiters in a row: the columns would
    not be trec_eval's fields)."""
    import pyarrow.compute as pc

    if tbl is None:
        return None
    for name in tbl.column_names:
        col = tbl.column(name)
        if name != "score" and tbl.num_rows and pc.min(pc.binary_length(col)).as_py() == 0:
            return None
    return tbl.select(keep)


def split_fields(data: Any) -> tuple[Any, int]:
    """The lines of ``data`` (bytes or a pyarrow buffer of whole lines) split
    on runs of ASCII whitespace as trec_eval splits them: a table of
    ``query``, ``doc`` and ``score`` (the 1st, 3rd and 5th fields), and the
    number of lines with more than six fields (the words after the sixth
    are ignored).  Blank lines are passed over; a line of fewer than six
    fields, a score that is not a number or bytes that are not UTF-8 raise
    ``pyarrow.ArrowInvalid`` (the callers then find the line).

    For lines that do not split on one delimiter with one number of fields
    (tags of several words, of varying length): about 6x pyarrow's CSV
    parse, still without a Python object per line.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    buf = data if isinstance(data, pa.Buffer) else pa.py_buffer(data)
    arr = np.frombuffer(buf, dtype=np.uint8)
    ends = np.flatnonzero(arr == 10) + 1
    if arr.size and arr[-1] != 10:
        ends = np.append(ends, arr.size)
    offsets = np.zeros(ends.size + 1, dtype=np.int64)
    offsets[1:] = ends
    lines = pa.LargeStringArray.from_buffers(ends.size, pa.py_buffer(offsets), buf)
    if arr.max(initial=0) >= 128:
        lines.validate(full=True)  # UTF-8 (ArrowInvalid otherwise)
    lines = pc.ascii_trim_whitespace(lines)
    # numbers go to pyarrow as arrays built from buffers (arrow_indices), never as
    # Python ints: pyarrow converts those through pa.scalar, which imports pandas
    lines = lines.take(arrow_indices(np.flatnonzero(arrow_numpy(pc.binary_length(lines)) > 0)))
    parts = pc.ascii_split_whitespace(lines, max_splits=RUN_FIELDS)
    n = arrow_numpy(pc.list_value_length(parts))
    if len(lines) and n.min() < RUN_FIELDS:
        raise pa.ArrowInvalid(f"a line with fewer than {RUN_FIELDS} fields")
    more = int(np.count_nonzero(n > RUN_FIELDS))
    places = arrow_indices(np.array([0, 2, 4]))

    def field(i: int, kind: Any = pa.string()) -> Any:
        return pc.cast(pc.list_element(parts, places[i]), kind)

    table = pa.table({"query": field(0), "doc": field(1), "score": field(2, pa.float64())})
    return table, more


def _read_pieces(path: str, names: list[str], types: dict[str, str], keep: list[str], ok: Callable[[Any], bool], run: bool) -> tuple[Any, int]:
    """A file parsed a piece at a time (:func:`~.text.pieces`): a compressed
    file is never decompressed whole.  A piece that does not parse on its
    delimiter is :func:`split_fields` (a ``run``) or :func:`normalised`
    first.  Returns the table (None if a piece stays irregular) and the
    lines with more than six fields."""
    import pyarrow as pa

    tables, cut, delimiter = [], 0, None
    for piece, line in pieces(path):
        if line == 1:
            piece = piece.removeprefix(b"\xef\xbb\xbf")
        if delimiter is None:
            delimiter = "\t" if b"\t" in piece.split(b"\n", 1)[0] else " "
        tbl: Any = None  # a tab-separated piece with a blank inside a field: split as trec_eval splits (below)
        if not (run and delimiter == "\t" and blanks_in_tab_fields(piece)):
            tbl = _read_columns_arrow(pa.BufferReader(piece), names, types, keep, delimiter=delimiter)
        if not ok(tbl) and run:
            try:
                tbl, n = split_fields(piece)
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                return None, cut
            cut += n
        elif not ok(tbl):
            tbl = _read_columns_arrow(pa.BufferReader(normalised(piece)), names, types, keep, delimiter=" ")
        if not ok(tbl):
            return None, cut
        if tbl.num_rows:
            tables.append(tbl.select(keep[:3]))
    return (pa.concat_tables(tables) if tables else None), cut


_NUMPY_TYPES = {"double": "float64", "float": "float32", "int64": "int64", "int32": "int32", "int16": "int16", "int8": "int8", "uint64": "uint64", "uint32": "uint32"}


def arrow_numpy(values: Any) -> np.ndarray:
    """A pyarrow array (or chunked array) as numpy, without pandas.

    pyarrow's ``to_numpy`` imports pandas first (0.2-0.3 s a TREC scoring
    does not need).  A fixed-width column without nulls is viewed in
    place; anything else goes through ``to_numpy`` (nulls of a float
    column: NaN).
    """
    import numpy as np

    if hasattr(values, "chunks"):
        parts = [arrow_numpy(c) for c in values.chunks]
        return parts[0] if len(parts) == 1 else np.concatenate(parts) if parts else values.to_numpy()
    dtype = _NUMPY_TYPES.get(str(values.type))
    if dtype is None or values.null_count:
        return values.to_numpy(zero_copy_only=False)
    item = np.dtype(dtype).itemsize
    return np.frombuffer(values.buffers()[1], dtype=dtype, count=len(values), offset=values.offset * item)


def arrow_strings(values: list[str]) -> Any:
    """Python strings as a pyarrow string array, built from its buffers.

    ``pa.array`` (and ``pa.scalar``) import pandas at their first call
    (0.2-0.3 s); the TREC path builds its few arrays from numpy buffers
    instead, and pandas stays out of a CSV scoring.
    """
    import pyarrow as pa

    data = [v.encode() for v in values]
    offsets = np.zeros(len(data) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in data], out=offsets[1:])
    return pa.Array.from_buffers(pa.large_string(), len(data), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))]).cast(pa.string())


def arrow_indices(values: np.ndarray) -> Any:
    """An int64 numpy array as a pyarrow array (for ``take``), without ``pa.array``'s pandas import."""
    import pyarrow as pa

    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def _encode(column: Any) -> tuple[list[str], np.ndarray]:
    """pyarrow string column -> (distinct values, int64 codes)."""
    import numpy as np
    import pyarrow.compute as pc

    enc = pc.dictionary_encode(column).combine_chunks()
    return enc.dictionary.to_pylist(), arrow_numpy(enc.indices).astype(np.int64)



def read_trec_lines(path: str | os.PathLike[str]) -> TrecLines:
    """Read a TREC run with pyarrow's CSV reader (on its own threads).

    Fields may be separated by any run of blanks, as trec_eval allows (a
    file whose lines do not split on one delimiter is read again with its
    whitespace normalised); a malformed line is reported by the exact line
    scanner.  Duplicated (query, target) pairs are checked by the caller.
    """
    path = regular_file(path)
    read_head(path)  # UTF-16 / UTF-32 named as such
    names = ["query", "q0", "doc", "rank", "score", "tag"]
    types = {"query": "string", "doc": "string", "score": "float64"}
    keep = ["query", "doc", "score"]
    cut = 0
    tbl: Any = None
    if not is_compressed(path):
        scan_line_lengths(path)  # before pyarrow parses the file
        # a tab-separated file with blanks inside fields is split by pieces (below), not parsed here
        blanks = _delimiter(path) == "\t" and _blanks_in_tab_file(path)
        tbl = None if blanks else _read_columns_arrow(path, names, types, keep)
        fields = _first_line_fields(path)
        if not _regular(tbl) and fields > RUN_FIELDS:  # a tag of several words, on every line
            wide = wider_names(fields)
            tbl = wider_table(_read_columns_arrow(path, wide, {n: "float64" if n == "score" else "string" for n in wide}, wide), keep)
            cut = 0 if tbl is None else tbl.num_rows
    if not _regular(tbl):  # compressed, blanks that are not one delimiter, tags of varying length
        tbl, cut = _read_pieces(path, names, types, keep, lambda t: _regular(t, empty=True), True)
    if not _regular(tbl):
        for _ in text_lines(path):  # a byte that is not UTF-8: named with its line
            pass
        _locate_trec_problem(path)
    return TrecLines(path, tbl.column("query"), tbl.column("doc"), arrow_numpy(tbl.column("score")), cut)


def read_trec_columns(path: str | os.PathLike[str]) -> TrecColumns:
    """:func:`read_trec_lines` with both id columns dictionary-encoded."""
    lines = read_trec_lines(path)
    queries, q_codes = _encode(lines.queries)
    docs, d_codes = _encode(lines.docs)
    return TrecColumns(lines.path, queries, q_codes, docs, d_codes, lines.scores)


def _first_line_fields(path: str) -> int:
    """The number of fields of the file's first line (split on its delimiter, as pyarrow does)."""
    head = read_head(path, 65536).removeprefix(b"\xef\xbb\xbf")
    first = head.split(b"\n", 1)[0].rstrip(b"\r")
    return len(first.split(b"\t" if b"\t" in first else b" "))  # (an empty field: refused by wider_table)


def _regular(tbl: Any, empty: bool = False) -> bool:
    """A table with lines (or none, if ``empty``), every score a number."""
    import pyarrow.compute as pc

    if tbl is None or not (empty or tbl.num_rows > 0):
        return False
    score = tbl.column("score")
    return score.null_count == 0 and not pc.any(pc.is_nan(score)).as_py()


def duplicate_error(path: str, queries: list[str], docs: list[str], q: int, d: int) -> InputError:
    """The error for a target ranked twice for one query, with both lines."""
    lines = []
    for n, line in text_lines(path):
        f = line.split()
        if len(f) > 2 and f[0] == queries[q] and f[2] == docs[d]:
            lines.append(n)
            if len(lines) == 2:
                break
    return InputError(path, lines[-1] if lines else None, f"expected each target once per query; {_pair(queries[q], docs[d])} is already ranked at line {lines[0] if lines else '?'}")


def read_trec_lines_lenient(path: str, drops: Counter[str]) -> TrecLines:
    """Line by line, dropping malformed lines and lines whose score is not a number (counted)."""
    try:
        return read_trec_lines(path)
    except InputError:
        pass
    qs, ds, sc = [], [], []
    cut = 0
    for _, line in text_lines(path):
        f = line.split()
        if not f:
            continue
        cut += len(f) > RUN_FIELDS
        score = parse_number(f[4]) if len(f) >= RUN_FIELDS else None
        if score is None or math.isnan(score):
            drops["malformed lines dropped"] += 1
            continue
        qs.append(f[0])
        ds.append(f[2])
        sc.append(score)
    import pyarrow as pa

    return TrecLines(path, pa.chunked_array([arrow_strings(qs)]), pa.chunked_array([arrow_strings(ds)]), np.asarray(sc, dtype=np.float64), cut)


def extra_fields_note(name: str, lines: int) -> str:
    """The note for run lines with more than six fields (accepted, as trec_eval does)."""
    return f"run {shown(name)}: {lines} line{'s carry' if lines != 1 else ' carries'} more than six fields; the words after the tag were ignored, as trec_eval does"
