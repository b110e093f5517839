"""TREC runs as they come: tags of several words (trec_eval's line rule) and
compressed files (gzip, bzip2, xz, zstd), scored exactly as the plain
six-field file, and as trec_eval (pytrec_eval) scores it."""

import bz2
import gzip
import lzma
import subprocess
import sys

import numpy as np
import pytest

import shrec_score
from shrec_score.errors import InputError
from shrec_score.io.runs import detect_file_format

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is a test extra")

TOPICS = [f"t{i}" for i in range(1, 6)]
MEASURES = ["AP", "P@10", "RR", "FT"]
TREC_EVAL = {"AP": "map", "P@10": "P_10", "RR": "recip_rank", "FT": "Rprec"}
ENTRY = "import sys; from shrec_score.cli import main; sys.argv[0]='shrec-score'; main()"
TAG = "COMPILED (ID:425883)"


def make_qrels(rng):
    """Graded judgments (0-3) of 25 of 40 documents per topic."""
    qrels = {}
    for t in TOPICS:
        docs = rng.choice(40, size=25, replace=False)
        qrels[t] = {f"d{d}": int(rng.integers(0, 4)) for d in docs}
        qrels[t][f"d{docs[0]}"] = 2  # every topic has a relevant document
    return qrels


def make_run(rng, topics):
    """30 documents per topic; scores rounded to one decimal: many ties."""
    run = {}
    for t in topics:
        docs = rng.choice(40, size=30, replace=False)
        run[t] = {f"d{d}": float(np.round(rng.random(), 1)) for d in docs}
    return run


def qrels_text(qrels):
    return "".join(f"{t} 0 {d} {g}\n" for t, docs in qrels.items() for d, g in docs.items())


def run_text(run, tag="bm25"):
    lines = []
    for t, docs in run.items():
        ranked = sorted(docs.items(), key=lambda kv: -kv[1])
        lines += [f"{t} Q0 {d} {i} {s} {tag}\n" for i, (d, s) in enumerate(ranked, start=1)]
    return "".join(lines)


@pytest.fixture
def data(tmp_path):
    rng = np.random.default_rng(17)
    qrels = make_qrels(rng)
    run = make_run(rng, TOPICS)
    (tmp_path / "qrels.txt").write_text(qrels_text(qrels))
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "bm25.run").write_text(run_text(run))
    return tmp_path, qrels, run


def score(paths, relevance, *, records=False, **settings):
    """shrec_score.score; with ``records`` the runs are read by load_runs
    first and given as records; the report's warnings then carry load_runs' notes."""
    if not records:
        return shrec_score.score(paths, relevance, **settings)
    from shrec_score.loading import load_relevance, load_runs

    rel = load_relevance(relevance)
    runs, notes = load_runs(paths, rel, lenient=settings.get("lenient", False))
    report = shrec_score.score(runs, rel, **settings)
    report.warnings[:0] = notes
    return report


def per_query(report):
    """{measure: {query: value}} of a report's only run."""
    pq = report.per_query
    assert pq["run"].nunique() == 1
    return {m: dict(zip(pq["query"], pq[m])) for m in MEASURES}


def trec_eval(qrels, run):
    ev = pytrec_eval.RelevanceEvaluator(qrels, set(TREC_EVAL.values()))
    return ev.evaluate(run)


def assert_equals_trec_eval(values, qrels, run):
    expected = trec_eval(qrels, run)
    assert set(expected) == set(run)
    for m, name in TREC_EVAL.items():
        for t in run:
            assert values[m][t] == pytest.approx(expected[t][name], abs=1e-9), (m, t)


def write(path, text, opener=open):
    with opener(path, "wt") as fh:
        fh.write(text)
    return path


@pytest.mark.parametrize("records", [False, True])
def test_seven_fields_and_compressed_runs_score_as_the_plain_run_and_trec_eval(data, records):
    tmp, qrels, run = data
    plain = per_query(score([tmp / "plain" / "bm25.run"], tmp / "qrels.txt", measures=MEASURES, records=records))
    assert_equals_trec_eval(plain, qrels, run)
    wild = tmp / "wild"
    wild.mkdir()
    variants = {
        "seven.run": (run_text(run, TAG), open),
        "bm25.run.gz": (run_text(run, TAG), gzip.open),
        "b.run.bz2": (run_text(run), bz2.open),
        "x.run.xz": (run_text(run, TAG), lzma.open),
    }
    gz_qrels = write(tmp / "qrels.gz", qrels_text(qrels), gzip.open)
    for name, (text, opener) in variants.items():
        path = write(wild / name, text, opener)
        assert detect_file_format(str(path)) == "trec"
        for relevance in (tmp / "qrels.txt", gz_qrels):
            report = score([path], relevance, measures=MEASURES, records=records)
            assert per_query(report) == plain, (name, relevance)


@pytest.mark.parametrize("records", [False, True])
def test_the_note_counts_the_lines_once_per_run(data, records):
    tmp, qrels, run = data
    lines = sum(len(d) for d in run.values())
    runs = tmp / "runs"
    runs.mkdir()
    write(runs / "bm25.run.gz", run_text(run, TAG), gzip.open)
    (runs / "dense.run").write_text(run_text(run, "dense extra words"))
    (runs / "six.run").write_text(run_text(run))
    report = score([runs], tmp / "qrels.txt", measures=MEASURES, records=records)
    assert sorted(report.leaderboard["run"]) == ["bm25.run", "dense.run", "six.run"]
    notes = [w for w in report.warnings if "more than six fields" in w]
    assert sorted(notes) == [
        f"note: run 'bm25.run': {lines} lines carry more than six fields; the words after the tag were ignored, as trec_eval does",
        f"note: run 'dense.run': {lines} lines carry more than six fields; the words after the tag were ignored, as trec_eval does",
    ]  # a note, not a warning: nothing is wrong with the run


def tab_run_text(run, tag_of):
    """Tab-separated lines; ``tag_of(i)`` the tag of the i-th line."""
    return "".join(line.replace(" ", "\t", 5).rsplit("\t", 1)[0] + f"\t{tag_of(i)}\n" for i, line in enumerate(run_text(run).splitlines()))


@pytest.mark.parametrize("records", [False, True])
def test_tab_separated_runs_with_spaces_in_the_tag_get_the_note(data, records):
    """pyarrow's tab delimiter would keep ``COMPILED (ID:425883)`` as one
    field; trec_eval splits on any blank, so such a line has more than six
    fields: counted for the note, and scored as trec_eval scores it."""
    tmp, qrels, run = data
    lines = sum(len(d) for d in run.values())
    runs = tmp / "tabs"
    runs.mkdir()
    (runs / "all.run").write_text(tab_run_text(run, lambda i: TAG))
    (runs / "some.run").write_text(tab_run_text(run, lambda i: TAG if i % 3 == 0 else "bm25"))
    write(runs / "zipped.run.gz", tab_run_text(run, lambda i: "a\vb" if i % 2 else "bm25"), gzip.open)  # a vertical tab splits too
    (runs / "plain.run").write_text(tab_run_text(run, lambda i: "bm25"))
    assert "\t" in (runs / "some.run").read_text().splitlines()[0] and " " not in (runs / "plain.run").read_text()
    for path in sorted(runs.iterdir()):
        assert detect_file_format(str(path)) == "trec"
        report = score([path], tmp / "qrels.txt", measures=MEASURES, records=records)
        assert_equals_trec_eval(per_query(report), qrels, run)
        notes = [w for w in report.warnings if "more than six fields" in w]
        cut = {"all.run": lines, "some.run": len(range(0, lines, 3)), "zipped.run": lines // 2, "plain.run": 0}[report.leaderboard["run"].iloc[0]]
        want = [f"note: run {report.leaderboard['run'].iloc[0]!r}: {cut} lines carry more than six fields; the words after the tag were ignored, as trec_eval does"]
        assert notes == (want if cut else []), path.name


def test_lenient_keeps_lines_with_more_fields(data):
    tmp, qrels, run = data
    path = (tmp / "seven.run")
    path.write_text(run_text(run, TAG) + "t1 Q0 d99 999 x broken\nt1 Q0 d98 998 y broken words\n")
    report = shrec_score.score([path], tmp / "qrels.txt", measures=MEASURES, lenient=True)
    assert_equals_trec_eval(per_query(report), qrels, run)
    assert "2 malformed lines dropped" in " ".join(report.warnings)
    # the note counts the lines scored: the dropped line of seven fields is not one (it was, a bug hunt)
    lines = sum(len(d) for d in run.values())
    assert [w for w in report.warnings if "more than six fields" in w] == [
        f"note: run 'seven.run': {lines} lines carry more than six fields; the words after the tag were ignored, as trec_eval does"
    ]


def test_run_topics_differ_from_the_qrels_topics(data):
    tmp, qrels, run = data
    fewer = {t: run[t] for t in TOPICS[:3]}
    path = write(tmp / "fewer.run.gz", run_text(fewer, TAG), gzip.open)
    with pytest.raises(InputError, match=r"has none for 2 of 5 queries"):
        shrec_score.score([path], tmp / "qrels.txt", measures=MEASURES)
    values = per_query(shrec_score.score([path], tmp / "qrels.txt", measures=MEASURES, lenient=True))
    assert_equals_trec_eval({m: {t: values[m][t] for t in fewer} for m in MEASURES}, qrels, fewer)
    assert all(values[m][t] == 0 for m in MEASURES for t in TOPICS[3:])
    # a topic the qrels do not judge is passed over, as trec_eval does
    more = dict(run, t9={"d1": 0.5, "d2": 0.4})
    path = write(tmp / "more.run.xz", run_text(more, TAG), lzma.open)
    report = shrec_score.score([path], tmp / "qrels.txt", measures=MEASURES)
    assert_equals_trec_eval(per_query(report), qrels, run)
    assert any("1 topic(s) without relevance judgments passed over (t9), 2 lines" in w for w in report.warnings)


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-c", ENTRY, *map(str, args)], capture_output=True, text=True, timeout=120, cwd=cwd)


def test_check_reports_a_note(data):
    tmp, qrels, run = data
    path = write(tmp / "bm25.run.gz", run_text(run, TAG), gzip.open)
    r = cli("check", path, "-r", tmp / "qrels.txt")
    assert r.returncode == 0, r.stderr
    lines = sum(len(d) for d in run.values())
    first, *rest = r.stdout.splitlines()
    assert first == f"{path}: note: run 'bm25.run': {lines} lines carry more than six fields; the words after the tag were ignored, as trec_eval does"
    assert all(line.startswith("warning: run 'bm25.run': ties move ") for line in rest)  # its scores tie (issue 19)


def test_the_cli_names_the_run_without_the_compression_extension(data):
    tmp, qrels, run = data
    path = write(tmp / "bm25.run.gz", run_text(run, TAG), gzip.open)
    r = cli(path, "-r", tmp / "qrels.txt", "--format", "csv")
    assert r.returncode == 0, r.stderr
    assert "bm25.run," in r.stdout and "bm25.run.gz" not in r.stdout


def test_a_truncated_gzip_is_one_line_naming_the_file(data):
    tmp, qrels, run = data
    whole = gzip.compress(run_text(run).encode())
    path = tmp / "cut.run.gz"
    path.write_bytes(whole[: len(whole) // 2])
    for args in ([path, "-r", tmp / "qrels.txt"], [path, "-r", tmp / "qrels.txt", "--run-format", "trec"]):
        r = cli(*args)
        assert r.returncode == 2, r.stderr
        assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
        assert f"{path}: expected a complete gzip stream, got " in r.stderr
    qrels_cut = tmp / "qrels.gz"
    whole = gzip.compress(qrels_text(qrels).encode())
    qrels_cut.write_bytes(whole[:-10])
    r = cli(tmp / "plain" / "bm25.run", "-r", qrels_cut)
    assert r.returncode == 2 and f"{qrels_cut}: expected a complete gzip stream, got " in r.stderr, r.stderr
    garbage = tmp / "junk.run.gz"
    garbage.write_bytes(b"\x1f\x8b" + bytes(range(200)))
    with pytest.raises(InputError, match="junk.run.gz: expected a complete gzip stream"):
        shrec_score.score([garbage], tmp / "qrels.txt", run_format="trec")


def test_zstd_without_zstandard_names_the_extra(data, monkeypatch):
    tmp, qrels, run = data
    path = tmp / "bm25.run.zst"
    path.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 20)
    monkeypatch.setitem(sys.modules, "zstandard", None)  # importing it fails
    with pytest.raises(InputError) as info:
        shrec_score.score([path], tmp / "qrels.txt", measures=MEASURES)
    assert str(info.value) == f"{path}: a zstd-compressed file needs the zstandard package; pip install 'shrec-score[zstd]'"


def test_zstd_with_zstandard(data):
    zstandard = pytest.importorskip("zstandard")
    tmp, qrels, run = data
    path = tmp / "bm25.run.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(run_text(run, TAG).encode()))
    plain = per_query(shrec_score.score([tmp / "plain" / "bm25.run"], tmp / "qrels.txt", measures=MEASURES))
    assert per_query(shrec_score.score([path], tmp / "qrels.txt", measures=MEASURES)) == plain
    whole = path.read_bytes()
    path.write_bytes(whole[:-3])
    with pytest.raises(InputError, match=r"bm25.run.zst: expected a complete zstd stream, got a stream cut short"):
        shrec_score.score([path], tmp / "qrels.txt", measures=MEASURES)


@pytest.mark.parametrize("records", [False, True])
def test_an_error_line_in_a_compressed_run_is_the_decompressed_line(data, records):
    tmp, qrels, run = data
    text = run_text(run, TAG).splitlines(keepends=True)
    text[41] = "t2 Q0 d5 3 notanumber bm25\n"
    path = write(tmp / "bad.run.gz", "".join(text), gzip.open)
    with pytest.raises(InputError, match=r"bad.run.gz:42: expected a number as score \(5th field\), got 'notanumber'"):
        score([path], tmp / "qrels.txt", measures=MEASURES, records=records)
    text = run_text(run).splitlines(keepends=True)
    text[70] = "t3 Q0 d5 3\n"
    path = write(tmp / "short.run.bz2", "".join(text), bz2.open)
    with pytest.raises(InputError, match=r'short.run.bz2:71: expected "query_id Q0 target_id rank score tag", got 4 fields'):
        score([path], tmp / "qrels.txt", measures=MEASURES, records=records)


def test_qrels_with_extra_fields_are_refused_as_trec_eval_does(data):
    tmp, qrels, run = data
    path = write(tmp / "qrels5.gz", "t1 0 d1 1\nt1 0 d2 1 extra\n", gzip.open)
    with pytest.raises(InputError, match=r'qrels5.gz:2: expected "query_id iteration target_id grade", got 5 fields'):
        shrec_score.score([tmp / "plain" / "bm25.run"], path)


def test_compressed_lists_and_cla(tmp_path):
    """A gzipped .cla and gzipped ranked-list files score as the plain ones."""
    cla = "PSB 1\n2 6\n\na 0 3\nm1\nm2\nm3\n\nb 0 3\nm4\nm5\nm6\n"
    ids = [f"m{i}" for i in range(1, 7)]
    rng = np.random.default_rng(3)
    (tmp_path / "plain").mkdir()
    (tmp_path / "zipped").mkdir()
    (tmp_path / "classes.cla").write_text(cla)
    write(tmp_path / "classes.cla.gz", cla, gzip.open)
    for q in ids:
        order = rng.permutation(ids)
        text = "".join(f"{t} {d / 10}\n" for d, t in enumerate(order))
        (tmp_path / "plain" / f"{q}.txt").write_text(text)
        write(tmp_path / "zipped" / f"{q}.txt.gz", text, gzip.open)
    want = shrec_score.score([tmp_path / "plain"], tmp_path / "classes.cla").per_query.drop(columns="run")
    got = shrec_score.score([tmp_path / "zipped"], tmp_path / "classes.cla.gz").per_query.drop(columns="run")
    assert want.equals(got)
    # an ASCII matrix, gzipped
    m = rng.random((6, 6))
    text = "".join(" ".join(f"{v:.6f}" for v in row) + "\n" for row in m)
    (tmp_path / "m.txt").write_text(text)
    write(tmp_path / "m.txt.xz", text, lzma.open)
    assert detect_file_format(str(tmp_path / "m.txt.xz")) == "matrix"
    want = shrec_score.score([tmp_path / "m.txt"], tmp_path / "classes.cla").per_query.drop(columns="run")
    got = shrec_score.score([tmp_path / "m.txt.xz"], tmp_path / "classes.cla").per_query.drop(columns="run")
    assert want.equals(got)


def test_an_error_line_in_a_compressed_list_is_the_decompressed_line(tmp_path):
    cla = "PSB 1\n1 3\n\na 0 3\nm1\nm2\nm3\n"
    (tmp_path / "classes.cla").write_text(cla)
    run = tmp_path / "run"
    run.mkdir()
    for q in ("m1", "m2"):
        write(run / f"{q}.gz", "m1 0.1\nm2 0.2\nm3 0.3\n", gzip.open)
    write(run / "m3.gz", "m1 0.1\nm2 0.2\nm9 0.3\n", gzip.open)
    with pytest.raises(InputError, match=r"m3.gz:3: .*'m9'"):
        shrec_score.score([run], tmp_path / "classes.cla")


def test_long_lines_and_utf16_are_seen_through_the_compression(data):
    tmp, qrels, run = data
    path = write(tmp / "long.run.gz", "t1 Q0 d1 1 0.5 x\n" + "t1 Q0 " + "d" * (2 << 20) + " 2 0.4 x\n", gzip.open)
    with pytest.raises(InputError, match=r"long.run.gz:2: expected lines of at most 1,048,576 bytes"):
        shrec_score.score([path], tmp / "qrels.txt", run_format="trec")
    path = tmp / "wide.run.gz"
    path.write_bytes(gzip.compress(run_text(run).encode("utf-16")))
    with pytest.raises(InputError, match=r"wide.run.gz: expected UTF-8 text, got UTF-16"):
        shrec_score.score([path], tmp / "qrels.txt")
