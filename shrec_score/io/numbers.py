"""The one grammar of numbers in every reader: distances, scores, grades, counts.

A distance or a score is what C's ``strtod`` reads as a decimal number, the
whole token::

    [+-]? ( digits [ "." digits? ] | "." digits ) ( [eE] [+-]? digits )?
    [+-]? ( "inf" | "infinity" | "nan" )          (any case)

with ``digits`` the ASCII digits 0-9 only.  So ``1e3``, ``-0.5``, ``.5``,
``5.``, ``+inf`` and ``NaN`` are numbers (whether NaN or an infinity is
admitted is each reader's rule), and these are not:

* ``1_000``: Python's ``float()`` reads digit groups, ``strtod``, numpy's
  text parser, pyarrow and trec_eval do not;
* digits of other scripts (Arabic-Indic ``١٢``, full-width ``１２``): Python
  reads them, no C tool does, and they are rarely what was meant;
* hexadecimal floats (``0x1p-3``): ``strtod`` reads them, but numpy's matrix
  parser, pyarrow and Python do not, and no contest file has them; refusing
  them keeps every reader (lists, matrices, TREC, ground truth) in agreement;
* ``nan(...)``: ``strtod``'s NaN payloads, for the same reason.

Whole numbers (qrels grades, ``.cla`` counts) are ``[+-]?`` and ASCII digits.

Readers whose parser is already this strict keep it (numpy's ``fromstring``
for matrices; pyarrow for TREC runs, whose float parser agrees with this
grammar, ``tests/test_input_rules.py`` checks it); where Python's ``float()``
or numpy's conversion of Python strings is used, the token is checked here
first.
"""

from __future__ import annotations

import re

_NUMBER = re.compile(
    r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf(?:inity)?|nan)",
    re.ASCII | re.IGNORECASE,
)
_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)


def is_number(token: str) -> bool:
    """Whether ``token`` is a number of the grammar above.

    >>> [is_number(t) for t in ["1e3", "-0.5", ".5", "inf", "NaN", "1_000", "١٢", "0x1p3"]]
    [True, True, True, True, True, False, False, False]
    """
    return _NUMBER.fullmatch(token) is not None


def parse_number(token: str) -> float | None:
    """``token`` as a float, or None when it is not a number of the grammar (NaN is returned as NaN)."""
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
