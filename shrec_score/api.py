"""The library API: everything the CLI does, callable from a notebook.

>>> import shrec_score
>>> report = shrec_score.score(["sample_runs/psb-like/runs"],
...                            relevance="sample_runs/psb-like/classes.cla")  # doctest: +SKIP
>>> report.to_dataframe()  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from . import __version__
from .aggregate import leaderboard, macro_means, per_class_means, per_query_ranking, per_run_means
from .engine import evaluate
from .errors import InputError
from .io import trec_stream
from .io.cla import read_classification
from .io.lists import read_list_run
from .io.runs import FORMATS, discover_runs, first_trec_file, read_matrix_run, read_trec_run
from .io.text import read_text
from .io.trec import read_qrels
from .measures import DEFAULT_BINARY, SHOWN_GRADED, Settings, get_measure, graded_defaults
from .model import Classification, MatrixRun, RankedRun
from .relevance import Relevance
from .report import Report

PathLike = str | os.PathLike[str]
#: A run as :func:`load_runs` hands it over (TREC files may be streamed while scored).
AnyRun = RankedRun | MatrixRun | trec_stream.TrecStreamRun


def is_classification_file(path: PathLike) -> bool:
    """True for a PSB ``.cla`` (first word ``PSB``), False for TREC qrels."""
    try:
        with open(path, "rb") as fh:  # the first word tells: no need to read a large qrels file twice
            head = fh.read(4096).removeprefix(b"\xef\xbb\xbf")
    except OSError:
        read_text(path)  # raises the error that names the file
        raise
    words = head.split(None, 1)
    return bool(words) and words[0] == b"PSB"


def load_relevance(
    relevance: PathLike | Classification,
    queries: PathLike | Classification | None = None,
    *,
    grades: str = "binary",
    collection: PathLike | Classification | None = None,
    collection_size: int | None = None,
) -> Relevance:
    """Build the relevance model.

    ``relevance`` is a target ``.cla`` (relevance by class; ``grades="sister"``
    for SHREC 2006 graded relevance) or a TREC qrels file (grades from the
    file; Ds from ``collection`` or ``collection_size``).
    """
    if isinstance(relevance, Classification) or is_classification_file(relevance):
        targets = relevance if isinstance(relevance, Classification) else read_classification(relevance)
        qcla = None
        if queries is not None:
            qcla = queries if isinstance(queries, Classification) else read_classification(queries)
        return Relevance.from_classification(targets, qcla, grades=grades)  # type: ignore[arg-type]
    if grades != "binary":
        raise InputError(relevance, None, "expected a PSB .cla with --grades sister (qrels carry their own grades)")
    if queries is not None:
        raise InputError(relevance, None, "expected no --queries with qrels (the qrels name the queries)")
    coll = None
    if collection is not None:
        coll = collection if isinstance(collection, Classification) else read_classification(collection)
    qrels = read_qrels(relevance, meanwhile=_import_pandas)  # needed for the tables: imported while pyarrow reads
    return Relevance.from_qrels(qrels, collection=coll, collection_size=collection_size)


def _import_pandas() -> None:
    import pandas  # noqa: F401


def load_runs(
    paths: Sequence[PathLike],
    relevance: Relevance,
    *,
    run_format: str = "auto",
    matrix_order: str | None = None,
    progress=None,
    lenient: bool = False,
) -> tuple[list[AnyRun], list[str]]:
    """Read every run found in ``paths`` (see :func:`shrec_score.io.runs.discover_runs`).

    ``lenient``: score broken runs anyway by the documented rules; the notes
    then say, per run, what was dropped and why.
    """
    if run_format not in FORMATS:
        raise InputError(None, None, f"expected a run format among {', '.join(FORMATS)}", repr(run_format))
    sources, notes = discover_runs(paths, run_format, query_ids=dict.fromkeys(relevance.query_ids + relevance.ignorable_queries))
    self_index = {q: int(i) for q, i in zip(relevance.query_ids, relevance.self_index) if i >= 0}
    unjudged = None if relevance.closed else relevance.unjudged
    list_args = (relevance.query_ids, relevance.target_index, self_index, relevance.ignorable_queries, unjudged)
    read_ahead = _read_lists_in_workers([s for s in sources if s.format == "lists"], list_args, lenient)
    if read_ahead is not None:
        _import_pandas()  # needed for the tables: imported while the workers parse
    try:
        return _load_sources(sources, relevance, list_args, read_ahead, matrix_order, progress, lenient, notes)
    finally:
        for future in (read_ahead or {}).values():
            future.cancel()  # after an error, the runs not started yet are not read


def _load_sources(sources, relevance, list_args, read_ahead, matrix_order, progress, lenient, notes):
    from collections import Counter

    runs: list[AnyRun] = []
    for i, s in enumerate(sources):
        if progress is not None:
            progress("reading", i, len(sources))
        drops: Counter | None = Counter() if lenient else None
        if s.format == "lists":
            if read_ahead is not None:
                runs.append(read_ahead[s.path].result())
            else:
                runs.append(_read_lists(s, list_args, drops))
        elif s.format == "matrix":
            runs.append(read_matrix_run(s, relevance, matrix_order))
        elif drops is None and trec_stream.STREAM:
            runs.append(trec_stream.stream_source(s.name, s.path))  # read while it is scored
        else:
            run, more = read_trec_run(s, relevance, drops=drops)
            runs.append(run)
            notes.extend(more)
        runs[-1].drops = drops
    return runs, notes


def _read_lists(source, args, drops=None) -> RankedRun:
    query_ids, target_index, self_index, ignorable, unjudged = args
    return read_list_run(source, query_ids, target_index, self_index=self_index, ignorable=ignorable, drops=drops, unjudged=unjudged)


_FORKED_ARGS: tuple = ()


def _read_lists_forked(source) -> RankedRun:
    return _read_lists(source, _FORKED_ARGS)


def _read_lists_in_workers(sources, args, lenient: bool):
    """Ranked-list runs read by forked worker processes, one per core; None to read them here.

    Parsing a folder of ranked lists is Python-bound (splitting, id
    look-ups, float parsing), so two cores read two runs at once.  Used only
    where it is safe and pays: Linux (fork), two or more runs and cores, a
    closed collection (an open one grows its id index while reading), not
    ``--lenient`` (drop counters), and no other thread alive (forking a
    threaded process can deadlock).  The futures are read in run order, so
    the first broken run's error is the one raised, as when reading here.
    """
    import sys
    import threading

    cores = os.cpu_count() or 1
    if len(sources) < 2 or cores < 2 or lenient or not sys.platform.startswith("linux") or threading.active_count() > 1:
        return None
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    global _FORKED_ARGS
    _FORKED_ARGS = args  # inherited by the forked workers, not pickled per run
    pool = ProcessPoolExecutor(min(cores, len(sources)), mp_context=multiprocessing.get_context("fork"))
    futures = {s.path: pool.submit(_read_lists_forked, s) for s in sources}
    pool.shutdown(wait=False)  # workers exit once the queue is drained
    return futures


def lenient_summary(run: AnyRun) -> str:
    """What --lenient dropped in ``run``, and why (one line)."""
    drops = run.drops
    if not drops:
        return f"--lenient: run {run.name!r}: nothing dropped"
    return f"--lenient: run {run.name!r}: " + ", ".join(f"{n} {reason}" for reason, n in sorted(drops.items()))


def score(
    runs: Sequence[PathLike] | Sequence[RankedRun],
    relevance: PathLike | Classification | Relevance,
    *,
    queries: PathLike | Classification | None = None,
    grades: str = "binary",
    collection: PathLike | Classification | None = None,
    collection_size: int | None = None,
    measures: Sequence[str] | None = None,
    sort: str | None = None,
    rank_by: str | None = None,
    run_format: str = "auto",
    matrix_order: str | None = None,
    cutoffs: Sequence[int] = (5, 10),
    average: str = "micro",
    significance: bool = False,
    seed: int = 0,
    n_resamples: int = 10_000,
    settings: Settings = Settings(),
    progress=None,
    lenient: bool = False,
) -> Report:
    """Score runs and return a :class:`~shrec_score.report.Report`.

    Parameters
    ----------
    runs : paths or RankedRun objects
        Folders of runs (one sub-folder per run), run folders, or runs already read.
    relevance : path, Classification or Relevance
        Target classification (``.cla``), TREC qrels, or a ready relevance model.
    queries : path or Classification, optional
        A separate query classification; by default the classified models are
        the queries (all-against-all).
    grades : {"binary", "sister"}
        ``"sister"``: SHREC 2006 graded relevance from the class hierarchy.
    collection, collection_size : optional
        Ds for qrels relevance (a target ``.cla`` or a number).
    measures : list of str, optional
        Measure names.  Default: NN FT ST E DCG AP (binary relevance), every
        SHREC 2006 measure (graded relevance).
    sort : str, optional
        Leaderboard measure (default: ADR when graded, else the first measure).
    rank_by : str, optional
        Measure of the per-query ranking of runs (Table 2 of SHREC 2006;
        default CG@100 when graded, else the sort measure).
    run_format : {"auto", "lists", "matrix", "trec"}
        How to read the runs (auto-detection refuses to guess).
    matrix_order : {"listing", "numeric"}, optional
        Which id is row i / column j of a matrix run.
    cutoffs : list of int
        k of P@k and R@k in the default measures with qrels relevance.
    average : {"micro", "macro"}
        micro: mean over queries; macro: mean of the per-class means (PSB -macro).
    significance : bool
        Paired randomization tests between every pair of runs on the sort
        measure (Holm-corrected) and a bootstrap 95% interval per run.
    seed, n_resamples : int
        Make the randomization and the bootstrap reproducible.
    progress : callable, optional
        ``progress(stage, done, total)`` as runs are read ("reading") and scored ("scoring").
    lenient : bool
        Score broken runs anyway: unknown ids dropped, repeated ids keep
        their first place, malformed lines dropped, missing queries score 0
        and count in the means (as trec_eval -c), NaN matrix cells rank last;
        the warnings say per run what was dropped.
    """
    ahead = None
    if runs and not isinstance(runs[0], RankedRun) and not lenient and not isinstance(relevance, Relevance):
        ahead = first_trec_file(runs, run_format)  # type: ignore[arg-type]  # parsed while the relevance loads
        if ahead is not None:
            trec_stream.read_ahead(ahead)
    try:
        if isinstance(relevance, Relevance):
            rel = relevance
        else:
            rel = load_relevance(relevance, queries, grades=grades, collection=collection, collection_size=collection_size)
        graded = rel.graded
        if measures:
            names = list(measures)
            shown = names
        elif graded:
            names = list(graded_defaults(tuple(settings.dcg_cutoffs)))
            shown = [m for m in SHOWN_GRADED if m in names] or names[:8]
        elif rel.mode == "qrels":
            names = shown = ["AP", "FT", "RR", *[f"P@{k}" for k in cutoffs], *[f"R@{k}" for k in cutoffs], "NN", "DCG"]
        else:
            names = shown = list(DEFAULT_BINARY)
        resolved = _resolve(names)
        mnames = [m.name for m in resolved]
        shown = [get_measure(n).name for n in shown]
        default_sort = "ADR" if graded and "ADR" in mnames else mnames[0]
        sort_name = default_sort if sort is None else _resolve_in(sort, mnames, "--sort")
        default_rank = "CG@100" if graded and "CG@100" in mnames else sort_name
        rank_name = default_rank if rank_by is None else _resolve_in(rank_by, mnames, "--rank-by")

        notes: list[str] = []
        if runs and not isinstance(runs[0], RankedRun):
            run_objs, notes = load_runs(runs, rel, run_format=run_format, matrix_order=matrix_order, progress=progress, lenient=lenient)  # type: ignore[arg-type]
        else:
            run_objs = list(runs)  # type: ignore[arg-type]
        if average not in ("micro", "macro"):
            raise InputError(None, None, "expected --average micro or macro", repr(average))
        ev = evaluate(run_objs, rel, resolved, settings, curves=graded, progress=progress)
        run_names = [r.name for r in run_objs]
        has_classes = rel.mode != "qrels"
        per_class = per_class_means(ev.per_query, mnames, run_names) if has_classes else None
        if average == "macro":
            if per_class is None:
                raise InputError(None, None, "expected classes for --average macro (qrels have none)")
            per_run = macro_means(per_class, mnames, run_names)
        else:
            per_run = per_run_means(ev.per_query, mnames, run_names)
        sig = None
        if significance:
            from .significance import bootstrap_ci, pairwise

            cis = [bootstrap_ci(ev.per_query.loc[ev.per_query["run"] == r, sort_name].to_numpy(), n_resamples=n_resamples, seed=seed) for r in run_names]
            per_run[f"{sort_name}_ci_low"] = [c[0] for c in cis]
            per_run[f"{sort_name}_ci_high"] = [c[1] for c in cis]
        board = leaderboard(per_run, sort_name)
        if significance:
            sig = pairwise(ev.per_query, sort_name, list(board["run"]), n_resamples=n_resamples, seed=seed)

        k = rel.n_relevant(1)
        warnings = list(notes)
        for r in run_objs:  # streamed TREC runs know what they passed over only after scoring
            if isinstance(r, trec_stream.TrecStreamRun):
                warnings += r.notes
        if lenient:  # after scoring: NaN matrix cells are counted while ranking
            warnings += [lenient_summary(r) for r in run_objs]
        n_empty = int((k == 0).sum())
        if n_empty:
            first = rel.query_ids[int((k == 0).argmax())]
            warnings.append(
                f"{n_empty} of {rel.n_queries} queries have no relevant target (K = 0, first: {first!r}): "
                "listed with empty values, left out of the means"
            )
        if rel.ignorable_queries:
            warnings.append(f"{len(rel.ignorable_queries)} models of class '-1' (miscellaneous) are not queries and never relevant")
        if graded:
            warnings.append(_coverage_note(run_objs, rel))
        signature = {
            "version": __version__,
            "mode": rel.mode,
            "relevance": rel.description,
            "queries": int(rel.n_queries - n_empty),
            "collection": rel.collection_size,
            "ties": "lists: file order; matrices: distance, then lower column; TREC: score desc, then id desc",
            "matrix_order": matrix_order or "listing (ids not reordered)",
            "rel_level": settings.rel_level,
            "e_depth": settings.e_depth,
            "pr_levels": f"{settings.pr_levels} levels 1/{settings.pr_levels}..1, PSB interpolation",
            "averaging": "macro: mean of per-class means" if average == "macro" else "micro: mean over queries with K > 0",
        }
        if lenient:
            signature["lenient"] = "unknown ids dropped, repeated ids keep first place, missing queries score 0"
        if significance:
            signature["significance"] = f"paired randomization test on {sort_name}, Holm-corrected, {n_resamples} resamples, seed {seed}; bootstrap 95% CI"
        return Report(
            per_query=ev.per_query,
            leaderboard=board,
            pr_curve=ev.pr_curve,
            measures=mnames,
            shown=shown,
            sort=sort_name,
            signature=signature,
            warnings=warnings,
            curves=ev.curves,
            gain_vs_recall=ev.gain_vs_recall,
            ranking=per_query_ranking(ev.per_query, rank_name),
            rank_by=rank_name,
            per_class=per_class,
            significance=sig,
        )
    finally:
        if ahead is not None:
            trec_stream.cancel_read_ahead()  # not taken over after an error


def score_kendall(
    runs: Sequence[PathLike],
    ground_truth: PathLike,
    *,
    ground_truth_higher_is_better: bool = True,
    lower_is_better: bool = True,
    run_format: str = "auto",
) -> Report:
    """Rank correlation with human ground truth (seed 004): Kendall's tau-b per query.

    ``ground_truth`` is a CSV/TSV with the header ``query,item,score``; runs
    are ranked-list folders (``item [distance]``) or TREC run files.  The
    leaderboard holds the mean tau-b over the queries and its standard
    deviation (sample, ddof = 1).
    """
    import pandas as pd

    from .correlation import evaluate_kendall
    from .io.groundtruth import read_ground_truth

    gt = read_ground_truth(ground_truth)
    queries = list(dict.fromkeys(gt["query"]))
    sources, notes = discover_runs(runs, run_format, query_ids=dict.fromkeys(queries))
    per_query = evaluate_kendall(
        sources, gt, ground_truth_higher_is_better=ground_truth_higher_is_better, lower_is_better=lower_is_better
    )
    per_run = per_run_means(per_query, ["tau_b"], [s.name for s in sources])
    per_run["tau_b_std"] = [float(per_query.loc[per_query["run"] == r, "tau_b"].std(ddof=1)) for r in per_run["run"]]
    board = leaderboard(per_run, "tau_b")
    n_nan = int(per_query["tau_b"].isna().sum())
    warnings = list(notes)
    if n_nan:
        warnings.append(f"{n_nan} (run, query) pairs have an undefined tau-b (fewer than 2 items or every item tied): left out of the means")
    signature = {
        "version": __version__,
        "mode": "rank correlation",
        "relevance": f"Kendall tau-b against {os.path.basename(os.fspath(ground_truth))}",
        "queries": len(queries),
        "ground_truth_higher_is_better": ground_truth_higher_is_better,
        "lower_is_better": lower_is_better,
        "ties": "tau-b (ties in either ranking)",
        "averaging": "mean over queries; std with ddof = 1",
    }
    return Report(
        per_query=per_query,
        leaderboard=board,
        pr_curve=pd.DataFrame(columns=["run", "recall", "precision"]),
        measures=["tau_b", "tau_b_std"],
        shown=["tau_b", "tau_b_std"],
        sort="tau_b",
        signature=signature,
        warnings=warnings,
        ranking=per_query_ranking(per_query, "tau_b"),
        rank_by="tau_b",
    )


def _coverage_note(runs: Sequence[AnyRun], rel: Relevance) -> str:
    """Whether P, R and the TP/FP/TN/FN counts mean anything (SHREC 2006, section 5)."""
    full = (rel.collection_size or 0) - (rel.self_index >= 0).astype(np.int64)
    lists = [r for r in runs if not isinstance(r, MatrixRun)]  # a matrix ranks everything
    short = 0
    pos = {q: i for i, q in enumerate(rel.query_ids)}
    for r in lists:
        rows = np.asarray([pos[q] for q in r.query_ids], dtype=np.int64)
        short += int((r.lengths() < full[rows]).sum())
    total = sum(len(r.query_ids) for r in runs)
    if rel.collection_size is None:
        return "collection size unknown (give --collection or --collection-size): TN counts are empty"
    if short == 0:
        return (
            "every ranked list covers the whole collection (Va = Ds): P, R and the "
            "TP/FP/TN/FN counts do not tell the runs apart"
        )
    return f"{short} of {total} ranked lists are shorter than the collection (Va < Ds): P, R and the TP/FP/TN/FN counts are meaningful"


def _resolve(names: Sequence[str]) -> list:
    out = []
    for n in names:
        try:
            out.append(get_measure(n))
        except KeyError:
            raise InputError(None, None, f"unknown measure {n!r}; see 'shrec-score measures'") from None
    return out


def _resolve_in(name: str, computed: list[str], option: str) -> str:
    try:
        resolved = get_measure(name).name
    except KeyError:
        resolved = name
    if resolved not in computed:
        shown = ", ".join(computed)
        raise InputError(None, None, f"expected {option} to name a measure that is computed ({shown})", repr(name))
    return resolved


__all__ = ["score", "score_kendall", "load_relevance", "load_runs", "is_classification_file"]
