"""Readers of dissimilarity-matrix runs: rows = queries, columns = targets,
smaller = more similar.

Three forms:

* ASCII, whitespace separated, one row per line (SHREC 2014/2015/2021);
* ``.npy`` (memory-mapped, so a large matrix is read in blocks of rows);
* PSB binary: N x M float32, row-major, no header (recognised by its size).
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from ..errors import InputError
from .text import read_text


def read_ascii_matrix(path: str) -> np.ndarray:
    """Parse an ASCII matrix with numpy's C parser; bad lines are located exactly."""
    text = read_text(path)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        raise InputError(path, None, "expected a dissimilarity matrix", "an empty file")
    n_cols = len(lines[0].split())
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values = np.fromstring(text, dtype=np.float64, sep=" ")
    except ValueError:  # numpy 2: a token that is not a number
        values = np.zeros(0)
    if values.size != len(lines) * n_cols:
        _locate_bad_line(path, text, n_cols)
    return values.reshape(len(lines), n_cols)


def _locate_bad_line(path: str, text: str, n_cols: int) -> None:
    for n, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != n_cols:
            raise InputError(path, n, f"expected {n_cols} distances per row (as on the first row)", f"{len(fields)}")
        for f in fields:
            try:
                float(f)
            except ValueError:
                raise InputError(path, n, "expected a number as distance", repr(f)) from None
    raise InputError(path, None, "expected a whitespace-separated matrix of numbers")


def read_npy_matrix(path: str) -> np.ndarray:
    try:
        m = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError) as exc:
        raise InputError(path, None, "expected a .npy array", str(exc).splitlines()[0]) from None
    if m.ndim != 2 or m.dtype.kind not in "fiu":
        raise InputError(path, None, "expected a 2-D numeric .npy array", f"shape {m.shape}, dtype {m.dtype}")
    return m


def read_psb_binary_matrix(path: str, shape: tuple[int, int]) -> np.ndarray:
    """N x M float32, row-major, no header (the PSB distance-matrix file)."""
    size = os.path.getsize(path)
    if size != 4 * shape[0] * shape[1]:
        raise InputError(
            path,
            None,
            f"expected a PSB binary matrix of {shape[0]} x {shape[1]} float32 ({4 * shape[0] * shape[1]} bytes)",
            f"{size} bytes",
        )
    return np.memmap(path, dtype=np.float32, mode="r", shape=shape)


def is_binary_file(path: str, probe: int = 4096) -> bool:
    """True when the first bytes are not text (a NUL byte or invalid UTF-8)."""
    with open(path, "rb") as fh:
        head = fh.read(probe)
    if b"\0" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(head) - 4  # a multi-byte char cut at the probe's end is text
    return False


#: ASCII matrices larger than this are streamed (row chunks -> a temporary binary file).
STREAM_ABOVE = 64 << 20
#: Bytes of text parsed at once when streaming.
STREAM_CHUNK = 16 << 20


def stream_ascii_matrix(path: str, shape: tuple[int, int]) -> np.ndarray:
    """Parse a large ASCII matrix chunk by chunk into a temporary float64 file,
    memory-mapped read-only: memory stays near ``STREAM_CHUNK`` whatever the
    file's size.  Errors name the line as :func:`read_ascii_matrix` does."""
    import tempfile

    n_rows, n_cols = shape
    tmp = tempfile.TemporaryFile()
    rows_done = 0
    line_no = 0
    with open(path, "rb") as fh:
        carry = b""
        while True:
            block = fh.read(STREAM_CHUNK)
            data = carry + block
            if not block:
                carry = b""
            else:
                cut = data.rfind(b"\n") + 1
                data, carry = data[:cut], data[cut:]
            if data:
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InputError(path, line_no + data.count(b"\n", 0, exc.start) + 1, "expected UTF-8 text", f"byte 0x{data[exc.start]:02x}") from None
                lines = [ln for ln in text.splitlines() if ln.strip()]
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        values = np.fromstring(text, dtype=np.float64, sep=" ")
                except ValueError:
                    values = np.zeros(0)
                if values.size != len(lines) * n_cols:
                    try:
                        _locate_bad_line(path, text, n_cols)
                    except InputError as exc:
                        raise InputError(path, None if exc.line is None else exc.line + line_no, exc.expected, exc.got) from None
                rows_done += len(lines)
                if rows_done > n_rows:
                    break
                tmp.write(values.tobytes())
                line_no += text.count("\n")
            if not block:
                break
    if rows_done != n_rows:
        raise InputError(path, None, f"expected a {n_rows} x {n_cols} matrix (queries x targets of the classifications)", f"{'more than ' if rows_done > n_rows else ''}{rows_done} rows")
    tmp.flush()
    return np.memmap(tmp, dtype=np.float64, mode="r", shape=shape)


def read_matrix(path: str, shape: tuple[int, int]) -> np.ndarray:
    """Read a matrix run in any of the three forms and check its shape."""
    if path.endswith(".npy"):
        m = read_npy_matrix(path)
    elif is_binary_file(path):
        m = read_psb_binary_matrix(path, shape)
    elif os.path.getsize(path) > STREAM_ABOVE:
        m = stream_ascii_matrix(path, shape)
    else:
        m = read_ascii_matrix(path)
    if tuple(m.shape) != tuple(shape):
        raise InputError(
            path,
            None,
            f"expected a {shape[0]} x {shape[1]} matrix (queries x targets of the classifications)",
            f"{m.shape[0]} x {m.shape[1]}",
        )
    return m
