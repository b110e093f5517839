"""Fixed-layout ranked lists read straight into one buffer (the fastest path of :mod:`.lists_batch`).

Machine-written ranked lists have one layout on every line (SHREC 2014:
``M00001 0.123456``: an id of 6 bytes, one space, a distance of digits and
one ``.`` at a fixed place, the newline).  The files of a chunk are then read
(``readinto``) one after the other into one byte buffer, their header line
(the query id) and trailing blanks cut, so that the buffer is a byte matrix,
one row a line.  No Python object is made per line and no byte is copied
twice:

* **Checks.**  Every byte of the matrix must lie in a range that depends on
  its column only: the id's bytes within the collection's bytes at that
  place, the space, digits, the dot, the newline.  The matrix is checked 8
  bytes at a time (SWAR, as ``uint64`` words): with every byte below 0x80,
  ``b + (0x7F - hi)`` has its high bit set exactly when ``b > hi`` and
  ``((lo - 1) | 0x80) - b`` exactly when ``b < lo`` (``lo`` is at least 1),
  with no carry or borrow from byte to byte; a byte from 0x80 up has its own
  high bit set (a carry or borrow it causes can only flag more bytes, never
  hide one).  Column ranges are tiled to a whole number of lines and of
  8-byte words.  The distances are only checked, never converted (the list is the
  order of the lines).
* **Ids.**  The collection's ids of the file's id width, byte by byte, span
  a range of values at each place; an id is a mixed-radix number over the
  places where the collection's bytes vary (``M00001`` .. ``M08987``:
  9 x 10 x 10 x 10), which indexes a dense table (built once a run) holding
  the target index, or -1 for a value no target has.  A line's index is a
  few multiply-adds over byte columns and one ``take``, a block of lines
  (about 256 KiB, in cache) at a time.
* **Repeats.**  As in :mod:`.lists_batch` (a position table a file).

Anything else sends the file (or, when a check of the matrix fails, the
whole chunk) back to :mod:`.lists_batch`'s general path, which hands the
files it doubts to the reference reader: this path only accepts.
``tests/test_lists_fixed.py`` compares it with the reference reader and with
the general path.
"""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Callable, Sequence

import numpy as np

from .compressed import compression_of
from .text import MAX_LINE_BYTES

#: Bytes of lines checked and looked up at once (in cache).
BLOCK_BYTES = 256 << 10
#: Largest id table (entries, 8 bytes each); above it (ids with many varying
#: places) the general path (pyarrow's ``index_in``) looks the ids up.
MAX_TABLE = 1 << 22
#: The table may hold at most this many entries per id of the collection.
TABLE_PER_ID = 64
#: Bytes of the column ranges' pattern (a whole number of lines and of 8-byte words).
PATTERN_BYTES = 8 << 10
#: A header line longer than this, or more trailing blanks, goes to the
#: general path (which checks line lengths).
MAX_CUT = 4096

_UTF8_BOM = b"\xef\xbb\xbf"
_BLANKS = frozenset(b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f")


class IdTable:
    """Ids of one byte width as mixed-radix numbers over the places where the
    collection's ids vary, and a dense table from those numbers to target indices.

    >>> t = IdTable.build([b"M01", b"M02", b"M13"], np.array([5, 6, 7]), 3)
    >>> (t.lo.tolist(), t.hi.tolist(), t.places, t.strides, t.table.tolist())
    ([77, 48, 49], [77, 49, 51], [1, 2], [3, 1], [5, 6, -1, -1, -1, 7])
    """

    def __init__(self, lo: np.ndarray, hi: np.ndarray, places: list[int], strides: list[int], base: int, table: np.ndarray) -> None:
        self.lo, self.hi = lo, hi
        self.places, self.strides, self.base = places, strides, base
        self.table = table

    @classmethod
    def build(cls, ids: Sequence[bytes], index: np.ndarray, width: int) -> IdTable | None:
        """The table of the ``ids`` of ``width`` bytes (``index[k]`` the target
        index of ``ids[k]``); None when there is none or it would be too large,
        or an id holds a byte outside ``!`` .. ``0x7f``."""
        keep = [k for k, t in enumerate(ids) if len(t) == width]
        if not keep or width == 0:
            return None
        m = np.frombuffer(b"".join(ids[k] for k in keep), dtype=np.uint8).reshape(len(keep), width)
        lo, hi = m.min(axis=0), m.max(axis=0)
        if int(lo.min()) <= 32 or int(hi.max()) >= 128:
            return None
        places = [j for j in range(width) if hi[j] > lo[j]]
        radix = [int(hi[j]) - int(lo[j]) + 1 for j in places]
        size = math.prod(radix)
        if size > min(MAX_TABLE, max(1 << 16, TABLE_PER_ID * len(keep))):
            return None
        strides = [math.prod(radix[k + 1 :]) for k in range(len(places))]
        key = np.zeros(len(keep), dtype=np.int64)
        for j, s in zip(places, strides):
            key += (m[:, j].astype(np.int64) - int(lo[j])) * s
        table = np.full(size, -1, dtype=np.int64)
        table[key] = index[keep]
        base = sum(int(lo[j]) * s for j, s in zip(places, strides))
        return cls(lo, hi, places, strides, base, table)

    def lookup(self, rows: np.ndarray, out: np.ndarray, work: np.ndarray) -> None:
        """Target indices (-1: no target) of the ids in ``rows`` (a byte matrix
        whose first columns are ids already checked to lie in the table's
        ranges) into ``out``; ``work``: two int32 arrays of ``len(rows)``."""
        acc, tmp = work[0, : len(rows)], work[1, : len(rows)]
        if not self.places:
            acc.fill(0)
        for k, (j, s) in enumerate(zip(self.places, self.strides)):
            np.multiply(rows[:, j], s, out=acc if k == 0 else tmp, dtype=np.int32)
            if k:
                np.add(acc, tmp, out=acc)
        if self.base:
            np.subtract(acc, self.base, out=acc)
        np.take(self.table, acc, out=out, mode="clip")  # in range: the bytes were checked


class Layout:
    """One line's layout: ``width`` fields (an id, and a distance of digits
    with at most one ``.``), the line's bytes with its newline, and each
    column's byte range (the id's from the collection's :class:`IdTable`)."""

    def __init__(self, line: bytes, width: int, ids: IdTable) -> None:
        self.line = len(line) + 1
        self.width = width
        self.id_width = len(ids.lo)
        self.ids = ids
        self.dot = line.find(b".", self.id_width)
        lo = np.full(self.line, 48, dtype=np.uint8)  # digits
        hi = np.full(self.line, 57, dtype=np.uint8)
        lo[: self.id_width], hi[: self.id_width] = ids.lo, ids.hi
        for at, ch in ((self.id_width, 32), (self.dot, 46), (self.line - 1, 10)):
            if at >= 0 and (width == 2 or ch == 10):
                lo[at] = hi[at] = ch
        self.lo, self.hi = lo, hi
        period = math.lcm(self.line, 8)
        reps = period // self.line * max(1, PATTERN_BYTES // period)  # a long pattern: numpy's inner loops stay long
        self.pattern_lines = reps
        self.add = np.frombuffer(np.tile(127 - hi, reps).tobytes(), dtype=np.uint64)
        self.below = np.frombuffer(np.tile((lo - 1) | 0x80, reps).tobytes(), dtype=np.uint64)

    @staticmethod
    def of(line: bytes) -> tuple[int, int] | None:
        """``(fields, id width)`` of a first line this path can take, else None."""
        fields = line.split(b" ")
        if len(fields) == 1:
            return (1, len(line)) if line and not _has_blank(line) else None
        if len(fields) != 2 or not fields[0] or _has_blank(fields[0]):
            return None
        number = fields[1]
        digits = len(number) - number.count(b".")
        if digits < 1 or number.count(b".") > 1 or not number.replace(b".", b"").isdigit() or not number.isascii():
            return None
        return 2, len(fields[0])

    def fits(self, line: bytes) -> bool:
        """Whether a file's first line has this layout's shape (its other lines are checked in the matrix)."""
        if len(line) + 1 != self.line:
            return False
        if self.width == 1:
            return True
        return line[self.id_width] == 32 and line.find(b".", self.id_width) == self.dot

    def check(self, data: np.ndarray, n_lines: int, work: np.ndarray) -> bool:
        """Whether every byte of the first ``n_lines`` lines of ``data`` lies in its column's range."""
        whole = n_lines - n_lines % self.pattern_lines
        words = data[: whole * self.line].view(np.uint64).reshape(-1, self.add.size)
        block = max(1, (BLOCK_BYTES // 8) // self.add.size)
        t1, t2 = work[0], work[1]
        for a in range(0, len(words), block):
            w = words[a : a + block]
            u, v = t1[: w.size].reshape(w.shape), t2[: w.size].reshape(w.shape)
            np.add(w, self.add, out=u)  # high bit: b > hi
            np.subtract(self.below, w, out=v)  # high bit: b < lo
            np.bitwise_or(u, v, out=u)
            np.bitwise_or(u, w, out=u)  # high bit: b >= 0x80
            if int(np.bitwise_or.reduce(u, axis=None)) & 0x8080808080808080:
                return False
        if whole < n_lines:
            rest = data[whole * self.line : n_lines * self.line].reshape(-1, self.line)
            if (np.subtract(rest, self.lo, dtype=np.uint8) > (self.hi - self.lo)).any():
                return False
        return True

    def lines_per_block(self) -> int:
        return max(8, (BLOCK_BYTES // self.line) // 8 * 8)


def _has_blank(b: bytes) -> bool:
    return any(ch in _BLANKS for ch in b)


class Reader:
    """Reads the files of a chunk into one reused buffer (one per thread)."""

    def __init__(self) -> None:
        self.buf = np.empty(0, dtype=np.uint8)

    def room(self, size: int) -> memoryview:
        if self.buf.size < size:
            self.buf = np.empty(max(size, self.buf.size * 5 // 4), dtype=np.uint8)
        return self.buf.data


def read_fixed(
    chunk: Sequence[tuple[int, str, str, int]],
    tables: Callable[[int], IdTable | None],
    unjudged: int | None,
    header: bool,
    reader: Reader,
    n_targets: int,
    place: Callable[[int], np.ndarray] | None = None,
) -> tuple[list[tuple[int, np.ndarray | None]], list[tuple[int, str, str]]]:
    """Parse the files of ``chunk`` (``(i, query, path, size)``, regular files)
    that have one fixed layout; returns their lists (None for a file the
    reference reader must read) and the files left to the general path.

    ``tables``: a callable giving the :class:`IdTable` of an id width (or None).
    ``unjudged`` (an open collection): an id outside the collection sends the
    chunk to the general path.  ``place``: gives the int64 array the chunk's
    indices are written to once their number is known (default: a new one).
    """
    rest: list[tuple[int, str, str]] = []
    taken: list[tuple[int, int]] = []  # (i, the byte after its last newline)
    layout: Layout | None = None
    fixed = True  # every file of the chunk has the layout's line length
    view = reader.room(sum(n + 1 for *_, n in chunk) + 64)
    buf = reader.buf
    pos = 0
    for i, query, path, size in chunk:
        got = _read_into(path, view, pos, size)
        body = None if got is None else _body(buf, view, pos, got, query, header)
        shape = None if body is None else Layout.of(body[2])
        if body is None or shape is None:
            rest.append((i, query, path))
            continue
        start, end, first = body
        if layout is None:
            table = tables(shape[1])
            if table is None:
                rest.append((i, query, path))
                continue
            layout = Layout(first, shape[0], table)
        elif shape != (layout.width, layout.id_width):
            rest.append((i, query, path))
            continue
        n = end + 1 - start
        if fixed and (not layout.fits(first) or n % layout.line):
            if layout.width == 1:
                rest.append((i, query, path))
                continue
            fixed = False  # lines of several lengths: the ragged parse
        buf[end] = 10
        if start != pos:
            buf[pos : pos + n] = buf[start : start + n]  # the header line cut (overlapping: numpy copies safely)
        pos += n
        taken.append((i, pos))
    if layout is None or not taken:
        return [], rest
    parse = _fixed_lines if fixed else _ragged_lines
    parsed = parse(buf[:pos], layout, np.fromiter((e for _, e in taken), dtype=np.int64, count=len(taken)), place)
    if parsed is None:
        return [], rest + _files_of(chunk, taken)
    indices, starts = parsed
    bad = np.zeros(len(taken), dtype=bool)
    if indices.size and int(indices.min()) < 0:
        if unjudged is not None:
            return [], rest + _files_of(chunk, taken)
        bad[np.searchsorted(starts, np.flatnonzero(indices < 0), side="right") - 1] = True
    bad |= repeats(indices, None, starts, n_targets)
    done = [(i, None if bad[k] else indices[starts[k] : starts[k + 1]]) for k, (i, _) in enumerate(taken)]
    return done, rest


Place = Callable[[int], np.ndarray] | None


def _fixed_lines(data: np.ndarray, layout: Layout, ends: np.ndarray, place: Place) -> tuple[np.ndarray, np.ndarray] | None:
    """Target indices of the lines of ``data`` (one line length), and each
    file's first line (``ends``: each file's end in bytes); None when a byte
    is out of its column's range."""
    n_lines = data.size // layout.line
    work64 = np.empty((2, max(BLOCK_BYTES // 8, layout.add.size)), dtype=np.uint64)
    if not layout.check(data, n_lines, work64):
        return None
    indices = place(n_lines) if place is not None else np.empty(n_lines, dtype=np.int64)
    step = layout.lines_per_block()
    work32 = np.empty((2, step), dtype=np.int32)
    matrix = data.reshape(n_lines, layout.line)
    for a in range(0, n_lines, step):
        layout.ids.lookup(matrix[a : a + step], indices[a : a + step], work32)
    return indices, np.concatenate([[0], ends // layout.line])


def _ragged_lines(data: np.ndarray, layout: Layout, ends: np.ndarray, place: Place) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`_fixed_lines` for lines of one id width and distances of several
    lengths (``5.080376`` and ``10.123456``): the newlines found, the ids
    gathered into a byte matrix, each distance's bytes (digits and at most
    one ``.``, at least one digit) counted a line at a time by ``reduceat``."""
    nl = np.flatnonzero(data == 10)
    n_lines = nl.size
    w = layout.id_width
    line_starts = np.zeros(n_lines, dtype=np.int64)
    line_starts[1:] = nl[:-1] + 1
    if n_lines == 0 or int((nl - line_starts).min()) < w + 2 or int((nl - line_starts).max()) > MAX_LINE_BYTES:
        return None  # a blank line, one without a distance, or one the reference refuses as too long
    ids = data[line_starts[:, None] + np.arange(w)]
    if (np.subtract(ids, layout.lo[:w], dtype=np.uint8) > (layout.hi[:w] - layout.lo[:w])).any():
        return None
    if not (data[line_starts + w] == 32).all():
        return None
    cuts = np.empty(2 * n_lines, dtype=np.int64)
    cuts[0::2], cuts[1::2] = line_starts + w + 1, nl  # [number, newline and the next id) ...
    dots = data == 46
    other = np.subtract(data, 48, dtype=np.uint8) > 9
    other &= ~dots
    if np.add.reduceat(other, cuts, dtype=np.int32)[0::2].any():
        return None  # a byte of a distance is neither a digit nor a dot
    n_dots = np.add.reduceat(dots, cuts, dtype=np.int32)[0::2]
    if int(n_dots.max()) > 1 or ((nl - line_starts - w - 1) - n_dots < 1).any():
        return None
    indices = place(n_lines) if place is not None else np.empty(n_lines, dtype=np.int64)
    work32 = np.empty((2, min(n_lines, 1 << 16)), dtype=np.int32)
    for a in range(0, n_lines, 1 << 16):
        layout.ids.lookup(ids[a : a + (1 << 16)], indices[a : a + (1 << 16)], work32)
    return indices, np.concatenate([[0], np.searchsorted(nl, ends - 1, side="right")])


def _files_of(chunk: Sequence[tuple[int, str, str, int]], taken: list[tuple[int, int]]) -> list[tuple[int, str, str]]:
    """The files of ``chunk`` in ``taken``, handed to the general path."""
    numbers = {i for i, _ in taken}
    return [(i, q, p) for (i, q, p, _) in chunk if i in numbers]


def _read_into(path: str, view: memoryview, pos: int, size: int) -> int | None:
    """Read the file (``size`` bytes by its ``stat``) into ``view[pos:]``; None
    when it cannot be read, changed size or is compressed (the general path says why)."""
    try:
        with open(path, "rb", buffering=0) as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return None
            got = 0
            while got <= size:
                k = fh.readinto(view[pos + got : pos + size + 1])
                if not k:
                    break
                got += k
    except OSError:
        return None
    if got != size or compression_of(bytes(view[pos : pos + 6])) is not None:
        return None
    return got


def _body(buf: np.ndarray, view: memoryview, pos: int, n: int, query: str, header: bool) -> tuple[int, int, bytes] | None:
    """``(start, end, first line)`` of the lines of the file read at ``buf[pos:pos+n]``:
    a UTF-8 BOM and a header line holding only the query id (``header``) cut
    before, trailing blanks after; None when the general path must read it."""
    start, end = pos, pos + n
    if view[start : start + 3] == _UTF8_BOM:
        start += 3
    head = bytes(view[start : min(end, start + MAX_CUT)])
    cut = head.find(b"\n")
    if cut < 0:
        return None  # one line, or a first line longer than MAX_CUT
    if header:
        first = head[:cut].split()
        if len(first) == 1 and first[0] == query.encode("utf-8"):
            start += cut + 1
            head = bytes(view[start : min(end, start + MAX_CUT)])
            cut = head.find(b"\n")
            if cut < 0:
                return None
    stop = max(start, end - MAX_CUT)
    while end > stop and buf[end - 1] in _BLANKS:
        end -= 1
    if end == stop and end > start:
        return None  # a long tail of blanks: the general path checks its line length
    if end == start:
        return None
    first_line = head[:cut]
    return start, end, first_line


def repeats(indices: np.ndarray, miss: np.ndarray | None, starts: np.ndarray, n_targets: int) -> np.ndarray:
    """Files in which a known target is listed twice.

    Each file writes its lines' positions into a table indexed by target
    (``table[t] = line``, the last write of a target wins) and reads them
    back: a line that does not read its own position shares its target with
    a later line.  Linear in the lines, whatever the collection's size; the
    table is reused from file to file without clearing (every slot read was
    just written).
    """
    bad = np.zeros(starts.size - 1, dtype=bool)
    table = np.empty(max(1, n_targets), dtype=np.int64)
    longest = int(np.diff(starts).max()) if starts.size > 1 else 0
    lines = np.arange(longest)
    for k in range(starts.size - 1):
        a, b = int(starts[k]), int(starts[k + 1])
        t = indices[a:b] if miss is None else indices[a:b][~miss[a:b]]
        if t.size > 1:
            table[t] = lines[: t.size]
            bad[k] = bool((table[t] != lines[: t.size]).any())
    return bad
