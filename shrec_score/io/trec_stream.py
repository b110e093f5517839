"""TREC runs streamed in batches: memory bounded by the batch, not the file.

pyarrow's streaming CSV reader parses the file in blocks of ``BLOCK_BYTES``
(it reads at most 32 blocks ahead), joined into batches of ``BATCH_BYTES``;
the queries a batch completes are ranked (trec_eval order) and scored at once
by the engine, then dropped.  Three stages overlap on two cores: parsing the
next batch, ranking this one (one hash pass over its target ids, then a
lookup of the distinct ids among the judged targets), and scoring the one
before.  The file must be grouped by query (each query's lines contiguous),
as run files are; a file that is not, a malformed line, a repeated or
unknown target makes :class:`NotStreamable` hand the run back to the
in-memory reader, which reports exact line numbers (``--lenient`` runs are
read whole from the start).

Memory: the read-ahead (32 MiB), about 40 bytes per line of two batches
(about 0.5 million lines each), the lines of the largest query, and the
relevance (judged targets), whatever the run's length.  Measured on the
bench's 10-million-line run: peak RSS 0.52 GB (in-memory reader: 1.45 GB);
the same run against a fifth of the judgments: 0.42 GB, the same as a
2-million-line run against them (0.40 GB).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError
from ..model import RankedRun

#: Text scored per batch (about 500,000 lines of a TREC run).
BATCH_BYTES = 16 << 20
#: Text parsed per block.  pyarrow's reader reads up to 32 blocks ahead, so
#: this bounds its read-ahead buffer (32 MiB); blocks are joined into batches.
BLOCK_BYTES = 1 << 20


class NotStreamable(Exception):
    """The run must be read whole (not grouped by query, malformed, or lenient)."""


def available() -> bool:
    try:
        import pyarrow.csv  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass
class _Piece:
    """The lines of complete queries: their rows, and per line the row, score and target id."""

    rows: np.ndarray
    rowq: np.ndarray
    scores: np.ndarray
    docs: Any  # a pyarrow string array (pyarrow is optional: not imported here)


@dataclass
class TrecStreamRun:
    """A TREC run read batch by batch while it is scored (see module doc)."""

    name: str
    path: str
    drops: dict[str, int] | None = None  # never lenient: a lenient run is read whole

    def __post_init__(self) -> None:
        self._lengths: list[np.ndarray] = []
        self.query_ids: list[str] = []
        self.unknown_topics: set[str] = set()
        self.unknown_topic_lines = 0
        self.notes: list[str] = []
        self._targets: Any = None  # the judged target ids as an arrow array, built once

    def lengths(self) -> np.ndarray:
        """Lengths of the ranked lists seen so far (all of them once scored)."""
        return np.concatenate(self._lengths) if self._lengths else np.zeros(0, dtype=np.int64)

    def chunks(self, relevance) -> Iterator[tuple[np.ndarray, RankedRun]]:
        """``(relevance rows, sub-run)`` for every batch's completed queries."""
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.csv as pcsv

        try:
            reader = self._open(pa, pcsv)
        except (pa.ArrowException, UnicodeDecodeError, OSError) as exc:
            raise NotStreamable(str(exc)) from None
        # the pieces are cut in this thread; each is ranked in a worker while
        # the engine scores the one before (pyarrow and numpy release the GIL)
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(1) as pool:
            pending = None
            for piece in self._batches(relevance, reader, pa, pc):
                future = pool.submit(self._chunk, relevance, piece, pa, pc)
                if pending is not None:
                    yield pending.result()
                pending = future
            if pending is not None:
                yield pending.result()
        missing_q = np.flatnonzero(~self._done)
        if missing_q.size:
            raise InputError(
                self.path,
                None,
                f"expected a ranking for every query; run {self.name!r} has none for {missing_q.size} of {relevance.n_queries} queries",
                f"first missing: {relevance.query_ids[int(missing_q[0])]!r}",
            )
        if self.unknown_topic_lines:
            from .runs import unknown_topics_note

            self.notes.append(unknown_topics_note(self.path, self.unknown_topics, self.unknown_topic_lines))

    def _open(self, pa, pcsv):
        from .trec import _delimiter

        return pcsv.open_csv(
            self.path,
            read_options=pcsv.ReadOptions(
                column_names=["query", "q0", "doc", "rank", "score", "tag"], block_size=min(BLOCK_BYTES, BATCH_BYTES), use_threads=False
            ),
            parse_options=pcsv.ParseOptions(delimiter=_delimiter(self.path), quote_char=False),
            convert_options=pcsv.ConvertOptions(
                include_columns=["query", "doc", "score"],
                column_types={"query": pa.string(), "doc": pa.string(), "score": pa.float64()},
            ),
        )

    def _batches(self, relevance, reader, pa, pc) -> Iterator[_Piece]:
        """The lines of complete queries, batch by batch, as ``_chunk`` arguments."""
        qpos = {q: i for i, q in enumerate(relevance.query_ids)}
        done = self._done = np.zeros(relevance.n_queries, dtype=bool)
        carry = None  # the lines of the last query of the previous batch: (rows, scores, ids)
        for batch in _read_ahead(reader, pa):
            scores = batch.column(2)
            if scores.null_count:
                raise NotStreamable("a score that is not a number")
            s = scores.to_numpy()
            if np.isnan(s).any():
                raise NotStreamable("a NaN score")
            qenc = pc.dictionary_encode(batch.column(0))
            qmap = np.asarray([qpos.get(q, -1) for q in qenc.dictionary.to_pylist()], dtype=np.int64)
            rowq = qmap[qenc.indices.to_numpy()]
            docs = batch.column(1)
            known = rowq >= 0
            if not known.all():
                self.unknown_topic_lines += int((~known).sum())
                self.unknown_topics.update(np.asarray(qenc.dictionary.to_pylist(), dtype=object)[qmap < 0])
                keep = np.flatnonzero(known)
                rowq, s, docs = rowq[keep], s[keep], docs.take(pa.array(keep))
            if carry is not None:
                rowq, s = np.concatenate([carry[0], rowq]), np.concatenate([carry[1], s])
                docs = pa.concat_arrays([carry[2], docs])
            if rowq.size == 0:
                carry = None
                continue
            starts = np.concatenate([[0], np.flatnonzero(rowq[1:] != rowq[:-1]) + 1])
            seg_q = rowq[starts]
            if np.unique(seg_q).size != seg_q.size or done[seg_q].any():
                raise NotStreamable("the run is not grouped by query")
            last = int(starts[-1])
            carry = (rowq[last:], s[last:], docs.slice(last))
            if last:
                done[seg_q[:-1]] = True
                yield _Piece(seg_q[:-1], rowq[:last], s[:last], docs.slice(0, last))
        if carry is not None and carry[0].size:
            done[carry[0][0]] = True
            yield _Piece(carry[0][:1], *carry)

    def _chunk(self, relevance, piece: _Piece, pa, pc) -> tuple[np.ndarray, RankedRun]:
        """Rank the lines of complete queries (trec_eval order) into a sub-run.

        One hash pass over the judged target ids followed by the chunk's ids
        gives every line an identity code: the judged ids come first and
        are distinct, so a code below their number is the target's index,
        and a code above it is an unjudged id (gain 0), still distinct for
        duplicates.  (pyarrow rebuilds a lookup set on every ``index_in``
        call; this one pass is about 40% cheaper than encode + lookup.)
        """
        from ..ranking import trec_order

        rows, rowq, s, docs = piece.rows, piece.rowq, piece.scores, piece.docs
        if self._targets is None:
            self._targets = pa.array(relevance.target_ids, type=pa.string())
        targets = self._targets
        outside = len(targets)  # index of every unjudged target of an open collection: gain 0
        open_index = hasattr(relevance.target_index, "_ids")
        code = pc.dictionary_encode(pa.concat_arrays([targets, docs])).indices.to_numpy()[outside:].astype(np.int64)
        if not open_index and (code >= outside).any():
            raise NotStreamable("an unknown target id")  # the in-memory reader names the line
        t = np.minimum(code, outside)

        def doc_rank(pos) -> np.ndarray:
            ids = docs if pos is None else docs.take(pa.array(pos))
            order = pc.array_sort_indices(ids).to_numpy()  # byte order of the ids
            rank = np.empty(order.size, dtype=np.int64)
            rank[order] = np.arange(order.size)
            return rank

        order = trec_order(rowq, s, doc_rank)
        if order is not None:
            rowq, t, code = rowq[order], t[order], code[order]
        keys = np.sort(rowq * (int(code.max(initial=0)) + 1) + code)
        if (keys[1:] == keys[:-1]).any():
            raise NotStreamable("a target ranked twice")  # the in-memory reader names the lines
        rows = np.sort(rows)  # trec_order leaves the lines in ascending query row
        local = np.searchsorted(rows, rowq)
        own = relevance.self_index[rowq]
        keep = t != own
        local, t = local[keep], t[keep]
        counts = np.bincount(local, minlength=rows.size)
        self._lengths.append(counts)
        self.query_ids += [relevance.query_ids[r] for r in rows]
        offsets = np.zeros(rows.size + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return rows, RankedRun(self.name, [relevance.query_ids[r] for r in rows], t, offsets, [self.path])

    def read_whole(self, relevance) -> RankedRun:
        """The in-memory reader, for a run that cannot be streamed (exact errors)."""
        from .runs import RunSource, read_trec_run

        run, notes = read_trec_run(RunSource(self.name, self.path, "trec"), relevance)
        self.notes = notes  # what was seen while streaming is superseded
        self._lengths, self.query_ids = [run.lengths()], list(run.query_ids)
        return run


def _read_ahead(reader, pa) -> Iterator:
    """Batches of about ``BATCH_BYTES`` of text, the next one parsed in a thread while this one is scored."""
    from concurrent.futures import ThreadPoolExecutor

    def nxt():
        blocks, size = [], 0
        while size < BATCH_BYTES:
            try:
                block = reader.read_next_batch()
            except StopIteration:
                break
            blocks.append(block)
            size += block.nbytes
        if not blocks:
            return None
        if len(blocks) == 1:
            return blocks[0]
        return pa.Table.from_batches(blocks).combine_chunks().to_batches()[0]

    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(nxt)
        while True:
            try:
                batch = future.result()
            except (pa.ArrowException, UnicodeDecodeError) as exc:
                raise NotStreamable(str(exc)) from None
            if batch is None:
                return
            future = pool.submit(nxt)
            yield batch


def stream_source(name: str, path: str) -> TrecStreamRun:
    if not os.path.isfile(path):
        raise InputError(path, None, "expected a TREC run file", "no such file")
    return TrecStreamRun(name, path)
