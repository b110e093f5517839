"""Loading: from paths to a relevance model and run records (the parse stage), per call, on the calling thread."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from functools import partial

from .choices import GRADES, RUN_FORMATS
from .errors import InputError, shown
from .io.cla import read_classification
from .io.lists import read_list_run
from .io.runs import discover_runs
from .io.shapenet import is_shapenet_truth, read_shapenet_truth
from .io.shrec2011 import read_shrec2011_run
from .io.text import read_head
from .io.trec import read_qrels
from .join import SpelledIndex, id_spelling, read_matrix_run, read_trec_run
from .model import Classification, MatrixRun, RankedRun
from .options import Options, one_of
from .ranking import drop_own
from .relevance import Relevance, TaxonomyRelevance

PathLike = str | os.PathLike[str]
#: A run as :func:`load_runs` hands it over.
AnyRun = RankedRun | MatrixRun
Progress = Callable[[str, int, int], None]


def is_classification_file(path: PathLike) -> bool:
    """True for a PSB ``.cla`` (first word ``PSB``), False for TREC qrels, from the first bytes."""
    return read_head(path).removeprefix(b"\xef\xbb\xbf").split(None, 1)[:1] == [b"PSB"]


def load_relevance(
    relevance: PathLike | Classification, queries: PathLike | Classification | None = None, *, grades: str = "binary",
    collection: PathLike | Classification | None = None, collection_size: int | None = None, split: str | None = None,
) -> Relevance:
    """Build the relevance model from a target ``.cla`` (``grades="sister"``: SHREC 2006), a ShapeNet
    Core55 ground truth (of ``split``) or TREC qrels (Ds from ``collection`` or ``collection_size``)."""
    one_of("grades", grades, GRADES)
    if not isinstance(relevance, Classification) and is_shapenet_truth(relevance):
        for given, flag in ((queries is not None, "--queries"), (grades != "binary", "--grades"), (collection is not None, "--collection"), (collection_size is not None, "--collection-size")):
            if given:
                raise InputError(relevance, None, f"expected no {flag} with a ShapeNet ground truth (it names the queries, the collection and the grades)")
        rows = read_shapenet_truth(relevance)
        return TaxonomyRelevance.from_rows(rows.path, rows.ids, rows.synsets, rows.subsynsets, rows.splits, split=split)
    if split is not None:
        raise InputError(None if isinstance(relevance, Classification) else relevance, None, "expected a ShapeNet ground truth (id,synsetId,subSynsetId,modelId,split) with --split")
    if isinstance(relevance, Classification) or is_classification_file(relevance):
        targets = relevance if isinstance(relevance, Classification) else read_classification(relevance)
        qcla = queries if queries is None or isinstance(queries, Classification) else read_classification(queries)
        return Relevance.from_classification(targets, qcla, grades=grades)  # type: ignore[arg-type]
    if grades != "binary":
        raise InputError(relevance, None, "expected a PSB .cla with --grades sister (qrels carry their own grades)")
    if queries is not None:
        raise InputError(relevance, None, "expected no --queries with qrels (the qrels name the queries)")
    coll = collection if collection is None or isinstance(collection, Classification) else read_classification(collection)
    qrels = read_qrels(relevance)
    return Relevance.from_qrels(qrels, collection=coll, collection_size=collection_size)


def load_runs(
    paths: Sequence[PathLike], relevance: Relevance, *, run_format: str = "auto", matrix_order: str | None = None,
    progress: Progress | None = None, lenient: bool = False, missing: str = "error", ties: bool = False,
    strip_zeros: bool = False, id_map: PathLike | None = None,
) -> tuple[list[AnyRun], list[str]]:
    """Read every run found in ``paths``; returns the runs and notes on files passed over.

    ``lenient``: broken runs scored by the documented rules, each run's ``drops`` saying what was dropped;
    ``missing`` ``"skip"``/``"zero"``: a run may rank nothing for some queries; ``ties``: the runs carry
    their tie groups; ``strip_zeros``, ``id_map``: how a run's ids are spelled.
    """
    one_of("run_format", run_format, RUN_FORMATS)
    spell = id_spelling(relevance, strip=strip_zeros, id_map=None if id_map is None else os.fspath(id_map))
    sources, notes = discover_runs(paths, run_format, query_ids=dict.fromkeys(relevance.query_ids + relevance.ignorable_queries), spell=spell)
    unjudged = None if relevance.closed else relevance.unjudged
    target_index = relevance.target_index if spell is None else SpelledIndex(relevance.target_index, spell)
    missing_ok = missing != "error"
    header = not relevance.keeps_own_item  # a line holding only the query id is then the query ranked first
    runs: list[AnyRun] = []
    for i, s in enumerate(sources):
        if progress is not None:
            progress("reading", i, len(sources))
        drops: Counter[str] | None = Counter() if lenient else None
        run: AnyRun
        if s.format in ("lists", "shrec2011"):  # (a SHREC 2011 file has no query-id line: header unused)
            read = partial(read_list_run, header=header) if s.format == "lists" else read_shrec2011_run
            lists = read(
                s, relevance.query_ids, target_index, ignorable=relevance.ignorable_queries,
                drops=drops, unjudged=unjudged, missing_ok=missing_ok, ties=ties, spell=spell,
            )
            run = drop_own(lists, relevance.self_index)  # the lists hold every query, in relevance order
        elif s.format == "matrix":
            run = read_matrix_run(s, relevance, matrix_order)
        else:
            run, more = read_trec_run(s, relevance, drops=drops, missing_ok=missing_ok, ties=ties, spell=spell)
            notes.extend(more)
        run.drops = drops
        if isinstance(run, RankedRun):
            run.target_ids = relevance.target_ids
        runs.append(run)
    return runs, notes


def load_with(
    paths: Sequence[PathLike], relevance: Relevance, options: Options, *, ties: bool | None = None,
    progress: Progress | None = None, run_format: str | None = None,
) -> tuple[list[AnyRun], list[str]]:
    """:func:`load_runs` with the reading options of ``options``; ``ties`` None: as its tie mode needs."""
    o = options
    return load_runs(
        paths, relevance, run_format=run_format or o.run_format, matrix_order=o.matrix_order, progress=progress,
        lenient=o.lenient, missing=o.settings.missing, ties=o.settings.ties != "rule" if ties is None else ties,
        strip_zeros=o.strip_zeros, id_map=o.id_map,
    )


def lenient_summary(run: AnyRun) -> str:
    """What --lenient dropped in ``run``, and why (one line)."""
    dropped = ", ".join(f"{n} {reason}" for reason, n in sorted((run.drops or {}).items()))
    return f"--lenient: run {shown(run.name)}: {dropped or 'nothing dropped'}"
