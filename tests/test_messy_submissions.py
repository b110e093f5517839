"""Messy e-mailed submissions (issue 31, points 9, 10 and 12): ids spelled
otherwise (zero-padded, prefixed), clutter of unzipped archives, and check's
summary of many problems of one kind.

The oracle of the scores is the same run spelled cleanly: a padded copy of
sample_runs/psb-like read with --strip-zeros must write the very CSV the
original writes.  The small cases are hand computed.
"""

import os
import shutil

import pytest
from click.testing import CliRunner

from shrec_score.cli import cli
from shrec_score.join import strip_zeros

from .conftest import SAMPLES

PSB = os.path.join(SAMPLES, "psb-like")
CLA = os.path.join(PSB, "classes.cla")


def run_cli(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def _respell(src, dst, rename):
    """A copy of the run folders under ``src`` with every id (file names, and
    the first field of every line) spelled by ``rename``."""
    for run in sorted(os.listdir(src)):
        os.makedirs(dst / run)
        for name in os.listdir(os.path.join(src, run)):
            qid = name.rsplit(".", 1)[0]
            with open(os.path.join(src, run, name), encoding="utf-8") as fh:
                lines = [line.split() for line in fh.read().splitlines()]
            body = "".join(" ".join([rename(f[0]), *f[1:]]) + "\n" for f in lines if f)
            (dst / run / f"{rename(qid)}.txt").write_text(body, encoding="utf-8")


@pytest.fixture(scope="module")
def clean():
    r = run_cli("score", os.path.join(PSB, "runs"), "-r", CLA)
    assert r.exit_code == 0, r.output
    return r.stdout


@pytest.fixture
def padded(tmp_path):
    _respell(os.path.join(PSB, "runs"), tmp_path / "runs", lambda x: x.zfill(6))
    return tmp_path / "runs"


def test_strip_zeros_rule():
    assert [strip_zeros(x) for x in ["0012", "12", "0", "000", "0a0", "100"]] == ["12", "12", "0", "0", "a0", "100"]


def test_a_padded_run_is_an_error_naming_the_cause_even_lenient(padded):
    for extra in ([], ["--lenient"]):
        r = run_cli("score", padded, "-r", CLA, *extra)
        assert r.exit_code == 2
        assert r.stderr == (
            f"Error: {padded / 'D2'}: no file of run 'D2' names a query; ids look zero-padded ('001000' vs '1000'): "
            "try --strip-zeros or --id-map FILE\n"
        )


def test_a_padded_run_folder_given_alone_names_the_cause(padded):
    r = run_cli("score", padded / "SHD", "-r", CLA)
    assert r.exit_code == 2
    assert "no file of run 'SHD' names a query; ids look zero-padded" in r.stderr


def test_strip_zeros_scores_a_padded_copy_as_the_original(padded, clean):
    r = run_cli("score", padded, "-r", CLA, "--strip-zeros")
    assert r.exit_code == 0, r.output
    assert r.stdout == clean


def test_strip_zeros_from_a_preset(padded, clean, tmp_path):
    (tmp_path / "p.yaml").write_text(f"relevance: {CLA}\nstrip_zeros: true\n")
    r = run_cli("score", padded, "-c", tmp_path / "p.yaml")
    assert r.exit_code == 0, r.output
    assert r.stdout == clean


def test_id_map_scores_a_prefixed_copy_as_the_original(tmp_path, clean):
    _respell(os.path.join(PSB, "runs"), tmp_path / "runs", lambda x: f"model_{x}")
    ids = sorted({n.rsplit(".", 1)[0] for n in os.listdir(os.path.join(PSB, "runs", "D2"))})
    (tmp_path / "map.csv").write_text("# run id, relevance id\n" + "".join(f"model_{i},{i}\n" for i in ids))
    r = run_cli("score", tmp_path / "runs", "-r", CLA)
    assert r.exit_code == 2
    assert "ids look prefixed or suffixed ('model_1000' vs '1000'): try --id-map FILE" in r.stderr
    r = run_cli("score", tmp_path / "runs", "-r", CLA, "--id-map", tmp_path / "map.csv")
    assert r.exit_code == 0, r.output
    assert r.stdout == clean


@pytest.mark.parametrize(
    "body, line, message",
    [
        ("a 1\nb\n", 2, 'expected "<run id> <relevance id>" (two columns), got 1 fields'),
        ("a 1\n\nb 2 3\n", 3, 'expected "<run id> <relevance id>" (two columns), got 3 fields'),
        ("a 1\na 2\n", 2, "expected each run id once; 'a' is already mapped at line 1"),
    ],
)
def test_a_bad_id_map_line_is_one_line_with_file_and_line(tmp_path, body, line, message):
    (tmp_path / "map.txt").write_text(body)
    r = run_cli("score", os.path.join(PSB, "runs"), "-r", CLA, "--id-map", tmp_path / "map.txt")
    assert r.exit_code == 2
    assert r.stderr == f"Error: {tmp_path / 'map.txt'}:{line}: {message}\n"


TINY = "PSB 1\n2 4\na 0 2\n1\n2\nb 0 2\n3\n4\n"


def tiny_run(tmp_path):
    """c.cla (TINY) and runs/r: each of the 4 queries ranks the 3 other models in id order."""
    (tmp_path / "c.cla").write_text(TINY)
    run = tmp_path / "runs" / "r"
    run.mkdir(parents=True)
    for q in "1234":
        (run / f"{q}.txt").write_text("".join(f"{t}\n" for t in "1234" if t != q))
    return run


def test_a_padded_trec_run_scores_as_the_hand_computed_one(tmp_path):
    """Query 1 ranks 2 (relevant) first: AP 1; query 3 ranks 1, then 4: AP 1/2;
    queries 2 and 4 rank their relevant item first: AP 1.  Mean (1 + 1 + 1/2 + 1) / 4."""
    (tmp_path / "c.cla").write_text(TINY)
    ranked = {"1": ["2", "3", "4"], "2": ["1", "3", "4"], "3": ["1", "4", "2"], "4": ["3", "1", "2"]}
    lines = [f"{q.zfill(4)} Q0 {t.zfill(4)} {i + 1} {10 - i} tag\n" for q, ts in ranked.items() for i, t in enumerate(ts)]
    (tmp_path / "r.run").write_text("".join(lines))
    r = run_cli("score", tmp_path / "r.run", "-r", tmp_path / "c.cla", "-m", "AP,NN")
    assert r.exit_code == 2
    assert "no topic of run 'r.run' is a query; ids look zero-padded ('0001' vs '1')" in r.stderr
    r = run_cli("score", tmp_path / "r.run", "-r", tmp_path / "c.cla", "-m", "AP,NN", "--strip-zeros")
    assert r.exit_code == 0, r.output
    row = r.stdout.splitlines()[1].split(",")
    assert float(row[3]) == (1 + 1 + 1 / 2 + 1) / 4
    assert float(row[4]) == 3 / 4


def test_strip_zeros_leaves_a_matrix_as_it_is():
    """A matrix names no ids (its rows follow the classifications): nothing to map."""
    args = ["score", os.path.join(SAMPLES, "scene-image", "runs"), "-r", os.path.join(SAMPLES, "scene-image", "targets.cla"),
            "-q", os.path.join(SAMPLES, "scene-image", "image_queries.cla")]
    plain, stripped = run_cli(*args), run_cli(*args, "--strip-zeros")
    assert plain.exit_code == 0 and stripped.exit_code == 0
    assert plain.stdout == stripped.stdout


def test_a_target_spelled_two_ways_is_listed_twice(tmp_path):
    run = tiny_run(tmp_path)
    (run / "1.txt").write_text("2\n03\n3\n4\n")
    r = run_cli("score", tmp_path / "runs", "-r", tmp_path / "c.cla", "--strip-zeros")
    assert r.exit_code == 2
    assert r.stderr == f"Error: {run / '1.txt'}:3: expected each target once; '3' is already ranked at line 2\n"


def test_strip_zeros_refuses_two_relevance_ids_that_become_one(tmp_path):
    (tmp_path / "c.cla").write_text("PSB 1\n1 2\na 0 2\n01\n1\n")
    (tmp_path / "r.run").write_text("01 Q0 1 1 1 t\n1 Q0 01 1 1 t\n")
    r = run_cli("score", tmp_path / "r.run", "-r", tmp_path / "c.cla", "--strip-zeros")
    assert r.exit_code == 2
    assert "--strip-zeros: the relevance ids '01' and '1' are one id without leading zeros; use --id-map FILE" in r.stderr


# -- point 10: clutter of unzipped archives -------------------------------------

CLUTTER = [".DS_Store", "Thumbs.db", "desktop.ini", "readme.txt", "README.md", "._1000.txt"]


@pytest.fixture
def cluttered(tmp_path):
    runs = tmp_path / "runs"
    shutil.copytree(os.path.join(PSB, "runs"), runs)
    for name in CLUTTER:
        (runs / "D2" / name).write_text("not a ranked list\n")
    (runs / "D2" / "__MACOSX").mkdir()
    (runs / "D2" / "__MACOSX" / "._1000.txt").write_text("x")
    (runs / "__MACOSX" / "D2").mkdir(parents=True)  # the archive's own: never a run
    (runs / "__MACOSX" / "D2" / "._1000.txt").write_text("x")
    (runs / "Thumbs.db").write_bytes(b"\x00\x01")
    return runs


def test_clutter_is_passed_over_with_one_note(cluttered, clean):
    r = run_cli("score", cluttered, "-r", CLA)
    assert r.exit_code == 0, r.output
    assert r.stdout == clean  # no run named __MACOSX, D2 scored as the clean D2
    note = (f"{cluttered / 'D2'}: 7 entries that are not ranked lists passed over "
            "(.DS_Store, ._1000.txt, README.md, Thumbs.db, __MACOSX/, and 2 more)")
    assert r.stderr.count(note) == 1
    assert r.stderr.count("not ranked lists passed over") == 1
    assert r.stderr.count(f"{cluttered}: 1 file(s) that are not runs were passed over (Thumbs.db)") == 1


def test_clutter_in_a_run_folder_given_alone(cluttered, clean):
    r = run_cli("score", cluttered / "D2", "-r", CLA, "-m", "NN")
    assert r.exit_code == 0, r.output
    nn = [line for line in clean.splitlines() if ",D2," in line][0].split(",")[3]
    assert r.stdout.splitlines()[1].split(",")[3] == nn
    assert r.stderr.count("entries that are not ranked lists passed over") == 1


def test_dangling_links_among_the_clutter_are_passed_over(cluttered, clean):
    # a link left by an unzipped archive whose target is gone: clutter by its name, never stat'ed as an entry
    os.symlink(cluttered / "gone.txt", cluttered / "D2" / "readme.1st")
    os.symlink(cluttered / "gone", cluttered / "desktop.ini")
    r = run_cli("score", cluttered, "-r", CLA)
    assert r.exit_code == 0, r.output
    assert r.stdout == clean
    assert f"{cluttered / 'D2'}: 8 entries that are not ranked lists passed over" in r.stderr
    assert f"{cluttered}: 2 file(s) that are not runs were passed over (Thumbs.db, desktop.ini)" in r.stderr


def test_a_dangling_link_named_as_a_query_is_still_an_error(cluttered):
    os.symlink(cluttered / "gone.txt", cluttered / "D2" / "zzz.txt")
    r = run_cli("score", cluttered, "-r", CLA)
    assert r.exit_code == 2
    assert r.stderr.startswith(f"Error: {cluttered / 'D2' / 'zzz.txt'}: expected")


def test_check_passes_clutter_over(cluttered):
    r = run_cli("check", cluttered, "-r", CLA)
    assert r.exit_code == 0, r.output
    assert "error" not in r.stdout
    assert r.stdout.count("entries that are not ranked lists passed over") == 1


# -- point 12: check sums up many problems of one kind --------------------------


def test_check_sums_up_padded_target_ids(tmp_path):
    """Files named after queries, every target id padded: one line for the
    kind, its count (every line of every file), the first three examples."""
    run = tmp_path / "runs" / "r"
    run.mkdir(parents=True)
    src = os.path.join(PSB, "runs", "D2")
    total = 0
    for name in sorted(os.listdir(src)):
        with open(os.path.join(src, name), encoding="utf-8") as fh:
            rows = [line.split() for line in fh.read().splitlines() if line.strip()]
        rows = rows[1:]  # the query's own id: a header line, cut by the reader
        total += len(rows)
        (run / name).write_text("".join(f"0{f[0]} {f[1]}\n" for f in rows))
    r = run_cli("check", tmp_path / "runs", "-r", CLA)
    assert r.exit_code == 2
    files = sorted(os.listdir(src))
    first = files[0]
    assert r.stdout.splitlines() == [
        f"{run}: error: {total} x unknown target id … (first: {run / first}:1, {run / first}:2, {run / first}:3; "
        f"unknown target id '0{open(os.path.join(src, first)).read().split()[2]}')",
        f"{run}: note: 152 x the list ranks N of N targets (first: {run / files[0]}, {run / files[1]}, {run / files[2]}; "
        "the list ranks 0 of 151 targets)",
    ]
    assert r.stderr == "1 error(s), 0 warning(s): the runs would not score\n"
    r = run_cli("check", tmp_path / "runs", "-r", CLA, "--strip-zeros")
    assert r.exit_code == 0, r.output


def test_check_keeps_three_problems_of_a_kind_as_they_are(tmp_path):
    run = tiny_run(tmp_path)
    (run / "1.txt").write_text("x\ny\nz\n")
    r = run_cli("check", tmp_path / "runs", "-r", tmp_path / "c.cla")
    assert r.exit_code == 2
    assert r.stdout.splitlines() == [
        *(f"{run / '1.txt'}:{n}: error: unknown target id '{t}'" for n, t in ((1, "x"), (2, "y"), (3, "z"))),
        f"{run / '1.txt'}: note: the list ranks 0 of 3 targets",
    ]


def test_check_names_a_padded_run_in_one_line(padded):
    r = run_cli("check", padded, "-r", CLA)
    assert r.exit_code == 2
    assert r.stdout.splitlines()[0] == (
        f"{padded / 'D2'}: error: no file of run 'D2' names a query; ids look zero-padded ('001000' vs '1000'): "
        "try --strip-zeros or --id-map FILE"
    )
    assert len(r.stdout.splitlines()) == 4  # one per run


def test_a_padded_query_line_at_the_top_of_a_list_is_the_header(tmp_path):
    """A SHREC 2012/2014 list opens with a line holding only its query id; in a
    padded run that line reads ``0007``: with --strip-zeros it is the header, not
    a ranked target.  Queries apart from the targets (as in ShapeNet's or the
    sketch tracks' layout), so nothing drops the line as the query's own item.
    Query 7 of class A; its list t1, t3, t2, t4 with t1, t2 of class A: NN 1,
    AP (1/1 + 2/3) / 2 = 5/6, counted by hand."""
    (tmp_path / "targets.cla").write_text("PSB 1\n2 4\n\nA 0 2\nt1\nt2\n\nB 0 2\nt3\nt4\n")
    (tmp_path / "queries.cla").write_text("PSB 1\n2 1\n\nA 0 1\n7\n\nB 0 0\n")
    for name, head in (("clean", "7"), ("padded", "0007")):
        (tmp_path / name / "R").mkdir(parents=True)
        (tmp_path / name / "R" / f"{head}.txt").write_text(f"{head}\nt1 0.1\nt3 0.2\nt2 0.3\nt4 0.4\n")
    common = ["-r", tmp_path / "targets.cla", "--queries", tmp_path / "queries.cla", "-m", "NN,AP", "--format", "csv"]
    clean = run_cli("score", tmp_path / "clean", *common)
    padded = run_cli("score", tmp_path / "padded", *common, "--strip-zeros")
    assert clean.exit_code == 0 and padded.exit_code == 0, (clean.output, padded.output)
    row = padded.stdout.splitlines()[1].split(",")
    assert padded.stdout.splitlines()[0].split(",")[-2:] == ["NN", "AP"]
    assert float(row[-2]) == 1.0 and float(row[-1]) == pytest.approx(5 / 6, abs=1e-15)
    assert padded.stdout == clean.stdout


def test_a_padded_trec_run_names_the_files_own_ids_and_lines(tmp_path):
    """Under --strip-zeros a TREC error names the lines and the ids as the run spells them,
    not the relevance's spelling (which the file does not hold)."""
    (tmp_path / "q.txt").write_text("001 0 0010 1\n001 0 0011 0\n")
    (tmp_path / "run.trec").write_text("1 Q0 11 1 6 r\n1 Q0 10 2 5 r\n1 Q0 010 3 4 r\n")
    r = run_cli(tmp_path / "run.trec", "-r", tmp_path / "q.txt", "--run-format", "trec", "--strip-zeros", "-m", "AP")
    assert r.exit_code == 2
    assert r.stderr == f"Error: {tmp_path / 'run.trec'}:3: expected each target once per query; 1 010 is already ranked at line 2\n"
    (tmp_path / "c.cla").write_text("PSB 1\n1 2\na 0 2\n0010\n0011\n")
    (tmp_path / "run2.trec").write_text("0010 Q0 11 1 6 r\n0010 Q0 099 2 5 r\n")
    r = run_cli(tmp_path / "run2.trec", "-r", tmp_path / "c.cla", "--run-format", "trec", "--strip-zeros", "-m", "AP")
    assert r.exit_code == 2
    assert r.stderr == f"Error: {tmp_path / 'run2.trec'}:2: expected a target id of the collection, got unknown id '099'\n"


def test_check_counts_every_problem_of_a_trec_run_before_the_per_file_cut(tmp_path):
    """40 lines with a NaN score: one summary line says 40, not the 20 kept by the per-file cut; the
    query of those lines then has no line scoring keeps, as --lenient counts it (1 queries without a
    ranked list): check says so too (it said nothing, where lenient counted the query)."""
    (tmp_path / "q.txt").write_text("1 0 d1 1\n")
    (tmp_path / "run.trec").write_text("".join(f"1 Q0 d{i} {i} NaN r\n" for i in range(1, 41)))
    r = run_cli("check", tmp_path / "run.trec", "-r", tmp_path / "q.txt", "--run-format", "trec")
    assert r.exit_code == 2
    run = tmp_path / "run.trec"
    assert r.stdout.splitlines() == [
        f"{run}: error: 40 x expected a number as score (5th field), got NaN (first: {run}:1, {run}:2, {run}:3; "
        "expected a number as score (5th field), got NaN)",
        f"{run}: error: expected a ranking for every query; run 'run.trec' has none for 1 of 1 queries, got first missing: '1'",
    ]
    lenient = run_cli(tmp_path / "run.trec", "-r", tmp_path / "q.txt", "--run-format", "trec", "--lenient")
    assert "40 malformed lines dropped, 1 queries without a ranked list (scored 0)" in lenient.stderr


def test_check_and_lenient_agree_on_a_query_whose_lines_all_name_unknown_targets(tmp_path):
    """A closed collection (--collection): query 2's two lines both name targets outside it.  --lenient
    drops them and counts query 2 as without a ranked list; check lists that query as --lenient counts it
    (it counted the query as ranked: 3 of 3 where scoring had 2 of 3)."""
    (tmp_path / "q.txt").write_text("1 0 a 1\n2 0 b 1\n3 0 c 1\n")
    (tmp_path / "coll.cla").write_text("PSB 1\n1 3\n\nk 0 3\na\nb\nc\n")
    (tmp_path / "run.trec").write_text("1 Q0 a 1 0.9 r\n2 Q0 x 1 0.9 r\n2 Q0 y 2 0.8 r\n3 Q0 c 1 0.9 r\n")
    args = [tmp_path / "run.trec", "-r", tmp_path / "q.txt", "--collection", tmp_path / "coll.cla", "--lenient"]
    run = tmp_path / "run.trec"
    r = run_cli("check", *args)
    assert r.exit_code == 0
    assert r.stdout.splitlines() == [
        f"{run}:2: warning: expected a target id of the collection, got unknown id 'x'",
        f"{run}:3: warning: expected a target id of the collection, got unknown id 'y'",
        f"{run}: warning: expected a ranking for every query; run 'run.trec' has none for 1 of 3 queries, got first missing: '2'",
    ]
    scored = run_cli(*args)
    assert scored.exit_code == 0
    assert "--lenient: run 'run.trec': 1 queries without a ranked list (scored 0), 2 unknown target ids dropped" in scored.stderr
