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
