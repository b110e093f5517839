"""Finding runs in the RUNS arguments and reading each in its format.

Formats: ``lists`` (a folder, one ranked-list file per query), ``matrix`` (a
dissimilarity matrix file: ASCII, ``.npy`` or PSB binary) and ``trec`` (a
TREC run file).  ``auto`` decides from the files and refuses to guess.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import IO

from ..errors import InputError
from .matrix import is_binary_file

FORMATS = ("auto", "lists", "matrix", "trec")
#: Files in a RUNS folder that are never runs.
NOT_RUNS = (".cla", ".qrels", ".md", ".yaml", ".yml")


@dataclass(frozen=True)
class RunSource:
    """A run to read: its name, its path and its format."""

    name: str
    path: str
    format: str


def detect_file_format(path: str) -> str | None:
    """``matrix`` or ``trec`` from the file's content; None when it cannot tell."""
    if path.endswith(".npy") or is_binary_file(path):
        return "matrix"
    try:
        with open(path, "rb") as fh:  # up to the first line that is not blank, not the whole file
            lines = [raw.decode("utf-8") for raw in _first_lines(fh)]
    except (OSError, UnicodeDecodeError):
        return None
    for line in lines:
        f = line.split()
        if not f:
            continue
        if len(f) > 2 and all(_is_float(x) for x in f):
            return "matrix"  # numbers only (a TREC line has a tag and a Q0 field)
        if len(f) == 6 and is_int(f[3]) and _is_float(f[4]):
            return "trec"
        return None
    return None


def _first_lines(fh: IO[bytes]) -> Iterator[bytes]:
    """The lines of a binary file up to its first one that is not blank (a BOM dropped)."""
    for n, raw in enumerate(fh):
        if n == 0 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        yield raw
        if raw.strip():
            return


def is_int(s: str) -> bool:
    return s.lstrip("+-").isdigit()


def _is_float(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _run_file(path: str, fmt: str) -> RunSource:
    name = os.path.basename(path)
    if fmt == "auto":
        detected = detect_file_format(path)
        if detected is None:
            raise InputError(
                path,
                None,
                "cannot tell the run format: expected a ranked-list folder, a dissimilarity matrix "
                "(ASCII, .npy or PSB binary) or a TREC run file; say --run-format lists|matrix|trec",
            )
        fmt = detected
    if fmt == "lists":
        raise InputError(path, None, "expected a folder with one ranked-list file per query for --run-format lists", "a file")
    if fmt == "matrix":
        name = os.path.splitext(name)[0]
    return RunSource(name, path, fmt)


def first_trec_file(paths: Iterable[str | os.PathLike[str]], fmt: str = "auto") -> str | None:
    """The file of the first run :func:`discover_runs` would find, when it is a
    TREC run (by ``fmt`` or by its first line); None otherwise.  Cheap: no
    relevance needed, nothing read but a first line."""
    for raw in paths:
        path = os.fspath(raw)
        if os.path.isdir(path):
            entries = sorted(e for e in os.listdir(path) if not e.startswith("."))
            if any(os.path.isdir(os.path.join(path, e)) for e in entries):
                return None  # sub-folders: ranked-list runs come first
            files = [e for e in entries if not (e.lower().endswith(NOT_RUNS) or e.lower().startswith("readme"))]
            if not files:
                return None
            path = os.path.join(path, files[0])
        elif not os.path.isfile(path):
            return None
        if fmt == "trec" or (fmt == "auto" and detect_file_format(path) == "trec"):
            return path
        return None
    return None


def discover_runs(
    paths: Iterable[str | os.PathLike[str]], fmt: str = "auto", *, query_ids: Mapping[str, object] = {}
) -> tuple[list[RunSource], list[str]]:
    """Find the runs in the RUNS arguments.

    * a file is one run (matrix or TREC);
    * a folder holding sub-folders: each sub-folder is a ranked-list run, and
      files beside them are runs of their own format;
    * a folder holding only files is one ranked-list run when its files are
      named after queries (or with ``--run-format lists``), else each file is
      a run (matrix or TREC), named after the file.

    Returns the runs and notes about files that were passed over.
    """
    runs: list[RunSource] = []
    notes: list[str] = []
    for raw in paths:
        path = os.fspath(raw)
        if os.path.isfile(path):
            runs.append(_run_file(path, fmt))
            continue
        if not os.path.isdir(path):
            raise InputError(path, None, "expected a run folder, a folder of runs or a run file", "no such file or folder")
        entries = sorted(e for e in os.listdir(path) if not e.startswith("."))
        subdirs = [e for e in entries if os.path.isdir(os.path.join(path, e))]
        files = [e for e in entries if e not in subdirs]
        skipped = [e for e in files if e.lower().endswith(NOT_RUNS) or e.lower().startswith("readme")]
        if skipped:
            notes.append(f"{path}: {len(skipped)} file(s) that are not runs were passed over ({', '.join(skipped[:3])}{', ...' if len(skipped) > 3 else ''})")
        files = [e for e in files if e not in skipped]
        if subdirs:
            if fmt not in ("auto", "lists"):
                raise InputError(path, None, f"expected {fmt} run files for --run-format {fmt}", f"{len(subdirs)} sub-folder(s)")
            runs.extend(RunSource(d, os.path.join(path, d), "lists") for d in subdirs)
            for e in files:
                runs.append(_run_file(os.path.join(path, e), "auto" if fmt == "lists" else fmt))
            continue
        named_after_queries = any(e in query_ids or e.rsplit(".", 1)[0] in query_ids for e in files)
        if fmt == "lists" or (fmt == "auto" and named_after_queries):
            runs.append(RunSource(os.path.basename(os.path.normpath(path)), path, "lists"))
        else:
            if not files:
                raise InputError(path, None, "expected runs in the folder", "no files")
            runs.extend(_run_file(os.path.join(path, e), fmt) for e in files)
    seen: dict[str, str] = {}
    for r in runs:
        if r.name in seen:
            raise InputError(r.path, None, f"expected run names to be unique; run {r.name!r} is also at {seen[r.name]}")
        seen[r.name] = r.path
    return runs, notes
