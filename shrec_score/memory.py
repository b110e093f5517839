"""Scoring from memory: distance matrices and embeddings with their labels.

:func:`evaluate` is :func:`shrec_score.score` for data a notebook or a
training loop holds: a (queries x targets) distance array, or embeddings
whose distances are computed block by block and never held whole.  Labels
become an in-memory classification (ids ``"0"``, ``"1"``, ... in array
order; query ids ``"q0"``, ... with separate query labels); the matrix is
ranked by the same code as a ``.npy`` file, so the numbers are the file
path's, bit for bit.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from .errors import OptionError
from .model import Classification

#: metric -> how a block of distances is computed from query rows Q and targets T.
METRICS = ("euclidean", "sqeuclidean", "cosine", "inner_product")


def evaluate(
    *,
    distances: Any = None,
    embeddings: Any = None,
    query_embeddings: Any = None,
    target_embeddings: Any = None,
    metric: str = "euclidean",
    dtype: str = "float32",
    labels: Sequence[Hashable] | None = None,
    query_labels: Sequence[Hashable] | None = None,
    target_labels: Sequence[Hashable] | None = None,
    run: Any = None,
    qrels: Any = None,
    name: str = "run",
    **options: Any,
) -> Any:
    """Score one run held in memory; returns the same :class:`~shrec_score.Report` as :func:`~shrec_score.score`.

    Parameters
    ----------
    distances : array-like, shape (n_queries, n_targets)
        Smaller = more similar.  With ``labels`` (all-against-all) a square
        matrix whose row i and column i are item i: the query is left out of
        its own list and K = |C| - 1.  With ``query_labels`` and
        ``target_labels``: rows are queries, columns targets, K = |C|.
    embeddings : array-like, shape (n, d)
        All-against-all from embeddings (with ``labels``); or
        ``query_embeddings`` (n_q, d) and ``target_embeddings`` (n_t, d) with
        ``query_labels`` and ``target_labels``.  Distances are computed a
        block of rows at a time (as the ranking asks for them) in ``dtype``:
    metric : {"euclidean", "sqeuclidean", "cosine", "inner_product"}
        ``cosine`` is 1 - cos; ``inner_product`` is the negated product
        (higher product = more similar).  Ties between computed distances
        are ranked as in any matrix: the lower column first.
    dtype : {"float32", "float64"}
        Precision of computed distances (float32 may tie where float64 would not).
    labels, query_labels, target_labels : sequence of hashable
        Class of each item (ints, strings, a pandas Categorical...).  Labels
        are compared by their text (``str``); two labels with one text are
        refused.  A label whose text is ``-1`` is the PSB's miscellaneous
        class: never a query, never relevant.
    run, qrels : pandas.DataFrame or dict
        TREC-style data instead of a matrix: ``run`` with columns query id,
        doc id, score (``query_id``/``qid``/``q_id``, ``doc_id``/``docid``/
        ``docno``, ``score``: the names of ir_measures, ranx and pytrec_eval)
        or the nested dict ``{query: {doc: score}}``; ``qrels`` likewise with
        ``relevance``/``rel``/``grade`` or ``{query: {doc: grade}}``.  Scored
        exactly as the same TREC files (they are written to a temporary
        folder, in full precision, and read back by the file readers).
    name : str
        The run's name in the report.
    **options
        Every keyword of :func:`~shrec_score.score` (``measures``,
        ``average``, ``significance``, ``settings``...), validated the same way.

    Raises
    ------
    ValueError
        A wrong shape, NaN distances, labels of the wrong length or an
        unknown metric, naming the argument, before any work is done.
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
        q_lab, t_lab = _labels("query_labels", query_labels), _labels("target_labels", target_labels)
        t_ids = [str(i) for i in range(len(t_lab))]
        q_ids = [f"q{i}" for i in range(len(q_lab))]
        targets, queries = _classification("target_labels", t_ids, t_lab), _classification("query_labels", q_ids, q_lab)
    else:
        t_lab = q_lab = _labels("labels", labels)
        t_ids = q_ids = [str(i) for i in range(len(t_lab))]
        targets, queries = _classification("labels", t_ids, t_lab), None
    shape = (len(q_lab), len(t_lab))

    matrix: np.ndarray | EmbeddingDistances
    if distances is not None:
        matrix = _array("distances", distances)
        if matrix.ndim != 2 or matrix.shape != shape:
            raise ValueError(f"distances: expected shape {shape} (queries x targets, from the labels), got {matrix.shape}")
        if matrix.dtype.kind not in "fiu":
            raise ValueError(f"distances: expected numbers, got dtype {matrix.dtype}")
        if matrix.dtype.kind == "f" and np.isnan(matrix).any():
            raise ValueError("distances: expected no NaN")
    else:
        if separate:
            if embeddings is not None or query_embeddings is None or target_embeddings is None:
                raise ValueError("embeddings: expected query_embeddings= and target_embeddings= with query_labels= and target_labels=")
            qe, te = _array("query_embeddings", query_embeddings), _array("target_embeddings", target_embeddings)
        else:
            if embeddings is None:
                raise ValueError("embeddings: expected embeddings= with labels= (all-against-all)")
            qe = te = _array("embeddings", embeddings)
        for arg, e, n in (("query_embeddings" if separate else "embeddings", qe, shape[0]), ("target_embeddings" if separate else "embeddings", te, shape[1])):
            if e.ndim != 2 or e.shape[0] != n:
                raise ValueError(f"{arg}: expected shape ({n}, d) (one row per label), got {e.shape}")
            if not np.isfinite(e).all():
                raise ValueError(f"{arg}: expected finite numbers (no NaN or inf)")
        if qe.shape[1] != te.shape[1]:
            raise ValueError(f"target_embeddings: expected {qe.shape[1]} columns like the queries, got {te.shape[1]}")
        matrix = EmbeddingDistances(qe, te, metric, np.dtype(dtype))

    rel = load_relevance(targets, queries, grades=opts.grades)
    run = matrix_run(name, "<memory>", matrix, rel, q_ids if separate else t_ids, t_ids)
    return score([run], rel, options=opts)


class EmbeddingDistances:
    """A (queries x targets) distance matrix computed on demand from embeddings.

    Supports what the ranking reads of a matrix: ``shape``, ``dtype`` and
    row selection (a slice or an array of rows), each returning a computed
    block; the full matrix is never built.
    """

    def __init__(self, queries: np.ndarray, targets: np.ndarray, metric: str, dtype: np.dtype) -> None:
        self.q = np.ascontiguousarray(queries, dtype=dtype)
        self.t = np.ascontiguousarray(targets, dtype=dtype)
        self.metric = metric
        self.dtype = dtype
        self.shape = (len(self.q), len(self.t))
        if metric == "cosine":
            self.q = self.q / np.maximum(np.linalg.norm(self.q, axis=1, keepdims=True), np.finfo(dtype).tiny)
            self.t = self.t / np.maximum(np.linalg.norm(self.t, axis=1, keepdims=True), np.finfo(dtype).tiny)
        self.t_sq = np.einsum("ij,ij->i", self.t, self.t)

    def __getitem__(self, rows: Any) -> np.ndarray:
        return self.block(self.q[rows])

    def block(self, q: np.ndarray) -> np.ndarray:
        """Distances of the query rows ``q`` to every target.

        euclidean: sqrt(max(|q|^2 + |t|^2 - 2 q.t, 0)); sqeuclidean: the same
        without the root; cosine: 1 - q.t of the unit vectors; inner_product: -q.t.
        """
        dot = q @ self.t.T
        if self.metric == "inner_product":
            return -dot
        if self.metric == "cosine":
            return 1 - dot
        sq = np.einsum("ij,ij->i", q, q)[:, None] + self.t_sq[None, :] - 2 * dot
        np.maximum(sq, 0, out=sq)
        return np.sqrt(sq) if self.metric == "euclidean" else sq


#: Column names accepted for TREC-style tables (ir_measures, ranx, pytrec_eval, trec_eval's docs).
_COLUMNS = {
    "query": ("query_id", "qid", "q_id", "query", "topic"),
    "doc": ("doc_id", "docid", "docno", "doc", "target_id"),
    "score": ("score", "sim"),
    "relevance": ("relevance", "rel", "grade", "label", "judgment"),
}


def _table(arg: str, value: Any, kind: str) -> Any:
    """A DataFrame with columns query, doc and ``kind`` from a DataFrame or a nested dict."""
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
    import os
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


def _array(arg: str, value: Any) -> np.ndarray:
    """A numpy view of an array-like (numpy, memmap, anything with ``__array__``)."""
    try:
        return np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{arg}: expected an array, got {type(value).__name__} ({exc})") from None


def _labels(arg: str, value: Sequence[Hashable] | None) -> list[str]:
    raws = [] if value is None else [x.item() if isinstance(x, np.generic) else x for x in list(value)]
    texts = [str(x) for x in raws]
    if not texts:
        raise ValueError(f"{arg}: expected one label per item, got none")
    seen: dict[str, Hashable] = {}
    for raw, text in zip(raws, texts):
        if seen.setdefault(text, raw) != raw:
            raise ValueError(f"{arg}: expected labels with distinct texts, got {seen[text]!r} and {raw!r} (both {text!r})")
    return texts


def _classification(arg: str, ids: list[str], labels: list[str]) -> Classification:
    names = list(dict.fromkeys(labels))
    code = {n: i for i, n in enumerate(names)}
    return Classification(f"<{arg}>", names, ["0"] * len(names), ids, np.asarray([code[x] for x in labels], dtype=np.int32))
