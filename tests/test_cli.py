import io
import os

import pandas as pd
import pytest
from click.testing import CliRunner

import shrec_score
from shrec_score.cli import cli

from .conftest import SAMPLES

PSB_LIKE = os.path.join(SAMPLES, "psb-like")
CLA = """PSB 1
2 6
a 0 3
q1
q2
q3
b 0 3
q4
q5
q6
"""


def make_run(root, name, lists):
    folder = root / name
    folder.mkdir(parents=True)
    for q, lines in lists.items():
        (folder / f"{q}.txt").write_text("".join(line + "\n" for line in lines))
    return folder


@pytest.fixture
def small(tmp_path):
    (tmp_path / "c.cla").write_text(CLA)
    runs = tmp_path / "runs"
    good = {
        "q1": ["q1 0", "q2 0.1", "q3 0.2", "q4 0.3", "q5 0.4", "q6 0.5"],
        "q2": ["q2 0", "q4 0.1", "q1 0.2", "q3 0.3"],
        "q3": ["q5", "q1", "q2"],
        "q4": ["q4", "q5", "q6"],
        "q5": ["q5", "q1", "q6"],
        "q6": ["q6", "q4", "q5"],
    }
    make_run(runs, "good", good)
    return tmp_path


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_small_collection_values_through_the_cli(small):
    r = invoke(small / "runs", "--relevance", small / "c.cla", "-m", "NN,FT,AP")
    assert r.exit_code == 0, r.output
    board = pd.read_csv(io.StringIO(r.stdout))
    # hand computation, K = 2 for every query (class size 3, itself excluded):
    # q1: q2,q3 at ranks 1,2 -> NN 1, FT 1, AP 1
    # q2: q4,q1,q3 -> q1 at 2, q3 at 3 -> NN 0, FT 1/2, AP (1/2 + 2/3)/2
    # q3: q5,q1,q2 -> 2, 3 -> NN 0, FT 1/2, AP (1/2 + 2/3)/2
    # q4: q5,q6 -> NN 1, FT 1, AP 1 (and likewise q6: q4,q5)
    # q5: q1,q6 -> q6 at 2 -> NN 0, FT 1/2, AP (1/2)/2
    nn = (1 + 0 + 0 + 1 + 0 + 1) / 6
    ft = (1 + 0.5 + 0.5 + 1 + 0.5 + 1) / 6
    ap = (1 + (1 / 2 + 2 / 3) / 2 + (1 / 2 + 2 / 3) / 2 + 1 + (1 / 2) / 2 + 1) / 6
    assert board.loc[0, "run"] == "good" and board.loc[0, "queries"] == 6
    assert board.loc[0, "NN"] == pytest.approx(nn)
    assert board.loc[0, "FT"] == pytest.approx(ft)
    assert board.loc[0, "AP"] == pytest.approx(ap)


def test_demo_invocation_writes_the_three_csv_files_byte_identically(tmp_path):
    out1, out2 = tmp_path / "a", tmp_path / "b"
    for out in (out1, out2):
        r = invoke(os.path.join(PSB_LIKE, "runs"), "--relevance", os.path.join(PSB_LIKE, "classes.cla"), "--out", out)
        assert r.exit_code == 0, r.output
    names = sorted(os.listdir(out1))
    assert names == [
        ".shrec-score-manifest.json", "leaderboard.md", "leaderboard.tex", "per_class.csv", "per_query.csv", "per_query_ranking.csv",
        "per_run.csv", "pr_curve.csv", "signature.txt",
    ]
    for n in names:
        assert (out1 / n).read_bytes() == (out2 / n).read_bytes()
    pq = pd.read_csv(out1 / "per_query.csv", dtype={"query": str})
    assert list(pq.columns) == ["run", "query", "class", "NN", "FT", "ST", "E", "DCG", "AP"]
    per_run = pd.read_csv(out1 / "per_run.csv")
    assert list(per_run.columns) == ["run", "queries", "NN", "FT", "ST", "E", "DCG", "AP"]
    assert set(per_run["run"]) == {"MVCNN", "LFD", "SHD", "D2"}
    # per-run means equal the means of per_query.csv (full precision round trip)
    for run, sub in pq.groupby("run"):
        row = per_run[per_run["run"] == run].iloc[0]
        for m in ["NN", "FT", "ST", "E", "DCG", "AP"]:
            assert row[m] == pytest.approx(sub[m].mean(), rel=1e-15)
    pr = pd.read_csv(out1 / "pr_curve.csv")
    assert list(pr.columns) == ["run", "recall", "precision"] and len(pr) == 4 * 20
    # the sample's runs are of clearly different quality: MVCNN best, D2 worst on mAP
    best = per_run.sort_values("AP", ascending=False)["run"].tolist()
    assert best == ["MVCNN", "LFD", "SHD", "D2"]


def test_leaderboard_sorted_by_sort_measure_and_stdout_formats(small):
    args = [small / "runs", "--relevance", small / "c.cla"]
    j = invoke(*args, "--format", "json")
    assert j.exit_code == 0 and '"leaderboard"' in j.output and '"version": "' in j.output
    md = invoke(*args, "--format", "markdown", "-m", "NN,AP")
    assert md.output.splitlines()[0] == "| rank | run | queries | NN | mAP |"
    # one run: every value is the best of its column, in bold
    assert md.output.splitlines()[2].startswith("| 1 | good | 6 | **0.5000** | **")
    pq = invoke(*args, "--per-query", "--format", "csv", "-m", "NN")
    rows = pd.read_csv(io.StringIO(pq.stdout))
    assert rows["NN"].tolist() == [1, 0, 0, 1, 0, 1]


def test_rich_table_golden(small):
    from rich.console import Console

    report = shrec_score.score([small / "runs"], small / "c.cla", measures=["NN", "FT"])
    buf = io.StringIO()
    report.to_rich(Console(file=buf, width=100, color_system=None))
    lines = [ln.rstrip() for ln in buf.getvalue().splitlines()]
    assert lines[0].strip() == "shrec-score leaderboard, sorted by NN"
    assert lines[2:5] == [
        "  rank   run    queries       NN       FT",
        " ─────────────────────────────────────────",
        "     1   good         6   0.5000   0.7500",
    ]
    # the signature once, under the table (issue 31.17: no caption repeating part of it)
    text = " ".join(ln.strip() for ln in lines[5:] if ln.strip())
    assert text == report.signature_text()
    assert report.signature_text().startswith(f"shrec-score {shrec_score.__version__}; mode: all-against-all; ")
    for setting in ("ties: lists: file order", "e_depth: 32", "pr_levels: 20 levels", "averaging: micro"):
        assert setting in report.signature_text()


def bad(small, *extra, out=True):
    args = [small / "runs", "--relevance", small / "c.cla", *extra]
    if out:
        args += ["--out", small / "results"]
    r = CliRunner().invoke(cli, [str(a) for a in args])
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)
    msg = r.output.strip()
    assert len(msg.splitlines()) == 1 and msg.startswith("Error: ")
    assert not (small / "results").exists()
    return msg[len("Error: ") :]


def test_error_header_count_mismatch(small):
    (small / "c.cla").write_text(CLA.replace("2 6", "2 7"))
    assert bad(small) == f"{small / 'c.cla'}:2: header declares 7 models, got 6 model ids"


def test_error_duplicate_model_id(small):
    (small / "c.cla").write_text(CLA.replace("q6\n", "q1\n").replace("2 6", "2 6"))
    assert bad(small) == f"{small / 'c.cla'}:10: expected each model id once; 'q1' is already listed in class 'a' at line 4"


def test_error_unknown_target_in_a_run(small):
    (small / "runs" / "good" / "q3.txt").write_text("q5\nq9\nq2\n")
    assert bad(small) == f"{small / 'runs' / 'good' / 'q3.txt'}:2: expected a target id of the collection, got unknown id 'q9'"


def test_error_duplicate_target_in_one_list(small):
    (small / "runs" / "good" / "q4.txt").write_text("q4\nq5 0.1\nq6 0.2\nq5 0.3\n")
    assert bad(small) == f"{small / 'runs' / 'good' / 'q4.txt'}:4: expected each target once; 'q5' is already ranked at line 2"


def test_error_query_file_with_no_matching_query(small):
    (small / "runs" / "good" / "q7.txt").write_text("q1\n")
    msg = bad(small)
    assert msg == f"{small / 'runs' / 'good' / 'q7.txt'}: expected a file named after a query id (with or without extension), got no query 'q7' in the classification"


def test_error_missing_query_file_and_bad_distance_and_bad_measure(small):
    os.remove(small / "runs" / "good" / "q6.txt")
    assert "run 'good' has none for 1 of 6 queries, got first missing: 'q6'" in bad(small)
    (small / "runs" / "good" / "q6.txt").write_text("q6\nq4 x\n")
    assert bad(small) == f"{small / 'runs' / 'good' / 'q6.txt'}:2: expected a number as distance, got 'x'"
    (small / "runs" / "good" / "q6.txt").write_text("q6\nq4\n")
    assert bad(small, "-m", "NN,XX") == "unknown measure 'XX'; see 'shrec-score measures'"
    assert "expected --sort to name a measure that is computed (NN, FT)" in bad(small, "-m", "NN,FT", "--sort", "AP")


def test_shrec2012_header_line_is_skipped_and_extension_optional(tmp_path):
    (tmp_path / "t.cla").write_text("PSB 1\n1 2\nx 0 2\nt1\nt2\n")
    (tmp_path / "q.cla").write_text("PSB 1\n1 1\nx 0 1\ns1\n")
    make_run(tmp_path / "runs", "r", {"s1": ["s1", "t2 0.5", "t1 0.7"]})
    os.rename(tmp_path / "runs" / "r" / "s1.txt", tmp_path / "runs" / "r" / "s1")
    r = invoke(tmp_path / "runs" / "r", "--relevance", tmp_path / "t.cla", "--queries", tmp_path / "q.cla", "-m", "NN,FT")
    assert r.exit_code == 0, r.output
    board = pd.read_csv(io.StringIO(r.stdout))
    assert board.loc[0, "run"] == "r" and board.loc[0, "NN"] == 1.0 and board.loc[0, "FT"] == 1.0


def test_k_zero_queries_are_listed_empty_and_counted_in_a_warning(tmp_path):
    (tmp_path / "t.cla").write_text("PSB 1\n1 2\nx 0 2\nt1\nt2\n")
    (tmp_path / "q.cla").write_text("PSB 1\n2 2\nx 0 1\ns1\ny 0 1\ns2\n")
    make_run(tmp_path / "runs", "r", {"s1": ["t1", "t2"], "s2": ["t1", "t2"]})
    r = CliRunner().invoke(
        cli, [str(tmp_path / "runs"), "-r", str(tmp_path / "t.cla"), "-q", str(tmp_path / "q.cla"), "--per-query", "--format", "csv"]
    )
    assert r.exit_code == 0
    assert "warning: 1 of 2 queries have no relevant target (K = 0, first: 's2')" in r.stderr
    rows = pd.read_csv(io.StringIO(r.stdout))
    assert rows["NN"].isna().tolist() == [False, True]


def test_measures_command_lists_every_measure_and_every_command_has_help():
    r = invoke("measures")
    for name in ["NN", "FT", "ST", "E", "DCG", "AP", "RR", "P@k", "R@k"]:
        assert any(line.split()[0] == name for line in r.output.splitlines()), name
    for cmd in cli.commands.values():
        assert cmd.help, cmd.name
        assert invoke(cmd.name, "--help").exit_code == 0


@pytest.mark.parametrize("fmt", ["markdown", "latex"])
def test_per_query_prints_the_per_query_table_in_markdown_and_latex(small, fmt):
    # bug hunt: --per-query did nothing with --format markdown or latex
    make_run(small / "runs", "perfect", {q: [t for t in ("q1", "q2", "q3", "q4", "q5", "q6") if t != q and (t <= "q3") == (q <= "q3")] for q in ("q1", "q2", "q3", "q4", "q5", "q6")})
    base = [small / "runs", "-r", small / "c.cla", "-m", "AP", "--format", fmt, "--quiet"]
    board, both = invoke(*base), invoke(*base, "--per-query")
    assert board.exit_code == 0 and both.exit_code == 0, both.output
    assert both.stdout.startswith(board.stdout)  # the leaderboard unchanged, then the per-query table
    # AP per query of "good" (hand computation of test_small_collection_values_through_the_cli); "perfect"
    # ranks both classmates first: AP 1; columns in leaderboard order (perfect, then good)
    good = {"q1": 1, "q2": (1 / 2 + 2 / 3) / 2, "q3": (1 / 2 + 2 / 3) / 2, "q4": 1, "q5": (1 / 2) / 2, "q6": 1}
    rows = [(q, "a" if q <= "q3" else "b", f"{1:.4f}", f"{ap:.4f}") for q, ap in good.items()]
    added = both.stdout[len(board.stdout):].splitlines()
    if fmt == "markdown":
        assert added == [
            "", "**mAP per query**", "", "| query | class | perfect | good |", "|:---|:---|---:|---:|",
            *("| " + " | ".join(r) + " |" for r in rows),
        ]
    else:
        assert added[added.index("\\midrule") + 1 :] == ["\\endhead", *(" & ".join(r) + " \\\\" for r in rows), "\\bottomrule", "\\end{longtable}"]
        assert "query & class & perfect & good \\\\" in added and "\\begin{longtable}{llrr}" in added
