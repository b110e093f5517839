"""A TREC run parsed ahead while the relevance loads: taken over, or stopped after an error."""

import threading

import numpy as np
import pandas as pd
import pytest

import shrec_score
from shrec_score.io import runs as runs_io
from shrec_score.io import trec_stream


def _readers_alive():
    return [t for t in threading.enumerate() if t.name.startswith("shrec-score read") and t.is_alive()]


def _whole(run, qrels, measures):
    """Scored from the in-memory reader (the run read whole, not streamed)."""
    rel = shrec_score.load_relevance(qrels)
    runs, _ = shrec_score.load_runs([run], rel, stream=False)
    return shrec_score.score(runs, rel, measures=measures).per_query


def _files(tmp_path, n_q=30, depth=80):
    rng = np.random.default_rng(3)
    run, qrels = [], []
    for q in range(n_q):
        docs = rng.choice(200, depth, replace=False)
        scores = np.sort(np.round(rng.random(depth), 2))[::-1]
        run += [f"q{q} Q0 d{d} {i + 1} {s} r\n" for i, (d, s) in enumerate(zip(docs, scores))]
        qrels += [f"q{q} 0 d{d} {g}\n" for d, g in zip(rng.choice(200, 20, replace=False), rng.integers(1, 3, 20))]
    (tmp_path / "run.trec").write_text("".join(run))
    (tmp_path / "q.qrels").write_text("".join(qrels))
    return tmp_path / "run.trec", tmp_path / "q.qrels"


def test_run_read_ahead_is_taken_over_and_scores_the_same(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow", reason="the fast extra")
    run, qrels = _files(tmp_path)
    monkeypatch.setattr(trec_stream, "BATCH_BYTES", 1 << 12)  # many batches: the read-ahead fills up
    started = []
    reader = trec_stream.BatchReader
    monkeypatch.setattr(trec_stream, "BatchReader", lambda path, *a: started.append((path, *a)) or reader(path, *a))
    measures = ["AP", "NN", "P@10", "NDCG@10"]
    ahead = shrec_score.score([run], qrels, measures=measures).per_query
    assert started == [(str(run), trec_stream.AHEAD_START)]  # one reader, started before the relevance, taken over
    assert _readers_alive() == []
    whole = _whole(run, qrels, measures)
    pd.testing.assert_frame_equal(ahead, whole)
    assert whole["AP"].gt(0).all()


def test_read_ahead_stops_when_the_relevance_fails(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow", reason="the fast extra")
    run, qrels = _files(tmp_path)
    monkeypatch.setattr(trec_stream, "BATCH_BYTES", 1 << 12)
    readers = []
    reader = trec_stream.BatchReader
    monkeypatch.setattr(trec_stream, "BatchReader", lambda *a: readers.append(reader(*a)) or readers[-1])
    qrels.write_text("q1 0 d1 1\nq1 0 d2 x\n")
    with pytest.raises(shrec_score.InputError, match=r"q.qrels:2: expected a whole number as grade"):
        shrec_score.score([run], qrels)
    assert _readers_alive() == [] and len(readers) == 1
    assert not readers[0].thread.is_alive() and not readers[0].ready  # stopped, its batches let go


def test_a_parse_error_met_ahead_sends_the_run_to_the_exact_reader(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow", reason="the fast extra")
    run, qrels = _files(tmp_path)
    monkeypatch.setattr(trec_stream, "BATCH_BYTES", 1 << 12)
    lines = run.read_text().splitlines(keepends=True)
    lines[500] = "q6 Q0 d1 1 high r\n"
    run.write_text("".join(lines))
    with pytest.raises(shrec_score.InputError, match=r"run.trec:501: expected a number as score \(5th field\), got 'high'"):
        shrec_score.score([run], qrels)
    assert _readers_alive() == []


def test_first_trec_file_finds_the_run_discover_runs_scores_first(tmp_path):
    run, _ = _files(tmp_path / "a" if (tmp_path / "a").mkdir() is None else None)
    assert runs_io.first_trec_file([run]) == str(run)
    assert runs_io.first_trec_file([run], "matrix") is None
    assert runs_io.first_trec_file([tmp_path / "a"]) == str(run)  # a folder of run files: the first, sorted
    (tmp_path / "a" / "README.txt").write_text("notes")
    (tmp_path / "a" / "0.npy").write_bytes(b"\x93NUMPY")
    assert runs_io.first_trec_file([tmp_path / "a"]) is None  # 0.npy comes first and is a matrix
    (tmp_path / "b" / "run1").mkdir(parents=True)
    assert runs_io.first_trec_file([tmp_path / "b", run]) is None  # ranked-list runs come first
    assert runs_io.first_trec_file([tmp_path / "none"]) is None
    matrix = tmp_path / "m.txt"
    matrix.write_text("0 1.5 2\n1.5 0 3\n2 3 0\n")
    assert runs_io.first_trec_file([matrix]) is None


def test_format_detection_reads_the_first_line_only(tmp_path):
    path = tmp_path / "r.trec"
    good = "".join(f"q1 Q0 d{i} {i} {1 - i / 1000} r\n" for i in range(1, 301)).encode()  # past the binary probe
    path.write_bytes(b"\xef\xbb\xbf\n\n" + good + b"q1 Q0 d\xff 2 0.4 r\n")
    assert runs_io.detect_file_format(str(path)) == "trec"  # the bad byte is the TREC reader's to report
    (tmp_path / "c.cla").write_text("PSB 1\n1 1\na 0 1\nq1\n")
    with pytest.raises(shrec_score.InputError, match=r"r.trec:303: expected UTF-8 text, got byte 0xff"):
        shrec_score.score([path], tmp_path / "c.cla")
    path.write_bytes(b"\xef\xbb\xbfq1 Q0 d1 1 x r\n")
    assert runs_io.detect_file_format(str(path)) is None
    assert shrec_score.api.is_classification_file(tmp_path / "c.cla")
    (tmp_path / "bom.cla").write_bytes(b"\xef\xbb\xbfPSB 1\n")
    assert shrec_score.api.is_classification_file(tmp_path / "bom.cla")
    assert not shrec_score.api.is_classification_file(path)


def test_text_pieces_end_at_a_newline_and_cover_the_file(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow", reason="the fast extra")
    monkeypatch.setattr(trec_stream, "BATCH_BYTES", 16)
    path = tmp_path / "r.trec"
    text = b"\xef\xbb\xbfq1 Q0 a 1 1 r\n" + b"q1 Q0 " + b"x" * 40 + b" 2 0.5 r\nq2 Q0 b 1 3 r\nq2 Q0 c 2 2 r"  # no final newline
    path.write_bytes(text)
    pieces = [bytes(p) for p, _ in trec_stream._text_batches(str(path))]
    assert b"".join(pieces) == text
    assert all(p.endswith(b"\n") for p in pieces[:-1]) and len(pieces) >= 3
    assert any(len(p) > 16 for p in pieces)  # the long line got a larger piece
    # parsed and split into queries: one segment per run of equal query ids
    batches = list(trec_stream.BatchReader(str(path)))
    ids = [q for b in batches for q in b[1]]
    docs = [d for b in batches for d in b[2].to_pylist()]
    assert docs == ["a", "x" * 40, "b", "c"] and ids[0] == "q1" and ids[-1] == "q2"
    scores = np.concatenate([b[3] for b in batches])
    assert scores.tolist() == [1, 0.5, 3, 2]
    path.write_bytes(b"")
    with pytest.raises(trec_stream.NotStreamable):
        list(trec_stream._text_batches(str(path)))


def test_qrels_parse_on_one_thread_while_a_run_is_read_ahead(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow", reason="the fast extra")
    from shrec_score.io import trec

    (tmp_path / "q.qrels").write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\n")
    seen = []
    read = trec._read_columns_arrow
    monkeypatch.setattr(trec, "_read_columns_arrow", lambda *a, **k: seen.append(k.get("threads", True)) or read(*a, **k))
    assert trec._read_qrels_fast(str(tmp_path / "q.qrels"), True).grades.tolist() == [1, 0, 2]
    assert trec._read_qrels_fast(str(tmp_path / "q.qrels"), False).grades.tolist() == [1, 0, 2]
    assert seen == [True, False]
    # score() parses a large qrels file on one thread while it reads a TREC run ahead
    run, qrels = _files(tmp_path)
    monkeypatch.setattr(trec, "FAST_QRELS_BYTES", 0)
    seen.clear()
    shrec_score.score([run], qrels, measures=["AP"])
    assert seen[0] is False
