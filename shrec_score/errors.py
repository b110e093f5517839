"""Errors raised for bad input; the CLI prints one as one line, exit status 2 (docs/errors.md)."""

from __future__ import annotations

import os

#: At most this many characters of input are quoted in a message.
QUOTE_LIMIT = 80
#: The "got" part of an :class:`InputError` is cut after this many characters.
GOT_LIMIT = 200


def visible(text: str) -> str:
    """``text`` with each character ``str.isprintable`` refuses (controls, a BOM, zero-width spaces, direction marks,
    separators but the space, lone surrogates, unassigned code points) escaped as ``repr`` does; other text stays.

    >>> visible("a\\tb\\ufeffc")
    'a\\\\tb\\\\ufeffc'
    """
    return text if text.isprintable() else "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def shown(text: str, limit: int = QUOTE_LIMIT) -> str:
    """``text`` quoted for a message: escaped by :func:`visible`, at most ``limit`` characters, the rest counted.

    >>> shown("x" * 100, limit=5)
    "'xxxxx'... (95 more characters)"
    """
    more = len(text) - limit
    return "'" + visible(text[:limit]).replace("'", "\\'") + "'" + (f"... ({more} more characters)" if more > 0 else "")


class InputError(Exception):
    """Bad input: the file, the 1-based line (None when not tied to one line), what was expected and what was got;
    ``body`` says what was expected and what was got (cut after :data:`GOT_LIMIT` characters), unescaped,
    ``message`` (the exception's text) the path, the line and ``body`` in one line, escaped."""

    def __init__(
        self, path: str | os.PathLike[str] | None, line: int | None, expected: str, got: str | None = None
    ) -> None:
        self.path = None if path is None else os.fspath(path)
        self.line, self.expected, self.got = line, expected, got
        more = 0 if got is None else len(got) - GOT_LIMIT
        cut = f"... ({more} more characters)" if more > 0 else ""
        self.body = expected if got is None else f"{expected}, got {got[:GOT_LIMIT]}{cut}"
        where = "" if self.path is None else visible(self.path) + ("" if line is None else f":{line}") + ": "
        self.message = where + visible(self.body)
        super().__init__(self.message)

    def __reduce__(self) -> tuple[type[InputError], tuple[str | None, int | None, str, str | None]]:  # travels back from a worker process intact
        return (type(self), (self.path, self.line, self.expected, self.got))


class OptionError(ValueError):
    """An option outside its documented values (``score(average="Macro")``), raised before any input is read;
    the message names the option, the allowed values and what was given."""
