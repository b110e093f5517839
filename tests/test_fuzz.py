"""Fuzzing every reader: any bytes either parse or give an InputError (one line,
exit 2 through the CLI); never another exception, a hang or a memory blow-up."""

import os

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shrec_score import InputError
from shrec_score.cli import cli

from .conftest import SHARED_DATA

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
CLA = b"PSB 1\n2 4\na 0 2\nx1\nx2\nb 0 2\nx3\nx4\n"

TOKENS = [b"PSB", b"1", b"2", b"4", b"0", b"a", b"b", b"x1", b"x3", b"-1", b"nan", b"inf", b"Q0", b"0.5", b"\xff", b"\x00", b"\t", b" ", b"\r\n", b"\n", b",", b"query,item,score"]
text_like = st.lists(st.sampled_from(TOKENS), max_size=60).map(b"".join) | st.binary(max_size=300)


def mutate(data: bytes, ops: list[tuple[int, int, int]]) -> bytes:
    """Byte flips, deletions and duplications of lines at pseudo-random places."""
    b = bytearray(data)
    for kind, pos, val in ops:
        if not b:
            break
        pos %= len(b)
        if kind == 0:
            b[pos] = val
        elif kind == 1:
            del b[pos : pos + val % 8 + 1]
        else:
            end = b.find(b"\n", pos)
            b[pos:pos] = b[pos : end if end > pos else pos + 10]
    return bytes(b)


mutations = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=6)


def cli_must_fail_cleanly_or_pass(args):
    r = CliRunner().invoke(cli, [str(a) for a in args])
    assert r.exit_code in (0, 2), (r.exit_code, r.output, r.exception)
    if r.exit_code == 2:
        lines = [ln for ln in r.output.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("Error: "), r.output
    return r


@FUZZ
@given(text_like)
def test_classification_reader(tmp_path, data):
    p = tmp_path / "f.cla"
    p.write_bytes(data)
    from shrec_score.io.cla import read_classification

    try:
        read_classification(p)
    except InputError as exc:
        assert "\n" not in str(exc)


@FUZZ
@given(text_like)
def test_ranked_list_reader_through_the_cli(tmp_path, data):
    (tmp_path / "c.cla").write_bytes(CLA)
    run = tmp_path / "runs" / "r"
    run.mkdir(parents=True, exist_ok=True)
    for q in ("x1", "x2", "x3", "x4"):
        (run / q).write_bytes(b"x1 0.1\nx2 0.2\nx3 0.3\nx4 0.4\n")
    (run / "x2").write_bytes(data)
    cli_must_fail_cleanly_or_pass([tmp_path / "runs", "-r", tmp_path / "c.cla", "--format", "csv"])
    cli_must_fail_cleanly_or_pass([tmp_path / "runs", "-r", tmp_path / "c.cla", "--format", "csv", "--lenient"])
    r = CliRunner().invoke(cli, ["check", str(tmp_path / "runs"), "-r", str(tmp_path / "c.cla")])
    assert r.exit_code in (0, 2) and r.exception is None or isinstance(r.exception, SystemExit)


@FUZZ
@given(text_like)
def test_matrix_and_trec_readers_through_the_cli(tmp_path, data):
    (tmp_path / "c.cla").write_bytes(CLA)
    (tmp_path / "run.txt").write_bytes(data)
    for fmt in ("auto", "matrix", "trec"):
        cli_must_fail_cleanly_or_pass([tmp_path / "run.txt", "-r", tmp_path / "c.cla", "--run-format", fmt, "--format", "csv"])


@FUZZ
@given(text_like)
def test_qrels_ground_truth_and_config_readers(tmp_path, data):
    (tmp_path / "c.cla").write_bytes(CLA)
    (tmp_path / "q.qrels").write_bytes(data)
    run = tmp_path / "r"
    run.mkdir(exist_ok=True)
    (run / "x1").write_bytes(b"x2\n")
    cli_must_fail_cleanly_or_pass([run, "-r", tmp_path / "q.qrels", "--format", "csv"])
    (tmp_path / "gt.csv").write_bytes(data)
    cli_must_fail_cleanly_or_pass([run, "--ground-truth", tmp_path / "gt.csv", "--format", "csv"])
    (tmp_path / "t.yaml").write_bytes(data)
    cli_must_fail_cleanly_or_pass(["--config", tmp_path / "t.yaml", run, "-r", tmp_path / "c.cla", "--format", "csv"])


REAL = [
    ("psb", "test.cla"),
    ("shrec2021-ch", "culture", "queryCulture.cla"),
    ("trec_eval", "qrels.test"),
]


@pytest.mark.parametrize("parts", REAL, ids=lambda p: p[-1])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=mutations)
def test_mutated_real_files(tmp_path, parts, ops):
    path = os.path.join(SHARED_DATA, *parts)
    if not os.path.exists(path):
        pytest.skip("../shared/data is absent: mutated real files not fuzzed")
    data = mutate(open(path, "rb").read(), ops)
    p = tmp_path / parts[-1]
    p.write_bytes(data)
    if p.suffix == ".cla":
        from shrec_score.io.cla import read_classification

        try:
            read_classification(p)
        except InputError as exc:
            assert "\n" not in str(exc)
    else:
        from shrec_score.io.trec import read_qrels

        try:
            read_qrels(p)
        except InputError as exc:
            assert "\n" not in str(exc)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=mutations)
def test_mutated_real_matrix_and_trec_run(tmp_path, ops):
    d = os.path.join(SHARED_DATA, "trec_eval")
    if not os.path.isdir(d):
        pytest.skip("../shared/data is absent: mutated real files not fuzzed")
    data = mutate(open(os.path.join(d, "results.test"), "rb").read(), ops)
    (tmp_path / "run.test").write_bytes(data)
    cli_must_fail_cleanly_or_pass([tmp_path / "run.test", "-r", os.path.join(d, "qrels.test"), "--run-format", "trec", "--format", "csv"])
    m = np.arange(16, dtype=np.float32).reshape(4, 4).tobytes()
    (tmp_path / "m.bin").write_bytes(mutate(m, ops))
    (tmp_path / "c.cla").write_bytes(CLA)
    cli_must_fail_cleanly_or_pass([tmp_path / "m.bin", "-r", tmp_path / "c.cla", "--run-format", "matrix", "--format", "csv"])
