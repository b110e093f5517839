"""shrec-score benchmark: `make bench` (inputs generated here, nothing large committed).

Cases (issue 7), each run several times, medians and ratios measured in this run
(a reference and shrec-score run in turn, so the shared machine's changes of
speed fall on both):

1. matrix   10,000 x 10,000 float32 .npy, all-against-all, 100 classes of 100;
            NN FT ST E DCG AP + PR curve through the CLI, against
            numpy.argsort(matrix, axis=1) in this process; peak RSS of the CLI.
2. trec     10,000 queries x 1,000 ranked targets (10M run lines), ~50 relevant
            per query; AP NN FT P@10 NDCG@10 through the CLI, against
            pandas.read_csv of the two files in this process, and against
            ranx, ir_measures' CLI and pytrec_eval, each end to end in a fresh
            process (ranx's numba cache warmed first).
3. contest  SHREC 2006 shape: 30 queries, 1,814 targets, 17 ranked-list runs,
            graded (sister classes): the whole CLI process, wall time.
4. kendall  tau-b of one group of 100,000 items with ties.

    python bench/run_bench.py [--cases matrix,trec,contest,kendall] [--repeat 3] [--no-peers]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "_data")
BIN = os.path.dirname(sys.executable)
CLI = os.path.join(BIN, "shrec-score")

RSS_WRAPPER = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
    "wall = time.perf_counter() - t\n"
    "print(wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.returncode)\n"
)


def run_measured(cmd: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (bytes) of a command run in a fresh process."""
    out = subprocess.run([sys.executable, "-c", RSS_WRAPPER, *cmd], capture_output=True, text=True, check=True)
    wall, rss_kb, rc = out.stdout.split()
    if rc != "0":
        raise SystemExit(f"command failed ({rc}): {' '.join(cmd)}")
    return float(wall), int(rss_kb) * 1024


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def line(case: str, ours: float, ref_name: str, ref: float, target: str, ok: bool, extra: str = "") -> None:
    print(f"{case:<9} shrec-score {ours:7.3f} s | {ref_name} {ref:7.3f} s | ratio {ours / ref:5.2f} | target {target:<14} {'OK' if ok else 'MISSED'} {extra}", flush=True)


# -- case 1: matrix --------------------------------------------------------------


def make_matrix(n: int = 10_000, per_class: int = 100) -> tuple[str, str]:
    folder = os.path.join(DATA, f"matrix{n}")
    npy, cla = os.path.join(folder, "run.npy"), os.path.join(folder, "classes.cla")
    if os.path.exists(npy) and os.path.exists(cla):
        return npy, cla
    os.makedirs(folder, exist_ok=True)
    n_classes = n // per_class
    with open(cla, "w") as fh:
        fh.write(f"PSB 1\n{n_classes} {n}\n")
        for c in range(n_classes):
            fh.write(f"c{c} 0 {per_class}\n")
            fh.write("".join(f"{c * per_class + i}\n" for i in range(per_class)))
    rng = np.random.default_rng(7)
    m = np.lib.format.open_memmap(npy + ".tmp", mode="w+", dtype=np.float32, shape=(n, n))
    labels = np.arange(n) // per_class
    for a in range(0, n, 500):
        b = min(n, a + 500)
        block = rng.random((b - a, n), dtype=np.float32)
        block -= 0.35 * (labels[a:b, None] == labels[None, :])
        m[a:b] = np.round(block, 4)  # 4 decimals: some ties, as real descriptors have
    m.flush()
    os.replace(npy + ".tmp", npy)
    return npy, cla


def in_turn(reference, cmd: list[str], repeat: int) -> tuple[float, list[tuple[float, int]]]:
    """The reference (in this process) and our command (a fresh process) run in
    turn, so that a change in the shared machine's speed falls on both:
    the reference's median time, and our runs' (wall, peak RSS)."""
    refs, ours = [], []
    for _ in range(repeat):
        t = time.perf_counter()
        reference()
        refs.append(time.perf_counter() - t)
        ours.append(run_measured(cmd))
    return statistics.median(refs), ours


def case_matrix(repeat: int) -> None:
    npy, cla = make_matrix()
    size = os.path.getsize(npy)
    m = np.load(npy)
    out = tempfile.mkdtemp()
    cmd = [CLI, npy, "-r", cla, "--run-format", "matrix", "-m", "NN,FT,ST,E,DCG,AP", "--out", out, "--quiet", "--format", "csv"]
    ref, runs = in_turn(lambda: np.argsort(m, axis=1), cmd, repeat)
    shutil.rmtree(out, ignore_errors=True)
    ours = statistics.median(r[0] for r in runs)
    rss = max(r[1] for r in runs)
    line("matrix", ours, "np.argsort", ref, "ratio <= 1.0", ours <= ref, f"| peak RSS {rss / 2**20:.0f} MiB = {rss / size:.2f} x matrix ({'OK' if rss <= 1.5 * size else 'MISSED'} <= 1.5)")


# -- case 2: TREC ------------------------------------------------------------------


def make_trec(n_queries: int = 10_000, depth: int = 1_000, n_rel: int = 50) -> tuple[str, str]:
    folder = os.path.join(DATA, f"trec{n_queries}")
    run, qrels = os.path.join(folder, "run.trec"), os.path.join(folder, "qrels.txt")
    if os.path.exists(run) and os.path.exists(qrels):
        return run, qrels
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(11)
    pool = 200_000
    with open(run + ".tmp", "w") as fr, open(qrels + ".tmp", "w") as fq:
        for q in range(n_queries):
            docs = rng.choice(pool, size=depth + n_rel, replace=False)
            relevant = docs[depth:]  # n_rel documents not in the list ...
            ranked = docs[:depth].copy()  # ... half of which replace documents at random ranks
            hit_pos = np.sort(rng.choice(depth, size=n_rel // 2, replace=False))
            ranked[hit_pos] = relevant[: n_rel // 2]
            scores = np.round(np.sort(rng.random(depth))[::-1] * 100, 3)
            qid = f"q{q}"
            fr.write("".join(f"{qid} Q0 D{d} {i + 1} {s:.3f} bench\n" for i, (d, s) in enumerate(zip(ranked, scores))))
            fq.write("".join(f"{qid} 0 D{d} 1\n" for d in relevant))
    os.replace(run + ".tmp", run)
    os.replace(qrels + ".tmp", qrels)
    return run, qrels


PEER_RANX = """
import sys
from ranx import Qrels, Run, evaluate
q = Qrels.from_file(sys.argv[1], kind="trec")
r = Run.from_file(sys.argv[2], kind="trec")
evaluate(q, r, ["map", "precision@1", "r-precision", "precision@10", "ndcg@10"])
"""
PEER_PYTREC = """
import sys, pytrec_eval
with open(sys.argv[1]) as f:
    q = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f:
    r = pytrec_eval.parse_run(f)
pytrec_eval.RelevanceEvaluator(q, {"map", "P", "Rprec", "ndcg_cut"}).evaluate(r)
"""


def case_trec(repeat: int, peers: bool) -> None:
    import pandas as pd

    run, qrels = make_trec()

    def read_both() -> None:
        pd.read_csv(run, sep=" ", header=None)
        pd.read_csv(qrels, sep=" ", header=None)

    cmd = [CLI, run, "-r", qrels, "--run-format", "trec", "-m", "AP,NN,FT,P@10,NDCG@10", "--quiet", "--format", "csv"]
    ref, measured = in_turn(read_both, cmd, repeat)
    ours = statistics.median(t for t, _ in measured)
    rss = max(r for _, r in measured)
    size = os.path.getsize(run) + os.path.getsize(qrels)
    line("trec", ours, "pandas.read_csv", ref, "ratio <= 2.0", ours <= 2 * ref, f"| peak RSS {rss / 2**20:.0f} MiB ({rss / size:.2f}x the files)")
    if not peers:
        return
    peer_cmds = {
        "ranx": [sys.executable, "-c", PEER_RANX, qrels, run],
        "ir_measures": [os.path.join(BIN, "ir_measures"), qrels, run, "AP P@1 Rprec P@10 nDCG@10"],
        "pytrec_eval": [sys.executable, "-c", PEER_PYTREC, qrels, run],
    }
    for name, pcmd in peer_cmds.items():
        try:
            if name == "ranx":
                run_measured(pcmd)  # warm numba's on-disk cache, as a returning user meets it
            t = statistics.median(run_measured(pcmd)[0] for _ in range(max(1, repeat - 1)))
        except (subprocess.CalledProcessError, FileNotFoundError, SystemExit) as exc:
            print(f"trec      peer {name}: not run ({exc})", flush=True)
            continue
        print(f"trec      shrec-score {ours:7.3f} s | {name:<15} {t:7.3f} s | speed-up {t / ours:5.1f}x | target >= 4x          {'OK' if t >= 4 * ours else 'MISSED'}", flush=True)


# -- case 3: contest scale ----------------------------------------------------------


def make_contest(n_runs: int = 17, n_queries: int = 30, n_targets: int = 1814) -> tuple[str, str, str]:
    folder = os.path.join(DATA, "shrec2006")
    cla, qcla, runs = os.path.join(folder, "targets.cla"), os.path.join(folder, "queries.cla"), os.path.join(folder, "runs")
    if os.path.exists(os.path.join(folder, "done")):
        return cla, qcla, runs
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(runs)
    rng = np.random.default_rng(2006)
    parents = [f"p{i}" for i in range(40)]
    leaves = [(f"c{i}", parents[i % 40]) for i in range(160)]
    labels = np.sort(rng.integers(0, len(leaves), n_targets))
    ids = [str(1000 + i) for i in range(n_targets)]
    with open(cla, "w") as fh:
        fh.write(f"PSB 1\n{len(parents) + len(leaves)} {n_targets}\n")
        for p in parents:
            fh.write(f"{p} 0 0\n")
        for c, (name, parent) in enumerate(leaves):
            members = [ids[i] for i in np.flatnonzero(labels == c)]
            fh.write(f"{name} {parent} {len(members)}\n" + "".join(m + "\n" for m in members))
    q_labels = rng.choice(np.unique(labels), n_queries)
    with open(qcla, "w") as fh:
        used = sorted(set(int(c) for c in q_labels))
        fh.write(f"PSB 1\n{len(parents) + len(used)} {n_queries}\n")
        for p in parents:
            fh.write(f"{p} 0 0\n")
        for c in used:
            members = [f"q{i}" for i in np.flatnonzero(q_labels == c)]
            fh.write(f"{leaves[c][0]} {leaves[c][1]} {len(members)}\n" + "".join(m + "\n" for m in members))
    for r in range(n_runs):
        folder_r = os.path.join(runs, f"R{r:02d}")
        os.makedirs(folder_r)
        for q in range(n_queries):
            d = rng.random(n_targets) + 0.5 * (labels != q_labels[q]) * (r / n_runs)
            order = np.argsort(d, kind="stable")
            with open(os.path.join(folder_r, f"q{q}.txt"), "w") as fh:
                fh.write("".join(f"{ids[j]} {d[j]:.6f}\n" for j in order))
    open(os.path.join(folder, "done"), "w").close()
    return cla, qcla, runs


def case_contest(repeat: int) -> None:
    cla, qcla, runs = make_contest()
    cmd = [CLI, runs, "-r", cla, "-q", qcla, "--grades", "sister", "--quiet", "--format", "csv"]
    run_measured(cmd)  # warm the page cache
    ours = statistics.median(run_measured(cmd)[0] for _ in range(repeat))
    line("contest", ours, "target", 1.5, "wall < 1.5 s", ours < 1.5)


# -- case 4: Kendall ---------------------------------------------------------------


def case_kendall(repeat: int) -> None:
    from shrec_score.measures.kendall import kendall_tau_b

    rng = np.random.default_rng(4)
    x = rng.integers(0, 1000, 100_000).astype(float)
    y = x + rng.normal(0, 300, 100_000).round()
    ours = median_time(lambda: kendall_tau_b(x, y), repeat)
    line("kendall", ours, "target", 0.2, "< 0.2 s", ours < 0.2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="kendall,contest,matrix,trec")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-peers", action="store_true")
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, numpy {np.__version__}", flush=True)
    for case in args.cases.split(","):
        if case == "matrix":
            case_matrix(args.repeat)
        elif case == "trec":
            case_trec(args.repeat, not args.no_peers)
        elif case == "contest":
            case_contest(args.repeat)
        elif case == "kendall":
            case_kendall(args.repeat)
        else:
            raise SystemExit(f"unknown case {case!r}")


if __name__ == "__main__":
    main()
