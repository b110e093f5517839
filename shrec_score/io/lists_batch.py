"""Many ranked-list files parsed in one pyarrow call: the fast pass of :mod:`.lists`
(docs/performance.md, "How the fast paths work").

It only ever *accepts* a file: a plain text (:func:`plain_body`) whose lines are
all good (known ids, or any id of an open collection; each id once; distances
that are numbers and not NaN).  Any other file is handed back as None and the
line reader (:func:`shrec_score.io.lists.parse_list`) reads it, explains its
error or applies ``--lenient``.  On a plain text ``str.split`` and pyarrow
split the same fields, and pyarrow's float parser reads the grammar of
:mod:`shrec_score.io.numbers` and rounds as ``float()`` (both held in
``tests/test_lists_batch.py``), so both readers give the same lists.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

#: What this pass returns for one file: target indices (int64, file order)
#: and distances (float64, None for lines without one), or None: the line
#: reader must read the file.
Parsed = tuple[np.ndarray, np.ndarray | None]


def plain_body(data: bytes, query_id: str | None) -> tuple[bytes, int, int] | None:
    """``(body, fields a line, lines)`` of a file this pass can take, else None.

    A UTF-8 BOM, a first line holding only ``query_id`` (None: none is cut) and
    the blanks at the end are dropped.  Plain means: ASCII, no control byte but
    LF and the CR of a CRLF (``str.split`` splits on the others, pyarrow does
    not), a first line that starts with an id and holds 1 or 2 fields.
    """
    data = data.removeprefix(b"\xef\xbb\xbf")
    if not data.isascii():
        return None
    n_cr = data.count(b"\r") if b"\r" in data else 0  # (bytes.count is slow; "in" and numpy are not)
    if n_cr != (data.count(b"\r\n") if n_cr else 0):
        return None
    raw = np.frombuffer(data, dtype=np.uint8)
    if np.count_nonzero(raw < 32) != np.count_nonzero(raw == 10) + n_cr:
        return None
    first = data.split(b"\n", 1)[0]
    if query_id is not None and first.split() == [query_id.encode()]:
        data = data[len(first) + 1 :]
    body = data.rstrip()
    if not body or body[0] <= 32:
        return None  # no target line, or a blank or indented first one
    cut = body.find(b"\n")
    width = len(body[: cut if cut >= 0 else len(body)].split())
    if width not in (1, 2):
        return None
    return body, width, int(np.count_nonzero(np.frombuffer(body, dtype=np.uint8) == 10)) + 1


def parse_batch(files: Sequence[tuple[str, bytes]], target_index: Mapping[str, int], unjudged: int | None = None, *, header: bool = True) -> list[Parsed | None]:
    """The lists of ``(query, bytes)`` files, each as :data:`Parsed` or None (see the
    module's doc); ``unjudged`` and ``header`` as :func:`~.lists.read_ranked_list` takes them."""
    out: list[Parsed | None] = [None] * len(files)
    bodies = [plain_body(data, q if header else None) for q, data in files]
    for width in (1, 2):
        group = [k for k, b in enumerate(bodies) if b is not None and b[1] == width]
        _parse_group(group, [b for b in bodies if b is not None and b[1] == width], target_index, unjudged, out)
    return out


def _parse_group(slots: list[int], bodies: list[tuple[bytes, int, int]], target_index: Mapping[str, int], unjudged: int | None, out: list[Parsed | None]) -> None:
    """Parse files of one width together; where pyarrow refuses the joined
    text (a line with another number of fields, a distance that is not a
    number), each half is tried alone, down to the files at fault."""
    if not bodies:
        return
    got = _parse_joined(bodies, target_index, unjudged)
    if got is not None:
        for k, parsed in zip(slots, got):
            out[k] = parsed
    elif len(bodies) > 1:
        half = len(bodies) // 2
        _parse_group(slots[:half], bodies[:half], target_index, unjudged, out)
        _parse_group(slots[half:], bodies[half:], target_index, unjudged, out)


def _parse_joined(bodies: list[tuple[bytes, int, int]], target_index: Mapping[str, int], unjudged: int | None) -> list[Parsed | None] | None:
    """The files of ``bodies`` (one width) parsed as one text; None when pyarrow refuses it."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    width = bodies[0][1]
    lines = [n for _, _, n in bodies]
    joined = b"\n".join(b for b, _, _ in bodies)
    ids = pa.dictionary(pa.int32(), pa.binary())  # each distinct id looked up once
    types = {"f0": ids} if width == 1 else {"f0": ids, "f1": pa.float64()}
    try:
        table = pcsv.read_csv(
            pa.py_buffer(joined),
            read_options=pcsv.ReadOptions(autogenerate_column_names=True, use_threads=False, block_size=min(len(joined) + 1, 1 << 30)),
            parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False, escape_char=False, ignore_empty_lines=False),
            convert_options=pcsv.ConvertOptions(column_types=types, null_values=[], strings_can_be_null=False, quoted_strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None
    if table.num_columns != width or table.num_rows != sum(lines):
        return None
    table = table.unify_dictionaries()  # (one chunk, one dictionary, unless the text is over 1 GiB)
    chunks = table.column(0).chunks
    codes = np.concatenate([_values(c.indices, np.int32) for c in chunks])
    names = _strings(chunks[0].dictionary)
    indices = np.fromiter((target_index.get(n, -1 if unjudged is None else unjudged) for n in names), dtype=np.int64, count=len(names))[codes]
    ends = np.cumsum(lines)
    bad = np.zeros(len(lines), dtype=bool)
    bad[np.searchsorted(ends, np.flatnonzero(indices < 0), side="right")] = True  # an id outside a closed collection
    if "" in names:  # an empty field (a line starting with a space)
        bad[np.searchsorted(ends, np.flatnonzero(codes == names.index("")), side="right")] = True
    dist = None
    if width == 2:
        dist = np.concatenate([_values(c, np.float64) for c in table.column(1).chunks])
        bad[np.searchsorted(ends, np.flatnonzero(np.isnan(dist)), side="right")] = True
    out: list[Parsed | None] = []
    slot = np.zeros(len(names), dtype=np.int32)
    place = np.arange(max(lines), dtype=np.int32)
    for k, (end, n) in enumerate(zip(ends.tolist(), lines)):
        mine = codes[end - n : end]
        slot[mine] = place[:n]  # each line writes its place at its id's slot: a line that
        if bad[k] or (slot[mine] != place[:n]).any():  # does not read it back shares its id with another
            out.append(None)
        else:
            out.append((indices[end - n : end], None if dist is None else dist[end - n : end]))
    return out


def _values(array: Any, dtype: type) -> np.ndarray:
    """The values of a pyarrow array without nulls, viewed through its buffer
    (``to_numpy`` would import pandas)."""
    return np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * np.dtype(dtype).itemsize)


def _strings(array: Any) -> list[str]:
    """The items of a pyarrow binary array of ASCII ids, as str (``to_pylist`` would import pandas)."""
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int32, count=len(array) + 1, offset=array.offset * 4).tolist()
    data = array.buffers()[2]
    data = data.to_pybytes() if data is not None else b""
    return [data[a:b].decode("ascii") for a, b in zip(offsets[:-1], offsets[1:])]
