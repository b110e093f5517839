"""Scoring on a Dask cluster (docs/scale-out.md): :func:`score` is :func:`shrec_score.score` with the
work spread over the workers (a task per stored block of a row-block matrix, per run otherwise), the
values gathered through :func:`~shrec_score.engine.collect`, so every CSV is the single process's.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from .api import _report, plan_measures, relevance_for
from .engine import (
    MeanAccumulator,
    RunScores,
    collect,
    matrix_chunks,
    measure_values,
    pr_rows,
    score_run,
    small_class_queries,
)
from .errors import InputError, OptionError
from .io.chunked import INSTALL_HINT, RowBlockMatrix, open_row_blocks
from .io.runs import BlockSource, discover_sources
from .join import block_matrix_ids, matrix_run
from .loading import PathLike, Progress, load_with
from .measures import Measure, Settings
from .model import ChunkedRun, MatrixRun, RankedRun, RunSource
from .options import Options
from .ranking import matrix_rank_block, matrix_to_ranked_run
from .relevance import Relevance
from .report import Report

#: Run by each ``local:N`` worker process as it starts (a preload given as its text).
_IGNORE_SIGINT = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
#: A task: (function, its arguments after the shared object, run number).
Task = tuple[Callable[..., Any], tuple[Any, ...], int]


def cluster_target(dask: Any) -> tuple[str | None, int | None]:
    """What ``dask=`` names (``parse_address``'s pair; ``(None, None)`` for a Client or None), checked before anything is read."""
    from importlib.util import find_spec

    if dask is None:
        return None, None
    for name in ("dask", "distributed", "zarr"):
        if find_spec(name) is None:
            raise OptionError(f"--dask needs the optional packages dask[distributed] and zarr (no module {name!r}); install them with: {INSTALL_HINT}")
    return parse_address(dask) if isinstance(dask, str) else (None, None)


def parse_address(address: str) -> tuple[str | None, int | None]:
    """``(scheduler address, None)`` or ``(None, N)`` for ``local:N``.

    >>> parse_address("tcp://10.0.0.5:8786")
    ('tcp://10.0.0.5:8786', None)
    >>> parse_address("local:2")
    (None, 2)
    """
    if address.startswith("local:"):
        n = address[len("local:") :]
        if not n.isascii() or not n.isdigit() or int(n) < 1:
            raise OptionError(f"dask: expected local:N with N >= 1 worker processes, got {address!r}")
        return None, int(n)
    if "://" not in address and ":" not in address:
        raise OptionError(f"dask: expected a scheduler address (tcp://HOST:8786) or local:N, got {address!r}")
    return address, None


@dataclass
class _Shared:
    """Everything a task needs besides its own run or block: sent to each worker once."""

    relevance: Relevance
    measures: list[Measure]
    options: Options
    #: Matrix row of each query and target of each column (``--matrix-order``), for row-block runs.
    row_of_query: np.ndarray
    col_target: np.ndarray

    @property
    def settings(self) -> Settings:
        return self.options.settings

    @cached_property
    def relevant(self) -> tuple[Sequence[np.ndarray], np.ndarray]:
        """The relevant targets of every query at ``rel_level`` and K, computed once per worker."""
        level = self.settings.rel_level
        return self.relevance.relevant_targets(level), self.relevance.n_relevant(level)

    @property
    def fast(self) -> bool:
        """Binary measures only, nothing cut: the ranks of the relevant items suffice."""
        s = self.settings
        return all(m.kind == "binary" for m in self.measures) and not self.relevance.gain_curves and s.depth is None and not s.judged_only


@dataclass
class _Part:
    """Some queries of a row-block matrix: values, PR rows, and the curve sums of one engine chunk (or None)."""

    qrows: np.ndarray
    values: dict[str, np.ndarray]
    pr: np.ndarray
    vectors: dict[str, MeanAccumulator] | None
    gain_at_recall: dict[str, MeanAccumulator] | None
    drops: Counter[str] | None


class _Rows:
    """Rows of a matrix held in memory, indexed by their numbers in the whole matrix (messages name those)."""

    ndim = 2

    def __init__(self, block: np.ndarray, rows: np.ndarray, n_rows: int) -> None:
        self.block = block
        self.order = np.argsort(rows, kind="stable")
        self.sorted = rows[self.order]
        self.shape = (n_rows, block.shape[1])
        self.dtype = block.dtype

    def __getitem__(self, index: Any) -> np.ndarray:
        if isinstance(index, slice):
            index = np.arange(index.start, index.stop)
        return self.block[self.order[np.searchsorted(self.sorted, np.asarray(index))]]


class _OneChunk(ChunkedRun):
    """Queries ``qrows`` of a matrix run as the one chunk :func:`score_run` iterates, ranked as it ranks a matrix."""

    def __init__(self, run: MatrixRun, qrows: np.ndarray, ties: bool) -> None:
        self.name = run.name
        self.drops = run.drops
        self.run = run
        self.qrows = qrows
        self.ties = ties

    def chunks(self, relevance: Any) -> Iterator[tuple[np.ndarray, RankedRun, np.ndarray | None]]:
        lists = matrix_to_ranked_run(self.run, relevance.self_index[self.qrows], ties=self.ties)  # as engine._chunks ranks a matrix
        yield self.qrows, lists, None


def _block_run(shared: _Shared, path: str, name: str, qrows: np.ndarray) -> MatrixRun:
    """The rows of queries ``qrows``, read here (on the worker) as a matrix run."""
    matrix = open_row_blocks(path)
    rows = shared.row_of_query[qrows]
    lo, hi = int(rows.min()), int(rows.max()) + 1
    whole = any(a <= lo and hi <= b for a, b in matrix.blocks())  # within one stored block
    block = matrix.read(lo, hi) if whole else matrix[rows]
    held = _Rows(block, np.arange(lo, hi) if whole else rows, matrix.shape[0])
    query_ids = [shared.relevance.query_ids[i] for i in qrows.tolist()]
    drops: Counter[str] | None = Counter() if shared.options.lenient else None
    return MatrixRun(name, matrix.where(lo, hi) if whole else path, held, query_ids, rows, shared.col_target, drops=drops)  # type: ignore[arg-type]


def _score_block(shared: _Shared, path: str, name: str, a: int, b: int) -> list[_Part]:
    """Rows ``a..b`` (one stored block) of a row-block matrix, binary measures only, ranked as score_run's matrix branch."""
    rel = shared.relevance
    s = shared.settings
    qrows = np.flatnonzero((shared.row_of_query >= a) & (shared.row_of_query < b))
    if qrows.size == 0:  # rows of ignorable queries only (class -1)
        return []
    run = _block_run(shared, path, name, qrows)
    relevant, k = shared.relevant
    width = max(1, int(k.max(initial=0)))  # as wide as the single process's blocks: each row's sums add alike
    ranks = matrix_rank_block(run, [relevant[i] for i in qrows.tolist()], k[qrows], rel.self_index[qrows], ties=s.ties, width=width)
    values = {m.name: measure_values(m, ranks, s) for m in shared.measures}  # as score_run's matrix branch
    pr = pr_rows(ranks, s.recall_levels())
    return [_Part(qrows, values, pr, None, None, run.drops)]


def _score_chunks(shared: _Shared, path: str, name: str, chunks: list[tuple[int, int]]) -> list[_Part]:
    """Each of the engine's chunks of queries (graded or judged measures, curves, cut lists) scored by :func:`score_run` alone."""
    qall = np.arange(chunks[0][0], chunks[-1][1])
    run = _block_run(shared, path, name, qall)
    parts: list[_Part] = []
    for c0, c1 in chunks:
        qrows = np.arange(c0, c1)
        sub = MatrixRun(run.name, run.path, run.matrix, [run.query_ids[i - qall[0]] for i in range(c0, c1)], shared.row_of_query[qrows], run.col_target, drops=run.drops)
        sc = score_run(_OneChunk(sub, qrows, shared.settings.ties != "rule"), shared.relevance, shared.measures, shared.settings, curves=shared.relevance.gain_curves)
        values = {k: v[qrows] for k, v in sc.values.items()}
        parts.append(_Part(qrows, values, sc.pr[qrows], sc.vectors, sc.gain_at_recall, None if parts else run.drops))
    return parts


def _score_source(shared: _Shared, source: RunSource) -> tuple[RunScores, RankedRun | MatrixRun, list[str]]:
    """One run read and scored whole on the worker: its scores, what the report needs of it, notes."""
    (run,), notes = load_with([source.path], shared.relevance, shared.options, run_format=source.format)
    sc = score_run(run, shared.relevance, shared.measures, shared.settings, curves=shared.relevance.gain_curves)
    stub = _matrix_stub(run.name, run.path, run.drops) if isinstance(run, MatrixRun) else RankedRun(run.name, list(run.query_ids), np.zeros(0, np.int64), run.offsets, drops=run.drops)
    return sc, stub, notes


def _the(shared: _Shared) -> _Shared:
    return shared


def _matrix_stub(name: str, path: str, drops: Counter[str] | None) -> MatrixRun:
    return MatrixRun(name, path, np.zeros((0, 0)), [], np.zeros(0, np.int64), np.zeros(0, np.int64), drops=drops)


def score(
    runs: Sequence[PathLike], relevance: PathLike | Relevance, *, dask: Any = None, options: Options | None = None, progress: Progress | None = None, **settings: Any
) -> Report:
    """Score runs on a Dask cluster; the same :class:`~shrec_score.report.Report` as :func:`shrec_score.score`.

    ``runs`` as :func:`shrec_score.score` takes them, and matrices stored by blocks of rows (a Zarr array
    folder or ``.npy`` row shards with their ``manifest.json``).  ``dask``: ``"tcp://HOST:8786"``, ``"local:N"``
    (N worker processes here, closed before returning), the caller's ``distributed.Client`` (left open),
    or None (the same tasks one after the other here).  ``options``, ``progress`` (called with the number
    of tasks come back, in task order, and again every 0.1 s while a cluster works: a callback that
    raises cancels every task), ``settings`` and the errors as :func:`shrec_score.score`'s; a bad input
    read on a worker comes back as the same InputError, naming the shard or the Zarr chunk.
    """
    opts = Options.of(options, settings)
    address, local = cluster_target(dask)
    rel = relevance_for(relevance, opts)  # type: ignore[arg-type]
    plan = plan_measures(rel, opts)
    sources, notes = discover_sources(runs, opts.run_format)
    row_of_query = col_target = np.zeros(0, dtype=np.int64)
    blocks = [s for s in sources if isinstance(s, BlockSource)]
    for b in blocks:  # every block matrix's shape checked
        row_ids, col_ids = block_matrix_ids(b.path, b.matrix.shape, rel, opts.matrix_order)
    if blocks:
        mapped = matrix_run("", "", None, rel, row_ids, col_ids)
        row_of_query, col_target = mapped.row_of_query, mapped.col_target
    shared = _Shared(rel, list(plan.measures), opts, row_of_query, col_target)
    tasks: list[Task] = []
    for i, s in enumerate(sources):
        if isinstance(s, BlockSource) and shared.fast:
            tasks.extend((_score_block, (s.path, s.name, a, b), i) for a, b in s.matrix.blocks())
        elif isinstance(s, BlockSource):
            tasks.extend((_score_chunks, (s.path, s.name, group), i) for group in _chunk_groups(rel, s.matrix))
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
    scores, stubs = [], []
    for i, s in enumerate(sources):
        mine = [r for (_, _, run), r in zip(tasks, results) if run == i]
        if isinstance(s, BlockSource):
            sc, stub = _assemble(s, [p for parts in mine for p in parts], shared)
        else:
            ((sc, stub, run_notes),) = mine
            notes.extend(run_notes)
        scores.append(sc)
        stubs.append(stub)
    ev = collect(scores, rel, plan.measures, opts.settings, curves=rel.gain_curves)
    return _report(ev, stubs, rel, plan, opts, notes)


def _chunk_groups(rel: Relevance, matrix: RowBlockMatrix) -> list[list[tuple[int, int]]]:
    """The engine's chunks of queries of a whole matrix run, grouped into tasks of about one stored block of rows each."""
    per_task = max(1, max(b - a for a, b in matrix.blocks()))
    groups: list[list[tuple[int, int]]] = []
    for c in matrix_chunks(rel, matrix.shape[1]):
        if groups and groups[-1][-1][1] - groups[-1][0][0] + (c[1] - c[0]) <= per_task:
            groups[-1].append(c)
        else:
            groups.append([c])
    return groups


def _assemble(source: BlockSource, parts: list[_Part], shared: _Shared) -> tuple[RunScores, MatrixRun]:
    """One row-block run's :class:`RunScores` from its parts (in block order), and its stub."""
    sc = RunScores.empty(source.name, shared.relevance.n_queries, shared.measures, shared.settings)
    drops: Counter[str] | None = Counter() if shared.options.lenient else None
    for p in parts:
        for k, v in p.values.items():
            sc.values[k][p.qrows] = v
        sc.pr[p.qrows] = p.pr
        for mine, theirs in ((sc.vectors, p.vectors), (sc.gain_at_recall, p.gain_at_recall)):
            for k, acc in (theirs or {}).items():
                mine[k].total += acc.total
                mine[k].count += acc.count
        if drops is not None and p.drops:
            drops.update(p.drops)
    sc.leave_out(small_class_queries(shared.relevance, shared.settings.min_class_size))
    return sc, _matrix_stub(source.name, source.path, drops)


def _run_on_cluster(dask: Any, address: str | None, local: int | None, shared: _Shared, tasks: list[Task], progress: Progress) -> list[Any]:
    """The tasks' results in task order; the first error (or an interruption) cancels every other task."""
    from contextlib import ExitStack

    from distributed import Client, LocalCluster

    with ExitStack() as stack:
        if local is not None:
            # dashboard on a free loopback port; workers silent and deaf to Ctrl-C (docs/scale-out.md)
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
        # the shared object as a task, not scattered data: it has lineage (docs/scale-out.md)
        token = client.submit(_the, shared, pure=False)
        futures = [client.submit(fn, token, *args, pure=False) for fn, args, _ in tasks]
        try:  # in task order: the first error in that order is raised, as in one process
            return [_result(f, task, i, len(tasks), progress) for i, (f, task) in enumerate(zip(futures, tasks))]
        except BaseException:
            client.cancel(futures, force=True)
            raise
        finally:
            client.cancel([token], force=True)


def _result(future: Any, task: Task, i: int, total: int, progress: Progress) -> Any:
    """Task ``i``'s result or its error (an InputError intact), the progress callback told every 0.1 s while it
    works (one that raises cancels the tasks) and again when it comes back."""
    from distributed.scheduler import KilledWorker

    while not future.done():
        time.sleep(0.1)
        progress("scoring", i, total)
    try:
        result = future.result()
    except KilledWorker:
        raise _lost(task) from None
    progress("scoring", i + 1, total)
    return result


def _lost(task: Task) -> InputError:
    """The error for a task whose workers died again and again (Dask gave it up)."""
    fn, args, _ = task
    if fn is _score_source:
        where, what = args[0].path, "this run"
    elif fn is _score_block:
        where, what = args[0], f"rows {args[2] + 1}..{args[3]}"
    else:
        where, what = args[0], f"queries {args[2][0][0] + 1}..{args[2][-1][1]}"
    return InputError(where, None, f"the Dask workers scoring {what} died each time it was tried (out of memory? see the workers' logs; smaller --chunk-rows help)")
