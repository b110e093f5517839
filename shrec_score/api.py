"""The library API: everything the CLI does, callable from a notebook.

>>> import shrec_score
>>> report = shrec_score.score(["sample_runs/psb-like/runs"],
...                            relevance="sample_runs/psb-like/classes.cla")  # doctest: +SKIP
>>> report.to_dataframe()  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from . import __version__
from .aggregate import leaderboard, per_run_means
from .engine import evaluate
from .errors import InputError
from .io.cla import read_classification
from .io.lists import discover_runs, read_list_run
from .measures import DEFAULT_BINARY, PR_LEVELS, Settings, get_measure
from .model import Classification, RankedRun
from .relevance import Relevance
from .report import Report

PathLike = str | os.PathLike[str]


def load_relevance(
    relevance: PathLike | Classification,
    queries: PathLike | Classification | None = None,
    *,
    grades: str = "binary",
) -> Relevance:
    """Build the relevance model from a target ``.cla`` and an optional query ``.cla``."""
    targets = relevance if isinstance(relevance, Classification) else read_classification(relevance)
    qcla = None
    if queries is not None:
        qcla = queries if isinstance(queries, Classification) else read_classification(queries)
    return Relevance.from_classification(targets, qcla, grades=grades)  # type: ignore[arg-type]


def load_runs(paths: Sequence[PathLike], relevance: Relevance) -> tuple[list[RankedRun], list[str]]:
    """Read every run found in ``paths`` (folders of runs or run folders)."""
    sources, notes = discover_runs(paths)
    self_index = {q: int(i) for q, i in zip(relevance.query_ids, relevance.self_index) if i >= 0}
    runs = [
        read_list_run(
            s,
            relevance.query_ids,
            relevance.target_index,
            self_index=self_index,
            ignorable=relevance.ignorable_queries,
        )
        for s in sources
    ]
    return runs, notes


def score(
    runs: Sequence[PathLike] | Sequence[RankedRun],
    relevance: PathLike | Classification | Relevance,
    *,
    queries: PathLike | Classification | None = None,
    measures: Sequence[str] | None = None,
    sort: str | None = None,
    settings: Settings = Settings(),
) -> Report:
    """Score runs and return a :class:`~shrec_score.report.Report`.

    Parameters
    ----------
    runs : paths or RankedRun objects
        Folders of runs (one sub-folder per run), run folders, or runs already read.
    relevance : path, Classification or Relevance
        The target classification (``.cla``) or a ready relevance model.
    queries : path or Classification, optional
        A separate query classification; by default the classified models are
        the queries (all-against-all).
    measures : list of str, optional
        Measure names (default NN FT ST E DCG AP).
    sort : str, optional
        Leaderboard measure (default: the first measure).
    """
    rel = relevance if isinstance(relevance, Relevance) else load_relevance(relevance, queries)
    names = list(measures) if measures else list(DEFAULT_BINARY)
    try:
        resolved = [get_measure(n) for n in names]
    except KeyError as exc:
        raise InputError(None, None, f"unknown measure {exc.args[0]!r}; see 'shrec-score measures'") from None
    sort_name = resolved[0].name if sort is None else _resolve_sort(sort, resolved)
    notes: list[str] = []
    if runs and not isinstance(runs[0], RankedRun):
        run_objs, notes = load_runs(runs, rel)  # type: ignore[arg-type]
    else:
        run_objs = list(runs)  # type: ignore[arg-type]
    ev = evaluate(run_objs, rel, resolved, settings)
    mnames = [m.name for m in resolved]
    per_run = per_run_means(ev.per_query, mnames, [r.name for r in run_objs])
    board = leaderboard(per_run, sort_name)
    k = rel.n_relevant(1)
    warnings = list(notes)
    n_empty = int((k == 0).sum())
    if n_empty:
        first = rel.query_ids[int((k == 0).argmax())]
        warnings.append(
            f"{n_empty} of {rel.n_queries} queries have no relevant target (K = 0, first: {first!r}): "
            "listed with empty values, left out of the means"
        )
    if rel.ignorable_queries:
        warnings.append(f"{len(rel.ignorable_queries)} models of class '-1' (miscellaneous) are not queries and never relevant")
    signature = {
        "version": __version__,
        "mode": rel.mode,
        "relevance": "graded (sister classes)" if rel.graded else "binary (same class)",
        "queries": int(rel.n_queries - n_empty),
        "collection": rel.collection_size,
        "ties": "file order of the ranked list",
        "e_depth": settings.e_depth,
        "pr_levels": f"{PR_LEVELS[0]:.2f}..{PR_LEVELS[-1]:.2f} step 0.05, PSB interpolation",
        "averaging": "mean over queries with K > 0",
    }
    return Report(ev.per_query, board, ev.pr_curve, mnames, sort_name, signature, warnings)


def _resolve_sort(sort: str, resolved: list) -> str:
    try:
        name = get_measure(sort).name
    except KeyError:
        name = sort
    if name not in [m.name for m in resolved]:
        shown = ", ".join(m.name for m in resolved)
        raise InputError(None, None, f"expected --sort to name a measure that is computed ({shown})", repr(sort))
    return name
