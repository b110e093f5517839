"""The one grammar of numbers in every reader (docs/inputs.md): a decimal number as C's ``strtod`` reads it, whole
numbers ``[+-]?`` and ASCII digits; ``1_000``, other scripts' digits, hexadecimal floats (Python's alone) refused."""

from __future__ import annotations

import re

_NUMBER = re.compile(
    r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf(?:inity)?|nan)",
    re.ASCII | re.IGNORECASE,
)
_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)


def parse_number(token: str) -> float | None:
    """``token`` as a float (NaN too), or None when it is not a number of the grammar above.

    >>> [parse_number(t) for t in ["1e3", "-0.5", ".5", "inf", "NaN", "1_000", "١٢", "0x1p3"]]
    [1000.0, -0.5, 0.5, inf, nan, None, None, None]
    """
    return float(token) if _NUMBER.fullmatch(token) is not None else None


def is_integer(token: str) -> bool:
    """Whether ``token`` is a whole number in ASCII digits, with an optional sign.

    >>> [is_integer(t) for t in ["12", "-1", "+3", "1.0", "²", "١"]]
    [True, True, True, False, False, False]
    """
    return _INTEGER.fullmatch(token) is not None


def is_count(token: str) -> bool:
    """Whether ``token`` is a count: ASCII digits only (no sign)."""
    return token.isascii() and token.isdigit()
