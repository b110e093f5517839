"""Reader of human ground truth for rank correlation, ``query,item,score`` (CSV or TSV); the rules:
docs/measures.md, "Rank correlation with human ground truth"."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from ..errors import InputError, shown
from .numbers import is_number
from .text import plain, read_text

COLUMNS = ["query", "item", "score"]


def read_ground_truth(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Columns query (str), item (str), score (float64), line (1-based)."""
    path = os.fspath(path)
    text = read_text(path)
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise InputError(path, 1, "expected the header query,item,score", "an empty first line")
    sep = "\t" if path.endswith(".tsv") or "\t" in lines[0] else ","
    header = [h.strip() for h in lines[0].split(sep)]
    if header != COLUMNS:
        raise InputError(path, 1, f"expected the header {shown(sep.join(COLUMNS))}", shown(lines[0]))
    numbered = [(n, [x.strip() for x in ln.split(sep)]) for n, ln in enumerate(lines[1:], start=2) if ln.strip()]
    for n, f in numbered:
        if len(f) != 3:
            raise InputError(path, n, f"expected 3 fields query{sep}item{sep}score", f"{len(f)}")
    rows = [f for _, f in numbered]
    if not rows:
        raise InputError(path, None, "expected at least one query,item,score row")
    df = pd.DataFrame(rows, columns=COLUMNS)
    df["line"] = [n for n, _ in numbered]
    numeric = np.fromiter((is_number(x) for x in df["score"]), dtype=bool, count=len(df))  # the number grammar
    score = pd.to_numeric(df["score"].where(numeric), errors="coerce")
    bad = score.isna() | ~np.isfinite(score.fillna(0))
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(path, int(df["line"].iat[i]), "expected a finite number as score", shown(df["score"].iat[i]))
    df["score"] = score.astype(np.float64)
    first: dict[tuple[str, str], int] = {}
    for n, (q, it, _) in numbered:
        if first.setdefault((q, it), n) != n:
            raise InputError(path, n, f"expected each (query, item) pair once; {plain(q)},{plain(it)} is already scored at line {first[(q, it)]}")
    return df
