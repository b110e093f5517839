"""Readers of TREC files: qrels (``query_id iteration target_id grade``)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..errors import InputError
from .text import read_text


@dataclass(frozen=True)
class Qrels:
    """Judgments in file order: parallel lists of query ids, target ids, grades."""

    path: str
    queries: list[str]
    targets: list[str]
    grades: list[int]


def read_qrels(path: str | os.PathLike[str]) -> Qrels:
    """Read a TREC qrels file; a pair judged twice is an error.

    Grades are integers; as in trec_eval, grade >= 1 is relevant and a
    negative grade (-1) marks an unjudged item (gain 0).
    """
    path = os.fspath(path)
    queries: list[str] = []
    targets: list[str] = []
    grades: list[int] = []
    seen: dict[tuple[str, str], int] = {}
    for n, line in enumerate(read_text(path).splitlines(), start=1):
        f = line.split()
        if not f:
            continue
        if len(f) != 4:
            raise InputError(path, n, 'expected "query_id iteration target_id grade"', f"{len(f)} fields")
        try:
            grade = int(f[3])
        except ValueError:
            raise InputError(path, n, "expected a whole number as grade", repr(f[3])) from None
        key = (f[0], f[2])
        if key in seen:
            raise InputError(path, n, f"expected each (query, target) pair once; {f[0]} {f[2]} is already judged at line {seen[key]}")
        seen[key] = n
        queries.append(f[0])
        targets.append(f[2])
        grades.append(grade)
    if not queries:
        raise InputError(path, None, "expected at least one judgment", "an empty file")
    return Qrels(path, queries, targets, grades)
