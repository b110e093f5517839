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
    if any("{shared}" in a or "{gen}" in a for a in argv) and gen is None:
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
    for f in stored:
        with gzip.open(os.path.join(GOLDEN, case, f + ".gz")) as fh:
            old = read_csv(fh.read())
        new = read_csv((out / f).read_bytes())
        assert_same_table(f"{case}/{f}", old, new)
