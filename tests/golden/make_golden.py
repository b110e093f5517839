"""Write tests/golden/<case>/*.csv.gz: run once, with the version the files stand for.

    python tests/golden/make_golden.py   (from the repository root, ../shared beside it)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cases import CASES, generate  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "data")
HERE = os.path.join(ROOT, "tests", "golden")


def main() -> None:
    cli = os.path.join(os.path.dirname(sys.executable), "shrec-score")
    with tempfile.TemporaryDirectory() as gen:
        generate(SHARED, gen)
        for name, args in CASES.items():
            out = os.path.join(HERE, name)
            shutil.rmtree(out, ignore_errors=True)
            argv = [a.format(shared=SHARED, gen=gen) for a in args]
            subprocess.run([cli, "score", *argv, "--out", out, "--format", "csv", "--quiet"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
            for f in os.listdir(out):  # keep the CSVs, gzipped (gzip -n: no time stamp)
                if not f.endswith(".csv"):
                    p = os.path.join(out, f)
                    shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
            subprocess.run(["gzip", "-n", *sorted(os.path.join(out, f) for f in os.listdir(out))], check=True)
            print(name, sorted(os.listdir(out)))


if __name__ == "__main__":
    main()
