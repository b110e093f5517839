"""Reader of ranked-list runs: one file per query, one target per line.

A run folder holds one file per query, named after the query id with or
without an extension.  Each non-blank line is ``target_id [distance]``; the
order of the lines is the ranking (distances are checked, not used to
re-rank).  A first line holding only the query id (SHREC 2012/2014
submissions) is skipped.  The lists are returned as the files give them: the
query's own item (all-against-all) is dropped by the ranking step
(:func:`shrec_score.ranking.drop_own_items`).
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Literal, overload

import numpy as np

from ..errors import InputError
from ..model import RankedRun
from .text import read_text

if TYPE_CHECKING:
    from .runs import RunSource

#: What a ranked list is read as: target indices, or with ``with_distances``
#: the indices and the distances (None when the lines carry none).
_Parsed = np.ndarray | tuple[np.ndarray, np.ndarray | None]


def query_files(folder: str, known_queries: Mapping[str, object], *, drops: Counter[str] | None = None) -> dict[str, str]:
    """Map query id -> file in ``folder``; a file whose name is no query is an error
    (counted and passed over when ``drops`` is given)."""
    out: dict[str, str] = {}
    for entry in sorted(os.listdir(folder)):
        if entry.startswith("."):
            continue
        full = os.path.join(folder, entry)
        if os.path.isdir(full):
            continue
        qid = entry if entry in known_queries else entry.rsplit(".", 1)[0]
        if qid not in known_queries and drops is not None:
            drops["files for unknown queries passed over"] += 1
            continue
        if qid not in known_queries:
            raise InputError(full, None, "expected a file named after a query id (with or without extension)", f"no query {qid!r} in the classification")
        if qid in out:
            raise InputError(full, None, f"expected one ranked list per query; query {qid!r} also has {out[qid]}")
        out[qid] = full
    return out


@overload
def read_ranked_list(
    path: str,
    query_id: str,
    target_index: Mapping[str, int],
    *,
    with_distances: Literal[False] = ...,
    drops: Counter[str] | None = ...,
    unjudged: int | None = ...,
) -> np.ndarray: ...
@overload
def read_ranked_list(
    path: str,
    query_id: str,
    target_index: Mapping[str, int],
    *,
    with_distances: Literal[True],
    drops: Counter[str] | None = ...,
    unjudged: int | None = ...,
) -> tuple[np.ndarray, np.ndarray | None]: ...
@overload
def read_ranked_list(
    path: str,
    query_id: str,
    target_index: Mapping[str, int],
    *,
    with_distances: bool,
    drops: Counter[str] | None = ...,
    unjudged: int | None = ...,
) -> _Parsed: ...
def read_ranked_list(
    path: str,
    query_id: str,
    target_index: Mapping[str, int],
    *,
    with_distances: bool = False,
    drops: Counter[str] | None = None,
    unjudged: int | None = None,
) -> _Parsed:
    """Read one query's ranked list as target indices (best first).

    Lines are ``target_id [distance]`` or, SHREC 2016 style, ``distance
    target_id``: the column that holds the ids is found by checking both
    against the collection (``target_id`` first when both could be ids).

    Parameters
    ----------
    path : str
        The query file.
    query_id : str
        The query it ranks for (a first line holding only this id is skipped).
    target_index : mapping
        Target id -> index into the collection.
    with_distances : bool, keyword-only
        Also return the distances (float64 array, or None when the lines
        carry none; lines with and without a distance may not be mixed).
    unjudged : int, keyword-only
        An open collection (qrels alone): ids outside ``target_index`` are
        admitted and get this index (gain 0).  None: a closed collection,
        where an unknown id is an error.
    drops : collections.Counter, keyword-only
        Lenient reading: instead of raising, malformed lines and unknown ids
        are dropped, a repeated id keeps its first place, a bad distance is
        ignored, and each is counted here by reason.
    """
    text = read_text(path)
    fast = _fast_parse(text, query_id, target_index, with_distances, unjudged)
    if fast is not None:
        return fast
    rows = [(n, f) for n, line in enumerate(text.splitlines(), start=1) if (f := line.split())]
    if rows and len(rows[0][1]) == 1 and rows[0][1][0] == query_id:
        rows = rows[1:]
    if drops is not None:
        return _read_lenient(rows, target_index, drops, with_distances, unjudged)
    for n, f in rows:
        if len(f) > 2:
            raise InputError(path, n, 'expected "<target> [distance]"', f"{len(f)} fields")
    id_col = _id_column(path, rows, target_index, unjudged is not None)
    out: list[int] = []
    dists: list[float] = []
    seen_at: dict[str, int] = {}
    width = len(rows[0][1]) if rows else 1
    for n, f in rows:
        if with_distances and len(f) != width:
            raise InputError(path, n, "expected a distance on every line or on none", f"{len(f)} field(s) after {width} on the first line")
        tid = f[id_col] if len(f) == 2 else f[0]
        idx = target_index.get(tid, unjudged)
        if idx is None:
            raise InputError(path, n, "expected a target id of the collection", f"unknown id {tid!r}")
        if len(f) == 2:
            dist = f[1 - id_col]
            try:
                d = float(dist)
            except ValueError:
                raise InputError(path, n, "expected a number as distance", repr(dist)) from None
            if math.isnan(d):
                raise InputError(path, n, "expected a number as distance", "NaN")
            dists.append(d)
        if tid in seen_at:
            raise InputError(path, n, f"expected each target once; {tid!r} is already ranked at line {seen_at[tid]}")
        seen_at[tid] = n
        out.append(idx)
    indices = np.asarray(out, dtype=np.int64)
    if with_distances:
        return indices, (np.asarray(dists, dtype=np.float64) if width == 2 else None)
    return indices


def _fields_per_line(text: str) -> np.ndarray | None:
    """Number of fields on each non-blank line (numpy over the bytes); None if not ASCII.

    Fields are what ``str.split()`` separates; text with control bytes other
    than tab, LF and CR (some are separators for Python's str methods and not
    for this counter), DEL, or a CR outside CRLF gets None (the exact reader).
    Once those are excluded, a byte <= 32 is a separator.
    """
    data = text.encode("utf-8")
    if len(data) != len(text):
        return None
    b = np.frombuffer(data, dtype=np.uint8)
    n_cr = data.count(b"\r")
    if np.count_nonzero(b < 32) != data.count(b"\t") + data.count(b"\n") + n_cr or b"\x7f" in data or n_cr != data.count(b"\r\n"):
        return None
    blank = b <= 32
    starts = ~blank
    starts[1:] &= blank[:-1]
    line = np.searchsorted(np.flatnonzero(b == 10), np.flatnonzero(starts))  # newlines before each field
    counts = np.bincount(line)
    return counts[counts > 0]


def _fast_parse(
    text: str, query_id: str, target_index: Mapping[str, int], with_distances: bool, unjudged: int | None = None
) -> _Parsed | None:
    """The common case in a few C-level passes; None sends the file to the exact slow path.

    Taken only when every non-blank line has the same number of fields (1 or
    2), ids are in the first column and known, targets are unique and
    distances are numbers; anything else gets its line-numbered error from the
    line-by-line reader.
    """
    counts = _fields_per_line(text)
    if counts is None or counts.size == 0:
        return None
    tokens = text.split()
    skip = 0
    if counts[0] == 1 and tokens[0] == query_id:  # SHREC 2012/2014 header line
        counts, skip = counts[1:], 1
    if counts.size == 0:
        return None
    width = int(counts[0])
    if width not in (1, 2) or (counts != width).any():
        return None
    ids = tokens[skip::width]
    if len(set(ids)) != len(ids):
        return None  # a repeated id: the exact path names both lines
    if unjudged is None:
        idx = list(map(target_index.get, ids))
        if None in idx:
            return None  # an unknown id: the exact path names the line
    else:
        idx = [target_index.get(i, unjudged) for i in ids]
    dist = None
    if width == 2:
        try:
            dist = np.asarray(tokens[skip + 1 :: 2], dtype=np.float64)
        except ValueError:
            return None
        if np.isnan(dist).any():
            return None
    indices = np.asarray(idx, dtype=np.int64)
    return (indices, dist) if with_distances else indices


def _read_lenient(
    rows: list[tuple[int, list[str]]],
    target_index: Mapping[str, int],
    drops: Counter[str],
    with_distances: bool,
    unjudged: int | None = None,
) -> _Parsed:
    """The lenient rules of :func:`read_ranked_list`, counting every drop."""
    pairs = [f for _, f in rows if len(f) == 2]
    id_col = 0
    if pairs and unjudged is None:
        if sum(f[0] in target_index for f in pairs) < sum(f[1] in target_index for f in pairs):
            id_col = 1
    out: list[int] = []
    seen: set[str] = set()
    for _, f in rows:
        if len(f) > 2:
            drops["malformed lines dropped"] += 1
            continue
        tid = f[id_col] if len(f) == 2 else f[0]
        idx = target_index.get(tid, unjudged)
        if idx is None:
            drops["unknown target ids dropped"] += 1
            continue
        if len(f) == 2:
            try:
                if math.isnan(float(f[1 - id_col])):
                    raise ValueError
            except ValueError:
                drops["bad distances ignored (target kept)"] += 1
        if tid in seen:
            drops["repeated target ids dropped (first place kept)"] += 1
            continue
        seen.add(tid)
        out.append(idx)
    indices = np.asarray(out, dtype=np.int64)
    return (indices, None) if with_distances else indices


def _id_column(path: str, rows: list[tuple[int, list[str]]], target_index: Mapping[str, int], is_open: bool = False) -> int:
    """0 for ``target distance`` lines, 1 for ``distance target`` (SHREC 2016)."""
    pairs = [f for _, f in rows if len(f) == 2]
    if not pairs or is_open:  # open collection: ids cannot be checked
        return 0
    first = sum(f[0] in target_index for f in pairs)
    if first == len(pairs):
        return 0
    second = sum(f[1] in target_index for f in pairs)
    if second == len(pairs):
        return 1
    col = 0 if first >= second else 1
    n, f = next((n, f) for n, f in rows if len(f) == 2 and f[col] not in target_index)
    where = "first" if col == 0 else "second"
    raise InputError(path, n, f"expected a target id of the collection (ids were found in the {where} column)", f"unknown id {f[col]!r}")


def read_list_run(
    source: RunSource,
    query_ids: list[str],
    target_index: Mapping[str, int],
    *,
    ignorable: Iterable[str] = (),
    drops: Counter[str] | None = None,
    unjudged: int | None = None,
) -> RankedRun:
    """Read a run folder with one ranked list per query.

    ``query_ids`` are the queries to score; ``ignorable`` are ids whose files
    may exist but are not scored (models of the PSB class ``-1``).
    Every query must have a file.  ``source`` has ``name`` and ``path``.
    """
    known = dict.fromkeys(query_ids)
    known.update(dict.fromkeys(ignorable))
    files = query_files(source.path, known, drops=drops)
    missing = [q for q in query_ids if q not in files]
    if missing and drops is not None:
        drops["queries without a ranked list (scored 0)"] += len(missing)
    elif missing:
        raise InputError(
            source.path,
            None,
            f"expected a ranked list for every query; run {source.name!r} has none for {len(missing)} of {len(query_ids)} queries",
            f"first missing: {missing[0]!r}",
        )
    empty = np.zeros(0, dtype=np.int64)
    lists = {
        q: read_ranked_list(files[q], q, target_index, drops=drops, unjudged=unjudged) if q in files else empty
        for q in query_ids
    }
    return RankedRun.from_lists(source.name, lists, [files.get(q, "") for q in query_ids])
