"""The Starlette application of ``shrec-score serve``: the routes of the JSON API and the pages (Jinja2, autoescape),
the security headers of every answer (docs/server.md#security); its state lives on a :class:`~.service.Server`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
from collections.abc import AsyncIterator, Awaitable, Callable
from importlib import resources
from typing import Any

from jinja2 import Environment, PackageLoader
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from .archive import RunChecker
from .contest import Contest
from .jobs import score_forever
from .service import COOKIE, Server
from .store import Failed, Store


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

    async def post_run(request: Request) -> Response:
        team = await server.team(request)
        phase = server.admit(team)
        async with server.form(request) as form:
            body = await server.upload(team, phase, form)
        return JSONResponse(body, 201)

    async def list_runs(request: Request) -> Response:
        team = await server.team(request)
        return JSONResponse({"team": team.name, "runs": await server.runs_of(team)})

    async def get_run(request: Request) -> Response:
        team = await server.team(request)
        run = next((r for r in await server.runs_of(team) if r["id"] == request.path_params["run_id"]), None)
        if run is None:  # another team's run is as absent as no run
            return JSONResponse({"error": "no such run of your team"}, 404)
        return JSONResponse(run)

    async def get_leaderboard(request: Request) -> Response:
        return JSONResponse({"title": contest.title, "phases": await server.leaderboard()})

    async def index(request: Request) -> Response:
        return page("index.html", phases=await server.leaderboard())

    async def submit(request: Request) -> Response:
        sid, session = server.session(request.cookies.get(COOKIE, ""))
        status, receipt = 200, None
        errors: list[dict[str, Any]] = []
        if request.method == "POST":
            try:
                status, receipt = 201, await server.form_upload(request, session)
            except Failed as exc:
                status, errors = exc.status, exc.errors
        runs = [] if session.team is None else await server.runs_of(session.team)
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
