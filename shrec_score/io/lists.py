"""Ranked-list runs, one file per query (docs/inputs.md, "Runs"): pyarrow parses many files at once
(:func:`parse_batch`, docs/performance.md), the line reader (:func:`parse_list`) each file it doubts."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import suppress
from typing import Any

import numpy as np

from ..errors import InputError, shown
from ..model import RankedRun, RunSource, tie_starts
from .compressed import strip_suffix
from .numbers import parse_number
from .submissions import Spell, is_clutter, no_query_error
from .text import decode_text, folder_entries, read_bytes, read_text
from .trec import arrow_filled, arrow_numpy, arrow_strings, missing_queries_error

#: One file's target indices (int64, file order) and distances (None unless every target has one).
Listed = tuple[np.ndarray, np.ndarray | None]

#: A non-blank line as :func:`scan_lines` reads it: number, fields, id (None past 2 fields), index (None: unknown to a
#: closed collection), a repeat's first line, distance as written and as a float (None: absent or no number).
ListLine = tuple[int, int, str | None, int | None, int | None, str | None, float | None]

#: The reason ``--lenient`` counts a query without a ranked list under (join counts a TREC run's too).
MISSING_LISTS = "queries without a ranked list (scored 0)"

#: Bytes of query files read before they are parsed (one chunk); a chunk in flight holds a few times this.
CHUNK_BYTES = 8 << 20

#: Bytes of a chunk from which pyarrow parses it; below, the line reader is faster than importing pyarrow.
BATCH_MIN_BYTES = 256 << 10


def query_of(entry: str, known: Mapping[str, object], spell: Spell | None = None) -> str:
    """The query id file ``entry`` is named after (``q12``, ``q12.txt``, ``q12.txt.gz``), in the spelling ``spell``."""
    as_known = spell or str
    for name in (entry, strip_suffix(entry)):
        if as_known(name) in known:
            return as_known(name)
    return as_known(strip_suffix(entry).rsplit(".", 1)[0])


def query_files(
    source: RunSource, known_queries: Mapping[str, object], *, drops: Counter[str] | None = None, spell: Spell | None = None,
    queries_of: str = "the classification",
) -> dict[str, str]:
    """Query id -> file of the run's folder (sub-folders, clutter passed over); a file named after no query of
    ``queries_of`` is an error (``drops``: counted), and so is a folder none of whose files names a query
    (:func:`no_query_error`)."""
    out: dict[str, str] = {}
    unknown: list[tuple[str, str, str]] = []  # (entry, path, query id) of the files named after no query
    for entry, full, is_folder in folder_entries(source.path, source.listing, is_clutter):
        if is_folder or is_clutter(entry):
            continue
        qid = query_of(entry, known_queries, spell)
        if qid not in known_queries:
            unknown.append((entry, full, qid))
        elif qid in out:
            raise second_list_error(full, qid, out[qid])
        else:
            out[qid] = full
    if unknown and not out:
        raise no_query_error(source.path, [entry for entry, _, _ in unknown], known_queries)
    if unknown and drops is None:
        _, full, qid = unknown[0]
        raise InputError(full, None, "expected a file named after a query id (with or without extension)", f"no query {shown(qid)} in {queries_of}")
    if unknown and drops is not None:
        drops["files for unknown queries passed over"] += len(unknown)
    return out


def second_list_error(path: str, query_id: str, first: str) -> InputError:
    """The error of a run folder's second file for one query (``first``: the other file); score and check say it."""
    return InputError(path, None, f"expected one ranked list per query; query {shown(query_id)} also has {first}")


def parse_list(
    path: str,
    text: str,
    query_id: str,
    target_index: Mapping[str, int],
    *,
    drops: Counter[str] | None = None,
    unjudged: int | None = None,
    header: bool = True,
    spell: Spell | None = None,
) -> Listed:
    """The line reader: the ranked list ``text`` of file ``path`` as :data:`Listed` (no target line: empty), every
    error named.  ``unjudged``: the index of unknown ids in an open collection (None: an error); ``drops``: lenient,
    each drop counted by reason; ``header``: skip a first line of only the query id (not in ShapeNet)."""
    rows = list_rows(text, query_id if header else None, spell)
    if not rows and drops is not None:
        drops["empty ranked lists (scored 0)"] += 1
    return parse_rows(path, rows, target_index, drops=drops, unjudged=unjudged)


def parse_rows(
    path: str,
    rows: list[tuple[int, list[str]]],
    target_index: Mapping[str, int],
    *,
    drops: Counter[str] | None = None,
    unjudged: int | None = None,
    id_col: int | None = None,
) -> Listed:
    """:func:`parse_list` of ``(line number, fields)`` rows; ``id_col`` None: found by :func:`id_column`."""
    for n, f in rows if drops is None else ():
        if len(f) > 2:
            raise InputError(path, n, 'expected "<target> [distance]"', f"{len(f)} fields")
    col = id_column(path, rows, target_index, unjudged is not None, strict=drops is None) if id_col is None else id_col
    out: list[int] = []
    dists: list[float] = []

    def problem(reason: str, n: int, expected: str, got: str | None = None) -> None:
        if drops is None:
            raise InputError(path, n, expected, got)
        drops[reason] += 1

    for n, width, tid, target, first_at, dist_text, dist in scan_lines(rows, target_index, col, unjudged):
        if tid is None:  # (strict: refused above)
            problem("malformed lines dropped", n, 'expected "<target> [distance]"', f"{width} fields")
            continue
        if target is None:
            problem("unknown target ids dropped", n, "expected a target id of the collection", f"unknown id {shown(tid)}")
            continue
        if dist_text is not None and (dist is None or math.isnan(dist)):
            problem("bad distances ignored (target kept)", n, "expected a number as distance", shown(dist_text) if dist is None else "NaN")
        if first_at is not None:
            problem("repeated target ids dropped (first place kept)", n, f"expected each target once; {shown(tid)} is already ranked at line {first_at}")
            continue
        out.append(target)
        if dist is not None and not math.isnan(dist):
            dists.append(dist)
    return np.asarray(out, dtype=np.int64), (np.asarray(dists, dtype=np.float64) if dists and len(dists) == len(out) else None)


def list_rows(text: str, query_id: str | None, spell: Spell | None = None) -> list[tuple[int, list[str]]]:
    """The non-blank lines as ``(line number, fields)``, less a first line of only ``query_id`` (in spelling ``spell``);
    lines end at LF, CRLF or a lone CR only (as pyarrow's), other breaks separate fields as blanks do."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    rows = [(n, f) for n, line in enumerate(lines, start=1) if (f := line.split())]
    if rows and query_id is not None and len(rows[0][1]) == 1 and (spell or str)(rows[0][1][0]) == query_id:
        rows = rows[1:]
    return rows


def scan_lines(rows: list[tuple[int, list[str]]], target_index: Mapping[str, int], id_col: int, unjudged: int | None = None) -> list[ListLine]:
    """Every line's id, target index, repeat and distance (see :data:`ListLine`)."""
    out: list[ListLine] = []
    seen: dict[str | int, int] = {}
    for n, f in rows:
        if len(f) > 2:
            out.append((n, len(f), None, None, None, None, None))
            continue
        tid = f[id_col] if len(f) == 2 else f[0]
        index = target_index.get(tid, unjudged)
        first_at = None
        if index is not None:
            key = tid if index == unjudged else index  # a target, however the run spells it (02 and 2, --strip-zeros)
            first_at = seen.get(key)
            if first_at is None:
                seen[key] = n
        dist_text = f[1 - id_col] if len(f) == 2 else None
        dist = None if dist_text is None else parse_number(dist_text)
        out.append((n, len(f), tid, index, first_at, dist_text, dist))
    return out


def id_column(path: str, rows: list[tuple[int, list[str]]], target_index: Mapping[str, int], is_open: bool = False, *, strict: bool = True) -> int:
    """0 for ``target distance`` lines, 1 for ``distance target`` (SHREC 2016).  When neither column holds only ids
    of the collection, the likelier column is taken, or with ``strict`` its first unknown id is an error."""
    pairs = [f for _, f in rows if len(f) == 2]
    if not pairs or is_open:  # open collection: ids cannot be checked
        return 0
    first = sum(f[0] in target_index for f in pairs)
    if first == len(pairs):
        return 0
    second = sum(f[1] in target_index for f in pairs)
    if second == len(pairs):
        return 1
    col = 0 if first >= second else 1
    if not strict:
        return col
    n, f = next((n, f) for n, f in rows if len(f) == 2 and f[col] not in target_index)
    where = "first" if col == 0 else "second"
    raise InputError(path, n, f"expected a target id of the collection (ids were found in the {where} column)", f"unknown id {shown(f[col])}")


def read_list_run(
    source: RunSource,
    query_ids: list[str],
    target_index: Mapping[str, int],
    *,
    ignorable: Iterable[str] = (),
    drops: Counter[str] | None = None,
    unjudged: int | None = None,
    missing_ok: bool = False,
    header: bool = True,
    ties: bool = False,
    spell: Spell | None = None,
) -> RankedRun:
    """A run folder, a ranked list per query of ``query_ids`` (``ignorable`` ids' files, PSB class -1, not scored), read
    in query order :data:`CHUNK_BYTES` at a time; ``spell``: the relevance's spelling; ``ties``: tie groups of equal
    distances; ``missing_ok``: a query without a file ranks nothing; the rest: see :func:`parse_list`."""
    files = query_files(source, dict.fromkeys([*query_ids, *ignorable]), drops=drops, spell=spell)
    missing_lists(source, query_ids, files, drops=drops, missing_ok=missing_ok)
    todo = [(q, files[q]) for q in query_ids if q in files]
    out: dict[str, Listed] = {}
    ids = None
    for chunk in _chunks(todo):
        fast: list[Listed | None] = [None] * len(chunk)
        # spelled ids: the line reader, which finds a target spelled two ways twice
        if spell is None and sum(len(data) for _, _, data in chunk) >= BATCH_MIN_BYTES:
            ids = ids or id_table(target_index)
            fast = parse_batch([(q, data) for q, _, data in chunk], ids, unjudged, header=header)
        for (q, path, data), got in zip(chunk, fast):
            if got is None:
                got = parse_list(path, decode_text(path, data), q, target_index, drops=drops, unjudged=unjudged, header=header, spell=spell)
            out[q] = got if ties else (got[0], None)
            if drops is None and got[0].size == 0:  # strict: only a file without a target line gives no target
                raise _empty_lists_error(source.name, todo, q, header, spell)
    return list_run(source.name, query_ids, out, ties=ties)


def missing_lists(source: RunSource, query_ids: list[str], have: Mapping[str, object], *, drops: Counter[str] | None, missing_ok: bool) -> None:
    """Queries without a list in ``have``: silent if ``missing_ok``, else counted in ``drops``, else an error."""
    missing = [q for q in query_ids if q not in have]
    if missing and not missing_ok and drops is not None:
        drops[MISSING_LISTS] += len(missing)
    elif missing and not missing_ok:
        raise missing_queries_error(source.path, source.name, len(missing), len(query_ids), missing[0], "a ranked list")


def list_run(name: str, query_ids: list[str], got: Mapping[str, Listed], *, ties: bool) -> RankedRun:
    """The run of ``got`` (a query without a list ranks nothing); ``ties``: tie groups of equal distances too."""
    lists = {q: got.get(q, (np.zeros(0, dtype=np.int64), None)) for q in query_ids}
    run = RankedRun.from_lists(name, {q: v for q, (v, _) in lists.items()})
    if ties:
        flat = np.concatenate([np.zeros(0), *(np.full(v.size, np.nan) if d is None else d for v, d in lists.values())])
        run.tie_start = tie_starts(flat, run.offsets)  # NaN equals nothing
    return run


def _chunks(files: list[tuple[str, str]]) -> Iterator[list[tuple[str, str, bytes]]]:
    """``(query, path, bytes)`` of the files, :data:`CHUNK_BYTES` at a time; a read error after the files before it."""
    chunk: list[tuple[str, str, bytes]] = []
    size = 0
    for q, path in files:
        try:
            data = read_bytes(path)  # query_files stat'ed it
        except InputError:
            yield chunk
            raise
        chunk.append((q, path, data))
        size += len(data)
        if size >= CHUNK_BYTES:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


def _empty_lists_error(name: str, files: list[tuple[str, str]], first: str, header: bool, spell: Spell | None) -> InputError:
    """The error for query ``first``'s file, empty, with how many of the run's files are empty."""
    at = [q for q, _ in files].index(first)
    n_empty = 0
    for q, path in files[at:]:
        with suppress(InputError):  # a file that cannot be read is not counted
            n_empty += not list_rows(read_text(path), q if header else None, spell)
    got = f"an empty file ({n_empty} of {len(files)} query files of run {shown(name)} are empty; "
    return InputError(files[at][1], None, "expected a ranked list", got + "--lenient scores them as empty lists)")


def plain_body(data: bytes, query_id: str | None) -> tuple[memoryview, int, int] | None:
    """``(body, fields a line, lines)`` of a plain file (ASCII, no control byte but LF and CRLF, a first line of 1 or 2
    fields starting with an id), else None; the body drops a BOM, a first line of only ``query_id``, trailing blanks."""
    data = data.removeprefix(b"\xef\xbb\xbf")
    n_cr = data.count(b"\r") if b"\r" in data else 0  # (bytes.count is slow; "in" and numpy are not)
    raw = np.frombuffer(data, dtype=np.uint8)
    n_lf = int(np.count_nonzero(raw == 10))
    controls = np.count_nonzero(raw < 32) - n_lf - n_cr  # other than LF and CR
    if not data.isascii() or controls or n_cr != (data.count(b"\r\n") if n_cr else 0):
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
    lines = n_lf - (start > 0) - data.count(b"\n", end) + 1
    return (memoryview(data)[start:end], width, lines) if width in (1, 2) else None


def id_table(target_index: Mapping[str, int]) -> tuple[Any, np.ndarray]:
    """The collection's ids as a pyarrow array and their indices, for ``pyarrow.compute.index_in``."""
    return arrow_strings(list(target_index)), np.fromiter(target_index.values(), dtype=np.int64, count=len(target_index))


def parse_batch(
    files: Sequence[tuple[str, bytes]], ids: tuple[Any, np.ndarray], unjudged: int | None = None, *, header: bool = True
) -> list[Listed | None]:
    """Each ``(query, bytes)`` file's :data:`Listed`, or None for the line reader; ``ids``: :func:`id_table`'s."""
    out: dict[int, Listed | None] = {}
    plain = {k: body for k, (q, data) in enumerate(files) if (body := plain_body(data, q if header else None))}
    todo = [[k for k, body in plain.items() if body[1] == width] for width in (1, 2)]
    while todo:  # files of one width together; where pyarrow refuses the joined text, each half alone
        group = todo.pop()
        got = _parse_joined([plain[k] for k in group], ids, unjudged) if group else []
        if got is not None:
            out.update(zip(group, got))
        elif len(group) > 1:
            todo += [group[: len(group) // 2], group[len(group) // 2 :]]
    return [out.get(k) for k in range(len(files))]


def _parse_joined(bodies: list[tuple[memoryview, int, int]], ids: tuple[Any, np.ndarray], unjudged: int | None) -> list[Listed | None] | None:
    """The files of ``bodies`` (one width) parsed as one text; None when pyarrow refuses it."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    width, lines = bodies[0][1], [n for _, _, n in bodies]
    try:
        table = pcsv.read_csv(
            pa.py_buffer(b"\n".join(b for b, _, _ in bodies)),
            read_options=pcsv.ReadOptions(autogenerate_column_names=True, use_threads=False),
            parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False, ignore_empty_lines=False),
            convert_options=pcsv.ConvertOptions(column_types={"f0": pa.binary(), "f1": pa.float64()}, null_values=[]),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None
    if table.num_columns != width or table.num_rows != sum(lines):
        return None
    codes, indices, bad = _lookup(table.column(0), ids, unjudged)
    dist = arrow_numpy(table.column(1)) if width == 2 else None
    if dist is not None:
        bad |= np.isnan(dist)
    out: list[Listed | None] = []
    slot = np.zeros(int(codes.max(initial=0)) + 1, dtype=np.int32)
    place = np.arange(max(lines), dtype=np.int32)
    for end, n in zip(np.cumsum(lines).tolist(), lines):
        mine = codes[end - n : end]
        slot[mine] = place[:n]  # each line writes its place at its id's slot: a line that
        if bad[end - n : end].any() or (slot[mine] != place[:n]).any():  # does not read it back repeats an id
            out.append(None)
        else:
            out.append((indices[end - n : end], None if dist is None else dist[end - n : end]))
    return out


def _lookup(column: Any, ids: tuple[Any, np.ndarray], unjudged: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per line: id code (an open collection's unknown ids past its own), index, doubt (empty; closed: unknown)."""
    import pyarrow.compute as pc

    found = pc.index_in(column, value_set=ids[0])
    if not found.null_count:
        codes = arrow_numpy(found).astype(np.int64)  # (int64 indexes faster)
        return codes, ids[1][codes], np.zeros(codes.size, dtype=bool)
    codes = arrow_filled(found, -1)
    indices, unknown = ids[1][codes], codes < 0
    if unjudged is None:
        return codes, indices, unknown
    other = pc.dictionary_encode(column.filter(pc.is_null(found)).combine_chunks())
    codes[unknown] = len(ids[1]) + arrow_numpy(other.indices)
    indices[unknown] = unjudged
    empty = np.zeros(codes.size, dtype=bool)
    empty[unknown] = (arrow_numpy(pc.binary_length(other.dictionary)) == 0)[arrow_numpy(other.indices)]
    return codes, indices, empty
