"""What the server does for a request (who asks, whether a phase admits the team, the upload read under the size
limit, the form's session and CSRF token, storing a checked run); a refusal is a :class:`~.store.Failed`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import os
import secrets
import shutil
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from starlette.datastructures import FormData, UploadFile
from starlette.requests import Request

from ..outdir import fsync_tree
from .archive import PIECE, RunChecker, unpack
from .contest import Contest, Phase, now, stamp
from .store import NAME, Failed, Store, Team

#: Room for the multipart framing and the small fields beside the file.
FRAMING = 64 << 10
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
    sessions: OrderedDict[str, Session] = field(default_factory=OrderedDict)
    uploads: dict[str, deque[float]] = field(default_factory=dict)  # a team's uploads of the last 60 s

    def bound(self, size: int, got: str = "more", framing: int = FRAMING) -> None:
        """:class:`Failed` 413 when ``size`` bytes pass the upload limit (``framing``: room for the multipart's)."""
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
            self.sessions.popitem(last=False)
        return sid, session

    def admit(self, team: Team) -> Phase:
        """The open phase a team may upload to now; :class:`Failed` 429 past ``rate_limit`` uploads in 60 s, 403."""
        times, at = self.uploads.setdefault(team.name, deque()), time.monotonic()
        per_minute = self.contest.limits["rate_limit"]
        while times and times[0] <= at - 60:
            times.popleft()
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
            if message.get("type") == "http.request":
                seen += len(message.get("body", b""))
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
        store = self.store
        with store.connect() as db:  # refused before the work of unpacking (and again under the write lock)
            store.count_runs(db, team, phase.name, phase.max_runs)
        work = os.path.join(store.incoming, secrets.token_hex(8))
        os.makedirs(work)
        try:
            received = os.path.join(work, "upload")
            digest, size = hashlib.sha256(), 0
            with open(received, "wb") as out:
                while piece := upload.file.read(PIECE):
                    size += len(piece)
                    self.bound(size, framing=0)
                    digest.update(piece)
                    out.write(piece)
            staged = os.path.join(work, "run")
            unpacked = unpack(received, os.path.basename(upload.filename or "upload"), staged, self.contest.limits)
            errors = self.checker.errors(staged, unpacked)
            if errors:
                raise Failed(422, errors=errors)
            fsync_tree(staged, files=True)
            return store.accept(team, name, staged, unpacked.name, unpacked.suffix, phase.name, phase.max_runs, digest.hexdigest(), stamp())
        finally:
            shutil.rmtree(work, ignore_errors=True)
