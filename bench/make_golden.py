"""Store the numbers of shrec-score 0.1.0 for the bench's generated cases (run once).

For each case of inputs.GOLDEN_CASES (trec, trec-long, lists, matrix10k,
matrix4k) the inputs are generated as the bench makes them (seeded), scored by
the old version's CLI with ``--out``, and its per_query.csv and per_run.csv
stored gzipped without name or time (as ``gzip -n``) in bench/golden/<case>/.
run_bench.py compares every later version's CSVs to them (1e-12 relative).

It was run once, on 2026-11-25, with 0.1.0 checked out at /work/old (commit
a415799, the golden outputs of 344bbd6 before issue 29's simplification)::

    nice -n 10 /work/main/.venv/bin/python bench/make_golden.py /work/old

The old CLI runs as ``PYTHONPATH=<old checkout> <venv>/bin/shrec-score``.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import tempfile

from inputs import GOLDEN_CASES, case_args
from run_bench import CLI, GOLDEN


def main(old: str) -> None:
    env = {**os.environ, "PYTHONPATH": os.path.abspath(old)}
    where = subprocess.run([sys.executable, "-c", "import shrec_score; print(shrec_score.__file__)"], env=env, cwd="/", capture_output=True, text=True, check=True)
    if not where.stdout.startswith(os.path.abspath(old)):
        raise SystemExit(f"shrec_score comes from {where.stdout.strip()}, not from {old}")
    for case in GOLDEN_CASES:
        args = case_args(case)
        with tempfile.TemporaryDirectory(prefix=f"golden-{case}-") as out:
            subprocess.run([CLI, *args, "--out", out, "--quiet", "--format", "csv"], env=env, stdout=subprocess.DEVNULL, check=True)
            folder = os.path.join(GOLDEN, case)
            os.makedirs(folder, exist_ok=True)
            for name in ("per_query.csv", "per_run.csv"):
                with open(os.path.join(out, name), "rb") as fh:
                    data = gzip.compress(fh.read(), compresslevel=9, mtime=0)
                with open(os.path.join(folder, name + ".gz"), "wb") as fh:
                    fh.write(data)
                print(f"{case}/{name}.gz: {len(data) / 1024:.0f} KiB", flush=True)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python bench/make_golden.py OLD_CHECKOUT")
    main(sys.argv[1])
