"""Pre-submission check of runs (``shrec-score check``): every problem, one ``file:line: level: message``
line each, without scoring (docs/inputs.md, "Checking runs and lenient scoring")."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .errors import InputError, OptionError, shown, visible
from .io import trec
from .io.lists import id_column, list_rows, query_of, scan_lines, second_list_error
from .io.numbers import parse_number
from .io.runs import BlockSource
from .io.submissions import Spell, is_clutter, no_query_error
from .io.text import decode_text, entry_is_folder, plain, read_bytes, utf8_name
from .join import matrix_ids
from .loading import FoundRuns, find_runs, load_with, read_run
from .model import MatrixRun, RunSource
from .options import Options
from .relevance import Relevance

#: Problems listed per file before a summary line.
PER_FILE = 20
#: Examples (file:line) a summary line of one kind of problem shows.
EXAMPLES = 3
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?![\w.])")


@dataclass(frozen=True)
class Problem:
    path: str
    line: int | None
    level: str  # error, warning, note
    message: str

    @property
    def where(self) -> str:
        return visible(self.path) if self.line is None else f"{visible(self.path)}:{self.line}"

    def __str__(self) -> str:  # escaped: a newline in a file name shows as \n
        return f"{self.where}: {self.level}: {visible(self.message)}"

    @classmethod
    def of(cls, exc: InputError, path: str) -> Problem:
        """The error ``exc``, of the file ``path`` unless it names its own."""
        return cls(exc.path or path, exc.line, "error", exc.body)


def check_runs(paths: Iterable[str], relevance: Relevance, options: Options | None = None) -> list[Problem]:
    """Validate every run, read as a scoring with ``options`` reads it (their run format, matrix order and
    id spelling); returns the problems (empty: the runs would score)."""
    o = options or Options()
    try:
        found = find_runs(list(paths), relevance, o, row_blocks=True)
    except InputError as exc:
        return [Problem.of(exc, "")]
    problems = [Problem(n.split(":", 1)[0], None, "note", n.split(": ", 1)[1]) for n in found.notes]
    for s in found.sources:
        if isinstance(s, BlockSource) or s.format in ("matrix", "shrec2011"):  # (blocks: Zarr or .npy shards)
            problems += _check_read(s, relevance, found, o.matrix_order)
        elif s.format == "lists":
            problems += summarize(s.path, _check_list_run(s, relevance, found))
        else:
            problems += _limited(summarize(s.path, _check_trec_run(s, relevance, found.spell)), s.path)  # counted before the cut
    return problems


def passed_over(
    problems: list[Problem], runs: Sequence[str], relevance: Relevance, options: Options, *, ties: bool = False,
) -> tuple[list[Problem], list[Any] | None]:
    """``problems`` as a scoring with ``options`` meets them: when the options pass something over (``lenient``,
    ``settings.missing`` ``skip`` / ``zero``) and the runs load with them (``ties`` as in ``load_runs``), every
    error is a warning, returned with the runs so loaded (for the tie report; else None)."""
    if not any(p.level == "error" for p in problems) or not (options.lenient or options.settings.missing != "error"):
        return problems, None
    try:
        loaded, _ = load_with(runs, relevance, options, ties=ties)
    except (InputError, OptionError):
        return problems, None  # what they do not pass over stays an error
    return [replace(p, level="warning") if p.level == "error" else p for p in problems], loaded


def kind_of(message: str) -> str:
    """A problem's kind: its message without quoted ids and numbers (``unknown target id '0012'``)."""
    return _NUMBER.sub("N", _QUOTED.sub("…", message))


def summarize(run: str, found: list[Problem]) -> list[Problem]:
    """One line per kind of problem (:func:`kind_of`, same level) found more than :data:`EXAMPLES` times in
    ``run`` (where its kind was first found); other problems as they are, in order."""
    groups: dict[tuple[str, str], list[Problem]] = {}
    for p in found:
        groups.setdefault((p.level, kind_of(p.message)), []).append(p)
    out: list[Problem] = []
    for p in found:
        group = groups[(p.level, kind_of(p.message))]
        if len(group) <= EXAMPLES:
            out.append(p)
        elif p is group[0]:
            where = ", ".join(_example(q, run) for q in group[:EXAMPLES])
            out.append(Problem(run, None, p.level, f"{len(group)} x {kind_of(p.message)} (first: {where}; {p.message})"))
    return out


def _example(p: Problem, run: str) -> str:
    """A summary line's example: its file:line, or the id a problem of the run itself names ('1008')."""
    if p.path != run or p.line is not None:
        return p.where
    ids = _QUOTED.findall(p.message)
    return ids[0] if ids else p.where


def _limited(found: list[Problem], path: str, total: int | None = None) -> list[Problem]:
    """The first :data:`PER_FILE` problems, then a note counting the rest (of ``total``, default all listed)."""
    rest = (len(found) if total is None else total) - PER_FILE
    if rest <= 0:
        return found
    return found[:PER_FILE] + [Problem(path, None, "note", f"{rest} more problem(s) in this file not listed")]


def _check_list_run(source: RunSource, relevance: Relevance, found: FoundRuns) -> list[Problem]:
    out: list[Problem] = []
    known = found.query_ids
    files: dict[str, str] = {}  # (a query's file refused below is not missing, and not read)
    try:
        names = os.listdir(source.path) if source.listing is None else source.listing  # (discovery's listing)
        entries = sorted(e for e in names if not is_clutter(e))  # the discovery's note names clutter
    except OSError as exc:
        return [Problem(source.path, None, "error", f"expected a readable folder, got {exc.strerror or exc}")]
    for entry in entries:
        full = os.path.join(source.path, entry)
        qid = query_of(entry, known, found.spell)
        try:  # a FIFO or a device is never opened; a name that is not UTF-8 is no query id
            utf8_name(full, entry)
            if entry_is_folder(full):
                continue
        except InputError as exc:
            out.append(Problem(full, None, "error", exc.body))
            if qid in known:
                files.setdefault(qid, full)
            continue
        if qid not in known:
            out.append(Problem(full, None, "error", f"a file for an unknown query {shown(qid)} (files are named after query ids)"))
        elif qid in files:
            out.append(Problem.of(second_list_error(full, qid, files[qid]), full))
        else:
            files[qid] = full
    if not files and out:  # no file names a query: the ids are spelled otherwise
        return [Problem.of(no_query_error(source.path, [os.path.basename(p.path) for p in out], known), source.path)]
    out += [Problem(source.path, None, "error", f"no ranked list for query {shown(q)}") for q in relevance.query_ids if q not in files]
    refused = {p.path for p in out}  # (the other problems name files that are not a query's)
    for q, path in files.items():
        if q not in relevance.ignorable_queries and path not in refused:
            out += _check_list_file(path, q, relevance, found)
    return out


def _check_list_file(path: str, query_id: str, relevance: Relevance, runs: FoundRuns) -> list[Problem]:
    try:
        text = decode_text(path, read_bytes(path))  # _check_list_run stat'ed it
    except InputError as exc:
        return [Problem.of(exc, path)]
    found: list[Problem] = []
    rows = list_rows(text, None if relevance.keeps_own_item else query_id)  # ShapeNet: a query-id line is the query ranked first
    if not rows:
        return [Problem(path, None, "error", "an empty ranked list")]
    index, unjudged = runs.target_index, runs.unjudged
    lines = scan_lines(rows, index, id_column(path, rows, index, unjudged is not None, strict=False), unjudged)
    prev, decreasing, n_targets = -math.inf, 0, 0
    q = relevance.query_ids.index(query_id)  # (files of ignorable queries are not checked)
    own, room = relevance.self_index[q], relevance.list_room(np.array([q]))  # the query itself is not counted
    for n, fields, tid, target, first_at, text_d, d in lines:
        if tid is None:
            found.append(Problem(path, n, "error", f'expected "<target> [distance]", got {fields} fields'))
            continue
        if target is None:
            found.append(Problem(path, n, "error", f"unknown target id {shown(tid)}"))
        elif first_at is not None:
            found.append(Problem(path, n, "error", f"target {shown(tid)} listed twice (first at line {first_at})"))
        else:
            n_targets += target != own
        if text_d is None:
            continue
        if d is None or math.isnan(d):
            found.append(Problem(path, n, "error", "distance is NaN" if d is not None else f"distance {shown(text_d)} is not a number"))
            continue
        if math.isinf(d):
            found.append(Problem(path, n, "warning", f"distance is {plain(text_d)} (infinite)"))
        if d < prev:
            decreasing += 1
            if decreasing == 1:
                found.append(Problem(path, n, "warning", f"distance {plain(text_d)} is smaller than the one above: lists must be sorted, most similar (smallest distance) first"))
        prev = d
    if decreasing > 1:
        found.append(Problem(path, None, "warning", f"distances decrease {decreasing} times down the list"))
    if room is not None and n_targets < room[0]:
        found.append(Problem(path, None, "note", f"the list ranks {n_targets} of {room[0]} targets"))
    return found  # many of a kind: one summary line (summarize)


def _check_read(source: RunSource | BlockSource, rel: Relevance, runs: FoundRuns, order: str | None) -> list[Problem]:
    """A run read as scoring reads it (SHREC 2011: its first error; row blocks: shape, then each block, a broken one
    an error and the next read), a matrix's cells, named as scoring names them (a store: the file holding the row)."""
    found: list[Problem] = []
    total = 0  # bad cells and broken blocks, listed or not
    try:
        if isinstance(source, BlockSource):
            m: Any = source.matrix
            matrix_ids(rel, order, source.path, m.shape)
            spans, read = m.blocks, m.read
        else:
            run, _ = read_run(source, rel, runs, order)
            m = run.matrix if isinstance(run, MatrixRun) else np.zeros((0, 0))
            spans, read = [(a, a + 256) for a in range(0, m.shape[0], 256)], lambda a, b: m[a:b]
    except InputError as exc:
        return [Problem.of(exc, source.path)]
    for a, b in spans:  # NaN cells are errors, infinite ones warnings
        try:
            block = np.asarray(read(a, b), dtype=np.float64)
        except InputError as exc:  # listed as a cell is, counted
            total += 1
            found += [Problem.of(exc, source.path)] if len(found) < PER_FILE else []
            continue
        for kind, mask, level in (("NaN", np.isnan(block), "error"), ("infinite", np.isinf(block), "warning")):
            n = int(np.count_nonzero(mask))
            total += n
            if n and len(found) < PER_FILE:  # the first cells listed, the rest counted (no coordinates made)
                for r, c in np.argwhere(mask)[: PER_FILE - len(found)].tolist():
                    path, line = m.located(a + r) if isinstance(source, BlockSource) else (source.path, None)
                    found.append(Problem(path, line, level, f"row {a + r + 1} column {c + 1} is {kind}"))
    return _limited(found, source.path, total)


def _check_trec_run(source: RunSource, relevance: Relevance, spell: Spell | None) -> list[Problem]:
    """The run's problems in :mod:`shrec_score.io.trec`'s words, read by its line reader."""
    path, qset = source.path, set(relevance.query_ids)
    found: list[Problem] = []
    seen: dict[tuple[str, str], int] = {}
    ranked: set[str] = set()
    unknown_topics: set[str] = set()
    extra = lines = 0

    def error(exc: InputError | None) -> None:
        if exc is not None:
            found.append(Problem.of(exc, path))

    closed, target_index = relevance.closed, relevance.target_index  # read once, not per line
    try:
        for n, f in trec.trec_lines(path):  # (a compressed run a piece at a time)
            lines += 1
            extra += len(f) > 6  # trec_eval reads the tag's first word and ignores the rest
            score = parse_number(f[4]) if len(f) >= 6 else None
            if score is None or math.isnan(score):  # line_error's rule, asked of bad lines only (10% a line)
                error(trec.line_error(path, n, f))
                if score is None:
                    continue
            q, t = (f[0], f[2]) if spell is None else (spell(f[0]), spell(f[2]))
            if q not in qset:
                unknown_topics.add(q)
                continue
            if closed and t not in target_index:
                error(trec.unknown_target_error(path, n, t))
            elif not math.isnan(score):  # a line scoring keeps (--lenient drops the others) ranks its query
                ranked.add(q)
            if (q, t) in seen:
                error(trec.repeated_error(path, q, t, seen[(q, t)], n))
            seen[(q, t)] = n
    except InputError as exc:  # bytes that are not UTF-8, a long line, a damaged compressed stream
        error(exc)
        return found
    missing = [q for q in relevance.query_ids if q not in ranked]
    if not lines:
        error(trec.empty_run_error(path))
    elif missing:
        error(trec.missing_queries_error(path, source.name, len(missing), len(qset), missing[0]))
    if unknown_topics:
        found.append(Problem(path, None, "note", f"{len(unknown_topics)} topic(s) without relevance judgments would be passed over"))
    if extra:
        found.append(Problem(path, None, "note", trec.extra_fields_note(source.name, extra)))
    return found
