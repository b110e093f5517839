"""Reader of ranked-list runs: one file per query, one target per line (the
rules: docs/inputs.md, "Runs" and "Checking runs and lenient scoring").

Two readers, one answer: :func:`read_list_run` parses a run's files many at a
time with pyarrow (:mod:`.lists_batch`, which only accepts), and every file
that pass doubts goes to the line reader (:func:`parse_list`), which names
each problem or applies the ``--lenient`` rules; ``tests/test_lists_batch.py``
holds them to the same lists and distances.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Literal, NamedTuple

import numpy as np

from ..errors import InputError, shown
from ..model import RankedRun, RunSource, tie_starts
from .compressed import strip_suffix
from .lists_batch import Parsed, parse_batch
from .numbers import parse_number
from .submissions import Spell, is_clutter, no_query_error
from .text import decode_text, folder_entries, read_bytes, read_text


def query_of(entry: str, known: Mapping[str, object], spell: Spell | None = None) -> str:
    """The query id a ranked-list file is named after: its name, or its name
    without the extension (``q12.txt``, ``q12.txt.gz`` -> ``q12``).

    ``spell`` (``--strip-zeros``, ``--id-map``): the relevance's spelling of
    a run's id (``0012`` -> ``12``); the id comes back in that spelling."""
    as_known = spell or str
    for name in (entry, strip_suffix(entry)):
        if as_known(name) in known:
            return as_known(name)
    return as_known(strip_suffix(entry).rsplit(".", 1)[0])


#: The reason ``--lenient`` counts a query file without a target line under.
EMPTY_LISTS = "empty ranked lists (scored 0)"


def query_files(
    folder: str, known_queries: Mapping[str, object], *, drops: Counter[str] | None = None, spell: Spell | None = None
) -> dict[str, str]:
    """Map query id -> file in ``folder``; a file whose name is no query is an error
    (counted and passed over when ``drops`` is given), and so is a folder none of
    whose files names a query, even with ``drops`` (:func:`no_query_error`).
    Sub-folders and clutter (:func:`is_clutter`) are passed over; every entry is
    checked by :func:`shrec_score.io.text.folder_entries`.
    """
    out: dict[str, str] = {}
    unknown: list[str] = []
    first_unknown: InputError | None = None
    for entry, full, is_folder in folder_entries(folder):
        if is_folder or is_clutter(entry):
            continue
        qid = query_of(entry, known_queries, spell)
        if qid not in known_queries:
            unknown.append(entry)
            if drops is not None:
                drops["files for unknown queries passed over"] += 1
            elif first_unknown is None:
                first_unknown = InputError(full, None, "expected a file named after a query id (with or without extension)", f"no query {shown(qid)} in the classification")
            continue
        if qid in out:
            raise InputError(full, None, f"expected one ranked list per query; query {shown(qid)} also has {out[qid]}")
        out[qid] = full
    if unknown and not out:
        raise no_query_error(folder, unknown, known_queries)
    if first_unknown is not None:
        raise first_unknown
    return out


def read_ranked_list(
    path: str,
    query_id: str,
    target_index: Mapping[str, int],
    *,
    with_distances: Literal[True] = True,
    drops: Counter[str] | None = None,
    unjudged: int | None = None,
    header: bool = True,
) -> tuple[np.ndarray, np.ndarray | None]:
    """One query's ranked list as target indices (best first) and distances
    (None unless every target kept carries a number).

    Lines are ``target_id [distance]`` or ``distance target_id`` (SHREC 2016:
    the id column is the one whose ids the collection knows, the first when
    both are).  ``unjudged``: an open collection (qrels alone), unknown ids get
    this index; None: an unknown id is an error.  ``drops``: lenient reading,
    each drop counted by reason (a file without a target line as
    :data:`EMPTY_LISTS`).  ``header``: skip a first line holding only the
    query id (False where the query may retrieve itself: ShapeNet Core55).
    A file without a target line gives an empty list (the caller decides).
    """
    return parse_list(path, read_text(path), query_id, target_index, drops=drops, unjudged=unjudged, header=header)


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
) -> tuple[np.ndarray, np.ndarray | None]:
    """The line reader: ``text`` (the file ``path``'s) by the rules of
    :func:`read_ranked_list`, explaining every error (file, line, what was expected)."""
    rows = list_rows(text, query_id if header else None, spell)
    if not rows:
        if drops is not None:
            drops[EMPTY_LISTS] += 1
        return np.zeros(0, dtype=np.int64), None
    return parse_rows(path, rows, target_index, drops=drops, unjudged=unjudged)


def parse_rows(
    path: str,
    rows: list[tuple[int, list[str]]],
    target_index: Mapping[str, int],
    *,
    drops: Counter[str] | None = None,
    unjudged: int | None = None,
    id_col: int | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """One ranked list's ``(line number, fields)`` rows as target indices and
    distances: the rules of :func:`read_ranked_list` (strict, or lenient with
    ``drops``); ``id_col`` None: the id column is found (:func:`id_column`)."""
    if drops is not None:
        col = id_column(path, rows, target_index, unjudged is not None, strict=False) if id_col is None else id_col
        return _lenient(scan_lines(rows, target_index, col, unjudged), drops)
    for n, f in rows:
        if len(f) > 2:
            raise InputError(path, n, 'expected "<target> [distance]"', f"{len(f)} fields")
    col = id_column(path, rows, target_index, unjudged is not None, strict=True) if id_col is None else id_col
    return _exact(path, scan_lines(rows, target_index, col, unjudged))


class ListLine(NamedTuple):
    """One non-blank line of a ranked-list file as :func:`scan_lines` read it: the
    exact reader, ``--lenient`` and ``check`` apply their own rules to the same lines."""

    #: 1-based line number in the file.
    n: int
    #: Number of whitespace-separated fields.
    fields: int
    #: The target id (None on a line of more than 2 fields).
    tid: str | None = None
    #: Its index in the collection; None when a closed collection does not know it.
    target: int | None = None
    #: The line where the same (known) id was first listed, when this one repeats it.
    first_at: int | None = None
    #: The distance as written, and as a float (None when absent or not a
    #: number of :mod:`shrec_score.io.numbers`' grammar).
    dist_text: str | None = None
    dist: float | None = None


def list_rows(text: str, query_id: str | None, spell: Spell | None = None) -> list[tuple[int, list[str]]]:
    """The non-blank lines as ``(line number, fields)``, without a first line that
    holds only ``query_id`` (SHREC 2012/2014; None: no such line), spelled as the
    run spells ids (``spell``: ``--strip-zeros``, ``--id-map``).  Lines end at
    LF, CRLF or a lone CR only (as pyarrow counts them); a form feed, a vertical
    tab, U+0085 or U+2028 separates fields as any blank does."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    rows = [(n, f) for n, line in enumerate(lines, start=1) if (f := line.split())]
    if rows and query_id is not None and len(rows[0][1]) == 1 and (spell or str)(rows[0][1][0]) == query_id:
        rows = rows[1:]
    return rows


def scan_lines(rows: list[tuple[int, list[str]]], target_index: Mapping[str, int], id_col: int, unjudged: int | None = None) -> list[ListLine]:
    """Every line's id, target index, repeat and distance (see :class:`ListLine`)."""
    out: list[ListLine] = []
    seen: dict[str | int, int] = {}
    for n, f in rows:
        if len(f) > 2:
            out.append(ListLine(n, len(f)))
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
        out.append(ListLine(n, len(f), tid, index, first_at, dist_text, dist))
    return out


def _exact(path: str, lines: list[ListLine]) -> tuple[np.ndarray, np.ndarray | None]:
    """The strict rules: the first problem is an error naming its line."""
    out: list[int] = []
    dists: list[float] = []
    for line in lines:
        if line.target is None:
            raise InputError(path, line.n, "expected a target id of the collection", f"unknown id {shown(line.tid or '')}")
        if line.dist_text is not None:
            if line.dist is None:
                raise InputError(path, line.n, "expected a number as distance", shown(line.dist_text))
            if math.isnan(line.dist):
                raise InputError(path, line.n, "expected a number as distance", "NaN")
            dists.append(line.dist)
        if line.first_at is not None:
            raise InputError(path, line.n, f"expected each target once; {shown(line.tid or '')} is already ranked at line {line.first_at}")
        out.append(line.target)
    return _lists(out, dists)


def _lenient(lines: list[ListLine], drops: Counter[str]) -> tuple[np.ndarray, np.ndarray | None]:
    """The lenient rules of :func:`read_ranked_list`, counting every drop."""
    out: list[int] = []
    dists: list[float] = []
    for line in lines:
        if line.tid is None:
            drops["malformed lines dropped"] += 1
            continue
        if line.target is None:
            drops["unknown target ids dropped"] += 1
            continue
        if line.dist_text is not None and (line.dist is None or math.isnan(line.dist)):
            drops["bad distances ignored (target kept)"] += 1
        if line.first_at is not None:
            drops["repeated target ids dropped (first place kept)"] += 1
            continue
        out.append(line.target)
        if line.dist is not None and not math.isnan(line.dist):
            dists.append(line.dist)
    return _lists(out, dists)


def _lists(indices: list[int], dists: list[float]) -> tuple[np.ndarray, np.ndarray | None]:
    """The indices, and the distances when every target kept has one (else None:
    a list with distances on some lines only has no tie groups)."""
    out = np.asarray(indices, dtype=np.int64)
    return out, (np.asarray(dists, dtype=np.float64) if len(dists) == len(indices) and dists else None)


def id_column(path: str, rows: list[tuple[int, list[str]]], target_index: Mapping[str, int], is_open: bool = False, *, strict: bool = True) -> int:
    """0 for ``target distance`` lines, 1 for ``distance target`` (SHREC 2016).

    ``strict``: when neither column holds only ids of the collection, the
    first line whose id is unknown in the likelier column is an error;
    otherwise the likelier column is taken (lenient reading, ``check``).
    """
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
    """Read a run folder with one ranked list per query (``query_ids``; files of
    ``ignorable`` ids, PSB class ``-1``, may exist and are not scored).

    ``spell``: the relevance's spelling of a file's query id (``target_index``
    then spells target ids the same way, :class:`shrec_score.join.SpelledIndex`).
    ``ties``: the run carries its tie groups (runs of equal distances; none
    for a list without a distance on every target kept).  ``missing_ok``
    (``--missing-queries skip|zero``): a query without a file gets an empty
    list; ``drops``, ``unjudged``, ``header``: see :func:`read_ranked_list`.

    Each file is stat'ed once and read once, in query order,
    :data:`CHUNK_BYTES` at a time; from the first chunk of at least
    :data:`BATCH_MIN_BYTES` on, by one pyarrow call per chunk
    (:func:`.lists_batch.parse_batch`), the files it declines by the line
    reader; errors are raised in query order.
    """
    known = dict.fromkeys(query_ids)
    known.update(dict.fromkeys(ignorable))
    files = query_files(source.path, known, drops=drops, spell=spell)
    missing_lists(source, query_ids, files, drops=drops, missing_ok=missing_ok)
    todo = [(q, files[q]) for q in query_ids if q in files]
    lists = dict.fromkeys(query_ids, np.zeros(0, dtype=np.int64))
    dists: dict[str, np.ndarray | None] = {}
    batch = False
    for chunk in _chunks(todo):
        fast: list[Parsed | None] = [None] * len(chunk)
        batch = batch or sum(len(data) for _, _, data in chunk if isinstance(data, bytes)) >= BATCH_MIN_BYTES  # (a run's last chunk too)
        batch = batch and spell is None  # spelled ids: the line reader, which finds a target spelled two ways twice
        if batch:
            fast = parse_batch([(q, data if isinstance(data, bytes) else b"") for q, _, data in chunk], target_index, unjudged, header=header)
        for (q, path, data), got in zip(chunk, fast):
            if isinstance(data, InputError):
                raise data
            if got is None:
                got = parse_list(path, decode_text(path, data), q, target_index, drops=drops, unjudged=unjudged, header=header, spell=spell)
            lists[q], dists[q] = got[0], got[1] if ties else None
            if drops is None and lists[q].size == 0:  # strict: only a file without a target line gives no target
                raise _empty_lists_error(source, todo, q, header=header, spell=spell)
    return list_run(source.name, lists, dists, [files.get(q, "") for q in query_ids], ties=ties)


def missing_lists(source: RunSource, query_ids: list[str], have: Mapping[str, object], *, drops: Counter[str] | None, missing_ok: bool) -> None:
    """The rule for queries without a ranked list in ``have``: counted with ``drops``
    (``--lenient``), else an error naming the first unless ``missing_ok``."""
    missing = [q for q in query_ids if q not in have]
    if missing and drops is not None:
        drops["queries without a ranked list (scored 0)"] += len(missing)
    elif missing and not missing_ok:
        raise InputError(
            source.path,
            None,
            f"expected a ranked list for every query; run {shown(source.name)} has none for {len(missing)} of {len(query_ids)} queries",
            f"first missing: {shown(missing[0])}",
        )


def list_run(name: str, lists: dict[str, np.ndarray], dists: Mapping[str, np.ndarray | None], files: list[str], *, ties: bool) -> RankedRun:
    """The run of ``lists`` (query -> target indices); with ``ties``, its tie groups:
    runs of equal distances (``dists``: query -> distances, or None: no ties)."""
    run = RankedRun.from_lists(name, lists, files)
    if ties:
        d = [np.full(v.size, np.nan) if dists.get(q) is None else dists[q] for q, v in lists.items()]
        flat = np.concatenate([np.zeros(0), *d])
        run.tie_start = tie_starts(np.r_[False, flat[1:] == flat[:-1]], run.offsets)  # NaN equals nothing
    return run


#: Bytes of query files read before they are parsed (one chunk); a chunk in
#: flight holds a few times this (SHREC 2014-sized run of 141 MB: peak RSS
#: 422 MB with 32 MiB chunks, 284 MB with 8, 252 MB with 4 and 10% more CPU).
CHUNK_BYTES = 8 << 20

#: Bytes of a chunk from which it is parsed by pyarrow; below it the line
#: reader is faster than importing pyarrow (0.05-0.1 s).
BATCH_MIN_BYTES = 256 << 10


def _chunks(files: list[tuple[str, str]]) -> Iterator[list[tuple[str, str, bytes | InputError]]]:
    """``(query, path, bytes)`` of the files in order, :data:`CHUNK_BYTES` at a
    time; a file that cannot be read gives its error in place of its bytes
    (raised in query order by the caller)."""
    chunk: list[tuple[str, str, bytes | InputError]] = []
    size = 0
    for q, path in files:
        try:
            data: bytes | InputError = read_bytes(path, checked=True)  # query_files stat'ed it
        except InputError as exc:
            data = exc
        chunk.append((q, path, data))
        size += len(data) if isinstance(data, bytes) else 0
        if size >= CHUNK_BYTES:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


def _empty_lists_error(source: RunSource, files: list[tuple[str, str]], first: str, *, header: bool = True, spell: Spell | None = None) -> InputError:
    """The error for a run whose query file ``first`` is empty, with the number
    of its query files that are (the files before ``first`` were not)."""
    at = [q for q, _ in files].index(first)
    n_empty = sum(_is_empty_list(path, q, header=header, spell=spell) for q, path in files[at:])
    return InputError(
        files[at][1],
        None,
        "expected a ranked list",
        f"an empty file ({n_empty} of {len(files)} query files of run {shown(source.name)} are empty; "
        "--lenient scores them as empty lists)",
    )


def _is_empty_list(path: str, query_id: str, *, header: bool = True, spell: Spell | None = None) -> bool:
    """Whether a query file has no target line by :func:`read_ranked_list`'s
    ``header`` rule (a file that cannot be read is not counted)."""
    try:
        return not list_rows(read_text(path), query_id if header else None, spell)
    except InputError:
        return False
