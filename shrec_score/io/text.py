"""What every reader checks before it trusts a file, and text decoding.

* **Regular files only.**  :func:`regular_file` stats a path before anything
  opens it: a FIFO, a socket or a device (``/dev/zero``) is refused by name
  (opening a FIFO would wait forever for a writer), and a path the system
  cannot reach (a symbolic-link loop, permission denied, "not a directory")
  is refused with the system's reason.  Symbolic links to regular files are
  followed.  :func:`folder_entries` does the same for every entry of a
  folder and refuses names that are not UTF-8.
* **Lines of at most** :data:`MAX_LINE_BYTES`.  A longer line is refused
  naming its number and its length, never quoting it.
* **UTF-8 text.**  A UTF-16 or UTF-32 file (recognised by its byte-order
  mark) is told to be saved as UTF-8; any other byte that is not UTF-8 is
  named with its line.  A UTF-8 byte-order mark is dropped.
* **Compressed files** (gzip, bzip2, xz, zstd; :mod:`.compressed`) are read
  through a decompressing stream: each rule above applies to the
  decompressed bytes, and line numbers count decompressed lines.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from collections.abc import Iterator
from io import FileIO
from typing import IO

from ..errors import QUOTE_LIMIT, InputError, shown
from .compressed import MAGIC_BYTES, compression_of, file_compression, open_input

#: The longest line a text input may have, in bytes (1 MiB; the newline is
#: not counted, a CR before it is).  Ranked lists, TREC runs and qrels,
#: ``.cla`` files, ground truth and configs have lines of a few dozen bytes;
#: a text matrix row of 10,000 distances is about 100 KB (a matrix with rows
#: of more than about 100,000 distances goes as ``.npy`` or PSB binary).  A
#: longer line is a file that is not what it claims to be, and is refused
#: before it is parsed, its text never quoted.
MAX_LINE_BYTES = 1 << 20

#: Bytes read to tell a file's format (and its byte-order mark).
HEAD_BYTES = 4096

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a folder"),
)


def plain(text: str) -> str:
    """An id for a message that shows it unquoted (``q1 d7 is already ranked``):
    as it is when short, else quoted and cut like :func:`~shrec_score.errors.shown`
    (the message escapes what would not show)."""
    return text if len(text) <= QUOTE_LIMIT else shown(text)


def _os_error(path: str, exc: OSError, expected: str = "expected a readable file") -> InputError:
    return InputError(path, None, expected, exc.strerror or str(exc))


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def regular_file(path: str | os.PathLike[str]) -> str:
    """``path`` (as a str) once it is known to be a regular file, or an :class:`InputError`.

    Called by every reader before it opens a file: the check is a ``stat``,
    so a FIFO is refused without being opened.

    >>> regular_file("/dev/null")
    Traceback (most recent call last):
    ...
    shrec_score.errors.InputError: /dev/null: expected a regular file, got a character device
    """
    path = os.fspath(path)
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise _os_error(path, exc) from None
    if not stat.S_ISREG(mode):
        raise InputError(path, None, "expected a regular file", _kind(mode))
    return path


def utf8_name(path: str, name: str) -> None:
    """Refuse a folder entry whose name is not UTF-8 (``os.listdir`` keeps its
    bytes as surrogate escapes, which cannot name a query or a run)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(path, None, "expected file names in UTF-8", shown(name)) from None


def entry_is_folder(path: str, what: str = "a regular file or a folder") -> bool:
    """True for a folder, False for a regular file; anything else, or a path
    that cannot be reached, is an :class:`InputError` saying ``expected {what}``
    and what the path is, or the system's reason (see :func:`regular_file`)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise _os_error(path, exc, f"expected {what}") from None
    if stat.S_ISDIR(mode):
        return True
    if not stat.S_ISREG(mode):
        raise InputError(path, None, f"expected {what}", _kind(mode))
    return False


def list_folder(path: str) -> list[str]:
    """The entries of a folder, sorted, without hidden ones (``.name``); every
    name checked to be UTF-8.  An unreadable folder is an :class:`InputError`."""
    try:
        names = os.listdir(path)
    except OSError as exc:
        raise _os_error(path, exc, "expected a readable folder") from None
    names = sorted(n for n in names if not n.startswith("."))
    for name in names:
        utf8_name(os.path.join(path, name), name)
    return names


def folder_entries(path: str) -> list[tuple[str, str, bool]]:
    """``(name, full path, is a folder)`` of every entry :func:`list_folder`
    gives, each checked by :func:`entry_is_folder`."""
    out = []
    for name in list_folder(path):
        full = os.path.join(path, name)
        out.append((name, full, entry_is_folder(full)))
    return out


# -- byte-order marks ----------------------------------------------------------

#: Byte-order marks of the encodings that are not UTF-8 (UTF-32 first: its
#: little-endian mark starts with UTF-16's).
_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "UTF-32", "utf-32-be"),
    (b"\xff\xfe", "UTF-16", "utf-16-le"),
    (b"\xfe\xff", "UTF-16", "utf-16-be"),
)


#: Characters that do not print but are text (format characters such as a
#: zero-width space, separators such as a no-break space).
_TEXT_CATEGORIES = ("Cf", "Zs", "Zl", "Zp")


def wide_encoding(head: bytes) -> str | None:
    """``"UTF-16 (byte-order mark FF FE)"`` when ``head`` (a file's first bytes)
    is UTF-16 or UTF-32 text, else None.

    A byte-order mark alone is not enough (a PSB binary matrix may start with
    the bytes FF FE): the bytes after it must decode in that encoding to text
    (assigned characters, no control character but tabs and line ends, and
    a blank or a line end somewhere, as every input format has; the float32
    distances of a binary matrix give NULs, unassigned and private-use code
    points within a few values).

    >>> wide_encoding("\\ufeffPSB 1\\n".encode("utf-16-le"))
    'UTF-16 (byte-order mark FF FE)'
    >>> wide_encoding(b"\\xff\\xfe\\x7f\\x3f\\x00\\x00\\x80\\x3f") is None
    True
    """
    for bom, name, codec in _BOMS:
        if head.startswith(bom):
            body = head[len(bom) :]
            unit = 4 if name == "UTF-32" else 2
            body = body[: len(body) - len(body) % unit]
            try:
                text = body.decode(codec)
            except UnicodeDecodeError as exc:
                if exc.start < len(body) - 4:  # a character cut at the probe's end is text
                    return None
                text = body[: exc.start].decode(codec)
            blank = not text or any(ch in " \t\r\n" for ch in text)
            if blank and all(ch.isprintable() or ch in "\t\r\n" or unicodedata.category(ch) in _TEXT_CATEGORIES for ch in text):
                return f"{name} (byte-order mark {bom.hex(' ').upper()})"
            return None
    return None


def refuse_wide_text(path: str, head: bytes) -> None:
    """An :class:`InputError` for a UTF-16 or UTF-32 file (see :func:`wide_encoding`)."""
    wide = wide_encoding(head)
    if wide is not None:
        raise InputError(path, None, "expected UTF-8 text", f"{wide}; save the file as UTF-8")


def read_head(path: str | os.PathLike[str], size: int = HEAD_BYTES) -> bytes:
    """The first ``size`` bytes of a regular file, for format detection; a
    UTF-16 / UTF-32 file is refused here, so that no detector mistakes it for
    another format."""
    path = regular_file(path)
    try:
        with open_input(path) as fh:
            head = fh.read(size)
    except OSError as exc:
        raise _os_error(path, exc) from None
    refuse_wide_text(path, head)
    return head


def is_compressed(path: str) -> bool:
    """Whether ``path`` (a regular file) is gzip, bzip2, xz or zstd by its magic bytes."""
    return file_compression(path) is not None


# -- line lengths --------------------------------------------------------------


def line_too_long(path: str, line: int | None, length: int) -> InputError:
    """The error for a line longer than :data:`MAX_LINE_BYTES` (its text is never quoted)."""
    return InputError(path, line, f"expected lines of at most {MAX_LINE_BYTES:,} bytes (1 MiB)", f"a line of {length:,} bytes")


def long_line(data: bytes | bytearray, limit: int = MAX_LINE_BYTES, end: int | None = None) -> tuple[int, int] | None:
    """``(offset where the line starts, its length)`` of the first line of
    ``data[:end]`` longer than ``limit`` bytes, or None.

    Cheap: a line longer than ``limit`` covers at least one whole block of
    ``limit // 2`` bytes on a grid of such blocks, so one ``find`` per block
    (which stops at the block's first newline, a few bytes in) rules the
    block out; only a block without a newline is measured, and the grid then
    starts again after that line.  A 100 MB file costs about 200 ``find``
    calls.

    >>> long_line(b"ab\\ncdefg\\nh", limit=4)
    (3, 5)
    """
    end = len(data) if end is None else end
    if end <= limit:
        return None
    step = max(1, limit // 2)
    start = 0
    while start < end:
        if data.find(b"\n", start, min(start + step, end)) < 0:
            begin = data.rfind(b"\n", 0, start) + 1
            stop = data.find(b"\n", start, end)
            stop = end if stop < 0 else stop
            if stop - begin > limit:
                return begin, stop - begin
            start = stop + 1  # a new grid from the next line on
        else:
            start += step
    return None


def check_line_lengths(path: str, data: bytes | bytearray) -> None:
    """Refuse ``data`` (the whole of ``path``) if a line is longer than :data:`MAX_LINE_BYTES`."""
    found = long_line(data)
    if found is not None:
        raise line_too_long(path, data.count(b"\n", 0, found[0]) + 1, found[1])


def scan_line_lengths(path: str, chunk: int = 16 << 20) -> None:
    """:func:`check_line_lengths` for a file another reader parses (pyarrow),
    a chunk at a time: memory stays at ``chunk`` bytes whatever the file's
    size.  Blocks of ``MAX_LINE_BYTES // 2`` on a fixed grid, as in
    :func:`long_line`; a block without a newline is measured in the file."""
    if is_compressed(path):
        for _ in pieces(path, chunk):  # checks every piece
            pass
        return
    step = MAX_LINE_BYTES // 2
    chunk = max(step, chunk - chunk % step)  # whole blocks per chunk: no block spans two chunks
    buf = bytearray(chunk)
    view = memoryview(buf)
    with open(path, "rb", buffering=0) as fh:
        offset = 0
        while True:
            fh.seek(offset)
            n = read_into(fh, view)
            for start in range(0, n - step + 1, step):
                if buf.find(b"\n", start, start + step) < 0:
                    begin, stop = line_extent(fh, offset + start)
                    if stop - begin > MAX_LINE_BYTES:
                        raise line_too_long(path, line_number_at(fh, begin), stop - begin)
            if n < chunk:
                return
            offset += n


def read_into(fh: FileIO, view: memoryview) -> int:
    """Fill ``view`` from ``fh``; the bytes read (fewer only at the end of the file)."""
    n = 0
    while n < len(view):
        got = fh.readinto(view[n:])
        if not got:
            break
        n += got
    return n


def line_extent(fh: FileIO, at: int, step: int = 1 << 16) -> tuple[int, int]:
    """``(start, end)`` offsets of the line holding byte ``at`` of ``fh`` (end: its newline or the file's end)."""
    begin = at
    while begin > 0:
        lo = max(0, begin - step)
        fh.seek(lo)
        cut = fh.read(begin - lo).rfind(b"\n")
        if cut >= 0:
            begin = lo + cut + 1
            break
        begin = lo
    stop = at
    fh.seek(stop)
    while True:
        block = fh.read(step)
        cut = block.find(b"\n")
        if cut >= 0:
            return begin, stop + cut
        if not block:
            return begin, stop
        stop += len(block)


def line_number_at(fh: FileIO, offset: int, step: int = 1 << 20) -> int:
    """The 1-based number of the line starting at ``offset``."""
    fh.seek(0)
    line, done = 1, 0
    while done < offset:
        block = fh.read(min(step, offset - done))
        if not block:
            break
        line += block.count(b"\n")
        done += len(block)
    return line


# -- text ----------------------------------------------------------------------


def read_bytes(path: str | os.PathLike[str], *, checked: bool = False) -> bytes:
    """The bytes of a regular file whose lines are at most :data:`MAX_LINE_BYTES`
    and which is not UTF-16 / UTF-32 text (decompressed when its magic bytes
    say so).  ``checked``: the caller has stat'ed ``path`` as a regular file
    already (:func:`folder_entries`), so it is not stat'ed again."""
    path = os.fspath(path) if checked else regular_file(path)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise _os_error(path, exc) from None
    if compression_of(data[:MAGIC_BYTES]) is not None:
        # inflated in bounded pieces, each checked: a bomb fails at its first
        # over-long line, not after it is decompressed whole
        return b"".join(piece for piece, _ in pieces(path))
    refuse_wide_text(path, data[:HEAD_BYTES])
    check_line_lengths(path, data)
    return data


def decode_text(path: str, data: bytes) -> str:
    """``data`` (the bytes of ``path``, as :func:`read_bytes` gives them) as
    UTF-8 text without a BOM; a byte that is not UTF-8 is an :class:`InputError`
    naming its line."""
    data = data.removeprefix(b"\xef\xbb\xbf")  # (decoding as utf-8-sig would shift the error's offset)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(path, line, "expected UTF-8 text", f"byte 0x{data[exc.start]:02x}") from None


def read_text(path: str | os.PathLike[str]) -> str:
    """Return the file's text, decoded as UTF-8 (a BOM is dropped).

    The file is checked first (:func:`regular_file`, line lengths, UTF-16);
    a file that is not UTF-8 is an :class:`InputError` naming the line of the
    first bad byte.
    """
    path = os.fspath(path)
    return decode_text(path, read_bytes(path))


def read_text_lines(path: str | os.PathLike[str]) -> list[tuple[int, str]]:
    """Return ``(line_number, line)`` pairs, 1-based, line ends removed: the
    lines of :func:`text_lines` (LF, CRLF or a lone CR, nothing else, so a
    line number is ``grep -n``'s; a form feed or U+2028 is text)."""
    return list(text_lines(path))


# -- pieces of a stream --------------------------------------------------------


def pieces(path: str, size: int = 16 << 20) -> Iterator[tuple[bytes, int]]:
    """The (decompressed) bytes of ``path`` in pieces of about ``size`` cut
    after a newline, each with the number of its first line; every line
    checked against :data:`MAX_LINE_BYTES` and the head against UTF-16.
    Memory stays at a few pieces whatever the file's (decompressed) size."""
    path = regular_file(path)
    line = 1
    carry = b""
    first = True
    with open_input(path) as fh:
        while True:
            block = fh.read(size)
            data = carry + block if carry else block
            if first:
                refuse_wide_text(path, data[:HEAD_BYTES])
                first = False
            if not block:
                if data:
                    _check_piece(path, data, line)
                    yield data, line
                return
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                if len(data) > MAX_LINE_BYTES:
                    raise line_too_long(path, line, len(data) + _rest_of_line(fh))
                carry = data
                continue
            piece, carry = data[:cut], data[cut:]
            if len(carry) > MAX_LINE_BYTES:
                raise line_too_long(path, line + piece.count(b"\n"), len(carry) + _rest_of_line(fh))
            _check_piece(path, piece, line)
            yield piece, line
            line += piece.count(b"\n")


def _check_piece(path: str, piece: bytes, line: int) -> None:
    found = long_line(piece)
    if found is not None:
        raise line_too_long(path, line + piece.count(b"\n", 0, found[0]), found[1])


def _rest_of_line(fh: IO[bytes]) -> int:
    """Bytes up to the next newline (not counted) of a stream."""
    n = 0
    while True:
        block = fh.read(1 << 20)
        cut = block.find(b"\n")
        if cut >= 0:
            return n + cut
        if not block:
            return n
        n += len(block)


#: Where a line ends in a TREC file: LF, CRLF or a lone CR (as pyarrow's CSV reader).
_LINE_END = re.compile(r"\r\n?|\n")


def text_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, str]]:
    """``(line_number, line)`` of a text file whose lines end at LF, CRLF or
    a lone CR, and only there (a form feed or U+2028 is text), decoded a
    piece at a time (a compressed run or qrels file is never decompressed
    whole).

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("wb", suffix=".txt") as fh:
    ...     _ = fh.write(b"a\\r\\nb\\rc\\fd\\n")
    ...     fh.flush()
    ...     list(text_lines(fh.name))
    [(1, 'a'), (2, 'b'), (3, 'c\\x0cd')]
    """
    n = 0
    for data, line in pieces(os.fspath(path)):
        if line == 1:
            data = data.removeprefix(b"\xef\xbb\xbf")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(path, n + len(_LINE_END.findall(data[: exc.start].decode("utf-8", "replace"))) + 1, "expected UTF-8 text", f"byte 0x{data[exc.start]:02x}") from None
        lines = _LINE_END.split(text) if "\r" in text else text.split("\n")
        if lines[-1] == "":
            lines.pop()  # the piece's last line end
        yield from enumerate(lines, start=n + 1)
        n += len(lines)
