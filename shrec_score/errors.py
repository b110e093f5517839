"""Errors raised for bad input.

Every reader raises :class:`InputError` with the file, the 1-based line (or
``None`` when the problem is not tied to one line), what was expected and what
was found.  The CLI prints ``str(err)`` as one line and exits with status 2.
"""

from __future__ import annotations

import os
import unicodedata

#: At most this many characters of input are quoted in a message.
QUOTE_LIMIT = 80
#: The "got" part of an :class:`InputError` is cut after this many characters.
GOT_LIMIT = 200


def visible(text: str) -> str:
    """``text`` with every character that would not show escaped.

    Control characters (newline, tab, ESC...), format characters (a BOM,
    zero-width spaces, direction marks), separators other than the plain
    space, unpaired surrogates (bytes of a name that is not UTF-8) and
    unassigned code points become ``\\n``, ``\\t``, ``\\x1b``,
    ``\\ufeff``...; printable text of any script stays as it is.

    >>> visible("a\\tb\\ufeffc")
    'a\\\\tb\\\\ufeffc'
    """
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch == " " or (ch.isprintable() and unicodedata.category(ch) not in ("Cf", "Zs", "Zl", "Zp")):
            out.append(ch)
        elif ch in "\n\t\r":
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}[ch])
        elif ord(ch) < 0x100:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return "".join(out)


def shown(text: str, limit: int = QUOTE_LIMIT) -> str:
    """``text`` quoted for a message: escaped by :func:`visible`, at most
    ``limit`` characters of it, the rest counted.

    >>> shown("chair")
    "'chair'"
    >>> shown("x" * 100, limit=5)
    "'xxxxx'... (95 more characters)"
    """
    more = len(text) - limit
    head = visible(text[:limit] if more > 0 else text)
    quoted = "'" + head.replace("'", "\\'") + "'"
    return quoted + (f"... ({more} more characters)" if more > 0 else "")


class InputError(Exception):
    """Bad input: names the file, the line, what was expected and what was got."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None,
        line: int | None,
        expected: str,
        got: str | None = None,
    ) -> None:
        self.path = None if path is None else os.fspath(path)
        self.line = line
        self.expected = expected
        self.got = got
        super().__init__(self.message)

    def __reduce__(self) -> tuple[type[InputError], tuple[str | None, int | None, str, str | None]]:  # travels back from a worker process intact
        return (type(self), (self.path, self.line, self.expected, self.got))

    @property
    def message(self) -> str:
        """One line: the path (escaped), the line, what was expected, what was got
        (escaped, and cut after :data:`GOT_LIMIT` characters whatever the caller passed)."""
        where = ""
        if self.path is not None:
            where = visible(self.path) if self.line is None else f"{visible(self.path)}:{self.line}"
            where += ": "
        text = f"{where}{visible(self.expected)}"
        if self.got is not None:
            got = self.got if len(self.got) <= GOT_LIMIT else f"{self.got[:GOT_LIMIT]}... ({len(self.got) - GOT_LIMIT} more characters)"
            text += f", got {visible(got)}"
        return text

    def __str__(self) -> str:
        return self.message


class OptionError(ValueError):
    """An option outside its documented values (``score(average="Macro")``).

    Raised before any input is read; the message names the option, the
    allowed values and what was given.  The CLI shows it as one line, exit 2.
    """
