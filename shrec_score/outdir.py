"""Output folders, each replaced as one unit, several committed together (the steps: docs/architecture.md, "The
output folder"; the guarantee and the two windows it leaves open: docs/outputs.md).  Every operating-system error
is an :class:`InputError` naming the user's path and what to do."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
import stat
from collections.abc import Iterator, Mapping, Sequence
from contextlib import suppress
from pathlib import Path

from .errors import InputError, visible

#: The list of files a scoring wrote, kept in the output folder.
MANIFEST = ".shrec-score-manifest.json"
_TAG = ".shrec-score-"
_ANOTHER = "choose another folder"
_ADVICE = {
    errno.ENOSPC: f"the disk is full: free some space or {_ANOTHER}",
    errno.EDQUOT: f"the disk quota is exceeded: free some space or {_ANOTHER}",
    errno.EFBIG: f"the file size limit was reached (ulimit -f): raise it or {_ANOTHER}",
    errno.EACCES: f"permission denied: check the folder's permissions or {_ANOTHER}",
    errno.EPERM: f"operation not permitted: check the folder's permissions or {_ANOTHER}",
    errno.EROFS: f"the file system is read-only: {_ANOTHER}",
    errno.ENOTDIR: "a part of the path is not a folder",
    errno.ELOOP: "too many levels of symbolic links",
    errno.ENAMETOOLONG: "the name is too long",
}

#: What a path was when staged: (device, inode, mode, size, modification time), None when absent.
Identity = tuple[int, int, int, int, int] | None


def _aside(path: str, suffix: str) -> str:
    """A new name beside the folder ``path`` for its staging (``.tmp``) or a swap's previous folder (``.old``)."""
    parent, name = os.path.split(path)
    return os.path.join(parent, f".{name}{_TAG}{os.urandom(6).hex()}{suffix}")  # not secrets: 7 ms of imports


def environment_error(path: str | os.PathLike[str], exc: OSError, doing: str | None = "could not write") -> InputError:
    """An :class:`InputError` for an operating-system error on the user's ``path``: what failed, what to do."""
    advice = _ADVICE.get(exc.errno or 0, exc.strerror or str(exc))
    return InputError(os.fsdecode(path), None, f"{doing}: {advice}" if doing else advice)


def publish(path: str | os.PathLike[str], files: Mapping[str, str | bytes]) -> list[str]:
    """Replace the folder ``path`` with ``files`` (relative path -> text or bytes) as one unit; returns the paths written."""
    with OutputFolder(path) as out:
        for name, data in files.items():
            out.add(name, data)
        return out.commit()


def commit_together(folders: Sequence[OutputFolder]) -> list[str]:
    """Stage, then swap, then finish each entered :class:`OutputFolder` (a failed swap puts the swapped ones back); returns the paths written."""
    for folder in folders:
        folder.stage()
    swapped: list[OutputFolder] = []
    try:
        for folder in folders:
            folder.swap()
            swapped.append(folder)
        for folder in folders:
            fsync_dir(folder.parent)  # the swaps survive a power loss (or are undone)
    except BaseException as exc:
        for back in reversed(swapped):
            back.unswap()
        if isinstance(exc, OSError):
            raise environment_error(folder.shown, exc) from None
        raise
    return [path for folder in folders for path in folder.finish()]


class OutputFolder:
    """One output folder as a transaction: ``with OutputFolder(dir) as out: out.add(name, data); out.commit()``;
    entering takes the lock, leaving without :meth:`commit` leaves the folder as it was."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.shown = os.fspath(path)  # as the user wrote it, for messages
        self.path = os.path.realpath(self.shown)  # a symlink to a folder: replace the folder it names
        self.parent, self.name = os.path.split(self.path)
        self.files: dict[str, bytes] = {}
        self._fds: list[int] = []
        self._created = False  # made empty by this call (and not committed): removed on leaving
        self._staging: str | None = None
        self._previous: set[str] = set()  # the files the previous scoring wrote (its manifest)
        self._carried: dict[str, tuple[Identity, Identity]] = {}  # user's path -> (identity in DIR, in the staged folder)

    def __enter__(self) -> OutputFolder:
        if not self.name:
            raise InputError(self.shown, None, "expected a folder that can be replaced as a whole, not the file system's root")
        cwd = os.path.realpath(os.getcwd())
        if cwd == self.path or cwd.startswith(self.path + os.sep):
            raise InputError(self.shown, None, "expected an output folder that does not hold the current directory (it is replaced as a whole)")
        self._recover()
        self._lock()
        return self

    def _recover(self) -> None:
        """Put the previous folder back if a two-rename swap was cut between its renames."""
        for old in [] if os.path.lexists(self.path) else self._leftovers(".old")[:1]:
            try:
                fd = os.open(old, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
            except OSError:  # not a folder a swap left (a link, a file): not ours to put back; staging removes it
                continue
            try:
                with suppress(BlockingIOError):  # held: its scoring is between the renames right now
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    os.rename(old, self.path)
            finally:
                os.close(fd)

    def _lock(self) -> None:
        for _ in range(10):  # the folder may be swapped by its holder between open and lock
            try:
                os.makedirs(self.parent, exist_ok=True)
                with suppress(FileExistsError):
                    os.mkdir(self.path)
                    self._created = True
                if not os.path.isdir(self.path):
                    raise InputError(self.shown, None, "expected a folder for the output, got a file")
                fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY)
            except OSError as exc:
                if isinstance(exc, (FileExistsError, NotADirectoryError)) and (part := _not_a_folder(self.shown)):  # makedirs: EEXIST, a file on the way
                    raise InputError(self.shown, None, f"could not create the output folder: {_ADVICE[errno.ENOTDIR]} ({part})") from None
                raise environment_error(self.shown, exc, "could not create the output folder") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _holder(fd)
                os.close(fd)
                raise InputError(
                    self.shown, None, f"expected a folder no other scoring is writing; {holder} is writing it (wait for it to end, or {_ANOTHER})"
                ) from None
            with suppress(FileNotFoundError):
                if os.stat(self.path).st_ino == os.fstat(fd).st_ino:
                    self._fds.append(fd)
                    return
            os.close(fd)
        raise InputError(self.shown, None, "expected a folder that stays in place; it kept being replaced")

    def __exit__(self, *exc: object) -> None:
        try:
            if self._staging is not None:
                shutil.rmtree(self._staging, ignore_errors=True)
            if self._created:
                with suppress(OSError):
                    os.rmdir(self.path)  # made by this call and still empty: leave no trace
        finally:
            for fd in self._fds:
                os.close(fd)  # closing the last descriptor releases the flock
            self._fds.clear()

    def add(self, name: str, data: str | bytes) -> None:
        """Add a file at ``name`` (relative, ``/``-separated) with ``data`` (text is written as UTF-8)."""
        parts = name.split("/")
        if name.startswith("/") or any(p in ("", ".", "..") for p in parts) or parts[0] == MANIFEST or parts[-1].startswith(_TAG):
            raise ValueError(f"expected a relative file name inside the folder, got {name!r}")
        self.files[name] = data.encode("utf-8") if isinstance(data, str) else data

    def commit(self) -> list[str]:
        """Stage the files beside the folder, then swap it in."""
        return commit_together([self])

    def stage(self) -> None:
        """Step 2: build the new folder beside ``DIR`` (the user's files carried, the new ones written, all synced)."""
        if not self._fds:
            raise RuntimeError("OutputFolder.commit() outside its 'with' block")
        for stale in self._leftovers((".tmp", ".old")):
            shutil.rmtree(stale, ignore_errors=True)  # a folder; a link or a file (rmtree refuses them) is unlinked
            with suppress(OSError):
                os.unlink(stale)
        try:
            self._previous = {str(n) for n in json.loads(Path(self.path, MANIFEST).read_bytes()).get("files", [])}
        except (OSError, ValueError, AttributeError):
            self._previous = set()  # no manifest: every file there is the user's
        self._staging = staging = _aside(self.path, ".tmp")
        where = self.shown
        try:
            os.mkdir(staging)
            staging_fd = os.open(staging, os.O_RDONLY | os.O_DIRECTORY)
            self._fds.append(staging_fd)  # lock the new folder too: it is DIR once swapped
            fcntl.flock(staging_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            _carry(self.path, staging, self._previous, self._carried)
            manifest = {"written_by": "shrec-score", "files": sorted(self.files)}
            for name, data in [*self.files.items(), (MANIFEST, (json.dumps(manifest, indent=1) + "\n").encode())]:
                where = os.path.join(self.shown, *name.split("/"))
                _write_synced(os.path.join(staging, *name.split("/")), data)
            where = self.shown
            fsync_tree(staging)
            os.chmod(staging, stat.S_IMODE(os.stat(self.path).st_mode))  # the folder's mode (made here: the umask's)
        except OSError as exc:
            raise environment_error(where, exc) from None

    def swap(self) -> None:
        """Step 3: exchange the staged folder and ``DIR`` (its own inverse; without ``RENAME_EXCHANGE``, through ``.old``)."""
        staging = str(self._staging)
        if _renameat2(staging, self.path, 2):  # RENAME_EXCHANGE
            return
        old = _aside(self.path, ".old")
        os.rename(self.path, old)
        os.rename(staging, self.path)
        os.rename(old, staging)

    def unswap(self) -> None:
        """Undo :meth:`swap`: the previous folder back, with what the user put into the new one meanwhile."""
        self.swap()
        _rescue(str(self._staging), self.path, self._previous | set(self.files), self._carried, side=1)

    def finish(self) -> list[str]:
        """Step 4: move into the new ``DIR`` what the user changed in the previous one since staging, then remove it."""
        self._created = False  # committed: the folder stays
        old = str(self._staging)  # the previous folder now sits under the staging name
        if _rescue(old, self.path, self._previous | set(self.files), self._carried, side=0):
            with suppress(OSError):
                fsync_tree(self.path)  # the moved files are in place before the previous folder goes
        shutil.rmtree(old, ignore_errors=True)
        self._staging = None
        return [os.path.join(self.shown, *name.split("/")) for name in self.files]

    def _leftovers(self, suffix: str | tuple[str, ...]) -> list[str]:
        prefix = f".{self.name}{_TAG}"
        try:
            names = sorted(os.listdir(self.parent or "."))
        except OSError:
            return []
        return [os.path.join(self.parent, n) for n in names if n.startswith(prefix) and n.endswith(suffix)]


def _not_a_folder(path: str) -> str | None:
    """The deepest existing part of ``path`` if it is no folder (``runs/afile is a file``), else None."""
    part = os.path.dirname(os.path.normpath(path))
    while part and not os.path.lexists(part):
        part = os.path.dirname(part)
    if not part or os.path.isdir(part):
        return None
    return f"{part} is {'a file' if os.path.isfile(part) else 'not a folder'}"


def _write_synced(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # 0666 less the umask, as open() creates
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def _identity(path: str) -> Identity:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns)


def _holds(paths: set[str], folder: str) -> bool:
    return any(n.startswith(folder + "/") for n in paths)


def _entries(src: str, rel: str, skip: set[str], unreadable: type[OSError]) -> Iterator[tuple[os.DirEntry[str], str]]:
    """The entries of ``src`` by name, each with its path under the output folder, but the manifest and ``skip``."""
    try:
        entries = sorted(os.scandir(src), key=lambda e: e.name)
    except unreadable:
        return
    for entry in entries:
        name = f"{rel}{entry.name}"
        if name != MANIFEST and name not in skip:
            yield entry, name


def _carry(src: str, dst: str, ours: set[str], carried: dict[str, tuple[Identity, Identity]], rel: str = "") -> None:
    """Hard-link (or copy) into ``dst`` what ``src`` holds of the user's, noting each one's two identities."""
    for entry, name in _entries(src, rel, ours, FileNotFoundError):
        target = os.path.join(dst, entry.name)
        before = _identity(entry.path)
        if entry.is_dir(follow_symlinks=False):
            os.mkdir(target)
            _carry(entry.path, target, ours, carried, name + "/")
            if _holds(ours, name) and not os.listdir(target):
                os.rmdir(target)  # a folder only the previous scoring filled
                continue
            os.chmod(target, stat.S_IMODE(entry.stat(follow_symlinks=False).st_mode))  # after its entries: a read-only folder too
        elif entry.is_symlink():
            os.symlink(os.readlink(entry.path), target)
        else:
            try:
                os.link(entry.path, target, follow_symlinks=False)
                before = _identity(target)  # the very inode linked, whatever happened since the lstat
            except OSError:  # no hard links here (another file system mounted inside, FAT...): copy
                shutil.copy2(entry.path, target, follow_symlinks=False)
        carried[name] = (before, _identity(target))


def _rescue(src: str, dst: str, scoring: set[str], carried: dict[str, tuple[Identity, Identity]], side: int, rel: str = "") -> bool:
    """Move into ``dst`` what the user added to ``src`` or replaced there since staging, at any depth; True if any.
    Left alone: ``scoring``'s paths, an entry as staged (``carried[path][side]``; side 0: ``src`` is the previous
    DIR, 1: the staged folder after an undone swap), and one whose counterpart in ``dst`` changed since staging."""
    moved = False
    for entry, name in _entries(src, rel, scoring, OSError):
        target = os.path.join(dst, entry.name)
        was = carried.get(name)
        try:
            if entry.is_dir(follow_symlinks=False):
                if os.path.isdir(target) and not os.path.islink(target):
                    moved |= _rescue(entry.path, target, scoring, carried, side, name + "/")
                elif was is None and not os.path.lexists(target) and not _holds(scoring, name):
                    moved |= _move(entry.path, target, replace=False)  # a folder of the user's own
                elif was is None and not os.path.lexists(target):  # holds a scoring's files too: bring only the user's
                    os.mkdir(target, stat.S_IMODE(entry.stat(follow_symlinks=False).st_mode))
                    if not _rescue(entry.path, target, scoring, carried, side, name + "/"):
                        os.rmdir(target)
                    moved |= os.path.exists(target)
                continue
            if was is not None and _identity(entry.path) == was[side]:
                continue  # as staged
            now = _identity(target)
            if now is None or (was is not None and now == was[1 - side]):
                moved |= _move(entry.path, target, replace=now is not None)
        except OSError:
            continue  # stays behind (a mount point inside, a read-only folder) and goes with ``src``
    return moved


def _move(src: str, dst: str, *, replace: bool) -> bool:
    """Rename ``src`` to ``dst``; without ``replace``, only if ``dst`` is still absent."""
    if not replace and _renameat2(src, dst, 1):  # RENAME_NOREPLACE
        return True
    if not replace and os.path.lexists(dst):
        return False
    os.rename(src, dst)
    return True


def fsync_tree(top: str, *, files: bool = False) -> None:
    """fsync every folder under ``top`` (``top`` included), bottom up; with ``files``, every file too."""
    for folder, _, names in os.walk(top, topdown=False):
        for name in names if files else ():
            with open(os.path.join(folder, name), "rb") as f:
                os.fsync(f.fileno())
        fsync_dir(folder)


def fsync_dir(path: str) -> None:
    """fsync the folder ``path`` (its entries' names survive a power loss)."""
    fd = os.open(path or ".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _renameat2(a: str, b: str, flags: int) -> bool:
    """Linux ``renameat2(a, b, flags)``; False where not supported, or (``RENAME_NOREPLACE``) when ``b`` exists."""
    import ctypes

    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    if renameat2(-100, os.fsencode(a), -100, os.fsencode(b), flags) == 0:  # -100: AT_FDCWD
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EEXIST):
        return False
    raise OSError(err, os.strerror(err), b)


def _holder(fd: int) -> str:
    """Who holds the flock on ``fd``: 'process 1234 (shrec-score)' from /proc/locks, if it tells."""
    inode = str(os.fstat(fd).st_ino)
    try:
        with open("/proc/locks") as fh:
            pid = next(f[4] for f in map(str.split, fh) if len(f) > 5 and f[1] == "FLOCK" and f[5].rsplit(":", 1)[-1] == inode)
    except (OSError, StopIteration):
        return "another process"
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        prog = " ".join(os.path.basename(w.decode(errors="replace")) for w in words[:2] if w)
    except OSError:
        prog = ""
    return f"process {pid}" + (f" ({visible(prog)})" if prog else "")
