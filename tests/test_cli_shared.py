"""The options score, check and ties share (issue 29; issue 31 items 2, 3
and 13), through the command line: one option group on every command, a
preset that scores also checks and reports ties, a repeated option that
adds up or is refused, and trec_eval's -q / -c answered in one line."""

from __future__ import annotations

import io
import os

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from shrec_score.cli import cli
from shrec_score.cli.inputs import SHARED, TREC_EVAL_FLAGS

from .conftest import SAMPLES

CLA = "PSB 1\n2 6\na 0 3\nq1\nq2\nq3\nb 0 3\nq4\nq5\nq6\n"
IDS = ["q1", "q2", "q3", "q4", "q5", "q6"]
QRELS = "".join(f"{q} 0 {t} {int((q[-1] <= '3') == (t[-1] <= '3'))}\n" for q in ("q1", "q4") for t in IDS)


def invoke(*args: object) -> object:
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture
def contest(tmp_path):
    """Two list runs of the 6-model collection; run "short" has no list for q6.
    p.yaml: the preset that scores them (--missing-queries skip)."""
    (tmp_path / "c.cla").write_text(CLA)
    for name in ("full", "short"):
        run = tmp_path / "runs" / name
        run.mkdir(parents=True)
        for q in IDS[: 5 if name == "short" else 6]:
            (run / f"{q}.txt").write_text("".join(f"{t} {i / 10}\n" for i, t in enumerate(t for t in IDS if t != q)))
    (tmp_path / "p.yaml").write_text("relevance: c.cla\nruns: [runs]\nmissing_queries: skip\n")
    return tmp_path


def one_line_error(r) -> str:
    assert r.exit_code == 2, r.output
    msg = r.output.strip()
    assert len(msg.splitlines()) == 1 and msg.startswith("Error: "), r.output
    return msg[len("Error: ") :]


@pytest.mark.parametrize("command", ["check", "ties"])
def test_every_command_that_reads_runs_takes_the_shared_options_with_one_wording(command):
    def shared(name):
        return {p.name: (p.opts, p.help, p.multiple) for p in cli.commands[name].params if p.name in SHARED}

    assert shared(command) == shared("score") and set(shared("score")) == set(SHARED)
    helps = invoke(command, "--help").output
    assert all("--" + key.replace("_", "-") in helps for key in SHARED)


def test_a_preset_that_scores_also_checks_and_reports_ties(contest, monkeypatch):
    monkeypatch.chdir(contest)
    scored = invoke("-c", "p.yaml", "--format", "csv", "--quiet")
    assert scored.exit_code == 0, scored.output
    assert pd.read_csv(io.StringIO(scored.stdout)).set_index("run")["queries"].to_dict() == {"full": 6, "short": 5}
    for args in (["-c", "p.yaml", "--check"], ["check", "-c", "p.yaml"], ["check", "runs", "-r", "c.cla", "--missing-queries", "zero"]):
        r = invoke(*args)
        assert r.exit_code == 0, (args, r.output)
        assert f"{os.path.join('runs', 'short')}: warning: no ranked list for query 'q6'" in r.stdout.splitlines(), args
        assert "0 error(s), 1 warning(s): the runs would score" in r.stderr, args
    strict = invoke("check", "runs", "-r", "c.cla")  # no preset: a missing query is an error, as scoring says
    assert strict.exit_code == 2 and "1 error(s), 0 warning(s): the runs would not score" in strict.stderr
    assert invoke("runs", "-r", "c.cla").exit_code == 2


def test_ties_takes_missing_queries_and_the_preset(contest, monkeypatch):
    monkeypatch.chdir(contest)
    assert invoke("ties", "runs", "-r", "c.cla").exit_code == 2  # "short" misses q6
    for args in (["ties", "-c", "p.yaml"], ["ties", "runs", "-r", "c.cla", "--missing-queries", "skip"]):
        r = invoke(*args, "--format", "csv", "-m", "NN", "-m", "FT")
        assert r.exit_code == 0, r.output
        frame = pd.read_csv(io.StringIO(r.stdout))
        assert sorted(set(frame["measure"])) == ["FT", "NN"] and sorted(set(frame["run"])) == ["full", "short"]


def test_check_with_lenient_passes_over_what_lenient_scoring_drops(contest, monkeypatch):
    monkeypatch.chdir(contest)
    (contest / "runs" / "full" / "q1.txt").write_text("q2 0.1\nzz 0.2\nq3 0.3\n")  # an unknown target id
    assert invoke("check", "runs", "-r", "c.cla", "--missing-queries", "skip").exit_code == 2
    r = invoke("check", "runs", "-r", "c.cla", "--missing-queries", "skip", "--lenient")
    assert r.exit_code == 0, r.output
    assert f"{os.path.join('runs', 'full', 'q1.txt')}:2: warning: unknown target id 'zz'" in r.stdout.splitlines()
    assert invoke("runs", "-r", "c.cla", "--missing-queries", "skip", "--lenient", "--quiet").exit_code == 0


def test_check_with_a_preset_warns_of_ties_on_its_sort_measure(tmp_path):
    (tmp_path / "t.cla").write_text("PSB 1\n2 4\na 0 2\n0\n1\nb 0 2\n2\n3\n")
    (tmp_path / "runs").mkdir()
    np.savetxt(tmp_path / "runs" / "tied.txt", np.ones((4, 4)))
    np.savetxt(tmp_path / "runs" / "apart.txt", np.arange(16, dtype=float).reshape(4, 4))
    (tmp_path / "p.yaml").write_text("relevance: t.cla\nruns: [runs]\nrun_format: matrix\nmeasures: [AP, NN]\nsort: NN\n")
    r = invoke("check", "-c", tmp_path / "p.yaml")
    assert r.exit_code == 0, r.output
    lines = [ln for ln in r.stdout.splitlines() if "ties move" in ln]
    assert len(lines) == 1 and "'tied': ties move NN " in lines[0], r.output


def test_repeated_measures_and_cutoffs_add_up(tmp_path):
    runs = os.path.join(SAMPLES, "psb-like", "runs")
    cla = os.path.join(SAMPLES, "psb-like", "classes.cla")
    once = invoke(runs, "-r", cla, "-m", "NN,FT,AP", "--format", "csv", "--quiet")
    again = invoke(runs, "-r", cla, "-m", "NN", "-m", "FT", "--measures", "AP", "--format", "csv", "--quiet")
    assert once.exit_code == 0 and once.stdout == again.stdout
    assert once.stdout.splitlines()[0] == "rank,run,queries,NN,FT,AP"
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "r.trec").write_text("".join(f"{q} Q0 {t} {i + 1} {9 - i} x\n" for q in ("q1", "q4") for i, t in enumerate(IDS)))
    base = [tmp_path / "r.trec", "-r", tmp_path / "qrels", "--format", "csv", "--quiet"]
    joined = invoke(*base, "--cutoffs", "2,4")
    assert joined.exit_code == 0, joined.output
    assert "P@2" in joined.stdout.splitlines()[0] and "R@4" in joined.stdout.splitlines()[0]
    assert invoke(*base, "--cutoffs", "2", "--cutoffs", "4").stdout == joined.stdout


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--ties", "rule", "--ties", "expected"], "--ties"),
        (["--sort", "NN", "--sort", "FT"], "--sort"),
        (["-r", "a.cla", "--relevance", "b.cla"], "--relevance"),
        (["-o", "a", "--out", "b"], "--out"),
        (["--html", "a", "--html", "b"], "--html"),
        (["--run-format", "lists", "--run-format", "matrix"], "--run-format"),
        (["--format", "csv", "--format", "json"], "--format"),
        (["--lower-is-better", "--higher-is-better"], "--lower-is-better/--higher-is-better"),
        (["--missing-queries", "skip", "--missing-queries", "zero"], "--missing-queries"),
    ],
)
def test_an_option_given_twice_is_refused_naming_it(args, flag, tmp_path):
    msg = one_line_error(invoke(tmp_path, *args))
    assert msg == f"{flag}: expected once, got 2 times (only --measures and --cutoffs add up)"
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


@pytest.mark.parametrize("command", ["check", "ties"])
def test_check_and_ties_refuse_a_repeat_too(command, tmp_path):
    assert one_line_error(invoke(command, tmp_path, "-q", "a", "-q", "b")).startswith("--queries: expected once, got 2 times")


def test_a_plain_flag_twice_is_the_flag_once():
    runs = os.path.join(SAMPLES, "psb-like", "runs")
    cla = os.path.join(SAMPLES, "psb-like", "classes.cla")
    r = invoke(runs, "-r", cla, "-m", "NN", "--quiet", "--quiet", "--format", "csv")
    assert r.exit_code == 0 and r.stdout.splitlines()[0] == "rank,run,queries,NN"


@pytest.mark.parametrize(
    ("args", "flag", "got"),
    [
        (["-q", "-m", "map"], "-q/--queries", "'-m' (no such file)"),  # trec_eval -q -m map
        (["-q", "map"], "-q/--queries", "'map' (a measure name, no file)"),
        (["-c", "-m", "map"], "-c/--config", "'-m' (no such file)"),  # trec_eval -c -m map
        (["-q", "-c", "-m", "map"], "-q/--queries", "'-c' (no such file)"),
        (["-c", "P.10"], "-c/--config", "'P.10' (a measure name, no file)"),
    ],
)
@pytest.mark.parametrize("command", ["score", "check", "ties"])
def test_trec_eval_q_and_c_are_answered_in_one_line(args, flag, got, command, tmp_path):
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "r.trec").write_text("q1 Q0 q2 1 1.0 x\n")
    msg = one_line_error(invoke(command, tmp_path / "r.trec", "-r", tmp_path / "qrels", *args))
    assert msg == f"{flag}: expected a file, got {got}; {TREC_EVAL_FLAGS}"
    assert TREC_EVAL_FLAGS == "trec_eval's -q is --per-query here; -c is --missing-queries zero"


def test_an_existing_queries_file_and_preset_are_no_trec_eval_flags(contest):
    r = invoke(contest / "runs", "-q", contest / "c.cla", "-c", contest / "p.yaml", "--format", "csv", "--quiet")
    assert r.exit_code == 0, r.output


def test_a_page_folder_named_dot_dot_something_inside_out_is_written_with_it(tmp_path):
    # "res/..page" lies inside res (it is not "res/../page"): one transaction writes both, one manifest lists it
    import json

    psb = os.path.join(SAMPLES, "psb-like")
    res = tmp_path / "res"
    r = CliRunner().invoke(cli, [os.path.join(psb, "runs"), "-r", os.path.join(psb, "classes.cla"), "--out", str(res), "--html", str(res / "..page"), "--quiet"])
    assert r.exit_code == 0, r.output
    files = json.loads((res / ".shrec-score-manifest.json").read_text())["files"]
    assert "..page/index.html" in files and "per_run.csv" in files
    assert not (res / "..page" / ".shrec-score-manifest.json").exists()


@pytest.mark.parametrize("flag", ["--out", "--plots", "--html"])
def test_a_file_given_as_an_output_folder_is_one_line_naming_it(tmp_path, flag):
    psb = os.path.join(SAMPLES, "psb-like")
    (tmp_path / "afile").write_text("mine\n")
    extra = [] if flag == "--out" else ["--out", str(tmp_path / "res")]
    r = CliRunner().invoke(cli, [os.path.join(psb, "runs"), "-r", os.path.join(psb, "classes.cla"), *extra, flag, str(tmp_path / "afile")])
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [f"Error: {tmp_path / 'afile'}: expected a folder for the output, got a file"]
    assert sorted(os.listdir(tmp_path)) == ["afile"] and (tmp_path / "afile").read_text() == "mine\n"
