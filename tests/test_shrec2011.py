"""SHREC 2011's one-file run format (issue 31, point 11): a header
``names:method:variant:institute``, then ``query:rank:distance:result`` lines.

Classes a = {1, 2}, b = {3, 4}, all against all.  The ranking below:
query 1 ranks 2 (relevant) first: NN 1, AP 1; query 2 ranks 3, then 1:
NN 0, AP 1/2; query 3 ranks 4 first: NN 1, AP 1; query 4 ranks 1, then 3:
NN 0, AP 1/2.  Means: NN 2/4, AP (1 + 1/2 + 1 + 1/2) / 4.
"""

import pytest
from click.testing import CliRunner

from shrec_score.cli import cli

CLA = "PSB 1\n2 4\na 0 2\n1\n2\nb 0 2\n3\n4\n"
RANKED = {"1": ["2", "3", "4"], "2": ["3", "1", "4"], "3": ["4", "1", "2"], "4": ["1", "3", "2"]}
HEADER = "Stefan van Jole_Ann Other:MyMethod:1:Utrecht University\n"


def body(ranked=RANKED, start=1):
    return "".join(f"{q}:{start + i}:{0.25 * (i + 1)}:{t}\n" for q, ts in ranked.items() for i, t in enumerate(ts))


def run_cli(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture
def track(tmp_path):
    (tmp_path / "c.cla").write_text(CLA)
    return tmp_path


def test_a_shrec2011_run_scores_the_hand_computed_values(track):
    (track / "result.txt").write_text(HEADER + body())
    r = run_cli("score", track / "result.txt", "-r", track / "c.cla", "-m", "NN,AP")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == ["rank,run,queries,NN,AP", f"1,MyMethod-1,4,{2 / 4},{(1 + 1 / 2 + 1 + 1 / 2) / 4}"]


def test_it_scores_as_the_same_ranking_as_a_list_folder(track):
    """Beside a list folder with the same lists: the same numbers, every measure;
    ranks may start at 0 (the track's own example does)."""
    (track / "runs" / "lists").mkdir(parents=True)
    for q, ts in RANKED.items():
        (track / "runs" / "lists" / f"{q}.txt").write_text("".join(f"{t} {0.25 * (i + 1)}\n" for i, t in enumerate(ts)))
    (track / "runs" / "m.res").write_text("\n" + HEADER.replace(":1:", "::") + body(start=0))
    r = run_cli("score", track / "runs", "-r", track / "c.cla")
    assert r.exit_code == 0, r.output
    rows = sorted(line.split(",", 2)[2] for line in r.stdout.splitlines()[1:])
    names = sorted(line.split(",")[1] for line in r.stdout.splitlines()[1:])
    assert names == ["MyMethod", "lists"]  # an empty variant: the method alone
    assert rows[0] == rows[1]


def test_lines_with_blanks_around_fields_and_crlf(track):
    text = HEADER + "".join(f" {q} : {i + 1} : {0.5 * i} : {t} \r\n" for q, ts in RANKED.items() for i, t in enumerate(ts))
    (track / "r.txt").write_text(text, newline="")
    r = run_cli("score", track / "r.txt", "-r", track / "c.cla", "-m", "NN")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[1] == f"1,MyMethod-1,4,{2 / 4}"


def test_run_format_shrec2011_and_check(track):
    (track / "r.txt").write_text(HEADER + body())
    r = run_cli("score", track / "r.txt", "-r", track / "c.cla", "-m", "NN", "--run-format", "shrec2011")
    assert r.exit_code == 0, r.output
    r = run_cli("check", track / "r.txt", "-r", track / "c.cla")
    assert r.exit_code == 0, r.output


LINES = body().splitlines(keepends=True)  # 12 lines; file line = index + 2


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("names:method:1\n" + body(), 1, 'expected a SHREC 2011 header "names:method:variant:institute", got 3 fields'),
        (HEADER + "".join(LINES[:3]) + "2:1:0.5\n" + "".join(LINES[3:]), 5, 'expected "query:rank:distance:result", got 3 fields'),
        (HEADER + LINES[0] + "1:two:0.5:3\n" + "".join(LINES[2:]), 3, "expected a whole number as rank, got 'two'"),
        (HEADER + LINES[0] + "1:2:far:3\n" + "".join(LINES[2:]), 3, "expected a number as distance, got 'far'"),
        (HEADER + LINES[0] + "1:2:nan:3\n" + "".join(LINES[2:]), 3, "expected a number as distance, got NaN"),
        (HEADER + "1:2:0.5:2\n1:1:0.6:3\n" + "".join(LINES[2:]), 3, "expected ranks that increase down the file; rank 1 follows rank 2"),
        (HEADER + "1:1:0.5:2\n1:1:0.6:3\n" + "".join(LINES[2:]), 3, "expected ranks that increase down the file; rank 1 follows rank 1"),
        (HEADER + "".join(LINES[:4]) + "1:4:0.9:4\n" + "".join(LINES[4:]), 6, "expected the lines of a query together; query '1' started at line 2"),
        (HEADER + LINES[0] + "1:2:0.5:9\n" + "".join(LINES[2:]), 3, "expected a target id of the collection, got unknown id '9'"),
        (HEADER + LINES[0] + "1:2:0.5:2\n" + "".join(LINES[2:]), 3, "expected each target once; '2' is already ranked at line 2"),
        (HEADER + "".join(LINES) + "7:1:0.5:2\n", 14, "expected a query id of the classification, got unknown query '7'"),
    ],
)
def test_each_error_is_one_line_with_file_and_line(track, text, line, message):
    (track / "r.txt").write_text(text)
    r = run_cli("score", track / "r.txt", "-r", track / "c.cla", "--run-format", "shrec2011")
    assert r.exit_code == 2
    assert r.stderr == f"Error: {track / 'r.txt'}:{line}: {message}\n"


def test_a_missing_query_is_an_error_and_lenient_scores_it_zero(track):
    (track / "r.txt").write_text(HEADER + "".join(LINES[3:]))  # no line for query 1
    r = run_cli("score", track / "r.txt", "-r", track / "c.cla", "-m", "NN")
    assert r.exit_code == 2
    assert r.stderr == f"Error: {track / 'r.txt'}: expected a ranked list for every query; run 'MyMethod-1' has none for 1 of 4 queries, got first missing: '1'\n"
    r = run_cli("score", track / "r.txt", "-r", track / "c.cla", "-m", "NN", "--lenient")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[1] == f"1,MyMethod-1,4,{1 / 4}"  # query 1 scores 0, query 3 scores 1
    assert "1 queries without a ranked list (scored 0)" in r.stderr
