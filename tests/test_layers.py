"""The package's layout is guarded: data flows one way through the pipeline.

The contracts are in pyproject.toml ([tool.importlinter]); docs/architecture.md
explains them.  A module that imports a higher layer, a reader that imports the
relevance model, or any import cycle fails here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from .conftest import ROOT

grimp = pytest.importorskip("grimp", reason="import-linter (the test extra) is not installed")
LINT = os.path.join(os.path.dirname(sys.executable), "lint-imports")


def _lint(root: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=root)
    return subprocess.run([LINT, "--config", os.path.join(root, "pyproject.toml"), "--no-cache"], cwd=root, env=env, capture_output=True, text=True, timeout=120)


def test_the_layer_contracts_are_kept():
    r = _lint(ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "3 kept, 0 broken" in r.stdout


def test_a_reader_that_imports_the_relevance_model_breaks_the_contracts(tmp_path):
    """The contracts can fail: the same tree with one upward import is refused."""
    shutil.copytree(os.path.join(ROOT, "shrec_score"), tmp_path / "shrec_score", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(os.path.join(ROOT, "pyproject.toml"), tmp_path / "pyproject.toml")
    with open(tmp_path / "shrec_score" / "io" / "text.py", "a", encoding="utf-8") as fh:
        fh.write("\nfrom ..relevance import Relevance  # noqa\n")
    r = _lint(str(tmp_path))
    assert r.returncode != 0
    assert "shrec_score.io.text -> shrec_score.relevance" in r.stdout


def test_no_import_cycle():
    graph = grimp.build_graph("shrec_score", exclude_type_checking_imports=True)
    cycles = []
    for module in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if module.startswith(imported + ".") or imported.startswith(module + "."):
                continue  # a package and its own modules
            chain = graph.find_shortest_chain(importer=imported, imported=module)
            if chain is not None:
                cycles.append(" -> ".join([module, *chain]))
    assert cycles == []
