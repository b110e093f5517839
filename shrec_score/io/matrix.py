"""Readers of dissimilarity-matrix runs, ASCII, ``.npy`` or PSB binary (the last two read rows at a time,
:class:`RowFile`); rows are queries, columns targets, smaller = more similar (docs/inputs.md)."""

from __future__ import annotations

import io
import math
import os
import tempfile
import tokenize
import warnings
from typing import Any

import numpy as np
from numpy.lib import format as npy_format

from ..errors import InputError, shown
from .compressed import MAGIC_BYTES, Decompressed, compression_of, open_input, readable
from .numbers import parse_number
from .text import decode_text, head_of, pieces, regular_file

#: The bytes that separate numbers on a row: ASCII whitespace but the newline.
_BLANK = np.zeros(256, dtype=bool)
_BLANK[[9, 11, 12, 13, 32]] = True

COMPRESSED = "expected an uncompressed .npy or PSB binary matrix (their rows are read by position); decompress it first"

#: ASCII matrices larger than this are streamed (row chunks -> a temporary binary file).
STREAM_ABOVE = 64 << 20
#: Bytes of text parsed at once (one piece).
STREAM_CHUNK = 16 << 20
_NUMPY2 = int(np.__version__.split(".")[0]) >= 2


def _parse_numbers(text: str) -> np.ndarray:
    """Every whitespace-separated number of ``text`` by numpy's C parser (its grammar is ours, but ``nan(...)``); too short on a bad token."""
    if "(" in text:
        return np.zeros(0)
    if _NUMPY2:  # a bad token raises (no catch_warnings here: it resets the host's warnings record, races in threads)
        try:
            return np.fromstring(text, dtype=np.float64, sep=" ")
        except ValueError:
            return np.zeros(0)
    with warnings.catch_warnings():  # numpy 1 warns, then returns what it read
        warnings.simplefilter("ignore")
        return np.fromstring(text, dtype=np.float64, sep=" ")


def read_ascii_matrix(
    path: str, shape: tuple[int, int] | None, why: str = "", *, stream: bool = False, fh: Any = None,
) -> np.ndarray:
    """An ASCII matrix as wide as its first row, parsed a piece at a time (a bad line named; ``fh``: ``path`` opened),
    in memory or (``stream``) in a temporary file memory-mapped read-only; rows past ``shape`` (``why``) counted."""
    out = tempfile.TemporaryFile() if stream else io.BytesIO()
    rows_done = 0
    n_cols: int | None = None
    for data, line in pieces(path, STREAM_CHUNK, fh=fh):
        text = decode_text(path, data, line)
        if n_cols is None:
            first = next((ln for ln in text.split("\n") if ln.strip()), None)
            if first is None:
                continue
            n_cols = len(first.split())
        rows = _parse_rows(path, text, n_cols, line - 1)
        if shape is None or rows_done + len(rows) <= shape[0]:
            out.write(rows.tobytes())
        rows_done += len(rows)
    if n_cols is None:
        raise InputError(path, None, "expected a dissimilarity matrix", "an empty file")
    if shape is not None and rows_done != shape[0]:
        raise shape_error(path, shape, (rows_done, n_cols), why)
    if isinstance(out, io.BytesIO):
        return np.frombuffer(out.getbuffer(), dtype=np.float64).reshape(rows_done, n_cols)
    out.flush()
    return np.memmap(out, dtype=np.float64, mode="r", shape=(rows_done, n_cols))


def _parse_rows(path: str, text: str, n_cols: int, line_no: int = 0) -> np.ndarray:
    """The non-blank lines of ``text`` (after ``line_no`` lines of the file) as rows of ``n_cols`` numbers; a bad line is an InputError naming it."""
    n_rows = sum(1 for ln in text.split("\n") if ln.strip())
    values = _parse_numbers(text)
    if values.size != n_rows * n_cols or _ragged(text, n_cols):
        for n, line in enumerate(text.split("\n"), start=line_no + 1):
            fields = line.split()
            if fields and len(fields) != n_cols:
                raise InputError(path, n, f"expected {n_cols} distances per row (as on the first row)", f"{len(fields)}")
            bad = next((f for f in fields if parse_number(f) is None), None)
            if bad is not None:
                raise InputError(path, n, "expected a number as distance", shown(bad))
        raise InputError(path, None, "expected a whitespace-separated matrix of numbers")
    return values.reshape(n_rows, n_cols)


def _ragged(text: str, n_cols: int) -> bool:
    """Whether a non-blank line holds other than ``n_cols`` fields (counted where they start), even when the total is right."""
    b = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    blank = _BLANK[b] | (b == 10)
    starts = np.flatnonzero(~blank & np.concatenate(([True], blank[:-1])))
    per_line = np.bincount(np.searchsorted(np.flatnonzero(b == 10), starts), minlength=1)
    return bool(((per_line != 0) & (per_line != n_cols)).any())


def read_npy_matrix(path: str, *, stated: bool = False) -> np.ndarray | RowFile:
    """A 2-D numeric ``.npy`` array read rows at a time (:class:`RowFile`; Fortran order memory-mapped), its header
    checked against its size in Python integers (a lying shape overflows numpy's); ``stated``: ``path`` stat'ed."""
    path = path if stated else regular_file(path)
    with readable(path), open(path, "rb") as fh:
        if compression_of(fh.read(MAGIC_BYTES)) is not None:
            raise InputError(path, None, COMPRESSED, "a compressed file")
        fh.seek(0)
        try:  # numpy parses the header as a Python literal
            version = npy_format.read_magic(fh)
            read = npy_format.read_array_header_1_0 if version == (1, 0) else npy_format.read_array_header_2_0
            raw_shape, fortran, dtype = read(fh)
        except (ValueError, SyntaxError, TypeError, EOFError, RecursionError, tokenize.TokenError) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__  # first line, cut: it may hold a piece of the header
            raise InputError(path, None, "expected a .npy array", reason if len(reason) <= 120 else f"{reason[:120]}...") from None
        shape, offset = tuple(int(k) for k in raw_shape), fh.tell()
        if len(shape) != 2 or dtype.kind not in "fiu":
            raise InputError(path, None, "expected a 2-D numeric .npy array", f"shape {shape}, dtype {dtype}")
        need = offset + math.prod(shape) * dtype.itemsize
        st = os.fstat(fh.fileno())
        if st.st_size < need:
            raise InputError(
                path, None, f"expected a .npy file of {need:,} bytes (a {' x '.join(map(str, shape))} {dtype} array, as its header says)", f"{st.st_size:,} bytes"
            )
        if need == offset:  # no cell: nothing to read
            return np.zeros(shape, dtype=dtype)
        if fortran:  # rows are not stored whole: mapped
            return np.memmap(fh, dtype=dtype, mode="r", offset=offset, shape=shape, order="F")
        return RowFile(path, offset, (shape[0], shape[1]), dtype, st)


class RowFile:
    """A C-order matrix file (``.npy`` or PSB binary) read rows at a time (a memory map keeps the pages it touched
    resident); ``st``: its ``fstat`` when checked: a file replaced or rewritten since is an error."""

    def __init__(self, path: str, offset: int, shape: tuple[int, int], dtype: np.dtype, st: os.stat_result) -> None:
        self.path, self.offset, self.shape, self.dtype = path, offset, shape, dtype
        self._version = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self[:] if dtype is None else self[:].astype(dtype)

    def __getitem__(self, index: Any) -> np.ndarray:
        """``m[rows]`` or ``m[rows, columns]`` as numpy indexes, only those rows read (consecutive ones at once)."""
        first, rest = (index[0], index[1:]) if isinstance(index, tuple) else (index, ())
        rows = np.arange(*first.indices(self.shape[0])) if isinstance(first, slice) else np.arange(self.shape[0])[first]
        flat = rows.reshape(-1)
        out = np.empty((flat.size, self.shape[1]), dtype=self.dtype)
        row_bytes = self.shape[1] * self.dtype.itemsize
        starts = np.flatnonzero(np.diff(flat, prepend=-2) != 1).tolist()
        with readable(self.path), open(self.path, "rb") as fh:
            st = os.fstat(fh.fileno())
            unchanged = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) == self._version
            for i, j in zip(starts, [*starts[1:], flat.size]):
                fh.seek(self.offset + int(flat[i]) * row_bytes)
                if fh.readinto(out[i:j].data.cast("B")) != (j - i) * row_bytes or not unchanged:
                    raise InputError(self.path, None, "expected the matrix file unchanged while it is scored", "a file replaced or rewritten")
        return out[0][rest] if rows.ndim == 0 else out[(slice(None), *rest)]


def is_binary(head: bytes) -> bool:
    """True when a file's first bytes are not text (a NUL byte or invalid UTF-8)."""
    if b"\0" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(head) - 4  # a multi-byte char cut at the probe's end is text
    return False


def read_matrix(
    path: str, shape: tuple[int, int] | None, *, why: str = "", stream: bool = False,
) -> np.ndarray | RowFile:
    """A matrix in any of the three forms (``path`` stat'ed by the caller), opened once, checked against ``shape``
    (``why``: where it comes from; None: a PSB binary one is square); ``stream``: ASCII into a temporary file."""
    if path.endswith(".npy"):
        m = read_npy_matrix(path, stated=True)
    else:
        with open_input(path) as fh:  # (decompressed: the format is told by the text inside)
            head, st, compressed = head_of(path, fh), os.fstat(fh.fileno()), isinstance(fh, Decompressed)
            if is_binary(head):
                if compressed:
                    raise InputError(path, None, COMPRESSED, "a compressed file")
                if shape is None:  # (convert without --shape)
                    side = math.isqrt(st.st_size // 4)
                    if side * side * 4 != st.st_size:
                        raise InputError(path, None, "expected --shape ROWSxCOLS for a PSB binary matrix that is not square", f"{st.st_size} bytes")
                    shape = (side, side)
                if st.st_size != 4 * shape[0] * shape[1]:
                    raise InputError(path, None, f"expected a PSB binary matrix of {shape[0]} x {shape[1]} float32 ({4 * shape[0] * shape[1]} bytes)", f"{st.st_size} bytes")
                m = RowFile(path, 0, shape, np.dtype(np.float32), st) if st.st_size else np.zeros(shape, dtype=np.float32)
            else:  # decompressed, or large: into a temporary file
                m = read_ascii_matrix(path, shape, why, stream=stream or compressed or st.st_size > STREAM_ABOVE, fh=fh)
    if shape is not None and tuple(m.shape) != tuple(shape):
        raise shape_error(path, shape, m.shape, why)
    return m


def shape_error(path: str, shape: tuple[int, int], got: tuple[int, ...], why: str = "") -> InputError:
    """The error for a matrix of another shape than ``shape`` (``why``: where that shape comes from)."""
    why = why or "queries x targets of the classifications"
    return InputError(path, None, f"expected a {shape[0]} x {shape[1]} matrix ({why})", f"{got[0]} x {got[1]}")
