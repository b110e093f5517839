"""shrec-score benchmark (`make bench`): issue 29's budgets, each measured side by side.

Every timed command runs in turn with its reference, `--repeat` times (medians),
so that the shared machine's changes of speed fall on both.  Inputs are
generated once (seeded, under `nice -n 10`) into bench/_data (git-ignored).

trec, trec-long  10,000 queries x 1,000 ranked documents (10M run lines), ids
    `D123456` (trec) or 25-36-byte ClueWeb09- and UUID-like ids with graded
    qrels (trec-long); AP NN FT P@10 ndcg_cut.10 through the CLI, against NIST
    trec_eval (built -O2 from ../shared/tools/trec_eval, budget: ours <= 0.4x),
    pytrec_eval, ranx and ir_measures (each end to end in a fresh process,
    ranx's numba cache warmed first; budget: ours < 1x); peak RSS <= 2 GB; our
    means equal trec_eval's to its 4 printed decimals.
lists   1 run x 1,000 query files x 8,987 targets (SHREC 2014's sketch track
    shape), default measures, against a loop of pandas.read_csv over the same
    files in this process: <= 1.5x.
matrix10k, matrix4k  float32 .npy all-against-all, classes of about 35,
    default measures, against a fresh process that np.load's the matrix and
    calls np.argsort(axis=1): <= 1.0x at 10,000^2, <= 1.5x at 4,000^2; peak RSS
    <= 1.5x the matrix.
startup  the CLI on sample_runs/psb-like with --format csv (<= 0.35 s) and
    --help (<= 0.1 s), median of 3 x repeat runs.
embeddings  shrec_score.evaluate from float32 embeddings (20,000 x 256
    all-against-all; 4,096 queries x 100,000 targets x 512), default measures,
    CPU time against `x @ y.T` plus np.sort in blocks of rows: <= 1.2x.
dask    (not in the default cases: 3.2 GB of disk) a 20,000^2 matrix as Zarr
    scored with --dask local:2 against the .npy by one process; CSVs identical.

Numbers too: each generated case is scored once with --out (this run also warms
the page cache) and its per_query.csv and per_run.csv compared with those of
version 0.1.0 stored in bench/golden/<case>/ (bench/make_golden.py): text
exactly, numbers to 1e-12 relative.  A run of the default cases writes its table
into docs/performance.md.

    python bench/run_bench.py [--cases trec,trec-long,lists,matrix10k,matrix4k,startup,embeddings] [--repeat 3]
"""

from __future__ import annotations

import argparse
import compileall
import csv
import datetime
import gzip
import io
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(HERE, "_data")
GOLDEN = os.path.join(HERE, "golden")
CLI = os.path.join(os.path.dirname(sys.executable), "shrec-score")
DEFAULT_CASES = "trec,trec-long,lists,matrix10k,matrix4k,startup,embeddings"
GOLDEN_CASES = ("trec", "trec-long", "lists", "matrix10k", "matrix4k")
GB = 2**30

# -- measuring ----------------------------------------------------------------------

CHILD = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(time.perf_counter() - t, u.ru_utime + u.ru_stime, u.ru_maxrss, p.returncode)\n"
)


@dataclass
class Sample:
    wall: float  # median seconds
    cpu: float  # median seconds, user + sys (every thread)
    rss: int  # largest peak RSS in bytes (0 for a job in this process)


def timed(job) -> tuple[float, float, int]:
    """Wall, CPU and peak RSS of a command in a fresh process (the wrapper's
    own start-up not counted), or wall and CPU of a callable in this one."""
    if callable(job):
        t, c = time.perf_counter(), time.process_time()
        job()
        return time.perf_counter() - t, time.process_time() - c, 0
    out = subprocess.run([sys.executable, "-c", CHILD, *job], capture_output=True, text=True, check=True)
    wall, cpu, rss_kb, rc = out.stdout.split()
    if rc != "0":
        raise RuntimeError(f"exit status {rc}: {' '.join(job)}")
    return float(wall), float(cpu), int(rss_kb) * 1024


def in_turn(jobs: dict, repeat: int) -> dict[str, Sample]:
    """Each job once per round, in turn, for ``repeat`` rounds."""
    got: dict[str, list] = {name: [] for name in jobs}
    for _ in range(repeat):
        for name, job in jobs.items():
            got[name].append(timed(job))
    return {
        name: Sample(statistics.median(s[0] for s in v), statistics.median(s[1] for s in v), max(s[2] for s in v))
        for name, v in got.items()
    }


@dataclass
class Row:
    case: str
    ours: str
    reference: str
    ratio: str
    budget: str
    ok: bool
    memory: str = ""


ROWS: list[Row] = []


def report(row: Row) -> None:
    ROWS.append(row)
    print(f"{row.case:<17} {row.ours:>13} | {row.reference:<30} | {row.ratio:>5} | {row.budget:<16} {'OK' if row.ok else 'MISSED':<6} | {row.memory}", flush=True)


def compare(case: str, ours: float, name: str, ref: float, limit: float, unit: str = "s", memory: str = "", memory_budget: str = "", memory_ok: bool = True) -> None:
    """A row: ours / the reference against ``limit``, and a memory budget where one is named."""
    budget = f"<= {limit:g}" + (f", {memory_budget}" if memory_budget else "")
    report(Row(case, f"{ours:.3f} {unit}", f"{name} {ref:.3f} {unit}", f"{ours / ref:.2f}", budget, ours <= limit * ref and memory_ok, memory))


# -- generated inputs (seeded: two generations give the same bytes) --------------------


def write_cla(path: str, labels: np.ndarray, names: list[str]) -> None:
    """A PSB .cla of the classes used: class ``class<label>``, members ``names``."""
    with open(path, "w") as fh:
        used = np.unique(labels).tolist()
        fh.write(f"PSB 1\n{len(used)} {labels.size}\n")
        for c in used:
            members = np.flatnonzero(labels == c)
            fh.write(f"class{c} 0 {members.size}\n" + "".join(names[i] + "\n" for i in members.tolist()))


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


def make_matrix(n: int, folder: str | None = None) -> tuple[str, str]:
    """An n x n float32 all-against-all matrix (ids 0..n-1), classes of about
    35 models (random sizes), 4 decimals (some ties, as real descriptors have)."""
    folder = folder or os.path.join(DATA, f"matrix{n}")
    npy, cla = os.path.join(folder, "run.npy"), os.path.join(folder, "classes.cla")
    if os.path.exists(npy):
        return npy, cla
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(n)
    labels = np.sort(rng.integers(0, n // 35, n))
    write_cla(cla, labels, [str(i) for i in range(n)])
    m = np.lib.format.open_memmap(npy + ".tmp", mode="w+", dtype=np.float32, shape=(n, n))
    for a in range(0, n, 500):
        block = rng.random((min(n, a + 500) - a, n), dtype=np.float32)
        block -= 0.35 * (labels[a : a + 500, None] == labels[None, :])
        m[a : a + 500] = np.round(block, 4)
    m.flush()
    del m
    os.replace(npy + ".tmp", npy)
    return npy, cla


def make_lists(n_queries: int = 1_000, n_targets: int = 8_987, n_classes: int = 171) -> tuple[str, str, str]:
    """SHREC 2014 sketch-track shape, one run: a file per query sketch
    (``S00001.txt``), every target (``M00001``) ranked with a 6-decimal distance."""
    folder = os.path.join(DATA, "lists")
    cla, qcla, run = (os.path.join(folder, f) for f in ("targets.cla", "queries.cla", "runs/team1"))
    if os.path.exists(os.path.join(folder, "done")):
        return cla, qcla, os.path.dirname(run)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(run)
    rng = np.random.default_rng(2014)
    labels = np.sort(rng.integers(0, n_classes, n_targets))
    q_labels = rng.integers(0, n_classes, n_queries)
    write_cla(cla, labels, [f"M{i:05d}" for i in range(1, n_targets + 1)])
    write_cla(qcla, q_labels, [f"S{i:05d}" for i in range(1, n_queries + 1)])
    ids = np.concatenate([np.full((n_targets, 1), ord("M"), np.uint8), _digits(np.arange(1, n_targets + 1), 5, pad=True)], axis=1)
    col = np.zeros((n_targets, 1), np.uint8)
    for q in range(n_queries):  # relevant targets nearer
        d = rng.integers(0, 1_000_000, n_targets) + (labels != q_labels[q]) * 500_000
        order = np.argsort(d, kind="stable")
        d = d[order]
        text = np.concatenate([ids[order], col + 32, _digits(d // 1_000_000, 1), col + 46, _digits(d % 1_000_000, 6, pad=True), col + 10], axis=1)
        with open(os.path.join(run, f"S{q + 1:05d}.txt"), "wb") as fh:
            fh.write(text.tobytes())
    open(os.path.join(folder, "done"), "w").close()
    return cla, qcla, os.path.dirname(run)


def trec_paths(name: str) -> tuple[str, str]:
    folder = os.path.join(DATA, name)
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, "run.trec"), os.path.join(folder, "qrels.txt")


def make_trec(n_queries: int = 10_000, depth: int = 1_000, n_rel: int = 50) -> tuple[str, str]:
    """Short ids (``D123456`` of a pool of 200,000), 3-decimal scores, binary qrels:
    50 relevant documents a query, half of them in the list."""
    run, qrels = trec_paths(f"trec{n_queries}")
    if os.path.exists(run) and os.path.exists(qrels):
        return run, qrels
    rng = np.random.default_rng(11)
    with open(run + ".tmp", "w") as fr, open(qrels + ".tmp", "w") as fq:
        for q in range(n_queries):
            docs = rng.choice(200_000, size=depth + n_rel, replace=False)
            relevant, ranked = docs[depth:], docs[:depth].copy()
            ranked[np.sort(rng.choice(depth, size=n_rel // 2, replace=False))] = relevant[: n_rel // 2]
            scores = np.round(np.sort(rng.random(depth))[::-1] * 100, 3)
            fr.write("".join(f"q{q} Q0 D{d} {i + 1} {s:.3f} bench\n" for i, (d, s) in enumerate(zip(ranked, scores))))
            fq.write("".join(f"q{q} 0 D{d} 1\n" for d in relevant))
    os.replace(run + ".tmp", run)
    os.replace(qrels + ".tmp", qrels)
    return run, qrels


def long_ids(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` distinct ids as a (n, 36) NUL-padded uint8 matrix: even indices
    ClueWeb09-like (``clueweb09-en0000-00-00000``), odd ones UUID-like."""
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
    nib = rng.integers(0, 16, (uu.size, 32))
    nib[:, :5] = _digits(uu // 2, 5, pad=True) - 48  # distinct: the index in the first 5 nibbles
    cols = [c for c in range(36) if c not in (8, 13, 18, 23)]
    ids[np.ix_(uu, cols)] = np.frombuffer(b"0123456789abcdef", np.uint8)[nib]
    ids[uu[:, None], np.array([8, 13, 18, 23])] = ord("-")
    return ids


def make_trec_long(n_queries: int = 10_000, depth: int = 1_000, n_judged: int = 50, pool: int = 200_000) -> tuple[str, str]:
    """Long ids mixed in every list, 4-decimal scores (about 25 tied pairs a
    list), 50 judgments a query graded 0-2, half of them in the list; written
    with numpy byte matrices, 500 queries at a time."""
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

    with open(run + ".tmp", "wb") as fr, open(qrels + ".tmp", "wb") as fq:
        for q0 in range(0, n_queries, 500):
            qs = np.arange(q0, min(n_queries, q0 + 500))
            nq, n, m = qs.size, qs.size * depth, qs.size * n_judged
            docs = np.stack([rng.choice(pool, size=depth + n_judged, replace=False) for _ in qs])
            judged, ranked = docs[:, depth:], docs[:, :depth].copy()
            pos = np.argsort(rng.random((nq, depth)), axis=1)[:, : n_judged // 2]
            np.put_along_axis(ranked, pos, judged[:, : n_judged // 2], axis=1)
            grades = rng.choice(3, size=(nq, n_judged), p=[0.4, 0.4, 0.2])
            scores = -np.sort(-rng.integers(0, 20_000, (nq, depth)), axis=1).ravel()
            emit(fr, np.repeat(qid_text[qs], depth, axis=0), const(b" Q0 ", n), ids[ranked.ravel()], const(b" ", n),
                 np.tile(rank_text, (nq, 1)), const(b" ", n), _digits(scores // 10_000, 1), const(b".", n),
                 _digits(scores % 10_000, 4, pad=True), const(b" bench\n", n))
            emit(fq, np.repeat(qid_text[qs], n_judged, axis=0), const(b" 0 ", m), ids[judged.ravel()], const(b" ", m),
                 (48 + grades.reshape(-1, 1)).astype(np.uint8), const(b"\n", m))
    os.replace(run + ".tmp", run)
    os.replace(qrels + ".tmp", qrels)
    return run, qrels


#: Ours and trec_eval's names of the TREC measures (ndcg_cut.10 is trec_eval's, not SHREC 2006's NDCG@10).
TREC_MEASURES = {"map": "AP", "P_1": "NN", "Rprec": "FT", "P_10": "P@10", "ndcg_cut_10": "ndcg_cut.10"}


def case_args(case: str) -> list[str]:
    """The CLI arguments that score a generated case (its inputs made if missing)."""
    if case in ("trec", "trec-long"):
        run, qrels = make_trec() if case == "trec" else make_trec_long()
        return [run, "-r", qrels, "--run-format", "trec", "-m", ",".join(TREC_MEASURES.values())]
    if case == "lists":
        cla, qcla, runs = make_lists()
        return [runs, "-r", cla, "-q", qcla]
    npy, cla = make_matrix({"matrix10k": 10_000, "matrix4k": 4_000}[case])
    return [npy, "-r", cla, "--run-format", "matrix"]


# -- numbers: the stored values of 0.1.0 ---------------------------------------------------


def first_difference(stored: str, written: str) -> str | None:
    """The first cell where two CSV texts differ (numbers to 1e-12 relative, or absolute near 0)."""
    a, b = list(csv.reader(io.StringIO(stored))), list(csv.reader(io.StringIO(written)))
    if a[0] != b[0] or len(a) != len(b):
        return f"columns {a[0]} x {len(a) - 1} rows became {b[0]} x {len(b) - 1} rows"
    for i, (ra, rb) in enumerate(zip(a, b)):
        for col, x, y in zip(a[0], ra, rb):
            if x == y:
                continue
            try:
                same = abs(float(x) - float(y)) <= 1e-12 * max(1.0, abs(float(x)))
            except ValueError:
                same = False
            if not same:
                return f"row {i}, column {col}: {x!r} became {y!r}"
    return None


def check_numbers(case: str, out: str) -> None:
    notes = []
    for name in ("per_query.csv", "per_run.csv"):
        with gzip.open(os.path.join(GOLDEN, case, name + ".gz"), "rt") as fh:
            stored = fh.read()
        with open(os.path.join(out, name)) as fh:
            diff = first_difference(stored, fh.read())
        if diff:
            notes.append(f"{name} {diff}")
    report(Row(case, "CSVs", "stored from 0.1.0", "", "equal to 1e-12", not notes, "; ".join(notes)))


def scored_once(case: str, args: list[str]) -> str:
    """Score with --out into a temporary folder (warming the page cache), check the numbers; the folder."""
    out = tempfile.mkdtemp(prefix=f"bench-{case}-")
    subprocess.run([CLI, *args, "--out", out, "--quiet", "--format", "csv"], stdout=subprocess.DEVNULL, check=True)
    check_numbers(case, out)
    return out


# -- the cases -----------------------------------------------------------------------------


def trec_eval_binary(folder: str) -> str | None:
    """NIST trec_eval built in ``folder`` from ../shared/tools/trec_eval with -O2
    added (its Makefile has no optimisation flag), or None after saying why not."""
    source = os.path.normpath(os.path.join(ROOT, "..", "shared", "tools", "trec_eval"))
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None or shutil.which("make") is None or not os.path.isfile(os.path.join(source, "Makefile")):
        print(f"trec_eval: not built (needs cc, make and the source at {source})", flush=True)
        return None
    build = os.path.join(folder, "trec_eval")
    shutil.copytree(source, build)
    made = subprocess.run(["make", "-C", build, f"CC={cc} -O2", "trec_eval"], capture_output=True, text=True)
    if made.returncode != 0:
        print(f"trec_eval: make failed: {made.stderr.strip().splitlines()[-1:]}", flush=True)
        return None
    return os.path.join(build, "trec_eval")


PEERS = {
    "ranx": "from ranx import Qrels, Run, evaluate\n"
    "evaluate(Qrels.from_file(sys.argv[1], kind='trec'), Run.from_file(sys.argv[2], kind='trec'),"
    " ['map', 'precision@1', 'r-precision', 'precision@10', 'ndcg@10'])",
    "pytrec_eval": "import pytrec_eval\n"
    "q, r = (getattr(pytrec_eval, f)(open(p)) for f, p in (('parse_qrel', sys.argv[1]), ('parse_run', sys.argv[2])))\n"
    "pytrec_eval.RelevanceEvaluator(q, {'map', 'P', 'Rprec', 'ndcg_cut'}).evaluate(r)",
}


def case_trec(case: str, repeat: int, trec_eval: str | None) -> None:
    args = case_args(case)
    run, qrels = args[0], args[2]
    out = scored_once(case, args)
    te_args = [trec_eval, "-m", "map", "-m", "P.1,10", "-m", "Rprec", "-m", "ndcg_cut.10", qrels, run] if trec_eval else []
    if trec_eval:  # our means against trec_eval's 4 printed decimals
        te = subprocess.run(te_args, capture_output=True, text=True, check=True).stdout
        theirs = {TREC_MEASURES[f[0]]: float(f[2]) for f in map(str.split, te.splitlines()) if f and f[0] in TREC_MEASURES}
        with open(os.path.join(out, "per_run.csv")) as fh:
            ours = next(csv.DictReader(fh))
        bad = [m for m, v in theirs.items() if abs(float(ours[m]) - v) > 0.00005 + 1e-12]
        report(Row(case, "means", "trec_eval's", "", "equal to 1e-4", not bad, f"differ: {', '.join(bad)}" if bad else ""))
    shutil.rmtree(out, ignore_errors=True)
    jobs = {"ours": [CLI, *args, "--quiet", "--format", "csv"]}
    if trec_eval:
        jobs["trec_eval"] = te_args
    jobs["pytrec_eval"] = [sys.executable, "-c", "import sys\n" + PEERS["pytrec_eval"], qrels, run]
    jobs["ranx"] = [sys.executable, "-c", "import sys\n" + PEERS["ranx"], qrels, run]
    jobs["ir_measures"] = [os.path.join(os.path.dirname(sys.executable), "ir_measures"), qrels, run, "AP P@1 Rprec P@10 nDCG@10"]
    try:
        timed(jobs["ranx"])  # numba's on-disk cache warmed, as a returning user meets it
    except (RuntimeError, subprocess.CalledProcessError, FileNotFoundError) as exc:
        print(f"{case}: ranx not run ({exc})", flush=True)
        del jobs["ranx"]
    got = in_turn(jobs, repeat)
    ours = got.pop("ours")
    for name, s in got.items():
        compare(case, ours.wall, name, s.wall, 0.4 if name == "trec_eval" else 1.0, memory=f"peak {ours.rss / GB:.2f} GB", memory_budget="<= 2 GB", memory_ok=ours.rss <= 2 * GB)


def case_lists(repeat: int) -> None:
    import pandas as pd

    args = case_args("lists")
    shutil.rmtree(scored_once("lists", args), ignore_errors=True)
    files = sorted(os.path.join(root, f) for root, _, names in os.walk(args[0]) for f in names)
    got = in_turn({"ours": [CLI, *args, "--quiet", "--format", "csv"], "pandas": lambda: [pd.read_csv(f, sep=" ", header=None) for f in files]}, repeat)
    compare("lists", got["ours"].wall, "pandas.read_csv loop", got["pandas"].wall, 1.5, memory=f"CPU ratio {got['ours'].cpu / got['pandas'].cpu:.2f}")


def case_matrix(case: str, repeat: int) -> None:
    args = case_args(case)
    shutil.rmtree(scored_once(case, args), ignore_errors=True)
    size = os.path.getsize(args[0])
    jobs = {"ours": [CLI, *args, "--quiet", "--format", "csv"], "argsort": [sys.executable, "-c", "import sys, numpy as np; np.argsort(np.load(sys.argv[1]), axis=1)", args[0]]}
    got = in_turn(jobs, repeat)
    rss = got["ours"].rss
    limit = 1.0 if case == "matrix10k" else 1.5
    note = f"peak {rss / size:.2f}x the matrix; CPU ratio {got['ours'].cpu / got['argsort'].cpu:.2f}"
    compare(case, got["ours"].wall, "load + np.argsort proc", got["argsort"].wall, limit, memory=note, memory_budget="<= 1.5x matrix", memory_ok=rss <= 1.5 * size)


def case_startup(repeat: int) -> None:
    sample = os.path.join(ROOT, "sample_runs", "psb-like")
    for name, cmd, limit in (
        ("psb-like", [CLI, os.path.join(sample, "runs"), "--relevance", os.path.join(sample, "classes.cla"), "--format", "csv"], 0.35),
        ("--help", [CLI, "--help"], 0.1),
    ):
        walls = [timed(cmd)[0] for _ in range(3 * repeat)]
        wall = statistics.median(walls)
        report(Row(f"startup {name}", f"{wall:.3f} s", f"median of {len(walls)}", "", f"<= {limit} s", wall <= limit, f"best {min(walls):.3f} s"))


def embeddings_data(n: int, d: int, n_classes: int, seed: int = 22) -> tuple[np.ndarray, np.ndarray]:
    """float32 class centres plus noise (overlapping classes); item i in class i % n_classes."""
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % n_classes
    centres = rng.standard_normal((n_classes, d), dtype=np.float32)
    x = rng.standard_normal((n, d), dtype=np.float32)
    x *= 1.5
    for a in range(0, n, 10_000):  # in place: no temporary as large as x
        x[a : a + 10_000] += centres[labels[a : a + 10_000]]
    return x, labels


def product_and_sort(q: np.ndarray, t: np.ndarray) -> None:
    """The reference: ``q @ t.T`` and np.sort of each row, in blocks of about 128 MB."""
    rows = max(1, 2**25 // len(t))
    for a in range(0, len(q), rows):
        np.sort(q[a : a + rows] @ t.T, axis=1)


def case_embeddings(repeat: int) -> None:
    import shrec_score

    x, labels = embeddings_data(20_000, 256, 100)
    got = in_turn({"ours": lambda: shrec_score.evaluate(embeddings=x, labels=labels), "ref": lambda: product_and_sort(x, x)}, repeat)
    compare("emb 20k", got["ours"].cpu, "x @ x.T + np.sort CPU", got["ref"].cpu, 1.2, unit="s CPU")
    x, labels = embeddings_data(4_096 + 100_000, 512, 1_000)
    q, t, ql, tl = x[:4_096], x[4_096:], labels[:4_096], labels[4_096:]
    got = in_turn({"ours": lambda: shrec_score.evaluate(query_embeddings=q, target_embeddings=t, query_labels=ql, target_labels=tl), "ref": lambda: product_and_sort(q, t)}, repeat)
    compare("emb 4k-100k", got["ours"].cpu, "q @ t.T + np.sort CPU", got["ref"].cpu, 1.2, unit="s CPU")


def case_dask(repeat: int) -> None:
    """A 20,000^2 matrix as Zarr (blocks of 1,000 rows) on a LocalCluster of 2 workers against the .npy in one process."""
    folder = tempfile.mkdtemp(prefix="bench-dask-")
    try:
        npy, cla = make_matrix(20_000, folder)
        zarr = os.path.join(folder, "z", "run.zarr")
        subprocess.run([CLI, "convert", npy, zarr, "--to", "zarr", "--chunk-rows", "1000"], check=True, stderr=subprocess.DEVNULL)
        outs = [os.path.join(folder, k) for k in ("single", "dask")]
        got = in_turn({
            "single": [CLI, npy, "-r", cla, "--run-format", "matrix", "--out", outs[0], "--quiet", "--format", "csv"],
            "dask": [CLI, zarr, "-r", cla, "--dask", "local:2", "--out", outs[1], "--quiet", "--format", "csv"],
        }, repeat)
        same = all(open(os.path.join(outs[0], f), "rb").read() == open(os.path.join(outs[1], f), "rb").read() for f in ("per_query.csv", "per_run.csv"))
        compare("dask", got["dask"].wall, "one process", got["single"].wall, float("inf"), memory=f"CSVs identical: {same}", memory_ok=same)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# -- the table in docs/performance.md ----------------------------------------------------------

START, END = "<!-- bench table: written by bench/run_bench.py -->", "<!-- end of bench table -->"


def machine() -> str:
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as fh:
            model = next(ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{model}, {os.cpu_count()} cores"


def write_docs(started: str, load: float) -> None:
    import shrec_score

    git = lambda *a: subprocess.run(["git", "-C", ROOT, *a], capture_output=True, text=True).stdout.strip()  # noqa: E731
    dirty = [ln for ln in git("status", "--porcelain", "--", "shrec_score").splitlines()]
    lines = [
        f"Written by `make bench` on {started} UTC; {machine()}, load average {load:.1f} at the start;",
        f"shrec-score {shrec_score.__version__} at commit {git('rev-parse', '--short', 'HEAD')}{' with uncommitted changes' if dirty else ''};"
        f" Python {sys.version.split()[0]}, numpy {np.__version__}.",
        "",
        "| case | ours | reference | ratio | budget | result | memory / note |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        *(f"| {r.case} | {r.ours} | {r.reference} | {r.ratio} | {r.budget} | {'OK' if r.ok else 'MISSED'} | {r.memory} |" for r in ROWS),
    ]
    path = os.path.join(ROOT, "docs", "performance.md")
    with open(path) as fh:
        head, rest = fh.read().split(START, 1)
    with open(path, "w") as fh:
        fh.write(head + START + "\n" + "\n".join(lines) + "\n" + END + rest.split(END, 1)[1])
    print(f"table written into {os.path.relpath(path)}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=DEFAULT_CASES)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--generate", action="store_true", help="only generate the cases' inputs")
    args = ap.parse_args()
    cases = args.cases.split(",")
    if args.generate:
        for case in cases:
            if case in GOLDEN_CASES:
                case_args(case)
        return
    # the package byte-compiled (under PYTHONDONTWRITEBYTECODE every start would compile it)
    import shrec_score

    compileall.compile_dir(os.path.dirname(shrec_score.__file__), quiet=1)
    # inputs first, niced, so that a generation slows the machine's other users less
    subprocess.run(["nice", "-n", "10", sys.executable, __file__, "--generate", "--cases", args.cases], check=True)
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
    load = os.getloadavg()[0]
    print(f"{started} UTC; {machine()}; load average {load:.1f}; Python {sys.version.split()[0]}, numpy {np.__version__}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-trec_eval-") as build:
        trec_eval = trec_eval_binary(build) if {"trec", "trec-long"} & set(cases) else None
        for case in cases:
            if case in ("trec", "trec-long"):
                case_trec(case, args.repeat, trec_eval)
            elif case == "lists":
                case_lists(args.repeat)
            elif case in ("matrix10k", "matrix4k"):
                case_matrix(case, args.repeat)
            elif case == "startup":
                case_startup(args.repeat)
            elif case == "embeddings":
                case_embeddings(args.repeat)
            elif case == "dask":
                case_dask(args.repeat)
            else:
                raise SystemExit(f"unknown case {case!r}; the cases: {DEFAULT_CASES},dask")
    if args.cases == DEFAULT_CASES:
        write_docs(started, load)
    else:
        print("docs/performance.md left as it is (not every default case ran)", flush=True)


if __name__ == "__main__":
    main()
