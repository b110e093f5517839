"""Readers of TREC files: qrels (``query_id iteration target_id grade``)."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError
from ..model import Qrels
from .text import read_text


def read_qrels(path: str | os.PathLike[str], *, meanwhile: Callable[[], Any] | None = None) -> Qrels:
    """Read a TREC qrels file; a pair judged twice is an error.

    Grades are integers; as in trec_eval, grade >= 1 is relevant and a
    negative grade (-1) marks an unjudged item (gain 0).  Large files are
    read with pyarrow when installed; any irregularity is reported by the
    line-by-line reader.  ``meanwhile`` is called in this thread while
    pyarrow reads a large file in another (pyarrow releases the GIL), so
    slow Python work (importing pandas) overlaps the read.
    """
    path = os.fspath(path)
    fast = None
    if USE_ARROW and os.path.isfile(path) and os.path.getsize(path) >= FAST_QRELS_BYTES and _arrow_loaded():
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(1) as pool:
            future = pool.submit(_read_qrels_fast, path)
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
        try:
            grade = int(f[3])
        except ValueError:
            raise InputError(path, n, "expected a whole number as grade", repr(f[3])) from None
        key = (f[0], f[2])
        if key in seen:
            raise InputError(path, n, f"expected each (query, target) pair once; {f[0]} {f[2]} is already judged at line {seen[key]}")
        seen[key] = n
        queries.append(f[0])
        targets.append(f[2])
        grades.append(grade)
    if not queries:
        raise InputError(path, None, "expected at least one judgment", "an empty file")
    return Qrels.from_lists(path, queries, targets, grades)


#: Qrels files from this size are read with pyarrow (below, the line reader is as fast).
FAST_QRELS_BYTES = 1 << 20


def _arrow_loaded() -> bool:
    """Import what the pyarrow reader uses, here: the reading thread then imports nothing."""
    try:
        import pyarrow.compute  # noqa: F401
        import pyarrow.csv  # noqa: F401
    except ImportError:
        return False
    return True


def _read_qrels_fast(path: str) -> Qrels | None:
    from .trec_stream import reading_ahead

    # while a run is read ahead, its thread has the other core: one thread
    # here (A/B on the bench's TREC case: 2.09 -> 2.01 s)
    tbl = _read_columns_arrow(
        path, ["query", "iter", "doc", "grade"], {"query": "string", "doc": "string", "grade": "int64"}, ["query", "doc", "grade"], threads=not reading_ahead()
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
USE_ARROW = True  # tests switch it off to exercise the pandas path


def _locate_trec_problem(path: str) -> None:
    """Slow path: find the first malformed line of a TREC run and raise."""
    for n, line in enumerate(read_text(path).splitlines(), start=1):
        f = line.split()
        if not f:
            continue
        if len(f) != 6:
            raise InputError(path, n, f'expected "{TREC_RUN_FIELDS}"', f"{len(f)} fields")
        try:
            score = float(f[4])
        except ValueError:
            raise InputError(path, n, "expected a number as score (5th field)", repr(f[4])) from None
        if math.isnan(score):
            raise InputError(path, n, "expected a number as score (5th field)", "NaN")
    raise InputError(path, None, f'expected lines "{TREC_RUN_FIELDS}"')


def read_trec_run_table(path: str | os.PathLike[str], *, check_duplicates: bool = True):
    """Read a TREC run into a DataFrame (query, doc, score, line), using pandas' C parser."""
    import numpy as np
    import pandas as pd

    path = os.fspath(path)
    try:
        # No names: pandas then refuses a line longer than the first one
        # (with names it would silently drop the extra fields).
        df = pd.read_csv(path, sep=r"\s+", header=None, dtype=str, engine="c", keep_default_na=False, na_filter=False)
    except pd.errors.EmptyDataError:
        raise InputError(path, None, f'expected lines "{TREC_RUN_FIELDS}"', "an empty file") from None
    except UnicodeDecodeError:
        read_text(path)  # raises with the line of the bad byte
        raise
    except (pd.errors.ParserError, ValueError):
        _locate_trec_problem(path)
        raise
    if df.shape[1] != 6 or (df == "").to_numpy().any():
        _locate_trec_problem(path)
    df = df.iloc[:, [0, 2, 4, 5]]
    df.columns = ["query", "doc", "score", "tag"]
    scores = pd.to_numeric(df["score"], errors="coerce").to_numpy(dtype=np.float64)
    if np.isnan(scores).any():
        _locate_trec_problem(path)
    dup = df.duplicated(["query", "doc"]) if check_duplicates else None
    if dup is not None and dup.any():
        first = int(np.flatnonzero(dup.to_numpy())[0])
        q, d = df["query"].iat[first], df["doc"].iat[first]
        lines = _line_numbers(path)
        earlier = int(np.flatnonzero(((df["query"] == q) & (df["doc"] == d)).to_numpy())[0])
        raise InputError(path, lines[first], f"expected each target once per query; {q} {d} is already ranked at line {lines[earlier]}")
    return df.assign(score=scores)


def _line_numbers(path: str) -> list[int]:
    return [n for n, line in enumerate(read_text(path).splitlines(), start=1) if line.split()]


@dataclass
class TrecColumns:
    """A TREC run as columns: query and target ids dictionary-encoded, scores as floats."""

    path: str
    queries: list[str]
    q_codes: np.ndarray
    docs: list[str]
    d_codes: np.ndarray
    scores: np.ndarray


def _delimiter(path: str) -> str:
    with open(path, "rb") as fh:
        head = fh.read(65536)
    first = head.split(b"\n", 1)[0]
    return "\t" if b"\t" in first else " "


def _read_columns_arrow(path: str, names: list[str], types: dict, keep: list[str], *, threads: bool = True):
    """pyarrow's CSV reader (the ``fast`` extra), multi-threaded unless
    ``threads`` is False; None if unavailable or the layout is irregular."""
    try:
        import pyarrow as pa
        import pyarrow.csv as pcsv
    except ImportError:
        return None
    try:
        return pcsv.read_csv(
            path,
            read_options=pcsv.ReadOptions(column_names=names, block_size=(16 << 20) if threads else (1 << 20), use_threads=threads),
            parse_options=pcsv.ParseOptions(delimiter=_delimiter(path), quote_char=False),
            convert_options=pcsv.ConvertOptions(include_columns=keep, column_types={k: getattr(pa, v)() for k, v in types.items()}),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError, OSError):
        return None


_NUMPY_TYPES = {"double": "float64", "float": "float32", "int64": "int64", "int32": "int32", "int16": "int16", "int8": "int8", "uint64": "uint64", "uint32": "uint32"}


def arrow_numpy(values) -> np.ndarray:
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


def _encode(column) -> tuple[list[str], np.ndarray]:
    """pyarrow string column -> (distinct values, int64 codes)."""
    import numpy as np
    import pyarrow.compute as pc

    enc = pc.dictionary_encode(column).combine_chunks()
    return enc.dictionary.to_pylist(), arrow_numpy(enc.indices).astype(np.int64)



def read_trec_columns(path: str | os.PathLike[str]) -> TrecColumns:
    """Read a TREC run fast: pyarrow when installed (``pip install 'shrec-score[fast]'``),
    else pandas' C parser; any malformed line is reported by the exact line
    scanner.  Duplicated (query, target) pairs are checked by the caller."""
    import numpy as np
    import pandas as pd

    path = os.fspath(path)
    names = ["query", "q0", "doc", "rank", "score", "tag"]
    tbl = _read_columns_arrow(path, names, {"query": "string", "doc": "string", "score": "float64", "tag": "string"}, ["query", "doc", "score", "tag"]) if USE_ARROW else None
    if tbl is not None and tbl.num_rows and tbl.column("score").null_count == 0 and tbl.column("tag").null_count == 0:
        scores = arrow_numpy(tbl.column("score"))
        if not np.isnan(scores).any():
            queries, q_codes = _encode(tbl.column("query"))
            docs, d_codes = _encode(tbl.column("doc"))
            return TrecColumns(path, queries, q_codes, docs, d_codes, scores)
    df = read_trec_run_table(path, check_duplicates=False)
    q_codes, queries = pd.factorize(df["query"])
    d_codes, docs = pd.factorize(df["doc"])
    return TrecColumns(path, list(queries), q_codes.astype(np.int64), list(docs), d_codes.astype(np.int64), df["score"].to_numpy(dtype=np.float64))


def duplicate_error(path: str, queries: list[str], docs: list[str], q: int, d: int) -> InputError:
    """The error for a target ranked twice for one query, with both lines."""
    lines = []
    for n, line in enumerate(read_text(path).splitlines(), start=1):
        f = line.split()
        if len(f) > 2 and f[0] == queries[q] and f[2] == docs[d]:
            lines.append(n)
            if len(lines) == 2:
                break
    return InputError(path, lines[-1] if lines else None, f"expected each target once per query; {queries[q]} {docs[d]} is already ranked at line {lines[0] if lines else '?'}")


def read_trec_columns_lenient(path: str, drops) -> TrecColumns:
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
        try:
            score = float(f[4]) if len(f) == 6 else float("nan")
        except ValueError:
            score = float("nan")
        if len(f) != 6 or math.isnan(score):
            drops["malformed lines dropped"] += 1
            continue
        qs.append(f[0])
        ds.append(f[2])
        sc.append(score)
    import pandas as pd

    q_codes, queries = pd.factorize(pd.Series(qs, dtype=object))
    d_codes, docs = pd.factorize(pd.Series(ds, dtype=object))
    return TrecColumns(path, list(queries), q_codes.astype(np.int64), list(docs), d_codes.astype(np.int64), np.asarray(sc, dtype=np.float64))
