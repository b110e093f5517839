"""Finding runs in the RUNS arguments and telling each one's format (``--run-format``; ``auto`` refuses to
guess): the rules are docs/inputs.md's "Runs"."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import InputError, shown
from ..model import RunSource
from .chunked import RowBlockMatrix, layout_of, open_row_blocks
from .compressed import open_input, strip_suffix
from .lists import query_of
from .matrix import is_binary
from .numbers import is_integer, parse_number
from .shrec2011 import is_shrec2011_header, shrec2011_name
from .submissions import Spell, clutter_note, is_clutter, no_query_error
from .text import entry_is_folder, folder_entries, head_of, listing, pieces, regular_file

#: Files in a RUNS folder that are never runs.
NOT_RUNS = (".cla", ".qrels", ".md", ".yaml", ".yml")


def detect_file_format(path: str, *, stated: bool = False) -> str | None:
    """``matrix``, ``trec`` or ``shrec2011`` from the file's content (one open), None when it cannot tell; not a
    regular file (``stated``: the caller's stat found one), or UTF-16 / UTF-32 text: an InputError."""
    path = path if stated else regular_file(path)
    if path.endswith(".npy"):  # (its reader checks the header)
        return "matrix"
    with open_input(path) as fh:
        binary = is_binary(head_of(path, fh))  # (first: it refuses UTF-16 / UTF-32 text)
        try:
            line = _first_line(path, fh).decode("utf-8")
        except (OSError, UnicodeDecodeError, InputError) as exc:
            if binary:
                return "matrix"  # no line of text: a matrix's bytes (one of zeros has no newline in its first MiB)
            if isinstance(exc, InputError):
                raise
            return None
    if binary and not _trec_line(line):
        return "matrix"  # (a TREC run with a NUL byte further on is a TREC run, refused by its reader)
    if is_shrec2011_header(line):  # names:method:variant:institute
        if _trec_line(line):  # a TREC run line whose tag holds three colons
            raise InputError(path, None, "cannot tell the run format: the first line reads as a TREC run line and as a SHREC 2011 "
                             "header (names:method:variant:institute); say --run-format trec or --run-format shrec2011")
        return "shrec2011"
    f = line.split()
    if len(f) > 2 and all(parse_number(x) is not None for x in f):
        return "matrix"  # numbers only (a TREC line has a tag and a Q0 field)
    return "trec" if _trec_line(line) else None  # (a tag of several words: trec_eval reads its first); blank: None


def _trec_line(line: str) -> bool:
    """Six fields or more, the rank an integer, the score a number."""
    f = line.split()
    return len(f) >= 6 and is_integer(f[3]) and parse_number(f[4]) is not None


def _first_line(path: str, fh: Any) -> bytes:
    """A file's first non-blank line (``fh``: it opened; a BOM dropped; b"" when none is), read 64 KiB at a time."""
    for piece, line in pieces(path, 64 << 10, fh=fh):  # decompressed (gzip, bzip2, xz, zstd), lines checked
        piece = piece.removeprefix(b"\xef\xbb\xbf") if line == 1 else piece
        if (first := next((raw for raw in piece.split(b"\n") if raw.strip()), None)) is not None:
            return first
    return b""


def _run_file(path: str, fmt: str) -> RunSource:
    name = strip_suffix(os.path.basename(path))  # bm25.run.gz -> bm25.run
    kind = detect_file_format(path, stated=True) if fmt == "auto" else fmt
    if kind is None:
        raise InputError(path, None, "cannot tell the run format: expected a ranked-list folder, a dissimilarity matrix "
                         "(ASCII, .npy or PSB binary) or a TREC run file; say --run-format lists|matrix|trec")
    if kind == "lists":
        raise InputError(path, None, "expected a folder with one ranked-list file per query for --run-format lists", "a file")
    if kind == "shrec2011":
        name = shrec2011_name(path)  # the header's method and variant
    return RunSource(os.path.splitext(name)[0] if kind == "matrix" else name, path, kind)  # (m.npy, m.txt: m)


def discover_runs(
    paths: Iterable[str | os.PathLike[str]], fmt: str = "auto", *, query_ids: Mapping[str, object] = {}, spell: Spell | None = None,
    row_blocks: bool = False,
) -> tuple[list[RunSource | BlockSource], list[str]]:
    """The runs in the RUNS arguments (each stat'ed and listed once), notes on files passed over; ``spell``: file names'
    spelling of query ids; ``row_blocks``: a row-block matrix found as a :class:`BlockSource`, else refused."""
    runs: list[RunSource | BlockSource] = []
    notes: list[str] = []
    for raw in paths:
        path = os.fspath(raw)
        if not entry_is_folder(path, "a run folder, a folder of runs or a run file"):
            runs.append(_run_file(path, fmt))
            continue
        if (block := _block_source(path, row_blocks)) is not None:
            runs.append(block)
            continue
        names = listing(path)
        entries = folder_entries(path, names, is_clutter)  # (each entry stat'ed once)
        subdirs = [e for e, _, is_folder in entries if is_folder and not is_clutter(e)]
        blocks = {d: _block_source(os.path.join(path, d), row_blocks) for d in subdirs}  # None: not a row-block matrix
        lists = [d for d in subdirs if blocks[d] is None]
        files = [e for e, _, is_folder in entries if not is_folder]
        skipped = [e for e in files if is_clutter(e) or strip_suffix(e).lower().endswith(NOT_RUNS)]
        files = sorted(set(files).difference(skipped))  # (folder_entries' order)
        skipped_note = f"{path}: {len(skipped)} file(s) that are not runs were passed over ({', '.join(skipped[:3])}{', ...' if len(skipped) > 3 else ''})"
        passed_over = [skipped_note] if skipped else []
        if subdirs:
            if lists and fmt not in ("auto", "lists"):
                raise InputError(path, None, f"expected {fmt} run files for --run-format {fmt}", f"{len(lists)} sub-folder(s)")
            notes.extend(passed_over)
            listed = {d: _listing_or_none(os.path.join(path, d)) for d in lists}  # (the one listing of each run folder)
            runs.extend(blocks[d] or RunSource(d, os.path.join(path, d), "lists", listed[d]) for d in subdirs)
            notes.extend(n for d in lists if (n := clutter_note(os.path.join(path, d), listed[d])) is not None)
            runs.extend(_run_file(os.path.join(path, e), "auto" if fmt == "lists" else fmt) for e in files)
            continue
        named_after_queries = any(query_of(e, query_ids, spell) in query_ids for e in files)
        # a first file of no known format in a folder with no file named after a query: a run of mis-named lists
        first = detect_file_format(os.path.join(path, files[0]), stated=True) if fmt == "auto" and files and query_ids and not named_after_queries else fmt
        if first is None:
            raise no_query_error(path, files, query_ids)
        if fmt == "lists" or (fmt == "auto" and named_after_queries):
            runs.append(RunSource(os.path.basename(os.path.normpath(path)), path, "lists", names))
            note = clutter_note(path, names)  # (its non-runs: readme.txt ... are clutter of the run)
            notes.extend([note] if note is not None else passed_over)
        else:
            if not files:
                raise InputError(path, None, "expected runs in the folder", "no files")
            notes.extend(passed_over)
            runs.extend(_run_file(os.path.join(path, e), fmt if k else first) for k, e in enumerate(files))
    seen: dict[str, str] = {}  # every table is keyed by run name: the second of two runs named alike is refused
    for r in runs:
        if r.name in seen and os.path.realpath(seen[r.name]) == os.path.realpath(r.path):  # an argument inside another
            raise InputError(r.path, None, "expected each run once; it is given twice (one RUNS argument holds another)")
        if r.name in seen:
            raise InputError(r.path, None, f"expected run names to be unique; run {shown(r.name)} is also at {seen[r.name]}")
        seen[r.name] = r.path
    return runs, notes


def _listing_or_none(folder: str) -> tuple[str, ...] | None:
    """A run folder's :func:`listing`, None when it cannot be listed (its reader names the problem)."""
    try:
        return listing(folder)
    except InputError:
        return None


def _block_source(folder: str, row_blocks: bool) -> BlockSource | None:
    """The row-block matrix in ``folder`` (named after it less ``.zarr``), or None; refused unless ``row_blocks``."""
    if (layout := layout_of(folder)) is None:
        return None
    if not row_blocks:
        raise InputError(folder, None, f"expected a run read whole, got a matrix stored by blocks of rows ({layout}); only "
                         "scoring reads those: `shrec-score RUNS`, or shrec_score.distributed.score from Python")
    name = os.path.basename(os.path.normpath(folder))
    return BlockSource(name[:-5] if name.endswith(".zarr") and len(name) > 5 else name, folder, open_row_blocks(folder, layout))


@dataclass
class BlockSource:
    name: str
    path: str
    matrix: RowBlockMatrix
