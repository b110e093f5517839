"""TREC runs parsed in batches of whole lines, on a thread of their own.

The file is read in pieces of about ``BATCH_BYTES`` cut after a newline,
each parsed by one call of pyarrow's CSV reader in a thread of its own (one
call: it runs without the GIL while the main thread imports pandas and loads
the relevance, see :class:`ReadAhead`).  Each batch is handed over as
``(segment starts, segment query ids, target ids, scores)``: a segment is a
run of lines with one query id.  Parsing only: ranking the lines and joining
them with the relevance happen in :mod:`shrec_score.stream`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

from .text import (
    MAX_LINE_BYTES,
    is_compressed,
    line_extent,
    line_number_at,
    line_too_long,
    long_line,
    pieces,
    read_head,
    read_into,
)
from .trec import (
    RUN_FIELDS,
    arrow_numpy,
    blanks_in_tab_fields,
    split_fields,
    wider_names,
    wider_options,
    wider_table,
)

#: One parsed batch: (segment starts, segment query ids, target ids as a
#: pyarrow string array, scores); see :class:`BatchReader`.
Batch = tuple[np.ndarray, list[str], Any, np.ndarray]

#: Text scored per batch (about 500,000 lines of a TREC run).
BATCH_BYTES = 16 << 20
#: Text pyarrow parses per block within a batch (small blocks stay in cache).
BLOCK_BYTES = 1 << 20


class NotStreamable(Exception):
    """The run must be read whole (not grouped by query, malformed, or lenient)."""


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
        self._readers: dict[str, BatchReader] = {}

    def __enter__(self) -> ReadAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self, path: str | os.PathLike[str]) -> None:
        path = os.fspath(path)
        if path not in self._readers and os.path.isfile(path):
            self._readers[path] = BatchReader(path, AHEAD_START)

    @property
    def active(self) -> bool:
        """Whether a run is being parsed ahead (its thread then has a core)."""
        return bool(self._readers)

    def take(self, path: str) -> BatchReader | None:
        return self._readers.pop(path, None)

    def close(self) -> None:
        while self._readers:
            self._readers.popitem()[1].close()


class BatchReader:
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
        self.ready: deque[Batch | BaseException | None] = deque()
        self.cond = threading.Condition()
        self.stopped = False
        #: Lines with more than six fields seen so far (their words after the tag ignored).
        self.extra_field_lines = 0
        self.thread = threading.Thread(target=self._parse, name=f"shrec-score read {os.path.basename(path)}", daemon=True)
        self.thread.start()

    def _parse(self) -> None:
        try:
            import pyarrow as pa
            import pyarrow.csv as pcsv

            options = _csv_options(self.path)
            ascii_options = dict(options, convert_options=_ascii_convert_options())
            tabs = options["parse_options"].delimiter == "\t"
            for text, kind in _text_batches(self.path, tabs=tabs):
                ascii_only = kind.ascii
                if kind.blanks:
                    # a field with a space in a tab-separated file (a tag
                    # of several words): trec_eval splits it on the blank
                    table = self._irregular(text, options, None, ascii_only)
                else:
                    # one call parses a whole batch without the GIL (the main
                    # thread holds it while it imports and loads the relevance)
                    try:
                        table = pcsv.read_csv(text, **(ascii_options if ascii_only else options))
                    except pa.ArrowInvalid as exc:
                        # more than six fields (a tag of several words) or blanks
                        # that are not one delimiter: only then is the batch read
                        # another way (a six-field file never pays for it)
                        table = self._irregular(text, options, exc, ascii_only)
                if table.num_rows and not self._put(_split_queries(table.combine_chunks().to_batches()[0])):
                    return
            self._put(None)
        except BaseException as exc:  # handed over to the consumer
            self._put(exc)

    def _irregular(self, text: Any, options: dict[str, Any], exc: Exception | None, ascii_only: bool) -> Any:
        """A batch that pyarrow's reader refused (``exc``; None: a
        tab-separated batch with blanks inside fields): read with as many
        columns as its lines have when they all have as many (more than
        six), else split on whitespace (:func:`~.trec.split_fields`); the
        lines with more than six fields are counted."""
        import re

        import pyarrow as pa
        import pyarrow.csv as pcsv

        got = re.search(r"Expected \d+ columns, got (\d+)", str(exc)) if exc is not None else None
        fields = int(got.group(1)) if got else 0
        if fields > RUN_FIELDS:
            read = pcsv.ReadOptions(column_names=wider_names(fields), block_size=BLOCK_BYTES, use_threads=False)
            try:
                table = pcsv.read_csv(text, read_options=read, parse_options=options["parse_options"], convert_options=wider_options(fields, not ascii_only))
            except pa.ArrowInvalid:
                table = None
            table = wider_table(table, ["query", "doc", "score"])
            if table is not None:
                self.extra_field_lines += table.num_rows
                return table
        table, more = split_fields(text)
        self.extra_field_lines += more
        return table

    def _put(self, item: Batch | BaseException | None) -> bool:
        with self.cond:
            while len(self.ready) >= self.ahead and not self.stopped:
                self.cond.wait()
            if self.stopped:
                return False
            self.ready.append(item)
            self.cond.notify_all()
            return True

    def __iter__(self) -> Iterator[Batch]:
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


def _csv_options(path: str) -> dict[str, Any]:
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


def _ascii_convert_options() -> Any:
    """For ASCII text (valid UTF-8 by construction): pyarrow's UTF-8 check,
    8% of its parse, is left out (``bytes.isascii`` is 30x cheaper)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    return pcsv.ConvertOptions(
        include_columns=["query", "doc", "score"],
        column_types={"query": pa.string(), "doc": pa.string(), "score": pa.float64()},
        check_utf8=False,
    )


class PieceKind(NamedTuple):
    """What :func:`_text_batches` tells of a piece besides its bytes."""

    #: Every byte is ASCII (pyarrow's UTF-8 check can be left out).
    ascii: bool
    #: With ``tabs``: a space, VT or FF inside the tab-separated fields
    #: (:func:`~.trec.blanks_in_tab_fields`); always False without.
    blanks: bool = False


def _text_batches(path: str, tabs: bool = False) -> Iterator[tuple[Any, PieceKind]]:
    """The file in pieces of about ``BATCH_BYTES`` cut after a newline, as
    pyarrow buffers, each with its :class:`PieceKind` (whether it is ASCII
    and, for a tab-separated file, ``tabs``, whether a field holds a blank).

    A piece ends at its last newline and the next one starts right after it
    (re-read from there); a line longer than a piece gets a larger piece.
    The pieces are read into one buffer, reused: a piece is only valid until
    the next one is asked for (pyarrow's CSV reader copies what it keeps;
    a test reads many pieces and checks the values of the first).

    The file must be a regular file and not UTF-16 / UTF-32 text, and no
    line may be longer than :data:`~shrec_score.io.text.MAX_LINE_BYTES`
    (checked on each piece, in memory, before pyarrow parses it: pyarrow
    admits rows of up to two of its blocks); each is an :class:`InputError`.
    """
    import pyarrow as pa

    read_head(path)  # a regular file, not UTF-16
    if is_compressed(path):  # decompressed a piece at a time (checked by pieces)
        empty = True
        for data, _ in pieces(path, BATCH_BYTES):
            empty = False
            yield pa.py_buffer(data), PieceKind(data.isascii(), tabs and blanks_in_tab_fields(data))
        if empty:
            raise NotStreamable("an empty file")
        return
    buf = bytearray(max(1, BATCH_BYTES))  # no fresh pages to fault in for every piece
    with open(path, "rb", buffering=0) as fh:
        empty = True
        while True:
            start = fh.tell()
            view = memoryview(buf)
            n = read_into(fh, view)
            if not n:
                break
            cut = n
            if n == len(buf):  # more may follow: end the piece at its last newline
                cut = buf.rfind(b"\n", 0, n) + 1  # (a C scan from the end: a few bytes back)
                if cut == 0:  # one line longer than the piece
                    if n > MAX_LINE_BYTES:
                        begin, stop = line_extent(fh, start)
                        raise line_too_long(path, line_number_at(fh, begin), stop - begin)
                    fh.seek(start)
                    buf = bytearray(2 * len(buf))
                    continue
                fh.seek(start + cut)
            found = long_line(buf, end=cut)
            if found is not None:
                raise line_too_long(path, line_number_at(fh, start + found[0]), found[1])
            empty = False
            piece = np.frombuffer(buf, dtype=np.uint8, count=cut)
            yield pa.py_buffer(piece), PieceKind(bool(piece.max(initial=0) < 128), tabs and blanks_in_tab_fields(buf, cut))
        if empty:
            raise NotStreamable("an empty file")


def _split_queries(batch: Any) -> Batch:
    """``(segment starts, segment query ids, target ids, scores)`` of a parsed batch (see :class:`BatchReader`)."""
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
