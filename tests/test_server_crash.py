"""Nothing accepted is lost, nothing is scored twice, no team passes
``max_runs``, nothing is shown before its phase allows (issue 32), against
real ``shrec-score serve`` processes killed with SIGKILL and SIGTERM."""

from __future__ import annotations

import os
import socket
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from .test_server_kit import Served, add_team, tgz_of, tiny_run, write_contest, zip_of

pytest.importorskip("starlette", reason="the server extra is not installed")

GOOD = tiny_run()
#: The tiny run ranks each query's two class mates first: NN = FT = AP = 1 for every query.
PERFECT = "run,queries,NN,FT,AP\n{label},6,1.0,1.0,1.0\n"


@pytest.fixture
def served(tmp_path):
    """A server factory: every server started is killed at the end of the test."""
    started: list[Served] = []

    def start(contest: str) -> Served:
        s = Served(contest)
        started.append(s)
        return s.start()

    yield start
    for s in started:
        s.kill()


def _scored_once(row: dict) -> None:
    assert row["status"] == "scored", row
    assert row["per_run"] == PERFECT.format(label=row["label"])


def test_50_concurrent_uploads_from_10_teams_never_pass_max_runs(tmp_path, served):
    contest = write_contest(tmp_path)  # max_runs: 3
    tokens = [add_team(contest, f"team{i}") for i in range(10)]
    server = served(contest)
    data = zip_of(GOOD)

    def upload(i: int) -> tuple[int, int]:
        return i % 10, server.upload(tokens[i % 10], data, "run.zip").status_code

    with ThreadPoolExecutor(50) as pool:
        results = list(pool.map(upload, range(50)))
    for team in range(10):
        codes = sorted(code for t, code in results if t == team)
        assert codes == [201, 201, 201, 403, 403], (team, codes)
    rows = server.rows()
    assert len(rows) == 30
    assert sorted(Counter(r["team_id"] for r in rows).values()) == [3] * 10
    assert server.stored_entries() == {str(r["id"]) for r in rows}  # every accepted run's files, none more
    for r in rows:
        assert os.listdir(os.path.join(server.data, "runs", str(r["id"]))) == [r["entry"]]


def test_kill_9_during_an_upload_leaves_no_row_and_no_file(tmp_path, served):
    contest = write_contest(tmp_path)
    token = add_team(contest, "t")
    server = served(contest)
    body = zip_of(GOOD)
    head = (
        "POST /api/runs HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\n"
        f"Authorization: Bearer {token}\r\nContent-Length: {len(body) + 200}\r\n\r\n"
        '--B\r\nContent-Disposition: form-data; name="file"; filename="run.zip"\r\n\r\n'
    ).encode()
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    s.sendall(head + body[: len(body) // 2])  # half of it
    time.sleep(0.3)
    server.kill()
    s.close()
    server.start()
    assert server.rows() == []
    assert server.stored_entries() == set()
    assert os.listdir(os.path.join(server.data, "incoming")) == []
    assert server.upload(token, body, "run.zip").status_code == 201  # and the server takes the next one


def test_kill_9_after_the_201_loses_nothing_and_scores_once(tmp_path, served):
    contest = write_contest(tmp_path, extra="wall_seconds: 120\n")
    token = add_team(contest, "t")
    server = served(contest)
    r = server.upload(token, tgz_of(GOOD), "run.tgz", "first")
    assert r.status_code == 201
    server.kill()  # at once: before or during its scoring
    row = server.rows()[0]
    assert row["id"] == r.json()["id"] and row["sha256"] == r.json()["sha256"]
    assert server.stored_entries() == {str(row["id"])}
    server.start()
    (row,) = server.wait(lambda rows: rows[0]["status"] != "queued", what="the run scored after the restart")
    _scored_once(row)


def test_kill_9_during_scoring_then_restart_scores_the_run_exactly_once(tmp_path, served):
    contest = write_contest(tmp_path)
    token = add_team(contest, "t")
    server = served(contest)
    assert server.upload(token, zip_of(GOOD), "run.zip", "r").status_code == 201
    server.wait(lambda rows: rows[0]["attempts"] == 1 and rows[0]["status"] == "queued", what="the scoring started")
    server.kill()
    assert server.rows()[0]["status"] == "queued"  # its result was not committed
    server.start()
    (row,) = server.wait(lambda rows: rows[0]["status"] != "queued", what="the run scored after the restart")
    _scored_once(row)
    assert row["attempts"] == 2
    assert os.listdir(os.path.join(server.data, "work")) == []


def test_sigterm_during_scoring_stops_and_the_run_is_scored_after_the_restart(tmp_path, served):
    contest = write_contest(tmp_path)
    token = add_team(contest, "t")
    server = served(contest)
    assert server.upload(token, zip_of(GOOD), "run.zip", "r").status_code == 201
    server.wait(lambda rows: rows[0]["attempts"] == 1 and rows[0]["status"] == "queued", what="the scoring started")
    assert server.terminate() == 143  # the CLI's status for SIGTERM, after a graceful stop
    row = server.rows()[0]
    assert row["status"] == "queued" or row["status"] == "scored" and row["per_run"] == PERFECT.format(label=row["label"])
    server.start()
    (row,) = server.wait(lambda rows: rows[0]["status"] != "queued", what="the run scored after the restart")
    _scored_once(row)


def test_a_scoring_past_its_limits_fails_with_the_reason_and_the_server_answers(tmp_path, served):
    contest = write_contest(tmp_path, extra="wall_seconds: 0.01\n")
    token = add_team(contest, "t")
    server = served(contest)
    assert server.upload(token, zip_of(GOOD), "run.zip", "slow").status_code == 201
    (row,) = server.wait(lambda rows: rows[0]["status"] != "queued", what="the run failed")
    assert row["status"] == "failed" and row["reason"] == "stopped at the wall-clock limit of 0.01 s" and row["per_run"] is None
    with server.client(token) as c:
        assert c.get("/healthz").status_code == 200
        mine = c.get("/api/runs").json()["runs"]
    assert mine[0]["status"] == "failed" and mine[0]["reason"] == row["reason"] and "scores" not in mine[0]


def test_a_scoring_past_its_memory_limit_fails_and_the_server_answers(tmp_path, served):
    """100 MB of address space: the child cannot even load numpy and pyarrow (the same run scores
    under the default limit, see the tests above); how it fails depends on the libraries, the
    status does not."""
    contest = write_contest(tmp_path, extra="memory_mb: 100\n")
    token = add_team(contest, "t")
    server = served(contest)
    assert server.upload(token, zip_of(GOOD), "run.zip", "big").status_code == 201
    (row,) = server.wait(lambda rows: rows[0]["status"] != "queued", what="the run failed")
    assert row["status"] == "failed" and row["reason"] and row["per_run"] is None
    assert server.data not in row["reason"]  # no server path shown
    with server.client() as c:
        assert c.get("/healthz").status_code == 200


PHASES = (
    "{name: old, opens: 2000-01-01T00:00:00Z, closes: 2001-01-01T00:00:00Z, max_runs: 3, leaderboard: live}\n"
    "  - {name: blind, opens: 2020-01-01T00:00:00+02:00, closes: 2100-01-01T00:00:00Z, max_runs: 3, leaderboard: after-close}\n"
    "  - {name: later, opens: 2100-01-01T00:00:00Z, closes: 2101-01-01T00:00:00Z, max_runs: 3, leaderboard: hidden}"
)


def test_an_after_close_phase_shows_only_accepted_runs_until_it_closes(tmp_path, served):
    contest = write_contest(tmp_path, phases=PHASES)
    token = add_team(contest, "t")
    server = served(contest)
    r = server.upload(token, zip_of(GOOD), "run.zip", "r")
    assert r.status_code == 201 and r.json()["phase"] == "blind"
    server.wait(lambda rows: rows[0]["status"] == "scored", what="the run scored")
    with server.client(token) as c:
        board = c.get("/api/leaderboard").json()
        mine = c.get("/api/runs").json()["runs"]
        page = c.get("/").text
    assert [p["name"] for p in board["phases"]] == ["old", "blind"]  # the hidden phase is not listed
    assert board["phases"][1]["rows"] == [{"run": "t-r", "status": "accepted"}]
    assert mine[0]["status"] == "scored" and "scores" not in mine[0]
    assert "t-r" in page and "1.0000" not in page


def test_no_open_phase_refuses_uploads(tmp_path, served):
    contest = write_contest(tmp_path, phases="{name: old, opens: 2000-01-01T00:00:00Z, closes: 2001-01-01T00:00:00Z, max_runs: 3, leaderboard: live}")
    token = add_team(contest, "t")
    server = served(contest)
    r = server.upload(token, zip_of(GOOD), "run.zip")
    assert r.status_code == 403 and r.json() == {"error": "no phase of the contest is open for submissions"}
    assert server.rows() == []
