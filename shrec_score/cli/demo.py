"""``shrec-score demo OUT``: the psb-like sample contest shipped inside the package
(shrec_score/demo/psb-like.tar.xz, a copy of sample_runs/psb-like), written to ``OUT/psb-like`` and
scored into ``OUT/results`` by the same :func:`shrec_score.api.score` as ``shrec-score RUNS``."""

from __future__ import annotations

import os

import click

from .inputs import BadInput, user_errors
from .outputs import REPORT_FORMAT, outputs, render


def write_contest(folder: str) -> None:
    """Write the sample contest's files into ``folder`` (made if missing); a folder holding any other file
    is refused, the contest's own are written again (a second demo, or one cut short, completes it)."""
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


@click.command("demo")
@click.argument("out", type=click.Path(file_okay=False))
@REPORT_FORMAT
def demo_command(out: str, fmt: str) -> None:
    """Write the psb-like sample contest (4 runs, 152 models in 20 classes) to OUT/psb-like and score it
    into OUT/results: what a user with only the package installed can try.  The same as

    \b
    shrec-score OUT/psb-like/runs --relevance OUT/psb-like/classes.cla --out OUT/results
    """
    from ..api import score

    contest, results = os.path.join(out, "psb-like"), os.path.join(out, "results")
    runs, classes = os.path.join(contest, "runs"), os.path.join(contest, "classes.cla")
    with user_errors():
        write_contest(contest)
        with outputs([runs], results, None) as commit:
            report = score([runs], classes)
            commit(report)
    render(report, fmt, False, False)
    click.echo(f"wrote {contest} (the contest) and {results} (per_run.csv, per_query.csv...); the same scoring:\n"
               f"  shrec-score {runs} --relevance {classes} --out {results}", err=True)
