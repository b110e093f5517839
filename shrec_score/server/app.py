"""The Starlette application of ``shrec-score serve``: its state (:class:`Server`; a refusal: :class:`~.store.Failed`),
the JSON API and the pages (Jinja2), what they show (a team's runs, the leaderboard), the security headers."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import csv
import hashlib
import hmac
import io
import math
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from jinja2 import Environment, PackageLoader
from starlette.applications import Starlette
from starlette.datastructures import FormData, UploadFile
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from ..outdir import fsync_tree
from .archive import PIECE, RunChecker, unpack
from .contest import Contest, Phase, now, stamp
from .jobs import score_forever
from .store import NAME, Failed, Store, Team

#: per_run.csv's columns before the measures, with their types.
FIXED = {"run": str, "queries": int}
#: A run's fields as the API shows them (``run`` is the stored ``label``).
SHOWN = ("id", "name", "run", "phase", "status", "sha256", "submitted", "finished")
#: The form's session cookie (its value: a random id of a :class:`Session` kept by the server).
COOKIE = "shrec_session"


@dataclass
class Session:
    csrf: str
    team: Team | None = None


@dataclass
class Server:
    contest: Contest
    store: Store
    checker: RunChecker
    wake: asyncio.Event = field(default_factory=asyncio.Event)  # set: a run was queued (jobs.score_forever)
    sessions: dict[str, Session] = field(default_factory=dict)  # the oldest first
    uploads: dict[str, list[float]] = field(default_factory=dict)  # a team's uploads of the last 60 s

    def bound(self, size: int, got: str = "more", framing: int = 64 << 10) -> None:
        """:class:`Failed` 413 past the upload limit (``framing``: room for the multipart framing, small fields)."""
        limit = self.contest.limits["max_upload_mb"]
        if size > int(limit * (1 << 20)) + framing:
            raise Failed(413, f"expected an upload of at most {limit:g} MB, got {got}")

    async def team(self, request: Request) -> Team:
        """The team of the request's bearer token (the API; a session cookie is never one), else :class:`Failed` 401."""
        auth = request.headers.get("authorization", "")
        team = await asyncio.to_thread(self.store.team_of, auth[7:].strip()) if auth[:7].lower() == "bearer " else None
        if team is None:
            raise Failed(401, "expected a team's token in 'Authorization: Bearer TOKEN'")
        return team

    def session(self, sid: str) -> tuple[str, Session]:
        """The form's session ``sid``, else a new one (its CSRF token fresh; the oldest dropped past 10,000)."""
        if sid in self.sessions:
            return sid, self.sessions[sid]
        sid = secrets.token_urlsafe(32)
        self.sessions[sid] = session = Session(secrets.token_urlsafe(32))
        while len(self.sessions) > 10_000:
            del self.sessions[next(iter(self.sessions))]
        return sid, session

    def admit(self, team: Team) -> Phase:
        """The open phase a team may upload to now; :class:`Failed` 429 past ``rate_limit`` uploads in 60 s, 403."""
        at, per_minute = time.monotonic(), self.contest.limits["rate_limit"]
        times = self.uploads[team.name] = [t for t in self.uploads.get(team.name, []) if t > at - 60]
        if len(times) >= per_minute:
            raise Failed(429, f"at most {per_minute:g} uploads a minute per team: try again in a minute")
        times.append(at)
        phase = self.contest.open_phase(now())
        if phase is None:
            raise Failed(403, "no phase of the contest is open for submissions")
        return phase

    @contextlib.asynccontextmanager
    async def form(self, request: Request) -> AsyncIterator[FormData]:
        """The multipart body, its size bounded while it streams in (raises :class:`Failed`: 413, 422)."""
        declared = request.headers.get("content-length", "")
        if declared.isdigit():  # first: 413 whatever the body's type
            self.bound(int(declared), f"{int(declared) >> 20} MB")
        if request.headers.get("content-type", "").split(";")[0].strip() != "multipart/form-data":
            raise Failed(422, "expected a multipart/form-data body with the run in the field 'file'")
        seen = 0

        async def receive() -> Any:  # refuses the body (413) once it passes the limit, as it streams in
            nonlocal seen
            message = await request.receive()
            seen += len(message.get("body", b""))  # (a disconnect has none)
            self.bound(seen)
            return message

        try:
            form = await Request(request.scope, receive).form(max_files=1, max_fields=8)
        except Failed:  # past the limit as it streamed in
            raise
        except Exception as exc:  # starlette's MultiPartException, a broken body
            raise Failed(422, f"expected a multipart/form-data body with the run in the field 'file' ({exc})") from None
        try:
            yield form
        finally:
            await form.close()

    async def form_upload(self, request: Request, session: Session) -> dict[str, Any]:
        """The form's upload: its CSRF token, the team's token once (kept in the session), then as the API."""
        async with self.form(request) as form:
            csrf, token = form.get("csrf"), form.get("token")
            if not isinstance(csrf, str) or not hmac.compare_digest(csrf.encode(), session.csrf.encode()):
                raise Failed(403, "the form expired: reload the page and submit again")
            if isinstance(token, str) and token.strip():
                session.team = await asyncio.to_thread(self.store.team_of, token.strip())
                if session.team is None:
                    raise Failed(401, "this is not a team's token")
            if session.team is None:
                raise Failed(401, "expected your team's token")
            return await self.upload(session.team, self.admit(session.team), form)

    async def upload(self, team: Team, phase: Phase, form: FormData) -> dict[str, Any]:
        """Unpack, check and store the run of ``form`` (raises :class:`Failed`: 403, 413, 422)."""
        upload, name = form.get("file"), form.get("name") or None
        if not isinstance(upload, UploadFile) or not upload.filename:
            raise Failed(422, "expected the run in the multipart field 'file' (a .zip, .tar.gz or .tgz of one run folder, or one run file)")
        if name is not None and (not isinstance(name, str) or not NAME.fullmatch(name)):
            raise Failed(422, f"expected 'name' to be 1 to 40 letters, digits, '_', '.' or '-', got {str(name)[:60]!r}")
        body = await asyncio.to_thread(self._store, team, name, upload, phase)
        self.wake.set()
        return body

    def _store(self, team: Team, name: str | None, upload: UploadFile, phase: Phase) -> dict[str, Any]:
        with self.store.connect() as db:  # refused before the work of unpacking (and again under the write lock)
            self.store.count_runs(db, team, phase.name, phase.max_runs)
        work = tempfile.mkdtemp(dir=self.store.incoming)
        try:
            received = os.path.join(work, "upload")
            digest = hashlib.sha256()
            with open(received, "wb") as out:
                while piece := upload.file.read(PIECE):
                    digest.update(piece)
                    out.write(piece)
                    self.bound(out.tell(), framing=0)
            staged = os.path.join(work, "run")
            unpacked = unpack(received, os.path.basename(upload.filename or "upload"), staged, self.contest.limits)
            if errors := self.checker.errors(staged, unpacked):
                raise Failed(422, errors=errors)
            fsync_tree(staged, files=True)
            return self.store.accept(team, name, staged, unpacked.name, unpacked.suffix, phase.name, phase.max_runs, digest.hexdigest(), stamp())
        finally:
            shutil.rmtree(work, ignore_errors=True)


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
        return run_views(contest, await asyncio.to_thread(store.runs, team_id=team.id))

    async def phases() -> list[dict[str, Any]]:
        return leaderboard(contest, await asyncio.to_thread(store.runs), server.checker.sort)

    async def post_run(request: Request) -> Response:
        team = await server.team(request)
        phase = server.admit(team)
        async with server.form(request) as form:
            body = await server.upload(team, phase, form)
        return JSONResponse(body, 201)

    async def get_runs(request: Request) -> Response:  # /api/runs: the team's runs; /api/runs/ID: one of them
        team = await server.team(request)
        runs, wanted = await runs_of(team), request.path_params.get("run_id")
        if wanted is None:
            return JSONResponse({"team": team.name, "runs": runs})
        run = next((r for r in runs if r["id"] == wanted), None)  # another team's run is as absent as no run
        return JSONResponse({"error": "no such run of your team"}, 404) if run is None else JSONResponse(run)

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
        response.set_cookie(COOKIE, sid, httponly=True, samesite="strict", secure=request.url.is_secure, path="/")
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
        Route("/api/runs", get_runs, methods=["GET"]),
        Route("/api/runs/{run_id:int}", get_runs),
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
    """A scoring child's ``per_run.csv`` (a header and one row) as {column: value}, numbers as numbers (NaN if blank)."""
    header, row = list(csv.reader(io.StringIO(text)))[:2]
    return {k: FIXED[k](v) if k in FIXED else float(v) if v else math.nan for k, v in zip(header, row)}


def _nan_as_none(value: Any) -> Any:
    return None if isinstance(value, float) and math.isnan(value) else value


def run_views(contest: Contest, runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Runs as their team sees them: scores only when their phase shows them."""
    out = []
    for run in runs:
        phase = contest.phase(run["phase"])
        view = {k: run["label" if k == "run" else k] for k in SHOWN}
        if run["status"] == "failed":
            view["reason"] = run["reason"]
        if run["status"] == "scored" and phase is not None and phase.shows_scores(now()):
            view["scores"] = {k: _nan_as_none(v) for k, v in per_run_row(run["per_run"]).items() if k != "run"}
        out.append(view)
    return out


def leaderboard(contest: Contest, runs: list[dict[str, Any]], sort: str) -> list[dict[str, Any]]:
    """Per phase not hidden: its runs best first by the CLI's column ``sort``, or by name while scores are hidden."""
    from ..aggregate import leaderboard_table
    from ..table import Table

    out = []
    for phase in (p for p in contest.phases if p.leaderboard != "hidden"):
        mine = [r for r in runs if r["phase"] == phase.name and r["status"] != "failed"]
        entry: dict[str, Any] = {"name": phase.name, "leaderboard": phase.leaderboard, "opens": phase.opens.isoformat(),
                                 "closes": phase.closes.isoformat(), "columns": ["rank", *FIXED], "rows": []}
        if not phase.shows_scores(now()):
            accepted = [{"run": r["label"], "status": "accepted"} for r in sorted(mine, key=lambda r: r["label"])]
            entry.update(columns=["run", "status"], rows=accepted)
        elif rows := [per_run_row(r["per_run"]) for r in mine if r["status"] == "scored"]:  # parsed only when shown
            measures = list(rows[0])[len(FIXED) :]
            measure = sort if sort in measures else measures[0]  # (a row scored before a preset changed)
            columns = {k: [r.get(k, math.nan) for r in rows] for k in rows[0]}  # a measure a row lacks: NaN
            board = leaderboard_table(Table(columns, len(rows)), measure)
            records = [dict(zip(board.columns, map(_nan_as_none, r))) for r in board.records()]
            entry.update(columns=board.columns, rows=records)
        out.append(entry)
    return out
