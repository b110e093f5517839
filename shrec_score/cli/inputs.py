"""The options every command that reads runs takes (``score``, ``check``, ``ties``), defined once; :class:`Inputs`
reads them (a flag over the preset's key over the default) into the library's :class:`~shrec_score.options.Options`."""

from __future__ import annotations

import functools
import os
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any, TypeVar

import click

from ..choices import AVERAGES, GRADES, MATRIX_ORDERS, MISSING, RUN_FORMATS
from ..errors import InputError, OptionError, shown

F = TypeVar("F", bound=Callable[..., Any])

#: Said when -q or -c is given what trec_eval's -q or -c would be followed by.
TREC_EVAL_FLAGS = "trec_eval's -q is --per-query here; -c is --missing-queries zero"


class BadInput(click.ClickException):
    """Bad input: one line on stderr, exit status 2."""

    exit_code = 2


@contextmanager
def user_errors() -> Iterator[None]:
    """The library's InputError and OptionError as :class:`BadInput`."""
    try:
        yield
    except (InputError, OptionError) as exc:
        raise BadInput(str(exc)) from None


def options(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    """One decorator of several click options, in the order listed: a group of options shared by commands."""
    return lambda f: functools.reduce(lambda g, decorator: decorator(g), reversed(decorators), f)


class OnceCommand(click.Command):
    """A command that refuses an option given twice (click keeps the last; docs/usage.md), except options
    that add up (``multiple=True``) and plain flags (twice is once)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        _, _, order = self.make_parser(ctx).parse_args(args=list(args))  # every option in the order given
        counts = Counter(p for p in order if isinstance(p, click.Option) and not (p.multiple or p.count or p.is_flag and not p.secondary_opts))
        for param, n in counts.items():
            if n > 1:
                flag = "/".join([max(param.opts, key=len), *param.secondary_opts])
                raise BadInput(f"{flag}: expected once, got {n} times (only --measures and --cutoffs add up)")
        return super().parse_args(ctx, args)


#: The inputs of a scoring, RUNS first, as every command takes them.
INPUTS = options(
    click.argument("runs", nargs=-1, type=click.Path()),
    click.option("-c", "--config", type=click.Path(), help="Track preset (YAML, see configs/); command-line options override it."),
    click.option("-r", "--relevance", type=click.Path(), help="Target classification (PSB .cla) or TREC qrels (query 0 target grade)."),
    click.option("-q", "--queries", type=click.Path(), help="Separate query classification (.cla); default: all-against-all."),
    click.option("--grades", type=click.Choice(GRADES),
                 help="[default: binary] sister: SHREC 2006 graded relevance (own class 2, classes with the same parent 1)."),
    click.option("--collection", type=click.Path(), help="Target .cla giving the collection (Ds) with qrels relevance."),
    click.option("--collection-size", type=click.IntRange(min=1), help="Ds, the collection size, with qrels relevance."),
    click.option("--split", help="ShapeNet Core55 ground truth: score the models of this split (test, val, train)."),
    click.option("--run-format", type=click.Choice(RUN_FORMATS),
                 help="[default: auto] How to read RUNS; auto refuses to guess."),
    click.option("--matrix-order", type=click.Choice(MATRIX_ORDERS),
                 help="Matrix row i / column j is the i-th id in .cla listing order (PSB tools) or the i-th smallest integer id (SHREC 2021)."),
    click.option("--missing-queries", type=click.Choice(MISSING),
                 help="[default: error] A query the run ranks nothing for: an error; skip = left out of the run's means "
                 "(trec_eval's default); zero = scored as an empty list (trec_eval -c)."),
    click.option("--lenient", is_flag=True, help="Score broken runs anyway (documented rules) and say what was dropped."),
    click.option("--strip-zeros", is_flag=True, help="Compare a run's query and target ids without leading zeros (0012 is 12; 0 stays 0)."),
    click.option("--id-map", type=click.Path(), help="Two-column file: a run's spelling of an id, the relevance's (model_12 12)."),
)

#: What a scoring computes: the measures and their settings.
MEASURES = options(
    click.option("-m", "--measures", multiple=True,
                 help="Comma-separated measures, each column named as typed; repeated -m add up (default NN,FT,ST,E,DCG,AP; "
                 "--grades sister: every SHREC 2006 measure; qrels: AP,FT,RR,P@k,R@k,NN,DCG; graded qrels: trec_eval's official)."),
    click.option("--sort", help="Leaderboard measure (default: ADR when graded, else the first measure)."),
    click.option("--cutoffs", multiple=True, help="[default: 5,10] k of P@k and R@k in the default measures with qrels; repeated --cutoffs add up."),
    click.option("--rel-level", type=click.IntRange(min=1), help="[default: 1] Binary measures count grade >= N as relevant (trec_eval -l)."),
    click.option("--e-depth", type=click.IntRange(min=1), help="[default: 32] Depth of the E-measure."),
    click.option("--depth", type=click.IntRange(min=1), help="Cut every ranked list to its first N items before scoring (trec_eval -M)."),
    click.option("--judged-only", is_flag=True, help="Leave unjudged items out of the ranked lists before scoring (trec_eval -J)."),
    click.option("--min-class-size", type=click.IntRange(min=1),
                 help="[default: 1] Leave queries of classes with fewer models out of every mean (psbTable: 3)."),
    click.option("--average", type=click.Choice(AVERAGES), help="[default: micro] macro = mean of per-class means (PSB -macro)."),
)

#: Every option of :data:`INPUTS` and :data:`MEASURES` (the keywords :class:`Inputs` takes; RUNS is no option).
SHARED = tuple(str(p.name) for p in click.command()(INPUTS(MEASURES(lambda **_: None))).params if p.name != "runs")


def _not_trec_eval(flag: str, value: str | None) -> None:
    """BadInput when ``-q`` or ``-c`` is given no file: trec_eval's flags of the same letter mean something else."""
    if value is None or os.path.exists(value):
        return
    what = "no such file"
    if not value.startswith("-"):
        from ..measures import get_measure

        with suppress(KeyError):
            get_measure(value)
            what = "a measure name, no file"
    raise BadInput(f"{flag}: expected a file, got {shown(value)} ({what}); {TREC_EVAL_FLAGS}")


class Inputs:
    """The options of one command line (its keywords ``given``) over its ``--config`` preset."""

    def __init__(self, given: dict[str, Any]) -> None:
        self.given = given
        _not_trec_eval("-q/--queries", self.given["queries"])
        _not_trec_eval("-c/--config", self.given["config"])
        from ..config import load_config

        with user_errors():
            self.cfg = load_config(self.given["config"]) if self.given["config"] else {}

    def pick(self, key: str, default: Any = None) -> Any:
        """The option ``key`` from the command line, else the preset's, else ``default``."""
        from ..config import preset_or

        return preset_or(self.cfg, self.given.get(key), key, default)

    def runs(self, runs: Sequence[str], relevance: bool = False) -> list[str]:
        """RUNS, else the preset's; with ``relevance``, both are required."""
        runs = list(runs) or self.cfg.get("runs", [])
        if relevance and (not runs or not self.pick("relevance")):
            raise click.UsageError("expected RUNS and --relevance (or 'runs:' and 'relevance:' in the --config file)")
        return runs

    def options(self, **extra: Any) -> Any:
        """The validated Options (BadInput when one is refused) with ``extra``, the command's own keywords of
        :meth:`Options.build`; every ``-m`` and ``--cutoffs`` add up (commas and repeats), each else the preset's."""
        from ..config import preset_options

        measures, cutoffs = self.given["measures"], self.given["cutoffs"]
        listed = [m.strip() for value in measures for m in value.split(",") if m.strip()]
        flags = {**self.given, "measures": listed if any(measures) else None}
        try:
            flags["cutoffs"] = [int(k) for value in cutoffs for k in value.split(",") if k.strip()] if cutoffs else None
        except ValueError:
            raise BadInput(f"--cutoffs: expected whole numbers separated by commas, got {','.join(cutoffs)!r}") from None
        with user_errors():
            return preset_options(self.cfg, flags, **extra)
