"""Many ranked-list files parsed in one pyarrow call, the fast pass of :mod:`.lists` (docs/performance.md).

It only ever accepts a file: one not plain (:func:`plain_body`) or not all good (an unknown id of
a closed collection, an id twice, a NaN) comes back as None, for :func:`.lists.parse_list` to read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .trec import arrow_filled, arrow_numpy, arrow_strings

#: One file's target indices (int64, file order) and distances (None for lines
#: without one), or None: the line reader must read the file.
Parsed = tuple[np.ndarray, np.ndarray | None]


def plain_body(data: bytes, query_id: str | None) -> tuple[memoryview, int, int] | None:
    """``(body, fields a line, lines)`` of a file this pass can take, else None.

    The body is ``data`` without a UTF-8 BOM, a first line holding only ``query_id`` (None:
    kept) and its trailing blanks.  Plain: ASCII, no control byte but LF and the CR of a CRLF,
    a first line that starts with an id and holds 1 or 2 fields.
    """
    data = data.removeprefix(b"\xef\xbb\xbf")
    if not data.isascii():
        return None
    n_cr = data.count(b"\r") if b"\r" in data else 0  # (bytes.count is slow; "in" and numpy are not)
    if n_cr != (data.count(b"\r\n") if n_cr else 0):
        return None
    raw = np.frombuffer(data, dtype=np.uint8)
    n_lf = int(np.count_nonzero(raw == 10))
    if np.count_nonzero(raw < 32) != n_lf + n_cr:
        return None
    first = data[: data.find(b"\n")] if b"\n" in data else data
    start = len(first) + 1 if query_id is not None and first.split() == [query_id.encode()] else 0
    end = len(data)
    while end > start and data[end - 1 : end].isspace():  # (rstrip would copy the body)
        end -= 1
    if end <= start or data[start] <= 32:
        return None  # no target line, or a blank or indented first one
    stop = data.find(b"\n", start, end)
    width = len(data[start : end if stop < 0 else stop].split())
    if width not in (1, 2):
        return None
    return memoryview(data)[start:end], width, n_lf - (start > 0) - data.count(b"\n", end) + 1


def id_table(target_index: Mapping[str, int]) -> tuple[Any, np.ndarray]:
    """The collection's ids as a pyarrow array and their indices, for ``pyarrow.compute.index_in``."""
    return arrow_strings(list(target_index)), np.fromiter(target_index.values(), dtype=np.int64, count=len(target_index))


def parse_batch(
    files: Sequence[tuple[str, bytes]],
    target_index: Mapping[str, int],
    unjudged: int | None = None,
    *,
    header: bool = True,
    ids: tuple[Any, np.ndarray] | None = None,
) -> list[Parsed | None]:
    """The lists of ``(query, bytes)`` files, each as :data:`Parsed` or None (the line reader's).

    ``unjudged``: the index of ids outside an open collection (None: closed, an
    unknown id sends its file to the line reader); ``header``: a first line
    holding only the query id is cut (False: ShapeNet Core55); ``ids``:
    :func:`id_table` of ``target_index``, when the caller keeps it for many calls.
    """
    ids = ids or id_table(target_index)
    out: list[Parsed | None] = [None] * len(files)
    plain = {k: body for k, (q, data) in enumerate(files) if (body := plain_body(data, q if header else None))}
    todo = [[k for k, body in plain.items() if body[1] == width] for width in (1, 2)]
    while todo:  # files of one width together; where pyarrow refuses the joined text, each half alone
        group = todo.pop()
        got = _parse_joined([plain[k] for k in group], ids, unjudged) if group else []
        if got is not None:
            for k, parsed in zip(group, got):
                out[k] = parsed
        elif len(group) > 1:
            todo += [group[: len(group) // 2], group[len(group) // 2 :]]
    return out


def _parse_joined(bodies: list[tuple[memoryview, int, int]], ids: tuple[Any, np.ndarray], unjudged: int | None) -> list[Parsed | None] | None:
    """The files of ``bodies`` (one width) parsed as one text; None when pyarrow refuses it."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    width, lines = bodies[0][1], [n for _, _, n in bodies]
    try:
        table = pcsv.read_csv(
            pa.py_buffer(b"\n".join(b for b, _, _ in bodies)),
            read_options=pcsv.ReadOptions(autogenerate_column_names=True, use_threads=False),
            parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False, escape_char=False, ignore_empty_lines=False),
            convert_options=pcsv.ConvertOptions(
                column_types={"f0": pa.binary(), "f1": pa.float64()}, null_values=[], strings_can_be_null=False, quoted_strings_can_be_null=False
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None
    if table.num_columns != width or table.num_rows != sum(lines):
        return None
    codes, indices, bad_lines = _lookup(table.column(0), ids, unjudged)
    dist = arrow_numpy(table.column(1)) if width == 2 else None
    if dist is not None and np.isnan(dist).any():
        bad_lines.append(np.flatnonzero(np.isnan(dist)))
    ends = np.cumsum(lines)
    bad = np.zeros(len(lines), dtype=bool)
    bad[np.searchsorted(ends, np.concatenate([np.zeros(0, dtype=np.int64), *bad_lines]), side="right")] = True
    out: list[Parsed | None] = []
    slot = np.zeros(int(codes.max(initial=0)) + 1, dtype=np.int32)
    place = np.arange(max(lines), dtype=np.int32)
    for k, (end, n) in enumerate(zip(ends.tolist(), lines)):
        mine = codes[end - n : end]
        slot[mine] = place[:n]  # each line writes its place at its id's slot: a line that
        if bad[k] or (slot[mine] != place[:n]).any():  # does not read it back shares its id with another
            out.append(None)
        else:
            out.append((indices[end - n : end], None if dist is None else dist[end - n : end]))
    return out


def _lookup(column: Any, ids: tuple[Any, np.ndarray], unjudged: int | None) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Each line's id code (its place in the collection; an unknown id of an open one past
    them), its target index, and the lines that send their file to the line reader."""
    import pyarrow.compute as pc

    found = pc.index_in(column, value_set=ids[0])
    if not found.null_count:
        codes = arrow_numpy(found).astype(np.int64)  # (int64 indexes faster)
        return codes, ids[1][codes], []
    codes = arrow_filled(found, -1)
    indices, unknown = ids[1][codes], np.flatnonzero(codes < 0)
    if unjudged is None:
        return codes, indices, [unknown]  # ids outside a closed collection
    other = pc.dictionary_encode(column.filter(pc.is_null(found)).combine_chunks())
    codes[unknown] = len(ids[1]) + arrow_numpy(other.indices)
    indices[unknown] = unjudged
    return codes, indices, [unknown[(arrow_numpy(pc.binary_length(other.dictionary)) == 0)[arrow_numpy(other.indices)]]]  # empty fields
