"""The Starlette application of ``shrec-score serve``: the routes of the JSON API and the pages (Jinja2, autoescape),
what they show (a team's runs, the leaderboard: the CLI's ``per_run.csv`` rows, each limited to what its phase
allows; docs/server.md) and the security headers of every answer; its state lives on a :class:`~.service.Server`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import csv
import datetime as dt
import hashlib
import io
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from importlib import resources
from typing import Any

from jinja2 import Environment, PackageLoader
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from .archive import RunChecker
from .contest import Contest, now
from .jobs import score_forever
from .service import COOKIE, Server
from .store import Failed, Store, Team

#: per_run.csv's columns before the measures, with their types.
FIXED = {"run": str, "queries": int}
#: A run's fields as the API shows them (``run`` is the stored ``label``).
SHOWN = ("id", "name", "run", "phase", "status", "sha256", "submitted", "finished")


def create_app(contest: Contest) -> Callable[[Any, Any, Any], Awaitable[None]]:
    """The application of ``contest``: its store recovered (see :meth:`Store.recover`), its scorer started with it."""
    store = Store(contest.data)
    store.recover()
    server = Server(contest, store, RunChecker(contest.preset))
    templates = Environment(loader=PackageLoader("shrec_score.server"), autoescape=True)
    report_css = resources.files("shrec_score.html").joinpath("report.css").read_text(encoding="utf-8")
    css = templates.get_template("style.html").render(report_css=report_css)

    def page(name: str, status: int = 200, **values: Any) -> HTMLResponse:
        return HTMLResponse(templates.get_template(name).render(css=css, title=contest.title, **values), status)

    async def refused(request: Request, exc: Any) -> Response:  # the API's answer to Failed (the form shows its own)
        return JSONResponse(exc.body, exc.status, headers={"WWW-Authenticate": "Bearer"} if exc.status == 401 else None)

    async def runs_of(team: Team) -> list[dict[str, Any]]:
        return run_views(contest, await asyncio.to_thread(store.runs, team_id=team.id), now())

    async def phases() -> list[dict[str, Any]]:
        return leaderboard(contest, await asyncio.to_thread(store.runs), now(), server.checker.sort)

    async def post_run(request: Request) -> Response:
        team = await server.team(request)
        phase = server.admit(team)
        async with server.form(request) as form:
            body = await server.upload(team, phase, form)
        return JSONResponse(body, 201)

    async def list_runs(request: Request) -> Response:
        team = await server.team(request)
        return JSONResponse({"team": team.name, "runs": await runs_of(team)})

    async def get_run(request: Request) -> Response:
        team = await server.team(request)
        run = next((r for r in await runs_of(team) if r["id"] == request.path_params["run_id"]), None)
        if run is None:  # another team's run is as absent as no run
            return JSONResponse({"error": "no such run of your team"}, 404)
        return JSONResponse(run)

    async def get_leaderboard(request: Request) -> Response:
        return JSONResponse({"title": contest.title, "phases": await phases()})

    async def index(request: Request) -> Response:
        return page("index.html", phases=await phases())

    async def submit(request: Request) -> Response:
        sid, session = server.session(request.cookies.get(COOKIE, ""))
        status, receipt = 200, None
        errors: list[dict[str, Any]] = []
        if request.method == "POST":
            try:
                status, receipt = 201, await server.form_upload(request, session)
            except Failed as exc:
                status, errors = exc.status, exc.errors
        runs = [] if session.team is None else await runs_of(session.team)
        response = page("submit.html", status, csrf=session.csrf, team=session.team, errors=errors, receipt=receipt, runs=runs)
        secure = request.url.scheme == "https"
        response.set_cookie(COOKIE, sid, httponly=True, samesite="strict", secure=secure, path="/")
        return response

    async def healthz(request: Request) -> Response:  # async: a sync endpoint would run on Starlette's thread pool
        return JSONResponse({"status": "ok"})

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        task = asyncio.create_task(score_forever(contest, store, server.wake))
        try:
            yield
        finally:
            task.cancel()  # the job under way is killed and stays queued
            with contextlib.suppress(asyncio.CancelledError):
                await task

    routes = [
        Route("/", index),
        Route("/submit", submit, methods=["GET", "POST"]),
        Route("/api/runs", post_run, methods=["POST"]),
        Route("/api/runs", list_runs, methods=["GET"]),
        Route("/api/runs/{run_id:int}", get_run),
        Route("/api/leaderboard", get_leaderboard),
        Route("/healthz", healthz),
    ]
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={Failed: refused})
    digest = base64.b64encode(hashlib.sha256(css.encode()).digest()).decode()
    csp = f"default-src 'none'; style-src 'sha256-{digest}'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    headers = [
        (b"content-security-policy", csp.encode()), (b"x-content-type-options", b"nosniff"),
        (b"x-frame-options", b"DENY"), (b"referrer-policy", b"no-referrer"), (b"cache-control", b"no-store"),
    ]  # fmt: skip

    async def secured(scope: Any, receive: Any, send: Any) -> None:  # every response with the headers above
        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *headers]
            await send(message)

        await app(scope, receive, sending if scope["type"] == "http" else send)

    return secured


def per_run_row(text: str) -> dict[str, Any]:
    """A scoring child's ``per_run.csv`` (a header and one row) as {column: value}, numbers as numbers."""
    header, row = list(csv.reader(io.StringIO(text)))[:2]
    return {k: FIXED[k](v) if k in FIXED else None if v == "" else _plain(float(v)) for k, v in zip(header, row)}


def _plain(value: Any) -> Any:
    """A JSON value: NaN as None."""
    return None if isinstance(value, float) and math.isnan(value) else value


def run_views(contest: Contest, runs: list[dict[str, Any]], now: dt.datetime) -> list[dict[str, Any]]:
    """Runs as their team sees them: scores only when their phase shows them."""
    out = []
    for run in runs:
        phase = contest.phase(run["phase"])
        view = {k: run["label" if k == "run" else k] for k in SHOWN}
        if run["status"] == "failed":
            view["reason"] = run["reason"]
        if run["status"] == "scored" and phase is not None and phase.shows_scores(now):
            view["scores"] = {k: v for k, v in per_run_row(run["per_run"]).items() if k != "run"}
        out.append(view)
    return out


def leaderboard(contest: Contest, runs: list[dict[str, Any]], now: dt.datetime, sort: str) -> list[dict[str, Any]]:
    """Per phase not hidden: its columns and rows, best first by the CLI's column ``sort`` (:attr:`.RunChecker.sort`);
    a phase whose scores are not shown yet (``after-close`` before it closes) lists its accepted runs by name."""
    out = []
    for phase in contest.phases:
        if phase.leaderboard == "hidden":
            continue
        mine = [r for r in runs if r["phase"] == phase.name and r["status"] != "failed"]
        entry: dict[str, Any] = {"name": phase.name, "leaderboard": phase.leaderboard, "opens": phase.opens.isoformat(),
                                 "closes": phase.closes.isoformat()}
        if not phase.shows_scores(now):
            rows = [{"run": r["label"], "status": "accepted"} for r in sorted(mine, key=lambda r: r["label"])]
            entry.update(columns=["run", "status"], rows=rows)
        else:
            entry.update(_ranked(sort, [per_run_row(r["per_run"]) for r in mine if r["status"] == "scored"]))
        out.append(entry)
    return out


def _ranked(sort: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    if not rows:
        return {"columns": ["rank", *FIXED], "rows": []}
    from ..aggregate import leaderboard_table
    from ..table import Table

    measures = list(rows[0])[len(FIXED) :]
    measure = sort if sort in measures else measures[0]  # (a row scored before a preset changed)
    columns: dict[str, Any] = {k: [r[k] for r in rows] for k in FIXED}
    columns.update({m: [math.nan if r.get(m) is None else r[m] for r in rows] for m in measures})  # floats
    board = leaderboard_table(Table(columns, len(rows)), measure)
    return {"columns": board.columns, "rows": [dict(zip(board.columns, map(_plain, r))) for r in board.records()]}
