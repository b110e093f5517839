"""Parsed runs matched with the relevance: a matrix's rows and columns mapped to queries and targets, a TREC
run's ids to targets, its lines put in trec_eval's order and its repeats found (docs/inputs.md)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .errors import InputError, shown
from .io import trec
from .io.lists import MISSING_LISTS
from .io.matrix import read_matrix, shape_error
from .io.numbers import is_integer
from .io.submissions import id_hint, read_id_map, strip_zeros
from .io.trec import arrow_filled, arrow_indices, arrow_numpy, arrow_strings
from .model import MatrixRun, RankedRun, RunSource, tie_starts
from .ranking import drop_own, score_groups
from .relevance import QrelsRelevance, Relevance

#: Lines of whole queries whose ids are dictionary-encoded at once (3-5x faster than one 10M-line encoding).
BATCH_LINES = 16_384


def id_spelling(relevance: Relevance, *, strip: bool = False, id_map: str | None = None) -> Callable[[str], str] | None:
    """The one place where a run's spelling of an id (any run format but a matrix) meets the relevance's: by
    ``id_map``, then ``strip`` (docs/inputs.md, "Ids spelled otherwise"); None when neither is given."""
    if not strip and id_map is None:
        return None
    mapped = read_id_map(id_map) if id_map is not None else {}
    known = set(relevance.query_ids) | set(relevance.ignorable_queries) | set(relevance.target_ids)
    canon: dict[str, str] = {}
    if strip:
        for rid in sorted(known):
            key = strip_zeros(rid)
            if canon.setdefault(key, rid) != rid:
                raise InputError(
                    relevance.matrix_col_source or None, None,
                    f"--strip-zeros: the relevance ids {shown(canon[key])} and {shown(rid)} are one id without leading zeros; use --id-map FILE",
                )

    def spell(run_id: str) -> str:
        run_id = mapped.get(run_id, run_id)
        if run_id in known or not strip:
            return run_id
        return canon.get(strip_zeros(run_id), run_id)

    return spell


class SpelledIndex(dict[str, int]):
    """A target index (a copy of ``index``) looked up by a run's spelling of the ids (:func:`id_spelling`)."""

    def __init__(self, index: Mapping[str, int], spell: Callable[[str], str]) -> None:
        super().__init__(index)
        self._spell = spell

    def __getitem__(self, run_id: str) -> int:
        return super().__getitem__(self._spell(run_id))

    def __contains__(self, run_id: object) -> bool:
        return isinstance(run_id, str) and super().__contains__(self._spell(run_id))

    def get(self, run_id: str, default: Any = None) -> Any:
        return super().get(self._spell(run_id), default)


def spelled_ids(array: Any, spell: Callable[[str], str] | None) -> Any:
    """A run's ids (pyarrow chunked strings, as TrecLines holds them) in the relevance's spelling, each id once."""
    if spell is None:
        return array
    import pyarrow as pa
    import pyarrow.compute as pc

    enc = pc.dictionary_encode(array.combine_chunks())
    words = pa.array([spell(w) for w in enc.dictionary.to_pylist()], type=pa.string())
    return pa.chunked_array([words.take(enc.indices)])


def matrix_axis(ids: list[str], order: str | None, what: str, source: str) -> list[str]:
    """The id of each matrix row (or column) under ``--matrix-order`` (docs/inputs.md, "Dissimilarity matrices")."""
    numeric = sorted(ids, key=int) if all(is_integer(x) for x in ids) else None
    if order == "numeric":
        if numeric is None:
            bad = next(x for x in ids if not is_integer(x))
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


def matrix_ids(
    relevance: Relevance, order: str | None, path: str = "", shape: tuple[int, int] | None = None,
) -> tuple[list[str], list[str]]:
    """The ids of a matrix run's rows (queries) and columns (targets) under ``--matrix-order``; ``shape``: that of
    a matrix stored by blocks of rows at ``path``, which must be theirs."""
    rows = matrix_axis(relevance.matrix_row_ids, order, "query", relevance.matrix_row_source)
    cols = matrix_axis(list(relevance.target_ids), order, "target", relevance.matrix_col_source)
    if shape is not None and tuple(shape) != (len(rows), len(cols)):
        raise shape_error(path, (len(rows), len(cols)), shape)
    return rows, cols


def read_matrix_run(source: RunSource, relevance: Relevance, order: str | None) -> MatrixRun:
    """Read a matrix run and map its rows to queries and its columns to targets."""
    row_ids, col_ids = matrix_ids(relevance, order)
    m = read_matrix(source.path, (len(row_ids), len(col_ids)))
    return matrix_run(source.name, source.path, m, relevance, row_ids, col_ids)


def matrix_run(name: str, path: str, matrix: Any, relevance: Relevance, row_ids: list[str], col_ids: list[str]) -> MatrixRun:
    """A :class:`MatrixRun` whose rows are ``row_ids`` and columns ``col_ids`` (their queries and targets)."""
    row_pos = {q: i for i, q in enumerate(row_ids)}
    row_of_query = np.asarray([row_pos[q] for q in relevance.query_ids], dtype=np.int64)
    col_target = np.asarray([relevance.target_index[t] for t in col_ids], dtype=np.int64)
    return MatrixRun(name, path, matrix, list(relevance.query_ids), row_of_query, col_target)


def read_trec_run(
    source: RunSource, relevance: Relevance, *, drops: Counter[str] | None = None, missing_ok: bool = False,
    ties: bool = False, spell: Callable[[str], str] | None = None,
) -> tuple[RankedRun, list[str]]:
    """Read a TREC run and rank it as trec_eval does (:func:`trec_order`), with notes (topics passed over, extra
    fields); ``ties``: with its tie groups (equal scores within a topic, compared as the parsed doubles)."""
    lines = trec.read_trec_lines(source.path, drops)
    notes = ["note: " + trec.extra_fields_note(source.name, lines.extra_field_lines)] if lines.extra_field_lines else []
    queries, docs, scores, tag = spelled_ids(lines.queries, spell), spelled_ids(lines.docs, spell), lines.scores, lines.tag
    rowq, keep = _query_rows(source.path, queries, relevance, notes)
    if keep is not None and keep.size == 0 and len(queries):
        topics = [str(t) for t in dict.fromkeys(queries.slice(0, 10_000).to_pylist())]
        raise InputError(source.path, None, f"no topic of run {shown(source.name)} is a query; {id_hint(topics, list(relevance.query_ids))}")
    del lines, queries  # the columns as read (docs and scores are taken again below when lines are passed over)
    if keep is not None:  # lines of unknown topics passed over, or queries not in relevance order
        docs, scores = docs.take(arrow_indices(keep)), scores[keep]
    if relevance.closed:  # every id must be a target of the collection (-1: not one)
        import pyarrow.compute as pc

        targets = arrow_filled(pc.index_in(docs, value_set=arrow_strings(list(relevance.target_ids))), -1)
        bad = targets < 0
        if bad.any() and drops is not None:
            drops["unknown target ids dropped"] += int(bad.sum())
            good = np.flatnonzero(~bad)
            docs, scores, rowq, targets = docs.take(arrow_indices(good)), scores[good], rowq[good], targets[good]
        elif bad.any():
            line, name = _line_of(source.path, docs[int(np.flatnonzero(bad)[0])].as_py(), spell or str)
            raise trec.unknown_target_error(source.path, line, name)
        ident = targets  # a target's index: one number per id
    else:  # an open collection: an id nobody judged is unjudged (gain 0)
        ident, targets = _join_batches(docs, rowq, relevance)
    order = trec_order(rowq, scores, docs)  # once over the run: few lines are tied
    if order is not None:
        targets, ident = targets[order], ident[order]
    group = score_groups(rowq, scores if order is None else scores[order]) if ties else None
    again = repeated_lines(rowq, ident)  # below the first place of their (query, target)
    if again.size and drops is not None:
        drops["repeated target ids dropped (first place kept)"] += again.size
        rowq, targets = np.delete(rowq, again), np.delete(targets, again)
        group = None if group is None else np.delete(group, again)
    elif again.size:
        line = int(again[0] if order is None else order[again[0]])
        raise trec.duplicate_error(source.path, relevance.query_ids[int(rowq[line])], docs[line].as_py(), spell or str)
    counts = np.bincount(rowq, minlength=relevance.n_queries)
    missing = np.flatnonzero(counts == 0)
    if missing.size and not missing_ok and drops is not None:  # (skip|zero: the --missing-queries note says it)
        drops[MISSING_LISTS] += int(missing.size)
    elif missing.size and not missing_ok:
        first_missing = relevance.query_ids[int(missing[0])]
        raise trec.missing_queries_error(source.path, source.name, int(missing.size), relevance.n_queries, first_missing)
    offsets = np.r_[0, np.cumsum(counts)]
    ties_at = None if group is None else tie_starts(group, offsets)
    run = RankedRun(source.name, list(relevance.query_ids), targets, offsets, tag=tag, tie_start=ties_at)
    return drop_own(run, relevance.self_index), notes


def _query_rows(path: str, queries: Any, relevance: Relevance, notes: list[str]) -> tuple[np.ndarray, np.ndarray | None]:
    """The relevance row of every line kept, ascending, and the lines kept in that order (None: all, in file order)."""
    import pyarrow.compute as pc

    n = len(queries)
    change = pc.indices_nonzero(pc.not_equal(queries.slice(1), queries.slice(0, max(0, n - 1))))
    starts = np.r_[0, arrow_numpy(change).astype(np.int64) + 1] if n else np.zeros(0, dtype=np.int64)
    lens = np.diff(np.append(starts, n))
    heads = queries.take(arrow_indices(starts))  # only the first id of each run of lines of one query is looked up
    seg_row = arrow_filled(pc.index_in(heads, value_set=arrow_strings(list(relevance.query_ids))), -1)
    unknown = seg_row < 0
    if unknown.any():  # passed over, as trec_eval does
        extra = sorted({str(q) for q in heads.take(arrow_indices(np.flatnonzero(unknown))).to_pylist()})
        shown_topics = ", ".join(extra[:3]) + (", ..." if len(extra) > 3 else "")
        notes.append(f"{path}: {len(extra)} topic(s) without relevance judgments passed over ({shown_topics}), {int(lens[unknown].sum())} lines")
    kept = np.flatnonzero(~unknown)
    if not unknown.any() and (np.diff(seg_row) > 0).all():
        return np.repeat(seg_row, lens), None
    segs = kept[np.argsort(seg_row[kept], kind="stable")]  # whole runs of lines moved, in file order within a query
    ends = np.cumsum(lens[segs])  # the lines of each run, one run after the other
    lines = np.arange(int(ends[-1]) if ends.size else 0, dtype=np.int64) + np.repeat(starts[segs] - (ends - lens[segs]), lens[segs])
    return np.repeat(seg_row[segs], lens[segs]), lines


def _join_batches(docs: Any, rowq: np.ndarray, relevance: Relevance) -> tuple[np.ndarray, np.ndarray]:
    """Per line of a run on an open collection its id's identity (one number per id within a query) and its judged
    target: the ids of a batch of queries dictionary-encoded after the ids those queries' judgments name."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = rowq.size
    ident, judged = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    first = np.flatnonzero(np.diff(rowq, prepend=-1))  # each query's first line
    cuts = np.append(np.flatnonzero(np.diff(first // BATCH_LINES, prepend=-1)), first.size)  # queries that start a batch
    qrels = relevance if isinstance(relevance, QrelsRelevance) else None  # (an open collection comes from qrels)
    ids = arrow_strings(list(relevance.target_ids))
    seen = 0
    for i, j in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
        a, b = int(first[i]), int(first[j]) if j < first.size else n
        their = qrels.judgments_of(rowq[first[i:j]])[1] if qrels is not None else np.zeros(0, dtype=np.int64)
        batch = docs.slice(a, b - a).combine_chunks()
        enc = pc.dictionary_encode(pa.concat_arrays([ids.take(arrow_indices(their)), batch]))
        code = arrow_numpy(enc.indices).astype(np.int64)
        target = np.full(len(enc.dictionary), relevance.unjudged, dtype=np.int64)
        target[code[: their.size]] = their  # one id, one target: repeated judged ids write the same index
        ident[a:b], judged[a:b] = code[their.size :] + seen, target[code[their.size :]]
        seen += len(enc.dictionary)
    return ident, judged


def repeated_lines(rowq: np.ndarray, ident: np.ndarray) -> np.ndarray:
    """The lines whose (query, id) an earlier line has, ascending."""
    many = np.flatnonzero(np.bincount(ident)[ident] > 1)  # only ids met twice can repeat
    _, first = np.unique(rowq[many] * (int(ident.max(initial=0)) + 1) + ident[many], return_index=True)
    return np.delete(many, first)


def trec_order(rowq: np.ndarray, scores: np.ndarray, docs: Any) -> np.ndarray | None:
    """trec_eval's order of the lines of each query (``rowq``, ascending, stays), None when they are in it: score
    descending, then target id descending (``docs``' bytes compared as ``strcmp`` does, within equal scores)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    same = rowq[1:] == rowq[:-1]
    order = None
    if (same & (scores[1:] > scores[:-1])).any():
        order = np.lexsort((-scores, rowq))
        scores = scores[order]
    tied = same & (scores[1:] == scores[:-1])
    if not tied.any():
        return order
    after = np.r_[False, tied]  # tied to the line before it
    pos = np.flatnonzero(np.r_[tied, False] | after)  # lines in a run of equal (query, score)
    starts = ~after[pos]  # a run starts at a line not tied to the one before it
    order = np.arange(rowq.size) if order is None else order
    at = order[pos]
    runs = pa.table({"run": arrow_indices(np.cumsum(starts)), "doc": _taken(docs, at)})
    order[pos] = at[arrow_numpy(pc.sort_indices(runs, sort_keys=[("run", "ascending"), ("doc", "descending")]))]
    return order


def _taken(docs: Any, at: np.ndarray) -> Any:
    """The reader's chunked ``docs.take(at)`` (``at`` distinct), chunk by chunk (pyarrow's take joins them first)."""
    import pyarrow as pa

    up = np.sort(at)
    ends = np.cumsum([len(c) for c in docs.chunks])
    cut = np.searchsorted(up, ends).tolist()  # up[cut[k - 1]:cut[k]] lie in chunk k
    parts = [c.take(arrow_indices(up[i:j] - (e - len(c)))) for c, i, j, e in zip(docs.chunks, [0, *cut], cut, ends.tolist())]
    return pa.concat_arrays(parts).take(arrow_indices(np.searchsorted(up, at)))


def _line_of(path: str, token: str, spell: Callable[[str], str]) -> tuple[int | None, str]:
    """The first line that ranks ``token`` (in the relevance's spelling) and the id as that line spells it."""
    return next(((n, f[2]) for n, f in trec.trec_lines(path) if len(f) > 2 and spell(f[2]) == token), (None, token))
