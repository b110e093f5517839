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


def imported(*args: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", PROBE, json.dumps(list(args))], capture_output=True, text=True, timeout=60)
    tail = [ln for ln in out.stderr.splitlines() if ln.startswith("IMPORTED ")]
    assert tail, out.stderr
    return json.loads(tail[-1].removeprefix("IMPORTED "))


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["score", "--help"], ["check", "--help"], ["measures", "--help"]], ids=" ".join)
def test_help_and_version_import_no_heavy_library(args):
    assert imported(*args) == []


def test_the_probe_sees_what_a_scoring_imports():
    """The same probe on a scoring: pandas is imported there (the report's
    tables), so an empty list above is not the probe failing to look."""
    assert "pandas" in imported("sample_runs/psb-like/runs", "--relevance", "sample_runs/psb-like/classes.cla", "--format", "csv")
