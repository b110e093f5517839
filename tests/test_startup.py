"""Start-up: what each command path imports (issue 20).

A behaviour test, not a timed one (the times are in ``make bench``): the
heavy libraries are imported only by the paths that use them.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("pandas", "pyarrow", "rich", "matplotlib", "scipy")

PROBE = """
import json, sys
from shrec_score.cli import main
sys.argv = ["shrec-score", *json.loads(sys.argv[1])]
try:
    main()
except SystemExit:
    pass
sys.stdout.flush()
print("\\nIMPORTED " + json.dumps(sorted(m for m in %r if m in sys.modules)), file=sys.stderr)
""" % (HEAVY,)


def imported_and_output(*args: str) -> tuple[list[str], str]:
    """The heavy libraries a CLI call imports, and what it printed on stdout."""
    out = subprocess.run([sys.executable, "-c", PROBE, json.dumps(list(args))], capture_output=True, text=True, timeout=60)
    tail = [ln for ln in out.stderr.splitlines() if ln.startswith("IMPORTED ")]
    assert tail, out.stderr
    return json.loads(tail[-1].removeprefix("IMPORTED ")), out.stdout


def imported(*args: str) -> list[str]:
    return imported_and_output(*args)[0]


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["score", "--help"], ["check", "--help"], ["measures", "--help"]], ids=" ".join)
def test_help_and_version_import_no_heavy_library(args):
    assert imported(*args) == []


def test_the_probe_sees_what_a_scoring_imports():
    """The same probe on a scoring that needs pandas (the significance
    tests), so an empty list elsewhere is not the probe failing to look."""
    assert "pandas" in imported("sample_runs/psb-like/runs", "--relevance", "sample_runs/psb-like/classes.cla", "--format", "csv", "--significance", "--resamples", "100")


def test_csv_scoring_of_ranked_lists_imports_no_pandas():
    """``--format csv`` on a ranked-list folder: the tables are
    :class:`shrec_score.table.Table`, the CSV written without pandas."""
    assert "pandas" not in imported("sample_runs/psb-like/runs", "--relevance", "sample_runs/psb-like/classes.cla", "--format", "csv")


def test_out_folder_of_a_matrix_run_imports_no_pandas(tmp_path):
    """``--out DIR`` of a small .npy matrix (every CSV file, Markdown and
    LaTeX), with ``-m``: no pandas; and the files are there and complete."""
    import numpy as np

    n = 12
    ids = [f"m{i}" for i in range(n)]
    cla = tmp_path / "c.cla"
    cla.write_text("PSB 1\n3 12\n\n" + "".join(f"c{c} 0 4\n" + "".join(f"{ids[c * 4 + j]}\n" for j in range(4)) + "\n" for c in range(3)))
    np.save(tmp_path / "run.npy", np.random.default_rng(0).random((n, n)).astype(np.float32))
    out = tmp_path / "out"
    got = imported(str(tmp_path / "run.npy"), "-r", str(cla), "--run-format", "matrix", "-m", "NN,AP,P@5", "--out", str(out), "--quiet", "--format", "csv")
    assert "pandas" not in got
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == [
        "leaderboard.md", "leaderboard.tex", "per_class.csv", "per_query.csv", "per_query_ranking.csv", "per_run.csv", "pr_curve.csv", "signature.txt",
    ]
    rows = (out / "per_query.csv").read_text().splitlines()
    assert rows[0] == "run,query,class,NN,AP,P@5" and len(rows) == 1 + n


@pytest.mark.parametrize("tag", ["run1", "COMPILED (ID:425883)"], ids=["six-fields", "tag-with-spaces"])
def test_csv_scoring_of_a_trec_run_imports_no_pandas(tmp_path, tag):
    """A TREC run with ClueWeb-like 25-byte ids (hashed as words) read by
    pyarrow, on its regular path and, with a tag holding spaces, on the
    field-splitting one: pyarrow builds no array from Python objects (its
    pa.array/pa.scalar import pandas), and the scores are the qrels'."""
    run, qrels = tmp_path / "run.trec", tmp_path / "qrels.txt"
    doc = "clueweb09-en{:04d}-{:02d}-{:05d}".format
    lines, judged = [], []
    for q in range(40):
        for r in range(60):
            lines.append(f"{q} Q0 {doc(q, r % 7, r)} {r + 1} {100 - r / 10:.4f} {tag}\n")
        judged += [f"{q} 0 {doc(q, r % 7, r)} {int(r % 3 == 0)}\n" for r in range(0, 90, 2)]
    run.write_text("".join(lines))
    qrels.write_text("".join(judged))
    got, stdout = imported_and_output(str(run), "-r", str(qrels), "--run-format", "trec", "-m", "P@10,num_rel_ret", "--format", "csv", "--quiet")
    assert "pyarrow" in got and "pandas" not in got
    # judged: even ranks r (0-based); relevant: r % 6 == 0 -> r = 0, 6 in the first 10; 10 of 60
    # retrieved a query, summed over the 40 queries as trec_eval's "all" does
    p10, rel_ret = stdout.splitlines()[1].split(",")[-2:]
    assert float(p10) == pytest.approx(0.2, abs=1e-15) and float(rel_ret) == 400, stdout


def test_a_trec_run_against_a_classification_imports_no_pandas(tmp_path):
    """A TREC run scored against a ``.cla`` looks its ids up in the closed collection
    (``index_in``, its misses filled without ``pc.fill_null``, which imports pandas)."""
    cla, run = tmp_path / "c.cla", tmp_path / "run.trec"
    cla.write_text("PSB 1\n2 6\n\nA 0 3\na1\na2\na3\n\nB 0 3\nb1\nb2\nb3\n")
    run.write_text("".join(f"{q} Q0 {d} {r} {9 - r} r\n" for q, docs in {"a1": "a2 b1 a3 b2", "b1": "b2 a1 a2 b3"}.items() for r, d in enumerate(docs.split(), 1)))
    args = [str(run), "-r", str(cla), "--run-format", "trec", "-m", "NN,FT,AP", "--format", "csv", "--lenient"]
    got, stdout = imported_and_output(*args)
    assert "pandas" not in got
    # 6 queries, 4 without a list (0 under --lenient); a1: NN 1, FT 1/2 (a2 of a2 b1), AP (1/1 + 2/3) / 2;
    # b1: NN 1, FT 1/2, AP (1/1 + 2/4) / 2
    nn, ft, ap = map(float, stdout.splitlines()[1].split(",")[-3:])
    assert nn == pytest.approx(2 / 6, abs=1e-15) and ft == pytest.approx(1 / 6, abs=1e-15)
    assert ap == pytest.approx(((1 + 2 / 3) / 2 + (1 + 2 / 4) / 2) / 6, abs=1e-15)
