"""The commands: parse the options (flags over a ``--config`` preset), call
one API function, print.  No arithmetic here.

``shrec-score RUNS... --relevance CLA`` is short for ``shrec-score score ...``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

import click

from .. import __version__
from ..errors import InputError, OptionError
from .outputs import Outputs, ProgressBar, html_folder, render

F = TypeVar("F", bound=Callable[..., Any])


def options(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    """One decorator of several click options, applied in the order listed
    (as if written one above the other): a group of options shared by commands."""

    def apply(f: F) -> F:
        for decorator in reversed(decorators):
            f = decorator(f)
        return f

    return apply


#: The query classification and the collection, as ``check`` and ``ties`` take them.
QUERIES_COLLECTION = options(
    click.option("-q", "--queries", type=click.Path(), help="Separate query classification (.cla)."),
    click.option("--collection", type=click.Path(), help="Target .cla with qrels relevance."),
)


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
    from ..config import load_config

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
    from ..api import score
    from ..measures import Settings
    from ..options import Options

    cfg, pick = _preset(config)
    runs = list(runs) or cfg.get("runs", [])
    html = html_folder(pick("html", html_dir), out)
    page = {"description": cfg.get("description")}
    relevance = pick("relevance", relevance)
    ground_truth = pick("ground_truth", ground_truth)
    if not runs:
        raise click.UsageError("expected RUNS (or 'runs:' in the --config file)")
    dask_address = pick("dask", dask_address)
    if dask_address and ground_truth and not relevance:
        raise BadInput("--dask scores relevance measures; Kendall tau-b against --ground-truth runs on this machine")
    if ground_truth and not relevance:
        from ..api import score_kendall

        try:
            with Outputs(runs, out, None, html, page) as outputs:
                report = score_kendall(
                    runs,
                    ground_truth,
                    ground_truth_higher_is_better=pick("ground_truth_higher_is_better", gt_higher, True),
                    lower_is_better=pick("lower_is_better", run_lower, True),
                    run_format=pick("run_format", run_format, "auto"),
                )
                outputs.commit(report)
        except (InputError, OptionError) as exc:
            raise BadInput(str(exc)) from None
        render(report, fmt, per_query, quiet)
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
    bar = ProgressBar(enabled=not quiet and sys.stderr.isatty())
    if plots_dir:
        from ..plots import INSTALL_HINT

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
        from ..distributed import cluster_target

        try:
            cluster_target(dask_address)
        except OptionError as exc:
            raise BadInput(str(exc)) from None
    try:
        with Outputs(runs, out, plots_dir, html, page) as outputs:  # locked before any input is read
            if dask_address or _row_block_runs(runs):  # without --dask: the same tasks here, one by one
                from ..distributed import score as score_on_cluster

                report = score_on_cluster(runs, relevance, dask=dask_address or None, options=options, progress=bar)
            else:
                report = score(runs, relevance, options=options, progress=bar)
            bar.close()
            outputs.commit(report)
    except (InputError, OptionError) as exc:
        raise BadInput(str(exc)) from None
    finally:
        bar.close()
    render(report, fmt, per_query, quiet)


def _row_block_runs(runs: Sequence[str]) -> bool:
    """Whether a RUNS argument is (or holds) a matrix stored by blocks of rows (Zarr, .npy shards)."""
    from ..io.chunked import holds_row_blocks

    return any(holds_row_blocks(r) for r in runs)


@cli.command("check")
@click.argument("runs", nargs=-1, required=True, type=click.Path())
@click.option("-r", "--relevance", required=True, type=click.Path(), help="Target classification (.cla) or TREC qrels.")
@QUERIES_COLLECTION
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
    from ..api import load_relevance
    from ..check import check_runs

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
        from ..tiereport import tie_report, tie_warnings

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
@QUERIES_COLLECTION
@click.option("--grades", type=click.Choice(["binary", "sister"]), help="[default: binary] sister: SHREC 2006 graded relevance.")
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
    from ..render import frame_text
    from ..tiereport import tie_report

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

    from ..io.chunked import default_chunk_rows, source_matrix, write_row_blocks

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
    from ..measures import measure_listing

    click.echo(measure_listing(), nl=False)
