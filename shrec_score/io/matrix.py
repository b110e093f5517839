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


def read_matrix(path: str, shape: tuple[int, int]) -> np.ndarray:
    """Read a matrix run in any of the three forms and check its shape."""
    if path.endswith(".npy"):
        m = read_npy_matrix(path)
    elif is_binary_file(path):
        m = read_psb_binary_matrix(path, shape)
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
