"""Defects a bug hunt reproduced in the server, each driven through the application in-process
(Starlette's TestClient): a stranger's request never gets a 500."""

from __future__ import annotations

import pytest

from .test_server_kit import add_team, write_contest

pytest.importorskip("starlette", reason="the server extra is not installed")


def _app(contest: str):
    from shrec_score.server.app import create_app
    from shrec_score.server.contest import load_contest

    return create_app(load_contest(contest))


@pytest.mark.parametrize("run_id", ["99999999999999999999999", str(1 << 63), "0"])
def test_a_run_id_past_sqlites_integers_is_a_404_like_any_missing_run(tmp_path, run_id):
    from starlette.testclient import TestClient

    contest = write_contest(tmp_path)
    token = add_team(contest, "alpha")
    with TestClient(_app(contest), raise_server_exceptions=False) as c:
        r = c.get(f"/api/runs/{run_id}", headers={"Authorization": f"Bearer {token}"})
    assert (r.status_code, r.json()) == (404, {"error": "no such run of your team"})


def _post(client, token: str, data: bytes, filename: str = "run.zip"):
    return client.post("/api/runs", files={"file": (filename, data)}, headers={"Authorization": f"Bearer {token}"})


LENIENT_TRACK = "{grades: binary, measures: [NN, FT, AP], sort: AP, missing_queries: skip, strip_zeros: true}"


def test_the_upload_check_takes_the_whole_preset_as_the_clis_check_does(tmp_path):
    """missing_queries: skip and strip_zeros: true in the track: a run missing query 6 and a run whose
    files are named 0001.txt ... 0006.txt are accepted, as ``shrec-score check RUN -c DATA/track.yaml``
    accepts them (exit 0); a track without them refuses both (and so does the CLI)."""
    import os

    from click.testing import CliRunner
    from starlette.testclient import TestClient

    from shrec_score.cli import cli

    from .test_server_kit import tiny_run, zip_of

    missing_one = {k: v for k, v in tiny_run().items() if k != "6.txt"}
    padded = {f"{int(k.split('.')[0]):04d}.txt": v for k, v in tiny_run().items()}
    for track, status, exit_code in ((LENIENT_TRACK, 201, 0), ("{grades: binary, measures: [NN, FT, AP], sort: AP}", 422, 2)):
        folder = tmp_path / ("lenient" if status == 201 else "strict")
        folder.mkdir()
        contest = write_contest(folder)
        text = open(contest).read().replace("track: {grades: binary, measures: [NN, FT, AP], sort: AP}", f"track: {track}")
        open(contest, "w").write(text)
        token = add_team(contest, "alpha")
        with TestClient(_app(contest), raise_server_exceptions=False) as c:
            got = [_post(c, token, zip_of(files)).status_code for files in (missing_one, padded)]
        assert got == [status, status]
        for name, files in (("missing", missing_one), ("padded", padded)):
            run = folder / name
            run.mkdir()
            for k, v in files.items():
                (run / k).write_bytes(v)
            r = CliRunner().invoke(cli, ["check", str(run), "-c", os.path.join(folder, "data", "track.yaml")])
            assert r.exit_code == exit_code, r.output


def _tiny_lists(same_first: bool) -> dict[str, bytes]:
    """A tiny-collection run: each list the query, then its 2 class mates and the 3 others (or the others first)."""
    files = {}
    for q in range(1, 7):
        same = [m for m in range(1, 7) if (m - 1) // 3 == (q - 1) // 3 and m != q]
        other = [m for m in range(1, 7) if (m - 1) // 3 != (q - 1) // 3]
        order = [q, *same, *other] if same_first else [q, *other, *same]
        files[f"{q}.txt"] = "".join(f"{t} {d}\n" for d, t in enumerate(order)).encode()
    return files


def test_the_live_leaderboard_ranks_by_the_sort_measure_in_any_spelling(tmp_path):
    """measures [E, mAP], sort: AP: the leaderboard ranks by the mAP column, as the CLI does.  Every list
    ranks all 5 other models, so E (over the first 32) ties; mAP: 'z' (class mates first) has
    (1/1 + 2/2) / 2 = 1 per query, 'a' (class mates 4th and 5th) has (1/4 + 2/5) / 2.  A tie on E falls to
    the run name (alpha-a first): the sort measure puts alpha-z first."""
    import time

    from starlette.testclient import TestClient

    from .test_server_kit import zip_of

    contest = write_contest(tmp_path)
    text = open(contest).read().replace("track: {grades: binary, measures: [NN, FT, AP], sort: AP}", "track: {grades: binary, measures: [E, mAP], sort: AP}")
    open(contest, "w").write(text)
    token = add_team(contest, "alpha")
    with TestClient(_app(contest), raise_server_exceptions=False) as c:
        for name, same_first in (("a", False), ("z", True)):
            r = c.post("/api/runs", files={"file": ("run.zip", zip_of(_tiny_lists(same_first)))}, data={"name": name},
                       headers={"Authorization": f"Bearer {token}"})
            assert r.status_code == 201, r.text
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:  # (a deadline against a hang, not a speed check)
            runs = c.get("/api/runs", headers={"Authorization": f"Bearer {token}"}).json()["runs"]
            if all(r["status"] == "scored" for r in runs):
                break
            assert not any(r["status"] == "failed" for r in runs), runs
            time.sleep(0.1)
        board = c.get("/api/leaderboard").json()["phases"][0]
    assert board["columns"] == ["rank", "run", "queries", "E", "mAP"]
    rows = board["rows"]
    assert rows[0]["E"] == rows[1]["E"]
    assert [(r["rank"], r["run"], r["mAP"]) for r in rows] == [(1, "alpha-z", 1.0), (2, "alpha-a", pytest.approx((1 / 4 + 2 / 5) / 2))]


def test_a_graded_track_without_sort_ranks_by_adr_as_the_cli(tmp_path):
    """grades: sister and no sort: the CLI ranks by ADR (docs/usage.md), not by the first column."""
    from shrec_score.server.archive import RunChecker
    from shrec_score.server.contest import load_contest

    contest = write_contest(tmp_path)
    text = open(contest).read().replace("track: {grades: binary, measures: [NN, FT, AP], sort: AP}", "track: {grades: sister}")
    open(contest, "w").write(text)
    assert RunChecker(load_contest(contest).preset).sort == "ADR"


def test_a_tracks_publishing_keys_write_nothing_outside_data(tmp_path):
    """A preset's plots: DIR (and out:, html:, significance:) would have the worker write charts
    outside DATA/ at every scoring: DATA/track.yaml leaves them out, and a scored run writes no DIR."""
    import os
    import time

    from starlette.testclient import TestClient

    from shrec_score.config import load_config
    from shrec_score.server.contest import load_contest

    from .test_server_kit import tiny_run, zip_of

    contest = write_contest(tmp_path)
    track = "{grades: binary, measures: [NN, FT, AP], sort: AP, plots: charts, out: results, html: report, significance: true}"
    text = open(contest).read().replace("track: {grades: binary, measures: [NN, FT, AP], sort: AP}", f"track: {track}")
    open(contest, "w").write(text)
    assert sorted(load_config(load_contest(contest).preset)) == ["grades", "measures", "relevance", "sort"]
    token = add_team(contest, "alpha")
    auth = {"Authorization": f"Bearer {token}"}
    with TestClient(_app(contest), raise_server_exceptions=False) as c:
        assert c.post("/api/runs", files={"file": ("run.zip", zip_of(tiny_run()))}, headers=auth).status_code == 201
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and c.get("/api/runs", headers=auth).json()["runs"][0]["status"] == "queued":
            time.sleep(0.1)  # (a deadline against a hang, not a speed check)
        assert c.get("/api/runs", headers=auth).json()["runs"][0]["status"] == "scored"
    assert sorted(e for e in os.listdir(tmp_path) if e not in ("data", "contest.yaml", "tiny.cla")) == []


def test_a_refused_runs_message_names_it_as_uploaded_not_as_staged(tmp_path):
    """A TREC run uploaded as t.run ranking query 1 only: 5 of the 6 queries have none, and the message
    names the run 't.run' (as ``shrec-score check t.run`` does), never its staging name 'run.run'."""
    from starlette.testclient import TestClient

    contest = write_contest(tmp_path)
    token = add_team(contest, "alpha")
    with TestClient(_app(contest), raise_server_exceptions=False) as c:
        r = _post(c, token, b"1 Q0 2 1 0.9 mine\n1 Q0 3 2 0.8 mine\n", "t.run")
    assert r.status_code == 422, r.text
    [error] = r.json()["errors"]
    assert error["file"] == "t.run"
    assert "run 't.run' has none for 5 of 6 queries" in error["message"] and "run.run" not in error["message"], error
