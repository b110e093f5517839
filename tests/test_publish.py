"""What an organiser publishes (issue 31.14-17): a preset that holds the whole
publishing command, the LaTeX table, and the notes under the tables.

Everything is driven through the CLI, as an organiser runs it; the numbers
in the LaTeX tables are checked against the CSV files the same scoring
writes (read back with the csv module).
"""

from __future__ import annotations

import csv
import os

import pytest
from click.testing import CliRunner

from shrec_score.cli import cli

from .conftest import SAMPLES

EPOCH = "1795392000"  # 2026-11-23


def run(*args: object, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, [str(a) for a in args], env={"SOURCE_DATE_EPOCH": EPOCH, **(env or {})})


def read_csv(path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def preset(tmp_path, extra: str = "") -> str:
    """The SHREC 2006 sample as a preset in ``tmp_path`` with the publishing keys of ``extra``."""
    p = tmp_path / "track.yaml"
    p.write_text(
        f"relevance: {os.path.join(SAMPLES, 'psb-like', 'classes.cla')}\n"
        f"queries: {os.path.join(SAMPLES, 'shrec2006-like', 'queries.cla')}\n"
        f"runs: [{os.path.join(SAMPLES, 'shrec2006-like', 'runs')}]\n"
        "grades: sister\nrun_format: lists\nsort: ADR\n" + extra,
        encoding="utf-8",
    )
    return str(p)


PUBLISH = """out: published
plots: true
html: true
significance: true
title: "SHREC 2006 <results>"
description: |
  Thirty queries & the PSB.

  Second paragraph.
"""


# -- 14. a preset holds the whole publishing command -------------------------------------------------


def test_a_preset_holds_the_whole_publishing_command(tmp_path):
    pytest.importorskip("matplotlib", reason="plots extra: plots: true draws the figures")
    p = preset(tmp_path, PUBLISH)
    r = run("--config", p, "--resamples", "200", "--format", "csv", "--quiet")
    assert r.exit_code == 0, r.output
    out = tmp_path / "published"  # relative to the preset, like every path there
    assert (out / "per_run.csv").is_file() and (out / "significance.csv").is_file()
    assert (out / "plots" / "pr_curves.svg").is_file() and (out / "plots" / "pr_curves.png").is_file()
    page = (out / "report" / "index.html").read_text(encoding="utf-8")
    assert "<h1>SHREC 2006 &lt;results&gt;</h1>" in page
    assert '<p>Thirty queries &amp; the PSB.</p>' in page and "<p>Second paragraph.</p>" in page
    # significance: the per-run intervals are in the CSV printed on stdout
    assert "ADR_ci_low" in r.stdout.splitlines()[0]


def test_the_command_line_beats_the_preset_negatives_included(tmp_path):
    p = preset(tmp_path, PUBLISH)
    other = tmp_path / "elsewhere"
    r = run("--config", p, "--out", other, "--no-plots", "--no-significance", "--html", "--title", "Mine", "--format", "csv", "--quiet")
    assert r.exit_code == 0, r.output
    assert not (tmp_path / "published").exists()
    assert (other / "per_run.csv").is_file()
    assert not (other / "plots").exists() and not (other / "significance.csv").exists()
    assert "ADR_ci_low" not in r.stdout.splitlines()[0]
    page = (other / "report" / "index.html").read_text(encoding="utf-8")
    assert "<h1>Mine</h1>" in page and "Second paragraph." in page  # the preset's description stays
    r = run("--config", p, "--no-out", "--no-html", "--no-plots", "--format", "csv", "--quiet", "--resamples", "100")
    assert r.exit_code == 0, r.output
    assert not (tmp_path / "published").exists()
    assert "ADR_ci_low" in r.stdout.splitlines()[0]  # significance: true from the preset


@pytest.mark.parametrize("flag", ["out", "html", "plots"])
def test_a_folder_and_its_negative_together_are_refused(tmp_path, flag):
    p = preset(tmp_path)
    r = run("--config", p, f"--{flag}", tmp_path / "x", f"--no-{flag}", "--out", tmp_path / "o") if flag != "out" else run(
        "--config", p, "--out", tmp_path / "x", "--no-out"
    )
    assert r.exit_code == 2
    assert r.output.strip().splitlines()[-1] == f"Error: --{flag} and --no-{flag}: expected one of them, got both"
    assert not (tmp_path / "x").exists()


def test_significance_and_no_significance_together_are_refused(tmp_path):
    r = run("--config", preset(tmp_path), "--significance", "--no-significance")
    assert r.exit_code == 2
    assert "Error: --significance/--no-significance: expected once, got 2 times" in r.output


@pytest.mark.parametrize(
    "extra, message",
    [
        ("significance: yes please\n", "track.yaml:7: expected 'significance' to be true or false, got 'yes please'"),
        ("title: [a, b]\n", "track.yaml:7: expected 'title' to be a text of one line, got '[\\'a\\', \\'b\\']'"),
        ("title: \"two\\nlines\"\n", "track.yaml:7: expected 'title' to be a text of one line, got 'two\\nlines'"),
        ("plots: 3\n", "track.yaml:7: expected 'plots' to be a folder path, or true for --out DIR/plots/ (false: none), got '3'"),
        ("out: true\n", "track.yaml:7: expected 'out' to be a folder path, got 'True'"),
        ("html: 12\n", "track.yaml:7: expected 'html' to be a folder path, or true for --out DIR/report/ (false: none), got '12'"),
        ("description: 5\n", "track.yaml:7: expected 'description' to be a text, got '5'"),
        ("titel: x\n", "track.yaml:7: unknown key 'titel'; expected one of: description, "),
    ],
)
def test_bad_publishing_keys_are_one_line_errors(tmp_path, extra, message):
    r = run("--config", preset(tmp_path, extra))
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], r.output


def test_html_true_without_out_says_what_it_needs(tmp_path):
    r = run("--config", preset(tmp_path, "html: true\n"), "--format", "csv")
    assert r.exit_code == 2
    assert "--html without a folder writes under --out DIR/report/: expected --out DIR (or --html DIR)" in r.output
    r = run("--config", preset(tmp_path, "plots: true\n"), "--format", "csv")
    assert r.exit_code == 2
    assert "--plots without a folder writes under --out DIR/plots/: expected --out DIR (or --plots DIR)" in r.output
