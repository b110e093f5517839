"""The TREC reader: trec_eval's order exactly, its errors, any id style and
line order against trec_eval (pytrec_eval), the qrels readers."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import shrec_score
from shrec_score import join
from shrec_score.io import runs as runs_io
from shrec_score.io import trec
from shrec_score.join import trec_order

from .conftest import shared_path


def python_trec_order(q, s, docs):
    """Obviously correct: sort line numbers by (query, -score, doc id descending)."""
    idx = list(range(len(q)))
    idx.sort(key=lambda i: docs[i].encode(), reverse=True)  # stable sorts, least significant key first
    idx.sort(key=lambda i: -s[i])
    idx.sort(key=lambda i: q[i])
    return idx


@pytest.mark.parametrize("seed", range(6))
def test_trec_order_equals_a_plain_sort(seed):
    rng = np.random.default_rng(seed)
    n = 400
    q = np.sort(rng.integers(0, 5, n))  # the lines of a query together, as the reader hands them over
    s = np.round(rng.random(n), 1)
    if seed % 3 == 0:  # scores non-increasing within queries: only the ties move
        s = s[np.lexsort((-s, q))]
    docs = [f"d{x}" if seed % 2 else f"é{x}ü" for x in rng.integers(0, 300, n)]
    want = python_trec_order(q.tolist(), s.tolist(), docs)
    for ids in (pa.chunked_array([docs]), pa.chunked_array([docs[:150], [], docs[150:151], docs[151:]])):  # as read
        got = trec_order(q, s, ids)
        got = list(range(n)) if got is None else got.tolist()
        assert [(q[i], s[i], docs[i]) for i in got] == [(q[i], s[i], docs[i]) for i in want]


def _whole(runs, relevance, **kw):
    """A report of the runs read by load_runs and given as records."""
    rel = shrec_score.load_relevance(relevance, queries=kw.pop("queries", None))
    objs, notes = shrec_score.load_runs(runs, rel)
    report = shrec_score.score(objs, rel, **kw)
    report.warnings[:0] = notes  # what the reader passed over, as score() from paths reports it
    return report


def _scores(d):
    return shrec_score.score(
        [f"{d}/results.test"], f"{d}/qrels.test", measures=["AP", "FT", "P@5", "RR"]
    ).per_query.set_index("query")


def test_any_whitespace_between_fields_reads_as_one_blank_on_trec_eval_data(tmp_path):
    """trec_eval splits on any run of blanks; pyarrow on one delimiter: a run
    with tabs, doubled spaces and trailing blanks scores as the original."""
    d = shared_path("trec_eval")
    original = _scores(d)
    lines = open(f"{d}/results.test").read().splitlines()
    messy = [("  " if i % 3 == 0 else "") + line.replace(" ", "\t  " if i % 2 else "   ") + (" \t" if i % 5 == 0 else "") for i, line in enumerate(lines)]
    (tmp_path / "results.test").write_text("\n".join(messy) + "\n")
    (tmp_path / "qrels.test").write_text(open(f"{d}/qrels.test").read())
    pd.testing.assert_frame_equal(original, _scores(tmp_path))


def judged_ids(qrels):
    """The query and the target id of every judgment."""
    return [qrels.query_ids[c] for c in qrels.query_codes.tolist()], [qrels.target_ids[c] for c in qrels.target_codes.tolist()]


def test_large_qrels_fast_path_equals_line_reader(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow", reason="the fast extra")
    rng = np.random.default_rng(2)
    rows = [f"q{q} 0 d{d} {g}\n" for q in range(400) for d, g in zip(rng.choice(5000, 200, replace=False), rng.integers(-1, 3, 200))]
    path = tmp_path / "big.qrels"
    path.write_text("".join(rows))
    assert path.stat().st_size > (1 << 20)
    fast = trec.read_qrels(path)
    monkeypatch.setattr(trec, "FAST_QRELS_BYTES", 1 << 40)  # the line reader
    slow = trec.read_qrels(path)
    assert (judged_ids(fast), fast.grades.tolist()) == (judged_ids(slow), slow.grades.tolist())
    assert (fast.query_ids, fast.target_ids) == (slow.query_ids, slow.target_ids)  # both in order of first appearance
    kept = [line for line in rows if int(line.split()[3]) >= 0]  # grade -1: unjudged, left out as trec_eval does
    assert len(kept) < len(rows) and fast.grades.size == len(kept)
    assert judged_ids(fast)[0][:2] == ["q0", "q0"] and fast.grades.tolist()[:3] == [int(line.split()[3]) for line in kept[:3]]
    # a pair judged twice in a large file: the line reader names both lines
    monkeypatch.setattr(trec, "FAST_QRELS_BYTES", 1 << 20)
    path.write_text("".join(rows) + rows[7].replace(" 0 d", " 1 d"))
    with pytest.raises(trec.InputError, match=rf"big.qrels:{len(rows) + 1}: .*already judged at line 8"):
        trec.read_qrels(path)


def test_of_several_repeats_the_one_ranked_highest_is_named(tmp_path):
    """Topic x ranks y, z, z, y (scores descending): z's second line (line 3) is the first repeat in trec_eval's
    order, so the error names z at lines 2 and 3, not y (lines 1 and 4); --lenient keeps each first place."""
    (tmp_path / "c.cla").write_text("PSB 1\n1 3\na 0 3\nx\ny\nz\n")
    body = "x Q0 y 1 0.9 t\nx Q0 z 2 0.8 t\nx Q0 z 3 0.7 t\nx Q0 y 4 0.6 t\n" + "".join(f"{q} Q0 x 1 0.5 t\n" for q in "yz")
    (tmp_path / "dup.trec").write_text(body)
    with pytest.raises(shrec_score.InputError, match=r"dup.trec:3: expected each target once per query; x z is already ranked at line 2"):
        shrec_score.score([tmp_path / "dup.trec"], tmp_path / "c.cla")
    from collections import Counter

    from shrec_score.loading import load_relevance
    from shrec_score.model import RunSource

    drops: Counter[str] = Counter()
    ranked, _ = join.read_trec_run(RunSource("r", str(tmp_path / "dup.trec"), "trec"), load_relevance(tmp_path / "c.cla"), drops=drops)
    assert ranked.targets[ranked.offsets[0] : ranked.offsets[1]].tolist() == [1, 2]  # y, z: x's own item is not ranked
    assert drops == Counter({"repeated target ids dropped (first place kept)": 2})


def test_duplicate_and_unknown_errors_on_both_paths(tmp_path, monkeypatch):
    (tmp_path / "c.cla").write_text("PSB 1\n1 3\na 0 3\nx\ny\nz\n")
    (tmp_path / "dup.trec").write_text("x Q0 y 1 0.9 t\nx Q0 z 2 0.8 t\nx Q0 y 3 0.7 t\n" + "".join(f"{q} Q0 x 1 0.5 t\n" for q in "yz"))
    (tmp_path / "unk.trec").write_text("x Q0 y 1 0.9 t\nx Q0 w 2 0.8 t\n" + "".join(f"{q} Q0 x 1 0.5 t\n" for q in "yz"))
    for scorer in (shrec_score.score, _whole):  # from paths, and from records
        with pytest.raises(shrec_score.InputError, match=r"dup.trec:3: expected each target once per query; x y is already ranked at line 1"):
            scorer([tmp_path / "dup.trec"], tmp_path / "c.cla")
        with pytest.raises(shrec_score.InputError, match=r"unk.trec:2: expected a target id of the collection, got unknown id 'w'"):
            scorer([tmp_path / "unk.trec"], tmp_path / "c.cla")


#: Target id styles: short, long, both in one list, multi-byte UTF-8 (byte
#: order decides ties), ClueWeb09-like and UUID-like, and very long ones.
ID_STYLES = {
    "short": lambda d: f"d{d}",
    "long": lambda d: f"LA{d:010d}-x",
    "mixed": lambda d: f"d{d}" if d % 2 else f"LA{d:010d}-x",
    "utf8": lambda d: f"é{d}ü",
    "clueweb-uuid": lambda d: f"clueweb09-en{d % 12:04d}-{d % 100:02d}-{d:05d}" if d % 2 else f"{d * 2654435761 % 2**32:08x}-0d8d-11e6-a6b6-2e6de3695b0e",
    "wide": lambda d: f"w{d}-" + "x" * 130 if d % 7 == 0 else f"LA{d:010d}-x",
}


def _random_trec(tmp_path, seed, grouped=True, n_q=25, depth=60, pool=200, doc=ID_STYLES["short"]):
    rng = np.random.default_rng(seed)
    lines, qrels = [], []
    for q in rng.permutation(n_q):
        docs = rng.choice(pool, size=depth, replace=False)
        scores = np.round(rng.random(depth), 1)  # many ties
        if seed % 2:  # the usual file: scores non-increasing, ties fixed up in place
            scores = np.sort(scores)[::-1]
        lines += [f"t{q} Q0 {doc(d)} {i} {sc} run\n" for i, (d, sc) in enumerate(zip(docs, scores))]
        qrels += [f"t{q} 0 {doc(d)} {g}\n" for d, g in zip(rng.choice(pool, 30, replace=False), rng.integers(0, 3, 30))]
    lines += ["unjudged Q0 d1 1 0.5 run\n", "unjudged Q0 d2 2 0.4 run\n"]  # a topic without judgments
    if not grouped:
        rng.shuffle(lines)
    (tmp_path / "run.trec").write_text("".join(lines))
    (tmp_path / "q.qrels").write_text("".join(qrels))
    return tmp_path / "run.trec", tmp_path / "q.qrels"


def _pytrec(path):
    """A run or qrels file as pytrec_eval's dicts."""
    out = {}
    for f in (line.split() for line in path.read_text().splitlines()):
        out.setdefault(f[0], {})[f[2]] = float(f[4]) if len(f) > 4 else int(f[3])
    return out


TREC_NAMES = {"AP": "map", "P@10": "P_10", "RR": "recip_rank", "FT": "Rprec", "ndcg_cut.10": "ndcg_cut_10", "bpref": "bpref"}


@pytest.mark.parametrize("style", ID_STYLES)
@pytest.mark.parametrize("seed, grouped, pool", [(0, True, 200), (1, True, 70), (2, False, 200)])
def test_any_id_style_and_line_order_scores_as_trec_eval(tmp_path, monkeypatch, seed, grouped, pool, style):
    """Per topic equal to trec_eval (pytrec_eval): ids of every style, files
    grouped by topic or shuffled, ids judged for several topics of one batch
    (a small pool), batches of a few topics (join.BATCH_LINES)."""
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is a test extra")
    run, qrels = _random_trec(tmp_path, seed, grouped, pool=pool, doc=ID_STYLES[style])
    monkeypatch.setattr(join, "BATCH_LINES", 100)
    report = shrec_score.score([run], qrels, measures=list(TREC_NAMES), settings=shrec_score.Settings(missing="skip"))
    expected = pytrec_eval.RelevanceEvaluator(_pytrec(qrels), set(TREC_NAMES.values())).evaluate(_pytrec(run))
    got = report.per_query.set_index("query")
    assert sorted(expected) == sorted(got.index)
    for m, name in TREC_NAMES.items():
        for t, values in expected.items():
            assert got.loc[t, m] == pytest.approx(values[name], abs=1e-12), (m, t)
    note = f"{run}: 1 topic(s) without relevance judgments passed over (unjudged), 2 lines"
    assert note in report.warnings


@pytest.mark.parametrize("prefix", ["m", "model-of-the-collection-"])
def test_all_against_all_run_with_ties_equals_the_lists_sorted_by_hand(tmp_path, monkeypatch, prefix):
    """A .cla collection, every model ranking itself too (dropped), scores
    with many ties: the same scores as the lists sorted in Python and given
    as a record."""
    rng = np.random.default_rng(5)
    ids = [f"{prefix}{i}" for i in range(40)]
    classes = [ids[i : i + 8] for i in range(0, 40, 8)]
    cla = "PSB 1\n5 40\n" + "".join(f"c{k} 0 8\n" + "\n".join(c) + "\n" for k, c in enumerate(classes))
    (tmp_path / "c.cla").write_text(cla)
    lines = []
    for q in ids:
        for t, sc in zip(rng.permutation(ids), np.round(rng.random(40), 1)):
            lines.append((q, t, float(sc)))
    (tmp_path / "run.trec").write_text("".join(f"{q} Q0 {t} 0 {sc} r\n" for q, t, sc in lines))
    monkeypatch.setattr(join, "BATCH_LINES", 100)
    measures = ["NN", "FT", "ST", "E", "DCG", "AP"]
    read = shrec_score.score([tmp_path / "run.trec"], tmp_path / "c.cla", measures=measures)
    rel = shrec_score.load_relevance(tmp_path / "c.cla")
    order = python_trec_order([ids.index(q) for q, _, _ in lines], [s for _, _, s in lines], [t for _, t, _ in lines])
    by_hand = {q: [rel.target_index[lines[i][1]] for i in order if lines[i][0] == q and lines[i][1] != q] for q in ids}
    record = shrec_score.RankedRun.from_lists("run.trec", {q: np.array(v) for q, v in by_hand.items()})
    pd.testing.assert_frame_equal(read.per_query, shrec_score.score([record], rel, measures=measures).per_query)
    assert read.per_query["AP"].between(0, 1).all() and len(read.per_query) == 40


def test_the_errors_are_the_exact_ones(tmp_path, monkeypatch):
    monkeypatch.setattr(join, "BATCH_LINES", 2)  # a query per batch
    (tmp_path / "c.cla").write_text("PSB 1\n1 3\na 0 3\nx\ny\nz\n")
    body = "".join(f"{q} Q0 {t} 1 0.5 r\n" for q in "xyz" for t in "xyz" if t != q)
    (tmp_path / "miss.trec").write_text(body.replace("z Q0 x 1 0.5 r\nz Q0 y 1 0.5 r\n", ""))
    with pytest.raises(shrec_score.InputError, match="run 'miss.trec' has none for 1 of 3 queries, got first missing: 'z'"):
        shrec_score.score([tmp_path / "miss.trec"], tmp_path / "c.cla")
    (tmp_path / "dup.trec").write_text(body + "x Q0 y 9 0.1 r\n")
    with pytest.raises(shrec_score.InputError, match=r"dup.trec:7: expected each target once per query; x y is already ranked at line 1"):
        shrec_score.score([tmp_path / "dup.trec"], tmp_path / "c.cla")
    lines = body.splitlines(keepends=True)
    bad = {
        "score.trec": (lines[:4] + ["z Q0 x 1 abc r\n"] + lines[5:], r"score.trec:5: expected a number as score \(5th field\), got 'abc'"),
        "short.trec": (lines[:3] + ["y Q0 z 1 0.5\n"] + lines[4:], r'short.trec:4: expected "query_id Q0 target_id rank score tag", got 5 fields'),
        "four.trec": (lines[:5] + ["z Q0 y 1\n"], r'four.trec:6: expected "query_id Q0 target_id rank score tag", got 4 fields'),
        "unknown.trec": (lines[:1] + ["x Q0 w 1 0.5 r\n"] + lines[2:], r"unknown.trec:2: expected a target id of the collection, got unknown id 'w'"),
    }
    for name, (text, message) in bad.items():
        (tmp_path / name).write_text("".join(text))
        with pytest.raises(shrec_score.InputError, match=message):
            shrec_score.score([tmp_path / name], tmp_path / "c.cla")


def test_qrels_gains_equal_a_dict():
    """QrelsRelevance.gains (a search among the sorted (query, target) keys) against a dict of the judgments: judged
    and unjudged pairs, the open collection's unjudged index, a single pair, a closed collection with no judgment."""
    from shrec_score.model import Classification, Qrels
    from shrec_score.relevance import Relevance

    rng = np.random.default_rng(8)
    for n in (1, 3, 500, 5000):
        pairs = rng.choice(30 * 2000, n, replace=False)
        qs, ts, grades = pairs // 2000, pairs % 2000, rng.integers(-1, 4, n)
        qrels = Qrels.from_lists("q.txt", [f"q{i}" for i in qs], [f"d{i}" for i in ts], grades.tolist())
        rel = Relevance.from_qrels(qrels)
        grade = {(f"q{a}", f"d{b}"): max(int(c), 0) for a, b, c in zip(qs, ts, grades)}  # a negative grade counts as 0
        rows, cols = rng.integers(0, rel.n_queries, 3000), rng.integers(0, len(rel.target_ids) + 1, 3000)
        ids = [*rel.target_ids, "unjudged"]  # index len(target_ids): an id nobody judged
        want = [grade.get((rel.query_ids[r], ids[c]), -7) for r, c in zip(rows.tolist(), cols.tolist())]
        assert rel.gains(rows, cols, missing=-7).tolist() == want
        assert rel.gains(rows[:, None], cols[None, :5], missing=-7)[:5, 0].tolist() == [
            grade.get((rel.query_ids[r], ids[cols[0]]), -7) for r in rows[:5].tolist()
        ]
        assert int(rel.gains(rows[0], cols[0], missing=-7)) == want[0]
    empty = Qrels("q.txt", ["q1"], np.zeros(0, np.int64), [], np.zeros(0, np.int64), np.zeros(0, np.int64))
    cla = Classification("c.cla", ["a"], ["0"], ["m1", "m2"], np.zeros(2, np.int64))
    closed = Relevance.from_qrels(empty, collection=cla)
    assert closed.gains(np.array([0, 0]), np.array([0, 1]), missing=-7).tolist() == [-7, -7]


def test_read_qrels_on_either_reader(tmp_path):
    small = tmp_path / "small.qrels"
    small.write_text("q1 0 d1 1\nq1 0 d2 0\n")
    got = trec.read_qrels(small)
    assert judged_ids(got) == (["q1", "q1"], ["d1", "d2"])
    big = tmp_path / "big.qrels"
    big.write_text("".join(f"q{i % 97} 0 d{i} {i % 3}\n" for i in range(80_000)))
    assert big.stat().st_size >= trec.FAST_QRELS_BYTES
    got = trec.read_qrels(big)
    assert judged_ids(got)[1][:3] == ["d0", "d1", "d2"] and got.grades[:4].tolist() == [0, 1, 2, 0] and len(got.query_ids) == 97


@pytest.mark.parametrize("closed", [False, True])
def test_judged_mask_equals_a_set_of_judged_pairs(tmp_path, closed):
    """engine.judged_mask looks up only the entries with a judged target index
    (an unjudged id of an open collection has index len(target_ids)); against
    a set of the qrels' (query, id) pairs, read from the files by hand."""
    from shrec_score.engine import judged_mask
    from shrec_score.join import read_trec_run
    from shrec_score.loading import load_relevance
    from shrec_score.model import RunSource

    run, qrels = _random_trec(tmp_path, 3, doc=ID_STYLES["clueweb-uuid"])
    pairs = {(f[0], f[2]) for f in (ln.split() for ln in qrels.read_text().splitlines())}
    collection = None
    if closed:  # a collection naming every id of the run and the qrels: every index is a real target
        ids = sorted({ln.split()[2] for ln in run.read_text().splitlines()} | {d for _, d in pairs})
        collection = tmp_path / "c.cla"
        collection.write_text(f"PSB 1\n1 {len(ids)}\nall 0 {len(ids)}\n" + "\n".join(ids) + "\n")
    rel = load_relevance(qrels, collection=collection)
    ranked, _ = read_trec_run(RunSource("r", str(run), "trec"), rel, missing_ok=True)
    lengths = ranked.lengths()
    rows = np.array([rel.query_ids.index(q) for q in ranked.query_ids])
    expected = [(ranked.query_ids[i], rel.target_ids[t] if t < len(rel.target_ids) else None) in pairs
                for i, n in enumerate(lengths) for t in ranked.targets[ranked.offsets[i] : ranked.offsets[i] + n]]
    got = judged_mask(ranked, rel, rows)
    np.testing.assert_array_equal(got, expected)
    assert 0 < got.sum() < got.size


def test_a_bad_score_line_is_named(tmp_path):
    lines = [f"q{q} Q0 d{d} {d} {1 - d / 100} r\n" for q in range(8) for d in range(80)]
    lines[500] = "q6 Q0 d1 1 high r\n"
    (tmp_path / "run.trec").write_text("".join(lines))
    (tmp_path / "q.qrels").write_text("".join(f"q{q} 0 d{q} 1\n" for q in range(8)))
    with pytest.raises(shrec_score.InputError, match=r"run.trec:501: expected a number as score \(5th field\), got 'high'"):
        shrec_score.score([tmp_path / "run.trec"], tmp_path / "q.qrels")


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


@pytest.mark.parametrize("odd", ["\u00a0", "\u2028", "\x1c", "\x85"])
def test_qrels_bytes_get_one_answer_whatever_the_size_and_compression(tmp_path, monkeypatch, odd):
    """issue 30.8: only ASCII blanks separate fields (trec_eval's rule); a
    no-break space, U+2028 or \\x1c inside an id is part of it, whether the
    file is small, over 1 MiB or gzipped."""
    import gzip

    text = f"q1 0 d{odd}1 1\nq1 0 d2 0\nq2 0 d3 1\n"
    small = tmp_path / "small.qrels"
    small.write_text(text)
    zipped = tmp_path / "small.qrels.gz"
    zipped.write_bytes(gzip.compress(text.encode()))
    big = tmp_path / "big.qrels"
    big.write_text(text + "".join(f"q{i % 97 + 3} 0 d{i} {i % 3}\n" for i in range(80_000)))
    assert big.stat().st_size >= trec.FAST_QRELS_BYTES
    got = [trec.read_qrels(p) for p in (small, zipped)]
    monkeypatch.setattr(trec, "FAST_QRELS_BYTES", 0)  # pyarrow for the small file too
    got.append(trec.read_qrels(small))
    got.append(trec.read_qrels(big))
    monkeypatch.setattr(trec, "FAST_QRELS_BYTES", 1 << 40)  # the line reader for the big one
    got.append(trec.read_qrels(big))
    for q in got:
        assert judged_ids(q)[1][:3] == [f"d{odd}1", "d2", "d3"] and q.grades[:3].tolist() == [1, 0, 1]


@pytest.mark.parametrize("line", ["q1  d9 1\n", " q1 0 d9\n", "q1 0 d9 \n", "q1\t\td9\t1\n", "q1 0 d9 1 5\n"])
def test_qrels_line_without_four_fields_is_refused_on_every_reader(tmp_path, monkeypatch, line):
    """A doubled blank (an empty field for pyarrow) does not make a fourth field."""
    rows = "".join(f"q{i % 97} 0 d{i} {i % 3}\n" for i in range(80_000))
    path = tmp_path / "q.qrels"
    path.write_text(rows + line)
    messages = set()
    for size in (0, 1 << 40):  # pyarrow, then the line reader
        monkeypatch.setattr(trec, "FAST_QRELS_BYTES", size)
        with pytest.raises(trec.InputError) as exc:
            trec.read_qrels(path)
        messages.add(str(exc.value))
    assert messages == {f'{path}:80001: expected "query_id iteration target_id grade", got {len(line.split())} fields'}


@pytest.mark.parametrize("grade", ["0x1", "+1", "1.0", "-0", "01"])
def test_a_grade_gets_one_answer_on_every_qrels_reader(tmp_path, monkeypatch, grade):
    """numbers.is_integer's rule on every path: pyarrow's integer parser alone reads 0x1 as 1."""
    path = tmp_path / "q.qrels"
    path.write_text(f"q1 0 d1 {grade}\n" + "".join(f"q{i % 97} 0 d{i} {i % 3}\n" for i in range(2, 80_000)))
    answers = []
    for size in (0, 1 << 40):  # pyarrow, then the line reader
        monkeypatch.setattr(trec, "FAST_QRELS_BYTES", size)
        try:
            answers.append(trec.read_qrels(path).grades[:3].tolist())
        except trec.InputError as exc:
            answers.append(str(exc))
    assert answers[0] == answers[1]
