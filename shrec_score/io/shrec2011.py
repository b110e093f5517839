"""Reader of SHREC 2011's one-file runs (the 3D Face track's :data:`HEADER`, then :data:`LINE` lines; the rules:
docs/inputs.md, "SHREC 2011 runs"), each query's results read by the ranked-list rules of :func:`.lists.parse_rows`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping

from ..errors import InputError, shown
from ..model import RankedRun, RunSource
from .lists import list_run, missing_lists, parse_rows
from .numbers import is_integer
from .submissions import Spell
from .text import text_lines

#: What the first line must be.
HEADER = '"names:method:variant:institute"'
#: What every further line must be.
LINE = '"query:rank:distance:result"'


def is_shrec2011_header(line: str) -> bool:
    """Whether a first non-blank line reads as a SHREC 2011 header (four fields by colons, a method, no tab)."""
    parts = line.strip().split(":")
    return len(parts) == 4 and "\t" not in line and bool(parts[1].strip())


def _header(path: str, lines: Iterator[tuple[int, str]]) -> list[str]:
    """The header's four fields, from the first non-blank of ``lines``."""
    for n, line in lines:
        if line.strip():
            parts = [p.strip() for p in line.split(":")]
            if len(parts) != 4:
                raise InputError(path, n, f"expected a SHREC 2011 header {HEADER}", f"{len(parts)} fields")
            if not parts[1]:
                raise InputError(path, n, f"expected a SHREC 2011 header {HEADER} with a method name", "an empty method")
            return parts
    raise InputError(path, None, f"expected a SHREC 2011 run: a header {HEADER}, then {LINE} lines", "an empty file")


def shrec2011_name(path: str) -> str:
    """The run's name: the header's method and variant (``method-variant``)."""
    _, method, variant, _ = _header(path, text_lines(path, 64 << 10))  # (a header: not 16 MiB decompressed)
    return f"{method}-{variant}" if variant else method


def read_shrec2011_run(
    source: RunSource, query_ids: list[str], target_index: Mapping[str, int], *,
    ignorable: list[str] | tuple[str, ...] = (), drops: Counter[str] | None = None, unjudged: int | None = None,
    missing_ok: bool = False, ties: bool = False, spell: Spell | None = None,
) -> RankedRun:
    """A SHREC 2011 run file as a run of ranked lists; the keywords as :func:`~.lists.read_list_run`'s."""
    path = source.path
    lines = text_lines(path)  # the header, then the rest of the same pass
    _header(path, lines)
    known = set(query_ids) | set(ignorable)
    rows: dict[str, list[tuple[int, list[str]]]] = {}
    current, last_rank, last_text = None, 0, ""  # (a query's lines are together: its last line is the one before)
    for n, line in lines:
        if not line.strip():
            continue
        parts = [p.strip() for p in line.split(":")]
        if len(parts) != 4:
            raise InputError(path, n, f"expected {LINE}", f"{len(parts)} fields")
        query, rank_text, dist, result = parts
        if not query or not result:
            raise InputError(path, n, f"expected {LINE} with a query and a result id", "an empty id")
        if not is_integer(rank_text):
            raise InputError(path, n, "expected a whole number as rank", shown(rank_text))
        rank = int(rank_text)
        q = query if spell is None else spell(query)
        if q not in known:
            if drops is not None:
                drops["lines of unknown queries dropped"] += 1
                continue
            raise InputError(path, n, "expected a query id of the classification", f"unknown query {shown(query)}")
        if q != current and q in rows:
            raise InputError(path, n, f"expected the lines of a query together; query {shown(query)} started at line {rows[q][0][0]}")
        if q == current and rank <= last_rank:
            raise InputError(path, n, f"expected ranks that increase down the file; rank {rank_text} follows rank {last_text}")
        current, last_rank, last_text = q, rank, rank_text
        rows.setdefault(q, []).append((n, [result, dist]))
    missing_lists(source, query_ids, rows, drops=drops, missing_ok=missing_ok)
    got = {  # (in query order: so are the errors)
        q: parse_rows(path, rows[q], target_index, drops=drops, unjudged=unjudged, id_col=0) for q in query_ids if q in rows
    }
    return list_run(source.name, query_ids, got, ties=ties)

