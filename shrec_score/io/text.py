"""Decoding of text input with errors that name the file and the line."""

from __future__ import annotations

import os

from ..errors import InputError


def read_text(path: str | os.PathLike[str]) -> str:
    """Return the file's text, decoded as UTF-8 (a BOM is dropped).

    A file that is not UTF-8 is an :class:`InputError` naming the line of the
    first bad byte.
    """
    path = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise InputError(path, None, "expected a readable file", exc.strerror or str(exc)) from None
    data = data.removeprefix(b"\xef\xbb\xbf")  # (decoding as utf-8-sig would shift the error's offset)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(path, line, "expected UTF-8 text", f"byte 0x{data[exc.start]:02x}") from None


def read_text_lines(path: str | os.PathLike[str]) -> list[tuple[int, str]]:
    """Return ``(line_number, line)`` pairs, 1-based, line endings removed."""
    return list(enumerate(read_text(path).splitlines(), start=1))
