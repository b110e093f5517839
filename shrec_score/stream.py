"""TREC runs scored while they are read: each parsed batch ranked and joined.

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

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._kernels import (
    has_repeats,
    hash_words,
    id_words,
    lookup,
    mix,
    pack_ids,
    rank_of,
    words_equal,
)
from .errors import InputError, shown
from .io.text import regular_file
from .io.trec import arrow_indices, arrow_numpy, arrow_strings, extra_fields_note
from .io.trec_stream import Batch, BatchReader, NotStreamable, ReadAhead
from .model import ChunkedRun, RankedRun, group_tie_starts
from .ranking import drop_own_items, score_groups, trec_order
from .relevance import QrelsRelevance, Relevance


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
    drops: Counter[str] | None = None  # never lenient: a lenient run is read whole
    #: A query without a line is no error (--missing-queries skip); its values stay empty.
    missing_ok: bool = False
    #: The scoring call's early parsers: :meth:`chunks` takes this file's, if started.
    ahead: ReadAhead | None = None
    #: The sub-runs carry their tie groups (equal scores; any ``ties`` mode but the rule).
    ties: bool = False

    def __post_init__(self) -> None:
        self._lengths: list[np.ndarray] = []
        self.query_ids: list[str] = []
        self.unknown_topics: set[str] = set()
        self.unknown_topic_lines = 0
        self.notes: list[str] = []
        self._targets: Any = None  # the judged target ids as an arrow array, built once
        self._packed_targets: np.ndarray | None = None  # and packed into int64 keys (see _packed)
        #: or, when some id is too long to pack, the targets' rows of words, lengths and hashes (see _target_words)
        self._target_words: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._sorted_targets: tuple[np.ndarray, np.ndarray] = (np.zeros(0, np.int64), np.zeros(0, np.int64))  # (keys, target indices)
        self._targets_of: Any = None  # the relevance's target_ids list these were built from (a later scoring may bring another)

    def lengths(self) -> np.ndarray:
        """Lengths of the ranked lists seen so far (all of them once scored)."""
        return np.concatenate(self._lengths) if self._lengths else np.zeros(0, dtype=np.int64)

    def chunks(self, relevance: Relevance) -> Iterator[tuple[np.ndarray, RankedRun, np.ndarray | None]]:
        """``(relevance rows, sub-run, gain of every entry or None)`` for every batch's completed queries."""
        batches = (self.ahead.take(self.path) if self.ahead is not None else None) or BatchReader(self.path)
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
        if missing_q.size and not self.missing_ok:
            raise InputError(
                self.path,
                None,
                f"expected a ranking for every query; run {shown(self.name)} has none for {missing_q.size} of {relevance.n_queries} queries",
                f"first missing: {shown(relevance.query_ids[int(missing_q[0])])}",
            )
        if batches.extra_field_lines:
            self.notes.append("note: " + extra_fields_note(self.name, batches.extra_field_lines))
        if self.unknown_topic_lines:
            from .join import unknown_topics_note

            self.notes.append(unknown_topics_note(self.path, self.unknown_topics, self.unknown_topic_lines))

    def _batches(self, relevance: Relevance, batches: Iterable[Batch]) -> Iterator[_Piece]:
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

    def _chunk(self, relevance: Relevance, piece: _Piece) -> tuple[np.ndarray, RankedRun, np.ndarray | None]:
        """Rank the lines of complete queries (trec_eval order) into a sub-run.

        Every line gets an identity (to find repeated targets) and its
        target's index (``outside`` when unjudged: gain 0); with qrels and
        short ids (see :func:`_judged_pairs`) also its gain.  Ties are
        broken on the byte order of the tied lines' ids only.
        """
        rows, lens, s, docs = piece.rows, piece.lens, piece.scores, piece.docs
        seg = np.repeat(np.arange(rows.size), lens)  # each line's query, numbered in file order
        outside = len(relevance.target_ids)  # index of every unjudged target of an open collection: gain 0
        pairs = _judged_pairs(self, relevance, docs, rows, lens, seg, outside)
        ranks: np.ndarray | None  # read by doc_rank below
        if pairs is not None:
            code, t, gains, hashed = pairs
            ranks = None if hashed else code  # packed keys: their order is the byte order
        else:
            code, t, ranks = _identify(self, relevance, docs, rows, outside)
            gains = None
            if relevance.closed and (t == outside).any():
                raise NotStreamable("an unknown target id")  # the in-memory reader names the line

        def doc_rank(pos: np.ndarray | None) -> np.ndarray:
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
        group = score_groups(seg, s if order is None else s[order]) if self.ties else None
        own = relevance.self_index[rows]
        if (own >= 0).any():  # a query that is itself a target is taken out of its list
            keep = drop_own_items(t, seg, own)
            t, seg = t[keep], seg[keep]
            gains = None if gains is None else gains[keep]
            group = None if group is None else group[keep]
            lens = np.bincount(seg, minlength=rows.size)
        self._lengths.append(lens)
        query_ids = [relevance.query_ids[r] for r in rows]
        self.query_ids += query_ids
        offsets = np.zeros(rows.size + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        sub = RankedRun(self.name, query_ids, t, offsets, [self.path])
        if group is not None:
            sub.tie_start = group_tie_starts(group, offsets)
        return rows, sub, gains

    def read_whole(self, relevance: Relevance) -> RankedRun:
        """The in-memory reader, for a run that cannot be streamed (exact errors)."""
        from .join import read_trec_run
        from .model import RunSource

        run, notes = read_trec_run(RunSource(self.name, self.path, "trec"), relevance, missing_ok=self.missing_ok, ties=self.ties)
        self.notes = notes  # what was seen while streaming is superseded
        self._lengths, self.query_ids = [run.lengths()], list(run.query_ids)
        return run


def _take(docs: Any, idx: np.ndarray) -> Any:
    return docs.take(arrow_indices(idx))


def _concat(a: Any, b: Any) -> Any:
    import pyarrow as pa

    return pa.concat_arrays([a, b])


def _byte_rank(ids: Any) -> np.ndarray:
    """Rank of each id in ascending byte order (UTF-8 byte order = code point order)."""
    import pyarrow.compute as pc

    return rank_of(arrow_numpy(pc.array_sort_indices(ids)))


def _target_keys(run: TrecStreamRun, relevance: Relevance) -> np.ndarray | None:
    """The targets' ids as an arrow array and packed (see :func:`_packed`), built once per run."""

    if run._targets is None or run._targets_of is not relevance.target_ids:
        run._targets_of, run._target_words = relevance.target_ids, None
        run._targets = arrow_strings(list(relevance.target_ids))
        run._packed_targets = pack_ids(run._targets)
        if run._packed_targets is not None:  # every target, sorted once (closed collections)
            order = np.argsort(run._packed_targets)
            run._sorted_targets = (run._packed_targets[order], order)
    return run._packed_targets


def _judged_pairs(
    run: TrecStreamRun, relevance: Relevance, docs: Any, rows: np.ndarray, lens: np.ndarray, seg: np.ndarray, outside: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool] | None:
    """Per line the packed (or hashed) id, the target index and the gain,
    found among the judgments of the line's own query, and whether the ids
    were hashed; None where this does not apply (then :func:`_identify` and
    the engine's lookup do the work).

    Applies to qrels without a collection (an id judged for no query of
    the line is unjudged: target ``outside``, gain 0) when every id packs
    into a 64-bit key, or else (ClueWeb's 25 bytes, UUIDs' 36, up to
    :data:`~shrec_score._kernels.WORDS_MAX_BYTES`) through
    :func:`~shrec_score._kernels.hash_words` of the ids' rows of words: a
    hash hit is confirmed on the words themselves (a mismatch hands the
    batch to the general path), two lines of a query with one hash look
    like a repeat (the run is then read whole), and hashes carry no byte
    order, so ties are ordered on the ids.
    The batch's judgments and its lines are mixed into
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
    words = targets = None
    if keys is None or target_keys is None:  # long ids: hashed
        words, targets = id_words(docs), _target_words(run, relevance)
        if words is None or targets is None:
            return None
        keys, target_keys = hash_words(*words), targets[2]
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
    if words is not None and targets is not None and hit.size:  # equal hashes, equal ids? (a few lines per list)
        judged = t[hit]
        if not words_equal(words[0][hit], words[1][hit], targets[0][judged], targets[1][judged]).all():
            return None
    return keys, t, gains, words is not None


def _target_words(run: TrecStreamRun, relevance: Relevance) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The targets' rows of words, lengths and hashes (:func:`~shrec_score._kernels.id_words`), built once per run."""
    _target_keys(run, relevance)  # the arrow ids (and this cache) follow the relevance
    if run._target_words is None:
        laid = id_words(run._targets)
        if laid is None:
            return None
        run._target_words = (*laid, hash_words(*laid))
    return run._target_words


def _identify(
    run: TrecStreamRun, relevance: Relevance, docs: Any, rows: np.ndarray, outside: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
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
    cand_ids = run._targets if cand is None else run._targets.take(arrow_indices(cand))
    n = len(cand_ids)
    code = arrow_numpy(pc.dictionary_encode(pa.concat_arrays([cand_ids, docs])).indices)[n:].astype(np.int64)
    if cand is None:
        return code, np.minimum(code, outside), None
    t = np.full(code.size, outside, dtype=np.int64)
    inside = code < n
    t[inside] = cand[code[inside]]
    return code, t, None


def stream_source(name: str, path: str, ahead: ReadAhead | None = None, *, missing_ok: bool = False, ties: bool = False) -> TrecStreamRun:
    """A TREC run to score while it is read; ``path`` must be a regular file.
    ``ties``: its sub-runs carry their tie groups (equal scores)."""
    return TrecStreamRun(name, regular_file(path), ahead=ahead, missing_ok=missing_ok, ties=ties)
