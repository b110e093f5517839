"""The package as a user gets it: ``python -m build`` makes an sdist and a
wheel (from the sdist), ``twine check`` passes, and the wheel installed into
a fresh virtual environment works with no source tree in sight.

The new environment borrows the dependencies (numpy, pandas...) of the
interpreter running the tests through a ``.pth`` line naming its
site-packages: a folder added that way has its own ``.pth`` files ignored,
so the editable install of the source tree is not active there and
``shrec_score`` can only come from the wheel (asserted).  The build runs
``--no-isolation`` (this interpreter's setuptools and wheel: no download).
"""

import csv
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile

import pytest

import shrec_score

from .conftest import ROOT, SAMPLES
from .test_demo import hand_nn_ft, read_cla

EVALUATE = """
import json, os, sys
import numpy as np
import shrec_score
# two classes of two; each model's nearest other model: 1, 2, 1, 2 (classes a, b, b, b)
d = np.array([[0, 1, 5, 6], [1, 0, 0.5, 6], [5, 0.5, 0, 2], [6, 6, 2, 0]], dtype=float)
report = shrec_score.evaluate(distances=d, labels=["a", "a", "b", "b"], measures=["NN", "FT"])
row = report.leaderboard.iloc[0]
print(json.dumps({"file": shrec_score.__file__, "version": shrec_score.__version__,
                  "queries": int(row["queries"]), "NN": float(row["NN"]), "FT": float(row["FT"])}))
"""


def run(args, cwd, env):
    r = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    """sdist and wheel of a copy of the source tree (the build writes nothing into the checkout)."""
    tmp = tmp_path_factory.mktemp("build")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(os.path.join(ROOT, name), src / name)
    shutil.copytree(os.path.join(ROOT, "shrec_score"), src / "shrec_score", ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp / "dist"), str(src)], tmp, env)
    found = sorted(os.listdir(tmp / "dist"))
    version = shrec_score.__version__
    assert found == [f"shrec-score-{version}.tar.gz", f"shrec_score-{version}-py3-none-any.whl"] or found == [
        f"shrec_score-{version}-py3-none-any.whl", f"shrec_score-{version}.tar.gz"], found
    return tmp / "dist"


def test_twine_check_and_the_wheels_files(dist):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    files = sorted(str(dist / name) for name in os.listdir(dist))
    r = run([sys.executable, "-m", "twine", "check", "--strict", *files], dist, env)
    assert r.stdout.count("PASSED") == 2, r.stdout
    wheel = next(f for f in files if f.endswith(".whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for data in ("shrec_score/py.typed", "shrec_score/demo/psb-like.tar.xz", "shrec_score/html/report.css",
                 "shrec_score/html/report.js", "shrec_score/html/page.html", "shrec_score/__main__.py", "shrec_score/cli/commands.py"):
        assert data in names, data
    assert not any(n.startswith(("tests/", "sample_runs/", "bench/")) for n in names)
    metadata = zipfile.ZipFile(wheel).read(f"shrec_score-{shrec_score.__version__}.dist-info/METADATA").decode()
    assert f"\nVersion: {shrec_score.__version__}\n" in metadata


def test_the_wheel_in_a_fresh_environment(dist, tmp_path):
    wheel = next(str(dist / n) for n in os.listdir(dist) if n.endswith(".whl"))
    venv = tmp_path / "venv"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp_path, env)
    python, script = str(venv / "bin" / "python"), str(venv / "bin" / "shrec-score")
    site = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp_path, env).stdout.strip()
    with open(os.path.join(site, "borrowed-dependencies.pth"), "w") as f:
        f.write(sysconfig.get_paths()["purelib"] + "\n")
    run([sys.executable, "-m", "pip", "--disable-pip-version-check", "--python", python, "install", "-q", "--no-deps", "--no-index", wheel], tmp_path, env)
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()

    assert run([script, "--version"], cwd, env).stdout == f"shrec-score, version {shrec_score.__version__}\n"
    helped = run([python, "-m", "shrec_score", "--help"], cwd, env).stdout
    assert helped.startswith("Usage: shrec-score ") and "demo" in helped and "check" in helped

    r = run([script, "demo", "out", "--format", "csv"], cwd, env)
    assert r.stdout.splitlines()[0] == "rank,run,queries,NN,FT,ST,E,DCG,AP"
    rows = {row["run"]: row for row in csv.DictReader(open(cwd / "out" / "results" / "per_run.csv"))}
    assert sorted(rows) == ["D2", "LFD", "MVCNN", "SHD"] and {row["queries"] for row in rows.values()} == {"152"}
    cls = read_cla(os.path.join(SAMPLES, "psb-like", "classes.cla"))
    for name, row in rows.items():  # NN and FT counted by hand from the sample's ranked lists
        nn, ft = hand_nn_ft(os.path.join(SAMPLES, "psb-like", "runs", name), cls)
        assert float(row["NN"]) == nn and abs(float(row["FT"]) - ft) < 1e-12, name
    assert float(rows["MVCNN"]["NN"]) == 148 / 152

    import json

    got = json.loads(run([python, "-c", EVALUATE], cwd, env).stdout)
    assert got["file"].startswith(str(venv)), got["file"]  # the wheel's copy, not the source tree's
    assert got["version"] == shrec_score.__version__
    assert got == {**got, "queries": 4, "NN": 2 / 4, "FT": 2 / 4}  # K = 1 per query: FT = NN
