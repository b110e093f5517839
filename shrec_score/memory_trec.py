"""TREC runs and qrels held in memory for :func:`shrec_score.evaluate` (DataFrames or nested dicts): checked here,
written to a temporary folder in full precision and read back by the TREC readers, so the numbers are the files'."""

from __future__ import annotations

import dataclasses
import os
import tempfile
from typing import Any

import numpy as np

from .api import score
from .errors import InputError

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
        if not all(isinstance(docs, dict) for docs in value.values()):
            raise ValueError(f"{arg}: expected a dict {{query: {{doc: {kind}}}}}: every value a dict of docs")
        rows = [(str(q), str(d), v) for q, docs in value.items() for d, v in docs.items()]
        frame = pd.DataFrame(rows, columns=["query", "doc", kind])
    elif isinstance(value, pd.DataFrame):
        frame = pd.DataFrame()
        for key in ("query", "doc", kind):
            found = [c for c in _COLUMNS[key] if c in value.columns]
            if not found:
                raise ValueError(f"{arg}: expected a column {' or '.join(_COLUMNS[key])}, got columns {list(value.columns)}")
            frame[key] = value[found[0]] if key == kind else value[found[0]].astype(str)
    else:
        raise ValueError(f"{arg}: expected a pandas DataFrame or a dict {{query: {{doc: {kind}}}}}, got {type(value).__name__}")
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
    """Score TREC tables (checked by :func:`_table`) through the file readers (a temporary folder, removed after)."""
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
