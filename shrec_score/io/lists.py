"""Reader of ranked-list runs: one file per query, one target per line.

A run folder holds one file per query, named after the query id with or
without an extension.  Each non-blank line is ``target_id [distance]``; the
order of the lines is the ranking (distances are checked, not used to
re-rank).  A first line holding only the query id (SHREC 2012/2014
submissions) is skipped.  In all-against-all mode the query itself is dropped
from its own list.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping

import numpy as np

from ..errors import InputError
from ..model import RankedRun
from .text import read_text


def query_files(folder: str, known_queries: Mapping[str, object]) -> dict[str, str]:
    """Map query id -> file in ``folder``; a file whose name is no query is an error."""
    out: dict[str, str] = {}
    for entry in sorted(os.listdir(folder)):
        if entry.startswith("."):
            continue
        full = os.path.join(folder, entry)
        if os.path.isdir(full):
            continue
        qid = entry if entry in known_queries else entry.rsplit(".", 1)[0]
        if qid not in known_queries:
            raise InputError(full, None, "expected a file named after a query id (with or without extension)", f"no query {qid!r} in the classification")
        if qid in out:
            raise InputError(full, None, f"expected one ranked list per query; query {qid!r} also has {out[qid]}")
        out[qid] = full
    return out


def read_ranked_list(
    path: str,
    query_id: str,
    target_index: Mapping[str, int],
    *,
    self_index: int = -1,
    with_distances: bool = False,
):
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
    self_index : int, keyword-only
        Index of the query in the collection (all-against-all mode); dropped
        from the list.  ``-1`` when the query is not in the collection.
    with_distances : bool, keyword-only
        Also return the distances (float64 array, or None when the lines
        carry none; lines with and without a distance may not be mixed).
    """
    rows = [(n, f) for n, line in enumerate(read_text(path).splitlines(), start=1) if (f := line.split())]
    if rows and len(rows[0][1]) == 1 and rows[0][1][0] == query_id:
        rows = rows[1:]
    for n, f in rows:
        if len(f) > 2:
            raise InputError(path, n, 'expected "<target> [distance]"', f"{len(f)} fields")
    id_col = _id_column(path, rows, target_index)
    out: list[int] = []
    dists: list[float] = []
    seen_at: dict[int, int] = {}
    width = len(rows[0][1]) if rows else 1
    for n, f in rows:
        if with_distances and len(f) != width:
            raise InputError(path, n, "expected a distance on every line or on none", f"{len(f)} field(s) after {width} on the first line")
        tid = f[id_col] if len(f) == 2 else f[0]
        idx = target_index.get(tid)
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
        if idx in seen_at:
            raise InputError(path, n, f"expected each target once; {tid!r} is already ranked at line {seen_at[idx]}")
        seen_at[idx] = n
        if idx != self_index:
            out.append(idx)
        elif dists:
            dists.pop()
    indices = np.asarray(out, dtype=np.int64)
    if with_distances:
        return indices, (np.asarray(dists, dtype=np.float64) if width == 2 else None)
    return indices


def _id_column(path: str, rows: list[tuple[int, list[str]]], target_index: Mapping[str, int]) -> int:
    """0 for ``target distance`` lines, 1 for ``distance target`` (SHREC 2016)."""
    pairs = [f for _, f in rows if len(f) == 2]
    if not pairs or hasattr(target_index, "_ids"):  # open collection: ids cannot be checked
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
    source,
    query_ids: list[str],
    target_index: Mapping[str, int],
    *,
    self_index: Mapping[str, int] | None = None,
    ignorable: Iterable[str] = (),
) -> RankedRun:
    """Read a run folder with one ranked list per query.

    ``query_ids`` are the queries to score; ``ignorable`` are ids whose files
    may exist but are not scored (models of the PSB class ``-1``).
    Every query must have a file.  ``source`` has ``name`` and ``path``.
    """
    known = dict.fromkeys(query_ids)
    known.update(dict.fromkeys(ignorable))
    files = query_files(source.path, known)
    missing = [q for q in query_ids if q not in files]
    if missing:
        raise InputError(
            source.path,
            None,
            f"expected a ranked list for every query; run {source.name!r} has none for {len(missing)} of {len(query_ids)} queries",
            f"first missing: {missing[0]!r}",
        )
    self_index = self_index or {}
    lists = {
        q: read_ranked_list(files[q], q, target_index, self_index=self_index.get(q, -1)) for q in query_ids
    }
    return RankedRun.from_lists(source.name, lists, [files[q] for q in query_ids])
