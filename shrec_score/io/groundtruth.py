"""Reader of human ground truth for rank correlation, ``query,item,score`` (CSV or TSV); the rules:
docs/measures.md, "Rank correlation with human ground truth"."""

from __future__ import annotations

import math
import os

import pandas as pd

from ..errors import InputError, shown
from .numbers import parse_number
from .text import plain, read_text

COLUMNS = ["query", "item", "score"]


def read_ground_truth(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Columns query (str), item (str), score (float64), line (1-based)."""
    path = os.fspath(path)
    lines = read_text(path).splitlines()
    if not lines or not lines[0].strip():
        raise InputError(path, 1, "expected the header query,item,score", "an empty first line")
    sep = "\t" if path.endswith(".tsv") or "\t" in lines[0] else ","
    if [h.strip() for h in lines[0].split(sep)] != COLUMNS:
        raise InputError(path, 1, f"expected the header {shown(sep.join(COLUMNS))}", shown(lines[0]))
    numbered = [(n, [x.strip() for x in ln.split(sep)]) for n, ln in enumerate(lines[1:], start=2) if ln.strip()]
    for n, f in numbered:
        if len(f) != 3:
            raise InputError(path, n, f"expected 3 fields query{sep}item{sep}score", f"{len(f)}")
    if not numbered:
        raise InputError(path, None, "expected at least one query,item,score row")
    scores = [parse_number(f[2]) for _, f in numbered]  # the number grammar
    for (n, f), score in zip(numbered, scores):
        if score is None or not math.isfinite(score):
            raise InputError(path, n, "expected a finite number as score", shown(f[2]))
    first: dict[tuple[str, str], int] = {}
    for n, (q, it, _) in numbered:
        if first.setdefault((q, it), n) != n:
            raise InputError(path, n, f"expected each (query, item) pair once; {plain(q)},{plain(it)} is already scored at line {first[(q, it)]}")
    return pd.DataFrame([(q, it, s, n) for (n, (q, it, _)), s in zip(numbered, scores)], columns=[*COLUMNS, "line"])
