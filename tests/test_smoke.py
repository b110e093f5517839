"""The installed tool works without any optional or test-only package, and
every command is documented."""

import os
import subprocess
import sys

from click.testing import CliRunner

from shrec_score.cli import cli

from .conftest import ROOT

BLOCK = """
import sys
for name in ("scipy", "sklearn", "pytrec_eval", "hypothesis", "matplotlib", "pyarrow", "ranx", "pytest"):
    sys.modules[name] = None  # importing any of them now fails
from shrec_score.cli import main
sys.argv = ["shrec-score"] + sys.argv[1:]
main()
"""


def test_scores_without_optional_packages(tmp_path):
    for args in (
        ["sample_runs/psb-like/runs", "-r", "sample_runs/psb-like/classes.cla", "--out", str(tmp_path / "a")],
        ["--config", "configs/shrec2006.yaml", "--format", "json"],
        ["--config", "configs/sbir-kendall.yaml"],
        ["../shared/data/trec_eval/results.test" if os.path.isdir(os.path.join(ROOT, "..", "shared")) else "sample_runs/scene-image/runs",
         "-r", "../shared/data/trec_eval/qrels.test" if os.path.isdir(os.path.join(ROOT, "..", "shared")) else "sample_runs/scene-image/targets.cla",
         *([] if os.path.isdir(os.path.join(ROOT, "..", "shared")) else ["-q", "sample_runs/scene-image/image_queries.cla"])],
    ):
        r = subprocess.run([sys.executable, "-c", BLOCK, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, (args, r.stderr)
        assert r.stdout.strip(), args
    assert (tmp_path / "a" / "per_run.csv").is_file()


def test_every_command_is_in_the_readme():
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    assert readme.startswith("# shrec-score\n\n```\nmake demo")
    lines = readme.splitlines()
    assert lines[3].startswith("make demo") and lines[4].startswith("make test")
    for name in cli.commands:
        assert f"shrec-score {name}" in readme, name
    for option in cli.commands["score"].params:
        for opt in getattr(option, "opts", []):
            if opt.startswith("--"):
                assert opt in readme, opt
    assert CliRunner().invoke(cli, ["--help"]).exit_code == 0
