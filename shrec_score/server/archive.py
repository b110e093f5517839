"""An upload unpacked member by member (what is refused: docs/server.md#security), checked before it is stored."""

from __future__ import annotations

import contextlib
import functools
import gzip
import os
import shutil
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Generator, Mapping
from typing import IO, Any, NamedTuple

from ..errors import InputError
from ..errors import shown as quoted
from ..io.submissions import is_clutter
from .store import Failed

PIECE = 1 << 20
SPECIAL = "a device or another special file"
#: A member's path: at most this many folders deep, each part at most NAME_MAX bytes (the file system's limit).
MAX_DEPTH = 32
NAME_MAX = 255


class Unpacked(NamedTuple):
    name: str  # the run's entry under the staging folder
    suffix: str  # what the stored name keeps of the uploaded one (".txt.gz"; "" for a folder)
    shown: str  # the run's path inside the upload, as its errors name it ("" for the upload itself)


def suffix_of(filename: str) -> str:
    """``bm25.run.gz`` -> ``.run.gz``: the extensions a run file's format is told by (at most 32 characters)."""
    base = os.path.basename(filename).lstrip(".")
    suffix = base[base.index(".") :] if "." in base else ""
    while len(suffix) > 32:  # a name all extensions (a.bbb... of 300 characters) keeps its last short ones
        suffix = suffix[suffix.index(".", 1) :] if "." in suffix[1:] else ""
    return suffix


def unpack(upload: str, filename: str, dest: str, limits: Mapping[str, float]) -> Unpacked:
    """Unpack ``upload`` (received as ``filename``) into the new folder ``dest`` under the contest's ``limits``."""
    os.makedirs(dest)
    low = filename.lower()
    run, shown, suffix = upload, os.path.basename(filename), suffix_of(filename)
    if low.endswith((".zip", ".tar.gz", ".tgz")):
        root = os.path.join(dest, "unpacked")
        os.makedirs(root)
        zipped = low.endswith(".zip")
        try:
            _extract(upload, root, zipped, limits)
        except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError, zlib.error) as exc:
            if isinstance(exc, OSError) and exc.errno is not None:
                raise
            raise Failed(422, f"{filename}: expected a {'.zip' if zipped else '.tar.gz'} archive, got a damaged one ({exc})") from None
        run, shown = _run_root(root)
        suffix = suffix_of(run) if os.path.isfile(run) else ""
    os.rename(run, os.path.join(dest, "run" + suffix))  # a folder, or a file keeping its extensions
    shutil.rmtree(os.path.join(dest, "unpacked"), ignore_errors=True)  # what is left of an archive beside the run
    return Unpacked("run" + suffix, suffix, shown)


def _extract(upload: str, root: str, zipped: bool, limits: Mapping[str, float]) -> None:
    """Write each member under ``root`` or refuse it (docs/server.md#security: the limits, bounded as they grow)."""
    max_members, ratio = int(limits["max_members"]), limits["max_ratio"]
    max_unpacked = int(limits["max_unpacked_mb"] * (1 << 20))  # (a fraction of a MB too)
    max_bytes = min(max_unpacked, int(ratio * max(os.path.getsize(upload), 1)))
    written = 0

    def count(n: int) -> None:
        if n > max_bytes and max_bytes < max_unpacked:
            raise Failed(422, f"expected the archive to unpack to at most {ratio:g} times its size, got more (a compression bomb?)")
        if n > max_bytes:
            raise Failed(422, f"expected the archive to unpack to at most {limits['max_unpacked_mb']:g} MB, got more")

    if not zipped:  # a first pass refuses a truncated gzip stream (tarfile's stream mode stops quietly) and a bomb
        slack, streamed = (max_members + 2) * 1024 + PIECE, 0  # the tar stream's headers and end beside its members
        with gzip.open(upload, "rb") as stream:
            while piece := stream.read(PIECE):
                streamed += len(piece)
                count(streamed - slack)
    with contextlib.closing(_members(upload, zipped)) as listed:
        for i, (name, got, is_dir, size, opener) in enumerate(listed, start=1):
            if i > max_members:
                raise Failed(422, f"expected at most {max_members} members in the archive, got more")
            path = _safe_name(name)
            if got is not None:
                raise Failed(422, f"archive member {name!r}: expected a file or a folder, got {got}")
            if is_dir or not path:
                continue
            count(size)  # refused on what it claims, before a byte is read
            with opener() as src, _create(root, path, name) as out:
                while piece := src.read(PIECE):
                    written += len(piece)
                    count(written)
                    out.write(piece)


def _safe_name(name: str) -> str:
    """A member's path inside the run, or :class:`Failed` (422) for an absolute path or a ``..``."""
    if "\x00" in name or name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        raise Failed(422, f"archive member {name!r}: expected a relative path, got an absolute one")
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
    if ".." in parts:
        raise Failed(422, f"archive member {name!r}: expected a path inside the archive, got one with '..'")
    if len(parts) > MAX_DEPTH:
        raise Failed(422, f"archive member {_cut(name)}: expected a path at most {MAX_DEPTH} folders deep, got {len(parts)} parts")
    long = next((p for p in parts if len(p.encode("utf-8", "surrogateescape")) > NAME_MAX), None)
    if long is not None:
        raise Failed(422, f"archive member {_cut(name)}: expected names of at most {NAME_MAX} bytes, got one of {len(long.encode('utf-8', 'surrogateescape'))}")
    return "/".join(parts)


def _cut(name: str) -> str:
    """A member's name as a message shows it (its first 60 characters)."""
    return repr(name) if len(name) <= 60 else repr(name[:60]) + f"... ({len(name)} characters)"


def _create(root: str, path: str, name: str) -> IO[bytes]:
    """The new file ``root/path``, its folders made; refused: a member named twice, a file and a folder of one name."""
    full = os.path.join(root, path)
    try:
        os.makedirs(os.path.dirname(full), exist_ok=True)
        return open(full, "xb")  # "x": never an overwrite
    except (FileExistsError, NotADirectoryError):
        parts = path.split("/")
        folders = ("/".join(parts[:i]) for i in range(1, len(parts)))
        clash = next((p for p in folders if os.path.isfile(os.path.join(root, p))), path)
        if clash == path and os.path.isfile(full):
            raise Failed(422, f"archive member {_cut(name)}: expected each member once, got {path!r} twice (refused, not overwritten)") from None
        raise Failed(422, f"archive member {_cut(name)}: expected a file and a folder never to share a name, got {clash!r} as both") from None


def _members(path: str, zipped: bool) -> Generator[tuple[str, str | None, bool, int, Callable[[], Any]], None, None]:
    """An archive's members: name, what it is if no file or folder (a link), is it a folder, size, opener (of a file)."""
    if not zipped:
        with tarfile.open(path, mode="r|gz") as tar:  # a stream: one pass, no seeking
            for m in tar:
                link = "a symbolic link" if m.issym() else "a hard link" if m.islnk() else SPECIAL
                got = None if m.isfile() or m.isdir() else link
                yield m.name, got, m.isdir(), m.size, functools.partial(tar.extractfile, m)
        return
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            kind = stat.S_IFMT(info.external_attr >> 16)  # 0: no Unix type recorded (a plain file)
            got = None if kind in (0, stat.S_IFREG, stat.S_IFDIR) else "a symbolic link" if stat.S_ISLNK(kind) else SPECIAL
            yield info.filename, got, info.is_dir(), info.file_size, functools.partial(z.open, info)


def _entries(folder: str) -> list[str]:
    return sorted(e for e in os.listdir(folder) if not is_clutter(e))


def _run_root(root: str) -> tuple[str, str]:
    """The run and its path in the upload: the one top folder, else the top; a folder of one file: that file."""
    top = _entries(root)
    if not top:
        clutter = sorted(os.listdir(root))  # an empty archive, or only what a folder of runs passes over
        got = f"only entries passed over as clutter ({', '.join(map(quoted, clutter[:3]))})" if clutter else "no file"
        raise Failed(422, f"expected one run folder in the archive, got {got}")
    run, shown = (os.path.join(root, top[0]), top[0]) if len(top) == 1 else (root, "")
    if os.path.isdir(run):
        files = _entries(run)
        if len(files) == 1 and os.path.isfile(os.path.join(run, files[0])):
            run, shown = os.path.join(run, files[0]), os.path.join(shown, files[0])
    return run, shown


class RunChecker:
    """``shrec-score check --config PRESET`` of one run, the preset's options and relevance read once."""

    def __init__(self, preset: str) -> None:
        from ..api import Scoring
        from ..config import load_config, preset_options

        cfg = load_config(preset)
        self.options = preset_options(cfg)
        scoring = Scoring.start(cfg["relevance"], self.options)
        #: the column the leaderboard ranks by: the CLI's (any spelling of ``sort``, else its default)
        self.relevance, self.sort = scoring.relevance, scoring.sort

    def errors(self, staging: str, unpacked: Unpacked) -> list[dict[str, Any]]:
        """The check's errors of the run at ``staging/unpacked.name`` (as in ``check``), files named inside the upload."""
        from ..check import check_runs, passed_over
        from ..loading import find_runs

        path = os.path.join(staging, unpacked.name)
        o, rel = self.options, self.relevance
        try:
            found = find_runs([path], rel, o).sources
        except InputError as exc:
            return [_error(exc.path, exc.line, exc.expected if exc.got is None else f"{exc.expected}, got {exc.got}", path, unpacked.shown)]
        if len(found) != 1:
            return [_error(path, None, f"expected one run, got {len(found)}: a ranked-list folder (one file per query), a matrix or a TREC run", path, unpacked.shown)]
        problems, _ = passed_over(check_runs([path], rel, o), [path], rel, o)
        return [_error(p.path, p.line, p.message, path, unpacked.shown) for p in problems if p.level == "error"]


def _error(path: str | None, line: int | None, message: str, run: str, shown: str) -> dict[str, Any]:
    """An error with its file named as in the upload (``D2/1000.txt``), never by its server path."""
    inside = os.path.relpath(path, run) if path else "."
    name = shown if inside == "." else os.path.join(shown, inside) if shown else inside
    message = message.replace(run, shown or "upload")  # its path, then its name ("run 'run.run'": the run is named after its file)
    message = message.replace(f"run {quoted(os.path.basename(run))}", f"run {quoted(os.path.basename(shown) or 'upload')}")
    return {"file": name or "upload", "line": line, "message": message}
