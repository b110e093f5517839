"""Pre-submission check and lenient scoring."""

import io

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import shrec_score
from shrec_score.cli import cli

CLA = "PSB 1\n2 6\na 0 3\nq1\nq2\nq3\nb 0 3\nq4\nq5\nq6\n"
IDS = ["q1", "q2", "q3", "q4", "q5", "q6"]


@pytest.fixture
def broken(tmp_path):
    (tmp_path / "c.cla").write_text(CLA)
    run = tmp_path / "runs" / "r"
    run.mkdir(parents=True)
    good = {q: [t for t in IDS if t != q] for q in IDS}
    for q, ts in good.items():
        (run / f"{q}.txt").write_text("".join(f"{t} {0.1 * i:.1f}\n" for i, t in enumerate(ts)))
    # q1: unknown id at line 2, a repeat at line 4 (q3 first at line 3)
    (run / "q1.txt").write_text("q2 0.1\nzz 0.2\nq3 0.3\nq3 0.4\nq4 0.5\n")
    # q2: decreasing distance at line 2, NaN at line 3, not a number at line 4
    (run / "q2.txt").write_text("q1 0.5\nq3 0.2\nq4 nan\nq5 x\n")
    (run / "q9.txt").write_text("q1 0.1\n")  # unknown query
    (run / "q6.txt").unlink()  # missing query
    (run / "q5.txt").write_text("")  # empty list
    return tmp_path


def test_check_lists_every_problem_with_file_and_line(broken):
    r = CliRunner().invoke(cli, ["check", str(broken / "runs"), "-r", str(broken / "c.cla")])
    assert r.exit_code == 2
    run = broken / "runs" / "r"
    lines = r.stdout.splitlines()
    expected = [
        f"{run / 'q9.txt'}: error: a file for an unknown query 'q9' (files are named after query ids)",
        f"{run}: error: no ranked list for query 'q6'",
        f"{run / 'q1.txt'}:2: error: unknown target id 'zz'",
        f"{run / 'q1.txt'}:4: error: target 'q3' listed twice (first at line 3)",
        f"{run / 'q1.txt'}: note: the list ranks 3 of 5 targets",
        f"{run / 'q2.txt'}:2: warning: distance 0.2 is smaller than the one above: lists must be sorted, most similar (smallest distance) first",
        f"{run / 'q2.txt'}:3: error: distance is NaN",
        f"{run / 'q2.txt'}:4: error: distance 'x' is not a number",
        f"{run / 'q5.txt'}: error: an empty ranked list",
    ]
    for e in expected:
        assert e in lines, e
    assert "7 error(s), 1 warning(s): the runs would not score" in r.stderr
    # the same through --check
    r2 = CliRunner().invoke(cli, [str(broken / "runs"), "-r", str(broken / "c.cla"), "--check"])
    assert r2.exit_code == 2 and r2.stdout == r.stdout


def test_check_passes_clean_runs_and_notes_short_lists(tmp_path):
    (tmp_path / "c.cla").write_text(CLA)
    run = tmp_path / "r"
    run.mkdir()
    for q in IDS:
        (run / f"{q}.txt").write_text("".join(f"{t} {i}\n" for i, t in enumerate(t for t in IDS if t != q)))
    (run / "q1.txt").write_text("q2 0\nq3 1\n")
    r = CliRunner().invoke(cli, ["check", str(run), "-r", str(tmp_path / "c.cla")])
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == [f"{run / 'q1.txt'}: note: the list ranks 2 of 5 targets"]


def test_check_matrix_and_trec(tmp_path):
    (tmp_path / "c.cla").write_text(CLA)
    np.save(tmp_path / "m.npy", np.zeros((6, 5)))
    r = CliRunner().invoke(cli, ["check", str(tmp_path / "m.npy"), "-r", str(tmp_path / "c.cla")])
    assert r.exit_code == 2 and "error: expected a 6 x 6 matrix (queries x targets of the classifications), got 6 x 5" in r.stdout
    m = np.zeros((6, 6))
    m[2, 3] = np.nan
    m[4, 1] = np.inf
    np.save(tmp_path / "m.npy", m)
    r = CliRunner().invoke(cli, ["check", str(tmp_path / "m.npy"), "-r", str(tmp_path / "c.cla")])
    assert r.exit_code == 2
    assert f"{tmp_path / 'm.npy'}: error: row 3 column 4 is NaN" in r.stdout.splitlines()
    assert f"{tmp_path / 'm.npy'}: warning: row 5 column 2 is infinite" in r.stdout.splitlines()
    (tmp_path / "r.trec").write_text("q1 Q0 q2 1 0.9 t\nq1 Q0 q2 2 0.8 t\nq1 Q0 zz 3 0.7 t\nbad line\n")
    r = CliRunner().invoke(cli, ["check", str(tmp_path / "r.trec"), "-r", str(tmp_path / "c.cla")])
    out = r.stdout.splitlines()
    # worded as score words them (issue 30: one input, one answer)
    assert f"{tmp_path / 'r.trec'}:2: error: expected each target once per query; q1 q2 is already ranked at line 1" in out
    assert f"{tmp_path / 'r.trec'}:3: error: expected a target id of the collection, got unknown id 'zz'" in out
    assert f"{tmp_path / 'r.trec'}:4: error: expected \"query_id Q0 target_id rank score tag\", got 2 fields" in out
    assert f"{tmp_path / 'r.trec'}: error: expected a ranking for every query; run 'r.trec' has none for 5 of 6 queries, got first missing: 'q2'" in out


def test_check_reports_non_utf8_bytes_with_the_line(tmp_path):
    (tmp_path / "c.cla").write_text(CLA)
    run = tmp_path / "r"
    run.mkdir()
    for q in IDS:
        (run / f"{q}.txt").write_text("q1\n" if q != "q1" else "q2\n")
    (run / "q3.txt").write_bytes(b"q1 0.1\nq2 \xff0.2\n")
    r = CliRunner().invoke(cli, ["check", str(run), "-r", str(tmp_path / "c.cla")])
    assert f"{run / 'q3.txt'}:2: error: expected UTF-8 text, got byte 0xff" in r.stdout.splitlines()


def test_lenient_scores_by_the_documented_rules_and_says_what_was_dropped(broken):
    strict = CliRunner().invoke(cli, [str(broken / "runs"), "-r", str(broken / "c.cla")])
    assert strict.exit_code == 2
    r = CliRunner().invoke(cli, [str(broken / "runs"), "-r", str(broken / "c.cla"), "--lenient", "-m", "NN,AP", "--per-query", "--format", "csv"])
    assert r.exit_code == 0, r.output
    assert (
        "warning: --lenient: run 'r': 2 bad distances ignored (target kept), 1 empty ranked lists (scored 0), 1 files for unknown queries passed over, "
        "1 queries without a ranked list (scored 0), 1 repeated target ids dropped (first place kept), 1 unknown target ids dropped"
    ) in r.stderr
    pq = pd.read_csv(io.StringIO(r.stdout)).set_index("query")
    # q1 -> q2 q3 q4 after the drops: relevant q2, q3 at 1, 2
    assert pq.loc["q1", "AP"] == 1.0
    # q2 -> q1 q3 q4 q5 (q4's NaN distance ignored, q5's 'x' ignored): relevant q1, q3 at 1, 2
    assert pq.loc["q2", "AP"] == 1.0
    # q5 empty and q6 missing: 0, counted in the mean
    assert pq.loc["q5", "AP"] == 0.0 and pq.loc["q6", "AP"] == 0.0
    board = shrec_score.score([broken / "runs"], broken / "c.cla", measures=["AP"], lenient=True).leaderboard
    assert board.loc[0, "queries"] == 6 and board.loc[0, "AP"] == pytest.approx(pq["AP"].mean())


def test_lenient_matrix_nan_ranks_last_and_trec_keeps_first_place(tmp_path):
    (tmp_path / "c.cla").write_text(CLA)
    m = np.tile(np.arange(6, dtype=float), (6, 1))
    m[0, 1] = np.nan  # q1's only close same-class target becomes last
    np.save(tmp_path / "m.npy", m)
    rep = shrec_score.score([tmp_path / "m.npy"], tmp_path / "c.cla", measures=["NN", "AP"], lenient=True)
    pq = rep.per_query.set_index("query")
    # q1: columns q2 (NaN -> last) q3 q4 q5 q6 -> order q3 q4 q5 q6 q2: hits at 1 and 5
    assert pq.loc["q1", "AP"] == pytest.approx((1 / 1 + 2 / 5) / 2)
    assert any("1 NaN cells ranked last" in w for w in rep.warnings)
    (tmp_path / "r.trec").write_text("".join(f"{q} Q0 {t} 1 {9 - i} x\n" for q in IDS for i, t in enumerate(x for x in IDS if x != q)) + "q1 Q0 q2 9 0.5 x\n")
    rep = shrec_score.score([tmp_path / "r.trec"], tmp_path / "c.cla", measures=["AP"], lenient=True)
    assert rep.per_query.set_index("query").loc["q1", "AP"] == 1.0  # the repeat at score 0.5 is dropped
    assert any("1 repeated target ids dropped (first place kept)" in w for w in rep.warnings)


def test_check_matrix_lists_20_bad_cells_then_a_count(tmp_path):
    # docs/inputs.md: "Matrices list at most 20 bad cells ... then a count"; 6 x 6 with 30 bad cells
    (tmp_path / "c.cla").write_text(CLA)
    m = np.zeros((6, 6))
    m[:4, :] = np.nan  # 24 NaN cells: rows 1-4
    m[4, :] = np.inf  # 6 infinite cells: row 5
    np.save(tmp_path / "m.npy", m)
    r = CliRunner().invoke(cli, ["check", str(tmp_path / "m.npy"), "-r", str(tmp_path / "c.cla")])
    out = r.stdout.splitlines()
    assert r.exit_code == 2
    assert out[:20] == [f"{tmp_path / 'm.npy'}: error: row {1 + i // 6} column {1 + i % 6} is NaN" for i in range(20)]
    assert out[20] == f"{tmp_path / 'm.npy'}: note: 10 more problem(s) in this file not listed"


def test_check_and_score_word_a_second_list_for_a_query_alike(tmp_path):
    cla = tmp_path / "c.cla"
    cla.write_text("PSB 1\n1 2\nA 0 2\nq1\nq2\n")
    run = tmp_path / "runs" / "r"
    run.mkdir(parents=True)
    (run / "q1.txt").write_text("q2 0.1\n")
    (run / "q1.res").write_text("q2 0.1\n")
    (run / "q2.txt").write_text("q1 0.1\n")
    said = f"{run / 'q1.txt'}: expected one ranked list per query; query 'q1' also has {run / 'q1.res'}"
    scored = CliRunner().invoke(cli, [str(tmp_path / "runs"), "-r", str(cla)])
    assert scored.exit_code == 2 and scored.stderr.strip() == f"Error: {said}"
    checked = CliRunner().invoke(cli, ["check", str(tmp_path / "runs"), "-r", str(cla)])
    assert checked.exit_code == 2 and checked.stdout.splitlines()[0] == said.replace(": expected", ": error: expected", 1)
