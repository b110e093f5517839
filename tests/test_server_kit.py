"""What the server tests share: contests written into a tmp folder, a real
``shrec-score serve`` in a subprocess on a free port, archives of runs."""

from __future__ import annotations

import io
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tarfile
import time
import zipfile

import pytest

from .conftest import ROOT, SAMPLES

httpx = pytest.importorskip("httpx", reason="the server extra is not installed")

PSB = os.path.join(SAMPLES, "psb-like")
PSB_RUNS = os.path.join(PSB, "runs")
OPEN = "{name: main, opens: 2020-01-01T00:00:00Z, closes: 2100-01-01T00:00:00Z, max_runs: 3, leaderboard: live}"

#: A tiny collection: 6 models in 2 classes, every model a query (a run scores in well under a second).
TINY_CLA = "PSB 1\n2 6\n\na 0 3\n1\n2\n3\n\nb 0 3\n4\n5\n6\n"


def tiny_run(good: bool = True) -> dict[str, bytes]:
    """A ranked-list run of the tiny collection: the query first, then its class, then the rest."""
    files = {}
    for q in range(1, 7):
        same = [m for m in range(1, 7) if (m - 1) // 3 == (q - 1) // 3 and m != q]
        other = [m for m in range(1, 7) if (m - 1) // 3 != (q - 1) // 3]
        lines = [f"{t} {d}" for d, t in enumerate([q, *same, *other])]
        if not good and q == 2:
            lines[2] = "3 far"  # line 3: a distance that is no number
        files[f"{q}.txt"] = ("\n".join(lines) + "\n").encode()
    return files


def folder_files(folder: str) -> dict[str, bytes]:
    out = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as f:
            out[name] = f.read()
    return out


def zip_of(files: dict[str, bytes], top: str = "run") -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(f"{top}/{name}" if top else name, data)
    return buf.getvalue()


def tgz_of(files: dict[str, bytes], top: str = "run") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, data in files.items():
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def write_contest(folder, *, tiny: bool = True, phases: str = OPEN, extra: str = "") -> str:
    """CONTEST.yaml in ``folder`` (the tiny collection, or the psb-like sample with configs/psb.yaml)."""
    folder = str(folder)
    if tiny:
        with open(os.path.join(folder, "tiny.cla"), "w") as f:
            f.write(TINY_CLA)
        track, relevance = "{grades: binary, measures: [NN, FT, AP], sort: AP}", "tiny.cla"
    else:
        track, relevance = os.path.join(ROOT, "configs", "psb.yaml"), os.path.join(PSB, "classes.cla")
    path = os.path.join(folder, "contest.yaml")
    with open(path, "w") as f:
        f.write(f"title: Test <contest> & co\ntrack: {track}\nrelevance: {relevance}\ndata: data\nmax_upload_mb: 2\n{extra}phases:\n  - {phases}\n")
    return path


def add_team(contest: str, name: str) -> str:
    from shrec_score.server.contest import load_contest
    from shrec_score.server.store import Store

    return Store(load_contest(contest).data).add_team(name, "2026-01-01T00:00:00+00:00")


def add_team_with_token(contest: str, name: str, token: str) -> None:
    """A team whose token is ``token`` (kept, as ``add-team`` keeps it, only as its SHA-256): a test's chosen case."""
    from shrec_score.server.contest import load_contest
    from shrec_score.server.store import Store, token_hash

    with Store(load_contest(contest).data).connect() as db:
        db.execute("INSERT INTO teams (name, token_sha256, created) VALUES (?, ?, ?)", (name, token_hash(token), "2026-01-01T00:00:00+00:00"))


def one_character_off(token: str) -> str:
    """``token`` with its first character changed: never ``token`` itself (1 random token in 64 starts with "x")."""
    return ("y" if token[0] == "x" else "x") + token[1:]


class Served:
    """``shrec-score serve CONTEST`` in a subprocess; restartable on the same port."""

    def __init__(self, contest: str) -> None:
        self.contest = contest
        self.data = os.path.join(os.path.dirname(contest), "data")
        self.port = 0  # the first start takes a free port (bound by serve itself: no other process can take it between)
        self.url = ""
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = open(os.path.join(os.path.dirname(contest), "server.log"), "ab")

    def start(self) -> Served:
        cmd = [sys.executable, "-m", "shrec_score.cli", "serve", self.contest, "--port", str(self.port)]
        before = len(self.read_log())
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"serve exited with {self.proc.returncode}: {self.read_log()}")
            said = re.search(r"serving .* on http://127\.0\.0\.1:(\d+)/", self.read_log()[before:])
            if said is None:
                time.sleep(0.05)
                continue
            self.port = int(said.group(1))  # a restart listens on the same port
            self.url = f"http://127.0.0.1:{self.port}"
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                time.sleep(0.05)
        raise AssertionError("serve did not answer /healthz in 60 s")

    def read_log(self) -> str:
        with open(self.log.name, "rb") as f:
            return f.read().decode(errors="replace")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)

    def terminate(self) -> int:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=60)

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)

    def upload(self, token: str | None, data: bytes, filename: str = "run.zip", name: str | None = None) -> httpx.Response:
        with self.client(token) as c:
            return c.post("/api/runs", files={"file": (filename, data)}, data={"name": name} if name else None)

    def rows(self) -> list[dict]:
        db = sqlite3.connect(f"file:{os.path.join(self.data, 'contest.sqlite3')}?mode=ro", uri=True, timeout=30)
        db.row_factory = sqlite3.Row
        try:
            return [dict(r) for r in db.execute("SELECT * FROM runs ORDER BY id")]
        finally:
            db.close()

    def wait(self, predicate, timeout: float = 60, what: str = "the runs") -> list[dict]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            rows = self.rows()
            if predicate(rows):
                return rows
            time.sleep(0.05)
        raise AssertionError(f"{what}: not reached in {timeout} s: {self.rows()}")

    def stored_entries(self) -> set[str]:
        return set(os.listdir(os.path.join(self.data, "runs")))
