"""TREC runs streamed in batches: memory bounded by the batch, not the file.

With pyarrow (the ``fast`` extra) its streaming CSV reader parses the file
in blocks of ``BLOCK_BYTES`` (it reads at most 32 blocks ahead), joined into
batches of ``BATCH_BYTES``; without it, pandas' C parser reads batches of
about as many lines.  The queries a batch completes are ranked (trec_eval
order) and scored at once by the engine, then dropped.  Three stages overlap
on two cores: parsing the next batch, ranking this one (an identity code
and the judged-target index of every line), and scoring the one before.

The file must be grouped by query (each query's lines contiguous), as run
files are; a file that is not, a malformed line, a repeated or unknown
target makes :class:`NotStreamable` hand the run back to the in-memory
reader, which reports exact line numbers (``--lenient`` runs are read whole
from the start).

Memory: the read-ahead (32 MiB), about 40 bytes per line of two batches
(about 0.5 million lines each), the lines of the largest query, and the
relevance (judged targets), whatever the run's length.  Measured on the
bench's 10-million-line run: peak RSS 0.46 GB (in-memory reader: 1.45 GB);
the same run against a fifth of the judgments: 0.42 GB, the same as a
2-million-line run against them (0.40 GB).  The pandas backend gives the
same numbers byte for byte (tested) at 0.45 GB peak, about 3x slower.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError
from ..model import RankedRun
from ..relevance import MIX64, OpenIndex, QrelsRelevance, lookup

#: Text scored per batch (about 500,000 lines of a TREC run).
BATCH_BYTES = 16 << 20
#: Text parsed per block.  pyarrow's reader reads up to 32 blocks ahead, so
#: this bounds its read-ahead buffer (32 MiB); blocks are joined into batches.
BLOCK_BYTES = 1 << 20


class NotStreamable(Exception):
    """The run must be read whole (not grouped by query, malformed, or lenient)."""


@dataclass
class _Piece:
    """The lines of complete queries: their rows, and per line the row, score and target id."""

    rows: np.ndarray
    rowq: np.ndarray
    scores: np.ndarray
    docs: Any  # a pyarrow string array, or an object array from the pandas backend


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
        self._packed_targets: np.ndarray | None = None  # and packed into int64 keys (see _packed)
        self._sorted_targets: tuple[np.ndarray, np.ndarray] = (np.zeros(0, np.int64), np.zeros(0, np.int64))  # (keys, target indices)

    def lengths(self) -> np.ndarray:
        """Lengths of the ranked lists seen so far (all of them once scored)."""
        return np.concatenate(self._lengths) if self._lengths else np.zeros(0, dtype=np.int64)

    def chunks(self, relevance) -> Iterator[tuple[np.ndarray, RankedRun]]:
        """``(relevance rows, sub-run)`` for every batch's completed queries."""
        batches = _arrow_batches(self.path) if _use_arrow() else _pandas_batches(self.path)
        # the pieces are cut in this thread; each is ranked in a worker while
        # the engine scores the one before (pyarrow and numpy release the GIL)
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(1) as pool:
            pending = None
            for piece in self._batches(relevance, batches):
                future = pool.submit(self._chunk, relevance, piece)
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

    def _batches(self, relevance, batches) -> Iterator[_Piece]:
        """The lines of complete queries, batch by batch, as ``_chunk`` arguments."""
        qpos = {q: i for i, q in enumerate(relevance.query_ids)}
        done = self._done = np.zeros(relevance.n_queries, dtype=bool)
        carry = None  # the lines of the last query of the previous batch: (rows, scores, ids)
        for q_codes, q_values, docs, s in batches:
            if np.isnan(s).any():
                raise NotStreamable("a score that is not a number")
            qmap = np.asarray([qpos.get(q, -1) for q in q_values], dtype=np.int64)
            rowq = qmap[q_codes]
            known = rowq >= 0
            if not known.all():
                self.unknown_topic_lines += int((~known).sum())
                self.unknown_topics.update(np.asarray(q_values, dtype=object)[qmap < 0])
                keep = np.flatnonzero(known)
                rowq, s, docs = rowq[keep], s[keep], _take(docs, keep)
            if carry is not None:
                rowq, s = np.concatenate([carry[0], rowq]), np.concatenate([carry[1], s])
                docs = _concat(carry[2], docs)
            if rowq.size == 0:
                carry = None
                continue
            starts = np.concatenate([[0], np.flatnonzero(rowq[1:] != rowq[:-1]) + 1])
            seg_q = rowq[starts]
            if np.unique(seg_q).size != seg_q.size or done[seg_q].any():
                raise NotStreamable("the run is not grouped by query")
            last = int(starts[-1])
            carry = (rowq[last:], s[last:], docs[last:])
            if last:
                done[seg_q[:-1]] = True
                yield _Piece(seg_q[:-1], rowq[:last], s[:last], docs[:last])
        if carry is not None and carry[0].size:
            done[carry[0][0]] = True
            yield _Piece(carry[0][:1], *carry)

    def _chunk(self, relevance, piece: _Piece) -> tuple[np.ndarray, RankedRun]:
        """Rank the lines of complete queries (trec_eval order) into a sub-run.

        Every line gets an identity code (duplicates) and its target's index
        among the judged targets (``outside`` when unjudged: gain 0); ties
        are broken on the byte order of the tied lines' ids only.
        """
        from ..ranking import trec_order

        rows, rowq, s, docs = piece.rows, piece.rowq, piece.scores, piece.docs
        outside = len(relevance.target_ids)  # index of every unjudged target of an open collection: gain 0
        code, t, ranks = _identify(self, relevance, docs, rows, outside)
        if not isinstance(relevance.target_index, OpenIndex) and (t == outside).any():
            raise NotStreamable("an unknown target id")  # the in-memory reader names the line

        def doc_rank(pos) -> np.ndarray:
            if ranks is not None:
                return ranks if pos is None else ranks[pos]
            return _byte_rank(docs if pos is None else _take(docs, pos))

        if _repeated(rowq, code):
            raise NotStreamable("a target ranked twice")  # the in-memory reader names the lines
        order = trec_order(rowq, s, doc_rank)
        if order is not None:
            rowq, t = rowq[order], t[order]
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


def _use_arrow() -> bool:
    return USE_ARROW and available()


def available() -> bool:
    """Whether pyarrow (the ``fast`` extra) is there: otherwise pandas' C parser reads the batches."""
    try:
        import pyarrow.csv  # noqa: F401
    except ImportError:
        return False
    return True


#: Tests switch it off to exercise the pandas reader.
USE_ARROW = True
#: Off: TREC runs are read whole (the in-memory reader), as ``--lenient`` does.
STREAM = True


def _arrow_batches(path: str) -> Iterator[tuple]:
    """``(query codes, query ids, target ids, scores)`` per batch, parsed by pyarrow in a thread.

    Blocks of ``BLOCK_BYTES`` are joined into batches of about ``BATCH_BYTES``;
    the next batch is parsed while this one is ranked and scored.
    """
    from concurrent.futures import ThreadPoolExecutor

    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    from .trec import _delimiter

    try:
        reader = pcsv.open_csv(
            path,
            read_options=pcsv.ReadOptions(
                column_names=["query", "q0", "doc", "rank", "score", "tag"], block_size=min(BLOCK_BYTES, BATCH_BYTES), use_threads=False
            ),
            parse_options=pcsv.ParseOptions(delimiter=_delimiter(path), quote_char=False),
            convert_options=pcsv.ConvertOptions(
                include_columns=["query", "doc", "score"],
                column_types={"query": pa.string(), "doc": pa.string(), "score": pa.float64()},
            ),
        )
    except (pa.ArrowException, UnicodeDecodeError, OSError) as exc:
        raise NotStreamable(str(exc)) from None

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
        batch = blocks[0] if len(blocks) == 1 else pa.Table.from_batches(blocks).combine_chunks().to_batches()[0]
        scores = batch.column(2)
        s = scores.to_numpy(zero_copy_only=False) if scores.null_count else scores.to_numpy()  # nulls: NaN
        qenc = pc.dictionary_encode(batch.column(0))
        return qenc.indices.to_numpy(), qenc.dictionary.to_pylist(), batch.column(1), s

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


def _pandas_batches(path: str) -> Iterator[tuple]:
    """The same batches from pandas' C parser (no pyarrow): about 500,000 lines each."""
    import pandas as pd

    lines = max(1, BATCH_BYTES // 32)
    try:
        # No names: pandas then refuses a line longer than the first one; a
        # shorter line leaves an empty last field (checked below).
        # The score column is parsed as float64 by the C parser itself (a
        # score that is not a number raises: the exact reader then reports it).
        types = {0: object, 1: object, 2: object, 3: object, 4: np.float64, 5: object}
        reader = pd.read_csv(path, sep=r"\s+", header=None, dtype=types, engine="c", keep_default_na=False, na_filter=False, chunksize=lines)
        for df in reader:
            if df.shape[1] != 6 or (df[5] == "").any() or (df[2] == "").any():
                raise NotStreamable("a line without six fields")
            scores = df[4].to_numpy(dtype=np.float64)
            q_codes, q_values = pd.factorize(df[0].to_numpy(dtype=object))
            yield q_codes.astype(np.int64), list(q_values), df[2].to_numpy(dtype=object), scores
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, UnicodeDecodeError) as exc:
        raise NotStreamable(str(exc)) from None


def _take(docs, idx: np.ndarray):
    if isinstance(docs, np.ndarray):
        return docs[idx]
    import pyarrow as pa

    return docs.take(pa.array(idx))


def _concat(a, b):
    if isinstance(a, np.ndarray):
        return np.concatenate([a, b])
    import pyarrow as pa

    return pa.concat_arrays([a, b])


def _byte_rank(ids) -> np.ndarray:
    """Rank of each id in ascending byte order (UTF-8 byte order = code point order)."""
    from ..ranking import byte_order_rank, rank_of

    if isinstance(ids, np.ndarray):
        return byte_order_rank(ids)
    import pyarrow.compute as pc

    return rank_of(pc.array_sort_indices(ids).to_numpy())


def _identify(run: TrecStreamRun, relevance, docs, rows: np.ndarray, outside: int):
    """Per line: an identity code (equal ids, equal codes), the target index
    (``outside`` if unjudged) and, when cheap, the ids' ranks in byte order.

    The ids are looked up among candidate targets only: every target of a
    closed collection, but with qrels alone (an open collection, where
    unjudged ids score 0) just the targets judged for this batch's queries,
    since no other target can have a gain for them.

    Ids of at most 8 bytes without NUL (MS MARCO, TREC-COVID, most contest
    ids) are packed big-endian into one 64-bit integer each: an exact key
    whose integer order is the byte order, so the keys serve as identities
    and tie ranks, and a ``searchsorted`` does the lookup.  Longer ids, with pyarrow: one hash pass
    over the candidate ids followed by the batch's ids; the candidates come
    first and are distinct, so a code below their number is a candidate and
    one above it an unjudged id.  (pyarrow rebuilds its lookup set on every
    ``index_in`` call; a single pass is cheaper than encode + lookup.)
    pandas: the batch's ids are factorized and the distinct ones looked up
    in the index.
    """
    if isinstance(docs, np.ndarray):
        import pandas as pd

        codes, uniques = pd.factorize(docs)
        index = relevance.target_index
        found = np.fromiter((dict.get(index, u, outside) for u in uniques), dtype=np.int64, count=len(uniques))
        return codes.astype(np.int64), np.minimum(found, outside)[codes], None
    import pyarrow as pa
    import pyarrow.compute as pc

    if run._targets is None or len(run._targets) != outside:
        run._targets = pa.array(relevance.target_ids, type=pa.string())
        run._packed_targets = _packed(run._targets)
        if run._packed_targets is not None:  # every target, sorted once (closed collections)
            order = np.argsort(run._packed_targets)
            run._sorted_targets = (run._packed_targets[order], order)
    if isinstance(relevance, QrelsRelevance) and isinstance(relevance.target_index, OpenIndex):
        cand = relevance.judged_targets(rows)
    else:
        cand = None  # every target
    keys = _packed(docs)
    if keys is not None and run._packed_targets is not None:
        if cand is None:
            cand_keys, cand_idx = run._sorted_targets
        else:
            order = np.argsort(run._packed_targets[cand])
            cand_keys, cand_idx = run._packed_targets[cand][order], cand[order]
        return keys, lookup(keys, cand_keys, cand_idx, outside), keys  # the keys are the identities, in byte order
    cand_ids = run._targets if cand is None else run._targets.take(pa.array(cand))
    n = len(cand_ids)
    code = pc.dictionary_encode(pa.concat_arrays([cand_ids, docs])).indices.to_numpy()[n:].astype(np.int64)
    if cand is None:
        return code, np.minimum(code, outside), None
    t = np.full(code.size, outside, dtype=np.int64)
    inside = code < n
    t[inside] = cand[code[inside]]
    return code, t, None


def _packed(ids) -> np.ndarray | None:
    """Each id's UTF-8 bytes packed big-endian into an int64 key, or None when
    an id is longer than 8 bytes or holds a NUL byte (the packing would then
    not be one-to-one).  Integer order is byte order: the bytes are read as a
    big-endian uint64 (zero-padded) and shifted by 2**63 into int64; since an
    id's first byte is not NUL the key is above -2**63 + 2**56, so it can be
    negated (trec_order sorts on ``-rank``)."""
    import pyarrow as pa

    if not pa.types.is_string(ids.type) or ids.null_count:
        return None
    if len(ids) == 0:
        return np.zeros(0, dtype=np.int64)
    bufs = ids.buffers()
    offsets = np.frombuffer(bufs[1], dtype=np.int32, count=len(ids) + 1, offset=ids.offset * 4)
    lo, hi = int(offsets[0]), int(offsets[-1])
    length = np.diff(offsets)
    if int(length.max()) > 8 or int(length.min()) < 1:
        return None
    data = np.frombuffer(bufs[2], dtype=np.uint8)[lo:hi]
    if (data == 0).any():
        return None
    padded = np.zeros(data.size + 8, dtype=np.uint8)
    padded[: data.size] = data
    # the 8 bytes starting at every byte position (unaligned big-endian words)
    windows = np.ndarray((data.size + 1,), dtype=">u8", buffer=padded, strides=(1,))
    words = windows[offsets[:-1] - lo].astype(np.uint64)
    shift = ((8 - length) * 8).astype(np.uint64)
    words = (words >> shift) << shift  # keep the id's own bytes only
    return (words ^ np.uint64(1 << 63)).view(np.int64)


def _repeated(rowq: np.ndarray, code: np.ndarray) -> bool:
    """Whether a (query row, id code) pair occurs twice.

    A sort of one 64-bit mix per line finds candidates (about 10x cheaper
    than sorting pairs); only when two mixes are equal is it settled on the
    pairs themselves, so the answer is exact.
    """
    mix = code.astype(np.uint64) * MIX64 + rowq.astype(np.uint64) * np.uint64(0xC2B2AE3D27D4EB4F)
    mix.sort()
    if not (mix[1:] == mix[:-1]).any():
        return False
    order = np.lexsort((code, rowq))
    r, c = rowq[order], code[order]
    return bool(((r[1:] == r[:-1]) & (c[1:] == c[:-1])).any())


def stream_source(name: str, path: str) -> TrecStreamRun:
    if not os.path.isfile(path):
        raise InputError(path, None, "expected a TREC run file", "no such file")
    return TrecStreamRun(name, path)
