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


TREC_RUN_FIELDS = "query_id Q0 target_id rank score tag"


def _locate_trec_problem(path: str) -> None:
    """Slow path: find the first malformed line of a TREC run and raise."""
    for n, line in enumerate(read_text(path).splitlines(), start=1):
        f = line.split()
        if not f:
            continue
        if len(f) != 6:
            raise InputError(path, n, f'expected "{TREC_RUN_FIELDS}"', f"{len(f)} fields")
        try:
            score = float(f[4])
        except ValueError:
            raise InputError(path, n, "expected a number as score (5th field)", repr(f[4])) from None
        if score != score:
            raise InputError(path, n, "expected a number as score (5th field)", "NaN")
    raise InputError(path, None, f'expected lines "{TREC_RUN_FIELDS}"')


def read_trec_run_table(path: str | os.PathLike[str]):
    """Read a TREC run into a DataFrame (query, doc, score, line), using pandas' C parser."""
    import numpy as np
    import pandas as pd

    path = os.fspath(path)
    read_text(path)  # UTF-8 check with the line of a bad byte
    try:
        # No names: pandas then refuses a line longer than the first one
        # (with names it would silently drop the extra fields).
        df = pd.read_csv(path, sep=r"\s+", header=None, dtype=str, engine="c", keep_default_na=False, na_filter=False)
    except pd.errors.EmptyDataError:
        raise InputError(path, None, f'expected lines "{TREC_RUN_FIELDS}"', "an empty file") from None
    except (pd.errors.ParserError, ValueError):
        _locate_trec_problem(path)
        raise
    if df.shape[1] != 6 or (df == "").to_numpy().any():
        _locate_trec_problem(path)
    df = df.iloc[:, [0, 2, 4, 5]]
    df.columns = ["query", "doc", "score", "tag"]
    scores = pd.to_numeric(df["score"], errors="coerce").to_numpy(dtype=np.float64)
    if np.isnan(scores).any():
        _locate_trec_problem(path)
    dup = df.duplicated(["query", "doc"])
    if dup.any():
        first = int(np.flatnonzero(dup.to_numpy())[0])
        q, d = df["query"].iat[first], df["doc"].iat[first]
        lines = _line_numbers(path)
        earlier = int(np.flatnonzero(((df["query"] == q) & (df["doc"] == d)).to_numpy())[0])
        raise InputError(path, lines[first], f"expected each target once per query; {q} {d} is already ranked at line {lines[earlier]}")
    return df.assign(score=scores)


def _line_numbers(path: str) -> list[int]:
    return [n for n, line in enumerate(read_text(path).splitlines(), start=1) if line.split()]
