"""TREC qrels and runs by trec_eval's field rule (docs/inputs.md): pyarrow's CSV reader parses what splits on one
delimiter, :func:`_split_table` the rest, and the line reader names a bad line."""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from itertools import islice
from typing import Any

import numpy as np

from ..errors import InputError, shown
from ..model import Qrels
from .compressed import Decompressed, open_input
from .numbers import is_integer, parse_number
from .text import HEAD_BYTES, check_lines, open_checked, pieces, plain, refuse_wide_text, text_lines

#: The blanks that separate fields: trec_eval's (``isspace`` in the C locale) less the line ends.  Any other
#: character, a no-break space, U+2028 or ``\x1c`` included, is part of its field.
BLANKS = " \t\f\v"
_FIELD = re.compile(f"[^{BLANKS}]+")

#: The highest grade a qrels line may give (grades are held in a byte; trec_eval's test files go to 4).
MAX_GRADE = 127
#: Qrels files from this size are read with pyarrow (below, the line reader is as fast).
FAST_QRELS_BYTES = 1 << 20

TREC_RUN_FIELDS = "query_id Q0 target_id rank score tag"
RUN_NAMES = ["query", "q0", "doc", "rank", "score", "tag"]


def fields(line: str) -> list[str]:
    """The fields of one line (:func:`~.text.text_lines` gives its lines), split on runs of :data:`BLANKS`.

    >>> fields("\\tq1  Q0 d2\\f 1 0.5 my run"), fields("d\\u00a01 x")
    (['q1', 'Q0', 'd2', '1', '0.5', 'my', 'run'], ['d\\xa01', 'x'])
    """
    if line.isascii() and "\x1c" not in line and "\x1d" not in line and "\x1e" not in line and "\x1f" not in line:
        return line.split()  # (str.split's whitespace, less \x1c-\x1f, is BLANKS and the line ends on ASCII text; faster)
    return _FIELD.findall(line)


def trec_lines(path: str, fh: Any = None) -> Iterator[tuple[int, list[str]]]:
    """``(line number, fields)`` of every line of ``path`` (``fh``: opened by the caller) that is not blank."""
    yield from ((n, f) for n, line in text_lines(path, fh=fh) if (f := fields(line)))


def read_qrels(path: str | os.PathLike[str], fh: Any = None) -> Qrels:
    """A TREC qrels file (``fh``: opened by the caller; pyarrow reads a large or compressed one); a pair judged twice is
    an error; a negative grade (trec_eval's RELVALUE_UNJUDGED) drops the judgment, its ids stay listed."""
    path = os.fspath(path)
    with open_checked(path) if fh is None else nullcontext(fh) as fh:
        fast = isinstance(fh, Decompressed) or os.fstat(fh.fileno()).st_size >= FAST_QRELS_BYTES
        qrels = _read_qrels_fast(path, fh) if fast else None
        if qrels is None:  # the line reader (of the file again where pyarrow refused it: it names the line)
            rows: dict[tuple[str, str], tuple[int, int]] = {}  # (query, target) -> (grade, line)
            for n, f in trec_lines(path, None if fast else fh):
                if len(f) != 4:  # trec_eval's get_qrels.c refuses more fields too
                    raise InputError(path, n, 'expected "query_id iteration target_id grade"', f"{len(f)} fields")
                if not is_integer(f[3]):
                    raise InputError(path, n, "expected a whole number as grade", shown(f[3]))
                if int(f[3]) > MAX_GRADE:
                    raise InputError(path, n, f"expected a grade of at most {MAX_GRADE}", shown(f[3]))
                key = (f[0], f[2])
                if key in rows:
                    raise InputError(path, n, f"expected each (query, target) pair once; {_pair(*key)} is already judged at line {rows[key][1]}")
                rows[key] = (max(int(f[3]), -1), n)
            if not rows:
                raise InputError(path, None, "expected at least one judgment", "an empty file")
            qrels = Qrels.from_lists(path, [q for q, _ in rows], [t for _, t in rows], [g for g, _ in rows.values()])
    keep = qrels.grades >= 0
    return Qrels(path, qrels.query_ids, qrels.query_codes[keep], qrels.target_ids, qrels.target_codes[keep], qrels.grades[keep])


def _read_qrels_fast(path: str, fh: Any) -> Qrels | None:
    """The qrels read by pyarrow, or None for the line reader to name a problem or read a grade such as ``+1`` (:func:`~.numbers.is_integer`'s rule)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    tbl = _read_table(path, fh, ["query", "iter", "doc", "grade"], "grade", pa.string())[0]
    if tbl is None or tbl.num_rows == 0 or not pc.all(pc.match_substring_regex(tbl.column("grade"), "^-?[0-9]{1,18}$")).as_py():
        return None
    queries, q_codes = encode(tbl.column("query"))
    docs, d_codes = encode(tbl.column("doc"))
    keys = np.sort(q_codes * max(1, len(docs)) + d_codes)  # (np.unique hashes: twice the time of a sort here)
    grades = arrow_numpy(pc.cast(tbl.column("grade"), pa.int64()))
    if (keys[1:] == keys[:-1]).any() or grades.max(initial=0) > MAX_GRADE:
        return None  # the line reader names the lines
    return Qrels(path, queries, q_codes, docs, d_codes, grades)


def _pair(query: str, target: str) -> str:
    return f"{plain(query)} {plain(target)}"


def line_error(path: str, n: int, f: list[str]) -> InputError | None:
    """The error of a run line's fields ``f`` (line ``n``), or None: fewer than six fields, or a score that is not a number (NaN included)."""
    if len(f) < 6:  # (more: the words after the tag's first are ignored, as trec_eval's get_trec_results.c)
        return InputError(path, n, f'expected "{TREC_RUN_FIELDS}"', f"{len(f)} fields")
    score = parse_number(f[4])
    if score is None or math.isnan(score):
        return InputError(path, n, "expected a number as score (5th field)", "NaN" if score is not None else shown(f[4]))
    return None


def repeated_error(path: str, query: str, target: str, first: int, line: int) -> InputError:
    return InputError(path, line, f"expected each target once per query; {_pair(query, target)} is already ranked at line {first}")


def unknown_target_error(path: str, line: int | None, target: str) -> InputError:
    return InputError(path, line, "expected a target id of the collection", f"unknown id {shown(target)}")


def missing_queries_error(path: str, name: str, missing: int, queries: int, first: str, what: str = "a ranking") -> InputError:
    return InputError(path, None, f"expected {what} for every query; run {shown(name)} has none for {missing} of {queries} queries", f"first missing: {shown(first)}")


def empty_run_error(path: str) -> InputError:
    return InputError(path, None, f'expected lines "{TREC_RUN_FIELDS}"', "an empty file")


@dataclass
class TrecLines:
    """A TREC run's lines in file order: query and target ids as pyarrow chunked string arrays, scores as floats."""

    queries: Any
    docs: Any
    scores: np.ndarray
    extra_field_lines: int = 0  # lines of more than six fields (the words after the tag ignored)
    tag: str | None = None  # the tag of every line when it is one (trec_eval's runid)


def _delimiter(data: Any) -> tuple[str, int] | None:
    """The delimiter (tab if the first line has one, else space) and the first line's field count; None if ``data`` holds another blank."""
    end = data.find(b"\n")
    first = data[: end if end >= 0 else len(data)].split(b"\r", 1)[0]
    delimiter = "\t" if b"\t" in first else " "
    if any(data.find(b.encode()) >= 0 for b in BLANKS if b != delimiter):
        return None
    return delimiter, len(first.split(delimiter.encode()))


def _file_layout(path: str, fh: Any) -> tuple[str, int] | None:
    """:func:`_delimiter` of uncompressed ``path`` (``fh``), memory-mapped; UTF-16 / 32 text, a 1 MiB line refused."""
    import mmap

    if os.fstat(fh.fileno()).st_size == 0:
        return None
    with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        refuse_wide_text(path, mm[:HEAD_BYTES])
        check_lines(path, mm)  # type: ignore[arg-type]  # (an mmap finds and slices as bytes do)
        return _delimiter(mm)


def _csv(source: bytes | str, names: list[str], number: str, kind: Any, wider: bool = False, fh: Any = None) -> tuple[Any, int] | None:
    """pyarrow's parse of ``source`` (whole lines, or an uncompressed path opened as ``fh``) as ``names``, strings but
    ``number``, and its lines of more fields (``wider``: columns added); None unless split as :func:`fields` does."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    layout = _file_layout(source, fh) if isinstance(source, str) else _delimiter(source)
    if layout is None:
        return None
    cols = names + [f"more{i}" for i in range(layout[1] - len(names) if wider else 0)]
    try:
        tbl = pcsv.read_csv(
            source if isinstance(source, str) else pa.BufferReader(source),
            # threads only on a file pyarrow opens: its threaded reader frees a Python buffer on a pool thread after
            # read_csv returns, which needs the GIL; at the interpreter's exit that aborted the process (exit 134)
            read_options=pcsv.ReadOptions(column_names=cols, block_size=4 << 20, use_threads=isinstance(source, str)),
            parse_options=pcsv.ParseOptions(delimiter=layout[0], quote_char=False),
            # an empty field (two delimiters in a row, one at a line's end) reads as null
            convert_options=pcsv.ConvertOptions(column_types={n: pa.string() for n in cols} | {number: kind}, strings_can_be_null=True, null_values=[""]),
            memory_pool=pa.system_memory_pool(),  # (malloc: a third of mimalloc's system time here, docs/performance.md)
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    return None if any(c.null_count for c in tbl.columns) else (tbl, tbl.num_rows if len(cols) > len(names) else 0)


def _split_table(data: bytes, names: list[str], number: str, kind: Any, wider: bool) -> tuple[Any, int]:
    """:func:`_csv`'s answer for the non-blank lines of ``data`` split as :func:`fields` does, with no Python object per
    line; ``ArrowInvalid`` for a line of fewer (or, not ``wider``, more) fields, a bad number or bytes not UTF-8."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if b"\r" in data:
        data = re.sub(rb"\r\n?", b"\n", data)
    text = pa.LargeStringArray.from_buffers(1, pa.py_buffer(np.array([0, len(data)], dtype=np.int64)), pa.py_buffer(data))
    if not data.isascii():
        text.validate(full=True)  # UTF-8 (ArrowInvalid otherwise)
    lines = pc.ascii_trim_whitespace(pc.split_pattern(text, "\n").flatten())  # (pyarrow's ASCII whitespace: BLANKS)
    # numbers go to pyarrow as arrays built from buffers (arrow_indices): it converts Python ints by pandas
    lines = lines.take(arrow_indices(np.flatnonzero(arrow_numpy(pc.binary_length(lines)) > 0)))
    parts = pc.ascii_split_whitespace(lines, max_splits=len(names))
    n = arrow_numpy(pc.list_value_length(parts))
    if n.size and (n.min() < len(names) or not wider and n.max() > len(names)):
        raise pa.ArrowInvalid(f"a line without {len(names)} fields")
    columns = {
        name: pc.cast(pc.list_element(parts, arrow_indices(np.array([i]))[0]), kind if name == number else pa.string())
        for i, name in enumerate(names)
        if name in ("query", "doc", number, "tag")
    }
    return pa.table(columns), int(np.count_nonzero(n > len(names)))


def _read_table(path: str, fh: Any, names: list[str], number: str, kind: Any, wider: bool = False) -> tuple[Any, int]:
    """The ``query``, ``doc``, ``number`` (and ``tag``) columns of ``path`` (``fh``: it opened; None where a line does
    not read) and its lines of more fields: an uncompressed file whole, else (or if that fails) a piece at a time."""
    import pyarrow as pa

    keep = [n for n in ("query", "doc", number, "tag") if n in names]
    whole = None if isinstance(fh, Decompressed) else _csv(path, names, number, kind, wider, fh)
    if whole is not None:
        return whole[0].select(keep), whole[1]
    tables, more = [], 0
    fh.seek(0)
    for piece, line in pieces(path, fh=fh):
        piece = piece.removeprefix(b"\xef\xbb\xbf") if line == 1 else piece
        try:
            tbl, n = _csv(piece, names, number, kind, wider) or _split_table(piece, names, number, kind, wider)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            return None, more
        more += n
        tables.append(tbl.select(keep))
    return (pa.concat_tables(tables) if tables else None), more


def arrow_numpy(values: Any) -> np.ndarray:
    """A pyarrow array (or chunked array) as numpy without ``to_numpy``'s pandas import: numbers without nulls viewed in place."""
    import pyarrow as pa

    if hasattr(values, "chunks"):
        parts = [arrow_numpy(c) for c in values.chunks]
        return parts[0] if len(parts) == 1 else np.concatenate(parts) if parts else values.to_numpy()
    if values.null_count or not (pa.types.is_integer(values.type) or pa.types.is_floating(values.type)):
        return values.to_numpy(zero_copy_only=False)
    dtype = np.dtype(values.type.to_pandas_dtype())
    return np.frombuffer(values.buffers()[1], dtype=dtype, count=len(values), offset=values.offset * dtype.itemsize)


def arrow_strings(values: list[str]) -> Any:
    """Python strings as a pyarrow string array from its buffers (``pa.array`` imports pandas: 0.2-0.3 s)."""
    import pyarrow as pa

    data = [v.encode() for v in values]
    offsets = np.zeros(len(data) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in data], out=offsets[1:])
    return pa.Array.from_buffers(pa.large_string(), len(data), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))]).cast(pa.string())


def arrow_filled(found: Any, value: int) -> np.ndarray:
    """``found`` (an ``index_in`` result) as int64 numpy, its nulls as ``value`` (``pc.fill_null`` would import pandas)."""
    import pyarrow.compute as pc

    return arrow_numpy(pc.coalesce(found, arrow_indices(np.array([value]))[0])).astype(np.int64)


def arrow_indices(values: np.ndarray) -> Any:
    """An int64 numpy array as a pyarrow array (for ``take``), without ``pa.array``'s pandas import."""
    import pyarrow as pa

    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def encode(column: Any) -> tuple[list[str], np.ndarray]:
    """pyarrow string column -> (distinct values, int64 codes)."""
    import pyarrow.compute as pc

    enc = pc.dictionary_encode(column).combine_chunks()
    return enc.dictionary.to_pylist(), arrow_numpy(enc.indices).astype(np.int64)


def read_trec_lines(path: str, drops: Counter[str] | None = None) -> TrecLines:
    """A TREC run by pyarrow, else the line reader naming its first bad line (``drops``: counted); repeats: caller's."""
    import pyarrow as pa
    import pyarrow.compute as pc

    with open_input(path) as fh:  # (discovery's stat found a regular file); UTF-16 / UTF-32 named as such
        tbl, more = _read_table(path, fh, RUN_NAMES, "score", pa.float64(), wider=True)
    scores = arrow_numpy(tbl.column("score")) if tbl is not None else np.zeros(0)
    if not scores.size or np.isnan(scores).any():
        kept: list[list[str]] = []
        read = 0
        for n, f in trec_lines(path):  # a byte that is not UTF-8, a malformed line: named with its line
            read += 1
            if (error := line_error(path, n, f)) is not None and drops is None:
                raise error
            if error is None and drops is not None:
                kept.append(f)
        if drops is None:
            raise InputError(path, None, f'expected lines "{TREC_RUN_FIELDS}"') if read else empty_run_error(path)
        if len(kept) < read:
            drops["malformed lines dropped"] += read - len(kept)
        # the lines kept parsed as pyarrow parses a file (more: the lines scored, not those dropped, carry > 6 fields)
        text = "".join(" ".join(f) + "\n" for f in kept).encode()
        tbl, more = _split_table(text, RUN_NAMES, "score", pa.float64(), True)
        scores = arrow_numpy(tbl.column("score"))
    tags = pc.min_max(tbl.column("tag"))
    tag = tags["min"].as_py()
    return TrecLines(tbl.column("query"), tbl.column("doc"), scores, more, tag if tag == tags["max"].as_py() else None)


def duplicate_error(path: str, query: str, target: str, spell: Callable[[str], str] = str) -> InputError:
    """The error for ``target`` ranked twice for ``query``, both lines named (``spell``: run ids to the relevance's)."""
    (first, _), (line, f) = islice(((n, f) for n, f in trec_lines(path) if spell(f[0]) == query and spell(f[2]) == target), 2)
    return repeated_error(path, f[0], f[2], first, line)


def extra_fields_note(name: str, lines: int) -> str:
    """The note for run lines with more than six fields (accepted, as trec_eval does)."""
    return f"run {shown(name)}: {lines} line{'s carry' if lines != 1 else ' carries'} more than six fields; the words after the tag were ignored, as trec_eval does"
