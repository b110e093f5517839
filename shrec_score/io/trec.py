"""Readers of TREC files: qrels (``query_id iteration target_id grade``) and
runs read whole (``query_id Q0 target_id rank score tag``).

pyarrow's CSV reader parses them; its float parser reads the number grammar
of :mod:`shrec_score.io.numbers` (``nan`` is a null for it, and NaN is
refused as a score anyway), and the line readers that report errors check
every score against that grammar.  Lines longer than
:data:`~shrec_score.io.text.MAX_LINE_BYTES` are refused before pyarrow
parses them (pyarrow itself admits rows of up to two blocks).
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
from .text import plain, read_head, read_text, regular_file, scan_line_lengths


def read_qrels(path: str | os.PathLike[str], *, meanwhile: Callable[[], Any] | None = None, threads: bool = True) -> Qrels:
    """Read a TREC qrels file; a pair judged twice is an error.

    Grades are integers; as in trec_eval, grade >= 1 is relevant and a
    negative grade (-1) marks an unjudged item (gain 0).  Large files are
    read with pyarrow (``threads``: on several cores; off while a run is
    parsed ahead on the other one); any irregularity is reported by the
    line-by-line reader.  ``meanwhile`` is called in this thread while
    pyarrow reads a large file in another (pyarrow releases the GIL), so
    slow Python work (importing pandas) overlaps the read.
    """
    path = regular_file(path)
    read_head(path)  # UTF-16 / UTF-32 named as such
    fast = None
    if os.path.getsize(path) >= FAST_QRELS_BYTES:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(1) as pool:
            future = pool.submit(_read_qrels_fast, path, threads)
            if meanwhile is not None:
                meanwhile()
            fast = future.result()
    elif meanwhile is not None:
        meanwhile()
    if fast is not None:
        return fast
    queries: list[str] = []
    targets: list[str] = []
    grades: list[int] = []
    seen: dict[tuple[str, str], int] = {}
    for n, line in enumerate(read_text(path).splitlines(), start=1):
        f = line.split()
        if not f:
            continue
        if len(f) != 4:
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
    return Qrels.from_lists(path, queries, targets, grades)


#: Qrels files from this size are read with pyarrow (below, the line reader is as fast).
FAST_QRELS_BYTES = 1 << 20


def _read_qrels_fast(path: str, threads: bool) -> Qrels | None:
    scan_line_lengths(path)
    # while a run is read ahead, its thread has the other core: one thread
    # here (A/B on the bench's TREC case: 2.09 -> 2.01 s)
    tbl = _read_columns_arrow(
        path, ["query", "iter", "doc", "grade"], {"query": "string", "doc": "string", "grade": "int64"}, ["query", "doc", "grade"], threads=threads
    )
    if tbl is None or tbl.num_rows == 0 or tbl.column("grade").null_count:
        return None
    queries, q_codes = _encode(tbl.column("query"))
    docs, d_codes = _encode(tbl.column("doc"))
    keys = np.sort(q_codes * max(1, len(docs)) + d_codes)
    if (keys[1:] == keys[:-1]).any():
        return None  # the line reader names both lines
    return Qrels(path, queries, q_codes, docs, d_codes, arrow_numpy(tbl.column("grade")).astype(np.int64))


TREC_RUN_FIELDS = "query_id Q0 target_id rank score tag"


def _pair(query: str, target: str) -> str:
    """``query target`` as a message shows them (see :func:`~shrec_score.io.text.plain`)."""
    return f"{plain(query)} {plain(target)}"


def _locate_trec_problem(path: str) -> None:
    """Slow path: find the first malformed line of a TREC run and raise."""
    lines = 0
    for n, line in enumerate(read_text(path).splitlines(), start=1):
        f = line.split()
        if not f:
            continue
        lines += 1
        if len(f) != 6:
            raise InputError(path, n, f'expected "{TREC_RUN_FIELDS}"', f"{len(f)} fields")
        score = parse_number(f[4])
        if score is None:
            raise InputError(path, n, "expected a number as score (5th field)", shown(f[4]))
        if math.isnan(score):
            raise InputError(path, n, "expected a number as score (5th field)", "NaN")
    raise InputError(path, None, f'expected lines "{TREC_RUN_FIELDS}"', None if lines else "an empty file")


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


def _read_columns_arrow(
    source: Any, names: list[str], types: dict[str, str], keep: list[str], *, threads: bool = True, delimiter: str | None = None
) -> Any:
    """pyarrow's CSV reader over a path or a buffer, multi-threaded unless
    ``threads`` is False; None if the layout is irregular (the caller then
    normalises the whitespace or finds the malformed line)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    try:
        return pcsv.read_csv(
            source,
            read_options=pcsv.ReadOptions(column_names=names, block_size=(16 << 20) if threads else (1 << 20), use_threads=threads),
            parse_options=pcsv.ParseOptions(delimiter=delimiter or _delimiter(source), quote_char=False),
            convert_options=pcsv.ConvertOptions(include_columns=keep, column_types={k: getattr(pa, v)() for k, v in types.items()}),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError, OSError):
        return None


def _normalised_whitespace(path: str) -> Any:
    """The file with every run of blanks (spaces, tabs, CR) made one space
    and lines trimmed, as a pyarrow buffer: trec_eval splits lines on any
    whitespace, pyarrow on one delimiter."""
    import re

    import pyarrow as pa

    with open(path, "rb") as fh:
        data = fh.read()
    data = re.sub(rb"[ \t\r\f\v]+", b" ", data.removeprefix(b"\xef\xbb\xbf"))
    data = re.sub(rb"(?m)^ | $", b"", data)
    return pa.BufferReader(pa.py_buffer(data))


_NUMPY_TYPES = {"double": "float64", "float": "float32", "int64": "int64", "int32": "int32", "int16": "int16", "int8": "int8", "uint64": "uint64", "uint32": "uint32"}


def arrow_numpy(values: Any) -> np.ndarray:
    """A pyarrow array (or chunked array) as numpy, without pandas.

    pyarrow's ``to_numpy`` imports pandas first; in a reading thread that
    means waiting for the main thread's own import of pandas (the module
    lock), which is what the reading thread is meant to overlap.  A
    fixed-width column without nulls is viewed in place; anything else
    goes through ``to_numpy`` (nulls of a float column: NaN).
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


def _encode(column: Any) -> tuple[list[str], np.ndarray]:
    """pyarrow string column -> (distinct values, int64 codes)."""
    import numpy as np
    import pyarrow.compute as pc

    enc = pc.dictionary_encode(column).combine_chunks()
    return enc.dictionary.to_pylist(), arrow_numpy(enc.indices).astype(np.int64)



def read_trec_columns(path: str | os.PathLike[str]) -> TrecColumns:
    """Read a TREC run with pyarrow's multi-threaded CSV reader.

    Fields may be separated by any run of blanks, as trec_eval allows (a
    file whose lines do not split on one delimiter is read again with its
    whitespace normalised); a malformed line is reported by the exact line
    scanner.  Duplicated (query, target) pairs are checked by the caller.
    """
    path = regular_file(path)
    read_head(path)  # UTF-16 / UTF-32 named as such
    scan_line_lengths(path)  # before pyarrow parses the file
    names = ["query", "q0", "doc", "rank", "score", "tag"]
    types = {"query": "string", "doc": "string", "score": "float64", "tag": "string"}
    keep = ["query", "doc", "score", "tag"]
    tbl = _read_columns_arrow(path, names, types, keep)
    if not _regular(tbl):
        tbl = _read_columns_arrow(_normalised_whitespace(path), names, types, keep, delimiter=" ")
    if not _regular(tbl):
        read_text(path)  # a byte that is not UTF-8: named with its line
        _locate_trec_problem(path)
    scores = arrow_numpy(tbl.column("score"))
    queries, q_codes = _encode(tbl.column("query"))
    docs, d_codes = _encode(tbl.column("doc"))
    return TrecColumns(path, queries, q_codes, docs, d_codes, scores)


def _regular(tbl: Any) -> bool:
    """A table with lines, every field present and every score a number."""
    return (
        tbl is not None
        and tbl.num_rows > 0
        and tbl.column("score").null_count == 0
        and tbl.column("tag").null_count == 0
        and not np.isnan(arrow_numpy(tbl.column("score"))).any()
    )


def duplicate_error(path: str, queries: list[str], docs: list[str], q: int, d: int) -> InputError:
    """The error for a target ranked twice for one query, with both lines."""
    lines = []
    for n, line in enumerate(read_text(path).splitlines(), start=1):
        f = line.split()
        if len(f) > 2 and f[0] == queries[q] and f[2] == docs[d]:
            lines.append(n)
            if len(lines) == 2:
                break
    return InputError(path, lines[-1] if lines else None, f"expected each target once per query; {_pair(queries[q], docs[d])} is already ranked at line {lines[0] if lines else '?'}")


def read_trec_columns_lenient(path: str, drops: Counter[str]) -> TrecColumns:
    """Line by line, dropping malformed lines and lines whose score is not a number (counted)."""
    import numpy as np

    try:
        return read_trec_columns(path)
    except InputError:
        pass
    qs, ds, sc = [], [], []
    for line in read_text(path).splitlines():
        f = line.split()
        if not f:
            continue
        score = parse_number(f[4]) if len(f) == 6 else None
        if score is None or math.isnan(score):
            drops["malformed lines dropped"] += 1
            continue
        qs.append(f[0])
        ds.append(f[2])
        sc.append(score)

    q = Qrels.from_lists(path, qs, ds, [0] * len(qs))  # dictionary-encodes both columns
    return TrecColumns(path, q.query_ids, q.query_codes, q.target_ids, q.target_codes, np.asarray(sc, dtype=np.float64))
