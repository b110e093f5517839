"""The pages ``/`` (the leaderboard) and ``/submit`` (the upload form): Jinja2 templates with
autoescape, the results page's style sheet inlined and allowed by its hash, no script; the form's
token kept in a server-side session, a CSRF token bound to it (docs/server.md#security).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
from importlib import resources
from typing import Any

from jinja2 import Environment, FileSystemLoader
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from . import views
from .contest import now
from .service import COOKIE, Failed, Server, Session, refusal

EXTRA_CSS = """
.form{display:grid;gap:.6em;max-width:36em;margin:1em 0}
.form label{display:grid;gap:.2em}
.errors{color:#8b0000}.receipt{color:#064}
.num{text-align:right;font-variant-numeric:tabular-nums}
table{border-collapse:collapse}td,th{border-bottom:1px solid var(--line);padding:.25em .6em}
"""


class Pages:
    def __init__(self, server: Server) -> None:
        self.server = server
        self.css = resources.files("shrec_score.html").joinpath("report.css").read_text(encoding="utf-8") + EXTRA_CSS
        folder = str(resources.files("shrec_score.server").joinpath("templates"))
        self.env = Environment(loader=FileSystemLoader(folder), autoescape=True)
        digest = base64.b64encode(hashlib.sha256(self.css.encode()).digest()).decode()
        self.csp = f"default-src 'none'; style-src 'sha256-{digest}'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    def page(self, name: str, status: int = 200, **values: Any) -> HTMLResponse:
        html = self.env.get_template(name).render(css=self.css, title=self.server.contest.title, **values)
        return HTMLResponse(html, status)

    async def index(self, request: Request) -> Response:
        runs = await asyncio.to_thread(self.server.store.runs)
        return self.page("index.html", phases=views.leaderboard(self.server.contest, runs, now(), self.server.checker.sort))

    async def post(self, request: Request, session: Session, fresh: bool) -> dict[str, Any]:
        """The form's upload: its CSRF token, the team's token once, then as the API."""
        server = self.server
        form = await server.read_form(request)
        try:
            csrf, token = form.get("csrf"), form.get("token")
            if fresh or not isinstance(csrf, str) or not hmac.compare_digest(csrf.encode(), session.csrf.encode()):
                raise refusal(403, "the form expired: reload the page and submit again")
            if isinstance(token, str) and token.strip():
                session.team = await asyncio.to_thread(server.store.team_of, token.strip())
                if session.team is None:
                    raise refusal(401, "this is not a team's token")
            if session.team is None:
                raise refusal(401, "expected your team's token")
            return await server.upload(session.team, server.admit(session.team), form)
        finally:
            await form.close()

    async def submit(self, request: Request) -> Response:
        server = self.server
        sid = request.cookies.get(COOKIE, "")
        session = server.sessions.get(sid)
        fresh = session is None
        if session is None:
            sid, session = server.new_session()
        status, receipt = 200, None
        errors: list[dict[str, Any]] = []
        if request.method == "POST":
            try:
                status, receipt = 201, await self.post(request, session, fresh)
            except Failed as exc:
                status = exc.status
                errors = exc.body.get("errors") or [{"file": "", "line": None, "message": exc.body.get("error", "")}]
        runs = []
        if session.team is not None:
            runs = views.run_views(server.contest, await asyncio.to_thread(server.store.runs, session.team.id), now())
        response = self.page("submit.html", status, csrf=session.csrf, team=session.team, errors=errors, receipt=receipt, runs=runs)
        secure = request.url.scheme == "https"
        response.set_cookie(COOKIE, sid, httponly=True, samesite="strict", secure=secure, path="/")
        return response
