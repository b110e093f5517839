"""TREC runs streamed in batches: memory bounded by the batch, not the file.

The file is read in pieces of about ``BATCH_BYTES`` cut after a newline,
each parsed by one call of pyarrow's CSV reader in a thread of its own (one
call: it runs without the GIL while the main thread imports pandas and loads
the relevance, see :class:`ReadAhead`).  The queries a batch completes are ranked (trec_eval
order) and scored at once by the engine, then dropped.  Three stages overlap
on two cores: parsing the next batch (cut into queries where a line's query
id differs from the line before), ranking this one (an identity, the judged
target and, with qrels, the gain of every line), and scoring the one before.

The file must be grouped by query (each query's lines contiguous), as run
files are; a file that is not, a malformed line, a repeated or unknown
target makes :class:`NotStreamable` hand the run back to the in-memory
reader, which reports exact line numbers (``--lenient`` runs are read whole
from the start).

Memory: about 40 bytes per line of the batches in flight (two while
scoring, up to ``AHEAD_START`` parsed ahead at the start; about 0.5 million
lines each), the lines of the largest query, and the relevance (judged
targets), whatever the run's length.  Measured on the bench's
10-million-line run: peak RSS 0.37-0.39 GB (in-memory reader: 1.45 GB).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._kernels import has_repeats, lookup, mix, pack_ids, rank_of
from ..errors import InputError
from ..model import ChunkedRun, RankedRun
from ..relevance import QrelsRelevance
from .trec import arrow_numpy

#: Text scored per batch (about 500,000 lines of a TREC run).
BATCH_BYTES = 16 << 20
#: Text pyarrow parses per block within a batch (small blocks stay in cache).
BLOCK_BYTES = 1 << 20


class NotStreamable(Exception):
    """The run must be read whole (not grouped by query, malformed, or lenient)."""


@dataclass
class _Piece:
    """The lines of complete queries, query by query as in the file: the
    queries' relevance rows, their numbers of lines, and per line the score
    and target id."""

    rows: np.ndarray
    lens: np.ndarray
    scores: np.ndarray
    docs: Any  # a pyarrow string array


@dataclass
class TrecStreamRun(ChunkedRun):
    """A TREC run read batch by batch while it is scored (see module doc)."""

    name: str
    path: str
    drops: dict[str, int] | None = None  # never lenient: a lenient run is read whole
    #: The scoring call's early parsers: :meth:`chunks` takes this file's, if started.
    ahead: ReadAhead | None = None

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

    def chunks(self, relevance) -> Iterator[tuple[np.ndarray, RankedRun, np.ndarray | None]]:
        """``(relevance rows, sub-run, gain of every entry or None)`` for every batch's completed queries."""
        batches = (self.ahead.take(self.path) if self.ahead is not None else None) or _BatchReader(self.path)
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
        """The lines of complete queries, batch by batch, as ``_chunk`` arguments.

        A batch arrives cut into segments (runs of lines with one query id);
        the last one may go on in the next batch, so it is carried over.
        """
        qpos = {q: i for i, q in enumerate(relevance.query_ids)}
        done = self._done = np.zeros(relevance.n_queries, dtype=bool)
        carry = None  # the last segment of the previous batch: (query id, row, scores, ids)
        for starts, seg_ids, docs, s in batches:
            if np.isnan(s).any():
                raise NotStreamable("a score that is not a number")
            lens = np.diff(np.append(starts, s.size))
            rows = np.fromiter((qpos.get(q, -1) for q in seg_ids), dtype=np.int64, count=len(seg_ids))
            if carry is not None:
                if seg_ids and seg_ids[0] == carry[0]:  # the carried query goes on
                    lens[0] += carry[2].size
                else:
                    rows, lens = np.append(carry[1], rows), np.append(carry[2].size, lens)
                    seg_ids = [carry[0], *seg_ids]
                s, docs = np.concatenate([carry[2], s]), _concat(carry[3], docs)
                carry = None
            known = rows >= 0
            if not known.all():
                self.unknown_topic_lines += int(lens[~known].sum())
                self.unknown_topics.update(q for q, k in zip(seg_ids, known) if not k)
                keep = np.flatnonzero(np.repeat(known, lens))
                s, docs = s[keep], _take(docs, keep)
                seg_ids = [q for q, k in zip(seg_ids, known) if k]
                rows, lens = rows[known], lens[known]
            if rows.size == 0:
                continue
            if np.unique(rows).size != rows.size or done[rows].any():
                raise NotStreamable("the run is not grouped by query")
            last = s.size - int(lens[-1])
            carry = (seg_ids[-1], rows[-1:], s[last:], docs[last:])
            if rows.size > 1:
                done[rows[:-1]] = True
                yield _Piece(rows[:-1], lens[:-1], s[:last], docs[:last])
        if carry is not None:
            done[carry[1]] = True
            yield _Piece(carry[1], np.array([carry[2].size]), carry[2], carry[3])

    def _chunk(self, relevance, piece: _Piece) -> tuple[np.ndarray, RankedRun, np.ndarray | None]:
        """Rank the lines of complete queries (trec_eval order) into a sub-run.

        Every line gets an identity (to find repeated targets) and its
        target's index (``outside`` when unjudged: gain 0); with qrels and
        short ids (see :func:`_judged_pairs`) also its gain.  Ties are
        broken on the byte order of the tied lines' ids only.
        """
        from ..ranking import trec_order

        rows, lens, s, docs = piece.rows, piece.lens, piece.scores, piece.docs
        seg = np.repeat(np.arange(rows.size), lens)  # each line's query, numbered in file order
        outside = len(relevance.target_ids)  # index of every unjudged target of an open collection: gain 0
        pairs = _judged_pairs(self, relevance, docs, rows, lens, seg, outside)
        if pairs is not None:
            code, t, gains = pairs
            ranks = code  # packed keys: their order is the byte order
        else:
            code, t, ranks = _identify(self, relevance, docs, rows, outside)
            gains = None
            if relevance.closed and (t == outside).any():
                raise NotStreamable("an unknown target id")  # the in-memory reader names the line

        def doc_rank(pos) -> np.ndarray:
            if ranks is not None:
                return ranks if pos is None else ranks[pos]
            return _byte_rank(docs if pos is None else _take(docs, pos))

        if has_repeats(seg, code, lens):
            raise NotStreamable("a target ranked twice")  # the in-memory reader names the lines
        # the queries keep their file order (seg ascending): only lines move, within their query
        order = trec_order(seg, s, doc_rank)
        if order is not None:
            t = t[order]
            gains = None if gains is None else gains[order]
        own = relevance.self_index[rows]
        if (own >= 0).any():  # a query that is itself a target is taken out of its list
            keep = t != own[seg]
            t, seg = t[keep], seg[keep]
            gains = None if gains is None else gains[keep]
            lens = np.bincount(seg, minlength=rows.size)
        self._lengths.append(lens)
        query_ids = [relevance.query_ids[r] for r in rows]
        self.query_ids += query_ids
        offsets = np.zeros(rows.size + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        return rows, RankedRun(self.name, query_ids, t, offsets, [self.path]), gains

    def read_whole(self, relevance) -> RankedRun:
        """The in-memory reader, for a run that cannot be streamed (exact errors)."""
        from .runs import RunSource, read_trec_run

        run, notes = read_trec_run(RunSource(self.name, self.path, "trec"), relevance)
        self.notes = notes  # what was seen while streaming is superseded
        self._lengths, self.query_ids = [run.lengths()], list(run.query_ids)
        return run


#: Batches parsed ahead of the ranking while the run is scored, and before
#: that (a run read ahead by :func:`read_ahead` while relevance is loaded).
AHEAD_STEADY = 2
AHEAD_START = 8


class ReadAhead:
    """TREC runs whose parsing started early, owned by one scoring call.

    :meth:`start` begins parsing a run in a thread of its own (at most
    ``AHEAD_START`` batches, about 128 MiB of text) while the caller goes on
    loading the relevance on the other core; :meth:`take` hands the parser
    to the run that scores the file.  :meth:`close` (or leaving the ``with``
    block) stops every parser not taken, so a call leaves no thread behind.
    Nothing is shared between two ReadAhead objects.
    """

    def __init__(self) -> None:
        self._readers: dict[str, _BatchReader] = {}

    def __enter__(self) -> ReadAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self, path: str | os.PathLike[str]) -> None:
        path = os.fspath(path)
        if path not in self._readers and os.path.isfile(path):
            self._readers[path] = _BatchReader(path, AHEAD_START)

    @property
    def active(self) -> bool:
        """Whether a run is being parsed ahead (its thread then has a core)."""
        return bool(self._readers)

    def take(self, path: str) -> _BatchReader | None:
        return self._readers.pop(path, None)

    def close(self) -> None:
        while self._readers:
            self._readers.popitem()[1].close()


class _BatchReader:
    """``(segment starts, segment query ids, target ids, scores)`` per batch,
    parsed by pyarrow in a thread.  A segment is a run of lines with one
    query id (found by comparing each line's id with the one before).

    Pieces of about ``BATCH_BYTES`` of text (:func:`_text_batches`) are
    parsed by one call each; the thread keeps up to ``ahead`` batches
    ready, then ``AHEAD_STEADY`` once they are being taken.
    """

    def __init__(self, path: str, ahead: int = AHEAD_STEADY) -> None:
        import threading
        from collections import deque

        import pyarrow  # noqa: F401  (imported here: the thread then imports nothing)
        import pyarrow.compute  # noqa: F401
        import pyarrow.csv  # noqa: F401

        self.path = path
        self.ahead = ahead
        self.ready: deque = deque()
        self.cond = threading.Condition()
        self.stopped = False
        self.thread = threading.Thread(target=self._parse, name=f"shrec-score read {os.path.basename(path)}", daemon=True)
        self.thread.start()

    def _parse(self) -> None:
        try:
            import pyarrow.csv as pcsv

            options = _csv_options(self.path)
            ascii_options = dict(options, convert_options=_ascii_convert_options())
            for text, ascii_only in _text_batches(self.path):
                # one call parses a whole batch without the GIL (the main
                # thread holds it while it imports and loads the relevance)
                table = pcsv.read_csv(text, **(ascii_options if ascii_only else options))
                if table.num_rows and not self._put(_split_queries(table.combine_chunks().to_batches()[0])):
                    return
            self._put(None)
        except BaseException as exc:  # handed over to the consumer
            self._put(exc)

    def _put(self, item) -> bool:
        with self.cond:
            while len(self.ready) >= self.ahead and not self.stopped:
                self.cond.wait()
            if self.stopped:
                return False
            self.ready.append(item)
            self.cond.notify_all()
            return True

    def __iter__(self) -> Iterator[tuple]:
        import pyarrow as pa

        try:
            while True:
                with self.cond:
                    while not self.ready:
                        self.cond.wait()
                    item = self.ready.popleft()
                    self.ahead = AHEAD_STEADY
                    self.cond.notify_all()
                if item is None:
                    return
                if isinstance(item, (pa.ArrowException, UnicodeDecodeError, OSError)):
                    raise NotStreamable(str(item))
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            self.close()

    def close(self) -> None:
        """Stop the parsing thread and wait for it (it stops within one batch)."""
        with self.cond:
            self.stopped = True
            self.ready.clear()
            self.cond.notify_all()
        import threading

        if self.thread is not threading.current_thread():
            self.thread.join()


def _csv_options(path: str) -> dict:
    import pyarrow as pa
    import pyarrow.csv as pcsv

    from .trec import _delimiter

    return dict(
        read_options=pcsv.ReadOptions(
            column_names=["query", "q0", "doc", "rank", "score", "tag"], block_size=BLOCK_BYTES, use_threads=False
        ),
        parse_options=pcsv.ParseOptions(delimiter=_delimiter(path), quote_char=False),
        convert_options=pcsv.ConvertOptions(
            include_columns=["query", "doc", "score"],
            column_types={"query": pa.string(), "doc": pa.string(), "score": pa.float64()},
        ),
    )


def _ascii_convert_options():
    """For ASCII text (valid UTF-8 by construction): pyarrow's UTF-8 check,
    8% of its parse, is left out (``bytes.isascii`` is 30x cheaper)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    return pcsv.ConvertOptions(
        include_columns=["query", "doc", "score"],
        column_types={"query": pa.string(), "doc": pa.string(), "score": pa.float64()},
        check_utf8=False,
    )


def _text_batches(path: str) -> Iterator[tuple[Any, bool]]:
    """The file in pieces of about ``BATCH_BYTES`` cut after a newline, as
    pyarrow buffers, each with whether it is ASCII.

    A piece ends at its last newline and the next one starts right after it
    (re-read from there); a line longer than a piece gets a larger piece.
    The pieces are read into one buffer, reused: a piece is only valid until
    the next one is asked for (pyarrow's CSV reader copies what it keeps;
    a test reads many pieces and checks the values of the first).
    """
    import pyarrow as pa

    buf = np.empty(max(1, BATCH_BYTES), dtype=np.uint8)  # no fresh pages to fault in for every piece
    with open(path, "rb", buffering=0) as fh:
        empty = True
        while True:
            start = fh.tell()
            view = memoryview(buf.data)
            n = fh.readinto(view) or 0
            while 0 < n < buf.size:  # a short read is not the end of the file
                more = fh.readinto(view[n:])
                if not more:
                    break
                n += more
            if not n:
                break
            data = buf[:n]
            cut = n
            if n == buf.size:  # more may follow: end the piece at its last newline
                tail = data[-min(n, 1 << 16) :]
                newlines = np.flatnonzero(tail == 10)
                if newlines.size:
                    cut = n - tail.size + int(newlines[-1]) + 1
                else:
                    cut = data.tobytes().rfind(b"\n") + 1
                    if cut == 0:  # one line longer than the piece
                        fh.seek(start)
                        buf = np.empty(2 * buf.size, dtype=np.uint8)
                        continue
                fh.seek(start + cut)
            empty = False
            piece = data[:cut]
            yield pa.py_buffer(piece), bool(piece.max(initial=0) < 128)
        if empty:
            raise NotStreamable("an empty file")


def _split_queries(batch):
    """``(segment starts, segment query ids, target ids, scores)`` of a parsed batch (see :class:`_BatchReader`)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    scores = batch.column(2)
    s = arrow_numpy(scores)  # nulls: NaN
    queries = batch.column(0)
    n = len(queries)
    change = arrow_numpy(pc.indices_nonzero(pc.not_equal(queries.slice(1), queries.slice(0, n - 1)))) if n > 1 else np.zeros(0)
    starts = np.concatenate([[0], change.astype(np.int64) + 1]) if n else np.zeros(0, dtype=np.int64)
    positions = pa.Array.from_buffers(pa.int64(), starts.size, [None, pa.py_buffer(starts)])  # (pa.array imports pandas)
    return starts, queries.take(positions).to_pylist(), batch.column(1), s


def _take(docs, idx: np.ndarray):
    import pyarrow as pa

    return docs.take(pa.array(idx))


def _concat(a, b):
    import pyarrow as pa

    return pa.concat_arrays([a, b])


def _byte_rank(ids) -> np.ndarray:
    """Rank of each id in ascending byte order (UTF-8 byte order = code point order)."""
    import pyarrow.compute as pc

    return rank_of(arrow_numpy(pc.array_sort_indices(ids)))


def _target_keys(run: TrecStreamRun, relevance) -> np.ndarray | None:
    """The targets' ids as an arrow array and packed (see :func:`_packed`), built once per run."""
    import pyarrow as pa

    if run._targets is None or len(run._targets) != len(relevance.target_ids):
        run._targets = pa.array(relevance.target_ids, type=pa.string())
        run._packed_targets = pack_ids(run._targets)
        if run._packed_targets is not None:  # every target, sorted once (closed collections)
            order = np.argsort(run._packed_targets)
            run._sorted_targets = (run._packed_targets[order], order)
    return run._packed_targets


def _judged_pairs(run: TrecStreamRun, relevance, docs, rows: np.ndarray, lens: np.ndarray, seg: np.ndarray, outside: int):
    """Per line the packed id, the target index and the gain, found among
    the judgments of the line's own query; None where this does not apply
    (then :func:`_identify` and the engine's lookup do the work).

    Applies to qrels without a collection (an id judged for no query of
    the line is unjudged: target ``outside``, gain 0) when every id packs
    into a 64-bit key.  The batch's judgments and its lines are mixed into
    64-bit (query, id) values (:func:`_mix`: for one query, one-to-one in
    the id); each line's mix is looked up among the judgments' mixes
    (:func:`~shrec_score.relevance.lookup`) and a hit counts when its query
    is the line's too, so it is exact.  Only the few lines that carry a
    judgment go past the lookup's bitmap, instead of every line whose id
    was judged for some query of the batch.  Two judgments of the batch
    with one mix (about 1 in 10**10 batches) hand the batch to the general path.
    """
    if not isinstance(relevance, QrelsRelevance) or relevance.closed:
        return None
    keys = pack_ids(docs)
    target_keys = _target_keys(run, relevance)
    if keys is None or target_keys is None:
        return None
    e_seg, e_target, e_grade = relevance.judgments_of(rows)
    e_mix = mix(e_seg, target_keys[e_target]).view(np.int64)
    order = np.argsort(e_mix)
    sorted_mix = e_mix[order]
    if (sorted_mix[1:] == sorted_mix[:-1]).any():
        return None
    entry = lookup(mix(seg, keys).view(np.int64), sorted_mix, order, -1)
    hit = np.flatnonzero(entry >= 0)
    e = entry[hit]
    same = e_seg[e] == seg[hit]
    hit, e = hit[same], e[same]
    t = np.full(keys.size, outside, dtype=np.int64)
    t[hit] = e_target[e]
    gains = np.zeros(keys.size, dtype=np.int8)
    gains[hit] = e_grade[e]
    return keys, t, gains


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
    and tie ranks, and a ``searchsorted`` does the lookup.  Longer ids: one hash pass
    over the candidate ids followed by the batch's ids; the candidates come
    first and are distinct, so a code below their number is a candidate and
    one above it an unjudged id.  (pyarrow rebuilds its lookup set on every
    ``index_in`` call; a single pass is cheaper than encode + lookup.)
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    _target_keys(run, relevance)
    if isinstance(relevance, QrelsRelevance) and not relevance.closed:
        cand = relevance.judged_targets(rows)
    else:
        cand = None  # every target
    keys = pack_ids(docs)
    if keys is not None and run._packed_targets is not None:
        if cand is None:
            cand_keys, cand_idx = run._sorted_targets
        else:
            order = np.argsort(run._packed_targets[cand])
            cand_keys, cand_idx = run._packed_targets[cand][order], cand[order]
        return keys, lookup(keys, cand_keys, cand_idx, outside), keys  # the keys are the identities, in byte order
    cand_ids = run._targets if cand is None else run._targets.take(pa.array(cand))
    n = len(cand_ids)
    code = arrow_numpy(pc.dictionary_encode(pa.concat_arrays([cand_ids, docs])).indices)[n:].astype(np.int64)
    if cand is None:
        return code, np.minimum(code, outside), None
    t = np.full(code.size, outside, dtype=np.int64)
    inside = code < n
    t[inside] = cand[code[inside]]
    return code, t, None


def stream_source(name: str, path: str, ahead: ReadAhead | None = None) -> TrecStreamRun:
    if not os.path.isfile(path):
        raise InputError(path, None, "expected a TREC run file", "no such file")
    return TrecStreamRun(name, path, ahead=ahead)
