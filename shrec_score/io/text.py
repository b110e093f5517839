"""What every reader checks before it trusts a file (regular files, 1 MiB lines, UTF-8, decompressed bytes), and
text decoding; the rules and messages: docs/inputs.md ("Rules for every format")."""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from typing import Any

from ..errors import QUOTE_LIMIT, InputError, shown
from .compressed import Decompressed, open_input, readable

#: The longest line a text input may have, in bytes (the newline not counted, a CR before it is).
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

#: Byte-order marks of the encodings that are not UTF-8 (UTF-32 first: its LE mark starts with UTF-16's).
_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "UTF-32", "utf-32-be"),
    (b"\xff\xfe", "UTF-16", "utf-16-le"),
    (b"\xfe\xff", "UTF-16", "utf-16-be"),
)

#: Characters that do not print but are text (zero-width space, no-break space ...).
_TEXT_CATEGORIES = ("Cf", "Zs", "Zl", "Zp")

#: Where a line ends in a TREC file: LF, CRLF or a lone CR (as pyarrow's CSV reader).
_LINE_END = re.compile(r"\r\n?|\n")


def plain(text: str) -> str:
    """An id shown unquoted in a message when short, else as :func:`~shrec_score.errors.shown` cuts it."""
    return text if len(text) <= QUOTE_LIMIT else shown(text)


def _mode(path: str, expected: str, what: str = "a regular file", *, folder: bool = True) -> int:
    """``path``'s stat mode if a regular file (or a ``folder``), else an InputError (``expected {what}``)."""
    with readable(path, expected):
        mode = os.stat(path).st_mode
    if not (stat.S_ISREG(mode) or folder and stat.S_ISDIR(mode)):
        raise InputError(path, None, f"expected {what}", next((name for test, name in _KINDS if test(mode)), "not a regular file"))
    return mode


def regular_file(path: str | os.PathLike[str]) -> str:
    """``path`` (as a str) once a ``stat`` finds it a regular file (a FIFO is never opened).

    >>> regular_file("/dev/null")
    Traceback (most recent call last):
    ...
    shrec_score.errors.InputError: /dev/null: expected a regular file, got a character device
    """
    path = os.fspath(path)
    _mode(path, "expected a readable file", folder=False)
    return path


def utf8_name(path: str, name: str) -> None:
    """Refuse a folder entry whose name is not UTF-8 (its bytes' surrogate escapes cannot name a query or a run)."""
    if not name.isascii() and any("\ud800" <= ch <= "\udfff" for ch in name):
        raise InputError(path, None, "expected file names in UTF-8", shown(name))


def entry_is_folder(path: str, what: str = "a regular file or a folder") -> bool:
    """True for a folder, False for a regular file, else an InputError saying ``expected {what}``."""
    return stat.S_ISDIR(_mode(path, f"expected {what}", what))


def listing(path: str) -> tuple[str, ...]:
    """Every entry of a folder (``os.listdir``), or an InputError naming it."""
    with readable(path, "expected a readable folder"):
        return tuple(os.listdir(path))


def folder_entries(path: str, names: tuple[str, ...] | None, clutter: Callable[[str], bool]) -> list[tuple[str, str, bool]]:
    """``(name, full path, is a folder)`` of a folder's entries (``names``: its :func:`listing`, made here when None),
    sorted, hidden ones (``.name``) left out, each name checked to be UTF-8 (all of them before any is stat'ed); a
    ``clutter`` entry that is no file or folder (a dangling link) is a file, never an error: it is passed over."""
    kept = sorted(n for n in (listing(path) if names is None else names) if not n.startswith("."))
    for name in (n for n in kept if not clutter(n)):  # clutter is passed over whatever its name, as check does
        utf8_name(os.path.join(path, name), name)
    full = [os.path.join(path, name) for name in kept]
    return [(n, f, os.path.isdir(f) if clutter(n) else entry_is_folder(f)) for n, f in zip(kept, full)]


def refuse_wide_text(path: str, head: bytes) -> None:
    """Refuse a UTF-16 or UTF-32 file: ``head`` starts with a byte-order mark, and the bytes after it decode to
    text with a blank (a PSB binary matrix may start with FF FE).

    >>> refuse_wide_text("m", "\\ufeffPSB 1\\n".encode("utf-16-le"))
    Traceback (most recent call last):
    ...
    shrec_score.errors.InputError: m: expected UTF-8 text, got UTF-16 (byte-order mark FF FE); save the file as UTF-8
    >>> refuse_wide_text("m.bin", b"\\xff\\xfe\\x7f\\x3f\\x00\\x00\\x80\\x3f")
    """
    for bom, name, codec in _BOMS:
        if head.startswith(bom):
            body = head[len(bom) :]
            body = body[: len(body) - len(body) % (4 if name == "UTF-32" else 2)]
            try:
                text = body.decode(codec)
            except UnicodeDecodeError as exc:
                if exc.start < len(body) - 4:  # a character cut at the probe's end is text
                    return
                text = body[: exc.start].decode(codec)
            blank = not text or any(ch in " \t\r\n" for ch in text)
            if blank and all(ch.isprintable() or ch in "\t\r\n" or unicodedata.category(ch) in _TEXT_CATEGORIES for ch in text):
                wide = f"{name} (byte-order mark {bom.hex(' ').upper()})"
                raise InputError(path, None, "expected UTF-8 text", f"{wide}; save the file as UTF-8")
            return


def open_checked(path: str) -> Any:
    """``path`` opened (:func:`~.compressed.open_input`: decompressed) once one ``stat`` finds it a regular file."""
    return open_input(regular_file(path))


def head_of(path: str, fh: Any) -> bytes:
    """The first :data:`HEAD_BYTES` of ``fh`` (``path`` opened), UTF-16 / UTF-32 refused; ``fh`` left at its start."""
    with readable(path):
        head = fh.read(HEAD_BYTES)
        fh.seek(0)
    refuse_wide_text(path, head)
    return head


def line_too_long(path: str, line: int | None, length: int) -> InputError:
    """The error for a line longer than :data:`MAX_LINE_BYTES` (never quoted)."""
    return InputError(path, line, f"expected lines of at most {MAX_LINE_BYTES:,} bytes (1 MiB)", f"a line of {length:,} bytes")


def long_line(data: bytes | bytearray, limit: int = MAX_LINE_BYTES) -> tuple[int, int] | None:
    """``(start offset, length)`` of the first line of ``data`` longer than ``limit``, or None.  Such a line covers a
    whole block of ``limit // 2`` bytes: one ``find`` rules a block out, only a block without a newline is measured.

    >>> long_line(b"ab\\ncdefg\\nh", limit=4)
    (3, 5)
    """
    start, end = 0, len(data)
    if end <= limit:
        return None
    step = max(1, limit // 2)
    while start < end:
        if data.find(b"\n", start, start + step) < 0:
            begin = data.rfind(b"\n", 0, start) + 1
            stop = data.find(b"\n", start)
            stop = end if stop < 0 else stop
            if stop - begin > limit:
                return begin, stop - begin
            start = stop + 1  # a new grid from the next line on
        else:
            start += step
    return None


def check_lines(path: str, data: bytes | bytearray, first_line: int = 1) -> None:
    """Refuse ``data`` (``path``'s bytes from line ``first_line`` on, or an mmap of them) if a line is too long."""
    if (found := long_line(data)) is not None:  # newlines before it counted 16 MiB at a time (an mmap has no count)
        before = sum(data[a : min(a + (16 << 20), found[0])].count(b"\n") for a in range(0, found[0], 16 << 20))
        raise line_too_long(path, first_line + before, found[1])


def read_bytes(path: str) -> bytes:
    """The (decompressed) bytes of ``path``, a regular file (:func:`regular_file`), lines and encoding checked."""
    with readable(path), open_input(path) as fh:
        if isinstance(fh, Decompressed):  # inflated in checked pieces: a bomb fails at its first over-long line, not once inflated whole
            return b"".join(piece for piece, _ in pieces(path, fh=fh))
        data = fh.read()
    refuse_wide_text(path, data[:HEAD_BYTES])
    check_lines(path, data)
    return data


def decode_text(path: str, data: bytes, line: int = 1) -> str:
    """``data`` (``path``'s bytes from line ``line`` on, a BOM dropped at line 1) as UTF-8 text, else an InputError."""
    data = data.removeprefix(b"\xef\xbb\xbf") if line == 1 else data  # (utf-8-sig would shift the error's offset)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, line + data.count(b"\n", 0, exc.start), "expected UTF-8 text", f"byte 0x{data[exc.start]:02x}") from None


def read_text(path: str | os.PathLike[str]) -> str:
    """The file's text (:func:`regular_file`, :func:`read_bytes`, then :func:`decode_text`)."""
    path = regular_file(path)
    return decode_text(path, read_bytes(path))


def pieces(path: str, size: int = 16 << 20, *, fh: Any = None) -> Iterator[tuple[bytes, int]]:
    """The (decompressed) bytes of ``path`` in pieces of about ``size`` cut after a newline, each with the number of
    its first line, lines and encoding checked; ``fh``: ``path`` opened by the caller (:func:`open_checked`), from its start."""
    line, carry = 1, b""
    with open_checked(path) if fh is None else nullcontext(fh) as fh:
        while True:
            block = fh.read(size)
            data = carry + block if carry else block
            if line == 1 and not carry:
                refuse_wide_text(path, data[:HEAD_BYTES])
            cut = data.rfind(b"\n") + 1 if block else len(data)  # the last piece: all that is left
            piece, carry = data[:cut], data[cut:]
            if len(carry) > MAX_LINE_BYTES:  # the line measured to its end, not held
                length = len(carry)
                while (block := fh.read(1 << 20)) and b"\n" not in block:
                    length += len(block)
                raise line_too_long(path, line + piece.count(b"\n"), length + (block.find(b"\n") if block else 0))
            if piece:
                check_lines(path, piece, line)
                yield piece, line
                line += piece.count(b"\n")
            if not block:
                return


def text_lines(path: str | os.PathLike[str], size: int = 16 << 20, *, fh: Any = None) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of a text file whose lines end at LF, CRLF or a lone CR only (a form
    feed or U+2028 is text, so a number is ``grep -n``'s), decoded a piece (:func:`pieces`, ``fh`` as it takes) at a time.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("wb", suffix=".txt") as fh:
    ...     _ = fh.write(b"a\\r\\nb\\rc\\fd\\n")
    ...     fh.flush()
    ...     list(text_lines(fh.name))
    [(1, 'a'), (2, 'b'), (3, 'c\\x0cd')]
    """
    n = 0
    for data, line in pieces(os.fspath(path), size, fh=fh):
        data = data.removeprefix(b"\xef\xbb\xbf") if line == 1 else data
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(path, n + len(_LINE_END.findall(data[: exc.start].decode("utf-8", "replace"))) + 1, "expected UTF-8 text", f"byte 0x{data[exc.start]:02x}") from None
        lines = _LINE_END.split(text) if "\r" in text else text.split("\n")
        if lines[-1] == "":
            lines.pop()  # the piece's last line end
        yield from enumerate(lines, start=n + 1)
        n += len(lines)
