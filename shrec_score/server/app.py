"""The Starlette application of ``shrec-score serve``: its routes and nothing else (docs/server.md).

Who may do what is decided in one place, :meth:`Server.team`; what the server keeps between
requests lives on one :class:`Server` per application, none in a module global.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from . import views
from .archive import RunChecker
from .contest import Contest, now
from .jobs import Scorer
from .pages import Pages
from .service import Failed, RateLimiter, Server
from .store import Store, Team


def create_app(contest: Contest) -> Starlette:
    """The application of ``contest``: its store recovered (see :meth:`Store.recover`), its scorer started with it."""
    store = Store(contest.data)
    store.recover()
    server = Server(contest, store, RunChecker(contest.preset), RateLimiter(contest.limits["rate_limit"]))
    pages = Pages(server)

    def with_team(handler: Callable[[Request, Team], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
        """``handler`` for the team of the request's bearer token; 401 without one."""

        async def endpoint(request: Request) -> Response:
            team = await server.team(request)
            if team is None:
                return JSONResponse({"error": "expected a team's token in 'Authorization: Bearer TOKEN'"}, 401, headers={"WWW-Authenticate": "Bearer"})
            return await handler(request, team)

        return endpoint

    @with_team
    async def post_run(request: Request, team: Team) -> Response:
        try:
            phase = server.admit(team)
            form = await server.read_form(request)
            try:
                body = await server.upload(team, phase, form)
            finally:
                await form.close()
        except Failed as exc:
            return JSONResponse(exc.body, exc.status)
        return JSONResponse({k: body[k] for k in ("id", "name", "status", "phase", "sha256")} | {"run": body["label"]}, 201)

    @with_team
    async def list_runs(request: Request, team: Team) -> Response:
        runs = await asyncio.to_thread(store.runs, team.id)
        return JSONResponse({"team": team.name, "runs": views.run_views(contest, runs, now())})

    @with_team
    async def get_run(request: Request, team: Team) -> Response:
        run = await asyncio.to_thread(store.run, request.path_params["run_id"])
        if run is None or run["team_id"] != team.id:  # another team's run is as absent as no run
            return JSONResponse({"error": "no such run of your team"}, 404)
        return JSONResponse(views.run_views(contest, [run], now())[0])

    async def get_leaderboard(request: Request) -> Response:
        runs = await asyncio.to_thread(store.runs)
        return JSONResponse({"title": contest.title, "phases": views.leaderboard(contest, runs, now(), server.checker.sort)})

    async def healthz(request: Request) -> Response:  # async: a sync endpoint would run on Starlette's thread pool
        return JSONResponse({"status": "ok"})

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        server.scorer = Scorer(contest, store)
        task = asyncio.create_task(server.scorer.run_forever())
        try:
            yield
        finally:
            task.cancel()  # the job under way is killed and stays queued
            with contextlib.suppress(asyncio.CancelledError):
                await task

    routes = [
        Route("/", pages.index),
        Route("/submit", pages.submit, methods=["GET", "POST"]),
        Route("/api/runs", post_run, methods=["POST"]),
        Route("/api/runs", list_runs, methods=["GET"]),
        Route("/api/runs/{run_id:int}", get_run),
        Route("/api/leaderboard", get_leaderboard),
        Route("/healthz", healthz),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.server = server
    app.add_middleware(SecurityHeaders, csp=pages.csp)
    return app


class SecurityHeaders:
    """Every response: a Content-Security-Policy, nosniff, no framing, no referrer."""

    def __init__(self, app: Any, csp: str) -> None:
        self.app = app
        self.headers = [
            (b"content-security-policy", csp.encode()), (b"x-content-type-options", b"nosniff"),
            (b"x-frame-options", b"DENY"), (b"referrer-policy", b"no-referrer"), (b"cache-control", b"no-store"),
        ]  # fmt: skip

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *self.headers]
            await send(message)

        await self.app(scope, receive, sending if scope["type"] == "http" else send)
