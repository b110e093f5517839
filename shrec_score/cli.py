"""Command line: parse, call one API function, render.  No arithmetic here.

``shrec-score RUNS... --relevance CLA`` is short for ``shrec-score score ...``.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import click

from . import __version__
from .errors import InputError, OptionError

if TYPE_CHECKING:
    from .report import Report


class BadInput(click.ClickException):
    """Bad input: one line on stderr, exit status 2."""

    exit_code = 2


class DefaultGroup(click.Group):
    """A group that runs ``score`` when the first argument is no command."""

    default_command = "score"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="shrec-score")
def cli() -> None:
    """Score retrieval runs of SHREC tracks and the Princeton Shape Benchmark.

    \b
    shrec-score RUNS... --relevance CLASSES.cla [--queries QUERIES.cla] [--out DIR]
    shrec-score measures        list the measures and their definitions
    """


class _Pick(Protocol):
    def __call__(self, key: str, given: Any, default: Any = None) -> Any: ...


def _preset(config: str | None) -> tuple[dict[str, Any], _Pick]:
    """The --config preset's keys, and ``pick(key, given, default)``: a value
    given on the command line, else the preset's, else the default."""
    from .config import load_config

    try:
        cfg = load_config(config) if config else {}
    except InputError as exc:
        raise BadInput(str(exc)) from None

    def pick(key: str, given: Any, default: Any = None) -> Any:
        return given if given is not None else cfg.get(key, default)

    return cfg, pick


@cli.command("score")
@click.argument("runs", nargs=-1, type=click.Path())
@click.option("-c", "--config", type=click.Path(), help="Track preset (YAML, see configs/); command-line options override it.")
@click.option("-r", "--relevance", type=click.Path(), help="Target classification (PSB .cla) or TREC qrels (query 0 target grade).")
@click.option("--ground-truth", type=click.Path(), help="query,item,score CSV/TSV of human scores: Kendall tau-b per query instead of relevance measures.")
@click.option(
    "--ground-truth-higher-is-better/--ground-truth-lower-is-better",
    "gt_higher",
    default=None,
    help="[default: higher] Orientation of the ground-truth scores.",
)
@click.option(
    "--lower-is-better/--higher-is-better",
    "run_lower",
    default=None,
    help="[default: lower] Orientation of the runs' distances (ranked lists).",
)
@click.option("-q", "--queries", type=click.Path(), help="Separate query classification (.cla); default: all-against-all.")
@click.option(
    "--grades",
    type=click.Choice(["binary", "sister"]),
    help="[default: binary] sister: SHREC 2006 graded relevance (own class 2, classes with the same parent 1).",
)
@click.option("--collection", type=click.Path(), help="Target .cla giving the collection (Ds) with qrels relevance.")
@click.option("--collection-size", type=click.IntRange(min=1), help="Ds, the collection size, with qrels relevance.")
@click.option("-m", "--measures", help="Comma-separated measures (default NN,FT,ST,E,DCG,AP; graded: every SHREC 2006 measure).")
@click.option("--sort", help="Leaderboard measure (default: ADR when graded, else the first measure).")
@click.option("--rank-by", help="Measure that ranks the runs per query (per_query_ranking.csv; default CG@100 when graded).")
@click.option(
    "--run-format",
    type=click.Choice(["auto", "lists", "matrix", "trec"]),
    help="[default: auto] How to read RUNS; auto refuses to guess.",
)
@click.option(
    "--matrix-order",
    type=click.Choice(["listing", "numeric"]),
    help="Matrix row i / column j is the i-th id in .cla listing order (PSB tools) or the i-th smallest integer id (SHREC 2021).",
)
@click.option("--cutoffs", help="[default: 5,10] k of P@k and R@k in the default measures with qrels.")
@click.option("--rel-level", type=click.IntRange(min=1), help="[default: 1] Binary measures count grade >= N as relevant (trec_eval -l).")
@click.option("--e-depth", type=click.IntRange(min=1), help="[default: 32] Depth of the E-measure.")
@click.option("--depth", type=click.IntRange(min=1), help="Cut every ranked list to its first N items before scoring (trec_eval -M).")
@click.option("--judged-only", is_flag=True, help="Leave unjudged items out of the ranked lists before scoring (trec_eval -J).")
@click.option(
    "--min-class-size",
    type=click.IntRange(min=1),
    help="[default: 1] Leave queries of classes with fewer models out of every mean (psbTable: 3).",
)
@click.option(
    "--missing-queries",
    type=click.Choice(["error", "skip", "zero"]),
    help="[default: error] A query the run ranks nothing for: an error; skip = left out of the run's means (trec_eval's default); zero = scored as an empty list (trec_eval -c).",
)
@click.option("--split", help="ShapeNet Core55 ground truth: score the models of this split (test, val, train).")
@click.option(
    "--ties",
    type=click.Choice(["rule", "expected", "optimistic", "pessimistic"]),
    help="[default: rule] Tied items (equal distances or scores): the documented rule; expected = exact mean over every order; optimistic / pessimistic = relevant first / last.",
)
@click.option("--average", type=click.Choice(["micro", "macro"]), help="[default: micro] macro = mean of per-class means (PSB -macro).")
@click.option("--significance", is_flag=True, help="Paired randomization tests between runs on the sort measure (Holm-corrected) and bootstrap 95% CIs.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the randomization test and the bootstrap.")
@click.option("--resamples", type=click.IntRange(min=100), default=10_000, show_default=True, help="Resamples of the randomization test and the bootstrap.")
@click.option("--plots", "plots_dir", type=click.Path(file_okay=False), help="Write PR curves, NDCG/CG curves and per-class bars (PNG and SVG) here; needs matplotlib.")
@click.option("-o", "--out", type=click.Path(file_okay=False), help="Write per_query.csv, per_run.csv and pr_curve.csv here.")
@click.option(
    "--html",
    "html_dir",
    type=click.Path(file_okay=False),
    is_flag=False,
    flag_value="",
    default=None,
    help="Write the results page (a self-contained index.html) here; --html alone (or --html=): under --out DIR/report/.",
)
@click.option("--per-query", is_flag=True, help="Also print per-query values (machine formats: print them instead of the leaderboard).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", "table", "csv", "json", "markdown", "latex", "trec"]),
    default="auto",
    show_default=True,
    help="auto = a table on a terminal, CSV otherwise.",
)
@click.option("--quiet", is_flag=True, help="No warnings on stderr.")
@click.option("--lenient", is_flag=True, help="Score broken runs anyway (documented rules) and say what was dropped.")
@click.option("--check", "check_only", is_flag=True, help="Only check the runs (as 'shrec-score check').")
@click.option("--dask", "dask_address", metavar="ADDRESS", help="Score on a Dask cluster: a scheduler (tcp://HOST:8786) or local:N (N worker processes here); needs shrec-score[dask].")
def score_command(
    runs: Sequence[str],
    config: str | None,
    relevance: str | None,
    ground_truth: str | None,
    gt_higher: bool | None,
    run_lower: bool | None,
    queries: str | None,
    grades: str | None,
    collection: str | None,
    collection_size: int | None,
    measures: str | None,
    sort: str | None,
    rank_by: str | None,
    run_format: str | None,
    matrix_order: str | None,
    cutoffs: str | None,
    rel_level: int | None,
    e_depth: int | None,
    depth: int | None,
    judged_only: bool,
    min_class_size: int | None,
    missing_queries: str | None,
    split: str | None,
    ties: str | None,
    average: str | None,
    significance: bool,
    seed: int,
    resamples: int,
    plots_dir: str | None,
    out: str | None,
    html_dir: str | None,
    per_query: bool,
    fmt: str,
    quiet: bool,
    lenient: bool,
    check_only: bool,
    dask_address: str | None = None,
) -> None:
    """Score every run in RUNS and print the leaderboard.

    RUNS is a folder holding one sub-folder per run, or a single run folder
    (one ranked-list file per query, named after the query id).  The E column
    is the value SHREC and the PSB publish as "E-measure": F1 of precision and
    recall over the first 32 results (higher is better).
    """
    from .api import score
    from .measures import Settings
    from .options import Options

    cfg, pick = _preset(config)
    runs = list(runs) or cfg.get("runs", [])
    html = _html_folder(pick("html", html_dir), out)
    page = {"description": cfg.get("description")}
    relevance = pick("relevance", relevance)
    ground_truth = pick("ground_truth", ground_truth)
    if not runs:
        raise click.UsageError("expected RUNS (or 'runs:' in the --config file)")
    dask_address = pick("dask", dask_address)
    if dask_address and ground_truth and not relevance:
        raise BadInput("--dask scores relevance measures; Kendall tau-b against --ground-truth runs on this machine")
    if ground_truth and not relevance:
        from .api import score_kendall

        try:
            with _Outputs(runs, out, None, html, page) as outputs:
                report = score_kendall(
                    runs,
                    ground_truth,
                    ground_truth_higher_is_better=pick("ground_truth_higher_is_better", gt_higher, True),
                    lower_is_better=pick("lower_is_better", run_lower, True),
                    run_format=pick("run_format", run_format, "auto"),
                )
                outputs.commit(report)
        except InputError as exc:
            raise BadInput(str(exc)) from None
        _render(report, fmt, per_query, quiet)
        return
    if not relevance:
        raise click.UsageError("expected --relevance (or 'relevance:' in the --config file)")
    if check_only:
        ctx = click.get_current_context()
        ctx.invoke(
            check_command,
            runs=runs,
            relevance=relevance,
            queries=pick("queries", queries),
            collection=pick("collection", collection),
            run_format=pick("run_format", run_format, "auto"),
            matrix_order=pick("matrix_order", matrix_order),
            split=pick("split", split),
        )
        return
    names = [m.strip() for m in measures.split(",") if m.strip()] if measures else cfg.get("measures")
    if cutoffs is not None:
        try:
            ks = [int(k) for k in cutoffs.split(",") if k.strip()]
        except ValueError:
            raise BadInput(f"--cutoffs: expected whole numbers separated by commas, got {cutoffs!r}") from None
    else:
        ks = cfg.get("cutoffs", [5, 10])
    bar = _ProgressBar(enabled=not quiet and sys.stderr.isatty())
    if plots_dir:
        from .plots import INSTALL_HINT

        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise BadInput(f"--plots needs matplotlib; install it with: {INSTALL_HINT}") from None
    defaults = Settings()
    settings = Settings(
        rel_level=pick("rel_level", rel_level, defaults.rel_level),
        e_depth=pick("e_depth", e_depth, defaults.e_depth),
        pr_levels=cfg.get("pr_levels", defaults.pr_levels),
        dcg_cutoffs=tuple(cfg.get("dcg_cutoffs", defaults.dcg_cutoffs)),
        depth=depth,
        judged_only=judged_only,
        missing=pick("missing_queries", missing_queries, defaults.missing),
        min_class_size=pick("min_class_size", min_class_size, defaults.min_class_size),
        ties=pick("ties", ties, defaults.ties),
    )
    try:  # every option checked before any input is read
        options = Options.build(
            queries=pick("queries", queries),
            grades=pick("grades", grades, "binary"),
            collection=pick("collection", collection),
            collection_size=pick("collection_size", collection_size),
            measures=names,
            sort=pick("sort", sort),
            rank_by=pick("rank_by", rank_by),
            run_format=pick("run_format", run_format, "auto"),
            matrix_order=pick("matrix_order", matrix_order),
            cutoffs=ks,
            average=pick("average", average, "micro"),
            significance=significance,
            seed=seed,
            n_resamples=resamples,
            settings=settings,
            lenient=lenient,
            split=pick("split", split),
        )
    except OptionError as exc:
        raise BadInput(str(exc)) from None
    if dask_address:
        from .distributed import cluster_target

        try:
            cluster_target(dask_address)
        except OptionError as exc:
            raise BadInput(str(exc)) from None
    try:
        with _Outputs(runs, out, plots_dir, html, page) as outputs:  # locked before any input is read
            if dask_address or _row_block_runs(runs):  # without --dask: the same tasks here, one by one
                from .distributed import score as score_on_cluster

                report = score_on_cluster(runs, relevance, dask=dask_address or None, options=options, progress=bar)
            else:
                report = score(runs, relevance, options=options, progress=bar)
            bar.close()
            outputs.commit(report)
    except (InputError, OptionError) as exc:
        raise BadInput(str(exc)) from None
    finally:
        bar.close()
    _render(report, fmt, per_query, quiet)


def _html_folder(given: str | bool | None, out: str | None) -> str | None:
    """The ``--html`` folder: as given, or ``--out DIR/report`` for ``--html`` alone (``""``, YAML ``html: true``)."""
    if given is None or given is False:
        return None
    if given is True or given == "":
        if not out:
            raise click.UsageError("--html without a folder writes under --out DIR/report/: expected --out DIR (or --html DIR)")
        return os.path.join(out, "report")
    return str(given)


def _page_date() -> str:
    """Today (UTC), or the day of SOURCE_DATE_EPOCH when set (reproducible pages)."""
    import datetime

    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    when = datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc) if epoch.isdigit() else datetime.datetime.now(datetime.timezone.utc)
    return when.date().isoformat()


def _row_block_runs(runs: Sequence[str]) -> bool:
    """Whether a RUNS argument is (or holds) a matrix stored by blocks of rows (Zarr, .npy shards)."""
    from .io.chunked import holds_row_blocks

    return any(holds_row_blocks(r) for r in runs)


def _prefix_in(out: str, folder: str, flag: str) -> str | None:
    """Where ``folder`` lies inside ``out`` ("" for ``out`` itself, "sub/" for
    a sub-folder; written in the same transaction), None when apart;
    BadInput when ``out`` lies inside ``folder``."""
    rel = os.path.relpath(os.path.realpath(folder), os.path.realpath(out))
    if rel == os.curdir:
        return ""
    if not rel.startswith(os.pardir):
        return rel.replace(os.sep, "/") + "/"
    if not os.path.relpath(os.path.realpath(out), os.path.realpath(folder)).startswith(os.pardir):
        raise BadInput(f"{out}: expected --out apart from {flag} {folder} or holding it, not inside it")
    return None


class _Outputs:
    """``--out``, ``--plots`` and ``--html`` as transactions (:mod:`shrec_score.outdir`):
    both folders are locked on entry, so a second scoring into them fails
    before it reads anything; :meth:`commit` replaces each as a unit.  A
    ``--plots`` or ``--html`` folder inside ``--out`` is part of the same
    unit (and the page then links the CSV files).  Output
    folders inside a RUNS folder are refused: the next scoring would read
    them as runs."""

    def __init__(
        self, runs: Sequence[str], out: str | None, plots: str | None, html: str | None = None, page: dict[str, Any] | None = None
    ) -> None:
        from .outdir import OutputFolder

        self.plots_prefix: str | None = None
        self.html_prefix: str | None = None
        self.page = page or {}
        for flag, folder in (("--out", out), ("--plots", plots), ("--html", html)):
            if folder is None:
                continue
            real = os.path.realpath(folder)
            for run in runs:
                top = os.path.realpath(run)
                if os.path.isdir(top) and (real == top or real.startswith(top + os.sep)):
                    raise BadInput(f"{folder}: expected a {flag} folder outside RUNS ({run}); the next scoring would read it as a run")
        if out and plots:
            self.plots_prefix = _prefix_in(out, plots, "--plots")
        if out and html:
            self.html_prefix = _prefix_in(out, html, "--html")
        if html and plots and self.html_prefix is None and self.plots_prefix is None:
            a, b = os.path.realpath(html), os.path.realpath(plots)
            if a == b or a.startswith(b + os.sep) or b.startswith(a + os.sep):
                raise BadInput(f"{html}: expected --html apart from --plots {plots} (or both inside --out)")
        self.out = OutputFolder(out) if out else None
        self.plots = OutputFolder(plots) if plots and self.plots_prefix is None else None
        self.html = OutputFolder(html) if html and self.html_prefix is None else None
        self.want_plots = bool(plots)
        self.want_html = bool(html)

    def __enter__(self) -> _Outputs:
        from contextlib import ExitStack

        self.stack = ExitStack()
        with self.stack as stack:
            for folder in (self.out, self.plots, self.html):
                if folder is not None:
                    stack.enter_context(folder)
            self.stack = stack.pop_all()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stack.__exit__(*exc)

    def commit(self, report: Any) -> None:
        figures: dict[str, bytes] = {}
        if self.want_plots:
            from .plots import plot_files

            figures = plot_files(report)
        csv = report.csv_files() if self.out is not None else {}
        pages: dict[str, str] = {}
        if self.want_html:
            from .html import html_files

            links = None
            if self.html_prefix is not None:  # the CSV files are written beside the page
                up = "../" * self.html_prefix.count("/")
                links = {name: up + name for name in csv}
            pages = html_files(report, description=self.page.get("description"), date=_page_date(), figures=figures if self.want_plots else None, links=links)
        if self.plots is not None:
            for name, data in figures.items():
                self.plots.add(name, data)
            self.plots.commit()
        if self.html is not None:
            for name, text in pages.items():
                self.html.add(name, text)
            self.html.commit()
        if self.out is not None:
            for name, text in csv.items():
                self.out.add(name, text)
            if self.plots_prefix is not None:
                for name, data in figures.items():
                    self.out.add(self.plots_prefix + name, data)
            if self.html_prefix is not None:
                for name, text in pages.items():
                    self.out.add(self.html_prefix + name, text)
            self.out.commit()


def _render(report: Report, fmt: str, per_query: bool, quiet: bool) -> None:
    from .render import FORMATS, render_table

    if not quiet:
        for w in report.warnings:  # notes carry their own "note: " prefix (api._warnings)
            click.echo(w if w.startswith("note: ") else f"warning: {w}", err=True)
    if fmt == "auto":
        fmt = "table" if sys.stdout.isatty() else "csv"
    if fmt == "table":
        from rich.console import Console

        render_table(report, Console() if sys.stdout.isatty() else Console(width=160), per_query)
    else:
        click.echo(FORMATS[fmt](report, per_query=per_query), nl=False)


class _ProgressBar:
    """A rich progress bar on stderr that appears only when the work lasts
    more than a second, and never when stderr is not a terminal or --quiet."""

    DELAY = 1.0

    def __init__(self, enabled: bool) -> None:
        import time

        self.enabled = enabled
        self.started = time.monotonic()
        self.bar: Any = None
        self.task: Any = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        import time

        if not self.enabled:
            return
        if self.bar is None:
            if time.monotonic() - self.started < self.DELAY or done >= total:
                return
            from rich.console import Console
            from rich.progress import Progress

            self.bar = Progress(console=Console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task(stage, total=total)
        self.bar.update(self.task, completed=done, total=total, description=f"{stage} runs")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


@cli.command("check")
@click.argument("runs", nargs=-1, required=True, type=click.Path())
@click.option("-r", "--relevance", required=True, type=click.Path(), help="Target classification (.cla) or TREC qrels.")
@click.option("-q", "--queries", type=click.Path(), help="Separate query classification (.cla).")
@click.option("--collection", type=click.Path(), help="Target .cla with qrels relevance.")
@click.option("--run-format", type=click.Choice(["auto", "lists", "matrix", "trec"]), default="auto", show_default=True)
@click.option("--matrix-order", type=click.Choice(["listing", "numeric"]))
@click.option("--split", help="ShapeNet Core55 ground truth: the split the runs rank.")
def check_command(
    runs: Sequence[str],
    relevance: str,
    queries: str | None,
    collection: str | None,
    run_format: str,
    matrix_order: str | None,
    split: str | None = None,
) -> None:
    """Check runs before submitting them: every problem, one line each, nothing scored.

    Exit status 0 when the runs would score, 2 when any line is an error.
    """
    from .api import load_relevance
    from .check import check_runs

    try:
        rel = load_relevance(relevance, queries, collection=collection, split=split)
    except InputError as exc:
        raise BadInput(str(exc)) from None
    problems = check_runs(list(runs), rel, run_format=run_format, matrix_order=matrix_order)
    for p in problems:
        click.echo(str(p))
    errors = sum(p.level == "error" for p in problems)
    warnings = sum(p.level == "warning" for p in problems)
    if not errors:  # runs that score: does the tie rule move a mean (the default sort measure)?
        from .tiereport import tie_report, tie_warnings

        try:
            lines = tie_warnings(tie_report(list(runs), rel, run_format=run_format, matrix_order=matrix_order))
        except (InputError, OptionError):
            lines = []  # what check_runs does not see, scoring reports
        for line in lines:
            click.echo(f"warning: {line}")
        warnings += len(lines)
    click.echo(f"{errors} error(s), {warnings} warning(s): " + ("the runs would not score" if errors else "the runs would score"), err=True)
    if errors:
        sys.exit(2)


@cli.command("ties")
@click.argument("runs", nargs=-1, type=click.Path())
@click.option("-c", "--config", type=click.Path(), help="Track preset (YAML); options given here override it.")
@click.option("-r", "--relevance", type=click.Path(), help="Target classification (.cla) or TREC qrels.")
@click.option("-q", "--queries", type=click.Path(), help="Separate query classification (.cla).")
@click.option("--grades", type=click.Choice(["binary", "sister"]), help="[default: binary] sister: SHREC 2006 graded relevance.")
@click.option("--collection", type=click.Path(), help="Target .cla with qrels relevance.")
@click.option("-m", "--measures", help="Comma-separated measures to report (default: the sort measure).")
@click.option("--run-format", type=click.Choice(["auto", "lists", "matrix", "trec"]), help="[default: auto] How to read RUNS.")
@click.option("--matrix-order", type=click.Choice(["listing", "numeric"]), help="Matrix row / column order (see score).")
@click.option("--format", "fmt", type=click.Choice(["auto", "table", "csv", "json", "markdown"]), default="auto", show_default=True)
def ties_command(
    runs: Sequence[str],
    config: str | None,
    relevance: str | None,
    queries: str | None,
    grades: str | None,
    collection: str | None,
    measures: str | None,
    run_format: str | None,
    matrix_order: str | None,
    fmt: str,
) -> None:
    """How much of each run's value the tie rule decides: per run, the
    pessimistic, rule, optimistic (and expected) means, the share of queries
    whose value depends on the order of tied items, and the leaderboard
    places the ties allow."""
    from .render import frame_text
    from .tiereport import tie_report

    cfg, pick = _preset(config)
    runs = list(runs) or cfg.get("runs", [])
    relevance = pick("relevance", relevance)
    if not runs or not relevance:
        raise click.UsageError("expected RUNS and --relevance (or 'runs:' and 'relevance:' in the --config file)")
    names = [m.strip() for m in measures.split(",") if m.strip()] if measures else None
    try:
        frame = tie_report(
            runs, relevance, measures=names or ([cfg["sort"]] if cfg.get("sort") else None), queries=pick("queries", queries),
            grades=pick("grades", grades, "binary"), collection=pick("collection", collection),
            run_format=pick("run_format", run_format, "auto"), matrix_order=pick("matrix_order", matrix_order),
        )
    except (InputError, OptionError) as exc:
        raise BadInput(str(exc)) from None
    if fmt == "auto":
        fmt = "table" if sys.stdout.isatty() else "csv"
    click.echo(frame_text(frame, fmt), nl=False)


@cli.command("convert")
@click.argument("matrix", type=click.Path())
@click.argument("out", type=click.Path())
@click.option("--to", "layout", type=click.Choice(["zarr", "npy-shards"]), required=True, help="zarr: a Zarr array folder; npy-shards: .npy row shards with a manifest.json.")
@click.option("--chunk-rows", type=click.IntRange(min=1), help="Rows per block (default: about 64 MiB per block).")
@click.option("--shape", help="ROWSxCOLS of a PSB binary matrix that is not square (it has no header).")
@click.option("--dtype", type=click.Choice(["float32", "float64"]), help="[default: the matrix's own] Cell type of the blocks.")
def convert_command(matrix: str, out: str, layout: str, chunk_rows: int | None, shape: str | None, dtype: str | None) -> None:
    """Convert MATRIX (ASCII, .npy or PSB binary) into a matrix stored by blocks of rows at OUT.

    Streamed a block at a time (memory near one block); OUT appears only when complete.
    Score it with --dask (or shrec_score.distributed.score).
    """
    import numpy as np

    from .io.chunked import default_chunk_rows, source_matrix, write_row_blocks

    dims = None
    if shape is not None:
        parts = shape.lower().split("x")
        if len(parts) != 2 or not all(p.strip().isdigit() and int(p) > 0 for p in parts):
            raise BadInput(f"--shape: expected ROWSxCOLS (two whole numbers), got {shape!r}")
        dims = (int(parts[0]), int(parts[1]))
    try:
        m = source_matrix(matrix, dims)
        kind = np.dtype(dtype) if dtype else np.dtype(m.dtype)
        n_rows, n_cols = int(m.shape[0]), int(m.shape[1])
        step = chunk_rows or default_chunk_rows(n_cols, kind.itemsize)
        write_row_blocks(out, layout, (n_rows, n_cols), kind, step, lambda a, b: np.asarray(m[a:b], dtype=kind))
    except InputError as exc:
        raise BadInput(str(exc)) from None
    click.echo(f"{out}: {n_rows} x {n_cols} {kind}, blocks of {step} rows ({layout})", err=True)


@cli.command("measures")
def measures_command() -> None:
    """List the measures with a one-line definition each."""
    from .measures import measure_listing

    click.echo(measure_listing(), nl=False)


class _Stopped(BaseException):
    """SIGINT or SIGTERM, raised in the main thread so that every ``finally``
    and ``with`` block runs on the way out (workers stopped, staging folders
    removed, the terminal's cursor restored).  A BaseException, so that no
    ``except Exception`` and not click's own Ctrl-C handling swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _stop(signum: int, frame: object) -> None:
    raise _Stopped(signum)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point.  Exit status: 0 done, 2 bad input or an
    environment error (a missing or unreadable file, a full disk, out of
    memory...), 130 interrupted (SIGINT, Ctrl-C), 143 terminated (SIGTERM),
    1 an internal error (a bug: please report it).

    Leaves through ``SystemExit`` like any click program, so ``atexit``
    handlers, a caller's ``finally``, profilers and coverage all run.  The
    SIGINT/SIGTERM handlers are installed for the call only (from the main
    thread) and the caller's handlers are put back on the way out.
    """
    import signal
    import threading

    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, _stop)
    try:
        cli.main(args=argv, prog_name="shrec-score", standalone_mode=True)
    except SystemExit:
        raise
    except _Stopped as stop:
        click.echo("shrec-score: interrupted", err=True)
        sys.exit(128 + stop.signum)
    except MemoryError:
        click.echo("shrec-score: out of memory: the inputs need more memory than this process may use (score fewer runs at a time, or raise the limit)", err=True)
        sys.exit(2)
    except OSError as exc:  # an environment error no reader turned into an InputError: still the user's to fix
        from .outdir import environment_error

        name = exc.filename if exc.filename is not None else "shrec-score"
        click.echo(str(environment_error(name, exc, doing=None)), err=True)
        sys.exit(2)
    except Exception as exc:  # an internal error: say so in one line
        if os.environ.get("SHREC_SCORE_DEBUG"):
            traceback.print_exc()
        click.echo(
            f"shrec-score: internal error: {type(exc).__name__}: {exc} "
            "(please report it; SHREC_SCORE_DEBUG=1 shows the traceback)",
            err=True,
        )
        sys.exit(1)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


if __name__ == "__main__":
    main()
