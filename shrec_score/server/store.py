"""Teams and runs: SQLite (schema.sql) and the stored files (what survives a crash: docs/server.md)."""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from typing import Any, NamedTuple

from ..outdir import fsync_dir

#: A team's name, and a run's name as a participant gives it (each becomes part of a file name).
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")


class Failed(Exception):
    """A refused request: ``status``, the check's ``errors`` (422) or one ``text`` (file "upload"), ``body`` (JSON)."""

    def __init__(self, status: int, text: str = "", errors: list[dict[str, Any]] | None = None) -> None:
        super().__init__(status)
        self.status = status
        self.errors = errors or [{"file": "upload" if status == 422 else "", "line": None, "message": text}]
        self.body = {"errors": self.errors} if status == 422 else {"error": text}


class Team(NamedTuple):
    id: int
    name: str


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


class Store:
    """The contest's database and files under ``folder``."""

    def __init__(self, folder: str) -> None:
        self.db = os.path.join(folder, "contest.sqlite3")
        self.runs_dir = os.path.join(folder, "runs")
        self.incoming = os.path.join(folder, "incoming")
        self.work = os.path.join(folder, "work")
        os.makedirs(self.runs_dir, exist_ok=True)  # (incoming/ and work/: made by recover, which the server runs)
        with self.connect() as db:
            db.executescript(resources.files("shrec_score.server").joinpath("schema.sql").read_text(encoding="utf-8"))

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.db, timeout=30, isolation_level=None)
        db.row_factory = sqlite3.Row
        try:
            db.executescript("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;")
            yield db
        finally:
            db.close()

    def recover(self) -> None:
        """At start: remove what no committed row holds (uploads and scorings cut short)."""
        held = {str(r["id"]) for r in self.runs()}
        for name in set(os.listdir(self.runs_dir)) - held:
            shutil.rmtree(os.path.join(self.runs_dir, name), ignore_errors=True)
        for d in (self.incoming, self.work):
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d, exist_ok=True)
        fsync_dir(self.runs_dir)

    def add_team(self, name: str, created: str) -> str:
        """Create a team; returns its token (kept only as a hash)."""
        token = secrets.token_urlsafe(32)
        with self.connect() as db:
            try:
                db.execute("INSERT INTO teams (name, token_sha256, created) VALUES (?, ?, ?)", (name, token_hash(token), created))
            except sqlite3.IntegrityError:
                raise ValueError(f"a team named {name!r} already exists") from None
        return token

    def team_of(self, token: str) -> Team | None:
        with self.connect() as db:
            row = db.execute("SELECT id, name FROM teams WHERE token_sha256 = ?", (token_hash(token),)).fetchone()
        return None if row is None else Team(row["id"], row["name"])

    def accept(self, team: Team, name: str | None, staged: str, unpacked: str, suffix: str, phase: str, max_runs: int, sha256: str, submitted: str) -> dict[str, Any]:
        """Move the fsync'ed ``staged/unpacked`` to ``runs/ID/TEAM-NAME+suffix``, its row committed: the 201 body."""
        final = ""
        with self.connect() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                count = self.count_runs(db, team, phase, max_runs)
                (next_id,) = db.execute("SELECT coalesce(max(id), 0) + 1 FROM runs").fetchone()
                run_name = name or f"run{count + 1}"
                label = f"{team.name}-{run_name}"
                if db.execute("SELECT 1 FROM runs WHERE label = ?", (label,)).fetchone():
                    label = f"{label}-{next_id}"
                entry = label + suffix
                db.execute(
                    "INSERT INTO runs (id, team_id, name, label, entry, phase, status, sha256, submitted) VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?)",
                    (next_id, team.id, run_name, label, entry, phase, sha256, submitted),
                )
                final = os.path.join(self.runs_dir, str(next_id))
                os.rename(os.path.join(staged, unpacked), os.path.join(staged, entry))
                fsync_dir(staged)
                os.rename(staged, final)
                fsync_dir(self.runs_dir)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                if final:  # no row: no file
                    shutil.rmtree(final, ignore_errors=True)
                raise
        return {"id": next_id, "name": run_name, "run": label, "status": "queued", "phase": phase, "sha256": sha256}

    @staticmethod
    def count_runs(db: sqlite3.Connection, team: Team, phase: str, max_runs: int) -> int:
        """The team's runs in ``phase``; :class:`Failed` (403) when there are ``max_runs`` already."""
        (count,) = db.execute("SELECT count(*) FROM runs WHERE team_id = ? AND phase = ?", (team.id, phase)).fetchone()
        if count >= max_runs:
            raise Failed(403, f"team {team.name!r} has submitted its {max_runs} run(s) of phase {phase!r}")
        return int(count)

    def run_path(self, row: sqlite3.Row | dict[str, Any]) -> str:
        return os.path.join(self.runs_dir, str(row["id"]), row["entry"])

    def runs(self, **where: Any) -> list[dict[str, Any]]:
        """The runs by id; ``where``: the values they have (``team_id``, ``status``)."""
        query = " AND ".join(f"{column} = ?" for column in where) or "1"  # the names: ours, never a request's
        with self.connect() as db:
            return [dict(r) for r in db.execute(f"SELECT * FROM runs WHERE {query} ORDER BY id", list(where.values()))]

    def next_queued(self) -> dict[str, Any] | None:
        """The oldest queued run, its attempt counted (a crash mid-scoring shows as attempts > 1)."""
        job = next(iter(self.runs(status="queued")), None)
        if job is not None:
            with self.connect() as db:
                db.execute("UPDATE runs SET attempts = attempts + 1 WHERE id = ?", (job["id"],))
        return job

    def finish(self, run_id: int, finished: str, *, per_run: str | None = None, reason: str | None = None) -> None:
        """Commit a scoring's outcome (scored with ``per_run``, else failed for ``reason``) to a run still queued."""
        with self.connect() as db:
            db.execute(
                "UPDATE runs SET status = ?, finished = ?, per_run = ?, reason = ? WHERE id = ? AND status = 'queued'",
                ("failed" if per_run is None else "scored", finished, per_run, reason, run_id),
            )
