"""``shrec-score serve`` and ``shrec-score contest``: a contest's submission server and the organiser's
commands (issue 32).  The server's modules are imported only when one of these runs (``--help`` stays fast).
"""

from __future__ import annotations

from typing import Any

import click

from .inputs import BadInput, user_errors

CONTEST_FILE = click.argument("contest_file", metavar="CONTEST.yaml", type=click.Path())


def _contest(path: str) -> Any:
    from ..server.contest import load_contest

    try:
        with user_errors():
            return load_contest(path)
    except OSError as exc:
        raise BadInput(f"{path}: could not read or write the contest's files: {exc.strerror or exc}") from None


@click.command("serve")
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
    import os
    import socket

    contest = _contest(contest_file)
    with user_errors():
        app = create_app(contest)  # the ground truth read and the store recovered before the port opens
    try:  # bound here, not by uvicorn: --port 0 takes a free port, and the line below names it
        sock = socket.create_server((host, port))
    except OSError as exc:
        why = os.strerror(exc.errno) if exc.errno and exc.errno > 0 else exc.strerror or str(exc)  # (an unknown host: getaddrinfo's own)
        raise BadInput(f"{host}:{port}: could not listen there ({why})") from None
    bound = sock.getsockname()[1]
    click.echo(f"shrec-score: serving {contest_file} on http://{host}:{bound}/ (Ctrl-C stops)", err=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, server_header=False)
    uvicorn.Server(config).run(sockets=[sock])


@click.group("contest")
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
    args = ["score", "--config", contest.preset, *runs, "--out", out, *(["--html"] if html else [])]
    root = click.get_current_context().find_root().command  # the score command's own parsing and writing
    root.main(args=args, prog_name="shrec-score", standalone_mode=False)
