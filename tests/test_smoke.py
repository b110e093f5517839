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
for name in ("scipy", "sklearn", "pytrec_eval", "hypothesis", "matplotlib", "ranx", "pytest"):
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


def test_the_console_entry_ends_with_complete_output_and_its_exit_status(tmp_path):
    """The console entry point: the output whole and the exit status kept."""
    entry = "import sys; from shrec_score.cli import main; sys.argv = ['shrec-score'] + sys.argv[1:]; main()"
    args = ["sample_runs/psb-like/runs", "-r", "sample_runs/psb-like/classes.cla", "--format", "csv", "--out", str(tmp_path / "o")]
    r = subprocess.run([sys.executable, "-c", entry, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    table = r.stdout.splitlines()
    assert table[0].startswith("rank,run,queries,") and len(table) == 1 + len(os.listdir(os.path.join(ROOT, "sample_runs/psb-like/runs")))
    assert (tmp_path / "o" / "per_run.csv").read_text().splitlines()[0].startswith("run,")
    r = subprocess.run([sys.executable, "-c", entry, "sample_runs/psb-like/runs", "-r", "missing.cla"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.strip().endswith("missing.cla: expected a readable file, got No such file or directory")


def test_main_called_from_python_returns_through_systemexit_and_atexit_runs(tmp_path):
    """The library never ends its host process itself: cProfile, coverage,
    atexit handlers and a caller's finally all see a normal exit."""
    code = "\n".join([
        "import atexit, sys",
        "from shrec_score.cli import main",
        "atexit.register(lambda: print('atexit ran', flush=True))",
        "try:",
        f"    main(['sample_runs/psb-like/runs', '-r', 'sample_runs/psb-like/classes.cla', '--format', 'csv', '--out', {str(tmp_path / 'o')!r}])",
        "except SystemExit as stop:",
        "    print('exit', stop.code)",
        "finally:",
        "    print('finally ran')",
    ])
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-3:] == ["exit 0", "finally ran", "atexit ran"]
    assert r.stdout.startswith("rank,run,queries,")
    r = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(tmp_path / "prof"), "-m", "shrec_score.cli", "measures"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and (tmp_path / "prof").stat().st_size > 0, r.stderr  # the profile was written


def test_every_command_is_in_the_readme():
    """Every command in the README; every option of score in docs/usage.md, the option reference."""
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    assert readme.startswith("# shrec-score\n\n```\nmake demo")
    lines = readme.splitlines()
    assert lines[3].startswith("make demo") and lines[4].startswith("make test")
    for name in cli.commands:
        assert f"shrec-score {name}" in readme, name
    usage = open(os.path.join(ROOT, "docs", "usage.md"), encoding="utf-8").read()
    for name in cli.commands:
        assert f"shrec-score {name}" in usage, name
    for option in cli.commands["score"].params:
        for opt in [*getattr(option, "opts", []), *getattr(option, "secondary_opts", [])]:
            if opt.startswith("--"):
                assert opt in usage, opt
    assert CliRunner().invoke(cli, ["--help"]).exit_code == 0
