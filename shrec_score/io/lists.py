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
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..model import RankedRun
from .text import read_text


@dataclass(frozen=True)
class RunSource:
    """Where a run comes from: its name and its folder (or file)."""

    name: str
    path: str


def discover_runs(paths: Iterable[str | os.PathLike[str]]) -> tuple[list[RunSource], list[str]]:
    """Find the runs in the RUNS arguments.

    A folder that holds sub-folders is a folder of runs (one per sub-folder,
    named after it); a folder that holds only files is itself one run.
    Returns the runs and a list of notes about files that were passed over.
    """
    runs: list[RunSource] = []
    notes: list[str] = []
    for raw in paths:
        path = os.fspath(raw)
        if not os.path.isdir(path):
            raise InputError(path, None, "expected a folder of runs or a run folder", "no such folder" if not os.path.exists(path) else "a file")
        entries = sorted(e for e in os.listdir(path) if not e.startswith("."))
        subdirs = [e for e in entries if os.path.isdir(os.path.join(path, e))]
        if subdirs:
            files = [e for e in entries if e not in subdirs]
            if files:
                notes.append(f"{path}: ignored {len(files)} file(s) beside the run folders ({files[0]}{', ...' if len(files) > 1 else ''})")
            runs.extend(RunSource(d, os.path.join(path, d)) for d in subdirs)
        else:
            name = os.path.basename(os.path.normpath(path))
            runs.append(RunSource(name, path))
    seen: dict[str, str] = {}
    for r in runs:
        if r.name in seen:
            raise InputError(r.path, None, f"expected run names to be unique; run {r.name!r} is also at {seen[r.name]}")
        seen[r.name] = r.path
    return runs, notes


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
) -> np.ndarray:
    """Read one query's ranked list as target indices (best first).

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
    """
    text = read_text(path)
    out: list[int] = []
    first = True
    seen_at: dict[int, int] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        if first:
            first = False
            if len(fields) == 1 and fields[0] == query_id:
                continue
        if len(fields) > 2:
            raise InputError(path, n, 'expected "<target> [distance]"', f"{len(fields)} fields")
        idx = target_index.get(fields[0])
        if idx is None:
            raise InputError(path, n, "expected a target id of the collection", f"unknown id {fields[0]!r}")
        if len(fields) == 2:
            try:
                d = float(fields[1])
            except ValueError:
                raise InputError(path, n, "expected a number as distance", repr(fields[1])) from None
            if math.isnan(d):
                raise InputError(path, n, "expected a number as distance", "NaN")
        if idx in seen_at:
            raise InputError(path, n, f"expected each target once; {fields[0]!r} is already ranked at line {seen_at[idx]}")
        seen_at[idx] = n
        if idx != self_index:
            out.append(idx)
    return np.asarray(out, dtype=np.int64)


def read_list_run(
    source: RunSource,
    query_ids: list[str],
    target_index: Mapping[str, int],
    *,
    self_index: Mapping[str, int] | None = None,
    ignorable: Iterable[str] = (),
) -> RankedRun:
    """Read a run folder with one ranked list per query.

    ``query_ids`` are the queries to score; ``ignorable`` are ids whose files
    may exist but are not scored (models of the PSB class ``-1``).
    Every query must have a file.
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
