"""Options refused where they would do nothing (bug hunt of session 5): each is one line naming the
option and when it applies, exit status 2, before any input is read (the runs and relevance named
here do not exist, so an error about them would mean an input was read first)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from shrec_score.cli import cli

RUNS_ORDER = "; with --relevance the order of a run is fixed: a matrix's smaller = more similar, a list's file order (docs/inputs.md)"
KENDALL_ONLY = "applies only to Kendall tau-b (--ground-truth without --relevance)"
BOTH = "expected either --ground-truth (Kendall tau-b) or --relevance (relevance measures), got both"


def one_line_error(args: list[str]) -> str:
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 2, r.output
    msg = r.output.strip()
    assert len(msg.splitlines()) == 1 and msg.startswith("Error: "), r.output
    return msg[len("Error: ") :]


@pytest.mark.parametrize(
    ("flag", "expected"),
    [
        (["--higher-is-better"], f"--higher-is-better: {KENDALL_ONLY}{RUNS_ORDER}"),
        (["--lower-is-better"], f"--lower-is-better: {KENDALL_ONLY}{RUNS_ORDER}"),
        (["--ground-truth-higher-is-better"], f"--ground-truth-higher-is-better: {KENDALL_ONLY}"),
        (["--ground-truth-lower-is-better"], f"--ground-truth-lower-is-better: {KENDALL_ONLY}"),
        (["--ground-truth", "gt.csv"], f"--ground-truth: {BOTH}"),
    ],
)
def test_a_kendall_option_next_to_relevance_is_refused(tmp_path, flag, expected):
    out = tmp_path / "out"
    assert one_line_error([str(tmp_path / "runs"), "-r", str(tmp_path / "c.cla"), "-o", str(out), *flag]) == expected
    assert not out.exists()


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        ("lower_is_better: false\n", f"'lower_is_better:' in the --config file: {KENDALL_ONLY}{RUNS_ORDER}"),
        ("ground_truth_higher_is_better: true\n", f"'ground_truth_higher_is_better:' in the --config file: {KENDALL_ONLY}"),
        ("ground_truth: gt.csv\n", f"'ground_truth:' in the --config file: {BOTH}"),
    ],
)
def test_a_kendall_key_of_a_preset_next_to_relevance_is_refused(tmp_path, lines, expected):
    (tmp_path / "gt.csv").write_text("query,item,score\n")  # a preset's paths must exist; never read here
    (tmp_path / "c.cla").write_text("")
    (tmp_path / "runs").mkdir()
    (tmp_path / "p.yaml").write_text("relevance: c.cla\nruns: [runs]\n" + lines)
    assert one_line_error(["-c", str(tmp_path / "p.yaml")]) == expected
    # the relevance given on the command line, the Kendall key in the preset: refused the same way
    (tmp_path / "k.yaml").write_text(lines)
    assert one_line_error([str(tmp_path / "runs"), "-r", str(tmp_path / "c.cla"), "-c", str(tmp_path / "k.yaml")]) == expected


RELEVANCE_ONLY = "applies only to relevance measures (--relevance), not to Kendall tau-b (--ground-truth)"


@pytest.mark.parametrize(
    "flag",
    [["--lenient"], ["-m", "AP"], ["--strip-zeros"], ["--ties", "optimistic"], ["--check"], ["--significance"], ["--plots", "p"],
     ["--cutoffs", "3"], ["--average", "macro"], ["--rank-by", "AP"], ["--missing-queries", "zero"]],
)
def test_a_relevance_option_next_to_a_ground_truth_is_refused(tmp_path, flag):
    """Kendall tau-b used none of these and said nothing (--check printed the leaderboard): a bug hunt."""
    out = tmp_path / "out"
    name = flag[0] if flag[0] != "-m" else "--measures"
    assert one_line_error([str(tmp_path / "runs"), "--ground-truth", str(tmp_path / "gt.csv"), "-o", str(out), *flag]) == f"{name}: {RELEVANCE_ONLY}"
    assert not out.exists()


def test_a_relevance_key_of_a_kendall_preset_is_refused_and_a_no_is_no_option(tmp_path):
    (tmp_path / "gt.csv").write_text("query,item,score\n")  # a preset's paths must exist; never read here
    (tmp_path / "runs").mkdir()
    (tmp_path / "k.yaml").write_text("ground_truth: gt.csv\nruns: [runs]\nstrip_zeros: true\n")
    assert one_line_error(["-c", str(tmp_path / "k.yaml")]) == f"'strip_zeros:' in the --config file: {RELEVANCE_ONLY}"
    # --no-significance and 'plots: false' say no: Kendall goes on (to the missing run folder's error)
    (tmp_path / "n.yaml").write_text("ground_truth: gt.csv\nruns: [runs]\nplots: false\n")
    assert RELEVANCE_ONLY not in one_line_error(["-c", str(tmp_path / "n.yaml"), "--no-significance"])
