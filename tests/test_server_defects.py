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
