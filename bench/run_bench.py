"""shrec-score benchmark: `make bench` (inputs generated here, nothing large committed).

Cases (issue 7), each run several times, medians and ratios measured in this run
(a reference and shrec-score run in turn, so the shared machine's changes of
speed fall on both):

1. matrix   10,000 x 10,000 float32 .npy, all-against-all, 100 classes of 100;
            NN FT ST E DCG AP + PR curve through the CLI, against
            numpy.argsort(matrix, axis=1) in this process; peak RSS of the CLI.
1b. matrix-sort  10,000 x 10,000 and 4,000 x 4,000 float32 .npy, all-against-all,
            classes of 20 to 50 models (issue 20): the CLI as in case 1 against a
            fresh process that np.load's the same .npy and calls np.sort(axis=1),
            alternated; wall ratio (targets 0.6 and 1.3) and CPU (user+sys) ratio.
2. trec     10,000 queries x 1,000 ranked targets (10M run lines), ~50 relevant
            per query; AP NN FT P@10 NDCG@10 through the CLI, against
            pandas.read_csv of the two files in this process, and against
            ranx, ir_measures' CLI and pytrec_eval, each end to end in a fresh
            process (ranx's numba cache warmed first), and NIST trec_eval (below).
2b. trec-long  the trec case's shape with long ids (issue 17): 10M lines over a
            pool of 200,000 ids, half ClueWeb09-like (25 bytes), half UUID-like
            (36 bytes), mixed in every list; scores with 4 decimals (ties);
            50 judgments per query graded 0-2, half of them in the list.
            Against pandas.read_csv of the two files and trec_eval, in turn
            with ours; the means are checked against trec_eval's.
            trec_eval is built once per bench run (source ../shared/tools/trec_eval
            beside the repo, copied to a temporary folder, `make` with -O2);
            without a C compiler or the source a line says why it is skipped.
3. contest  SHREC 2006 shape: 30 queries, 1,814 targets, 17 ranked-list runs,
            graded (sister classes): the whole CLI process, wall time.
4. kendall  tau-b of one group of 100,000 items with ties.
5. matrix-ties, trec-ties  (issue 19) the matrix and trec cases' files and
            measures scored with --ties expected and with the default rule,
            in turn, each in a fresh process: ratio of the medians (CPU
            user+sys and wall) <= 1.5.
6. lists    SHREC 2014 sketch-track scale (issue 20): 3 runs x 1,000 query files
            x 8,987 targets (ids M00001, distances with 6 decimals, every target
            ranked; 141 MB a run), generated into a temporary folder and removed
            after; the whole CLI against pandas.read_csv of the same files one by
            one in this process, in turn; peak RSS of the CLI.
7. startup  best wall time of the CLI on the psb-like sample (--format csv),
            and of --help and --version.
8. dask     20,000 x 20,000 float32 (1.6 GB), all-against-all, 200 classes of 100,
            generated in blocks into a temporary folder (deleted after) as .npy,
            converted to Zarr (`shrec-score convert`, blocks of 1,000 rows); the
            Zarr scored with `--dask local:2` against the .npy by the
            single-process CLI, in turn; the per-block cost (the same tasks one
            after the other in one process) for docs/scale-out.md's estimate.
            Not in the default cases (3.2 GB of disk, a minute or two): --cases dask.
9. embeddings  (issue 22) shrec_score.evaluate from 20,000 x 256 float32
            embeddings, 100 classes of 200, all-against-all (AP, DCG),
            against the obvious scikit-learn script: pairwise_distances, then
            average_precision_score and ndcg_score per query.  The script's
            per-query loop (22 ms a query here) is timed on every 20th query
            (--sample; --sample 1 runs them all) and extrapolated to 20,000;
            its pairwise_distances is timed whole.  AP is compared per query
            on those queries (equal to 1e-6); sklearn's ndcg_score (gain /
            log2(rank + 1)) is not the PSB DCG (rank 1 undiscounted, then
            gain / log2(rank)): both means are printed.  Where torch and
            torchmetrics are installed, RetrievalMAP and RetrievalNormalizedDCG
            on the same sampled queries' pairs (CPU), else a line says why not.
10. embeddings-large  100,000 x 512 float32 embeddings, 100 classes of 1,000
            and 1,000 classes of 100, all-against-all (NN, FT, ST, E, DCG,
            AP) in a fresh process: the first --rows query rows (default
            8,448) are ranked against all 100,000 targets through the real
            pipeline, then the run stops (a full run is 10^10 distances:
            20-60 min on this machine); time per query row = elapsed / rows.
            The engine measures 8,192 queries at a time, so the first
            chunk's measures are done before the stop; every later chunk
            repeats the same work, so the peak RSS of the process stands for
            the full run's (target < 2 GB).
11. embeddings-memory  50,000 x 64 embeddings all-against-all, 500 classes:
            the peak traced allocation (tracemalloc) < 1 GiB, where the full
            float32 matrix is 10 GB (too slow for the test suite, which
            checks 10,000 x 16 the same way).

    python bench/run_bench.py [--cases kendall,contest,matrix,matrix-sort,trec,trec-long,matrix-ties,trec-ties,lists,startup,dask] [--repeat 3] [--no-peers]
    python bench/run_bench.py --cases embeddings,embeddings-large,embeddings-memory [--sample 20] [--rows 8448]
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

CHILD_WRAPPER = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
    "wall = time.perf_counter() - t\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(wall, u.ru_utime + u.ru_stime, u.ru_maxrss, p.returncode)\n"
)


def run_child(cmd: list[str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + sys) and peak RSS (bytes) of a
    command run in a fresh process (the wrapper's own start-up not counted)."""
    out = subprocess.run([sys.executable, "-c", CHILD_WRAPPER, *cmd], capture_output=True, text=True, check=True)
    wall, cpu, rss_kb, rc = out.stdout.split()
    if rc != "0":
        raise SystemExit(f"command failed ({rc}): {' '.join(cmd)}")
    return float(wall), float(cpu), int(rss_kb) * 1024


def run_measured(cmd: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (bytes) of a command run in a fresh process."""
    wall, _, rss = run_child(cmd)
    return wall, rss


def run_cpu(cmd: list[str]) -> tuple[float, float]:
    """Wall and CPU (user + sys) seconds of a command run in a fresh process."""
    wall, cpu, _ = run_child(cmd)
    return wall, cpu


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


# -- case 1b: matrix against numpy.sort (issue 20) -------------------------------

SORT_SCRIPT = "import sys, numpy as np; np.sort(np.load(sys.argv[1]), axis=1)"


def make_matrix_mixed(n: int) -> tuple[str, str]:
    """An n x n float32 all-against-all matrix whose classes hold 20 to 50 models (random sizes)."""
    folder = os.path.join(DATA, f"matrix-mixed{n}")
    npy, cla = os.path.join(folder, "run.npy"), os.path.join(folder, "classes.cla")
    if os.path.exists(npy) and os.path.exists(cla):
        return npy, cla
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(n)
    sizes: list[int] = []
    while sum(sizes) < n:
        sizes.append(int(rng.integers(20, 51)))
    sizes[-1] -= sum(sizes) - n
    if sizes[-1] < 20:  # spread a short last class over the others, one model each
        rest = sizes.pop()
        for i in range(rest):
            sizes[i % len(sizes)] += 1 if sizes[i % len(sizes)] < 50 else 0
        sizes[-1] += n - sum(sizes)
    labels = np.repeat(np.arange(len(sizes)), sizes)
    with open(cla, "w") as fh:
        fh.write(f"PSB 1\n{len(sizes)} {n}\n")
        for c, size in enumerate(sizes):
            fh.write(f"c{c} 0 {size}\n")
            fh.write("".join(f"{i}\n" for i in np.flatnonzero(labels == c)))
    m = np.lib.format.open_memmap(npy + ".tmp", mode="w+", dtype=np.float32, shape=(n, n))
    for a in range(0, n, 500):
        b = min(n, a + 500)
        block = rng.random((b - a, n), dtype=np.float32)
        block -= 0.35 * (labels[a:b, None] == labels[None, :])
        m[a:b] = np.round(block, 4)  # 4 decimals: some ties
    m.flush()
    del m
    os.replace(npy + ".tmp", npy)
    return npy, cla


def case_matrix_sort(repeat: int, n: int, target: float) -> None:
    """The CLI (binary measures + PR curve) against a fresh process that loads the
    same .npy and calls numpy.sort(axis=1), alternated; wall and CPU ratios."""
    npy, cla = make_matrix_mixed(n)
    out = tempfile.mkdtemp()
    cmd = [CLI, npy, "-r", cla, "--run-format", "matrix", "-m", "NN,FT,ST,E,DCG,AP", "--out", out, "--quiet", "--format", "csv"]
    ref_cmd = [sys.executable, "-c", SORT_SCRIPT, npy]
    refs, ours = [], []
    for _ in range(repeat):
        refs.append(run_cpu(ref_cmd))
        ours.append(run_cpu(cmd))
    shutil.rmtree(out, ignore_errors=True)
    wall, ref_wall = statistics.median(w for w, _ in ours), statistics.median(w for w, _ in refs)
    cpu, ref_cpu = statistics.median(c for _, c in ours), statistics.median(c for _, c in refs)
    line(f"matrix{n // 1000}k", wall, "np.sort proc", ref_wall, f"ratio <= {target}", wall <= target * ref_wall, f"| CPU {cpu:.2f} s vs {ref_cpu:.2f} s = {cpu / ref_cpu:.2f}")


# -- case 2: TREC ------------------------------------------------------------------


def trec_paths(name: str) -> tuple[str, str]:
    """The run and qrels paths of a generated TREC case (its folder created)."""
    folder = os.path.join(DATA, name)
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, "run.trec"), os.path.join(folder, "qrels.txt")


def make_trec(n_queries: int = 10_000, depth: int = 1_000, n_rel: int = 50) -> tuple[str, str]:
    run, qrels = trec_paths(f"trec{n_queries}")
    if os.path.exists(run) and os.path.exists(qrels):
        return run, qrels
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


def _digits(values: np.ndarray, width: int, pad: bool = False) -> np.ndarray:
    """Decimal digits of non-negative integers as a (n, width) uint8 matrix;
    leading zeros are NUL bytes (dropped with the other padding), unless ``pad``."""
    v = values.astype(np.int64)
    out = np.empty((v.size, width), dtype=np.uint8)
    for j in range(width - 1, -1, -1):
        out[:, j] = 48 + v % 10
        v = v // 10
    if not pad:
        lead = np.cumsum(out != 48, axis=1) == 0  # zeros before the first non-zero digit
        lead[:, -1] = False  # 0 is written "0"
        out[lead] = 0
    return out


def long_ids(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` distinct long ids as a (n, 36) uint8 matrix (NUL-padded): even
    indices ClueWeb09-like (25 bytes, ``clueweb09-en0000-00-00000``), odd
    indices UUID-like (36 bytes, as the Washington Post's)."""
    ids = np.zeros((n, 36), dtype=np.uint8)
    cw = np.arange(0, n, 2)
    ids[cw, :12] = np.frombuffer(b"clueweb09-en", np.uint8)
    k = cw // 2  # distinct: directory, file, record from the index
    ids[cw, 12:16] = _digits(k // 50_000, 4, pad=True)
    ids[cw, 16] = ord("-")
    ids[cw, 17:19] = _digits(k // 1_000 % 50, 2, pad=True)
    ids[cw, 19] = ord("-")
    ids[cw, 20:25] = _digits(k % 1_000 * 37 + rng.integers(0, 37, cw.size), 5, pad=True)
    uu = np.arange(1, n, 2)
    hexd = np.frombuffer(b"0123456789abcdef", np.uint8)
    nib = rng.integers(0, 16, (uu.size, 32))
    nib[:, :5] = _digits(uu // 2, 5, pad=True) - 48  # distinct: the index in the first 5 nibbles
    text = hexd[nib]
    cols = [c for c in range(36) if c not in (8, 13, 18, 23)]
    ids[np.ix_(uu, cols)] = text
    ids[uu[:, None], np.array([8, 13, 18, 23])] = ord("-")
    return ids


def make_trec_long(n_queries: int = 10_000, depth: int = 1_000, n_judged: int = 50, pool: int = 200_000) -> tuple[str, str]:
    """The ``trec`` case's shape with long ids (see docs/performance.md, "TREC
    with long ids"): built with numpy byte matrices, 500 queries at a time."""
    run, qrels = trec_paths(f"trec-long{n_queries}")
    if os.path.exists(run) and os.path.exists(qrels):
        return run, qrels
    rng = np.random.default_rng(17)
    ids = long_ids(pool, rng)
    qid_text = np.concatenate([np.full((n_queries, 1), ord("q"), np.uint8), _digits(np.arange(n_queries), 5)], axis=1)
    rank_text = _digits(np.arange(1, depth + 1), 4)

    def const(text: bytes, n: int) -> np.ndarray:
        return np.broadcast_to(np.frombuffer(text, np.uint8), (n, len(text)))

    def emit(fh, *columns: np.ndarray) -> None:
        flat = np.concatenate(columns, axis=1).ravel()
        fh.write(flat[flat != 0].tobytes())

    step = 500
    with open(run + ".tmp", "wb") as fr, open(qrels + ".tmp", "wb") as fq:
        for q0 in range(0, n_queries, step):
            qs = np.arange(q0, min(n_queries, q0 + step))
            nq = qs.size
            docs = np.stack([rng.choice(pool, size=depth + n_judged, replace=False) for _ in qs])
            judged = docs[:, depth:]  # judged documents not in the list ...
            ranked = docs[:, :depth].copy()  # ... half of which replace documents at random ranks
            pos = np.argsort(rng.random((nq, depth)), axis=1)[:, : n_judged // 2]
            np.put_along_axis(ranked, pos, judged[:, : n_judged // 2], axis=1)
            grades = rng.choice(3, size=(nq, n_judged), p=[0.4, 0.4, 0.2])
            # 4 decimals in [0, 2): about 25 tied pairs per list of 1,000
            scores = -np.sort(-rng.integers(0, 20_000, (nq, depth)), axis=1).ravel()
            n = nq * depth
            emit(fr, np.repeat(qid_text[qs], depth, axis=0), const(b" Q0 ", n), ids[ranked.ravel()], const(b" ", n),
                 np.tile(rank_text, (nq, 1)), const(b" ", n), _digits(scores // 10_000, 1), const(b".", n),
                 _digits(scores % 10_000, 4, pad=True), const(b" bench\n", n))
            m = nq * n_judged
            emit(fq, np.repeat(qid_text[qs], n_judged, axis=0), const(b" 0 ", m), ids[judged.ravel()], const(b" ", m),
                 (48 + grades.reshape(-1, 1)).astype(np.uint8), const(b"\n", m))
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
    binary = trec_eval_binary()
    if binary:
        peer_cmds["trec_eval"] = [binary, *TREC_EVAL_MEASURES, qrels, run]
    for name, pcmd in peer_cmds.items():
        try:
            if name == "ranx":
                run_measured(pcmd)  # warm numba's on-disk cache, as a returning user meets it
            t = statistics.median(run_measured(pcmd)[0] for _ in range(max(1, repeat - 1)))
        except (subprocess.CalledProcessError, FileNotFoundError, SystemExit) as exc:
            print(f"trec      peer {name}: not run ({exc})", flush=True)
            continue
        print(f"trec      shrec-score {ours:7.3f} s | {name:<15} {t:7.3f} s | speed-up {t / ours:5.1f}x | target >= 4x          {'OK' if t >= 4 * ours else 'MISSED'}", flush=True)


# -- trec_eval, the reference implementation -----------------------------------------

#: Measures of ours and their trec_eval equals (checked on the bench's files):
#: AP = map, NN = P_1, FT = Rprec, P@10 = P_10, ndcg_cut.10 = ndcg_cut_10 (not
#: SHREC 2006's NDCG@10, another discount and ideal; the short case keeps it).
TREC_MEASURES = "AP,NN,FT,P@10,ndcg_cut.10"
TREC_EVAL_MEASURES = ["-m", "map", "-m", "P.1,10", "-m", "Rprec", "-m", "ndcg_cut.10"]
TREC_EVAL_NAMES = {"map": "AP", "P_1": "NN", "Rprec": "FT", "P_10": "P@10", "ndcg_cut_10": "ndcg_cut.10"}
TREC_EVAL_SOURCE = os.path.join(os.path.dirname(HERE), "..", "shared", "tools", "trec_eval")
_trec_eval: dict[str, str | None] = {}


def trec_eval_binary() -> str | None:
    """NIST trec_eval built once per bench run in a temporary folder (the
    source copied there, never built inside the repo), or None after printing
    why not.  Built with the source's Makefile and ``-O2`` added (the Makefile
    has no optimisation flag: the peer is measured at its best)."""
    if "path" in _trec_eval:
        return _trec_eval["path"]
    _trec_eval["path"] = None
    cc = shutil.which("cc") or shutil.which("gcc")
    source = os.path.normpath(TREC_EVAL_SOURCE)
    if cc is None or shutil.which("make") is None:
        print("trec_eval peer: skipped (no C compiler `cc`/`gcc` or no `make` on PATH)", flush=True)
        return None
    if not os.path.isfile(os.path.join(source, "Makefile")):
        print(f"trec_eval peer: skipped (no source at {source}: ../shared/tools/trec_eval beside the repo)", flush=True)
        return None
    folder = tempfile.mkdtemp(prefix="trec_eval-")
    _trec_eval["folder"] = folder
    build = os.path.join(folder, "trec_eval")
    shutil.copytree(source, build)
    out = subprocess.run(["make", "-C", build, f"CC={cc} -O2", "trec_eval"], capture_output=True, text=True)
    binary = os.path.join(build, "trec_eval")
    if out.returncode != 0 or not os.access(binary, os.X_OK):
        print(f"trec_eval peer: skipped (make failed: {out.stderr.strip().splitlines()[-1:] or out.returncode})", flush=True)
        return None
    _trec_eval["path"] = binary
    return binary


def trec_eval_cleanup() -> None:
    folder = _trec_eval.get("folder")
    if folder:
        shutil.rmtree(folder, ignore_errors=True)


def check_against_trec_eval(binary: str, run: str, qrels: str, ours_cmd: list[str]) -> str:
    """One run of each with its output kept (also warms the page cache): whether
    the mean of every measure agrees to trec_eval's 4 printed decimals."""
    te = subprocess.run([binary, *TREC_EVAL_MEASURES, qrels, run], capture_output=True, text=True, check=True).stdout
    theirs = {TREC_EVAL_NAMES[f[0]]: float(f[2]) for f in (ln.split() for ln in te.splitlines()) if f and f[0] in TREC_EVAL_NAMES}
    rows = subprocess.run(ours_cmd, capture_output=True, text=True, check=True).stdout.splitlines()
    header, values = rows[0].split(","), rows[1].split(",")
    ours = {m: float(values[header.index(m)]) for m in theirs}
    bad = [m for m in theirs if abs(ours[m] - theirs[m]) > 0.00005 + 1e-12]
    return "means equal trec_eval's" if not bad else f"means DIFFER from trec_eval's: {', '.join(bad)}"


def case_trec_long(repeat: int, peers: bool) -> None:
    """Long ids (ClueWeb09-like and UUID-like), against pandas.read_csv and trec_eval, each in turn with ours."""
    import pandas as pd

    run, qrels = make_trec_long()

    def read_both() -> None:
        pd.read_csv(run, sep=" ", header=None)
        pd.read_csv(qrels, sep=" ", header=None)

    cmd = [CLI, run, "-r", qrels, "--run-format", "trec", "-m", TREC_MEASURES, "--quiet", "--format", "csv"]
    binary = trec_eval_binary() if peers else None
    te_cmd = [binary, *TREC_EVAL_MEASURES, qrels, run] if binary else None
    agree = check_against_trec_eval(binary, run, qrels, cmd) if binary else ""
    refs, ours, theirs = [], [], []
    for _ in range(repeat):  # pandas, ours, trec_eval in turn
        t = time.perf_counter()
        read_both()
        refs.append(time.perf_counter() - t)
        ours.append(run_measured(cmd))
        if te_cmd:
            theirs.append(run_measured(te_cmd))
    ref = statistics.median(refs)
    t_ours = statistics.median(t for t, _ in ours)
    rss = max(r for _, r in ours)
    size = os.path.getsize(run) + os.path.getsize(qrels)
    line("trec-long", t_ours, "pandas.read_csv", ref, "ratio <= 2.0", t_ours <= 2 * ref, f"| peak RSS {rss / 2**20:.0f} MiB ({rss / size:.2f}x the files)")
    if theirs:
        t_te = statistics.median(t for t, _ in theirs)
        te_rss = max(r for _, r in theirs)
        print(
            f"trec-long shrec-score {t_ours:7.3f} s | {'trec_eval':<15} {t_te:7.3f} s | speed-up {t_te / t_ours:5.1f}x | target >= 4x          "
            f"{'OK' if t_te >= 4 * t_ours else 'MISSED'} | trec_eval peak RSS {te_rss / 2**20:.0f} MiB; {agree}",
            flush=True,
        )


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


# -- case 5: ranked-list folders at SHREC 2014 scale (issue 20) ----------------------


def make_lists(folder: str, n_runs: int = 3, n_queries: int = 1_000, n_targets: int = 8_987, n_classes: int = 171) -> tuple[str, str, str]:
    """SHREC 2014 sketch-track shape: ``n_runs`` folders of one file per query
    sketch (``S00001.txt``), every target (``M00001``) ranked with a distance
    of 6 decimals; a target and a query ``.cla``.  Seeded (deterministic),
    written with numpy byte matrices (about 5 s)."""
    rng = np.random.default_rng(2014)
    labels = np.sort(rng.integers(0, n_classes, n_targets))
    q_labels = rng.integers(0, n_classes, n_queries)
    ids = np.concatenate([np.full((n_targets, 1), ord("M"), np.uint8), _digits(np.arange(1, n_targets + 1), 5, pad=True)], axis=1)
    cla, qcla, runs = os.path.join(folder, "targets.cla"), os.path.join(folder, "queries.cla"), os.path.join(folder, "runs")

    def write_cla(path: str, lab: np.ndarray, prefix: str) -> None:
        with open(path, "w") as fh:
            used = np.unique(lab).tolist()
            fh.write(f"PSB 1\n{len(used)} {lab.size}\n")
            for c in used:
                members = np.flatnonzero(lab == c) + 1
                fh.write(f"class{c} 0 {members.size}\n" + "".join(f"{prefix}{i:05d}\n" for i in members.tolist()))

    write_cla(cla, labels, "M")
    write_cla(qcla, q_labels, "S")
    col = np.full((n_targets, 1), 0, np.uint8)
    for r in range(n_runs):
        run = os.path.join(runs, f"team{r + 1}")
        os.makedirs(run)
        for q in range(n_queries):  # relevant targets nearer, the more so the later the run
            d = rng.integers(0, 1_000_000, n_targets) + (labels != q_labels[q]) * (500_000 * (r + 1) // n_runs)
            order = np.argsort(d, kind="stable")
            d = d[order]
            text = np.concatenate([ids[order], col + 32, _digits(d // 1_000_000, 1), col + 46, _digits(d % 1_000_000, 6, pad=True), col + 10], axis=1)
            with open(os.path.join(run, f"S{q + 1:05d}.txt"), "wb") as fh:
                fh.write(text.tobytes())
    return cla, qcla, runs


def case_lists(repeat: int) -> None:
    """3 runs x 1,000 query files x 8,987 targets through the CLI, against
    ``pandas.read_csv`` of the same files one by one, in turn."""
    import pandas as pd

    folder = tempfile.mkdtemp(prefix="shrec-lists-")
    try:
        cla, qcla, runs = make_lists(folder)
        files = sorted(os.path.join(root, f) for root, _, names in os.walk(runs) for f in names)
        size = sum(os.path.getsize(f) for f in files)

        def read_all() -> None:
            for f in files:
                pd.read_csv(f, sep=" ", header=None)

        cmd = [CLI, runs, "-r", cla, "-q", qcla, "--quiet", "--format", "csv"]
        run_measured(cmd)  # warm the page cache
        refs, ref_cpu, ours, our_cpu, rss = [], [], [], [], 0
        for _ in range(repeat):  # in turn; CPU time too (user + sys), which a loaded machine disturbs less
            t, c = time.perf_counter(), time.process_time()
            read_all()
            refs.append(time.perf_counter() - t)
            ref_cpu.append(time.process_time() - c)
            wall, cpu, peak = run_child(cmd)
            ours.append(wall)
            our_cpu.append(cpu)
            rss = max(rss, peak)
        ref, mine = statistics.median(refs), statistics.median(ours)
        cpu_ratio = statistics.median(our_cpu) / statistics.median(ref_cpu)
        line(
            "lists",
            mine,
            "pandas.read_csv",
            ref,
            "ratio <= 0.5",
            mine <= 0.5 * ref,
            f"| CPU {statistics.median(our_cpu):.2f} s vs {statistics.median(ref_cpu):.2f} s ({cpu_ratio:.2f}) | peak RSS {rss / 2**20:.0f} MiB ({rss / size:.2f}x the {size / 2**20:.0f} MiB of files)",
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# -- case 6: start-up (issue 20) -----------------------------------------------------


def best_time(cmd: list[str], repeat: int) -> float:
    """Best wall time of ``repeat`` runs of ``cmd`` (a fresh process each; start-up is the cost measured)."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
        best = min(best, time.perf_counter() - t)
    return best


def case_startup(repeat: int) -> None:
    """The whole CLI on the psb-like sample (``--format csv``), and ``--help`` / ``--version``: best of 3 x ``repeat`` runs."""
    sample = os.path.join(os.path.dirname(HERE), "sample_runs", "psb-like")
    n = 3 * repeat
    for name, cmd, limit in (
        ("--version", [CLI, "--version"], 0.15),
        ("--help", [CLI, "--help"], 0.15),
        ("psb-like", [CLI, os.path.join(sample, "runs"), "--relevance", os.path.join(sample, "classes.cla"), "--format", "csv"], 0.35),
    ):
        t = best_time(cmd, n)
        print(f"startup   shrec-score {t:7.3f} s | {name:<15} best of {n:<3}     | target <= {limit:.2f} s        {'OK' if t <= limit else 'MISSED'}", flush=True)


# -- case 4: Kendall ---------------------------------------------------------------


def case_kendall(repeat: int) -> None:
    from shrec_score.measures.kendall import kendall_tau_b

    rng = np.random.default_rng(4)
    x = rng.integers(0, 1000, 100_000).astype(float)
    y = x + rng.normal(0, 300, 100_000).round()
    ours = median_time(lambda: kendall_tau_b(x, y), repeat)
    line("kendall", ours, "target", 0.2, "< 0.2 s", ours < 0.2)


# -- case 5: --ties expected against the rule ---------------------------------------

def case_ties(case: str, repeat: int) -> None:
    if case == "matrix-ties":
        npy, cla = make_matrix()
        cmd = [CLI, npy, "-r", cla, "--run-format", "matrix", "-m", "NN,FT,ST,E,DCG,AP", "--quiet", "--format", "csv"]
    else:
        run, qrels = make_trec()
        cmd = [CLI, run, "-r", qrels, "--run-format", "trec", "-m", "AP,NN,FT,P@10,NDCG@10", "--quiet", "--format", "csv"]
    rule, expected = [], []
    for _ in range(repeat):  # in turn, so that the shared machine's changes of speed fall on both
        rule.append(run_cpu(cmd))
        expected.append(run_cpu([*cmd, "--ties", "expected"]))
    wall_r, wall_e = (statistics.median(w for w, _ in x) for x in (rule, expected))
    cpu_r, cpu_e = (statistics.median(c for _, c in x) for x in (rule, expected))
    line(case, wall_e, "--ties rule", wall_r, "ratio <= 1.5", wall_e <= 1.5 * wall_r, f"| CPU {cpu_e:.3f} s vs {cpu_r:.3f} s, ratio {cpu_e / cpu_r:.2f} ({'OK' if cpu_e <= 1.5 * cpu_r else 'MISSED'})")


# -- case 8: Dask ------------------------------------------------------------------


def case_dask(repeat: int, n: int = 20_000, per_class: int = 100, chunk_rows: int = 1_000) -> None:
    """The Zarr matrix on a LocalCluster of 2 worker processes against the single-process CLI on the .npy."""
    from shrec_score.distributed import score as score_rows

    folder = tempfile.mkdtemp(prefix="shrec-dask-bench-")
    try:
        npy, cla, zarr = os.path.join(folder, "run.npy"), os.path.join(folder, "classes.cla"), os.path.join(folder, "z", "run.zarr")
        with open(cla, "w") as fh:
            fh.write(f"PSB 1\n{n // per_class} {n}\n")
            for c in range(n // per_class):
                fh.write(f"c{c} 0 {per_class}\n" + "".join(f"{c * per_class + i}\n" for i in range(per_class)))
        rng = np.random.default_rng(23)
        m = np.lib.format.open_memmap(npy, mode="w+", dtype=np.float32, shape=(n, n))
        labels = np.arange(n) // per_class
        for a in range(0, n, 500):  # 40 MB at a time
            block = rng.random((min(n, a + 500) - a, n), dtype=np.float32)
            block -= 0.35 * (labels[a : a + 500, None] == labels[None, :])
            m[a : a + 500] = np.round(block, 4)
        m.flush()
        del m
        t = time.perf_counter()
        subprocess.run([CLI, "convert", npy, zarr, "--to", "zarr", "--chunk-rows", str(chunk_rows)], check=True, stderr=subprocess.DEVNULL)
        convert = time.perf_counter() - t
        outs = [os.path.join(folder, k) for k in ("single", "dask")]
        single = [CLI, npy, "-r", cla, "--run-format", "matrix", "--out", outs[0], "--quiet", "--format", "csv"]
        on_cluster = [CLI, zarr, "-r", cla, "--dask", "local:2", "--out", outs[1], "--quiet", "--format", "csv"]
        walls: dict[str, list[float]] = {"single": [], "dask": []}
        cpu: dict[str, list[float]] = {"single": [], "dask": []}
        for _ in range(repeat):
            for key, cmd in (("single", single), ("dask", on_cluster)):
                before = os.times()
                walls[key].append(run_measured(cmd)[0])
                after = os.times()
                cpu[key].append(after.children_user + after.children_system - before.children_user - before.children_system)
        same = all(open(os.path.join(outs[0], f), "rb").read() == open(os.path.join(outs[1], f), "rb").read() for f in ("per_query.csv", "per_run.csv", "pr_curve.csv"))
        t = time.perf_counter()
        score_rows([zarr], cla)  # the same tasks one after the other here: the per-block cost
        here = time.perf_counter() - t
        blocks = -(-n // chunk_rows)
        w_single, w_dask = statistics.median(walls["single"]), statistics.median(walls["dask"])
        line("dask", w_dask, "single process", w_single, "report", True,
             f"| CPU {statistics.median(cpu['dask']):.1f} s vs {statistics.median(cpu['single']):.1f} s | CSVs identical: {same} "
             f"| {blocks} blocks of {chunk_rows} rows: {here / blocks:.3f} s per block in one process "
             f"({here / (n * n) * 1e9:.2f} ns per cell) | convert {convert:.1f} s")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# -- cases 9 to 11: embeddings from memory (issue 22) ---------------------------------


def embeddings_data(n: int, d: int, n_classes: int, seed: int = 22) -> tuple[np.ndarray, np.ndarray]:
    """float32 embeddings: class centres plus noise (overlapping classes), labels in blocks."""
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(n_classes), n // n_classes)
    centres = rng.standard_normal((n_classes, d), dtype=np.float32)
    x = rng.standard_normal((n, d), dtype=np.float32)  # made in place: no temporary as large as x
    x *= 1.5
    for a in range(0, n, 10_000):
        x[a : a + 10_000] += centres[labels[a : a + 10_000]]
    return x, labels


def sklearn_script(x: np.ndarray, labels: np.ndarray, queries: np.ndarray) -> tuple[float, float, float, dict[int, float], dict[int, float], np.ndarray]:
    """The obvious scikit-learn script, all-against-all: the full distance
    matrix, then average_precision_score and ndcg_score per query (its own
    item left out).  Returns (wall seconds of pairwise_distances, wall
    seconds of the loop over ``queries``, CPU seconds of both, AP and NDCG
    per query, the distance matrix)."""
    from sklearn.metrics import average_precision_score, ndcg_score, pairwise_distances

    c = time.process_time()
    t = time.perf_counter()
    dist = pairwise_distances(x)
    t_pd = time.perf_counter() - t
    c_pd = time.process_time() - c
    ap, ndcg = {}, {}
    t, c = time.perf_counter(), time.process_time()
    for i in queries:
        keep = np.arange(len(x)) != i
        rel, score = labels[keep] == labels[i], -dist[i, keep]
        ap[int(i)] = average_precision_score(rel, score)
        ndcg[int(i)] = ndcg_score(rel[None, :], score[None, :])
    t_loop, c_loop = time.perf_counter() - t, time.process_time() - c
    scale = len(x) / max(1, len(queries))
    return t_pd, t_loop, c_pd + c_loop * scale, ap, ndcg, dist


def case_embeddings(repeat: int, peers: bool, sample: int) -> None:
    import shrec_score

    n, d = 20_000, 256
    x, labels = embeddings_data(n, d, 100)
    queries = np.arange(0, n, sample)
    ours_t, ours_cpu, ref_t, ref_cpu, report = [], [], [], [], None
    for _ in range(repeat):  # in turn, so that the shared machine's changes of speed fall on both
        t_pd, t_loop, c_ref, ap, ndcg, dist = sklearn_script(x, labels, queries)
        ref_t.append(t_pd + t_loop * n / len(queries))
        ref_cpu.append(c_ref)
        t, c = time.perf_counter(), time.process_time()
        report = shrec_score.evaluate(embeddings=x, labels=labels, measures=["AP", "DCG"])
        ours_t.append(time.perf_counter() - t)
        ours_cpu.append(time.process_time() - c)
    assert report is not None
    ours, ref, oc, rc = statistics.median(ours_t), statistics.median(ref_t), statistics.median(ours_cpu), statistics.median(ref_cpu)
    per_q = report.per_query.set_index(report.per_query["query"].astype(int))
    ours_ap = np.array([per_q.loc[q, "AP"] for q in ap])
    theirs_ap = np.array(list(ap.values()))
    gap = abs(ours_ap.mean() - theirs_ap.mean())
    extrapolated = "" if sample == 1 else f"; sklearn's loop timed on every {sample}th query and extrapolated"
    print(f"embeddings sklearn {ref:7.1f} s (CPU {rc:.1f} s) | shrec-score {ours:6.1f} s (CPU {oc:.1f} s) | ratio {ref / ours:5.1f}x (CPU {rc / oc:.1f}x) | target >= 5x {'OK' if ref >= 5 * ours else 'MISSED'}{extrapolated}", flush=True)
    print(
        f"embeddings mAP on the {len(ap)} queries: ours {ours_ap.mean():.7f} sklearn {theirs_ap.mean():.7f} |diff| {gap:.1e} ({'OK' if gap <= 1e-6 else 'MISSED'} <= 1e-6);"
        f" per query max |diff| {np.abs(ours_ap - theirs_ap).max():.1e} (ties: sklearn scores equal scores as one threshold, we rank them by the lower column)",
        flush=True,
    )
    same = shrec_score.evaluate(distances=dist, labels=labels, measures=["AP"]).per_query
    del dist
    same_ap = same.set_index(same["query"].astype(int)).loc[list(ap), "AP"].to_numpy()
    print(
        f"embeddings ours on sklearn's own matrix: per query max |diff| {np.abs(same_ap - theirs_ap).max():.1e};"
        f" DCG (PSB: rank 1 undiscounted, then gain / log2(rank)) {np.mean([per_q.loc[q, 'DCG'] for q in ndcg]):.6f} vs sklearn ndcg_score (gain / log2(rank + 1)) {np.mean(list(ndcg.values())):.6f}: other discounts",
        flush=True,
    )
    if not peers:
        return
    try:
        import torch
        from torchmetrics.retrieval import RetrievalMAP, RetrievalNormalizedDCG
    except ImportError as exc:
        print(f"embeddings torchmetrics: skipped ({exc.name} is not installed; the bench never installs torch)", flush=True)
        return
    from sklearn.metrics import pairwise_distances

    sub = pairwise_distances(x[queries], x)
    mask = np.ones(sub.shape, dtype=bool)
    mask[np.arange(len(queries)), queries] = False  # each query's own item out
    # scores > 0 (torchmetrics 1.9 scored lists of negated distances, all <= 0, as mAP 0):
    # max + 1 - distance, in float64, orders and ties exactly as the float32 distances
    preds = torch.from_numpy(float(sub.max()) + 1 - sub[mask].astype(np.float64))
    target = torch.from_numpy((labels[queries][:, None] == labels[None, :])[mask])
    indexes = torch.from_numpy(np.repeat(np.arange(len(queries)), n - 1))
    t, c = time.perf_counter(), time.process_time()
    tm_map = float(RetrievalMAP()(preds, target, indexes=indexes))
    tm_ndcg = float(RetrievalNormalizedDCG()(preds, target, indexes=indexes))
    t_tm, c_tm = (time.perf_counter() - t) * n / len(queries), (time.process_time() - c) * n / len(queries)
    print(
        f"embeddings torchmetrics RetrievalMAP+RetrievalNormalizedDCG {t_tm:7.1f} s (CPU {c_tm:.1f} s; on the sampled queries' pairs, extrapolated, distances not counted) | ratio {t_tm / ours:5.1f}x (CPU {c_tm / oc:.1f}x)"
        f" | mAP {tm_map:.7f} vs ours {ours_ap.mean():.7f} (|diff| {abs(tm_map - ours_ap.mean()):.1e}); NDCG {tm_ndcg:.6f} (gain / log2(rank + 1), as sklearn)",
        flush=True,
    )


LARGE = """
import resource, sys, time
import numpy as np
sys.path.insert(0, {here!r})
from run_bench import embeddings_data
import shrec_score
from shrec_score import memory

n, d, rows_wanted, n_classes = 100_000, 512, {rows}, {classes}
x, labels = embeddings_data(n, d, n_classes)


class Enough(Exception):
    pass


done = [0]
block = memory.EmbeddingDistances.block


def counted(self, q):
    if done[0] >= rows_wanted:
        raise Enough
    done[0] += len(q)
    return block(self, q)


memory.EmbeddingDistances.block = counted
t, c = time.perf_counter(), time.process_time()
try:
    shrec_score.evaluate(embeddings=x, labels=labels, measures=["NN", "FT", "ST", "E", "DCG", "AP"])
except Enough:
    pass
per_row, cpu_row = (time.perf_counter() - t) / done[0], (time.process_time() - c) / done[0]
rss_rank = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(done[0], per_row, cpu_row, rss_rank, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


def case_embeddings_large(rows: int) -> None:
    for n_classes in (100, 1000):
        out = subprocess.run([sys.executable, "-c", LARGE.format(here=HERE, rows=rows, classes=n_classes)], capture_output=True, text=True, check=True)
        done, per_row, cpu_row, rss_rank, rss = out.stdout.split()
        peak = int(rss)
        print(
            f"embeddings-large 100,000 x 512, {n_classes} classes of {100_000 // n_classes}, all-against-all: {float(per_row) * 1e3:.1f} ms per query row (CPU {float(cpu_row) * 1e3:.1f} ms; measured on {done} rows against"
            f" all 100,000 targets; a full run = {float(per_row) * 1e5 / 60:.0f} min) | peak RSS {peak / 2**20:.0f} MiB | target < 2 GB {'OK' if peak < 2 * 2**30 else 'MISSED'}",
            flush=True,
        )


def case_embeddings_memory() -> None:
    """50,000 x 64 embeddings all-against-all, 500 classes of 100 (issue 22's
    memory check, too slow for the test suite: about 100 s of CPU): the peak
    traced allocation (tracemalloc traces numpy's) against a bound the full
    float32 matrix (10 GB) could never meet."""
    import tracemalloc

    import shrec_score

    n = 50_000
    x, labels = embeddings_data(n, 64, 500)
    t, c = time.perf_counter(), time.process_time()
    tracemalloc.start()
    try:
        report = shrec_score.evaluate(embeddings=x, labels=labels, measures=["NN", "FT", "ST", "E", "DCG", "AP"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    full, bound = n * n * 4, 2**30
    ok = peak < bound and int(report.leaderboard.loc[0, "queries"]) == n
    print(f"embeddings-memory 50,000 x 64 all-against-all: traced peak {peak / 2**20:.0f} MiB (full matrix {full / 2**30:.1f} GiB) | target < 1 GiB {'OK' if ok else 'MISSED'} | {time.perf_counter() - t:.0f} s (CPU {time.process_time() - c:.0f} s)", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="kendall,contest,matrix,matrix-sort,trec,trec-long,matrix-ties,trec-ties,lists,startup,embeddings,embeddings-large,embeddings-memory")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--sample", type=int, default=20, help="embeddings: time sklearn's per-query loop on every Nth query")
    ap.add_argument("--rows", type=int, default=8448, help="embeddings-large: query rows ranked before the run stops (past the engine's first chunk of 8,192 queries, so that its measures are in the peak)")
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, numpy {np.__version__}", flush=True)
    try:
        run_cases(args)
    finally:
        trec_eval_cleanup()


def run_cases(args: argparse.Namespace) -> None:
    for case in args.cases.split(","):
        if case == "matrix":
            case_matrix(args.repeat)
        elif case == "matrix-sort":
            case_matrix_sort(args.repeat, 10_000, 0.6)
            case_matrix_sort(args.repeat, 4_000, 1.3)
        elif case == "trec":
            case_trec(args.repeat, not args.no_peers)
        elif case == "trec-long":
            case_trec_long(args.repeat, not args.no_peers)
        elif case == "contest":
            case_contest(args.repeat)
        elif case == "kendall":
            case_kendall(args.repeat)
        elif case in ("matrix-ties", "trec-ties"):
            case_ties(case, args.repeat)
        elif case == "lists":
            case_lists(args.repeat)
        elif case == "startup":
            case_startup(args.repeat)
        elif case == "dask":
            case_dask(args.repeat)
        elif case == "embeddings":
            case_embeddings(args.repeat, not args.no_peers, args.sample)
        elif case == "embeddings-large":
            case_embeddings_large(args.rows)
        elif case == "embeddings-memory":
            case_embeddings_memory()
        else:
            raise SystemExit(f"unknown case {case!r}")


if __name__ == "__main__":
    main()
