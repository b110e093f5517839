"""Compressed inputs (gzip, bzip2, xz; zstd with ``zstandard``), told by their magic bytes and read through a
decompressing stream: every rule of :mod:`~shrec_score.io.text` applies to the decompressed lines (docs/inputs.md)."""

from __future__ import annotations

import contextlib
import importlib
import io
import re
from collections.abc import Iterator
from importlib.util import find_spec
from typing import Any

from ..errors import InputError

#: (magic bytes, name) of the compressions read.  A bzip2 stream is ``BZh``, a block size 1-9, then the magic of its
#: first block (pi's digits) or, when empty, of its end: text that merely starts ``BZh`` is text.
MAGIC = (
    (re.compile(rb"\x1f\x8b"), "gzip"),
    (re.compile(rb"BZh[1-9](1AY&SY|\x17rE8P\x90)"), "bzip2"),
    (re.compile(rb"\xfd7zXZ\x00"), "xz"),
    (re.compile(rb"\x28\xb5\x2f\xfd"), "zstd"),
)
#: Bytes of a file's head that tell its compression.
MAGIC_BYTES = 10
#: The compression extension dropped from a run's (or a query file's) name, any case; never the whole name.
_SUFFIX = re.compile(r"(?<=.)\.(gz|gzip|bz2|xz|zst|zstd)\Z", re.ASCII | re.IGNORECASE | re.DOTALL)


def compression_of(head: bytes) -> str | None:
    """``gzip``, ``bzip2``, ``xz`` or ``zstd`` from a file's first bytes, else None.

    >>> compression_of(b"\\x1f\\x8b\\x08\\x00"), compression_of(b"q1 Q0 d1 1 0.5 r"), compression_of(b"BZh91AY&SY")
    ('gzip', None, 'bzip2')
    >>> compression_of(b"BZh12 0.5")  # text whose first id starts with BZh
    """
    return next((name for magic, name in MAGIC if magic.match(head)), None)


@contextlib.contextmanager
def readable(path: str, expected: str = "expected a readable file") -> Iterator[None]:
    """An OSError inside the block becomes an InputError naming ``path`` (the one message of every reader)."""
    try:
        yield
    except OSError as exc:
        raise InputError(path, None, expected, exc.strerror or str(exc)) from None


def strip_suffix(name: str) -> str:
    """``name`` without a compression extension (``bm25.run.gz`` -> ``bm25.run``).

    >>> strip_suffix("bm25.run.gz"), strip_suffix("q1.txt")
    ('bm25.run', 'q1.txt')
    """
    return _SUFFIX.sub("", name)


class Decompressed(io.IOBase):
    """The decompressed bytes of ``fh`` (``path`` opened) as a binary stream; a damaged stream is an InputError."""

    def __init__(self, path: str, kind: str, fh: Any) -> None:
        self.path, self.kind, self._raw = path, kind, fh
        if kind == "zstd" and find_spec("zstandard") is None:
            fh.close()
            raise InputError(path, None, "a zstd-compressed file needs the zstandard package; pip install 'shrec-score[zstd]'")
        self.seek(0)

    def fileno(self) -> int:
        return int(self._raw.fileno())

    def seek(self, offset: int, whence: int = 0) -> int:
        """Back to the first byte only (a head read to tell the format, then the whole file): a new decompressor."""
        if (offset, whence) != (0, 0):
            raise io.UnsupportedOperation("a decompressed stream seeks back to its start only")
        self._raw.seek(0)
        module = importlib.import_module({"gzip": "gzip", "bzip2": "bz2", "xz": "lzma", "zstd": "zstandard"}[self.kind])
        self._fh: Any = io.BufferedReader(_ZstdRaw(self._raw, module), 1 << 20) if self.kind == "zstd" else module.open(self._raw, "rb")
        return 0

    def read(self, size: int = -1) -> bytes:
        try:
            return self._fh.read(size)
        except Exception as exc:  # EOFError, OSError (a bad gzip header), lzma.LZMAError, zlib.error, zstandard.ZstdError
            cut = isinstance(exc, EOFError)
            reason = "a stream cut short (the file ends before the compressed data does)" if cut else str(exc) or type(exc).__name__
            raise InputError(self.path, None, f"expected a complete {self.kind} stream", reason) from None

    def close(self) -> None:
        with contextlib.suppress(Exception):  # a damaged stream reported by read already
            self._fh.close()
        self._raw.close()
        super().close()


class _ZstdRaw(io.RawIOBase):
    """zstd frames decompressed a block at a time; a file that ends inside a frame is an EOFError (zstandard's reader says nothing)."""

    def __init__(self, fh: Any, zstd: Any) -> None:
        self._raw, self._zstd = fh, zstd
        self._obj: Any = None  # the decompressor of a frame begun and not ended
        self._out = b""

    def readable(self) -> bool:
        return True

    def readinto(self, view: Any) -> int:
        while not self._out:
            block = self._raw.read(1 << 20)
            if not block:
                if self._obj is not None:
                    raise EOFError("the file ends inside a zstd frame")
                return 0
            while block:
                self._obj = self._obj or self._zstd.ZstdDecompressor().decompressobj()
                self._out += self._obj.decompress(block)
                if not self._obj.eof:
                    break
                block, self._obj = self._obj.unused_data, None  # the next frame, if any
        n = min(len(view), len(self._out))
        view[:n] = self._out[:n]
        self._out = self._out[n:]
        return n


def open_input(path: str) -> Any:
    """Regular file ``path`` opened once as a binary stream, decompressed if its magic bytes say so (caller closes)."""
    with readable(path):
        fh = open(path, "rb")  # noqa: SIM115 - closed by the caller, or with the Decompressed stream
        kind = compression_of(fh.read(MAGIC_BYTES))
        fh.seek(0)
    return fh if kind is None else Decompressed(path, kind, fh)
