"""Join: parsed runs matched with the relevance model, and ranked.

The readers in :mod:`shrec_score.io` only parse bytes.  Here a matrix gets
its rows mapped to queries and its columns to targets (``--matrix-order``),
and a TREC run read whole gets its ids mapped to targets, its lines put in
trec_eval's order (:func:`shrec_score.ranking.trec_order`), its repeats found
and the query's own item dropped.  Streamed TREC runs do the same batch by
batch in :mod:`shrec_score.stream`.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from ._kernels import byte_order_rank
from .errors import InputError, shown
from .io.matrix import read_matrix
from .io.runs import is_int
from .io.text import text_lines
from .model import MatrixRun, RankedRun, RunSource, group_tie_starts
from .ranking import drop_own_items, score_groups, trec_order
from .relevance import Relevance


def matrix_axis(ids: list[str], order: str | None, what: str, source: str) -> list[str]:
    """The id of each matrix row (or column) under ``--matrix-order``.

    ``listing``: the i-th id of the ``.cla`` (PSB tools); ``numeric``: ids are
    integers and row i holds the i-th smallest (id i when ids are 0..n-1, as
    the SHREC 2021 evaluator does).  With no order given, integer ids whose
    numeric order differs from the listing order are refused.
    """
    all_int = all(is_int(x) for x in ids)
    numeric = sorted(ids, key=int) if all_int else None
    if order == "numeric":
        if numeric is None:
            bad = next(x for x in ids if not is_int(x))
            raise InputError(source, None, f"expected integer {what} ids for --matrix-order numeric", shown(bad))
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


def read_matrix_run(source: RunSource, relevance: Relevance, order: str | None) -> MatrixRun:
    """Read a matrix run and map its rows to queries and its columns to targets."""
    row_ids = matrix_axis(relevance.matrix_row_ids, order, "query", relevance.matrix_row_source)
    col_ids = matrix_axis(list(relevance.target_ids), order, "target", relevance.matrix_col_source)
    m = read_matrix(source.path, (len(row_ids), len(col_ids)))
    return matrix_run(source.name, source.path, m, relevance, row_ids, col_ids, owned=True)


def matrix_run(name: str, path: str, matrix: Any, relevance: Relevance, row_ids: list[str], col_ids: list[str], *, owned: bool = False) -> MatrixRun:
    """A :class:`MatrixRun` whose rows are ``row_ids`` and columns ``col_ids``:
    each scored query mapped to its row, each column to its target.
    ``owned``: the reader mapped ``matrix`` itself (see :attr:`MatrixRun.owned`)."""
    row_pos = {q: i for i, q in enumerate(row_ids)}
    row_of_query = np.asarray([row_pos[q] for q in relevance.query_ids], dtype=np.int64)
    col_target = np.asarray([relevance.target_index[t] for t in col_ids], dtype=np.int64)
    return MatrixRun(name, path, matrix, list(relevance.query_ids), row_of_query, col_target, owned=owned)


# -- TREC runs -----------------------------------------------------------------


def unknown_topics_note(path: str, topics: set[str], lines: int) -> str:
    """The note for run lines of topics the relevance does not judge (passed over, as trec_eval does)."""
    extra = sorted(topics)
    return f"{path}: {len(extra)} topic(s) without relevance judgments passed over ({', '.join(extra[:3])}{', ...' if len(extra) > 3 else ''}), {lines} lines"


def read_trec_run(
    source: RunSource, relevance: Relevance, *, drops: Counter[str] | None = None, missing_ok: bool = False, ties: bool = False
) -> tuple[RankedRun, list[str]]:
    """Read a TREC run and rank it as trec_eval does (see :mod:`shrec_score.ranking`).

    ``ties``: the run also carries its tie groups (equal scores within a
    topic, compared as the parsed doubles; :attr:`RankedRun.tie_start`).

    Topics of the run that the relevance does not know are passed over (as
    trec_eval does), with a note.  Works on dictionary codes end to end: no
    Python object per line.
    """
    from .io.trec import (
        duplicate_error,
        extra_fields_note,
        read_trec_columns,
        read_trec_columns_lenient,
    )

    cols = read_trec_columns(source.path) if drops is None else read_trec_columns_lenient(source.path, drops)
    notes: list[str] = []
    if cols.extra_field_lines:
        notes.append("note: " + extra_fields_note(source.name, cols.extra_field_lines))
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
            raise InputError(source.path, _line_of(source.path, name), "expected a target id of the collection", f"unknown id {shown(name)}")

    cache: list[np.ndarray] = []

    def doc_rank(pos: np.ndarray | None) -> np.ndarray:
        if not cache:
            cache.append(byte_order_rank(cols.docs)[d_codes])
        return cache[0] if pos is None else cache[0][pos]

    order = trec_order(rowq, scores, doc_rank)
    if order is not None:
        rowq, d_codes = rowq[order], d_codes[order]
    group = score_groups(rowq, scores if order is None else scores[order]) if ties else None
    n_docs = max(1, len(cols.docs))
    keys = rowq * n_docs + d_codes
    if drops is not None:
        _, first = np.unique(keys, return_index=True)  # first place in ranked order
        if first.size < keys.size:
            drops["repeated target ids dropped (first place kept)"] += keys.size - first.size
            first.sort()
            rowq, d_codes, keys = rowq[first], d_codes[first], keys[first]
            group = None if group is None else group[first]
    keys = np.sort(keys)
    dup = np.flatnonzero(keys[1:] == keys[:-1])
    if dup.size:
        k = int(keys[dup[0]])
        raise duplicate_error(source.path, relevance.query_ids, cols.docs, k // n_docs, k % n_docs)
    counts = np.bincount(rowq, minlength=relevance.n_queries)
    missing = np.flatnonzero(counts == 0)
    if missing.size and drops is not None:
        drops["queries without a ranked list (scored 0)"] += int(missing.size)
    elif missing.size and not missing_ok:
        raise InputError(
            source.path,
            None,
            f"expected a ranking for every query; run {shown(source.name)} has none for {missing.size} of {relevance.n_queries} queries",
            f"first missing: {shown(relevance.query_ids[int(missing[0])])}",
        )
    offsets = np.zeros(relevance.n_queries + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    targets = tmap[d_codes]
    self_index = relevance.self_index
    if (self_index >= 0).any():
        keep = drop_own_items(targets, rowq, self_index)
        targets, rowq = targets[keep], rowq[keep]
        group = None if group is None else group[keep]
        counts = np.bincount(rowq, minlength=relevance.n_queries)
        np.cumsum(counts, out=offsets[1:])
    run = RankedRun(source.name, list(relevance.query_ids), targets, offsets, [source.path])
    if group is not None:
        run.tie_start = group_tie_starts(group, offsets)
    return run, notes



def _line_of(path: str, token: str) -> int | None:
    for n, line in text_lines(path):
        f = line.split()
        if len(f) > 2 and f[2] == token:
            return n
    return None
