"""Scoring from memory: distance matrices, embeddings and TREC-style tables (docs/usage.md).

Labels become an in-memory classification (ids ``"0"``, ``"1"``, ... in
array order; query ids ``"q0"``, ...); the matrix is ranked by the same code
as a ``.npy`` file, so the numbers are the file path's, bit for bit.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from .errors import OptionError
from .model import Classification

#: metric -> how a block of distances is computed from query rows Q and targets T.
METRICS = ("euclidean", "sqeuclidean", "cosine", "inner_product")
#: Labels of the rows / columns: one per item, a Classification or a ``.cla`` path.
Labels = Sequence[Hashable] | Classification | str | os.PathLike[str] | None


def evaluate(
    *, distances: Any = None, embeddings: Any = None, query_embeddings: Any = None, target_embeddings: Any = None,
    metric: str = "euclidean", dtype: str = "float32", labels: Labels = None, query_labels: Labels = None,
    target_labels: Labels = None, run: Any = None, qrels: Any = None, name: str = "run", **options: Any,
) -> Any:
    """Score one run held in memory; returns the same :class:`~shrec_score.Report` as :func:`~shrec_score.score`.

    Give one of ``distances`` (queries x targets, smaller = more similar),
    ``embeddings`` (all-against-all) or ``query_embeddings`` + ``target_embeddings``
    (distances by ``metric`` in ``dtype``, a block of rows at a time), with
    ``labels`` (all-against-all: row i and column i are item i, left out of its
    own list) or ``query_labels`` + ``target_labels``.  Labels are compared by
    their text (two labels of one text are refused; ``-1`` is PSB's
    miscellaneous class), or are a Classification or a ``.cla`` path.  Or
    ``run`` and ``qrels`` (DataFrames with ir_measures' / ranx's column names, or
    nested dicts), scored as the same TREC files.  ``**options``: every keyword
    of :func:`~shrec_score.score`.  A wrong shape, a NaN, labels of the wrong
    length or an unknown metric raise ValueError naming the argument, before any work
    (docs/usage.md).
    """
    from .api import score
    from .join import matrix_run
    from .loading import load_relevance
    from .options import Options

    opts = Options.build(**options)  # every option checked first
    if run is not None or qrels is not None:
        if run is None or qrels is None or any(v is not None for v in (distances, embeddings, query_embeddings, labels, query_labels)):
            raise ValueError("run: expected run= and qrels= together, without distances, embeddings or labels")
        return _score_trec(_table("run", run, "score"), _table("qrels", qrels, "relevance"), name, opts)
    if metric not in METRICS:
        raise OptionError(f"metric: expected one of {', '.join(METRICS)}, got {metric!r}")
    if dtype not in ("float32", "float64"):
        raise OptionError(f"dtype: expected float32 or float64, got {dtype!r}")
    separate = labels is None
    if separate and (query_labels is None or target_labels is None):
        raise ValueError("labels: expected labels= (all-against-all) or query_labels= and target_labels=")
    if not separate and (query_labels is not None or target_labels is not None):
        raise ValueError("labels: expected either labels= or query_labels= + target_labels=, not both")
    given = [k for k, v in (("distances", distances), ("embeddings", embeddings), ("query_embeddings", query_embeddings)) if v is not None]
    if len(given) != 1:
        raise ValueError(f"distances: expected exactly one of distances=, embeddings=, query_embeddings=+target_embeddings=, got {given or 'none'}")

    if separate:
        targets, queries = _as_classification("target_labels", target_labels, ""), _as_classification("query_labels", query_labels, "q")
        q_arg, t_arg = "query_labels", "target_labels"
    else:
        targets, queries = _as_classification("labels", labels, ""), None
        q_arg = t_arg = "labels"
    # rows and columns follow the ids as a .npy file's do (--matrix-order): array order for labels
    q_ids = _matrix_axis(q_arg, (queries or targets).ids, opts.matrix_order, "query")
    t_ids = q_ids if queries is None else _matrix_axis(t_arg, targets.ids, opts.matrix_order, "target")
    shape = (len(q_ids), len(t_ids))

    matrix: np.ndarray | DeviceRows | EmbeddingDistances
    if distances is not None:
        matrix = _array("distances", distances)
        if matrix.ndim != 2 or matrix.shape != shape:
            raise ValueError(f"distances: expected shape {shape} (queries x targets, from the labels), got {matrix.shape}")
        _check_numbers("distances", matrix, finite=False)
    else:
        if separate:
            if embeddings is not None or query_embeddings is None or target_embeddings is None:
                raise ValueError("embeddings: expected query_embeddings= and target_embeddings= with query_labels= and target_labels=")
            qe, te = _on_host(_array("query_embeddings", query_embeddings)), _on_host(_array("target_embeddings", target_embeddings))
        else:
            if embeddings is None:
                raise ValueError("embeddings: expected embeddings= with labels= (all-against-all)")
            qe = te = _on_host(_array("embeddings", embeddings))
        sides = [("query_embeddings" if separate else "embeddings", qe, shape[0]), ("target_embeddings" if separate else "embeddings", te, shape[1])]
        for arg, e, n in sides[: 1 if te is qe else 2]:  # all-against-all: one array, checked once
            if e.ndim != 2 or e.shape[0] != n:
                raise ValueError(f"{arg}: expected shape ({n}, d) (one row per label), got {e.shape}")
            _check_numbers(arg, e, finite=True)
        if qe.shape[1] != te.shape[1]:
            raise ValueError(f"target_embeddings: expected {qe.shape[1]} columns like the queries, got {te.shape[1]}")
        matrix = EmbeddingDistances(qe, te, metric, np.dtype(dtype))

    rel = load_relevance(targets, queries, grades=opts.grades)
    run = matrix_run(name, "<memory>", matrix, rel, q_ids, t_ids)
    return score([run], rel, options=opts)


class EmbeddingDistances:
    """A (queries x targets) distance matrix computed from embeddings a block of rows at a time (``shape``, ``dtype``, row selection)."""

    def __init__(self, queries: np.ndarray, targets: np.ndarray, metric: str, dtype: np.dtype) -> None:
        self.q = np.ascontiguousarray(queries, dtype=dtype)
        self.t = self.q if targets is queries else np.ascontiguousarray(targets, dtype=dtype)
        self.metric = metric
        self.dtype = dtype
        self.shape = (len(self.q), len(self.t))
        if metric == "cosine":
            same = self.t is self.q
            self.q = self.q / np.maximum(np.linalg.norm(self.q, axis=1, keepdims=True), np.finfo(dtype).tiny)
            self.t = self.q if same else self.t / np.maximum(np.linalg.norm(self.t, axis=1, keepdims=True), np.finfo(dtype).tiny)
        self.t_sq = np.einsum("ij,ij->i", self.t, self.t)
        #: The rows computed by the last product: (first, end, distances).
        self._held: tuple[int, int, np.ndarray] | None = None

    #: Distances computed per matrix product (about 32 MiB of them): the
    #: ranking reads blocks of 2M cells, and products that small keep the BLAS
    #: threads spinning between calls (about twice the CPU time for the same result).
    PRODUCT_BYTES = 32 << 20

    def __getitem__(self, rows: Any) -> np.ndarray:
        if not (isinstance(rows, slice) and rows.step in (None, 1)):
            return self.block(self.q[rows])
        a, b, _ = rows.indices(self.shape[0])
        held = self._held
        if held is None or not (held[0] <= a and b <= held[1]):
            span = max(b - a, self.PRODUCT_BYTES // max(1, self.shape[1] * np.dtype(self.dtype).itemsize))
            lo, hi = a, min(self.shape[0], a + span)
            held = self._held = (lo, hi, self.block(self.q[lo:hi]))
        return held[2][a - held[0] : b - held[0]].copy()  # a block of its own: the caller may work in place

    def block(self, q: np.ndarray) -> np.ndarray:
        """Distances of the query rows ``q`` to every target.

        euclidean: sqrt(max(-2 q.t + |q|^2 + |t|^2, 0)) (summed in that order); sqeuclidean: the same
        without the root; cosine: 1 - q.t of the unit vectors; inner_product: -q.t.
        """
        dot = q @ self.t.T  # the one block-sized array: every step below works in place
        if self.metric == "inner_product":
            return np.negative(dot, out=dot)
        if self.metric == "cosine":
            return np.subtract(1, dot, out=dot)
        dot *= -2
        dot += np.einsum("ij,ij->i", q, q)[:, None]
        dot += self.t_sq[None, :]
        np.maximum(dot, 0, out=dot)
        return np.sqrt(dot, out=dot) if self.metric == "euclidean" else dot


#: Column names accepted for TREC-style tables (ir_measures, ranx, pytrec_eval, trec_eval's docs).
_COLUMNS = {
    "query": ("query_id", "qid", "q_id", "query", "topic"),
    "doc": ("doc_id", "docid", "docno", "doc", "target_id"),
    "score": ("score", "sim"),
    "relevance": ("relevance", "rel", "grade", "label", "judgment"),
}


def _table(arg: str, value: Any, kind: str) -> Any:
    """A DataFrame with columns query, doc and ``kind`` from a DataFrame or a nested dict, checked row by row."""
    import pandas as pd

    if isinstance(value, dict):
        rows = [(str(q), str(d), v) for q, docs in value.items() for d, v in docs.items()]
        frame = pd.DataFrame(rows, columns=["query", "doc", kind])
    elif isinstance(value, pd.DataFrame):
        picked = {}
        for key in ("query", "doc", kind):
            found = [c for c in _COLUMNS[key] if c in value.columns]
            if not found:
                raise ValueError(f"{arg}: expected a column {' or '.join(_COLUMNS[key])}, got columns {list(value.columns)}")
            picked[key] = value[found[0]]
        frame = pd.DataFrame({"query": picked["query"].astype(str), "doc": picked["doc"].astype(str), kind: picked[kind]})
    else:
        raise ValueError(f"{arg}: expected a pandas DataFrame or a dict {{query: {{doc: {kind}}}}}, got {type(value).__name__}")
    if frame.empty:
        raise ValueError(f"{arg}: expected at least one row")
    values = pd.to_numeric(frame[kind], errors="coerce")
    if values.isna().any():
        row = int(np.flatnonzero(values.isna().to_numpy())[0])
        raise ValueError(f"{arg}: expected a number as {kind} in every row, got {frame[kind].iloc[row]!r} in row {row}")
    if kind == "relevance" and not (values == values.round()).all():
        raise ValueError(f"{arg}: expected whole-number grades")
    frame[kind] = values.astype(np.int64) if kind == "relevance" else values.astype(np.float64)
    for col in ("query", "doc"):
        bad = frame[col].str.contains(r"\s") | (frame[col] == "")
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise ValueError(f"{arg}: expected {col} ids without blanks, got {frame[col].iloc[row]!r} in row {row}")
    dup = frame.duplicated(["query", "doc"])
    if dup.any():
        row = int(np.flatnonzero(dup.to_numpy())[0])
        raise ValueError(f"{arg}: expected each (query, doc) pair once, got {frame['query'].iloc[row]!r}, {frame['doc'].iloc[row]!r} again in row {row}")
    return frame


def _score_trec(run: Any, qrels: Any, name: str, opts: Any) -> Any:
    """Score TREC-style tables through the file readers (a temporary folder, removed after)."""
    import dataclasses
    import tempfile

    from .api import score

    with tempfile.TemporaryDirectory(prefix="shrec-score-") as tmp:
        run_path, qrels_path = os.path.join(tmp, name), os.path.join(tmp, "qrels")
        with open(run_path, "w", encoding="utf-8") as fh:  # repr: the doubles round-trip exactly
            fh.writelines(f"{q} Q0 {d} 0 {s!r} r\n" for q, d, s in zip(run["query"], run["doc"], run["score"].tolist()))
        with open(qrels_path, "w", encoding="utf-8") as fh:
            fh.writelines(f"{q} 0 {d} {g}\n" for q, d, g in zip(qrels["query"], qrels["doc"], qrels["relevance"].tolist()))
        report = score([run_path], qrels_path, options=dataclasses.replace(opts, run_format="trec"))
    # messages name the arguments, not the temporary files
    report.warnings = [w.replace(run_path, "run=").replace(qrels_path, "qrels=") for w in report.warnings]
    report.signature["relevance"] = "qrels from memory"
    return report


#: DLPack device type of host memory (kDLCPU); every other device is read in blocks.
_DLPACK_CPU = 1
#: Bytes of a device array copied to host memory at once (validation, embeddings).
DEVICE_BLOCK_BYTES = 64 << 20


def _array(arg: str, value: Any) -> np.ndarray | DeviceRows:
    """A numpy view of an array-like, or a :class:`DeviceRows` for a DLPack array on a device (a GPU).

    Host DLPack arrays are viewed without a copy; the array's library is never
    imported, only its own methods are called.
    """
    if isinstance(value, np.ndarray):
        return value
    dlpack = hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__")
    if dlpack and _library(value) == "torch" and getattr(value, "requires_grad", False):
        value = value.detach()  # a tensor that requires grad refuses DLPack export
    if dlpack and int(value.__dlpack_device__()[0]) != _DLPACK_CPU:
        return DeviceRows(arg, value)
    try:
        return np.from_dlpack(value) if dlpack else np.asarray(value)
    except (TypeError, ValueError, BufferError, RuntimeError) as exc:
        raise ValueError(f"{arg}: expected an array of numbers, got {type(value).__name__} ({exc})") from None


def _library(value: Any) -> str:
    """The top-level package of the type of ``value`` (``"torch"``, ``"cupy"``...)."""
    return (type(value).__module__ or "").split(".")[0]


class DeviceRows:
    """A 2-D array on a device read a block of rows at a time (``shape``, ``ndim``, ``dtype``, row selection); never copied whole at once."""

    def __init__(self, arg: str, value: Any) -> None:
        self.arg = arg
        self.value = value
        self.shape = tuple(int(n) for n in value.shape)
        self.ndim = len(self.shape)
        if self.ndim != 2:
            raise ValueError(f"{arg}: expected a 2-D array, got shape {self.shape}")
        if self.shape[0] == 0:
            raise ValueError(f"{arg}: expected at least one row, got shape {self.shape}")
        self.dtype = _to_host(value[0:1]).dtype  # one row tells the dtype numpy sees

    def __getitem__(self, rows: Any) -> np.ndarray:
        if isinstance(rows, slice):
            return _to_host(self.value[rows])
        rows = np.asarray(rows, dtype=np.int64)
        if rows.size == 0:
            return np.empty((0, self.shape[1]), dtype=self.dtype)
        wanted, back = np.unique(rows, return_inverse=True)
        cuts = np.flatnonzero(np.diff(wanted) != 1) + 1  # runs of consecutive rows: one slice each
        parts = [_to_host(self.value[int(r[0]) : int(r[-1]) + 1]) for r in np.split(wanted, cuts)]
        return np.concatenate(parts)[back]


def _on_host(arr: np.ndarray | DeviceRows) -> np.ndarray:
    """Embeddings (n x d, small beside the n x n distances) in host memory: a device
    array is copied once, block by block, and the checks and the scoring share
    the copy."""
    return np.concatenate(list(_row_blocks(arr))) if isinstance(arr, DeviceRows) else arr


def _to_host(value: Any) -> np.ndarray:
    """A host (numpy) copy of a DLPack array on any device, through its own methods only."""
    try:
        return np.from_dlpack(value, device="cpu", copy=True)
    except (TypeError, ValueError, BufferError, RuntimeError, AttributeError):
        pass  # a producer without DLPack 1.0 copies to the host: its own method
    lib = _library(value)
    if lib == "torch":
        return np.from_dlpack(value.detach().cpu())
    if lib == "cupy":
        return np.asarray(value.get())
    return np.asarray(value)


def _row_blocks(arr: np.ndarray | DeviceRows) -> Any:
    """The rows of a 2-D array (numpy, memory map or device) in host blocks of about :data:`DEVICE_BLOCK_BYTES`."""
    step = max(1, DEVICE_BLOCK_BYTES // max(1, arr.shape[1] * arr.dtype.itemsize))
    for a in range(0, arr.shape[0], step):
        yield arr[a : a + step]


def _check_numbers(arg: str, arr: np.ndarray | DeviceRows, *, finite: bool) -> None:
    """One ValueError naming ``arg`` for a non-numeric dtype, a NaN (or, with ``finite``, an inf)."""
    if arr.dtype.kind not in "fiu":
        raise ValueError(f"{arg}: expected numbers, got dtype {arr.dtype}")
    if arr.dtype.kind != "f":
        return
    for block in _row_blocks(arr):
        if not (np.isfinite(block).all() if finite else not np.isnan(block).any()):
            raise ValueError(f"{arg}: expected finite numbers (no NaN or inf)" if finite else f"{arg}: expected no NaN")


def _labels(arg: str, value: Sequence[Hashable] | None) -> list[str]:
    if value is not None and not isinstance(value, np.ndarray) and hasattr(value, "__dlpack__"):
        value = list(_to_host(value))  # a tensor of class numbers: numbers, not 0-d tensors
    raws = [] if value is None else [x.item() if isinstance(x, np.generic) else x for x in list(value)]
    if not raws:
        raise ValueError(f"{arg}: expected one label per item, got none")
    missing = [i for i, x in enumerate(raws) if x is None or (isinstance(x, float) and x != x)]
    if missing:  # a missing label is no class: never a class named "None" or "nan"
        raise ValueError(f"{arg}: expected a label for every item, got {len(missing)} missing (None or NaN), the first at position {missing[0]}")
    texts = [str(x) for x in raws]
    seen: dict[str, Hashable] = {}
    for raw, text in zip(raws, texts):
        if seen.setdefault(text, raw) != raw:
            raise ValueError(f"{arg}: expected labels with distinct texts, got {seen[text]!r} and {raw!r} (both {text!r})")
    return texts


def _as_classification(arg: str, value: Any, prefix: str) -> Classification:
    """A classification from labels (ids ``prefix + position``), a :class:`Classification` or a ``.cla`` path."""
    if isinstance(value, Classification):
        return value
    if isinstance(value, (str, os.PathLike)):
        from .io.cla import read_classification

        return read_classification(value)
    texts = _labels(arg, value)
    return _classification(arg, [f"{prefix}{i}" for i in range(len(texts))], texts)


def _matrix_axis(arg: str, ids: list[str], order: str | None, what: str) -> list[str]:
    """The id of each row (or column), by the ``.npy`` reader's rule (:func:`shrec_score.join.matrix_axis`)."""
    from .errors import InputError
    from .join import matrix_axis

    try:
        return matrix_axis(list(ids), order, what, arg)
    except InputError as exc:
        raise ValueError(exc.message) from None  # "<arg>: ..." (the argument stands where a file would)


def _classification(arg: str, ids: list[str], labels: list[str]) -> Classification:
    names = list(dict.fromkeys(labels))
    code = {n: i for i, n in enumerate(names)}
    return Classification(f"<{arg}>", names, ["0"] * len(names), ids, np.asarray([code[x] for x in labels], dtype=np.int32))
