"""The output folder, replaced as one unit.

``--out DIR`` (and ``--plots DIR``) hold, at every instant and after any
interruption (a signal, ``kill -9``, a power loss after the call returned,
a full disk, a failing write), either the complete set of files of the
previous scoring or the complete set of this one, never a mix:

1. **Lock.**  ``DIR`` is created if missing and locked with ``flock``; the
   kernel releases the lock when the process dies.  A second scoring into
   the same folder fails at once (:class:`InputError`, exit 2) naming the
   folder and the process that holds it.
2. **Stage.**  A new folder is built beside ``DIR``
   (``.DIR.shrec-score-<token>.tmp`` in the same parent, so on the same file
   system): the files the user keeps in ``DIR`` (every entry the previous
   scoring did not write, found from its manifest) are hard-linked into it
   (copied where hard links are not possible), then the new files are
   written, each ``fsync``-ed, then the manifest
   (:data:`MANIFEST`: the files this scoring wrote), then every staged
   folder is ``fsync``-ed.
3. **Swap.**  The staged folder and ``DIR`` are exchanged in one atomic
   ``renameat2(RENAME_EXCHANGE)`` and the parent is ``fsync``-ed.  Where the
   kernel or file system cannot exchange, two renames are used (``DIR`` to
   ``.DIR.shrec-score-<token>.old``, the staged folder to ``DIR``); if
   interrupted between the two, the next scoring puts the previous folder
   back before it starts.
4. **Clean.**  The previous folder (now under the staging name) is removed;
   anything the user dropped into ``DIR`` while the new set was staged is
   moved across first.  Staging folders left by a killed scoring are
   removed by the next scoring of the same folder (they carry its name and
   it holds its lock).

So the set in ``DIR`` is exactly what this scoring wrote plus what the user
put there: the files of an earlier scoring that this one does not write
(``significance.csv`` from a run with ``--significance``, say) are gone.
Files and folders are created with mode 0666/0777 less the umask, as
``open()`` and ``mkdir`` would; a folder that existed keeps its mode.
``DIR`` becomes a new directory (a new inode): a shell whose current
directory is ``DIR`` sees the old one, so an ``--out`` that holds the
current directory is refused.  The parent of ``DIR`` must be writable.

Every operating-system error is an :class:`InputError` naming the user's
path (never a staging name) and what to do.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
from collections.abc import Mapping
from types import TracebackType

from .errors import InputError, visible

#: The list of files a scoring wrote, kept in the output folder.
MANIFEST = ".shrec-score-manifest.json"
_TAG = ".shrec-score-"

_ADVICE = {
    errno.ENOSPC: "the disk is full: free some space or choose another folder",
    errno.EDQUOT: "the disk quota is exceeded: free some space or choose another folder",
    errno.EFBIG: "the file size limit was reached (ulimit -f): raise it or choose another folder",
    errno.EACCES: "permission denied: check the folder's permissions or choose another folder",
    errno.EPERM: "operation not permitted: check the folder's permissions or choose another folder",
    errno.EROFS: "the file system is read-only: choose another folder",
    errno.ENOTDIR: "a part of the path is not a folder",
    errno.ELOOP: "too many levels of symbolic links",
    errno.ENAMETOOLONG: "the name is too long",
}



def _token() -> str:
    """12 random hex digits for a staging name (os.urandom: the secrets module
    imports hashlib and hmac, 7 ms of every --out scoring's start-up)."""
    return os.urandom(6).hex()

def environment_error(path: str | os.PathLike[str] | None, exc: OSError, doing: str | None = "could not write") -> InputError:
    """An :class:`InputError` for an operating-system error on ``path`` (the user's path):
    what failed and what to do, in one line."""
    advice = _ADVICE.get(exc.errno or 0, exc.strerror or str(exc))
    return InputError(None if path is None else os.fsdecode(path), None, f"{doing}: {advice}" if doing else advice)


def publish(path: str | os.PathLike[str], files: Mapping[str, str | bytes]) -> list[str]:
    """Replace the folder ``path`` with ``files`` (relative path -> text or bytes), as one unit.

    Returns the paths written, in the order given.  See the module docstring
    for the guarantee.
    """
    with OutputFolder(path) as out:
        for name, data in files.items():
            out.add(name, data)
        return out.commit()


class OutputFolder:
    """One output folder as a transaction: ``with OutputFolder(dir) as out:
    out.add(name, data); out.commit()``.

    Entering takes the lock (fails at once if another scoring holds it);
    leaving without :meth:`commit` leaves the folder as it was.  Several
    :meth:`add` calls may name files in sub-folders (``plots/pr.svg``).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.shown = os.fspath(path)  # as the user wrote it, for messages
        self.path = os.path.realpath(self.shown)  # a symlink to a folder: replace the folder it names
        self.parent, self.name = os.path.split(self.path)
        self.files: dict[str, bytes] = {}
        self._fds: list[int] = []
        self._created = False
        self._staging: str | None = None
        self._committed = False

    # -- lock -----------------------------------------------------------------
    def __enter__(self) -> OutputFolder:
        if not self.name:
            raise InputError(self.shown, None, "expected a folder that can be replaced as a whole, not the file system's root")
        cwd = os.path.realpath(os.getcwd())
        if cwd == self.path or cwd.startswith(self.path + os.sep):
            raise InputError(self.shown, None, "expected an output folder that does not hold the current directory (it is replaced as a whole)")
        try:
            self._recover()
            self._lock()
        except BaseException:
            self._release()
            raise
        return self

    def _recover(self) -> None:
        """Put the previous folder back if a two-rename swap was cut between its renames."""
        import fcntl

        if os.path.lexists(self.path):
            return
        for old in self._leftovers(".old"):
            fd = os.open(old, os.O_RDONLY | os.O_DIRECTORY)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held: its scoring is between the renames right now
            except BlockingIOError:
                return
            finally:
                os.close(fd)
            os.rename(old, self.path)
            return

    def _lock(self) -> None:
        import fcntl

        for _ in range(10):  # the folder may be swapped by its holder between open and lock
            try:
                os.makedirs(self.parent, exist_ok=True)
                try:
                    os.mkdir(self.path)
                    self._created = True
                except FileExistsError:
                    pass
                if not os.path.isdir(self.path):
                    raise InputError(self.shown, None, "expected a folder for the output, got a file")
                fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY)
            except OSError as exc:
                raise environment_error(self.shown, exc, "could not create the output folder") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _holder(fd)
                os.close(fd)
                raise InputError(
                    self.shown, None, f"expected a folder no other scoring is writing; {holder} is writing it (wait for it to end, or choose another folder)"
                ) from None
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                self._fds.append(fd)
                return
            os.close(fd)
        raise InputError(self.shown, None, "expected a folder that stays in place; it kept being replaced")

    def _release(self) -> None:
        for fd in self._fds:
            os.close(fd)  # closing the last descriptor releases the flock
        self._fds.clear()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        try:
            if self._staging is not None and os.path.lexists(self._staging):
                shutil.rmtree(self._staging, ignore_errors=True)
            if self._created and not self._committed:
                try:
                    os.rmdir(self.path)  # made by this call and still empty: leave no trace
                except OSError:
                    pass
        finally:
            self._release()

    # -- content --------------------------------------------------------------
    def add(self, name: str, data: str | bytes) -> None:
        """Add a file at ``name`` (relative, ``/``-separated) with ``data`` (text is written as UTF-8)."""
        parts = name.split("/")
        if name.startswith("/") or any(p in ("", ".", "..") for p in parts) or parts[0] == MANIFEST or parts[-1].startswith(_TAG):
            raise ValueError(f"expected a relative file name inside the folder, got {name!r}")
        self.files[name] = data.encode("utf-8") if isinstance(data, str) else data

    # -- commit ---------------------------------------------------------------
    def commit(self) -> list[str]:
        """Stage the files beside the folder, then swap it in (see the module docstring)."""
        if not self._fds:
            raise RuntimeError("OutputFolder.commit() outside its 'with' block")
        for stale in self._leftovers(".tmp") + self._leftovers(".old"):
            shutil.rmtree(stale, ignore_errors=True)
        previous = self._previous_manifest()
        staging = os.path.join(self.parent, f".{self.name}{_TAG}{_token()}.tmp")
        self._staging = staging
        where = self.shown
        try:
            os.mkdir(staging)
            staging_fd = os.open(staging, os.O_RDONLY | os.O_DIRECTORY)
            self._fds.append(staging_fd)  # lock the new folder too: it is DIR once swapped
            import fcntl

            fcntl.flock(staging_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            _carry(self.path, staging, previous)
            for name, data in self.files.items():
                where = os.path.join(self.shown, *name.split("/"))
                _write_synced(os.path.join(staging, *name.split("/")), data)
            where = os.path.join(self.shown, MANIFEST)
            manifest = {"written_by": "shrec-score", "files": sorted(self.files)}
            _write_synced(os.path.join(staging, MANIFEST), (json.dumps(manifest, indent=1) + "\n").encode())
            where = self.shown
            _sync_tree(staging)
            if not self._created:
                os.chmod(staging, stat.S_IMODE(os.stat(self.path).st_mode))
            self._swap(staging)
        except OSError as exc:
            raise environment_error(where, exc) from None
        self._committed = True
        old = staging  # the previous folder now sits under the staging name
        _rescue_late_files(old, self.path, previous)
        shutil.rmtree(old, ignore_errors=True)
        self._staging = None
        return [os.path.join(self.shown, *name.split("/")) for name in self.files]

    def _swap(self, staging: str) -> None:
        """Put ``staging`` in place of the folder; the previous folder ends under ``staging``'s name."""
        exchanged = _exchange(staging, self.path)
        if not exchanged:
            old = os.path.join(self.parent, f".{self.name}{_TAG}{_token()}.old")
            os.rename(self.path, old)
            os.rename(staging, self.path)
            os.rename(old, staging)
        try:
            _fsync_dir(self.parent)
        except OSError:  # the swap may not survive a power loss: undo it and say so
            if exchanged:
                _exchange(staging, self.path)
            else:
                os.rename(self.path, old)
                os.rename(staging, self.path)
                os.rename(old, staging)
            raise

    def _previous_manifest(self) -> set[str]:
        try:
            with open(os.path.join(self.path, MANIFEST), "rb") as fh:
                listed = json.loads(fh.read()).get("files", [])
        except (OSError, ValueError, AttributeError):
            return set()  # no manifest: every file there is the user's
        return {str(n) for n in listed}

    def _leftovers(self, suffix: str) -> list[str]:
        prefix = f".{self.name}{_TAG}"
        try:
            names = os.listdir(self.parent or ".")
        except OSError:
            return []
        return [os.path.join(self.parent, n) for n in sorted(names) if n.startswith(prefix) and n.endswith(suffix)]


# -- the steps, each a plain function ----------------------------------------------


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


def _carry(src: str, dst: str, ours: set[str], rel: str = "") -> None:
    """Hard-link (or copy) into ``dst`` every entry of ``src`` that the previous scoring did not write."""
    try:
        entries = sorted(os.scandir(src), key=lambda e: e.name)
    except FileNotFoundError:
        return
    for entry in entries:
        name = f"{rel}{entry.name}"
        if name == MANIFEST or name in ours:
            continue
        target = os.path.join(dst, entry.name)
        if entry.is_dir(follow_symlinks=False):
            os.mkdir(target)
            os.chmod(target, stat.S_IMODE(entry.stat(follow_symlinks=False).st_mode))
            _carry(entry.path, target, ours, name + "/")
            if any(n.startswith(name + "/") for n in ours) and not os.listdir(target):
                os.rmdir(target)  # a folder only the previous scoring filled
        elif entry.is_symlink():
            os.symlink(os.readlink(entry.path), target)
        else:
            try:
                os.link(entry.path, target, follow_symlinks=False)
            except OSError:  # no hard links here (another file system mounted inside, FAT...): copy
                shutil.copy2(entry.path, target, follow_symlinks=False)


def _sync_tree(top: str) -> None:
    for folder, _, _ in os.walk(top, topdown=False):
        _fsync_dir(folder)


def _fsync_dir(path: str) -> None:
    fd = os.open(path or ".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _exchange(a: str, b: str) -> bool:
    """Swap two paths atomically (Linux ``renameat2(RENAME_EXCHANGE)``); False where not supported."""
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), b)


def _rescue_late_files(old: str, new: str, ours: set[str]) -> None:
    """Move into ``new`` what the user dropped into the folder while it was being staged."""
    try:
        names = os.listdir(old)
    except OSError:
        return
    for name in names:
        theirs = name != MANIFEST and name not in ours and not any(n.startswith(name + "/") for n in ours)
        if theirs and not os.path.lexists(os.path.join(new, name)):
            try:
                os.rename(os.path.join(old, name), os.path.join(new, name))
            except OSError:
                pass


def _holder(fd: int) -> str:
    """Who holds the flock on ``fd``: 'process 1234 (shrec-score)' from /proc/locks, if it tells."""
    inode = os.fstat(fd).st_ino
    try:
        with open("/proc/locks") as fh:
            for line in fh:
                fields = line.split()
                if len(fields) > 5 and fields[1] == "FLOCK" and fields[5].rsplit(":", 1)[-1] == str(inode):
                    pid = fields[4]
                    try:
                        with open(f"/proc/{pid}/cmdline", "rb") as cf:
                            words = cf.read().split(b"\0")
                        prog = " ".join(os.path.basename(w.decode(errors="replace")) for w in words[:2] if w)
                    except OSError:
                        prog = ""
                    return f"process {pid}" + (f" ({visible(prog)})" if prog else "")
    except OSError:
        pass
    return "another process"
