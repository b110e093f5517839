"""``shrec-score serve`` against a real uvicorn in a subprocess (issue 32):
the status codes, the same numbers as the CLI, the export, what is never served."""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import os
import re
import shutil
import socket
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from shrec_score.cli import cli

from .conftest import ROOT
from .test_server_kit import (
    PSB,
    PSB_RUNS,
    Served,
    add_team,
    add_team_with_token,
    folder_files,
    one_character_off,
    tgz_of,
    write_contest,
    zip_of,
)

pytest.importorskip("starlette", reason="the server extra is not installed")
pytest.importorskip("uvicorn", reason="the server extra is not installed")

RUNS = {"alpha": [("d2", "D2", zip_of), ("mvcnn", "MVCNN", tgz_of)], "beta": [("lfd", "LFD", zip_of), ("shd", "SHD", tgz_of)]}


@pytest.fixture(scope="module")
def psb(tmp_path_factory):
    """One server on the psb-like sample and configs/psb.yaml; alpha and beta submit the four sample runs."""
    folder = tmp_path_factory.mktemp("psb-contest")
    contest = write_contest(folder, tiny=False, extra="rate_limit: 5\nmax_members: 400\n")
    tokens = {team: add_team(contest, team) for team in ("alpha", "beta", "gamma", "delta")}
    server = Served(contest).start()
    receipts = {}
    for team, runs in RUNS.items():
        for name, sample, pack in runs:
            data = pack(folder_files(os.path.join(PSB_RUNS, sample)), top=sample)
            r = server.upload(tokens[team], data, f"{sample}.{'zip' if pack is zip_of else 'tgz'}", name)
            assert r.status_code == 201, r.text
            receipts[f"{team}-{name}"] = (r.json(), sample, hashlib.sha256(data).hexdigest())
    yield server, tokens, receipts
    server.kill()


def _cli_on_copies(tmp_path, receipts, out: str) -> str:
    """The plain CLI on copies of the sample runs named as the server names them."""
    runs = tmp_path / "runs"
    runs.mkdir()
    for label, (_, sample, _) in receipts.items():
        shutil.copytree(os.path.join(PSB_RUNS, sample), runs / label)
    r = subprocess.run([sys.executable, "-m", "shrec_score.cli", "--config", os.path.join(ROOT, "configs", "psb.yaml"), str(runs), "--out", out, "--quiet", "--format", "csv"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return out


def test_a_run_accepted_through_the_api_scores_as_the_cli_and_export_writes_the_cli_bytes(psb, tmp_path):
    server, tokens, receipts = psb
    for label, (receipt, _, sha256) in receipts.items():
        assert receipt["status"] == "queued" and receipt["phase"] == "main" and receipt["run"] == label
        assert receipt["sha256"] == sha256  # the receipt: the SHA-256 of the bytes sent
    server.wait(lambda rows: len(rows) >= 4 and all(r["status"] == "scored" for r in rows[:4]), what="the four sample runs scored")
    out = _cli_on_copies(tmp_path, receipts, str(tmp_path / "cli"))
    with open(os.path.join(out, "per_run.csv")) as f:
        expected = list(csv.DictReader(f))
    with server.client() as c:
        board = c.get("/api/leaderboard").json()
    rows = [r for r in board["phases"][0]["rows"] if r["run"] in receipts]
    assert [r["run"] for r in rows] == [e["run"] for e in expected]  # the CLI's order: NN, best first
    for row, want in zip(rows, expected):
        assert row["queries"] == int(want["queries"])
        for m in ("NN", "FT", "ST", "E", "DCG", "AP"):
            assert row[m] == float(want[m])
    # the team sees its own scores (a live phase)
    with server.client(tokens["alpha"]) as c:
        mine = c.get("/api/runs").json()["runs"]
    assert {r["run"] for r in mine} >= {"alpha-d2", "alpha-mvcnn"}
    d2 = next(r for r in mine if r["run"] == "alpha-d2")
    assert d2["scores"]["AP"] == float(next(e["AP"] for e in expected if e["run"] == "alpha-d2"))
    # export: the CLI's files, byte for byte
    exported = tmp_path / "export"
    result = CliRunner().invoke(cli, ["contest", "export", server.contest, str(exported)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert {r["label"] for r in server.rows() if r["status"] == "scored"} == set(receipts)  # this test runs first
    for name in ("per_run.csv", "per_query.csv", "pr_curve.csv", "per_class.csv", "per_query_ranking.csv"):
        assert (exported / name).read_bytes() == open(os.path.join(out, name), "rb").read(), name


def test_tokens_are_checked_and_a_team_sees_only_its_own_runs(psb):
    server, tokens, receipts = psb
    alpha_run = receipts["alpha-d2"][0]["id"]
    data = zip_of(folder_files(os.path.join(PSB_RUNS, "D2")), top="D2")
    assert server.upload(None, data).status_code == 401
    r = server.upload("not-a-token", data)
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    with server.client() as c:
        assert c.get("/api/runs").status_code == 401
        assert c.get(f"/api/runs/{alpha_run}").status_code == 401
    x_token = "x" + "0" * 42  # a token that starts with "x", as 1 random token in 64 does
    add_team_with_token(server.contest, "xenon", x_token)
    for token in (tokens["alpha"], x_token):
        with server.client(token) as c:
            assert c.get("/api/runs").status_code == 200
        with server.client(one_character_off(token)) as c:
            assert c.get("/api/runs").status_code == 401
    with server.client(tokens["beta"]) as c:
        assert c.get(f"/api/runs/{alpha_run}").status_code == 404  # another team's run: as absent as none
        assert c.get("/api/runs/999999").status_code == 404
        assert all(r["run"].startswith("beta-") for r in c.get("/api/runs").json()["runs"])
    with server.client(tokens["alpha"]) as c:
        got = c.get(f"/api/runs/{alpha_run}").json()
        assert got["id"] == alpha_run and got["run"] == "alpha-d2"


def test_a_broken_run_is_refused_with_the_checks_file_and_line_and_does_not_count(psb):
    server, tokens, _ = psb
    files = folder_files(os.path.join(PSB_RUNS, "SHD"))
    lines = files["1003.txt"].decode().splitlines()
    lines[4] = lines[4].split()[0] + " far"  # line 5: a distance that is no number
    files["1003.txt"] = ("\n".join(lines) + "\n").encode()
    before = len(server.rows())
    r = server.upload(tokens["gamma"], zip_of(files, top="SHD"), "SHD.zip")
    assert r.status_code == 422
    assert {"file": "SHD/1003.txt", "line": 5, "message": "distance 'far' is not a number"} in r.json()["errors"]
    assert len(server.rows()) == before  # refused runs do not count against max_runs (rate_limit: 5 counts every upload)
    good = zip_of(folder_files(os.path.join(PSB_RUNS, "SHD")), top="SHD")
    assert [server.upload(tokens["gamma"], good, "SHD.zip").status_code for _ in range(4)] == [201, 201, 201, 403]
    assert len(server.rows()) == before + 3


def test_bodies_past_the_limit_and_past_the_rate_are_refused(psb):
    server, tokens, _ = psb
    big = os.urandom(3 << 20)  # 3 MB against max_upload_mb: 2
    r = server.upload(tokens["delta"], big, "run.zip")
    assert r.status_code == 413
    with server.client(tokens["delta"]) as c:
        r = c.post("/api/runs", content=b"{}" * (5 << 20), headers={"content-type": "application/json"})
        assert r.status_code == 413  # past max_upload_mb whatever the body's type (docs/server.md)
        r = c.post("/api/runs", content=b"not multipart", headers={"content-type": "text/plain"})
        assert (r.status_code, r.json()["errors"][0]["message"]) == (422, "expected a multipart/form-data body with the run in the field 'file'")
        assert c.post("/api/runs", files={"other": ("x.zip", b"PK")}).status_code == 422
        statuses = [c.post("/api/runs", content=b"x", headers={"content-type": "text/plain"}).status_code for _ in range(2)]
    assert statuses == [422, 429]  # rate_limit: 5 uploads a minute, the two 413s counted


def _chunked_upload(port: int, token: str, total: int) -> tuple[int, bytes]:
    """POST a chunked body of up to ``total`` bytes; returns (bytes sent before the server answered or closed, the answer)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    head = (
        "POST /api/runs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: multipart/form-data; boundary=BOUND\r\n\r\n"
    ).encode()
    part = b'--BOUND\r\nContent-Disposition: form-data; name="file"; filename="big.zip"\r\nContent-Type: application/zip\r\n\r\n'
    s.sendall(head + b"%x\r\n%s\r\n" % (len(part), part))
    piece = b"%x\r\n%s\r\n" % (1 << 16, b"\0" * (1 << 16))
    sent, answer = 0, b""
    s.setblocking(False)
    try:
        while sent < total:
            try:
                answer += s.recv(4096)
                break  # the server answered (or closed: b"")
            except BlockingIOError:
                pass
            try:
                sent += s.send(piece)
            except BlockingIOError:
                time.sleep(0.01)
        s.setblocking(True)
        s.settimeout(10)
        while b"\r\n\r\n" not in answer:
            more = s.recv(4096)
            if not more:
                break
            answer += more
    except (ConnectionResetError, BrokenPipeError):
        pass
    finally:
        s.close()
    return sent, answer


def test_a_2_gb_body_against_a_2_mb_limit_is_refused_as_it_streams(psb):
    server, _, _ = psb
    token = add_team(server.contest, "streamer")
    sent, answer = _chunked_upload(server.port, token, 2 << 30)
    assert sent < 64 << 20  # the server stopped reading long before 2 GB
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    # a declared 2 GB body is refused on its header, before a byte of it is read
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    s.sendall(f"POST /api/runs HTTP/1.1\r\nHost: x\r\nContent-Length: {2 << 30}\r\nAuthorization: Bearer {token}\r\nContent-Type: multipart/form-data; boundary=B\r\n\r\n".encode())
    assert s.recv(4096).startswith(b"HTTP/1.1 413")
    s.close()
    assert os.listdir(os.path.join(server.data, "incoming")) == []
    with server.client() as c:
        assert c.get("/healthz").json() == {"status": "ok"}


def test_the_ground_truth_and_stored_files_have_no_url(psb):
    server, tokens, receipts = psb
    run_id = receipts["alpha-d2"][0]["id"]
    guesses = [
        "/classes.cla", "/sample_runs/psb-like/classes.cla", "/data/track.yaml", "/track.yaml", "/data/contest.sqlite3",
        "/contest.sqlite3", f"/runs/{run_id}/alpha-d2/1000.txt", f"/data/runs/{run_id}/alpha-d2/1000.txt", "/../classes.cla",
        "/%2e%2e/classes.cla", "/static/../../classes.cla", "/api/runs/../../classes.cla", f"/api/runs/{run_id}/files", PSB + "/classes.cla",
    ]  # fmt: skip
    with server.client(tokens["alpha"]) as c:
        for url in guesses:
            r = c.get(url)
            assert r.status_code in (404, 405), url
            assert "vehicle" not in r.text and "1075 5.08" not in r.text, url


def test_pages_escape_names_and_send_the_security_headers(psb):
    server, _, _ = psb
    with server.client() as c:
        page = c.get("/")
        form = c.get("/submit")
    assert page.status_code == 200 and "Test &lt;contest&gt; &amp; co" in page.text and "<contest>" not in page.text
    for r in (page, form):
        assert "frame-ancestors 'none'" in r.headers["content-security-policy"]
        assert "script-src" not in r.headers["content-security-policy"]  # default-src 'none': no script at all
        assert r.headers["x-content-type-options"] == "nosniff"
    cookie = form.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert re.search(r'name="csrf" value="[A-Za-z0-9_-]{43}"', form.text)


def test_the_form_refuses_a_post_without_its_csrf_token(psb):
    server, tokens, _ = psb
    data = zip_of(folder_files(os.path.join(PSB_RUNS, "D2")), top="D2")
    before = len(server.rows())
    with server.client() as c:
        c.get("/submit")  # a session
        r = c.post("/submit", data={"token": tokens["beta"], "csrf": "forged"}, files={"file": ("D2.zip", data)})
        assert r.status_code == 403 and "the form expired" in r.text
        csrf = re.search(r'name="csrf" value="([^"]+)"', c.get("/submit").text).group(1)
        r = c.post("/submit", data={"token": "wrong", "csrf": csrf}, files={"file": ("D2.zip", data)})
        assert r.status_code == 401
    assert len(server.rows()) == before


def test_add_team_prints_its_token_once_and_keeps_only_its_hash(tmp_path):
    contest = write_contest(tmp_path)
    result = CliRunner().invoke(cli, ["contest", "add-team", contest, "team-1"], catch_exceptions=False)
    assert result.exit_code == 0
    token = result.output.strip()
    assert result.output == token + "\n" and re.fullmatch(r"[A-Za-z0-9_-]{43}", token)
    db = (tmp_path / "data" / "contest.sqlite3").read_bytes()
    assert token.encode() not in db
    assert hashlib.sha256(token.encode()).hexdigest().encode() in db
    again = CliRunner().invoke(cli, ["contest", "add-team", contest, "team-1"])
    assert again.exit_code == 2 and "a team named 'team-1' already exists" in again.output


@pytest.mark.parametrize(
    "text, message",
    [
        ("colour: red\n", "contest.yaml:6: unknown key 'colour'; expected one of: title, track"),
        # a fraction of a member or a CPU second was taken, then rounded down (0.5 members: every archive refused)
        ("max_members: 0.5\n", "contest.yaml:6: expected 'max_members' to be a whole number >= 1, got '0.5'"),
        ("cpu_seconds: 2.5\n", "contest.yaml:6: expected 'cpu_seconds' to be a whole number >= 1, got '2.5'"),
        ("max_unpacked_mb: 0.5\n", None),
        ("", None),
    ],
)
def test_a_bad_contest_file_fails_in_one_line(tmp_path, text, message):
    contest = write_contest(tmp_path, extra=text)
    result = CliRunner().invoke(cli, ["contest", "add-team", contest, "t"])
    if message is None:
        assert result.exit_code == 0
        return
    assert result.exit_code == 2 and message in result.output and len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "phase, message",
    [
        ("{name: p, opens: 2020-01-01T00:00:00, closes: 2100-01-01T00:00:00Z, max_runs: 3, leaderboard: live}", "phases[1]: opens: expected an ISO 8601 time with a zone"),
        ("{name: p, opens: 2020-01-01T00:00:00Z, closes: 2100-01-01T00:00:00Z, max_runs: 0, leaderboard: live}", "phases[1]: expected 'max_runs' to be a whole number >= 1, got '0'"),
        ("{name: p, opens: 2020-01-01T00:00:00Z, closes: 2100-01-01T00:00:00Z, max_runs: 3, leaderboard: public}", "phases[1]: expected 'leaderboard' to be one of live, after-close, hidden, got 'public'"),
        ("{name: p, opens: 2030-01-01T00:00:00Z, closes: 2020-01-01T00:00:00Z, max_runs: 3, leaderboard: live}", "phases[1]: expected 'closes' after 'opens'"),
    ],
)
def test_a_bad_phase_fails_naming_its_line(tmp_path, phase, message):
    contest = write_contest(tmp_path, phases=phase)
    result = CliRunner().invoke(cli, ["contest", "add-team", contest, "t"])
    assert result.exit_code == 2 and f"contest.yaml:6: {message}" in result.output, result.output


def test_a_quoted_time_ending_in_z_is_utc_on_every_python(tmp_path):
    """A time quoted in YAML reaches fromisoformat as text; Python 3.10's refuses a trailing Z, the form the
    error message itself shows (found by a review): it is UTC, as an unquoted one is."""
    from shrec_score.server.contest import load_contest

    phase = "{name: p, opens: '2020-01-01T00:00:00Z', closes: \"2100-01-01T12:30:00Z\", max_runs: 3, leaderboard: live}"
    (got,) = load_contest(write_contest(tmp_path, phases=phase)).phases
    assert (got.opens, got.closes) == (dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc), dt.datetime(2100, 1, 1, 12, 30, tzinfo=dt.timezone.utc))


def test_serve_names_the_port_it_took_and_a_taken_port_is_one_line_exit_2(psb):
    """--port 0 (the test kit's first start): serve binds the socket itself and names the port on stderr,
    so nothing can take it between a probe and the bind; a second serve on that port is refused in one
    line, exit 2 (uvicorn logged an error and exited 1)."""
    server, _, _ = psb
    assert server.port > 0 and f"on http://127.0.0.1:{server.port}/ (Ctrl-C stops)" in server.read_log()
    again = subprocess.run(
        [sys.executable, "-m", "shrec_score.cli", "serve", server.contest, "--port", str(server.port)], capture_output=True, text=True, timeout=120,
    )
    assert again.returncode == 2 and again.stdout == ""
    assert again.stderr == f"Error: 127.0.0.1:{server.port}: could not listen there (Address already in use)\n", again.stderr
