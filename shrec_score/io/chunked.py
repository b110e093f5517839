"""Matrix runs stored by blocks of rows, a Zarr array or a folder of ``.npy`` row shards with its ``manifest.json``
(the layouts: docs/scale-out.md): :func:`open_row_blocks` reads either, :func:`write_row_blocks` writes either."""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..errors import InputError, shown
from ..outdir import fsync_tree
from . import matrix
from .compressed import readable

#: The ``format`` of a shard folder's manifest.
SHARDS_FORMAT = "shrec-score npy-shards"
MANIFEST = "manifest.json"
#: What to install for Zarr (and the cluster).
INSTALL_HINT = "pip install 'shrec-score[dask]'"


def layout_of(path: str) -> str | None:
    """``"zarr"``, ``"npy-shards"`` or None: whether ``path`` is a folder holding a row-block matrix (by its metadata file)."""
    layouts = (("npy-shards", [MANIFEST]), ("zarr", ["zarr.json", ".zarray"]))
    return next((kind for kind, names in layouts if any(os.path.isfile(os.path.join(path, n)) for n in names)), None)


class RowBlockMatrix:
    """A 2-D matrix stored in blocks of rows: ``blocks`` the half-open row ranges in order, ``located(row)``
    the file (shard or chunk) holding a row, ``read(a, b)`` those rows; ``m[rows]``."""

    def __init__(
        self, path: str, shape: tuple[int, int], dtype: np.dtype, blocks: list[tuple[int, int]], files: list[str],
    ) -> None:
        self.path, self.shape, self.dtype = path, shape, dtype
        self.blocks, self._files = blocks, files
        self._ends = np.array([b for _, b in blocks], dtype=np.int64)

    def _block(self, rows: Any) -> Any:
        """The block (its number) of each of ``rows``."""
        return np.searchsorted(self._ends, rows, side="right")

    def located(self, row: int) -> tuple[str, int]:
        """The file (shard or chunk) holding ``row`` and the row's number in it, from 1 (an error names these)."""
        k = int(self._block(row))
        return self._files[k], row - self.blocks[k][0] + 1

    def read(self, a: int, b: int) -> np.ndarray:
        raise NotImplementedError

    def __getitem__(self, index: Any) -> np.ndarray:
        """``m[a:b]`` or ``m[rows]`` (a 1-D array of any order), read block by block."""
        rows = np.arange(*index.indices(self.shape[0])) if isinstance(index, slice) else np.asarray(index, dtype=np.int64)
        out = np.empty((rows.size, self.shape[1]), dtype=self.dtype)
        which = self._block(rows)
        for k in np.unique(which).tolist():
            a, b = self.blocks[k]
            sel = which == k
            out[sel] = self.read(a, b)[rows[sel] - a]
        return out


class NpyShards(RowBlockMatrix):
    """A folder of ``.npy`` row shards with its ``manifest.json``."""

    def __init__(self, path: str) -> None:
        where = os.path.join(path, MANIFEST)
        try:
            with readable(where, "expected a readable manifest"), open(where, encoding="utf-8") as fh:
                meta = json.load(fh)
        except (ValueError, UnicodeDecodeError) as exc:
            raise InputError(where, None, "expected a JSON manifest of .npy row shards", str(exc).splitlines()[0][:120]) from None
        if not isinstance(meta, dict) or meta.get("format") != SHARDS_FORMAT:
            raise InputError(where, None, f"expected a manifest with \"format\": \"{SHARDS_FORMAT}\"", shown(str(meta)[:80]))
        if not (isinstance(meta.get("shape"), list) and all(isinstance(x, int) and not isinstance(x, bool) for x in meta["shape"])):
            raise InputError(where, None, "expected \"shape\": [rows, columns] (a list of two whole numbers) in the manifest", shown(str(meta.get("shape"))[:80]))
        shape = tuple(meta["shape"])
        try:
            dtype = np.dtype(meta["dtype"])
            shards = [(str(s["file"]), int(s["rows"][0]), int(s["rows"][1])) for s in meta["shards"]]
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise InputError(where, None, "expected shape, dtype and shards (file, rows) in the manifest", shown(repr(exc))) from None
        if len(shape) != 2 or dtype.kind not in "fiu":
            raise InputError(where, None, "expected a 2-D numeric matrix in the manifest", f"shape {shape}, dtype {dtype}")
        expected = 0
        seen: set[str] = set()
        for name, a, b in shards:
            if os.path.basename(name) != name or name in ("", ".", ".."):
                raise InputError(where, None, "expected shard file names inside the folder", shown(name))
            if name in seen:  # one file for two row ranges: the second would be scored with the first's rows
                raise InputError(where, None, "expected one shard file per row range", f"{shown(name)} named twice")
            seen.add(name)
            if a != expected or b <= a:
                raise InputError(where, None, f"expected shard {shown(name)} to start at row {expected} and hold at least one row", f"rows {a}..{b}")
            expected = b
        if expected != shape[0]:
            raise InputError(where, None, f"expected the shards to cover the {shape[0]} rows", f"{expected} rows")
        files = [os.path.join(path, name) for name, _, _ in shards]
        super().__init__(path, (shape[0], shape[1]), dtype, [(a, b) for _, a, b in shards], files)

    def read(self, a: int, b: int) -> np.ndarray:
        k = int(self._block(a))
        path, (lo, hi) = self._files[k], self.blocks[k]
        m = matrix.read_npy_matrix(path)  # header checked against the file's size
        if tuple(m.shape) != (hi - lo, self.shape[1]) or m.dtype != self.dtype:
            raise InputError(
                path, None, f"expected a {hi - lo} x {self.shape[1]} {self.dtype} shard (rows {lo + 1}..{hi} of {self.path}, as its manifest says)",
                f"{' x '.join(map(str, m.shape))} {m.dtype}",
            )
        return np.asarray(m[a - lo : b - lo])  # only these rows read (io.matrix.RowFile)


def _zarr() -> Any:
    try:
        import zarr
    except ImportError:
        raise InputError(None, None, f"Zarr matrices need the zarr package; install it with: {INSTALL_HINT}") from None
    return zarr


class ZarrRows(RowBlockMatrix):
    """A 2-D Zarr array chunked by rows (one chunk spans every column)."""

    def __init__(self, path: str) -> None:
        zarr = _zarr()
        try:
            arr = zarr.open_array(path, mode="r")
        except Exception as exc:  # zarr raises many kinds for a broken zarr.json
            raise InputError(path, None, "expected a Zarr array", shown(f"{type(exc).__name__}: {exc}"[:120])) from None
        if arr.ndim != 2 or arr.dtype.kind not in "fiu":
            raise InputError(path, None, "expected a 2-D numeric Zarr array", f"shape {arr.shape}, dtype {arr.dtype}")
        rows, cols = arr.chunks
        if cols < arr.shape[1]:
            raise InputError(path, None, "expected a Zarr array chunked by rows only (each chunk spanning every column)", f"chunks {arr.chunks}")
        self._arr = arr
        blocks = list(_ranges(int(arr.shape[0]), int(rows)))
        key = "{}.0" if os.path.isfile(os.path.join(path, ".zarray")) else os.path.join("c", "{}", "0")  # (Zarr 2: "row.col")
        files = [os.path.join(path, key.format(k)) for k in range(len(blocks))]
        super().__init__(path, (int(arr.shape[0]), int(arr.shape[1])), np.dtype(arr.dtype), blocks, files)
        stored = int(arr.nchunks_initialized)
        if stored < arr.nchunks:  # zarr reads a missing chunk as its fill value: zeros would be scored
            absent = next((f for f in self._files if not os.path.exists(f)), path)
            raise InputError(absent, None, "expected every chunk of the Zarr array (a missing one would be read as zeros)", f"{arr.nchunks - stored} of {arr.nchunks} chunks missing")

    def read(self, a: int, b: int) -> np.ndarray:
        try:
            return np.asarray(self._arr[a:b])
        except Exception as exc:  # a corrupt or missing chunk: the codec's or the store's error
            raise InputError(self.located(a)[0], None, f"expected a readable Zarr chunk (rows {a + 1}..{b} of {self.path})", shown(f"{type(exc).__name__}: {exc}"[:120])) from None


def open_row_blocks(path: str, kind: str | None = None) -> RowBlockMatrix:
    """The row-block matrix at ``path`` (Zarr or ``.npy`` shards; ``kind``: :func:`layout_of` it, told here when None)."""
    kind = kind or layout_of(path)
    if kind is None:
        raise InputError(path, None, f"expected a Zarr array folder or a folder of .npy row shards with its {MANIFEST}")
    return NpyShards(path) if kind == "npy-shards" else ZarrRows(path)


def write_row_blocks(out: str, layout: str, matrix: Any, dtype: np.dtype, chunk_rows: int | None) -> int:
    """Write ``matrix`` (its rows read ``chunk_rows`` at a time; None: about 64 MiB) as ``dtype`` in ``layout``
    (``zarr`` or ``npy-shards``) to the new folder ``out``; returns that number of rows."""
    chunk_rows = chunk_rows or (64 << 20) // max(1, matrix.shape[1] * dtype.itemsize)
    chunk_rows = max(1, min(chunk_rows, matrix.shape[0]))  # a block is never larger than the matrix
    if os.path.lexists(out):
        raise InputError(out, None, "expected a new folder for the converted matrix (it exists: remove it or choose another name)")
    parent = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(parent):
        raise InputError(out, None, "expected a new folder in a folder that exists", f"no folder {shown(parent)}")
    prefix = f".{os.path.basename(os.path.normpath(out))}.shrec-score-"  # staged beside it, renamed when complete
    with tempfile.TemporaryDirectory(suffix=".tmp", prefix=prefix, dir=parent, ignore_cleanup_errors=True) as tmp:
        staging = os.path.join(tmp, "rows")
        (_write_zarr if layout == "zarr" else _write_shards)(staging, matrix, dtype, chunk_rows)
        fsync_tree(staging, files=True)
        os.rename(staging, out)
    return chunk_rows


def _ranges(n: int, step: int) -> Iterator[tuple[int, int]]:
    for a in range(0, n, step):
        yield a, min(n, a + step)


def _write_shards(folder: str, matrix: Any, dtype: np.dtype, chunk_rows: int) -> None:
    os.mkdir(folder)
    digits = max(6, len(str(math.ceil(matrix.shape[0] / chunk_rows))))
    shards = []
    for k, (a, b) in enumerate(_ranges(matrix.shape[0], chunk_rows)):
        name = f"rows-{k:0{digits}d}.npy"
        np.save(os.path.join(folder, name), np.ascontiguousarray(matrix[a:b], dtype=dtype), allow_pickle=False)
        shards.append({"file": name, "rows": [a, b]})
    meta = {"format": SHARDS_FORMAT, "version": 1, "shape": list(matrix.shape), "dtype": dtype.str, "shards": shards}
    with open(os.path.join(folder, MANIFEST), "w", encoding="utf-8") as fh:
        json.dump(meta, fh, indent=1)
        fh.write("\n")


def _write_zarr(folder: str, matrix: Any, dtype: np.dtype, chunk_rows: int) -> None:
    zarr = _zarr()
    # uncompressed: distances are close to random bits, compression costs CPU on every read for little space
    arr = zarr.create_array(
        store=folder, shape=matrix.shape, chunks=(chunk_rows, max(1, matrix.shape[1])), dtype=dtype, compressors=None,
        fill_value=0,
        attributes={"shrec_score": "dissimilarity matrix: rows = queries, columns = targets, smaller = closer"},
    )
    for a, b in _ranges(matrix.shape[0], chunk_rows):
        arr[a:b] = np.asarray(matrix[a:b], dtype=dtype)

