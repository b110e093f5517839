"""The library API: everything the CLI does, callable from a notebook (docs/notebook.md).  :func:`score` runs the
pipeline in order: options, relevance, measures, runs, scores, means, report."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from .aggregate import (
    column_aggregate,
    leaderboard_table,
    macro_table,
    per_class_table,
    per_run_table,
    ranking_table,
)
from .engine import Evaluation, RunScores, collect, score_run, small_class_queries
from .errors import InputError, OptionError, shown
from .io.runs import discover_runs
from .loading import (
    AnyRun,
    FoundRuns,
    PathLike,
    Progress,
    is_classification_file,
    load_relevance,
    load_runs,
    load_with,
)
from .measures import DEFAULT_BINARY, SHOWN_GRADED, Measure, get_measure, graded_defaults
from .measures.measure import OFFICIAL, SHOWN_OFFICIAL, column_for, typed_measure
from .measures.registry import SHAPENET_MEASURES, SHAPENET_OFFICIAL
from .model import Classification, MatrixRun, RankedRun, RunSource
from .options import Options, check_expected
from .relevance import Relevance
from .report import Report, shapenet_summaries
from .signature import TIE_MODES, signature
from .table import Table

#: The SHREC 2006 measures the coverage note is about (section 5: P, R and the counts).
COVERAGE_MEASURES = tuple(f"{m}_{lv}" for m in ("TP", "FP", "TN", "FN", "P", "R") for lv in ("highly", "relevant"))


def score(
    runs: Sequence[PathLike] | Sequence[AnyRun] | FoundRuns, relevance: PathLike | Classification | Relevance, *,
    options: Options | None = None, progress: Progress | None = None, **settings: Any,
) -> Report:
    """Score runs and return a :class:`~shrec_score.report.Report`.

    Parameters
    ----------
    runs : paths or run records
        Folders of runs (a sub-folder per run), run folders, run files; or run records (:class:`RankedRun`,
        :class:`MatrixRun`, as :func:`load_runs` reads them), not a mix; or what :func:`~shrec_score.loading.find_runs`
        found (:func:`shrec_score.distributed.score` hands it over).
    relevance : path, Classification or Relevance
        Target classification (``.cla``), TREC qrels, or a ready relevance model.
    options : Options, optional
        Every setting at once; or give them as keywords (not both):
    queries : path or Classification, optional
        A separate query classification; by default the classified models are the queries (all-against-all).
    grades : {"binary", "sister"}
        ``"sister"``: SHREC 2006 graded relevance from the class hierarchy.
    collection, collection_size : optional
        Ds for qrels relevance (a target ``.cla`` or a number); unknown otherwise, the TN columns then empty.
    measures : list of str, optional
        Measure names, each its column's name as given (``"ndcg@10"``); default: NN FT ST E DCG AP (binary),
        every SHREC 2006 measure (sister), AP FT RR P@k R@k NN DCG (binary qrels), trec_eval's set (graded qrels).
    sort, rank_by : str, optional
        The leaderboard's measure, any spelling (default: ADR when graded, map with trec_eval's set, else the first
        measure; lower-is-better sorts ascending); the per-query ranking's (SHREC 2006 Table 2; CG@100 when graded).
    run_format : {"auto", "lists", "matrix", "trec", "shrec2011"}
        How to read the runs (auto-detection refuses to guess).
    matrix_order : {"listing", "numeric"}, optional
        Which id is row i / column j of a matrix run.
    cutoffs : list of int
        k of P@k and R@k in the default measures with qrels relevance.
    average : {"micro", "macro"}
        micro: mean over queries; macro: mean of the per-class means (PSB -macro).
    significance, seed, n_resamples : bool, int, int
        Holm-corrected paired randomization tests between the runs on the sort measure and a bootstrap 95%
        interval per run; the seed and resamples that make both reproducible.
    settings : Settings
        E depth, relevance level, PR levels, DCG cutoffs, depth, judged only, missing queries, min class size.
    ties : {"rule", "expected", "optimistic", "pessimistic"}, optional
        Tied items (over ``settings.ties``): the rule, the exact mean over every order, relevant first / last.
    split : str, optional
        A ShapeNet Core55 ground truth's split to score (required when the file holds several).
    strip_zeros, id_map : optional
        How a run spells ids: compared without leading zeros; a two-column file (run id, relevance id).
    lenient : bool
        Score broken runs anyway (docs/inputs.md, "Checking runs and lenient scoring"), warning what was dropped.
    progress : callable, optional
        ``progress(stage, done, total)`` as runs are read ("reading") and scored ("scoring").

    Raises
    ------
    OptionError
        (a ``ValueError``) an option outside its documented values, before any input is read.
    InputError
        a bad input file, naming the file and the line.
    """
    opts = Options.of(options, settings)
    _given_runs(runs)  # a mix of paths and records refused before anything is read
    scoring = Scoring.start(relevance, opts)
    run_objs, notes = runs_for(runs, scoring.relevance, opts, progress=progress)
    report = progress or (lambda stage, done, total: None)
    scores: list[RunScores] = []
    for done, run in enumerate(run_objs):
        report("scoring", done, len(run_objs))
        scores.append(scoring.score(run))
    report("scoring", len(run_objs), len(run_objs))
    return scoring.report(scores, run_objs, notes)


def _given_runs(runs: Sequence[Any] | FoundRuns) -> list[AnyRun] | None:
    """The run records in ``runs``; None for paths (or runs found)."""
    if isinstance(runs, FoundRuns):
        return None
    records = [r for r in runs if isinstance(r, (RankedRun, MatrixRun))]
    if records and len(records) < len(runs):
        raise OptionError("runs: expected paths or run records (RankedRun, MatrixRun), not a mix of both")
    return cast("list[AnyRun]", records) or None


def runs_for(
    runs: Sequence[Any] | FoundRuns, rel: Relevance, opts: Options, *, ties: bool | None = None, progress: Progress | None = None,
) -> tuple[list[AnyRun], list[str]]:
    """The runs and notes on files passed over: paths read, records as given (in the relevance's query order)."""
    given = _given_runs(runs)
    if given is None:
        return load_with(runs, rel, opts, ties=ties, progress=progress)
    for run in given:
        ids = getattr(run, "target_ids", None)
        if ids is not None and ids is not rel.target_ids and list(ids) != list(rel.target_ids):
            raise OptionError(
                f"runs: run {run.name!r} was read against another relevance (its targets are indices into other ids): "
                "read it again with load_runs(paths, this relevance)"
            )
    return [_in_relevance_order(r, rel, opts.settings.missing) if isinstance(r, RankedRun) else r for r in given], []


def _in_relevance_order(run: RankedRun, rel: Relevance, missing: str) -> RankedRun:
    """A ranked record's lists in the relevance's query order, as readers make them (the engine pairs lists with
    queries by position): an unknown query refused; a missing one refused, or an empty list (``missing`` skip/zero)."""
    if list(run.query_ids) == rel.query_ids:
        return run
    at = {q: i for i, q in enumerate(run.query_ids)}
    known = set(rel.query_ids) | set(rel.ignorable_queries)  # (an ignorable query's list is left out, as readers do)
    unknown = [q for q in at if q not in known]
    if unknown:
        raise OptionError(f"runs: run {run.name!r} ranks for {len(unknown)} queries the relevance does not have, first: {unknown[0]!r}")
    absent = [q for q in rel.query_ids if q not in at]
    if absent and missing == "error":
        raise OptionError(
            f"runs: run {run.name!r} has no ranked list for {len(absent)} of {len(rel.query_ids)} queries, first: {absent[0]!r} "
            "(settings=Settings(missing='skip' or 'zero') scores it)"
        )
    none = np.zeros(0, dtype=np.int64)
    out = RankedRun.from_lists(run.name, {q: run.ranked_list(at[q]) if q in at else none for q in rel.query_ids})
    out.drops, out.target_ids, out.tag = run.drops, run.target_ids, run.tag
    if run.tie_start is not None:
        out.tie_start = np.concatenate([none, *(run.tie_start[run.offsets[at[q]] : run.offsets[at[q] + 1]] for q in rel.query_ids if q in at)])
    return out


def relevance_for(relevance: PathLike | Classification | Relevance, opts: Options) -> Relevance:
    """``relevance`` as it is, or loaded with ``opts``' settings."""
    if isinstance(relevance, Relevance):
        return relevance
    return load_relevance(
        relevance, opts.queries, grades=opts.grades, collection=opts.collection, collection_size=opts.collection_size, split=opts.split
    )


def _column(name: str | None, columns: list[str]) -> str | None:
    """The column computing the measure ``name`` (any spelling); ``name`` itself when none does (refused then)."""
    return None if name is None else column_for(name, columns) or name


@dataclass(frozen=True)
class Scoring:
    """One scoring (:func:`score`'s, the cluster's, the tie report's): the relevance, the options, the measures
    computed and the columns shown, the leaderboard's and the per-query ranking's measures, and notes for the
    warnings; :meth:`start`, :meth:`score` each run, :meth:`report`."""

    relevance: Relevance
    options: Options
    measures: list[Measure]
    shown: list[str]
    sort: str
    rank_by: str
    notes: tuple[str, ...] = ()

    @property
    def names(self) -> list[str]:
        return [m.name for m in self.measures]

    @classmethod
    def start(cls, relevance: PathLike | Classification | Relevance, opts: Options) -> Scoring:
        """The relevance loaded and the measures planned, before any run is read; a ``sort`` or ``rank_by`` not
        computed refused."""
        rel = relevance_for(relevance, opts)
        first: str | None = None
        notes: tuple[str, ...] = ()
        if opts.measures:
            names = shown = list(opts.measures)
        elif rel.mode == "shapenet":  # the official summary's measures
            names = shown = list(SHAPENET_MEASURES)
        elif rel.mode == "qrels" and rel.graded:  # trec_eval's default set (issue 31.18)
            names, shown, first = list(OFFICIAL), list(SHOWN_OFFICIAL), "map"
            if opts.settings.ties == "expected":  # what has an exact expectation over tied orders
                out = [n for n in names if not get_measure(n).ties_exact]
                names, shown = [n for n in names if n not in out], [n for n in shown if n not in out]
                notes = (f"note: --ties expected: {', '.join(out)} of trec_eval's default measures left out (no exact expected value over tied orders)",)
        elif rel.graded:
            names = list(graded_defaults(tuple(opts.settings.dcg_cutoffs)))
            shown = [m for m in SHOWN_GRADED if m in names] or names[:8]
        elif rel.mode == "qrels":
            ks = opts.cutoffs
            names = shown = ["AP", "FT", "RR", *[f"P@{k}" for k in ks], *[f"R@{k}" for k in ks], "NN", "DCG"]
        else:
            names = shown = list(DEFAULT_BINARY)
        measures = [typed_measure(n) for n in names]  # columns named as typed
        computed = [m.name for m in measures]
        sort = _column(opts.sort, computed) or first or (
            "ADR" if rel.graded and "ADR" in computed else "shapenet.mAP" if "shapenet.mAP" in computed else computed[0]
        )
        rank_by = _column(opts.rank_by, computed) or ("CG@100" if rel.graded and "CG@100" in computed else sort)
        for option, name in (("--sort", sort), ("--rank-by", rank_by)):
            if name not in computed:
                raise InputError(None, None, f"expected {option} to name a measure that is computed ({', '.join(computed)})", repr(name))
        if opts.average == "macro" and rel.mode == "qrels":
            raise InputError(None, None, "expected classes for --average macro (qrels have none)")
        if opts.settings.ties == "expected":
            check_expected(computed, opts.settings)
        return cls(rel, opts, measures, list(shown), sort, rank_by, notes)

    def score(self, run: AnyRun, rows: np.ndarray | None = None) -> RunScores:
        """One run's values (``rows``: only these queries of a matrix run)."""
        rel = self.relevance
        return score_run(run, rel, self.measures, self.options.settings, curves=rel.gain_curves, rows=rows)

    def report(self, scores: list[RunScores], runs: Sequence[AnyRun], notes: list[str]) -> Report:
        """The report of the runs' scores; ``runs``: what the warnings read of each run, ``notes``: the discovery's."""
        rel, opts = self.relevance, self.options
        ev = collect(scores, rel, self.measures, opts.settings, curves=rel.gain_curves)
        names, run_names, per_query = self.names, [r.name for r in runs], ev.per_query
        per_class = per_class_table(per_query, names, run_names) if rel.mode != "qrels" else None
        macro = per_class is not None and opts.average == "macro"
        per_run = per_run_table(per_query, names, run_names) if per_class is None or not macro else macro_table(per_class, names, run_names)
        if opts.significance:  # an interval around each run's value: the measure's aggregate, per class under macro
            from .significance import bootstrap_ci, pairwise

            how, mine = column_aggregate(self.sort), [per_query["run"] == r for r in run_names]
            cis = np.asarray([
                bootstrap_ci(per_query[self.sort][m], classes=per_query["class"][m] if macro else None, how=how, n_resamples=opts.n_resamples, seed=opts.seed)
                for m in mine
            ], dtype=np.float64).reshape(-1, 2)
            per_run = per_run.assign(f"{self.sort}_ci_low", cis[:, 0]).assign(f"{self.sort}_ci_high", cis[:, 1])
        board = leaderboard_table(per_run, self.sort)
        sig = pairwise(per_query.to_pandas(), self.sort, board["run"].tolist(), n_resamples=opts.n_resamples, seed=opts.seed) if opts.significance else None
        shapenet: dict[str, Any] = {}
        if rel.mode == "shapenet":  # the official column names; the official summary of its five measures
            shapenet["csv_columns"] = {m: SHAPENET_OFFICIAL[m] for m in names if m in SHAPENET_OFFICIAL}
            if all(m in names for m in SHAPENET_MEASURES) and per_class is not None:
                shapenet["summaries"] = shapenet_summaries(per_query, per_class, run_names)
        empty = rel.n_relevant(opts.settings.rel_level) == 0  # K = 0: no relevant target at the level
        return Report(
            per_query=per_query, leaderboard=board, pr_curve=ev.pr_curve,
            measures=names, shown=self.shown, sort=self.sort, signature=_signature(self, empty),
            warnings=_warnings(self, ev, runs, notes, empty),
            curves=ev.curves, gain_vs_recall=ev.gain_vs_recall, per_class=per_class, significance=sig,
            ranking=ranking_table(per_query, self.rank_by), rank_by=self.rank_by,
            run_tags={r.name: tag for r in runs if (tag := getattr(r, "tag", None)) is not None}, **shapenet,
        )


def _some(names: list[str]) -> str:
    return ", ".join(names[:6]) + (" ..." if len(names) > 6 else "")


def _warnings(scoring: Scoring, ev: Evaluation, runs: Sequence[AnyRun], notes: list[str], empty: np.ndarray) -> list[str]:
    """What the user should know, in order: a ``note: `` (about the numbers, printed as it is) or a warning."""
    rel, s, measures = scoring.relevance, scoring.options.settings, scoring.names
    warnings = [*scoring.notes, *notes]
    if scoring.options.lenient:  # after scoring: NaN matrix cells are counted while ranking
        for run in runs:
            dropped = ", ".join(f"{n} {reason}" for reason, n in sorted((run.drops or {}).items()))
            warnings.append(f"--lenient: run {shown(run.name)}: {dropped or 'nothing dropped'}")
    if empty.any():  # the measures that leave them out (the contests' rule), those that count them (trec_eval's)
        level = f" at --rel-level {s.rel_level}" if s.rel_level > 1 else ""
        text = f"{int(empty.sum())} of {rel.n_queries} queries have no relevant target (K = 0{level}, first: {rel.query_ids[int(empty.argmax())]!r})"
        rows = np.isin(ev.per_query["query"], np.asarray(rel.query_ids, dtype=object)[empty])  # their rows
        counted = [m for m in measures if not np.isnan(np.asarray(ev.per_query[m], dtype=np.float64)[rows]).all()]
        left = [m for m in measures if m not in counted]
        if not counted:
            warnings.append(text + ": listed with empty values, left out of the means")
        else:
            warnings.append(text + (f": left out of the means of {_some(left)} (empty values);" if left else ":") + f" counted in the means of {_some(counted)}, as trec_eval")
    if rel.ignorable_queries:
        warnings.append(f"{len(rel.ignorable_queries)} models of class '-1' (miscellaneous) are not queries and never relevant")
    asked = [m for m in measures if m in COVERAGE_MEASURES]
    full = rel.list_room(np.arange(rel.n_queries))
    if asked and full is None:  # (only when a measure the note speaks of is computed)
        what = "TN counts are empty" if any(m.startswith("TN_") for m in asked) else "whether the lists cover it is not known"
        warnings.append(f"note: collection size unknown (give --collection or --collection-size): {what}")
    elif asked and full is not None:  # whether P, R and the TP/FP/TN/FN counts tell runs apart (SHREC 2006, section 5)
        pos = {q: i for i, q in enumerate(rel.query_ids)}  # (a matrix ranks everything)
        short: int = sum(int((r.lengths() < full[[pos[q] for q in r.query_ids]]).sum()) for r in runs if isinstance(r, RankedRun))
        total = sum(len(r.query_ids) for r in runs)
        warnings.append(
            "note: every ranked list covers the whole collection (Va = Ds): "
            "P, R and the TP/FP/TN/FN counts do not tell the runs apart"
            if short == 0 else
            f"note: {short} of {total} ranked lists are shorter than the collection (Va < Ds): "
            "P, R and the TP/FP/TN/FN counts are meaningful"
        )
    if s.missing != "error":
        what = "left out of the means (--missing-queries skip)" if s.missing == "skip" else "scored as empty lists (--missing-queries zero)"
        warnings += [f"note: run {shown(name)} ranks nothing for {n} of {rel.n_queries} queries: {what}" for name, n in ev.unranked.items() if n]
    small = small_class_queries(rel, s.min_class_size)
    if small.any():
        classes = len({c for c, is_small in zip(rel.query_classes, small) if is_small})
        warnings.append(
            f"note: {int(small.sum())} of {rel.n_queries} queries, of {classes} classes with fewer than "
            f"{s.min_class_size} models, are listed with empty values and left out of every mean (--min-class-size, psbTable's CUTOFF)"
        )
    return warnings


def _signature(scoring: Scoring, empty: np.ndarray) -> dict[str, Any]:
    rel, opts, s = scoring.relevance, scoring.options, scoring.options.settings
    cuts = [  # how the ranked lists were cut
        (s.depth is not None, f"first {s.depth} items only (trec_eval -M {s.depth})"),
        (s.judged_only, "unjudged items left out (trec_eval -J)"),
        (s.missing == "skip", "queries a run ranks nothing for left out of its means (trec_eval's default)"),
        (s.missing == "zero", "queries a run ranks nothing for scored as empty lists (trec_eval -c)"),
    ]
    return signature(
        mode=rel.mode, relevance=rel.description, queries=int((~empty).sum()),
        collection="unknown (TN columns empty)" if rel.collection_size is None else rel.collection_size,
        ties=TIE_MODES[s.ties], lists="; ".join(text for cut, text in cuts if cut) or None,
        matrix_order=opts.matrix_order or "listing (ids not reordered)",
        rel_level=s.rel_level, e_depth=s.e_depth,
        pr_levels=f"{s.pr_levels} levels 1/{s.pr_levels}..1, PSB interpolation",
        averaging=("macro: mean of per-class means" if opts.average == "macro" else "micro: mean over the queries a measure has a value for (K = 0: empty in the contests' measures, 0 in trec_eval's)")
        + (f"; classes of fewer than {s.min_class_size} models left out (psbTable's CUTOFF)" if s.min_class_size > 1 else ""),
        lenient="unknown ids dropped, repeated ids keep first place, missing queries and empty lists score 0" if opts.lenient else None,
        significance=(
            f"paired randomization test on {scoring.sort}, Holm-corrected, {opts.n_resamples} resamples, seed {opts.seed}; bootstrap 95% CI"
            if opts.significance else None
        ),
    )


def score_kendall(
    runs: Sequence[PathLike], ground_truth: PathLike, *,
    ground_truth_higher_is_better: bool = True, lower_is_better: bool = True, run_format: str = "auto",
) -> Report:
    """Rank correlation with human ground truth (seed 004): Kendall's tau-b per query.

    ``ground_truth`` is a CSV/TSV with the header ``query,item,score``; runs are ranked-list folders
    (``item [distance]``) or TREC run files.  The leaderboard holds the mean tau-b over the queries and its
    standard deviation (sample, ddof = 1).
    """
    import pandas as pd

    from .correlation import evaluate_kendall
    from .io.groundtruth import read_ground_truth

    Options.build(run_format=run_format)  # validated before anything is read
    gt = read_ground_truth(ground_truth)
    queries = list(dict.fromkeys(gt["query"]))
    sources, notes = cast("tuple[list[RunSource], list[str]]", discover_runs(runs, run_format, query_ids=dict.fromkeys(queries)))
    per_query = Table.from_pandas(evaluate_kendall(
        sources, gt, ground_truth_higher_is_better=ground_truth_higher_is_better, lower_is_better=lower_is_better
    ))
    tau = np.asarray(per_query["tau_b"], dtype=np.float64)
    per_run = per_run_table(per_query, ["tau_b"], [s.name for s in sources])
    std = [float(pd.Series(tau[per_query["run"] == r]).std(ddof=1)) for r in per_run["run"]]  # (pandas' rule of sums)
    warnings = list(notes)
    if n_nan := int(np.isnan(tau).sum()):
        warnings.append(f"{n_nan} (run, query) pairs have an undefined tau-b (fewer than 2 items or every item tied): left out of the means")
    sig = signature(
        mode="rank correlation", relevance=f"Kendall tau-b against {os.path.basename(os.fspath(ground_truth))}",
        queries=len(queries), ground_truth_higher_is_better=ground_truth_higher_is_better, lower_is_better=lower_is_better,
        ties="tau-b (ties in either ranking)", averaging="mean over queries; std with ddof = 1",
    )
    return Report(
        per_query=per_query, leaderboard=leaderboard_table(per_run.assign("tau_b_std", np.asarray(std)), "tau_b"),
        pr_curve=Table.concat([], ["run", "recall", "precision"]),
        measures=["tau_b", "tau_b_std"], shown=["tau_b", "tau_b_std"], sort="tau_b", signature=sig,
        warnings=warnings, ranking=ranking_table(per_query, "tau_b"), rank_by="tau_b",
    )


__all__ = ["score", "score_kendall", "load_relevance", "load_runs", "is_classification_file", "Scoring", "Options"]
