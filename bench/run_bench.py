"""shrec-score benchmark (`make bench`): issue 29's budgets, each measured side by side.

Within each of --repeat rounds, ours and every reference run in turn (medians),
so that the shared machine's changes of speed fall on all of them.  Each
generated case is first scored once with --out and its CSVs compared with the
numbers of 0.1.0 stored in bench/golden (text exactly, numbers to 1e-12).  The
cases, their references and budgets: docs/performance.md, where a run of the
default cases writes its table.  Inputs: bench/inputs.py (into bench/_data).

    python bench/run_bench.py [--cases trec,trec-long,lists,matrix10k,matrix4k,startup,embeddings] [--repeat 3]
    python bench/run_bench.py --cases dask      # not in the default cases: 3.2 GB of disk
    python bench/run_bench.py --cases server    # not in the default cases: needs shrec-score[server]
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
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

import numpy as np
from inputs import TREC_MEASURES, case_args, make_matrix

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GOLDEN = os.path.join(HERE, "golden")
CLI = os.path.join(os.path.dirname(sys.executable), "shrec-score")
DEFAULT_CASES = "trec,trec-long,lists,matrix10k,matrix4k,startup,embeddings"
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


def cached(paths: list[str]) -> None:
    """Read every file under ``paths`` once, so that it is in the page cache."""
    for top in paths:
        for name in [top] if os.path.isfile(top) else sorted(os.path.join(r, f) for r, _, fs in os.walk(top) for f in fs):
            with open(name, "rb") as fh:
                while fh.read(16 << 20):
                    pass


def in_turn(jobs: dict, repeat: int, inputs: list[str] = ()) -> dict[str, Sample]:
    """Each job once per round, in turn, for ``repeat`` rounds; each starts with ``inputs`` in the page cache (a
    job after a memory-hungry peer would read them from disk, one after a light one from memory)."""
    got: dict[str, list] = {name: [] for name in jobs}
    for _ in range(repeat):
        for name, job in jobs.items():
            cached(list(inputs))
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


#: The Python peers end to end: read both files, compute the same measures.
RANX = """import sys
from ranx import Qrels, Run, evaluate
evaluate(Qrels.from_file(sys.argv[1], kind="trec"), Run.from_file(sys.argv[2], kind="trec"), ["map", "precision@1", "r-precision", "precision@10", "ndcg@10"])
"""
PYTREC_EVAL = """import sys, pytrec_eval
with open(sys.argv[1]) as q, open(sys.argv[2]) as r:
    pytrec_eval.RelevanceEvaluator(pytrec_eval.parse_qrel(q), {"map", "P", "Rprec", "ndcg_cut"}).evaluate(pytrec_eval.parse_run(r))
"""


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
    jobs["pytrec_eval"] = [sys.executable, "-c", PYTREC_EVAL, qrels, run]
    jobs["ranx"] = [sys.executable, "-c", RANX, qrels, run]
    jobs["ir_measures"] = [os.path.join(os.path.dirname(sys.executable), "ir_measures"), qrels, run, "AP P@1 Rprec P@10 nDCG@10"]
    try:
        timed(jobs["ranx"])  # numba's on-disk cache warmed, as a returning user meets it
    except (RuntimeError, subprocess.CalledProcessError, FileNotFoundError) as exc:
        print(f"{case}: ranx not run ({exc})", flush=True)
        del jobs["ranx"]
    got = in_turn(jobs, repeat, [qrels, run])
    ours = got.pop("ours")
    for name, s in got.items():
        compare(case, ours.wall, name, s.wall, 0.4 if name == "trec_eval" else 1.0, memory=f"peak {ours.rss / GB:.2f} GB", memory_budget="<= 2 GB", memory_ok=ours.rss <= 2 * GB)


def case_lists(repeat: int) -> None:
    import pandas as pd

    args = case_args("lists")
    shutil.rmtree(scored_once("lists", args), ignore_errors=True)
    files = sorted(os.path.join(root, f) for root, _, names in os.walk(args[0]) for f in names)
    got = in_turn({"ours": [CLI, *args, "--quiet", "--format", "csv"], "pandas": lambda: [pd.read_csv(f, sep=" ", header=None) for f in files]}, repeat, [args[0], args[2], args[4]])
    compare("lists", got["ours"].wall, "pandas.read_csv loop", got["pandas"].wall, 1.5, memory=f"CPU ratio {got['ours'].cpu / got['pandas'].cpu:.2f}")


def case_matrix(case: str, repeat: int) -> None:
    args = case_args(case)
    shutil.rmtree(scored_once(case, args), ignore_errors=True)
    size = os.path.getsize(args[0])
    jobs = {"ours": [CLI, *args, "--quiet", "--format", "csv"], "argsort": [sys.executable, "-c", "import sys, numpy as np; np.argsort(np.load(sys.argv[1]), axis=1)", args[0]]}
    got = in_turn(jobs, repeat, [args[0], args[2]])
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
        d, one = got["dask"].wall, got["single"].wall
        report(Row("dask", f"{d:.3f} s", f"one process {one:.3f} s", f"{d / one:.2f}", "report only", same, f"CSVs identical: {same}"))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def case_server(repeat: int) -> None:
    """shrec-score serve on the psb-like sample: uploads per second (each checked) and the latency
    from a 201 to the run scored, against the same scoring by the CLI (the server's overhead)."""
    import httpx

    sample, folder = os.path.join(ROOT, "sample_runs", "psb-like"), tempfile.mkdtemp(prefix="bench-server-")
    contest = os.path.join(folder, "contest.yaml")
    with open(contest, "w") as fh:
        fh.write(f"title: bench\ntrack: {ROOT}/configs/psb.yaml\nrelevance: {sample}/classes.cla\ndata: data\nrate_limit: 100000\n"
                 "phases:\n  - {name: p, opens: 2000-01-01T00:00:00Z, closes: 2999-01-01T00:00:00Z, max_runs: 100000, leaderboard: live}\n")
    token = subprocess.run([CLI, "contest", "add-team", contest, "bench"], capture_output=True, text=True, check=True).stdout.strip()
    shutil.make_archive(os.path.join(folder, "D2"), "zip", os.path.join(sample, "runs"), "D2")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([CLI, "serve", contest, "--port", str(port)], stderr=subprocess.DEVNULL)
    try:
        client = httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {token}"}, timeout=120)
        while True:
            try:
                client.get("/healthz")
                break
            except httpx.TransportError:
                time.sleep(0.05)
        data = open(os.path.join(folder, "D2.zip"), "rb").read()
        latencies, n = [], 10 * repeat
        for _ in range(repeat):  # one run at a time: the queue is empty when it arrives
            t = time.perf_counter()
            run = client.post("/api/runs", files={"file": ("D2.zip", data)}).json()["id"]
            while client.get(f"/api/runs/{run}").json()["status"] == "queued":
                time.sleep(0.01)
            latencies.append(time.perf_counter() - t)
        t = time.perf_counter()
        assert all(client.post("/api/runs", files={"file": ("D2.zip", data)}).status_code == 201 for _ in range(n))
        per_second = n / (time.perf_counter() - t)
    finally:
        server.terminate()
        server.wait()
    cli = statistics.median(timed([CLI, "--config", os.path.join(ROOT, "configs", "psb.yaml"), os.path.join(sample, "runs", "D2"), "--out", os.path.join(folder, "cli"), "--quiet", "--format", "csv"])[0] for _ in range(repeat))
    shutil.rmtree(folder, ignore_errors=True)
    lat = statistics.median(latencies)
    report(Row("server psb-like", f"{lat:.3f} s", f"CLI {cli:.3f} s", f"{lat / cli:.2f}", "report only", True, f"upload to scored; {per_second:.1f} uploads/s, each checked"))


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


def version() -> str:
    """shrec-score's version and the repo's commit (taken at the start: the bench may be edited meanwhile)."""
    import shrec_score

    git = lambda *a: subprocess.run(["git", "-C", ROOT, *a], capture_output=True, text=True).stdout.strip()  # noqa: E731
    dirty = " with uncommitted changes to shrec_score/" if git("status", "--porcelain", "--", "shrec_score") else ""
    return f"shrec-score {shrec_score.__version__} at commit {git('rev-parse', '--short', 'HEAD')}{dirty}"


def write_docs(header: str) -> None:
    lines = [
        f"Written by `make bench` ({header}).",
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
    args = ap.parse_args()
    cases = args.cases.split(",")
    # the package byte-compiled (under PYTHONDONTWRITEBYTECODE every start would compile it)
    import shrec_score

    compileall.compile_dir(os.path.dirname(shrec_score.__file__), quiet=1)
    # inputs first, niced, so that a generation slows the machine's other users less
    subprocess.run(["nice", "-n", "10", sys.executable, os.path.join(HERE, "inputs.py"), args.cases], check=True)
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
    header = f"{started} UTC; {machine()}, load average {os.getloadavg()[0]:.1f} at the start; {version()}; Python {sys.version.split()[0]}, numpy {np.__version__}"
    print(header, flush=True)
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
            elif case == "server":
                case_server(args.repeat)
            else:
                raise SystemExit(f"unknown case {case!r}; the cases: {DEFAULT_CASES},dask,server")
    if args.cases == DEFAULT_CASES:
        write_docs(header)
    else:
        print("docs/performance.md left as it is (not every default case ran)", flush=True)


if __name__ == "__main__":
    main()
