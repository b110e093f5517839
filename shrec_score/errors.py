"""Errors raised for bad input.

Every reader raises :class:`InputError` with the file, the 1-based line (or
``None`` when the problem is not tied to one line), what was expected and what
was found.  The CLI prints ``str(err)`` as one line and exits with status 2.
"""

from __future__ import annotations

import os


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
        where = ""
        if self.path is not None:
            where = self.path if self.line is None else f"{self.path}:{self.line}"
            where += ": "
        text = f"{where}{self.expected}"
        if self.got is not None:
            text += f", got {self.got}"
        return " ".join(text.split("\n"))  # always one line

    def __str__(self) -> str:
        return self.message


class OptionError(ValueError):
    """An option outside its documented values (``score(average="Macro")``).

    Raised before any input is read; the message names the option, the
    allowed values and what was given.  The CLI shows it as one line, exit 2.
    """
