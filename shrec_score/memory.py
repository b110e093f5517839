"""Scoring from memory: :func:`evaluate` is :func:`shrec_score.score` for the distances, embeddings or TREC tables
a notebook holds; every matrix is ranked by the code of a ``.npy`` file (docs/usage.md, "From Python")."""

from __future__ import annotations

import dataclasses
import os
import tempfile
import warnings
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from contextlib import suppress
from typing import Any

import numpy as np

from .api import score
from .errors import InputError, OptionError
from .io.cla import read_classification
from .join import matrix_axis, matrix_run
from .loading import load_relevance
from .measures.measure import ambiguous_recall
from .model import MISC_CLASS, Classification, factorize
from .options import Options, one_of

METRICS = ("euclidean", "sqeuclidean", "cosine", "inner_product")
#: Bytes of a device array copied to host memory at once (validation, embeddings).
DEVICE_BLOCK_BYTES = 64 << 20
#: Column names accepted for TREC tables (ir_measures, ranx, pytrec_eval, trec_eval's docs).
_COLUMNS = {
    "query": ("query_id", "qid", "q_id", "query", "topic"),
    "doc": ("doc_id", "docid", "docno", "doc", "target_id"),
    "score": ("score", "sim"),
    "relevance": ("relevance", "rel", "grade", "label", "judgment"),
}
#: What labels= / query_labels= / target_labels= take.
Labels = Sequence[Hashable] | Classification | str | os.PathLike[str]


def evaluate(
    *, distances: Any = None, embeddings: Any = None, query_embeddings: Any = None, target_embeddings: Any = None,
    metric: str = "euclidean", dtype: str = "float32",
    labels: Labels | None = None, query_labels: Labels | None = None, target_labels: Labels | None = None,
    run: Any = None, qrels: Any = None, name: str | None = None, **options: Any,
) -> Any:
    """Score runs held in memory; returns the same :class:`~shrec_score.Report` as :func:`~shrec_score.score`.

    Parameters
    ----------
    distances : array-like, shape (n_queries, n_targets)
        Smaller = more similar.  With ``labels``: square, the query left out of its own list (K = |C| - 1); with
        ``query_labels`` and ``target_labels``: queries x targets (K = |C|).  A dict ``{name: array}``: a run per model.
    embeddings, query_embeddings, target_embeddings : array-like, shape (n, d)
        ``embeddings`` with ``labels``, or the other two with ``query_labels`` and ``target_labels``; dicts of the
        same names: a run per model.  Distances computed in ``dtype``, a block of rows at a time.
    metric : {"euclidean", "sqeuclidean", "cosine", "inner_product"}
        ``cosine``: 1 - cos; ``inner_product``: the negated product.  Equal distances: lower column first.
    dtype : {"float32", "float64"}
        Precision of computed distances (float32 may tie where float64 would not).
    labels, query_labels, target_labels : sequence of hashable, Classification or path
        Each item's class in array order (hashables, a Categorical, a tensor), compared by text (two labels of one
        text, a missing label, 2-D labels refused); item i's id is ``i`` (queries ``qi``); ``-1``: the PSB's
        miscellaneous class (never a query nor relevant, warned of).  A Classification or ``.cla`` path orders rows
        and columns by its ids as a ``.npy`` file's (``matrix_order=``).
    run, qrels : pandas.DataFrame or dict
        TREC data instead: columns as ir_measures, ranx and pytrec_eval name them (``query_id``, ``doc_id``,
        ``score``; ``relevance``) or ``{query: {doc: score or grade}}``, scored as TREC files in full precision.
    name : str, optional
        The run's name (default ``"run"``); a dict of models is named by its keys.
    **options
        Every keyword of :func:`~shrec_score.score`; ``R@k`` and ``Recall@k`` refused, naming IR recall
        (``recall.k``) and metric-learning Recall@k (``success.k``).

    Raises
    ------
    ValueError
        A wrong shape, NaN, wrong labels or an unknown metric, naming the argument, before any work.
    """
    given = options.pop("options", None)  # score()'s options= (an Options) instead of the keywords
    asked = options if given is None else {k: getattr(given, k, None) for k in ("measures", "sort", "rank_by")}
    measures = asked.get("measures")
    names = [*(measures if isinstance(measures, (list, tuple)) else ()), asked.get("sort"), asked.get("rank_by")]
    for part in (p.strip() for name in names if isinstance(name, str) for p in name.split(",")):
        if (message := ambiguous_recall(part)) is not None:  # R@k and Recall@k: refused before the unknown names
            raise OptionError(message)
    opts = Options.of(given, options)  # every option checked first
    if run is not None or qrels is not None:
        others = (distances, embeddings, query_embeddings, target_embeddings, labels, query_labels, target_labels)
        if run is None or qrels is None or any(v is not None for v in others):
            raise ValueError("run: expected run= and qrels= together, without distances, embeddings or labels")
        return score_tables(run, qrels, name or "run", opts)
    one_of("metric", metric, METRICS)
    if dtype not in ("float32", "float64"):
        raise OptionError(f"dtype: expected float32 or float64, got {dtype!r}")
    separate = labels is None
    if separate and (query_labels is None or target_labels is None):
        raise ValueError("labels: expected labels= (all-against-all) or query_labels= and target_labels=")
    if not separate and (query_labels is not None or target_labels is not None):
        raise ValueError("labels: expected either labels= or query_labels= + target_labels=, not both")
    arrays = {"distances": distances, "embeddings": embeddings, "query_embeddings": query_embeddings}
    given = [k for k, v in arrays.items() if v is not None]
    if len(given) != 1:
        raise ValueError(f"distances: expected exactly one of distances=, embeddings=, query_embeddings=+target_embeddings=, got {given or 'none'}")
    q_arg, t_arg = ("query_labels", "target_labels") if separate else ("labels", "labels")
    targets = _as_classification(t_arg, target_labels if separate else labels, "")
    queries = _as_classification(q_arg, query_labels, "q") if separate else None
    try:  # rows and columns follow the ids as a .npy file's do (--matrix-order): array order for labels
        q_ids = matrix_axis(list((queries or targets).ids), opts.matrix_order, "query", q_arg)
        t_ids = q_ids if queries is None else matrix_axis(list(targets.ids), opts.matrix_order, "target", t_arg)
    except InputError as exc:
        raise ValueError(exc.message) from None  # "<arg>: ..." (the argument stands where a file would)
    if separate and distances is None and (embeddings is not None or target_embeddings is None):
        raise ValueError("embeddings: expected query_embeddings= and target_embeddings= with query_labels= and target_labels=")
    if not separate and query_embeddings is not None:
        raise ValueError("embeddings: expected embeddings= with labels= (all-against-all)")
    if target_embeddings is not None and given[0] != "query_embeddings":
        also = "" if separate else " and labels="
        raise ValueError(f"target_embeddings: expected only with query_embeddings=, got it with {given[0]}={also}")
    models = _models(given[0], arrays[given[0]], name)
    target_models: dict[str, tuple[str, Any]] = {}
    if separate and distances is None:
        if isinstance(target_embeddings, Mapping) != isinstance(query_embeddings, Mapping):
            raise ValueError("target_embeddings: expected a dict {name: array} for a dict of query_embeddings, an array for an array")
        target_models = _models("target_embeddings", target_embeddings, name)  # (a dict with name=: refused above)
        if list(target_models) != list(models):
            raise ValueError(f"target_embeddings: expected the models of query_embeddings ({', '.join(map(repr, models))}), got {', '.join(map(repr, target_models))}")
    shape = (len(q_ids), len(t_ids))
    matrices = {  # every model checked before any distance is computed or any run scored
        run_name: _matrix(arg, value, target_models.get(run_name), shape, metric, dtype, opts.lenient)
        for run_name, (arg, value) in models.items()
    }
    for arg, cla in [(q_arg, queries or targets)] + ([(t_arg, targets)] if queries else []):
        if MISC_CLASS in cla.class_names:  # the PSB's miscellaneous class -1, warned of with its count
            n = int((cla.labels == cla.class_names.index(MISC_CLASS)).sum())
            what = "never relevant" if arg == "target_labels" else "not queries and never relevant"
            warnings.warn(f"{arg}: {n} of {len(cla.ids)} items have the label -1 (the PSB's miscellaneous class): "
                          f"{what}; they stay in the ranked lists as non-relevant items", stacklevel=2)
    rel = load_relevance(targets, queries, grades=opts.grades)
    runs = [matrix_run(run_name, "<memory>", matrix, rel, q_ids, t_ids) for run_name, matrix in matrices.items()]
    for run in runs:  # lenient: NaN cells ranked last and counted, as load_runs does
        run.drops = Counter() if opts.lenient else None
    return score(runs, rel, options=opts)


def _models(arg: str, value: Any, name: str | None) -> dict[str, tuple[str, Any]]:
    """run name -> (the argument's name in messages, the array): one run, or one per entry of a dict."""
    if not isinstance(value, Mapping):
        return {name or "run": (arg, value)}
    if name is not None:
        raise ValueError(f"name: the keys of {arg}= name the models; leave name= out")
    if not value:
        raise ValueError(f"{arg}: expected at least one model, got an empty dict")
    for key in value:
        if not isinstance(key, str) or not key.strip():
            raise ValueError(f"{arg}: expected model names as non-empty strings, got {key!r}")
    return {key: (f"{arg}[{key!r}]", v) for key, v in value.items()}


def _matrix(arg: str, value: Any, targets: tuple[str, Any] | None, shape: tuple[int, int], metric: str, dtype: str, lenient: bool) -> Any:
    """One model's distances, checked: the array or :class:`EmbeddingDistances` (``targets``: separate ones)."""
    if arg.startswith("distances"):
        matrix = _array(arg, value)
        if matrix.shape != shape:
            raise ValueError(f"{arg}: expected shape {shape} (queries x targets, from the labels), got {matrix.shape}")
        _check_numbers(arg, matrix, finite=False, nan_ok=lenient)
        return matrix
    qe = _on_host(_array(arg, value))
    te = qe if targets is None else _on_host(_array(*targets))
    sides = [(arg, qe, shape[0]), (arg if targets is None else targets[0], te, shape[1])]
    for side, e, n in sides[: 1 if te is qe else 2]:  # all-against-all: one array, checked once
        if e.ndim != 2 or e.shape[0] != n:
            raise ValueError(f"{side}: expected shape ({n}, d) (one row per label), got {e.shape}")
        _check_numbers(side, e, finite=True)
    if qe.shape[1] != te.shape[1]:
        raise ValueError(f"{sides[1][0]}: expected {qe.shape[1]} columns like the queries, got {te.shape[1]}")
    return EmbeddingDistances(qe, te, metric, np.dtype(dtype))


class EmbeddingDistances:
    """A queries x targets distance matrix computed from embeddings as rows are read (``shape``, ``dtype``,
    ``m[slice or row numbers]``: what the ranking reads of a matrix)."""

    def __init__(self, queries: np.ndarray, targets: np.ndarray, metric: str, dtype: np.dtype) -> None:
        def rows(e: np.ndarray) -> np.ndarray:  # cosine: unit vectors
            e = np.ascontiguousarray(e, dtype=dtype)
            return e / np.maximum(np.linalg.norm(e, axis=1, keepdims=True), np.finfo(dtype).tiny) if metric == "cosine" else e

        self.q = rows(queries)
        self.t = self.q if targets is queries else rows(targets)
        self.metric, self.dtype, self.shape = metric, dtype, (len(self.q), len(self.t))
        self.t_sq = np.einsum("ij,ij->i", self.t, self.t)
        #: The last matrix product: (first row, end row, q @ t.T).
        self._held: tuple[int, int, np.ndarray] | None = None

    #: Products per BLAS call: at most 256 MiB and at most an eighth of the matrix.  After each call
    #: BLAS's threads spin a while (CPU time, not wall time): few, large products cost less CPU.
    PRODUCT_BYTES = 256 << 20

    def __getitem__(self, rows: Any) -> np.ndarray:
        if not (isinstance(rows, slice) and rows.step in (None, 1)):
            q = self.q[rows]
            return self.block(q, q @ self.t.T)
        a, b, _ = rows.indices(self.shape[0])
        if self._held is None or not (self._held[0] <= a and b <= self._held[1]):
            span = min(self.PRODUCT_BYTES // max(1, self.shape[1] * self.dtype.itemsize), self.shape[0] // 8)
            end = min(self.shape[0], max(b, a + span))
            self._held = None  # the last products freed before the next are made: one held at a time
            self._held = (a, end, self.q[a:end] @ self.t.T)
        lo, _, dot = self._held
        return self.block(self.q[a:b], dot[a - lo : b - lo])

    def block(self, q: np.ndarray, dot: np.ndarray) -> np.ndarray:
        """Distances of the query rows ``q`` to every target from their products ``dot``, as a new array.

        euclidean: sqrt(max(-2 q.t + |q|^2 + |t|^2, 0)) (summed in that order); sqeuclidean: the same
        without the root; cosine: 1 - q.t of the unit vectors; inner_product: -q.t.
        """
        if self.metric == "inner_product":
            return np.negative(dot)
        if self.metric == "cosine":
            return np.subtract(1, dot)
        d = np.multiply(dot, -2)
        d += np.einsum("ij,ij->i", q, q)[:, None]
        d += self.t_sq[None, :]
        np.maximum(d, 0, out=d)
        return np.sqrt(d, out=d) if self.metric == "euclidean" else d


def _array(arg: str, value: Any) -> np.ndarray | DeviceRows:
    """A numpy view of an array-like, or :class:`DeviceRows` for a DLPack array on a device."""
    if isinstance(value, np.ndarray):
        return value
    dlpack = hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__")
    if dlpack and type(value).__module__.split(".")[0] == "torch" and getattr(value, "requires_grad", False):
        value = value.detach()  # a tensor that requires grad refuses DLPack export
    if dlpack and int(value.__dlpack_device__()[0]) != 1:  # not kDLCPU (host memory): read in blocks
        return DeviceRows(arg, value)
    try:
        return np.from_dlpack(value) if dlpack else np.asarray(value)
    except (TypeError, ValueError, BufferError, RuntimeError) as exc:
        raise ValueError(f"{arg}: expected an array of numbers, got {type(value).__name__} ({exc})") from None


class DeviceRows:
    """A 2-D array on a device (a GPU tensor) read as a matrix: ``shape``, ``dtype`` and
    ``m[slice or row numbers]``, which copies only those rows to host memory."""

    def __init__(self, arg: str, value: Any) -> None:
        self.value = value
        self.shape = tuple(int(n) for n in value.shape)
        if len(self.shape) != 2:
            raise ValueError(f"{arg}: expected a 2-D array, got shape {self.shape}")
        if self.shape[0] == 0:
            raise ValueError(f"{arg}: expected at least one row, got shape {self.shape}")
        self.dtype = _to_host(value[0:1]).dtype  # one row tells the dtype numpy sees

    def __getitem__(self, rows: Any) -> np.ndarray:
        if isinstance(rows, slice):
            return _to_host(self.value[rows])
        wanted, back = np.unique(np.asarray(rows, dtype=np.int64), return_inverse=True)
        cuts = np.flatnonzero(np.diff(wanted) != 1) + 1  # runs of consecutive rows: one slice each
        parts = [_to_host(self.value[int(r[0]) : int(r[-1]) + 1]) for r in np.split(wanted, cuts)]
        return np.concatenate(parts)[back]


def _on_host(arr: np.ndarray | DeviceRows) -> np.ndarray:
    """Embeddings in host memory: a device array copied once, block by block."""
    if not isinstance(arr, DeviceRows):
        return arr
    out = np.empty(arr.shape, dtype=arr.dtype)
    for a, block in _row_blocks(arr):
        out[a : a + len(block)] = block
    return out


def _to_host(value: Any) -> np.ndarray:
    """A host (numpy) copy of a DLPack array on any device, through its own methods only."""
    with suppress(TypeError, ValueError, BufferError, RuntimeError, AttributeError):
        return np.from_dlpack(value, device="cpu", copy=True)
    lib = type(value).__module__.split(".")[0]  # a producer without DLPack 1.0: its own method (never imported)
    if lib == "torch":
        return np.from_dlpack(value.detach().cpu())
    if lib == "cupy":
        return np.asarray(value.get())
    return np.asarray(value)


def _row_blocks(arr: np.ndarray | DeviceRows) -> Any:
    """``(first row, rows)`` of a 2-D array in blocks of :data:`DEVICE_BLOCK_BYTES`."""
    step = max(1, DEVICE_BLOCK_BYTES // max(1, arr.shape[1] * arr.dtype.itemsize))
    for a in range(0, arr.shape[0], step):
        yield a, arr[a : a + step]


def _check_numbers(arg: str, arr: np.ndarray | DeviceRows, *, finite: bool, nan_ok: bool = False) -> None:
    """One ValueError naming ``arg`` for a non-numeric dtype, a NaN (unless ``nan_ok``; or, with ``finite``, an inf)."""
    if arr.dtype.kind not in "fiu":
        raise ValueError(f"{arg}: expected numbers, got dtype {arr.dtype}")
    if arr.dtype.kind != "f" or nan_ok:
        return
    for first, block in _row_blocks(arr):
        bad = ~np.isfinite(block) if finite else np.isnan(block)
        if bad.any():
            row, col = (int(k) for k in np.argwhere(np.asarray(bad))[0])
            what = "finite numbers (no NaN or inf)" if finite else "no NaN (lenient=True ranks NaN distances last)"
            raise ValueError(f"{arg}: expected {what}, got {block[row, col]} at row {first + row}, column {col}")


def _as_classification(arg: str, value: Any, prefix: str) -> Classification:
    """A classification from labels (ids ``prefix + position``; 2-D labels, none, a missing one and two of one text
    refused), a Classification or a ``.cla`` path."""
    if isinstance(value, Classification):
        return value
    if isinstance(value, (str, os.PathLike)):
        return read_classification(value)
    shape = getattr(value, "shape", None)  # an array (numpy, a tensor, pandas) or nested lists
    if shape is not None:
        shape = tuple(int(n) for n in shape)
    elif isinstance(value, (list, tuple)) and any(isinstance(x, (list, np.ndarray)) for x in value):
        try:
            shape = np.shape(value)
        except ValueError:  # ragged rows
            shape = (len(value), "ragged")
    if shape is not None and len(shape) != 1:
        raise ValueError(
            f"{arg}: expected one label per item (shape (n,)), got shape {shape}; "
            "one-hot labels: pass labels.argmax(axis=1), a column: labels.ravel()"
        )
    if not isinstance(value, np.ndarray) and hasattr(value, "__dlpack__"):
        value = list(_to_host(value))  # a tensor of class numbers: numbers, not 0-d tensors
    raws = [x.item() if isinstance(x, np.generic) else x for x in value]
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
    names, codes = factorize(texts)
    ids = [f"{prefix}{i}" for i in range(codes.size)]
    return Classification(f"<{arg}>", names, ["0"] * len(names), ids, codes.astype(np.int32))


def _table(arg: str, value: Any, kind: str) -> Any:
    """A DataFrame with columns query, doc and ``kind`` from a DataFrame or a nested dict."""
    import pandas as pd

    if isinstance(value, dict):  # read as a DataFrame of the columns query, doc and kind
        if not all(isinstance(docs, dict) for docs in value.values()):
            raise ValueError(f"{arg}: expected a dict {{query: {{doc: {kind}}}}}: every value a dict of docs")
        rows = [(str(q), str(d), v) for q, docs in value.items() for d, v in docs.items()]
        value = pd.DataFrame(rows, columns=["query", "doc", kind])
    elif not isinstance(value, pd.DataFrame):
        raise ValueError(f"{arg}: expected a pandas DataFrame or a dict {{query: {{doc: {kind}}}}}, got {type(value).__name__}")
    frame = pd.DataFrame()
    for key in ("query", "doc", kind):
        found = [c for c in _COLUMNS[key] if c in value.columns]
        if not found:
            raise ValueError(f"{arg}: expected a column {' or '.join(_COLUMNS[key])}, got columns {list(value.columns)}")
        frame[key] = value[found[0]] if key == kind else value[found[0]].astype(str)
    if frame.empty:
        raise ValueError(f"{arg}: expected at least one row")
    values = pd.to_numeric(frame[kind], errors="coerce")
    if values.isna().any():
        row = int(values.isna().to_numpy().argmax())
        raise ValueError(f"{arg}: expected a number as {kind} in every row, got {frame[kind].iloc[row]!r} in row {row}")
    if kind == "relevance" and not (values == values.round()).all():
        raise ValueError(f"{arg}: expected whole-number grades")
    frame[kind] = values.astype(np.int64) if kind == "relevance" else values.astype(np.float64)
    for col in ("query", "doc"):
        bad = frame[col].str.contains(r"\s") | (frame[col] == "")
        if bad.any():
            row = int(bad.to_numpy().argmax())
            raise ValueError(f"{arg}: expected {col} ids without blanks, got {frame[col].iloc[row]!r} in row {row}")
    dup = frame.duplicated(["query", "doc"])
    if dup.any():
        row = int(dup.to_numpy().argmax())
        raise ValueError(f"{arg}: expected each (query, doc) pair once, got {frame['query'].iloc[row]!r}, {frame['doc'].iloc[row]!r} again in row {row}")
    return frame


def score_tables(run_value: Any, qrels_value: Any, name: str, opts: Any) -> Any:
    """Score TREC tables (checked by :func:`_table`) as TREC files written in full precision to a temporary folder
    (removed after) and read back by the TREC readers, so the numbers are the files'."""
    if name in ("", ".", "..") or "/" in name or os.sep in name or "\0" in name:
        raise ValueError(f"name: expected a run name that is a file name (no '/'), got {name!r}")
    run, qrels = _table("run", run_value, "score"), _table("qrels", qrels_value, "relevance")

    with tempfile.TemporaryDirectory(prefix="shrec-score-") as tmp:
        os.mkdir(os.path.join(tmp, "run"))  # the run's file in a folder of its own: a run named 'qrels' stays apart
        run_path, qrels_path = os.path.join(tmp, "run", name), os.path.join(tmp, "qrels")
        with open(run_path, "w", encoding="utf-8") as fh:  # repr: the doubles round-trip exactly
            fh.writelines(f"{q} Q0 {d} 0 {s!r} r\n" for q, d, s in zip(run["query"], run["doc"], run["score"].tolist()))
        with open(qrels_path, "w", encoding="utf-8") as fh:
            fh.writelines(f"{q} 0 {d} {g}\n" for q, d, g in zip(qrels["query"], qrels["doc"], qrels["relevance"].tolist()))
        def named(text: str) -> str:  # messages name the arguments, not the temporary files
            return text.replace(run_path, "run=").replace(qrels_path, "qrels=")

        try:
            report = score([run_path], qrels_path, options=dataclasses.replace(opts, run_format="trec"))
        except InputError as exc:
            raise ValueError(named(str(exc))) from None
    report.warnings = [named(w) for w in report.warnings]
    report.signature["relevance"] = "qrels from memory"
    report.run_tags = {}  # the files' placeholder tag is nobody's: --format trec names the run
    return report
