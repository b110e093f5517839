"""``shrec-score check``'s summary line of many problems of one kind: its examples say where each is."""

from __future__ import annotations

from click.testing import CliRunner

from shrec_score.cli import cli

#: 6 models in 2 classes, every model a query.
CLA = "PSB 1\n2 6\n\na 0 3\n1\n2\n3\n\nb 0 3\n4\n5\n6\n"


def test_missing_queries_are_summarized_by_their_first_three_ids_not_the_run_path_three_times(tmp_path):
    """A folder run with a list for query 1 only: 5 queries have none, more than 3, so one summary
    line; a missing query has no file, so its examples are the first three missing ids, 2, 3 and 4."""
    (tmp_path / "c.cla").write_text(CLA)
    run = tmp_path / "myrun"
    run.mkdir()
    (run / "1.txt").write_text("".join(f"{t} {d}\n" for d, t in enumerate([1, 2, 3, 4, 5, 6])))
    r = CliRunner().invoke(cli, ["check", str(run), "-r", str(tmp_path / "c.cla")])
    assert r.exit_code == 2
    assert r.stdout == f"{run}: error: 5 x no ranked list for query … (first: '2', '3', '4'; no ranked list for query '2')\n"
