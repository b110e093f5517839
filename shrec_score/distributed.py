"""Scoring on a Dask cluster (docs/scale-out.md): :func:`score` is :func:`shrec_score.score` with a task per
stored block of a row-block matrix (per run otherwise), gathered by :func:`~shrec_score.engine.collect`: same CSVs."""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from importlib.util import find_spec
from typing import Any, cast

import numpy as np

from . import api
from .engine import RunScores, matrix_chunks, ranks_suffice
from .errors import InputError, OptionError
from .io.chunked import INSTALL_HINT, RowBlockMatrix, open_row_blocks
from .io.runs import BlockSource
from .join import matrix_ids, matrix_run
from .loading import AnyRun, FoundRuns, PathLike, Progress, find_runs, load_with
from .model import MatrixRun, RunSource
from .options import Options
from .relevance import Relevance
from .report import Report

#: Run by each ``local:N`` worker process as it starts (a preload given as its text).
_IGNORE_SIGINT = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
#: A task: (function, its arguments after the shared object, run number).
Task = tuple[Callable[..., Any], tuple[Any, ...], int]


def cluster_target(dask: Any) -> tuple[str | None, int | None]:
    """What ``dask=`` names, checked before anything is read: ``(scheduler address, None)``, ``(None, N)`` for
    ``local:N``, or ``(None, None)`` (none, or the caller's client)."""
    if dask is None:
        return None, None
    for name in ("dask", "distributed", "zarr"):
        if find_spec(name) is None:
            raise OptionError(f"--dask needs the optional packages dask[distributed] and zarr (no module {name!r}); install them with: {INSTALL_HINT}")
    if not isinstance(dask, str):
        return None, None
    if dask.startswith("local:"):
        n = dask[len("local:") :]
        if not n.isascii() or not n.isdigit() or int(n) < 1:
            raise OptionError(f"dask: expected local:N with N >= 1 worker processes, got {dask!r}")
        return None, int(n)
    if "://" not in dask and ":" not in dask:
        raise OptionError(f"dask: expected a scheduler address (tcp://HOST:8786) or local:N, got {dask!r}")
    return dask, None


@dataclass(frozen=True)
class _Shared(api.Scoring):
    """Everything a task needs besides its own run or block, sent to each worker once: the scoring, the discovery's id
    spelling and target index (its sources and notes left out: a run read whole is not found again), and a row-block
    run without its matrix (the row of each query, the target of each column: alike for every row-block run)."""

    found: FoundRuns | None = None
    blocks: MatrixRun | None = None


class _Rows:
    """The rows ``rows`` (ascending) of a row-block ``matrix``, held in memory and indexed by their numbers in the
    whole matrix (messages name those); another row is read from ``matrix`` (the search for a first NaN cell)."""

    def __init__(self, matrix: RowBlockMatrix, block: np.ndarray, rows: np.ndarray) -> None:
        self.matrix, self.block, self.rows = matrix, block, rows
        self.shape, self.located = matrix.shape, matrix.located

    def __getitem__(self, index: Any) -> np.ndarray:
        if isinstance(index, slice):
            index = np.arange(index.start, index.stop)
        at = np.minimum(np.searchsorted(self.rows, index), self.rows.size - 1)
        if np.array_equal(self.rows[at], index):  # every row held
            return self.block[at]
        return self.matrix[index]


def _score_rows(
    shared: _Shared, path: str, name: str, by: str, a: int, b: int,
) -> tuple[list[tuple[np.ndarray, RunScores]], Counter[str] | None]:
    """The queries of rows ``a..b`` (``by="rows"``: a stored block) or queries ``a..b`` (engine chunks) of a row-block
    matrix, read on the worker and scored a chunk at a time: ``[(queries, their scores)]`` and the drops."""
    matrix, rel = open_row_blocks(path), shared.relevance
    run = replace(cast(MatrixRun, shared.blocks), name=name, path=path)
    if by == "rows":
        q = np.flatnonzero((run.row_of_query >= a) & (run.row_of_query < b))
        chunks = [q] if q.size else []  # rows of ignorable queries only (class -1): none
    else:
        chunks = matrix_chunks(rel, matrix.shape[1], np.arange(a, b))
    if not chunks:
        return [], None
    rows = np.unique(run.row_of_query[np.concatenate(chunks)])
    lo, hi = int(rows[0]), int(rows[-1]) + 1
    whole = any(a <= lo and hi <= b for a, b in matrix.blocks)  # within one stored block: read as one slice
    run.matrix = _Rows(matrix, matrix.read(lo, hi) if whole else matrix[rows], np.arange(lo, hi) if whole else rows)  # type: ignore[assignment]
    run.drops = Counter() if shared.options.lenient else None
    parts = []
    for q in chunks:
        sc = shared.score(run, q)
        values = {k: v[q] for k, v in sc.values.items()}
        parts.append((q, RunScores(name, values, sc.pr[q], sc.vectors, sc.gain_at_recall)))
    return parts, run.drops


def _score_source(shared: _Shared, source: RunSource) -> tuple[RunScores, AnyRun, list[str]]:
    """One run read and scored whole on the worker: its scores, the run without its data (what the report reads of
    it: name, queries, lengths, drops, tag) and its reader's notes."""
    (run,), notes = load_with(replace(cast("FoundRuns", shared.found), sources=[source]), shared.relevance, shared.options)
    if isinstance(run, MatrixRun):
        return shared.score(run), replace(run, matrix=np.zeros((0, 0))), notes
    return shared.score(run), replace(run, targets=np.zeros(0, np.int64), tie_start=None, target_ids=None), notes


def _the(shared: _Shared) -> _Shared:
    return shared


def score(
    runs: Sequence[PathLike], relevance: PathLike | Relevance, *, dask: Any = None, options: Options | None = None, progress: Progress | None = None, **settings: Any
) -> Report:
    """Score runs on a Dask cluster; the same :class:`~shrec_score.report.Report` as :func:`shrec_score.score`.

    ``runs`` (and row-block matrices: Zarr or ``.npy`` row shards), ``options``, ``settings`` and the errors as
    :func:`shrec_score.score`'s.  ``dask``: ``"tcp://HOST:8786"``, ``"local:N"`` (N worker processes, closed before
    returning), the caller's ``distributed.Client`` (left open), or None: here, by :func:`shrec_score.score` when no run
    is a row-block matrix (after this one discovery of ``runs``), else the tasks one after the other.
    ``progress``: the tasks come back, in task order, and every 0.1 s while a cluster works (docs/scale-out.md)."""
    opts = Options.of(options, settings)
    address, local = cluster_target(dask)
    scoring = api.Scoring.start(relevance, opts)
    rel = scoring.relevance
    found = find_runs(runs, rel, opts, row_blocks=True)  # the one discovery of the RUNS arguments
    if dask is None and not any(isinstance(s, BlockSource) for s in found.sources):
        return api.score(found, rel, options=opts, progress=progress)  # (its reading progress, its order of errors)
    shared = _Shared(**vars(scoring), found=replace(found, sources=[], notes=[]))
    by_block = ranks_suffice(shared.measures, opts.settings, curves=rel.gain_curves)
    by = "rows" if by_block else "queries"  # rows: a task per stored block
    tasks: list[Task] = []
    for i, s in enumerate(found.sources):
        if isinstance(s, BlockSource):  # every block matrix's shape checked
            ids = matrix_ids(rel, opts.matrix_order, s.path, s.matrix.shape)
            shared = replace(shared, blocks=matrix_run("", "", None, rel, *ids))
            spans = s.matrix.blocks if by_block else _chunk_groups(rel, s.matrix)
            tasks.extend((_score_rows, (s.path, s.name, by, a, b), i) for a, b in spans)
        else:
            tasks.append((_score_source, (s,), i))
    report = progress or (lambda stage, done, total: None)
    report("scoring", 0, len(tasks))
    if dask is None:
        results = []
        for fn, args, _ in tasks:
            results.append(fn(shared, *args))
            report("scoring", len(results), len(tasks))
    else:
        results = _run_on_cluster(dask, address, local, shared, tasks, report)
    each = [_assemble(s, [r for (_, _, run), r in zip(tasks, results) if run == i], shared) for i, s in enumerate(found.sources)]
    notes = [*found.notes, *(note for _, _, more in each for note in more)]  # discovery's, then each run's reader's
    return shared.report([sc for sc, _, _ in each], [stub for _, stub, _ in each], notes)


def _chunk_groups(rel: Relevance, matrix: RowBlockMatrix) -> list[tuple[int, int]]:
    """The queries ``a..b`` of each task: whole engine chunks, about a stored block's rows a task."""
    per_task = max(1, max(b - a for a, b in matrix.blocks))
    groups: list[tuple[int, int]] = []
    for c in matrix_chunks(rel, matrix.shape[1], np.arange(rel.n_queries)):
        if groups and c[-1] + 1 - groups[-1][0] <= per_task:
            groups[-1] = (groups[-1][0], int(c[-1]) + 1)
        else:
            groups.append((int(c[0]), int(c[-1]) + 1))
    return groups


def _assemble(source: RunSource | BlockSource, results: list[Any], shared: _Shared) -> tuple[RunScores, AnyRun, list[str]]:
    """One run's :class:`RunScores` from its tasks' results (in task order), its stub and its notes."""
    if not isinstance(source, BlockSource):
        return cast("tuple[RunScores, AnyRun, list[str]]", results[0])  # one task: _score_source's
    sc = RunScores.empty(source.name, shared.relevance.n_queries, shared.measures, shared.options.settings)
    drops: Counter[str] | None = Counter() if shared.options.lenient else None
    for parts, task_drops in results:
        for q, p in parts:
            for k, v in p.values.items():
                sc.values[k][q] = v
            sc.pr[q] = p.pr
            for mine, theirs in ((sc.vectors, p.vectors), (sc.gain_at_recall, p.gain_at_recall)):
                for k, acc in theirs.items():  # chunk by chunk, in the single process's order
                    mine[k].total += acc.total
                    mine[k].count += acc.count
        if drops is not None and task_drops:
            drops.update(task_drops)
    return sc, replace(cast(MatrixRun, shared.blocks), name=source.name, path=source.path, matrix=np.zeros((0, 0)), drops=drops), []


def _run_on_cluster(dask: Any, address: str | None, local: int | None, shared: _Shared, tasks: list[Task], progress: Progress) -> list[Any]:
    """The tasks' results in task order; the first error (or an interruption) cancels every other task."""
    from contextlib import ExitStack

    from distributed import Client, LocalCluster

    with ExitStack() as stack:
        if local is not None:  # a free loopback dashboard port, workers silent and deaf to Ctrl-C (docs/scale-out.md)
            cluster = LocalCluster(
                n_workers=local, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0", silence_logs=logging.CRITICAL, preload=[_IGNORE_SIGINT]
            )
            client = stack.enter_context(Client(stack.enter_context(cluster)))
        elif address is not None:
            try:
                client = stack.enter_context(Client(address, timeout="10s"))
            except OSError as exc:
                raise InputError(address, None, "could not reach the Dask scheduler (is `dask scheduler` running there?)", str(exc)[:120]) from None
        else:
            client = dask  # the caller's client: left open
        token = client.submit(_the, shared, pure=False)  # a task, not scattered data: lineage (docs/scale-out.md)
        futures = [client.submit(fn, token, *args, pure=False) for fn, args, _ in tasks]
        try:  # in task order: the first error in that order is raised, as in one process
            return [_result(f, task, i, len(tasks), progress) for i, (f, task) in enumerate(zip(futures, tasks))]
        except BaseException:
            client.cancel(futures, force=True)
            raise
        finally:
            client.cancel([token], force=True)


def _result(future: Any, task: Task, i: int, total: int, progress: Progress) -> Any:
    """Task ``i``'s result or its error, the progress callback told every 0.1 s while it works and when it is back."""
    from distributed.scheduler import KilledWorker

    while not future.done():
        time.sleep(0.1)
        progress("scoring", i, total)
    try:
        result = future.result()
    except KilledWorker:  # its workers died again and again: Dask gave it up
        fn, args, _ = task
        what = "this run" if fn is _score_source else f"{args[2]} {args[3] + 1}..{args[4]}"
        where = args[0].path if fn is _score_source else args[0]
        raise InputError(where, None, f"the Dask workers scoring {what} died each time it was tried (out of memory? see the workers' logs; smaller --chunk-rows help)") from None
    progress("scoring", i + 1, total)
    return result
