"""Ranked-list folders parsed many files at a time (the fast twin of :mod:`.lists`).

A run of ranked lists is thousands of small files (SHREC 2014: one file of
8,987 lines per query sketch).  Parsing them one by one costs a Python
object per line; here the files' bytes are joined, in query order, into
chunks of about :data:`CHUNK_BYTES`, parsed by two threads.  Machine-written
files (one id width, distances of digits and one ``.``) are read by
:mod:`.lists_fixed` (one reused buffer, no pyarrow) straight into one array
a run (:class:`Sink`); the files it leaves are joined by width: a text whose
lines all have one length and one layout is read as a byte matrix, checked a
column block at a time; any other text is parsed by one call of pyarrow's
CSV reader (ids as bytes, distances as float64), and its ids become target
indices with one ``index_in`` against the collection.  Repeated targets are
found with a position table.  No Python object is made per line.

This path only ever *accepts* a file; it never reports a problem.  A file
it has any doubt about (not plain ASCII, a tab, a blank line, a width
other than 1 or 2, an id outside a closed collection, a repeated id, a
distance that is not a number or is NaN, distance-first lines, a file
that cannot be read, ...; compressed files are read decompressed) is
handed back as None, and
:func:`shrec_score.io.lists.read_ranked_list` (the reference reader) reads
it and raises the one-line error with its line number, or applies the
``--lenient`` rules.  ``tests/test_lists_batch.py`` checks both give the
same lists and the same errors.

pyarrow's float parser reads exactly the number grammar of
:mod:`shrec_score.io.numbers` (``1_000``, hexadecimal floats and other
scripts' digits refused; checked in the tests), and rounds as ``float()``.

Memory: two chunks in flight, each its files' bytes, their joined copy,
pyarrow's table or the byte matrix's id copy and the index arrays (about 5x
:data:`CHUNK_BYTES`), plus the int64 target index of every line read (8
bytes a line, the run's result).  docs/performance.md has the measured peaks.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import InputError
from .lists_fixed import IdTable, Reader, read_fixed
from .lists_fixed import repeats as _repeats
from .text import read_bytes

#: Bytes of ranked lists parsed at once (one chunk).  16 and 32 MiB took the
#: same CPU; the memory of a chunk in flight is about 5x this (two at once).
CHUNK_BYTES = 16 << 20

#: What ``str.split()`` separates on, among ASCII bytes (trailing ones are stripped).
_ASCII_SPACE = frozenset(b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f")
#: A file starting with one of these is left to the reference reader (a blank or indented first line).
_NOT_ID_START = frozenset(range(33))


class _File:
    """One query file's body as the batch parser sees it."""

    __slots__ = ("query", "body", "width", "lines")

    def __init__(self, query: str, body: memoryview, width: int, lines: int) -> None:
        self.query = query
        self.body = body
        self.width = width
        self.lines = lines


class Collection:
    """The target ids as the batch parser looks them up, built once per run:
    an :class:`~.lists_fixed.IdTable` per id width for fixed-layout files,
    a pyarrow array for ``index_in`` (built, and pyarrow imported, only when
    a file needs it).  The parse threads share it: each is built under a
    lock, by the first thread that needs it."""

    def __init__(self, target_index: Mapping[str, int]) -> None:
        self._names = list(target_index)
        self._bytes: list[bytes] | None = None
        self._ids: Any = None
        self.index = np.fromiter(target_index.values(), dtype=np.int64, count=len(self._names))
        self.size = int(self.index.max()) + 1 if len(self._names) else 0
        self._fixed: dict[int, tuple[Any, np.ndarray]] = {}
        self._tables: dict[int, IdTable | None] = {}
        self._lock = threading.RLock()  # this run's parse threads only

    def encoded(self) -> list[bytes]:
        with self._lock:
            if self._bytes is None:
                self._bytes = [i.encode("utf-8") for i in self._names]
            return self._bytes

    @property
    def ids(self) -> Any:
        """The ids as a pyarrow binary array (for ``index_in``)."""
        with self._lock:
            if self._ids is None:
                self._ids = _binary_array(self.encoded())
            return self._ids

    def table(self, width: int) -> IdTable | None:
        """The dense id table of the ids of ``width`` bytes (None: too large, or none)."""
        with self._lock:
            if width not in self._tables:
                self._tables[width] = IdTable.build(self.encoded(), self.index, width)
            return self._tables[width]

    def of_width(self, width: int) -> tuple[Any, np.ndarray]:
        """The ids of ``width`` bytes as a fixed-size binary array, and their indices."""
        with self._lock:
            if width not in self._fixed:
                import pyarrow as pa

                ids = self.encoded()
                keep = [k for k, t in enumerate(ids) if len(t) == width]
                data = pa.py_buffer(b"".join(ids[k] for k in keep))
                self._fixed[width] = (pa.FixedSizeBinaryArray.from_buffers(pa.binary(width), len(keep), [None, data]), self.index[keep])
            return self._fixed[width]


def _prepare(query: str, path: str, header: bool = True) -> _File | None:
    """Read ``path`` and cut off a header line (``header``); None when the reference must read it."""
    try:
        data = read_bytes(path)
    except InputError:
        return None  # the reference raises it again, in query order
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if not data.isascii() or b"\t" in data:
        return None
    start, end = 0, len(data)
    cut = data.find(b"\n")
    first = data[: cut if cut >= 0 else end].split()
    if header and len(first) == 1 and first[0] == query.encode("utf-8"):  # SHREC 2012/2014 header line
        if cut < 0:
            return None
        start = cut + 1
    while end > start and data[end - 1] in _ASCII_SPACE:
        end -= 1
    if end == start or data[start] in _NOT_ID_START:
        return None  # no target line, or a blank or indented first one
    cut = data.find(b"\n", start, end)
    width = len(data[start : cut if cut >= 0 else end].split())
    if width not in (1, 2):
        return None
    return _File(query, memoryview(data)[start:end], width, data.count(b"\n", start, end) + 1)


def parse_lists(
    files: Sequence[tuple[str, str]],
    target_index: Mapping[str, int] | Collection,
    unjudged: int | None = None,
    *,
    header: bool = True,
    threads: int | None = None,
) -> list[np.ndarray | None]:
    """Target indices (int64, file order) of each ``(query, path)`` in ``files``,
    or None for a file the reference reader must read (see the module's doc).

    ``unjudged``: an open collection (qrels alone), ids outside it get this
    index; None: a closed collection, where an unknown id sends its file to
    the reference reader (which names the line).  ``header``: a first line
    holding only the query id is cut (SHREC 2012/2014; False: it is the
    query ranked first, see :func:`shrec_score.io.lists.read_ranked_list`).
    ``threads``: chunks parsed
    at once (pyarrow and numpy let go of the GIL; reading files too); None:
    one per core, at most 2 (the memory of a chunk each).
    """
    coll = target_index if isinstance(target_index, Collection) else Collection(target_index)
    out: list[np.ndarray | None] = [None] * len(files)
    chunks: list[list[tuple[int, str, str, int]]] = [[]]
    size = 0
    for i, (query, path) in enumerate(files):
        try:
            st = os.stat(path)
        except OSError:
            continue  # the reference reader says why
        if not stat.S_ISREG(st.st_mode):
            continue  # a FIFO is never opened here (it would wait for a writer)
        n = st.st_size
        if chunks[-1] and size + n > CHUNK_BYTES:
            chunks.append([])
            size = 0
        chunks[-1].append((i, query, path, n))
        size += n + 1
    threads = min(2, os.cpu_count() or 1) if threads is None else threads
    sink = Sink(chunks)
    if threads > 1 and len(chunks) > 1:
        from concurrent.futures import ThreadPoolExecutor

        local = threading.local()  # a reader (its buffer) per thread, for this call only

        def work(k: int) -> list[tuple[int, np.ndarray | None]]:
            if not hasattr(local, "reader"):
                local.reader = Reader()
            return _read_chunk(chunks[k], k, sink, coll, unjudged, header, local.reader)

        with ThreadPoolExecutor(threads) as pool:
            for done in pool.map(work, range(len(chunks))):  # all submitted now, taken in order
                for i, indices in done:
                    out[i] = indices
    else:
        reader = Reader()
        for k, c in enumerate(chunks):
            for i, indices in _read_chunk(c, k, sink, coll, unjudged, header, reader):
                out[i] = indices
    return out


class Sink:
    """One int64 array for the target indices of every chunk's fixed-layout
    files, in chunk order, so that a run whose files all take that path is
    one array already (:func:`shrec_score.io.lists.read_list_run` then makes
    no copy).  Chunk k takes its place once chunk k - 1 has said how many lines
    it holds (:meth:`place`; chunks are taken by the threads in order, so a
    chunk only ever waits for one that is being read).

    The array is sized when the first chunk with lines is placed: its lines
    per byte times the run's bytes, plus 1/8 (machine-written files of a run
    have lines of about one length).  A chunk that no longer fits gets an
    array of its own (the run is then joined by a copy, as before).
    """

    def __init__(self, chunks: Sequence[Sequence[tuple[int, str, str, int]]]) -> None:
        self._bytes = [sum(n + 1 for *_, n in c) for c in chunks]
        self._total = sum(self._bytes)
        self.out: np.ndarray | None = None
        self._ends = [0] * (len(chunks) + 1)
        self._ready = [threading.Event() for _ in range(len(chunks) + 1)]
        self._ready[0].set()

    def place(self, k: int, n: int) -> np.ndarray:
        """Room for the ``n`` lines of chunk ``k`` (called once per chunk, in any order of threads)."""
        self._ready[k].wait()
        try:
            start = self._ends[k]
            if n and self.out is None:
                later = sum(self._bytes[k:])
                self.out = np.empty(start + (n * later // max(1, self._bytes[k])) * 9 // 8 + 1024, dtype=np.int64)
            if n == 0 or self.out is None or start + n > self.out.size:
                self._ends[k + 1] = start
                return np.empty(n, dtype=np.int64)
            self._ends[k + 1] = start + n
            return self.out[start : start + n]
        finally:
            self._ready[k + 1].set()


def _read_chunk(
    chunk: list[tuple[int, str, str, int]], k: int, sink: Sink, coll: Collection, unjudged: int | None, header: bool, reader: Reader
) -> list[tuple[int, np.ndarray | None]]:
    """Read and parse the files of one chunk (number ``k``): those of one fixed
    layout by :func:`.lists_fixed.read_fixed` into the ``sink``, the others by
    runs of files of one width."""
    placed = False

    def place(n: int) -> np.ndarray:
        nonlocal placed
        placed = True
        return sink.place(k, n)

    try:
        out, rest = read_fixed(chunk, coll.table, unjudged, header, reader, coll.size, place)
    finally:
        if not placed:
            sink.place(k, 0)  # the next chunk must never wait for this one
    group: list[tuple[int, _File]] = []
    for i, query, path in sorted(rest):
        f = _prepare(query, path, header)
        if f is None:
            continue
        if group and f.width != group[0][1].width:
            _parse_group(group, coll, unjudged, out)
            group = []
        group.append((i, f))
    if group:
        _parse_group(group, coll, unjudged, out)
    return out


def _parse_group(group: list[tuple[int, _File]], coll: Collection, unjudged: int | None, out: list[tuple[int, np.ndarray | None]]) -> None:
    """Parse files of one width in one pyarrow call; on a parse failure each
    file is tried alone (a bad one is left out)."""
    result = _parse_joined([f for _, f in group], coll, unjudged)
    if result is None:
        if len(group) > 1:
            for item in group:
                _parse_group([item], coll, unjudged, out)
        return
    out.extend((i, indices) for (i, _), indices in zip(group, result))


def _parse_joined(files: list[_File], coll: Collection, unjudged: int | None) -> list[np.ndarray | None] | None:
    """The lists of ``files`` (one width) parsed as one text; None when pyarrow
    refuses the text (the caller splits the chunk)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    width = files[0].width
    joined = b"\n".join(f.body for f in files) + b"\n"
    lens = np.fromiter((f.lines for f in files), dtype=np.int64, count=len(files))
    types = {"f0": pa.binary()} if width == 1 else {"f0": pa.binary(), "f1": pa.float64()}  # ASCII: no UTF-8 check
    pool = pa.system_memory_pool()  # malloc's heap is reused from chunk to chunk (mimalloc's pages came back faulting)
    fixed = _fixed_layout(joined, int(lens.sum()), width)
    if fixed is not None:
        ids, value_set, values = fixed, *coll.of_width(fixed.type.byte_width)
        return _to_lists(ids, value_set, values, None, coll, unjudged, lens, pool)
    try:
        table = pcsv.read_csv(
            pa.py_buffer(joined),
            read_options=pcsv.ReadOptions(autogenerate_column_names=True, use_threads=False, block_size=1 << 20),
            parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False, escape_char=False, ignore_empty_lines=False),
            convert_options=pcsv.ConvertOptions(column_types=types, null_values=[], strings_can_be_null=False, quoted_strings_can_be_null=False),
            memory_pool=pool,
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None
    if table.num_columns != width or table.num_rows != int(lens.sum()):
        return None  # a lone CR cut a line, a line with trailing blanks everywhere, ...
    del joined
    ids = table.column(0).combine_chunks(memory_pool=pool)
    dist = np.concatenate([_values(c, np.float64) for c in table.column(1).chunks]) if width == 2 else None
    return _to_lists(ids, coll.ids, coll.index, dist, coll, unjudged, lens, pool)


def _to_lists(
    ids: Any, value_set: Any, values: np.ndarray, dist: np.ndarray | None, coll: Collection, unjudged: int | None, lens: np.ndarray, pool: Any
) -> list[np.ndarray | None]:
    """Each file's target indices from its lines' ids (``lens`` lines a file),
    None for a file with an id outside a closed collection, a repeated id or
    a NaN distance."""
    import pyarrow.compute as pc

    n_files = lens.size
    starts = np.zeros(n_files + 1, dtype=np.int64)
    np.cumsum(lens, out=starts[1:])
    bad = np.zeros(n_files, dtype=bool)
    pos = pc.index_in(ids, value_set=value_set, memory_pool=pool)
    raw = np.frombuffer(pos.buffers()[1], dtype=np.int32, count=len(pos), offset=pos.offset * 4)  # a null's slot holds any value
    miss = None
    if pos.null_count:
        bits = np.frombuffer(pos.buffers()[0], dtype=np.uint8)
        miss = ~np.unpackbits(bits, bitorder="little")[pos.offset : pos.offset + len(pos)].astype(bool)  # validity bitmap: 1 = a value
        indices = values[np.where(miss, 0, raw)] if len(values) else np.zeros(len(ids), dtype=np.int64)
        row_file = np.repeat(np.arange(n_files), lens)
        if unjudged is None:
            bad[row_file[miss]] = True  # an unknown id: the reference names the line
        else:
            indices[miss] = unjudged
            bad |= _bad_open_ids(ids, miss, row_file, n_files)
    else:
        indices = values[raw]
    bad |= _repeats(indices, miss, starts, coll.size)
    if dist is not None:
        nan = np.flatnonzero(np.isnan(dist))
        if nan.size:
            bad[np.searchsorted(starts, nan, side="right") - 1] = True
    return [None if bad[k] else indices[starts[k] : starts[k + 1]] for k in range(n_files)]


def _fixed_layout(joined: bytes, n_lines: int, width: int) -> Any:
    """The ids as a fixed-size binary array when every line of ``joined`` has
    one length and one layout (machine-written files: ``M00001 0.123456``),
    else None (pyarrow's CSV reader then parses the text).

    The text is then a byte matrix, one row a line, and is checked column
    block by column block: ids of bytes above the space, one space column,
    a distance of digit columns and at most one ``.`` column (a number of
    the grammar, never NaN), the newline column.  No tokenizing and no
    float conversion: the distances are only checked (the lists are the
    order of the lines).
    """
    import pyarrow as pa

    if n_lines == 0 or len(joined) % n_lines:
        return None
    size = len(joined) // n_lines
    m = np.frombuffer(joined, dtype=np.uint8).reshape(n_lines, size)
    if not (m[:, -1] == 10).all():
        return None
    first = bytes(m[0, :-1])
    cut = first.find(b" ") if width == 2 else size - 1
    if cut < 1:
        return None
    if int(m[:, :cut].min()) <= 32:
        return None
    if width == 2:
        if not (m[:, cut] == 32).all():
            return None
        number = first[cut + 1 :]
        dots = [k for k, ch in enumerate(number) if ch == 46]
        if len(dots) > 1 or len(number) - len(dots) < 1 or not all(48 <= ch <= 57 or ch == 46 for ch in number):
            return None
        at = cut + 1
        for a, b in ((0, dots[0]), (dots[0] + 1, len(number))) if dots else ((0, len(number)),):
            block = m[:, at + a : at + b]
            if b > a and (int(block.min()) < 48 or int(block.max()) > 57):
                return None
        if dots and not (m[:, at + dots[0]] == 46).all():
            return None
    ids = np.ascontiguousarray(m[:, :cut])
    return pa.FixedSizeBinaryArray.from_buffers(pa.binary(cut), n_lines, [None, pa.py_buffer(ids)])


def _binary_array(items: list[bytes]) -> Any:
    """A pyarrow binary array of ``items`` built from buffers (``pa.array``
    would import pandas first, in whichever thread calls it)."""
    import pyarrow as pa

    offsets = np.zeros(len(items) + 1, dtype=np.int32)
    np.cumsum([len(i) for i in items], out=offsets[1:])
    return pa.Array.from_buffers(pa.binary(), len(items), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(items))])


def _int64_array(values: np.ndarray) -> Any:
    """A pyarrow int64 array viewing ``values`` (no pandas import, see :func:`_binary_array`)."""
    import pyarrow as pa

    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), values.size, [None, pa.py_buffer(values)])


def _values(array: Any, dtype: type) -> np.ndarray:
    """The values of a pyarrow array without nulls, viewed through its buffer."""
    return np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * np.dtype(dtype).itemsize)


def _bad_open_ids(ids: Any, miss: np.ndarray, row_file: np.ndarray, n_files: int) -> np.ndarray:
    """Files whose ids outside an open collection need the reference reader:
    an id holding a byte that ``str.split`` separates on (pyarrow splits on
    spaces only), or an empty one, or one repeated in its file (by a 64-bit
    hash; equal hashes are settled by the reference)."""
    import pyarrow as pa

    from .._kernels import has_repeats, hash_ids

    bad = np.zeros(n_files, dtype=bool)
    rows = np.flatnonzero(miss)
    unknown = ids.take(_int64_array(rows))
    if pa.types.is_fixed_size_binary(unknown.type):
        unknown = unknown.cast(pa.binary())
    offsets = np.frombuffer(unknown.buffers()[1], dtype=np.int32, count=len(unknown) + 1, offset=unknown.offset * 4)
    data = np.frombuffer(unknown.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[-1]]
    if data.size and int(data.min()) <= 32 or (np.diff(offsets) == 0).any():
        bad[row_file[rows]] = True
        return bad
    hashes = hash_ids(unknown.cast(pa.string()))  # ASCII, checked
    if hashes is None or has_repeats(row_file[rows], hashes):
        bad[row_file[rows]] = True
    return bad
