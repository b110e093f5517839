"""Reader of the SHREC'16/'17 ShapeNet Core55 ground truth: ``id,synsetId,subSynsetId,modelId,split``.

The organisers' ``all.csv`` (and its per-split extracts): a header line
starting with ``id``, then one model per line::

    id,synsetId,subSynsetId,modelId,split
    000001,02691156,02691156,10155655850468db78d106ce0a280f87,train
    000002,02691156,02690373,1021a0914a7207aff927ed529ad90a11,test

``subSynsetId`` equals ``synsetId`` for a model labelled only at the synset
level.  The file goes through :func:`shrec_score.io.text.read_text` (regular
files only, gzip / bzip2 / xz / zstd by their magic bytes, 1 MiB lines, UTF-8
with an optional BOM).  Blank lines are passed over; white space around a
field is not part of it (CRLF files read as LF files).  A model id listed
twice, a line with another number of fields or an empty field is an
:class:`~shrec_score.errors.InputError` naming the file and the line.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..errors import InputError, shown
from .text import read_head, read_text_lines

#: The header of the official ground truth (its first field is what the official evaluator checks).
COLUMNS = ("id", "synsetId", "subSynsetId", "modelId", "split")


@dataclass(frozen=True)
class TaxonomyRows:
    """The rows of a ShapeNet ground truth, in file order (one entry per model)."""

    path: str
    ids: list[str]
    synsets: list[str]
    subsynsets: list[str]
    splits: list[str]


def is_shapenet_truth(path: str | os.PathLike[str]) -> bool:
    """True when the file's first line is a ShapeNet ground-truth header (starts with ``id,``).

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
    ...     _ = f.write("id,synsetId,subSynsetId,modelId,split\\n")
    >>> is_shapenet_truth(f.name); os.remove(f.name)
    True
    """
    head = read_head(path).removeprefix(b"\xef\xbb\xbf")
    first = head.split(b"\n", 1)[0].strip()
    return first.split(b",", 1)[0].strip() == b"id" and b"," in first


def read_shapenet_truth(path: str | os.PathLike[str]) -> TaxonomyRows:
    """Read ``id,synsetId,subSynsetId,modelId,split`` lines.

    Raises
    ------
    InputError
        When the first non-blank line is not the header, a line does not hold
        5 non-empty comma-separated fields, a model id repeats, or the file
        holds no model.
    """
    path = os.fspath(path)
    lines = [(n, line) for n, line in read_text_lines(path) if line.strip()]
    if not lines:
        raise InputError(path, None, f"expected the header {','.join(COLUMNS)}", "an empty file")
    n, header = lines[0]
    if [h.strip() for h in header.split(",")] != list(COLUMNS):
        raise InputError(path, n, f"expected the header {','.join(COLUMNS)}", shown(header))
    ids: list[str] = []
    synsets: list[str] = []
    subsynsets: list[str] = []
    splits: list[str] = []
    seen: dict[str, int] = {}
    for n, line in lines[1:]:
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != len(COLUMNS):
            raise InputError(path, n, "expected 5 fields id,synsetId,subSynsetId,modelId,split", f"{len(fields)} fields: {shown(line)}")
        empty = [name for name, f in zip(COLUMNS, fields) if not f]
        if empty:
            raise InputError(path, n, f"expected a value in every field; {empty[0]} is empty", shown(line))
        mid, syn, sub, _, split = fields
        if mid in seen:
            raise InputError(path, n, f"expected each id once; {shown(mid)} is already listed at line {seen[mid]}")
        seen[mid] = n
        ids.append(mid)
        synsets.append(syn)
        subsynsets.append(sub)
        splits.append(split)
    if not ids:
        raise InputError(path, None, "expected at least one model line after the header", "the header only")
    return TaxonomyRows(path, ids, synsets, subsynsets, splits)
