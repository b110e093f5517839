"""Finding runs in the RUNS arguments and reading each in its format.

Formats: ``lists`` (a folder, one ranked-list file per query), ``matrix`` (a
dissimilarity matrix file: ASCII, ``.npy`` or PSB binary) and ``trec`` (a
TREC run file).  ``auto`` decides from the files and refuses to guess.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..model import MatrixRun, RankedRun
from ..ranking import byte_order_rank, trec_order
from .matrix import is_binary_file, read_matrix
from .text import read_text

FORMATS = ("auto", "lists", "matrix", "trec")
#: Files in a RUNS folder that are never runs.
NOT_RUNS = (".cla", ".qrels", ".md", ".yaml", ".yml")


@dataclass(frozen=True)
class RunSource:
    """A run to read: its name, its path and its format."""

    name: str
    path: str
    format: str


def detect_file_format(path: str) -> str | None:
    """``matrix`` or ``trec`` from the file's content; None when it cannot tell."""
    if path.endswith(".npy") or is_binary_file(path):
        return "matrix"
    try:
        with open(path, "rb") as fh:  # up to the first line that is not blank, not the whole file
            lines = [raw.decode("utf-8") for raw in _first_lines(fh)]
    except (OSError, UnicodeDecodeError):
        return None
    for line in lines:
        f = line.split()
        if not f:
            continue
        if len(f) > 2 and all(_is_float(x) for x in f):
            return "matrix"  # numbers only (a TREC line has a tag and a Q0 field)
        if len(f) == 6 and _is_int(f[3]) and _is_float(f[4]):
            return "trec"
        return None
    return None


def _first_lines(fh):
    """The lines of a binary file up to its first one that is not blank (a BOM dropped)."""
    for n, raw in enumerate(fh):
        if n == 0 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        yield raw
        if raw.strip():
            return


def _is_int(s: str) -> bool:
    return s.lstrip("+-").isdigit()


def _is_float(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _run_file(path: str, fmt: str) -> RunSource:
    name = os.path.basename(path)
    if fmt == "auto":
        detected = detect_file_format(path)
        if detected is None:
            raise InputError(
                path,
                None,
                "cannot tell the run format: expected a ranked-list folder, a dissimilarity matrix "
                "(ASCII, .npy or PSB binary) or a TREC run file; say --run-format lists|matrix|trec",
            )
        fmt = detected
    if fmt == "lists":
        raise InputError(path, None, "expected a folder with one ranked-list file per query for --run-format lists", "a file")
    if fmt == "matrix":
        name = os.path.splitext(name)[0]
    return RunSource(name, path, fmt)


def first_trec_file(paths: Iterable[str | os.PathLike[str]], fmt: str = "auto") -> str | None:
    """The file of the first run :func:`discover_runs` would find, when it is a
    TREC run (by ``fmt`` or by its first line); None otherwise.  Cheap: no
    relevance needed, nothing read but a first line."""
    for raw in paths:
        path = os.fspath(raw)
        if os.path.isdir(path):
            entries = sorted(e for e in os.listdir(path) if not e.startswith("."))
            if any(os.path.isdir(os.path.join(path, e)) for e in entries):
                return None  # sub-folders: ranked-list runs come first
            files = [e for e in entries if not (e.lower().endswith(NOT_RUNS) or e.lower().startswith("readme"))]
            if not files:
                return None
            path = os.path.join(path, files[0])
        elif not os.path.isfile(path):
            return None
        if fmt == "trec" or (fmt == "auto" and detect_file_format(path) == "trec"):
            return path
        return None
    return None


def discover_runs(
    paths: Iterable[str | os.PathLike[str]], fmt: str = "auto", *, query_ids: Mapping[str, object] = {}
) -> tuple[list[RunSource], list[str]]:
    """Find the runs in the RUNS arguments.

    * a file is one run (matrix or TREC);
    * a folder holding sub-folders: each sub-folder is a ranked-list run, and
      files beside them are runs of their own format;
    * a folder holding only files is one ranked-list run when its files are
      named after queries (or with ``--run-format lists``), else each file is
      a run (matrix or TREC), named after the file.

    Returns the runs and notes about files that were passed over.
    """
    runs: list[RunSource] = []
    notes: list[str] = []
    for raw in paths:
        path = os.fspath(raw)
        if os.path.isfile(path):
            runs.append(_run_file(path, fmt))
            continue
        if not os.path.isdir(path):
            raise InputError(path, None, "expected a run folder, a folder of runs or a run file", "no such file or folder")
        entries = sorted(e for e in os.listdir(path) if not e.startswith("."))
        subdirs = [e for e in entries if os.path.isdir(os.path.join(path, e))]
        files = [e for e in entries if e not in subdirs]
        skipped = [e for e in files if e.lower().endswith(NOT_RUNS) or e.lower().startswith("readme")]
        if skipped:
            notes.append(f"{path}: {len(skipped)} file(s) that are not runs were passed over ({', '.join(skipped[:3])}{', ...' if len(skipped) > 3 else ''})")
        files = [e for e in files if e not in skipped]
        if subdirs:
            if fmt not in ("auto", "lists"):
                raise InputError(path, None, f"expected {fmt} run files for --run-format {fmt}", f"{len(subdirs)} sub-folder(s)")
            runs.extend(RunSource(d, os.path.join(path, d), "lists") for d in subdirs)
            for e in files:
                runs.append(_run_file(os.path.join(path, e), "auto" if fmt == "lists" else fmt))
            continue
        named_after_queries = any(e in query_ids or e.rsplit(".", 1)[0] in query_ids for e in files)
        if fmt == "lists" or (fmt == "auto" and named_after_queries):
            runs.append(RunSource(os.path.basename(os.path.normpath(path)), path, "lists"))
        else:
            if not files:
                raise InputError(path, None, "expected runs in the folder", "no files")
            runs.extend(_run_file(os.path.join(path, e), fmt) for e in files)
    seen: dict[str, str] = {}
    for r in runs:
        if r.name in seen:
            raise InputError(r.path, None, f"expected run names to be unique; run {r.name!r} is also at {seen[r.name]}")
        seen[r.name] = r.path
    return runs, notes


# -- matrices ------------------------------------------------------------------


def matrix_axis(ids: list[str], order: str | None, what: str, source: str) -> list[str]:
    """The id of each matrix row (or column) under ``--matrix-order``.

    ``listing``: the i-th id of the ``.cla`` (PSB tools); ``numeric``: ids are
    integers and row i holds the i-th smallest (id i when ids are 0..n-1, as
    the SHREC 2021 evaluator does).  With no order given, integer ids whose
    numeric order differs from the listing order are refused.
    """
    all_int = all(_is_int(x) for x in ids)
    numeric = sorted(ids, key=int) if all_int else None
    if order == "numeric":
        if numeric is None:
            bad = next(x for x in ids if not _is_int(x))
            raise InputError(source, None, f"expected integer {what} ids for --matrix-order numeric", repr(bad))
        return numeric
    if order is None and numeric is not None and numeric != ids:
        raise InputError(
            source,
            None,
            f"the {what} ids are integers and their numeric order differs from their listing order; "
            "say which one the matrix rows and columns follow: --matrix-order listing (PSB tools) "
            "or --matrix-order numeric (SHREC 2021 evaluator)",
        )
    return list(ids)


def read_matrix_run(source: RunSource, relevance, order: str | None) -> MatrixRun:
    """Read a matrix run and map its rows to queries and its columns to targets."""
    row_ids = matrix_axis(relevance.matrix_row_ids, order, "query", relevance.matrix_row_source)
    col_ids = matrix_axis(list(relevance.target_ids), order, "target", relevance.matrix_col_source)
    m = read_matrix(source.path, (len(row_ids), len(col_ids)))
    row_pos = {q: i for i, q in enumerate(row_ids)}
    row_of_query = np.asarray([row_pos[q] for q in relevance.query_ids], dtype=np.int64)
    col_target = np.asarray([relevance.target_index[t] for t in col_ids], dtype=np.int64)
    return MatrixRun(source.name, source.path, m, list(relevance.query_ids), row_of_query, col_target, owned=True)


# -- TREC runs -----------------------------------------------------------------


def unknown_topics_note(path: str, topics: set[str], lines: int) -> str:
    """The note for run lines of topics the relevance does not judge (passed over, as trec_eval does)."""
    extra = sorted(topics)
    return f"{path}: {len(extra)} topic(s) without relevance judgments passed over ({', '.join(extra[:3])}{', ...' if len(extra) > 3 else ''}), {lines} lines"


def read_trec_run(source: RunSource, relevance, *, drops=None) -> tuple[RankedRun, list[str]]:
    """Read a TREC run and rank it as trec_eval does (see :mod:`shrec_score.ranking`).

    Topics of the run that the relevance does not know are passed over (as
    trec_eval does), with a note.  Works on dictionary codes end to end: no
    Python object per line.
    """
    from .trec import duplicate_error, read_trec_columns, read_trec_columns_lenient

    cols = read_trec_columns(source.path) if drops is None else read_trec_columns_lenient(source.path, drops)
    notes: list[str] = []
    qpos = {q: i for i, q in enumerate(relevance.query_ids)}
    qmap = np.asarray([qpos.get(q, -1) for q in cols.queries], dtype=np.int64)
    rowq = qmap[cols.q_codes]
    d_codes, scores = cols.d_codes, cols.scores
    unknown = rowq < 0
    if unknown.any():
        notes.append(unknown_topics_note(source.path, {cols.queries[c] for c in np.unique(cols.q_codes[unknown])}, int(unknown.sum())))
        keep = ~unknown
        rowq, d_codes, scores = rowq[keep], d_codes[keep], scores[keep]
    tmap = relevance.target_codes(cols.docs)  # open collection: unjudged ids map to relevance.unjudged
    if relevance.closed:
        bad = tmap[d_codes] < 0
        if bad.any() and drops is not None:
            drops["unknown target ids dropped"] += int(bad.sum())
            keep = ~bad
            rowq, d_codes, scores = rowq[keep], d_codes[keep], scores[keep]
        elif bad.any():
            name = cols.docs[int(d_codes[int(np.flatnonzero(bad)[0])])]
            raise InputError(source.path, _line_of(source.path, name), "expected a target id of the collection", f"unknown id {name!r}")

    cache: list[np.ndarray] = []

    def doc_rank(pos) -> np.ndarray:
        if not cache:
            cache.append(byte_order_rank(cols.docs)[d_codes])
        return cache[0] if pos is None else cache[0][pos]

    order = trec_order(rowq, scores, doc_rank)
    if order is not None:
        rowq, d_codes = rowq[order], d_codes[order]
    n_docs = max(1, len(cols.docs))
    keys = rowq * n_docs + d_codes
    if drops is not None:
        _, first = np.unique(keys, return_index=True)  # first place in ranked order
        if first.size < keys.size:
            drops["repeated target ids dropped (first place kept)"] += keys.size - first.size
            first.sort()
            rowq, d_codes, keys = rowq[first], d_codes[first], keys[first]
    keys = np.sort(keys)
    dup = np.flatnonzero(keys[1:] == keys[:-1])
    if dup.size:
        k = int(keys[dup[0]])
        raise duplicate_error(source.path, relevance.query_ids, cols.docs, k // n_docs, k % n_docs)
    counts = np.bincount(rowq, minlength=relevance.n_queries)
    missing = np.flatnonzero(counts == 0)
    if missing.size and drops is not None:
        drops["queries without a ranked list (scored 0)"] += int(missing.size)
    elif missing.size:
        raise InputError(
            source.path,
            None,
            f"expected a ranking for every query; run {source.name!r} has none for {missing.size} of {relevance.n_queries} queries",
            f"first missing: {relevance.query_ids[int(missing[0])]!r}",
        )
    offsets = np.zeros(relevance.n_queries + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    targets = tmap[d_codes]
    self_index = relevance.self_index
    if (self_index >= 0).any():
        keep = targets != self_index[rowq]
        targets, rowq = targets[keep], rowq[keep]
        counts = np.bincount(rowq, minlength=relevance.n_queries)
        np.cumsum(counts, out=offsets[1:])
    return RankedRun(source.name, list(relevance.query_ids), targets, offsets, [source.path]), notes


def _line_of(path: str, token: str) -> int | None:
    for n, line in enumerate(read_text(path).splitlines(), start=1):
        f = line.split()
        if len(f) > 2 and f[2] == token:
            return n
    return None
