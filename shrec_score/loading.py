"""Loading: from paths to a relevance model and run records (the parse stage), per call, on the calling thread."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from functools import partial
from typing import cast

from .choices import GRADES, MATRIX_ORDERS, MISSING, RUN_FORMATS
from .errors import InputError
from .io.cla import read_classification
from .io.lists import read_list_run
from .io.runs import BlockSource, discover_runs
from .io.shapenet import is_shapenet_truth, read_shapenet_truth
from .io.shrec2011 import read_shrec2011_run
from .io.submissions import Spell
from .io.text import head_of, open_checked
from .io.trec import read_qrels
from .join import SpelledIndex, id_spelling, read_matrix_run, read_trec_run
from .measures import Settings
from .model import Classification, MatrixRun, RankedRun, RunSource
from .options import Options, one_of
from .ranking import drop_own
from .relevance import Relevance, TaxonomyRelevance

PathLike = str | os.PathLike[str]
#: A run as :func:`load_runs` hands it over.
AnyRun = RankedRun | MatrixRun
Progress = Callable[[str, int, int], None]


def is_classification_file(path: PathLike) -> bool:
    """True for a PSB ``.cla`` (first word ``PSB``), False for TREC qrels, from the first bytes."""
    path = os.fspath(path)
    with open_checked(path) as fh:
        return _is_cla_head(head_of(path, fh))


def _is_cla_head(head: bytes) -> bool:
    return head.removeprefix(b"\xef\xbb\xbf").split(None, 1)[:1] == [b"PSB"]


def load_relevance(
    relevance: PathLike | Classification, queries: PathLike | Classification | None = None, *, grades: str = "binary",
    collection: PathLike | Classification | None = None, collection_size: int | None = None, split: str | None = None,
) -> Relevance:
    """Build the relevance model from a target ``.cla`` (``grades="sister"``: SHREC 2006), a ShapeNet
    Core55 ground truth (of ``split``) or TREC qrels (Ds from ``collection`` or ``collection_size``)."""
    one_of("grades", grades, GRADES)
    path = None if isinstance(relevance, Classification) else os.fspath(relevance)
    with nullcontext() if path is None else open_checked(path) as fh:  # one stat, one open: the head tells the format
        head = b"" if path is None else head_of(path, fh)
        if path is not None and is_shapenet_truth(head):
            for given, flag in ((queries is not None, "--queries"), (grades != "binary", "--grades"), (collection is not None, "--collection"), (collection_size is not None, "--collection-size")):
                if given:
                    raise InputError(path, None, f"expected no {flag} with a ShapeNet ground truth (it names the queries, the collection and the grades)")
            return TaxonomyRelevance.from_rows(path, *read_shapenet_truth(path, fh), split=split)
        if split is not None:
            raise InputError(path, None, "expected a ShapeNet ground truth (id,synsetId,subSynsetId,modelId,split) with --split")
        if isinstance(relevance, Classification) or _is_cla_head(head):
            targets = relevance if isinstance(relevance, Classification) else read_classification(relevance, fh)
            qcla = queries if queries is None or isinstance(queries, Classification) else read_classification(queries)
            return Relevance.from_classification(targets, qcla, grades=grades)  # type: ignore[arg-type]
        if grades != "binary":
            raise InputError(path, None, "expected a PSB .cla with --grades sister (qrels carry their own grades)")
        if queries is not None:
            raise InputError(path, None, "expected no --queries with qrels (the qrels name the queries)")
        qrels = read_qrels(relevance, fh)
    coll = collection if collection is None or isinstance(collection, Classification) else read_classification(collection)
    return Relevance.from_qrels(qrels, collection=coll, collection_size=collection_size)


@dataclass(frozen=True)
class FoundRuns:
    """The runs in the RUNS arguments and how their ids meet the relevance's (computed once per scoring)."""

    sources: list[RunSource | BlockSource]
    notes: list[str]  # on files passed over
    spell: Spell | None  # a run's spelling of an id -> the relevance's (join.id_spelling)
    query_ids: dict[str, None]  # the queries and the ignorable ones (class -1): what names a query's file
    target_index: Mapping[str, int]  # a target id in a run's spelling -> its index
    unjudged: int | None  # the index of an id nobody judged (qrels without a collection), else None


def find_runs(
    paths: Sequence[PathLike], relevance: Relevance, options: Options, *, row_blocks: bool = False,
) -> FoundRuns:
    """The runs in ``paths`` by ``options``' run format and id spelling; ``row_blocks``: see :func:`discover_runs`."""
    spell = id_spelling(relevance, strip=options.strip_zeros, id_map=options.id_map)
    known = dict.fromkeys(relevance.query_ids + relevance.ignorable_queries)
    sources, notes = discover_runs(paths, options.run_format, query_ids=known, spell=spell, row_blocks=row_blocks)
    index = relevance.target_index if spell is None else SpelledIndex(relevance.target_index, spell)
    return FoundRuns(list(sources), notes, spell, known, index, None if relevance.closed else relevance.unjudged)


def load_runs(
    paths: Sequence[PathLike], relevance: Relevance, *, run_format: str = "auto", matrix_order: str | None = None,
    progress: Progress | None = None, lenient: bool = False, missing: str = "error", ties: bool = False,
    strip_zeros: bool = False, id_map: PathLike | None = None,
) -> tuple[list[AnyRun], list[str]]:
    """Read every run found in ``paths``; returns the runs and notes on files passed over.

    ``lenient``: broken runs scored by the documented rules, each run's ``drops`` saying what was dropped; ``missing``
    ``"skip"``/``"zero"``: a run may rank nothing for some queries; ``ties``: the runs carry their tie groups;
    ``strip_zeros``, ``id_map``: how a run's ids are spelled; the rest as :func:`shrec_score.score`'s."""
    one_of("run_format", run_format, RUN_FORMATS)
    one_of("missing", missing, MISSING)
    one_of("matrix_order", matrix_order, MATRIX_ORDERS, optional=True)
    given = Options(
        run_format=run_format, matrix_order=matrix_order, lenient=lenient, settings=Settings(missing=missing),
        strip_zeros=strip_zeros, id_map=id_map,
    )
    return load_with(paths, relevance, given, ties=ties, progress=progress)


def read_run(
    source: RunSource, relevance: Relevance, found: FoundRuns, matrix_order: str | None = None, *,
    drops: Counter[str] | None = None, missing_ok: bool = False, ties: bool = False,
) -> tuple[AnyRun, list[str]]:
    """One run found by :func:`find_runs`, read by the reader of its format, and the reader's notes."""
    notes: list[str] = []
    run: AnyRun
    if source.format in ("lists", "shrec2011"):  # (a SHREC 2011 file has no query-id line: header unused)
        header = not relevance.keeps_own_item  # a line holding only the query id is then the query ranked first
        read = partial(read_list_run, header=header) if source.format == "lists" else read_shrec2011_run
        lists = read(
            source, relevance.query_ids, found.target_index, ignorable=relevance.ignorable_queries,
            drops=drops, unjudged=found.unjudged, missing_ok=missing_ok, ties=ties, spell=found.spell,
        )
        run = drop_own(lists, relevance.self_index)  # the lists hold every query, in relevance order
    elif source.format == "matrix":
        run = read_matrix_run(source, relevance, matrix_order)
    else:
        run, notes = read_trec_run(source, relevance, drops=drops, missing_ok=missing_ok, ties=ties, spell=found.spell)
    run.drops = drops
    if isinstance(run, RankedRun):
        run.target_ids = relevance.target_ids
    return run, notes


def load_with(
    paths: Sequence[PathLike] | FoundRuns, relevance: Relevance, options: Options, *, ties: bool | None = None,
    progress: Progress | None = None,
) -> tuple[list[AnyRun], list[str]]:
    """:func:`load_runs` with the reading options of ``options`` (``paths``: or the runs :func:`find_runs` found,
    none of them row blocks); ``ties`` None: as its tie mode needs."""
    found = paths if isinstance(paths, FoundRuns) else find_runs(paths, relevance, options)
    sources = cast("list[RunSource]", found.sources)  # (no row blocks)
    ties = options.settings.ties != "rule" if ties is None else ties
    missing_ok = options.settings.missing != "error"
    runs: list[AnyRun] = []
    notes = list(found.notes)  # (found is frozen: its list stays as discovery made it)
    for i, s in enumerate(sources):
        if progress is not None:
            progress("reading", i, len(sources))
        drops: Counter[str] | None = Counter() if options.lenient else None
        run, more = read_run(s, relevance, found, options.matrix_order, drops=drops, missing_ok=missing_ok, ties=ties)
        notes.extend(more)
        runs.append(run)
    return runs, notes

