"""Every CSV of the stored scorings (tests/golden, written by shrec-score 0.1.0
before issue 29's simplification) comes out again: the same files, rows,
columns and text, every number equal to 1e-12 (relative, or absolute near 0).

The cases are listed in tests/golden/cases.py; those on ../shared/data skip
when it is absent.
"""

from __future__ import annotations

import gzip
import io
import os
import sys

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from shrec_score.cli import cli

from .conftest import ROOT, SHARED_DATA

sys.path.insert(0, os.path.join(ROOT, "tests", "golden"))
from cases import CASES, generate  # noqa: E402

GOLDEN = os.path.join(ROOT, "tests", "golden")

#: Issue 31.1, after 0.1.0: a measure asked for by its trec_eval name is a
#: column of that name (``-m map`` writes ``map``, 0.1.0 wrote ``AP``)...
RENAMED = {"AP": "map", "FT": "Rprec", "RR": "recip_rank", "P@5": "P.5", "P@10": "P.10", "R@10": "recall.10"}
TREC_NAMED = {"trec-all", "trec-level2", "trec-level3-zero", "trec-expected"}
#: ... and scores a topic without a relevant document 0, counted in the run's
#: mean, as trec_eval does (0.1.0 left it empty and out): topic 303 has none
#: at --rel-level 3.  tests/test_trec_names.py holds these values to
#: trec_eval's own output at every level.
NO_RELEVANT = {"trec-level3-zero": "303"}


#: After 0.1.0 (CHANGELOG.md): all-against-all, a query's Ds is the collection less the query itself, which
#: its list leaves out, so TN is one less for every query (a list of every other model: TN = 0, not 1).
TN_ONE_LESS = {"psb-like-sister"}


def as_changed_since(case: str, tables: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The stored 0.1.0 tables with the documented changes applied: issue 31.1's two, and Ds all-against-all."""
    if case in TN_ONE_LESS:
        for table in tables.values():
            for col in ("TN_highly", "TN_relevant"):
                if col in table:
                    table[col] = table[col] - 1.0
    if case not in TREC_NAMED:
        return tables
    tables = {f: t.rename(columns=RENAMED) for f, t in tables.items()}
    topic = NO_RELEVANT.get(case)
    if topic is not None:
        trec_named = [c for c in RENAMED.values() if c in tables["per_query.csv"]]
        pq = tables["per_query.csv"]
        at = pq["query"].astype(str) == topic
        pq.loc[at, trec_named] = pq.loc[at, trec_named].fillna(0.0)
        ranking = tables["per_query_ranking.csv"]
        ranking.loc[ranking["query"].astype(str) == topic, "value"] = 0.0
        per_run = tables["per_run.csv"]
        for col in trec_named:
            per_run[col] = [pq.loc[pq["run"] == run, col].mean() for run in per_run["run"]]
    return tables


@pytest.fixture(scope="module")
def gen(tmp_path_factory):
    if not os.path.isdir(SHARED_DATA):
        return None
    folder = str(tmp_path_factory.mktemp("golden-inputs"))
    generate(SHARED_DATA, folder)
    return folder


def read_csv(data: bytes) -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(data), keep_default_na=False, na_values=[""])


def assert_same_table(name: str, old: pd.DataFrame, new: pd.DataFrame) -> None:
    assert list(new.columns) == list(old.columns), name
    assert len(new) == len(old), name
    for col in old.columns:
        a, b = old[col], new[col]
        if pd.api.types.is_numeric_dtype(a) and pd.api.types.is_numeric_dtype(b):
            x, y = a.to_numpy(np.float64), b.to_numpy(np.float64)
            same_nan = np.isnan(x) == np.isnan(y)
            assert same_nan.all(), f"{name}: column {col}: empty cells moved (row {int(np.argmin(same_nan))})"
            both = ~np.isnan(x)
            close = np.abs(x[both] - y[both]) <= 1e-12 * np.maximum(1.0, np.abs(x[both]))
            assert close.all(), f"{name}: column {col}: {x[both][~close][:3]} became {y[both][~close][:3]}"
        else:
            assert a.astype(str).tolist() == b.astype(str).tolist(), f"{name}: column {col}"


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_stored_csv_files_come_out_again(case, tmp_path, gen):
    argv = CASES[case]
    configs = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--config"]
    on_shared = any("{shared}" in a or "{gen}" in a for a in argv) or any("shared/data" in open(os.path.join(ROOT, c), encoding="utf-8").read() for c in configs)
    if on_shared and gen is None:
        pytest.skip(f"../shared/data is absent ({SHARED_DATA}): case {case} skipped")
    argv = [a.format(shared=SHARED_DATA, gen=gen) for a in argv]
    out = tmp_path / "out"
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        r = CliRunner().invoke(cli, ["score", *argv, "--out", str(out), "--format", "csv", "--quiet"], catch_exceptions=False)
    finally:
        os.chdir(cwd)
    assert r.exit_code == 0, r.output
    stored = sorted(f.removesuffix(".gz") for f in os.listdir(os.path.join(GOLDEN, case)))
    written = sorted(f for f in os.listdir(out) if f.endswith(".csv"))
    assert written == stored
    old = {}
    for f in stored:
        with gzip.open(os.path.join(GOLDEN, case, f + ".gz")) as fh:
            old[f] = read_csv(fh.read())
    for f, table in as_changed_since(case, old).items():
        assert_same_table(f"{case}/{f}", table, read_csv((out / f).read_bytes()))
