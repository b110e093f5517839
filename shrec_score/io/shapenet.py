"""Reader of the SHREC'16/'17 ShapeNet Core55 ground truth ``id,synsetId,subSynsetId,modelId,split`` (the
organisers' ``all.csv``); the rules: docs/evaluators.md, "ShapeNet Core55"."""

from __future__ import annotations

import os
from typing import Any

from ..errors import InputError, shown
from .text import text_lines

#: The header of the official ground truth (its first field is what the official evaluator checks).
COLUMNS = ("id", "synsetId", "subSynsetId", "modelId", "split")


def is_shapenet_truth(head: bytes) -> bool:
    """True when a file's first bytes (``head``) start with a ShapeNet ground-truth header line (``id,``).

    >>> is_shapenet_truth(b"id,synsetId,subSynsetId,modelId,split\\n1,2"), is_shapenet_truth(b"PSB 1\\n")
    (True, False)
    """
    first = head.removeprefix(b"\xef\xbb\xbf").split(b"\n", 1)[0].strip()
    return first.split(b",", 1)[0].strip() == b"id" and b"," in first


def read_shapenet_truth(path: str | os.PathLike[str], fh: Any = None) -> tuple[list[str], ...]:
    """The columns id, synsetId, subSynsetId and split of a ground truth, in file order (``fh``: ``path`` opened
    by the caller); blank lines passed over, white space around a field left out."""
    path = os.fspath(path)
    lines = [(n, line) for n, line in text_lines(path, fh=fh) if line.strip()]
    if not lines:
        raise InputError(path, None, f"expected the header {','.join(COLUMNS)}", "an empty file")
    n, header = lines[0]
    if [h.strip() for h in header.split(",")] != list(COLUMNS):
        raise InputError(path, n, f"expected the header {','.join(COLUMNS)}", shown(header))
    rows: dict[str, tuple[int, list[str]]] = {}  # id -> (line, fields)
    for n, line in lines[1:]:
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != len(COLUMNS):
            raise InputError(path, n, "expected 5 fields id,synsetId,subSynsetId,modelId,split", f"{len(fields)} fields: {shown(line)}")
        if "" in fields:
            empty = COLUMNS[fields.index("")]
            raise InputError(path, n, f"expected a value in every field; {empty} is empty", shown(line))
        model = fields[0]
        if (first := rows.get(model)) is not None:
            raise InputError(path, n, f"expected each id once; {shown(model)} is already listed at line {first[0]}")
        rows[model] = (n, fields)
    if not rows:
        raise InputError(path, None, "expected at least one model line after the header", "the header only")
    ids, synsets, subsynsets, _, splits = (list(col) for col in zip(*(f for _, f in rows.values())))
    return ids, synsets, subsynsets, splits
