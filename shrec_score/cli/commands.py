"""The commands: parse the options (flags over a ``--config`` preset), call one API function, print; no
arithmetic.  ``shrec-score RUNS...`` is short for ``shrec-score score RUNS...``."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from contextlib import closing, nullcontext, suppress
from typing import Any

import click

from .. import __version__
from ..choices import MIN_RESAMPLES, TIES
from ..errors import InputError, OptionError
from .inputs import INPUTS, MEASURES, SHARED, BadInput, Inputs, OnceCommand, options, user_errors
from .outputs import REPORT_FORMAT, ProgressBar, format_option, outputs, render
from .signals import Interrupts, quiet_dask_logs


class DefaultGroup(click.Group):
    """A group that runs ``score`` when the first argument is no command."""

    command_class = OnceCommand

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = ["score", *args]
        return super().parse_args(ctx, args)


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="shrec-score")
def cli() -> None:
    """Score retrieval runs of SHREC tracks and the Princeton Shape Benchmark.

    \b
    shrec-score RUNS... --relevance CLASSES.cla [--queries QUERIES.cla] [--out DIR]
    shrec-score measures        list the measures and their definitions
    """


def folder_option(*names: str, what: str, help: str, alone: bool = True) -> Any:
    """An output folder ``--KEY DIR`` (``alone``: ``--KEY`` without one too) and ``--no-KEY``."""
    key = names[-1][2:]
    flag_alone: dict[str, Any] = {"is_flag": False, "flag_value": "", "default": None} if alone else {}
    return options(
        click.option(*names, key, type=click.Path(), help=help, **flag_alone),
        click.option(f"--no-{key}", is_flag=True, help=f"No {what}, whatever the preset says."),
    )


def publish_folder(inputs: Inputs, key: str, out: str | None = None) -> Any:
    """``--KEY`` over the preset's ``KEY:``, None with ``--no-KEY`` (refused with ``--KEY``) or YAML ``false``;
    ``--KEY`` alone (``""``, YAML ``true``) is ``--out DIR/report`` (``DIR/plots``)."""
    given, refused = inputs.given[key], inputs.given[f"no_{key}"]
    if refused and given is not None:
        raise BadInput(f"--{key} and --no-{key}: expected one of them, got both")
    value = None if refused else inputs.pick(key)
    if value is None or value is False:
        return None
    if key != "out" and (value is True or value == ""):
        sub = "report" if key == "html" else key
        if not out:
            raise click.UsageError(f"--{key} without a folder writes under --out DIR/{sub}/: expected --out DIR (or --{key} DIR)")
        return os.path.join(out, sub)
    return str(value)


def kendall_only(inputs: Inputs) -> None:
    """BadInput for an option of Kendall tau-b (a flag or a preset's key) next to ``--relevance``."""
    preset = "'{}:' in the --config file".format
    flags, cfg = inputs.given, inputs.cfg
    if flags["ground_truth"] or cfg.get("ground_truth"):
        given = "--ground-truth" if flags["ground_truth"] else preset("ground_truth")
        raise BadInput(f"{given}: expected either --ground-truth (Kendall tau-b) or --relevance (relevance measures), got both")
    runs_order = "; with --relevance the order of a run is fixed: a matrix's smaller = more similar, a list's file order (docs/inputs.md)"
    orientations = {
        "ground_truth_higher_is_better": ("--ground-truth-higher-is-better", "--ground-truth-lower-is-better", ""),
        "lower_is_better": ("--lower-is-better", "--higher-is-better", runs_order),
    }
    for key, (yes, no, why) in orientations.items():
        value = inputs.pick(key)
        if value is not None:
            given = (yes if value else no) if flags[key] is not None else preset(key)
            raise BadInput(f"{given}: applies only to Kendall tau-b (--ground-truth without --relevance)" + why)


#: Options of relevance scoring (a flag or a preset's key) that Kendall tau-b would ignore.
RELEVANCE_ONLY = (*(k for k in SHARED if k not in ("config", "relevance", "run_format")), "rank_by", "ties", "significance", "plots", "check")


def relevance_only(inputs: Inputs) -> None:
    """BadInput for an option of relevance scoring next to ``--ground-truth`` (Kendall tau-b); a flag that
    says no (``--no-significance``, ``plots: false``) is no option given."""
    for key in RELEVANCE_ONLY:
        flag = inputs.given.get(key) not in (None, False, ())
        if flag or inputs.cfg.get(key) not in (None, False):
            given = "--" + key.replace("_", "-") if flag else f"'{key}:' in the --config file"
            raise BadInput(f"{given}: applies only to relevance measures (--relevance), not to Kendall tau-b (--ground-truth)")


@cli.command("score")
@INPUTS
@click.option("--ground-truth", type=click.Path(), help="query,item,score CSV/TSV of human scores: Kendall tau-b per query instead of relevance measures (refused with --relevance).")
@click.option("--ground-truth-higher-is-better/--ground-truth-lower-is-better", default=None,
              help="[default: higher] Orientation of the --ground-truth scores (Kendall only: refused with --relevance).")
@click.option("--lower-is-better/--higher-is-better", default=None,
              help="[default: lower] Kendall tau-b only: orientation of the runs' distances (refused with --relevance, where a run's order is fixed).")
@MEASURES
@click.option("--rank-by", help="Measure that ranks the runs per query (per_query_ranking.csv; default CG@100 when graded).")
@click.option("--ties", type=click.Choice(TIES),
              help="[default: rule] Tied items (equal distances or scores): the documented rule; expected = exact mean over every "
              "order; optimistic / pessimistic = relevant first / last.")
@click.option("--significance/--no-significance", default=None,
              help="Paired randomization tests between runs on the sort measure (Holm-corrected) and bootstrap 95% CIs; "
              "--no-significance overrides a preset's.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the randomization test and the bootstrap.")
@click.option("--resamples", type=click.IntRange(min=MIN_RESAMPLES), default=10_000, show_default=True, help="Resamples of the randomization test and the bootstrap.")
@folder_option("--plots", what="plots",
               help="Write PR curves, NDCG/CG curves and per-class bars (PNG and SVG) here; --plots alone: under --out DIR/plots/; needs matplotlib.")
@folder_option("-o", "--out", what="--out folder", alone=False,
               help="Write per_query.csv, per_run.csv and pr_curve.csv here.")
@folder_option("--html", what="results page",
               help="Write the results page (a self-contained index.html) here; --html alone (or --html=): under --out DIR/report/.")
@click.option("--title", help="The results page's heading (default: Retrieval results).")
@click.option("--description", help="The results page's text under the heading (plain text; a blank line starts a paragraph).")
@click.option("--per-query", is_flag=True, help="Also print per-query values: the sort measure after the leaderboard (table, markdown, latex); every measure "
              "instead of it (csv), beside it (json), as trec_eval -q lines (trec).")
@REPORT_FORMAT
@click.option("--quiet", is_flag=True, help="No warnings on stderr.")
@click.option("--check", is_flag=True, help="Only check the runs (as 'shrec-score check'), with the same options.")
@click.option("--dask", metavar="ADDRESS",
              help="Score on a Dask cluster: a scheduler (tcp://HOST:8786) or local:N (N worker processes here); needs shrec-score[dask].")
def score_command(runs: Sequence[str], **given: Any) -> None:
    """Score every run in RUNS and print the leaderboard.

    RUNS is a folder holding one sub-folder per run, or a single run folder (one ranked-list file per query,
    named after the query id).  The E column is the value SHREC and the PSB publish as "E-measure": F1 of
    precision and recall over the first 32 results (higher is better).
    """
    from ..api import score_kendall
    from ..distributed import cluster_target, score
    from ..plots import figure_class

    inputs = Inputs(given)
    pick = inputs.pick
    runs = inputs.runs(runs)
    out = publish_folder(inputs, "out")
    html, plots = (publish_folder(inputs, key, out) for key in ("html", "plots"))
    page = {"title": pick("title"), "description": pick("description")}
    relevance, ground_truth, dask_address = pick("relevance"), pick("ground_truth"), pick("dask")
    if relevance:  # every option checked before any input is read
        kendall_only(inputs)
    if not runs:
        raise click.UsageError("expected RUNS (or 'runs:' in the --config file)")
    kendall = bool(ground_truth) and not relevance
    if dask_address and kendall:
        raise BadInput("--dask scores relevance measures; Kendall tau-b against --ground-truth runs on this machine")
    if kendall:
        relevance_only(inputs)  # --check and --plots among them
    elif not relevance:
        raise click.UsageError("expected --relevance (or 'relevance:' in the --config file)")
    if given["check"]:
        check(runs, inputs)
        return
    with user_errors():  # every option checked before any input is read
        if plots:
            figure_class()  # matplotlib is there
        if not kendall:
            significance = bool(pick("significance", default=False))
            options = inputs.options(significance=significance, seed=given["seed"], n_resamples=given["resamples"])
        if dask_address:
            cluster_target(dask_address)
    stops = click.get_current_context().find_object(Interrupts) or Interrupts()  # main()'s (under CliRunner: one never entered)
    bar = ProgressBar(enabled=not given["quiet"] and sys.stderr.isatty(), check=stops.check)
    with user_errors(), outputs(runs, out, plots, html, page) as commit:  # locked before any input is read
        with closing(bar):  # gone before the outputs are written, or on an error
            if kendall:
                orientations = {k: pick(k, default=True) for k in ("ground_truth_higher_is_better", "lower_is_better")}
                report = score_kendall(runs, ground_truth, run_format=pick("run_format", default="auto"), **orientations)
            else:  # one discovery of RUNS: row blocks are scored by the cluster's tasks (here without --dask), the rest by api.score
                with quiet_dask_logs() if dask_address else nullcontext():  # one line says what failed
                    report = score(runs, relevance, dask=dask_address or None, options=options, progress=bar)
        stops.check()  # never publish the outputs of an interrupted scoring
        commit(report)
    render(report, given["fmt"], given["per_query"], given["quiet"])


def score_as_given(args: list[str]) -> None:
    """``shrec-score score ARGS``, with this call's signals."""
    stops = click.get_current_context().find_object(Interrupts)
    score_command.main(args=args, prog_name="shrec-score score", standalone_mode=False, obj=stops)


@cli.command("check")
@INPUTS
@MEASURES
def check_command(runs: Sequence[str], **shared: Any) -> None:
    """Check runs before submitting them: every problem, one line each, nothing scored.

    With the options a scoring takes (a preset, --missing-queries, --lenient ...): what they pass over is a
    warning.  Exit status 0 when the runs would score, 2 when any line is an error.
    """
    inputs = Inputs(shared)
    check(inputs.runs(runs, relevance=True), inputs)


def check(runs: list[str], inputs: Inputs) -> None:
    """Print every problem of the runs, the ties that move a mean, and the verdict (exit 2 on an error)."""
    from ..api import relevance_for
    from ..check import check_runs, passed_over
    from ..tiereport import tie_report, tie_warnings

    o = inputs.options()
    with user_errors():
        rel = relevance_for(inputs.pick("relevance"), o)
    problems, loaded = passed_over(check_runs(runs, rel, o), runs, rel, o, ties=True)  # what the options pass over: warnings
    errors = sum(p.level == "error" for p in problems)
    lines: list[str] = []
    if not errors:  # the runs score: does the tie rule move a mean (the sort measure)?
        with suppress(InputError, OptionError):  # what check_runs does not see, scoring reports
            lines = tie_warnings(tie_report(loaded or runs, rel, options=o))  # (runs loaded once)
    for line in [*map(str, problems), *(f"warning: {w}" for w in lines)]:
        click.echo(line)
    warnings = sum(p.level == "warning" for p in problems) + len(lines)
    click.echo(f"{errors} error(s), {warnings} warning(s): " + ("the runs would not score" if errors else "the runs would score"), err=True)
    if errors:
        sys.exit(2)


@cli.command("ties")
@INPUTS
@MEASURES
@format_option("table", "csv", "json", "markdown")
def ties_command(runs: Sequence[str], fmt: str, **shared: Any) -> None:
    """How much of each run's value the tie rule decides: per run, the pessimistic, rule, optimistic (and
    expected) means, the share of queries whose value depends on the order of tied items, and the
    leaderboard places the ties allow (of the sort measure, or of each -m)."""
    from ..render import frame_text
    from ..tiereport import tie_report

    inputs = Inputs(shared)
    runs = inputs.runs(runs, relevance=True)
    options = inputs.options()
    with user_errors():
        frame = tie_report(runs, inputs.pick("relevance"), measures=options.measures if any(inputs.given["measures"]) else None, options=options)
    click.echo(frame_text(frame, fmt), nl=False)


@cli.command("convert")
@click.argument("matrix", type=click.Path())
@click.argument("out", type=click.Path())
@click.option("--to", "layout", type=click.Choice(["zarr", "npy-shards"]), required=True,
              help="zarr: a Zarr array folder; npy-shards: .npy row shards with a manifest.json.")
@click.option("--chunk-rows", type=click.IntRange(min=1), help="Rows per block (default: about 64 MiB per block).")
@click.option("--shape", help="ROWSxCOLS of a PSB binary matrix that is not square (it has no header).")
@click.option("--dtype", type=click.Choice(["float32", "float64"]), help="[default: the matrix's own] Cell type of the blocks.")
def convert_command(matrix: str, out: str, layout: str, chunk_rows: int | None, shape: str | None, dtype: str | None) -> None:
    """Convert MATRIX (ASCII, .npy or PSB binary) into a matrix stored by blocks of rows at OUT.

    Streamed a block at a time (memory near one block); OUT appears only when complete.  Score it with
    --dask (or shrec_score.distributed.score)."""
    import numpy as np

    from ..io.chunked import write_row_blocks
    from ..io.matrix import read_matrix
    from ..io.text import regular_file

    dims = None
    if shape is not None:
        parts = shape.lower().split("x")
        if len(parts) != 2 or not all(p.strip().isdigit() and int(p) > 0 for p in parts):
            raise BadInput(f"--shape: expected ROWSxCOLS (two whole numbers), got {shape!r}")
        dims = (int(parts[0]), int(parts[1]))
    with user_errors():
        m = read_matrix(regular_file(matrix), dims, why="--shape", stream=True)  # not held in memory
        kind = np.dtype(dtype or m.dtype)
        n_rows, n_cols = int(m.shape[0]), int(m.shape[1])
        step = write_row_blocks(out, layout, m, kind, chunk_rows)
    click.echo(f"{out}: {n_rows} x {n_cols} {kind}, blocks of {step} rows ({layout})", err=True)


def write_contest(folder: str) -> None:
    """Write the packaged sample contest (demo/psb-like.tar.xz) into ``folder``; a folder holding any other
    file is refused, the contest's own are written again (a second demo, or one cut short, completes it)."""
    import tarfile
    from importlib.resources import files

    with files("shrec_score").joinpath("demo/psb-like.tar.xz").open("rb") as packed, tarfile.open(fileobj=packed, mode="r:xz") as tar:
        members = {m.name.split("/", 1)[1]: m for m in tar.getmembers() if m.isfile()}
        for parent, _, names in os.walk(folder):
            for name in names:
                if os.path.relpath(os.path.join(parent, name), folder).replace(os.sep, "/") not in members:
                    raise BadInput(f"{os.path.join(parent, name)}: expected only the sample contest's files in {folder}, got a file of another (give another OUT)")
        for rel, member in sorted(members.items()):
            path = os.path.join(folder, *rel.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as out:
                out.write(tar.extractfile(member).read())  # type: ignore[union-attr]  # members are regular files


@cli.command("demo")
@click.argument("out", type=click.Path(file_okay=False))
@REPORT_FORMAT
def demo_command(out: str, fmt: str) -> None:
    """Write the psb-like sample contest (4 runs, 152 models in 20 classes) to OUT/psb-like and score it
    into OUT/results: what a user with only the package installed can try.  The same as

    \b
    shrec-score OUT/psb-like/runs --relevance OUT/psb-like/classes.cla --out OUT/results
    """
    contest, results = os.path.join(out, "psb-like"), os.path.join(out, "results")
    runs, classes = os.path.join(contest, "runs"), os.path.join(contest, "classes.cla")
    write_contest(contest)
    score_as_given(["--relevance", classes, "--out", results, "--format", fmt, "--", runs])
    click.echo(f"wrote {contest} (the contest) and {results} (per_run.csv, per_query.csv...); the same scoring:\n"
               f"  shrec-score {runs} --relevance {classes} --out {results}", err=True)


@cli.command("measures")
def measures_command() -> None:
    """List the measures with a one-line definition each."""
    from ..measures import measure_listing

    click.echo(measure_listing(), nl=False)


CONTEST_FILE = click.argument("contest_file", metavar="CONTEST.yaml", type=click.Path())


def _contest(path: str) -> Any:
    """The contest of CONTEST.yaml (the server's modules imported only here)."""
    from ..server.contest import load_contest

    try:
        with user_errors():
            return load_contest(path)
    except OSError as exc:
        raise BadInput(f"{path}: could not read or write the contest's files: {exc.strerror or exc}") from None


@cli.command("serve")
@CONTEST_FILE
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (put a TLS reverse proxy in front for the internet).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="Port to listen on (0: a free one, named on stderr).")
def serve_command(contest_file: str, host: str, port: int) -> None:
    """Run the contest's submission server: uploads checked at once, scored in the background, the
    leaderboard at /.  Needs shrec-score[server]."""
    try:
        import uvicorn

        from ..server.app import create_app
    except ImportError as exc:
        raise BadInput(f"serve needs the server extra ({exc.name} is missing): pip install 'shrec-score[server]'") from None
    import socket

    with user_errors():
        app = create_app(_contest(contest_file))  # the ground truth read and the store recovered before the port opens
    try:  # bound here, not by uvicorn: --port 0 takes a free port, and the line below names it
        sock = socket.create_server((host, port))
    except OSError as exc:
        why = os.strerror(exc.errno) if exc.errno and exc.errno > 0 else exc.strerror or str(exc)  # (an unknown host: getaddrinfo's own)
        raise BadInput(f"{host}:{port}: could not listen there ({why})") from None
    click.echo(f"shrec-score: serving {contest_file} on http://{host}:{sock.getsockname()[1]}/ (Ctrl-C stops)", err=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, server_header=False)).run(sockets=[sock])


@cli.group("contest")
def contest_group() -> None:
    """A contest's organiser commands (teams, the final results)."""


@contest_group.command("add-team")
@CONTEST_FILE
@click.argument("team")
def add_team_command(contest_file: str, team: str) -> None:
    """Create TEAM and print its token, once, on one line (only its hash is kept)."""
    from ..server.contest import stamp
    from ..server.store import NAME, Store

    if not NAME.fullmatch(team):
        raise BadInput(f"TEAM: expected 1 to 40 letters, digits, '_', '.' or '-' (starting with a letter or digit), got {team!r}")
    contest = _contest(contest_file)
    try:
        token = Store(contest.data).add_team(team, stamp())
    except ValueError as exc:
        raise BadInput(f"{contest_file}: {exc}") from None
    click.echo(token)


@contest_group.command("export")
@CONTEST_FILE
@click.argument("out", type=click.Path(file_okay=False))
@click.option("--html", is_flag=True, help="Also write the results page under OUT/report/.")
@click.option("--phase", help="Only the runs of this phase (default: every phase).")
def export_command(contest_file: str, out: str, html: bool, phase: str | None) -> None:
    """Write the final results of every scored run into OUT: exactly what ``shrec-score --config PRESET RUNS
    --out OUT`` writes on the stored runs."""
    from ..server.store import Store

    contest = _contest(contest_file)
    if phase is not None and contest.phase(phase) is None:
        raise BadInput(f"--phase: expected one of {', '.join(p.name for p in contest.phases)}, got {phase!r}")
    store = Store(contest.data)
    runs = [store.run_path(r) for r in store.runs(status="scored") if phase is None or r["phase"] == phase]
    if not runs:
        raise BadInput(f"{contest_file}: no scored run to export")
    score_as_given(["--config", contest.preset, "--out", out, *(["--html"] if html else []), "--", *runs])
