"""Input rules (issue 16): regular files only, lines of at most 1 MiB, UTF-8
text, one number grammar, empty ranked lists, escaped input in messages.

Each rule through the library (``shrec_score.score``, ``check_runs``) and
through the console script in a fresh process (exit status 2, one line on
stderr naming the file).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import pytest

import shrec_score
from shrec_score import InputError
from shrec_score.check import Problem, check_runs
from shrec_score.io import runs as runs_io
from shrec_score.io import text as text_io
from shrec_score.io.matrix import read_matrix, read_npy_matrix
from shrec_score.io.numbers import parse_number
from shrec_score.loading import is_classification_file, load_relevance

from .conftest import ROOT

CLA = "PSB 1\n2 6\na 0 3\nq1\nq2\nq3\nb 0 3\nq4\nq5\nq6\n"
IDS = ["q1", "q2", "q3", "q4", "q5", "q6"]
ENTRY = "import sys; from shrec_score.cli import main; sys.argv[0] = 'shrec-score'; main()"


def cli(*args: object, cwd: object = None, preexec_fn=None, timeout: float = 60) -> tuple[subprocess.CompletedProcess, float]:
    """The console script in a fresh process: the result and its wall time.

    A reader that blocked (on a FIFO, a device) would hang: ``timeout`` turns
    that into a failure.  No test bounds the time itself (a loaded machine
    starts Python slowly: the old 2 s bounds failed under a load of 12)."""
    t = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-c", ENTRY, *map(str, args)], cwd=cwd or ROOT, capture_output=True, text=True, timeout=timeout, preexec_fn=preexec_fn
    )
    return r, time.perf_counter() - t


def one_line_error(r: subprocess.CompletedProcess, *parts: str) -> str:
    """Exit status 2 and one line on stderr holding every part."""
    assert r.returncode == 2, (r.returncode, r.stderr[-500:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr[-1000:]
    for p in parts:
        assert p in lines[0], (p, lines[0])
    return lines[0]


def lists_of(distances: bool = True) -> dict[str, list[str]]:
    """A perfect ranking per query: own class first, the other class after."""
    out = {}
    for q in IDS:
        same = [t for t in IDS if t != q and (t <= "q3") == (q <= "q3")]
        other = [t for t in IDS if (t <= "q3") != (q <= "q3")]
        out[q] = [f"{t} {0.1 * (i + 1):.1f}" if distances else t for i, t in enumerate(same + other)]
    return out


@pytest.fixture
def track(tmp_path):
    """c.cla and runs/r: one ranked-list run, every list perfect."""
    (tmp_path / "c.cla").write_text(CLA)
    run = tmp_path / "runs" / "r"
    run.mkdir(parents=True)
    for q, lines in lists_of().items():
        (run / f"{q}.txt").write_text("".join(line + "\n" for line in lines))
    return tmp_path


@contextlib.contextmanager
def fifo_unblocked_after(path, seconds: float = 5):
    """A FIFO at ``path``; should a reader open it (a bug), a writer comes
    after ``seconds`` so that the test fails instead of hanging."""
    os.mkfifo(path)

    def writer() -> None:
        with contextlib.suppress(OSError):
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))

    timer = threading.Timer(seconds, writer)
    timer.daemon = True
    timer.start()
    try:
        yield path
    finally:
        timer.cancel()


# -- 1. regular files only -------------------------------------------------------


@pytest.mark.parametrize("mode", [[], ["--lenient"], ["check"]])
def test_a_fifo_as_a_query_file_exits_2_at_once(track, mode):
    fifo = track / "runs" / "r" / "q3.txt"
    fifo.unlink()
    os.mkfifo(fifo)
    args = ["check", track / "runs", "-r", track / "c.cla"] if mode == ["check"] else [track / "runs", "-r", track / "c.cla", *mode]
    r, elapsed = cli(*args)
    if mode == ["check"]:  # the problems on stdout, the summary on stderr
        assert r.returncode == 2
        assert f"{fifo}: error: expected a regular file or a folder, got a FIFO" in r.stdout.splitlines()
        assert "no ranked list for query 'q3'" not in r.stdout  # the file is there, it is refused
    else:
        one_line_error(r, str(fifo), "expected a regular file or a folder, got a FIFO")


@pytest.mark.parametrize("mode", [[], ["--lenient"], ["check"]])
def test_a_fifo_at_runs_level_exits_2_at_once(track, mode):
    fifo = track / "runs" / "zz.trec"
    os.mkfifo(fifo)
    args = ["check", track / "runs", "-r", track / "c.cla"] if mode == ["check"] else [track / "runs", "-r", track / "c.cla", *mode]
    r, elapsed = cli(*args)
    if mode == ["check"]:
        assert r.returncode == 2 and f"{fifo}: error: expected a regular file or a folder, got a FIFO" in r.stdout.splitlines()
    else:
        one_line_error(r, str(fifo), "got a FIFO")
    r, elapsed = cli(fifo, "-r", track / "c.cla", *(m for m in mode if m != "check"))  # the FIFO itself as RUNS
    one_line_error(r, f"{fifo}: expected a run folder, a folder of runs or a run file, got a FIFO")


def test_fifos_and_devices_as_relevance_queries_collection_and_config_are_refused(track):
    runs = track / "runs"
    with fifo_unblocked_after(track / "fifo") as fifo:
        for call in (
            lambda: shrec_score.score([runs], fifo),
            lambda: shrec_score.score([runs], track / "c.cla", queries=fifo),
            lambda: shrec_score.score_kendall([runs], fifo),
            lambda: load_relevance(fifo),
            lambda: is_classification_file(fifo),
        ):
            with pytest.raises(InputError, match=re.escape(f"{fifo}: expected a regular file, got a FIFO")):
                call()
        r, elapsed = cli(runs, "-r", track / "c.cla", "--config", fifo)
        one_line_error(r, f"{fifo}: expected a regular file, got a FIFO")
        (track / "t.yaml").write_text(f"relevance: {fifo}\n")
        r, _ = cli(runs, "--config", track / "t.yaml")
        one_line_error(r, "t.yaml:1: 'relevance': expected a regular file, got", "a FIFO")
    with pytest.raises(InputError, match="/dev/null: expected a regular file, got a character device"):
        shrec_score.score([runs], "/dev/null")


def test_a_symlink_to_dev_zero_as_a_query_file_exits_2_within_1_gib(track):
    resource = pytest.importorskip("resource")
    link = track / "runs" / "r" / "q2.txt"
    link.unlink()
    link.symlink_to("/dev/zero")

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    for args in ([], ["--lenient"]):
        r, _ = cli(track / "runs", "-r", track / "c.cla", *args, preexec_fn=limit)
        one_line_error(r, f"{link}: expected a regular file or a folder, got a character device")
    r, _ = cli("check", track / "runs", "-r", track / "c.cla", preexec_fn=limit)
    assert r.returncode == 2 and f"{link}: error: expected a regular file or a folder, got a character device" in r.stdout


def test_symlinks_to_regular_files_are_followed(track):
    run = track / "runs" / "r"
    real = track / "q1-real.txt"
    (run / "q1.txt").rename(real)
    (run / "q1.txt").symlink_to(real)
    board = shrec_score.score([track / "runs"], track / "c.cla", measures=["AP"]).leaderboard
    assert board.loc[0, "AP"] == 1.0


def test_unreachable_entries_name_the_path_and_the_system_reason(track):
    run = track / "runs" / "r"
    loop = run / "q4.txt"
    loop.unlink()
    loop.symlink_to(loop)  # a symbolic-link loop
    with pytest.raises(InputError, match=re.escape(f"{loop}: expected a regular file or a folder, got Too many levels of symbolic links")):
        shrec_score.score([track / "runs"], track / "c.cla")
    problems = [str(p) for p in check_runs([str(track / "runs")], load_relevance(track / "c.cla"))]
    assert f"{loop}: error: expected a regular file or a folder, got Too many levels of symbolic links" in problems
    not_dir = track / "c.cla" / "runs"
    r, _ = cli(not_dir, "-r", track / "c.cla")
    one_line_error(r, f"{not_dir}: expected a run folder, a folder of runs or a run file, got Not a directory")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(track / "runs" / "s"))
        with pytest.raises(InputError, match=re.escape(f"{track / 'runs' / 's'}: expected a regular file or a folder, got a socket")):
            shrec_score.score([track / "runs"], track / "c.cla")
    finally:
        sock.close()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads every file: no permission error to see")
def test_permission_denied_is_an_input_error(track):
    folder = track / "runs" / "r"
    (folder / "q1.txt").chmod(0)
    with pytest.raises(InputError, match=re.escape(f"{folder / 'q1.txt'}: expected a readable file, got Permission denied")):
        shrec_score.score([track / "runs"], track / "c.cla")
    folder.chmod(0)
    try:
        r, _ = cli(track / "runs", "-r", track / "c.cla")
        one_line_error(r, str(folder), "Permission denied")
    finally:
        folder.chmod(0o755)


def test_names_that_are_not_utf8_are_refused_and_shown_escaped(track):
    run = track / "runs" / "r"
    bad = os.path.join(os.fsencode(run), b"q\xff.txt")
    with open(bad, "w") as fh:
        fh.write("q1 0.1\n")
    name = os.fsdecode(b"q\xff.txt")  # what os.listdir gives: a surrogate escape
    with pytest.raises(InputError) as info:
        shrec_score.score([track / "runs"], track / "c.cla")
    assert str(info.value) == f"{run}/q\\udcff.txt: expected file names in UTF-8, got 'q\\udcff.txt'"
    assert info.value.got == "'q\\udcff.txt'" and name.encode("utf-8", "surrogateescape") == b"q\xff.txt"
    r, _ = cli(track / "runs", "-r", track / "c.cla")
    one_line_error(r, "expected file names in UTF-8, got 'q\\udcff.txt'")


def test_clutter_whose_name_is_not_utf8_is_passed_over_by_score_as_by_check(track):
    """A README whose name is not UTF-8 beside the lists: check noted it as passed over, score refused the run."""
    run = track / "runs" / "r"
    with open(os.path.join(os.fsencode(run), b"readme-\xe9.txt"), "w") as fh:
        fh.write("our method\n")
    plain = shrec_score.score([track / "runs"], track / "c.cla", measures=["NN"]).leaderboard
    assert plain["NN"].tolist() == [1.0]  # every list perfect (the fixture)
    r, _ = cli("check", track / "runs", "-r", track / "c.cla")
    assert r.returncode == 0 and r.stdout == f"{run}: note: 1 entries that are not ranked lists passed over ('readme-\\udce9.txt')\n"


def test_a_file_name_with_a_newline_is_one_check_line(track):
    weird = track / "runs" / "r" / "q1\n.txt"
    weird.write_text("q2 0.1\n")
    problems = check_runs([str(track / "runs")], load_relevance(track / "c.cla"))
    line = next(str(p) for p in problems if "q1\n" in p.path)
    assert "\n" not in line and line == f"{track / 'runs' / 'r'}/q1\\n.txt: error: a file for an unknown query 'q1\\n' (files are named after query ids)"
    assert str(Problem("a\nb\ufeff.txt", 3, "error", "x\ny")) == "a\\nb\\ufeff.txt:3: error: x\\ny"


# -- 2. lines of at most 1 MiB ---------------------------------------------------


def test_a_20_mb_single_token_line_is_refused_in_a_short_message(track):
    path = track / "runs" / "r" / "q2.txt"
    path.write_bytes(b"x" * 20_000_000 + b"\n")
    expected = f"{path}:1: expected lines of at most 1,048,576 bytes (1 MiB), got a line of 20,000,000 bytes"
    with pytest.raises(InputError) as info:
        shrec_score.score([track / "runs"], track / "c.cla")
    assert str(info.value) == expected
    for args in ([], ["--lenient"]):
        r, _ = cli(track / "runs", "-r", track / "c.cla", *args)
        one_line_error(r, expected)
        assert len(r.stderr.encode()) < 300
    r, _ = cli("check", track / "runs", "-r", track / "c.cla")
    assert r.returncode == 2 and len(r.stdout.encode()) + len(r.stderr.encode()) < 600
    assert f"{path}:1: error: expected lines of at most 1,048,576 bytes (1 MiB), got a line of 20,000,000 bytes" in r.stdout.splitlines()


def test_the_limit_is_1_mib_exactly_in_every_text_reader(tmp_path):
    limit = text_io.MAX_LINE_BYTES
    assert limit == 1_048_576
    ok, long = tmp_path / "ok.txt", tmp_path / "long.txt"
    ok.write_bytes(b"a\n" + b"y" * limit + b"\r\nb")  # CR counts: 1 MiB + 1 on line 2
    long.write_bytes(b"a\nb\n" + b"y" * (limit + 1) + b"\n")
    with pytest.raises(InputError, match=re.escape("ok.txt:2: expected lines of at most 1,048,576 bytes (1 MiB), got a line of 1,048,577 bytes")):
        text_io.read_text(ok)
    ok.write_bytes(b"a\n" + b"y" * limit + b"\nb")
    assert len(text_io.read_text(ok)) == limit + 4
    list(text_io.pieces(str(ok)))
    message = re.escape("long.txt:3: expected lines of at most 1,048,576 bytes (1 MiB), got a line of 1,048,577 bytes")
    with pytest.raises(InputError, match=message):
        list(text_io.pieces(str(long)))
    # every reader: .cla, qrels (both paths), TREC (streamed and whole), ground truth, text matrix
    big = b"".join(b"q%d 0 d%d 1\n" % (i, i) for i in range(120_000))  # past the pyarrow threshold
    cases = {
        "c.cla": b"PSB 1\n1 1\n\na 0 1\n" + b"y" * (limit + 1) + b"\n",
        "small.qrels": b"q1 0 d1 1\n" + b"y" * (limit + 1) + b"\n",
        "big.qrels": big + b"q1 0 " + b"y" * (limit + 1) + b" 1\n",
        "gt.csv": b"query,item,score\n" + b"y" * (limit + 1) + b"\n",
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
    line = {"c.cla": 5, "small.qrels": 2, "big.qrels": 120_001, "gt.csv": 2}
    for name in ("c.cla", "small.qrels", "big.qrels"):
        with pytest.raises(InputError, match=rf"{re.escape(name)}:{line[name]}: expected lines of at most 1,048,576 bytes"):
            load_relevance(tmp_path / name)
    with pytest.raises(InputError, match=r"gt.csv:2: expected lines of at most"):
        shrec_score.score_kendall([tmp_path], tmp_path / "gt.csv")
    (tmp_path / "c.cla").write_text(CLA)
    trec = "".join(f"{q} Q0 {t} 1 {9 - i} x\n" for q in IDS for i, t in enumerate(IDS))
    (tmp_path / "r.trec").write_bytes(trec.encode() + b"q6 Q0 q1 1 0.5 " + b"y" * limit + b"\n")
    for lenient in (False, True):  # streamed, then read whole
        with pytest.raises(InputError, match=r"r.trec:37: expected lines of at most 1,048,576 bytes \(1 MiB\), got a line of 1,048,591 bytes"):
            shrec_score.score([tmp_path / "r.trec"], tmp_path / "c.cla", lenient=lenient)
    (tmp_path / "m.txt").write_bytes(b"0 1 1 1 1 1\n" * 3 + b"0" * (limit + 1) + b"\n")
    with pytest.raises(InputError, match=r"m.txt:4: expected lines of at most"):
        read_matrix(str(tmp_path / "m.txt"), (6, 6))


def test_long_line_finder_equals_a_split(tmp_path):
    rng = np.random.default_rng(7)

    def first_long(data: bytes, limit: int):
        at = 0
        for line in data.split(b"\n"):
            if len(line) > limit:
                return at, len(line)
            at += len(line) + 1
        return None

    for _ in range(2000):
        limit = int(rng.integers(1, 12))
        data = bytes(rng.choice(list(b"ab\n" if rng.random() < 0.5 else b"aaaaaab\n"), size=int(rng.integers(0, 80))))
        assert text_io.long_line(data, limit) == first_long(data, limit)


# -- 3. one number grammar --------------------------------------------------------


REFUSED = ["1_000", "١٢", "１２", "0x1p3", "nan(1)", "1e", "--1", "1.5f"]
ACCEPTED = ["1e3", "-0.5", ".5", "inf", "5.", "+1E-3", "-Infinity"]


@pytest.mark.parametrize("token", REFUSED)
def test_refused_distances_get_one_message_in_lists_and_matrices(track, token):
    run = track / "runs" / "r"
    lines = lists_of()["q1"]
    lines[2] = lines[2].split()[0] + " " + token
    (run / "q1.txt").write_text("".join(line + "\n" for line in lines))
    expected = f"{run / 'q1.txt'}:3: expected a number as distance, got '{token}'"
    with pytest.raises(InputError) as info:
        shrec_score.score([track / "runs"], track / "c.cla")
    assert str(info.value) == expected
    rep = shrec_score.score([track / "runs"], track / "c.cla", lenient=True)
    assert any("1 bad distances ignored (target kept)" in w for w in rep.warnings)
    problems = [str(p) for p in check_runs([str(track / "runs")], load_relevance(track / "c.cla"))]
    assert f"{run / 'q1.txt'}:3: error: distance '{token}' is not a number" in problems
    rows = [" ".join(str(float(i != j)) for j in range(6)) for i in range(6)]
    rows[1] = rows[1].rsplit(" ", 1)[0] + " " + token
    (track / "m.txt").write_text("\n".join(rows) + "\n")
    with pytest.raises(InputError) as info:
        shrec_score.score([track / "m.txt"], track / "c.cla", matrix_order="listing")
    assert str(info.value) == f"{track / 'm.txt'}:2: expected a number as distance, got '{token}'"


def test_accepted_distances_are_read_as_strtod_reads_them(track):
    run = track / "runs" / "r"
    values = [float(t) for t in ACCEPTED[:5]]  # 1e3 -0.5 .5 inf 5.
    lines = [f"{line.split()[0]} {tok}" for line, tok in zip(lists_of()["q1"], ACCEPTED[:5])]
    (run / "q1.txt").write_text("".join(line + "\n" for line in lines))
    from shrec_score.io.lists import parse_list

    index = {t: i for i, t in enumerate(IDS)}
    _, dist = parse_list(str(run / "q1.txt"), (run / "q1.txt").read_text(), "q1", index)
    assert dist.tolist() == values == [1000.0, -0.5, 0.5, float("inf"), 5.0]
    assert shrec_score.score([track / "runs"], track / "c.cla", measures=["AP"]).leaderboard.loc[0, "AP"] == 1.0
    m = np.ones((6, 6))
    np.fill_diagonal(m, 0)
    text = "\n".join(" ".join(("-0.5" if i == j else t) for j, t in zip(range(6), ["1e3", ".5", "inf", "5.", "+1E-3", "-Infinity"])) for i in range(6))
    (track / "m.txt").write_text(text + "\n")
    got = read_matrix(str(track / "m.txt"), (6, 6))
    assert got[0].tolist() == [-0.5, 0.5, float("inf"), 5.0, 0.001, float("-inf")]


def test_the_grammar_is_strtods_for_decimal_numbers():
    for token in ACCEPTED + ["0", "+.5e+10", "NaN", "-nan", "iNfInItY", "00012", "1.e5"]:
        assert parse_number(token) is not None, token
    for token in REFUSED + ["", ".", "+", "e5", ".e5", "1.2.3", "1e3.5", "infinit", "inff", "1 2", " 1", "1\u00a0", "٣"]:
        assert parse_number(token) is None, token


def test_pyarrow_reads_trec_scores_by_the_same_grammar(tmp_path):
    """pyarrow parses TREC runs; what it reads as a number (not a null, not
    NaN) must be what the grammar reads, with the same value."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.csv as pcsv

    tokens = ACCEPTED + REFUSED + ["0", "+.5e+10", "NaN", "nan", "-nan", "iNfInItY", "00012", "1.e5", ".", "+", "e5", "inff", "1,5", "١", "1e999", "-0"]
    for token in tokens:
        data = f"q1 Q0 d1 1 {token} x\n".encode()
        try:
            table = pcsv.read_csv(
                io.BytesIO(data),
                read_options=pcsv.ReadOptions(column_names=["q", "q0", "d", "rank", "score", "tag"]),
                parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False),
                convert_options=pcsv.ConvertOptions(column_types={"score": pa.float64()}),
            )
            value = table.column("score")[0].as_py()
        except pa.ArrowInvalid:
            value = None
        ours = parse_number(token)
        if ours is not None and np.isnan(ours):
            assert value is None or np.isnan(value), token  # NaN: a null for pyarrow, refused as a score either way
        elif value is not None and np.isnan(value):
            assert ours is None and token.lower().startswith("nan("), token  # NaN payloads: refused as NaN scores
        else:
            assert value == ours, (token, value, ours)


def test_trec_and_ground_truth_refuse_the_same_tokens(tmp_path):
    (tmp_path / "c.cla").write_text(CLA)
    good = "".join(f"{q} Q0 {t} 1 {9 - i} x\n" for q in IDS for i, t in enumerate(IDS))
    for token in ("1_000", "١٢", "１２"):
        (tmp_path / "r.trec").write_text(good + f"q1 Q0 zz 1 {token} x\n")
        for lenient in (False,):
            with pytest.raises(InputError) as info:
                shrec_score.score([tmp_path / "r.trec"], tmp_path / "c.cla", lenient=lenient)
            assert str(info.value) == f"{tmp_path / 'r.trec'}:37: expected a number as score (5th field), got '{token}'"
        rep = shrec_score.score([tmp_path / "r.trec"], tmp_path / "c.cla", lenient=True)
        assert any("1 malformed lines dropped" in w for w in rep.warnings)
        (tmp_path / "gt.csv").write_text(f"query,item,score\ns1,a,1\ns1,b,{token}\n")
        with pytest.raises(InputError, match=re.escape(f"gt.csv:3: expected a finite number as score, got '{token}'")):
            shrec_score.score_kendall([tmp_path / "r.trec"], tmp_path / "gt.csv")
    (tmp_path / "g.qrels").write_text("q1 0 d1 1\nq1 0 d2 ١\n")
    with pytest.raises(InputError, match=re.escape("g.qrels:2: expected a whole number as grade, got '١'")):
        load_relevance(tmp_path / "g.qrels")
    (tmp_path / "n.cla").write_text("PSB 1\n1 ²\n\na 0 1\nq1\n")
    with pytest.raises(InputError, match=re.escape("n.cla:2: expected \"numClasses numModels\" (two whole numbers), got '1 ²'")):
        load_relevance(tmp_path / "n.cla")


# -- 4. UTF-16 and UTF-32 ---------------------------------------------------------


@pytest.mark.parametrize(
    "codec, bom", [("utf-16-le", "FF FE"), ("utf-16-be", "FE FF"), ("utf-32-le", "FF FE 00 00"), ("utf-32-be", "00 00 FE FF")]
)
def test_utf16_and_utf32_files_are_told_to_be_saved_as_utf8(track, codec, bom):
    kind = codec[:6].upper()
    message = f"expected UTF-8 text, got {kind} (byte-order mark {bom}); save the file as UTF-8"
    wide = track / "wide.cla"
    wide.write_bytes(("\ufeff" + CLA).encode(codec))
    with pytest.raises(InputError, match=re.escape(f"{wide}: {message}")):
        is_classification_file(wide)  # not taken for qrels
    r, _ = cli(track / "runs", "-r", wide)
    one_line_error(r, f"{wide}: {message}")
    query = track / "runs" / "r" / "q2.txt"
    query.write_bytes(("\ufeff" + query.read_text()).encode(codec))
    r, _ = cli(track / "runs", "-r", track / "c.cla")
    one_line_error(r, f"{query}: {message}")
    problems = [str(p) for p in check_runs([str(track / "runs")], load_relevance(track / "c.cla"))]
    assert f"{query}: error: {message}" in problems
    trec = track / "r.trec"
    trec.write_bytes(("\ufeff" + "".join(f"{q} Q0 {t} 1 {9 - i} x\n" for q in IDS for i, t in enumerate(IDS))).encode(codec))
    with pytest.raises(InputError, match=re.escape(f"{trec}: {message}")):
        runs_io.detect_file_format(str(trec))  # not taken for a binary matrix
    for fmt in ("trec", "matrix"):
        with pytest.raises(InputError, match=re.escape(f"{trec}: {message}")):
            shrec_score.score([trec], track / "c.cla", run_format=fmt, matrix_order="listing")


def test_a_psb_binary_matrix_starting_with_ff_fe_is_still_a_matrix(tmp_path):
    rng = np.random.default_rng(3)
    m = rng.random((6, 6)).astype(np.float32)
    m[0, 0] = np.frombuffer(b"\xff\xfe\x7f\x3f", dtype="<f4")[0]  # 0.99998...: the bytes FF FE first
    path = tmp_path / "m.bin"
    m.tofile(path)
    assert path.read_bytes()[:2] == b"\xff\xfe"
    assert runs_io.detect_file_format(str(path)) == "matrix"
    np.testing.assert_array_equal(read_matrix(str(path), (6, 6)), m)


def test_a_psb_binary_matrix_without_a_newline_byte_in_its_first_mib_is_still_a_matrix(tmp_path):
    """Integer-valued float32 distances (1.0 is 00 00 80 3F) may hold no 0x0A byte for more than a
    MiB: no line of text, so a matrix, not 'expected lines of at most 1 MiB'."""
    m = np.ones((600, 600), dtype=np.float32)  # 1.44 MB, no 0x0A byte
    np.fill_diagonal(m, 0)
    path = tmp_path / "m.bin"
    m.tofile(path)
    assert b"\n" not in path.read_bytes()
    assert runs_io.detect_file_format(str(path)) == "matrix"
    text = tmp_path / "wide.txt"  # a text file with such a line is still refused, naming it
    text.write_bytes(b"x" * (2 << 20) + b"\n")
    with pytest.raises(InputError, match=re.escape(f"{text}:1: expected lines of at most 1,048,576 bytes (1 MiB)")):
        runs_io.detect_file_format(str(text))


def test_a_grade_above_127_is_refused_naming_its_line_plain_or_compressed(tmp_path):
    """Grades are held in a byte: 256 became 0 and 128 an IndexError (exit 1). Up to 127 they score as
    trec_eval would (hand computation below); above, one line names the file and the line, whichever
    reader (the line reader, or pyarrow for a compressed or large file) reads it; a negative grade of
    any size is unjudged, as every negative grade."""
    import gzip

    run = tmp_path / "r.run"
    run.write_text("q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.3 t\nq1 Q0 d3 3 0.2 t\nq2 Q0 d1 1 0.3 t\n")
    ok = tmp_path / "ok.qrels"
    ok.write_text("q1 0 d1 0\nq1 0 d2 127\nq1 0 d3 1\nq2 0 d1 1\nq2 0 d9 -99999999999999999999\n")
    board = shrec_score.score([run], ok, measures=["AP", "P@2"]).leaderboard.iloc[0]
    assert board["AP"] == pytest.approx(((1 / 2 + 2 / 3) / 2 + 1) / 2) and board["P@2"] == pytest.approx(0.5)
    for grade in ("128", "256", "99999999999999999999"):
        bad = tmp_path / f"g{grade}.qrels"
        bad.write_text(f"q1 0 d1 0\nq1 0 d2 {grade}\nq2 0 d1 1\n")
        with pytest.raises(InputError, match=re.escape(f"{bad}:2: expected a grade of at most 127")):
            shrec_score.score([run], bad)
        packed = tmp_path / f"g{grade}.qrels.gz"
        packed.write_bytes(gzip.compress(bad.read_bytes()))
        with pytest.raises(InputError, match=re.escape(f"{packed}:2: expected a grade of at most 127")):
            shrec_score.score([run], packed)


def test_a_trec_run_whose_tag_holds_three_colons_is_not_guessed_a_shrec2011_run(tmp_path):
    """It was read as SHREC 2011 ("expected a whole number as rank, got 'bm25'"); both readings are
    possible, so auto names the two choices (docs/inputs.md) and --run-format trec scores it."""
    run = tmp_path / "colon.run"
    run.write_text("q1 Q0 d1 1 0.5 team:bm25:v1:uni\nq1 Q0 d2 2 0.4 team:bm25:v1:uni\nq1 Q0 d3 3 0.3 team:bm25:v1:uni\n")
    qrels = tmp_path / "q.qrels"
    qrels.write_text("q1 0 d2 1\nq1 0 d3 1\n")
    with pytest.raises(InputError, match=re.escape(f"{run}: cannot tell the run format: the first line reads as a TREC run line and as a SHREC 2011 header")):
        shrec_score.score([run], qrels)
    board = shrec_score.score([run], qrels, measures=["AP"], run_format="trec").leaderboard.iloc[0]
    assert board["AP"] == pytest.approx((1 / 2 + 2 / 3) / 2)


# -- 5. broken .npy files: an error, no numpy warning first ----------------------


def npy_with_header(path, shape, payload: bytes = b"\0" * 288) -> None:
    from numpy.lib import format as npy_format

    buf = io.BytesIO()
    npy_format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False, "shape": shape})
    path.write_bytes(buf.getvalue() + payload)


def test_broken_npy_files_give_an_error_and_no_runtime_warning(tmp_path):
    path = tmp_path / "m.npy"
    good = io.BytesIO()
    np.save(good, np.zeros((6, 6)))
    cases = {
        "truncated": (lambda: path.write_bytes(good.getvalue()[:-20]), "expected a .npy file of 416 bytes (a 6 x 6 float64 array, as its header says), got 396 bytes"),
        "lying": (lambda: npy_with_header(path, (10**10, 10**10)), "expected a .npy file of 800,000,000,000,000,000,128 bytes"),
        "overflowing": (lambda: npy_with_header(path, (2**62, 4)), "a 4611686018427387904 x 4 float64 array"),
        "no header": (lambda: path.write_bytes(good.getvalue()[:60]), "expected a .npy array, got EOF"),
    }
    for name, (write, message) in cases.items():
        write()
        with warnings.catch_warnings(record=True) as seen:  # (in the test only: the library never touches the filters)
            warnings.simplefilter("always")
            with pytest.raises(InputError, match=re.escape(message)):
                read_npy_matrix(str(path))
        assert not [w for w in seen if issubclass(w.category, RuntimeWarning)], name
    npy_with_header(path, (10**10, 10**10))
    (tmp_path / "c.cla").write_text(CLA)
    r, _ = cli(path, "-r", tmp_path / "c.cla", "--matrix-order", "listing")
    assert "RuntimeWarning" not in r.stderr
    one_line_error(r, f"{path}: expected a .npy file of")


def test_a_npy_or_psb_binary_matrix_is_read_by_rows_as_numpy_indexes_it(tmp_path):
    """Only the rows asked for are read (no memory map of the whole file): every
    index numpy takes gives what numpy gives on the loaded array (the oracle)."""
    m = np.random.default_rng(5).random((7, 4)).astype(">f4")  # another byte order than the host's
    np.save(tmp_path / "m.npy", m)
    m.astype("<f4").tofile(tmp_path / "m.bin")
    for got in (read_npy_matrix(str(tmp_path / "m.npy")), read_matrix(str(tmp_path / "m.bin"), (7, 4))):
        assert got.shape == (7, 4) and not isinstance(got, np.memmap)
        for index in (slice(None), slice(2, 5), slice(None, None, -2), 3, -1, [6, 0, 1, 2, 5], np.array([4, 4]), (2, 3), (slice(1, 3), [0, 3]), (5, slice(1, None))):
            np.testing.assert_array_equal(got[index], m[index], err_msg=str(index))
        np.testing.assert_array_equal(np.asarray(got), m)
        assert got[2:2].shape == (0, 4)


def test_a_matrix_file_replaced_while_it_is_scored_is_an_error_not_other_numbers(tmp_path):
    path = tmp_path / "m.npy"
    np.save(path, np.zeros((6, 6)))
    got = read_npy_matrix(str(path))
    np.testing.assert_array_equal(got[:2], np.zeros((2, 6)))
    os.replace(_saved(tmp_path / "new.npy", np.ones((6, 6))), path)  # same shape, new numbers
    with pytest.raises(InputError, match=re.escape(f"{path}: expected the matrix file unchanged while it is scored, got a file replaced or rewritten")):
        got[:2]


def _saved(path, array):
    np.save(path, array)
    return path


# -- 6. empty ranked lists --------------------------------------------------------


def test_empty_query_files_are_refused_naming_the_first_and_the_count(track):
    run = track / "runs" / "r"
    (run / "q2.txt").write_text("")
    (run / "q5.txt").write_text("\n  \n")  # blank lines only
    (run / "q6.txt").write_text("q6\n")  # the query id header alone (SHREC 2012)
    expected = f"{run / 'q2.txt'}: expected a ranked list, got an empty file (3 of 6 query files of run 'r' are empty; --lenient scores them as empty lists)"
    with pytest.raises(InputError) as info:
        shrec_score.score([track / "runs"], track / "c.cla")
    assert str(info.value) == expected
    shutil.copytree(track / "runs" / "r", track / "runs" / "s")  # two runs: read by worker processes
    with pytest.raises(InputError) as info:
        shrec_score.score([track / "runs"], track / "c.cla")
    assert str(info.value) == expected
    r, _ = cli(track / "runs", "-r", track / "c.cla")
    one_line_error(r, expected)
    problems = [str(p) for p in check_runs([str(track / "runs" / "r")], load_relevance(track / "c.cla"))]
    assert f"{run / 'q2.txt'}: error: an empty ranked list" in problems and len([p for p in problems if "empty" in p]) == 3


def test_lenient_scores_empty_files_as_empty_lists_and_counts_them(track):
    run = track / "runs" / "r"
    (run / "q2.txt").write_text("")
    (run / "q5.txt").write_text("\n")
    rep = shrec_score.score([track / "runs"], track / "c.cla", measures=["NN", "AP"], lenient=True)
    pq = rep.per_query.set_index("query")
    # an empty list retrieves nothing: NN = AP = 0; the others are perfect: 1
    assert pq.loc["q2", "AP"] == 0 and pq.loc["q5", "AP"] == 0 and pq.loc["q2", "NN"] == 0
    assert pq.loc[["q1", "q3", "q4", "q6"], "AP"].tolist() == [1.0, 1.0, 1.0, 1.0]
    assert rep.leaderboard.loc[0, "AP"] == pytest.approx((1 + 0 + 1 + 1 + 0 + 1) / 6)
    assert "--lenient: run 'r': 2 empty ranked lists (scored 0)" in rep.warnings
    r, _ = cli(track / "runs", "-r", track / "c.cla", "--lenient", "--format", "csv")
    assert r.returncode == 0 and "warning: --lenient: run 'r': 2 empty ranked lists (scored 0)" in r.stderr


def test_an_empty_file_a_missing_file_and_a_trec_query_without_lines_score_alike(track):
    """One rule: strict refuses, --lenient scores 0 and counts (lists: empty
    or missing file; TREC: a query of the relevance without a line)."""
    run = track / "runs" / "r"
    (run / "q2.txt").write_text("")
    empty = shrec_score.score([track / "runs"], track / "c.cla", measures=["AP"], lenient=True)
    (run / "q2.txt").unlink()
    missing = shrec_score.score([track / "runs"], track / "c.cla", measures=["AP"], lenient=True)
    trec = track / "r.trec"
    trec.write_text("".join(f"{q} Q0 {line.split()[0]} {i + 1} {9 - i} x\n" for q, lines in lists_of().items() if q != "q2" for i, line in enumerate(lines)))
    with pytest.raises(InputError, match=re.escape("has none for 1 of 6 queries, got first missing: 'q2'")):
        shrec_score.score([trec], track / "c.cla")
    from_trec = shrec_score.score([trec], track / "c.cla", measures=["AP"], lenient=True)
    values = [rep.per_query.set_index("query")["AP"].tolist() for rep in (empty, missing, from_trec)]
    assert values[0] == values[1] == values[2] == [1, 0, 1, 1, 1, 1]
    assert "--lenient: run 'r': 1 queries without a ranked list (scored 0)" in missing.warnings
    assert "--lenient: run 'r.trec': 1 queries without a ranked list (scored 0)" in from_trec.warnings
    # with --missing-queries skip such a query is left out, and only its note says so (--lenient said
    # "scored 0" beside it: a bug hunt); zero scores it 0, said once by its note
    for how, value in (("skip", None), ("zero", 0.0)):
        for run in (track / "runs", trec):
            rep = shrec_score.score([run], track / "c.cla", measures=["AP"], lenient=True, settings=shrec_score.Settings(missing=how))
            q2 = rep.per_query.set_index("query")["AP"].get("q2")
            assert (q2 is None or q2 != q2) if value is None else q2 == value, (how, run, q2)
            assert [w for w in rep.warnings if "without a ranked list" in w] == [], rep.warnings
            assert any("ranks nothing" in w for w in rep.warnings), rep.warnings


# -- 7. input shown escaped --------------------------------------------------------


@pytest.mark.parametrize("glued, shown", [("\ufeff", "\\ufeff"), ("\u200b", "\\u200b")])
def test_a_bom_or_zero_width_space_glued_to_an_id_shows_escaped(track, glued, shown):
    path = track / "runs" / "r" / "q1.txt"
    lines = lists_of()["q1"]
    lines[1] = glued + lines[1]
    path.write_text("".join(line + "\n" for line in lines))
    expected = f"{path}:2: expected a target id of the collection (ids were found in the first column), got unknown id '{shown}q3'"
    with pytest.raises(InputError) as info:
        shrec_score.score([track / "runs"], track / "c.cla")
    assert str(info.value) == expected
    r, _ = cli(track / "runs", "-r", track / "c.cla")
    one_line_error(r, expected)
    problems = [str(p) for p in check_runs([str(track / "runs")], load_relevance(track / "c.cla"))]
    assert f"{path}:2: error: unknown target id '{shown}q3'" in problems


def test_long_ids_are_quoted_cut(track):
    path = track / "runs" / "r" / "q1.txt"
    path.write_text("q2 0.1\n" + "z" * 5000 + " 0.2\n")
    with pytest.raises(InputError) as info:
        shrec_score.score([track / "runs"], track / "c.cla")
    assert str(info.value).endswith("got unknown id '" + "z" * 80 + "'... (4920 more characters)")


def test_two_runs_of_one_name_and_one_run_given_twice(tmp_path: object) -> None:
    """Every table is keyed by run name: two runs named alike are refused naming both files, and a run given
    twice (a RUNS argument that lies inside another) is refused as such, not as 'run X is also at' itself."""
    folder = os.path.join(str(tmp_path), "runs")
    os.makedirs(folder)
    rel = os.path.join(str(tmp_path), "c.cla")
    with open(rel, "w") as f:
        f.write(CLA)
    np.save(os.path.join(folder, "X.npy"), np.arange(36, dtype=np.float32).reshape(6, 6))
    with open(os.path.join(folder, "Y.txt"), "w") as f:
        f.write("\n".join(" ".join(str((i * j) % 5) for j in range(6)) for i in range(6)) + "\n")
    with pytest.raises(InputError) as twice:
        shrec_score.score([folder, os.path.join(folder, "Y.txt")], rel, matrix_order="listing")
    assert str(twice.value) == f"{os.path.join(folder, 'Y.txt')}: expected each run once; it is given twice (one RUNS argument holds another)"
    other = os.path.join(str(tmp_path), "other")
    os.makedirs(other)
    shutil.copy(os.path.join(folder, "Y.txt"), os.path.join(other, "Y.txt"))
    r, _ = cli(folder, other, "--relevance", rel, "--matrix-order", "listing")
    one_line_error(r, f"{os.path.join(other, 'Y.txt')}: expected run names to be unique; run 'Y' is also at {os.path.join(folder, 'Y.txt')}")
