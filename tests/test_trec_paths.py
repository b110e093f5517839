"""The TREC readers: streamed and in-memory readers agree, and the trec_eval order is exact."""

import numpy as np
import pandas as pd
import pytest

import shrec_score
from shrec_score.io import trec
from shrec_score.ranking import trec_order

from .conftest import shared_path


def python_trec_order(q, s, docs):
    """Obviously correct: sort line numbers by (query, -score, doc id descending)."""
    idx = list(range(len(q)))
    idx.sort(key=lambda i: docs[i], reverse=True)  # stable sorts, least significant key first
    idx.sort(key=lambda i: -s[i])
    idx.sort(key=lambda i: q[i])
    return idx


@pytest.mark.parametrize("seed", range(6))
def test_trec_order_equals_a_plain_sort(seed):
    rng = np.random.default_rng(seed)
    n = 400
    q = np.sort(rng.integers(0, 5, n)) if seed % 2 else rng.integers(0, 5, n)
    s = np.round(rng.random(n), 1)
    if seed % 3 == 0:  # already grouped, scores non-increasing within queries
        order = np.lexsort((-s, q))
        q, s = q[order], s[order]
    docs = [f"d{x}" for x in rng.integers(0, 300, n)]
    distinct = sorted(set(docs))
    rank = np.array([distinct.index(d) for d in docs])
    got = trec_order(q, s, lambda pos: rank if pos is None else rank[pos])
    got = list(range(n)) if got is None else got.tolist()
    want = python_trec_order(q.tolist(), s.tolist(), docs)
    assert [(q[i], s[i], docs[i]) for i in got] == [(q[i], s[i], docs[i]) for i in want]


def _whole(runs, relevance, **kw):
    """A report from the in-memory reader (every TREC run read whole, not streamed)."""
    rel = shrec_score.load_relevance(relevance, queries=kw.pop("queries", None))
    objs, notes = shrec_score.load_runs(runs, rel, stream=False)
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
    assert (fast.queries, fast.targets, fast.grades.tolist()) == (slow.queries, slow.targets, slow.grades.tolist())
    assert (fast.query_ids, fast.target_ids) == (slow.query_ids, slow.target_ids)  # both in order of first appearance
    kept = [line for line in rows if int(line.split()[3]) >= 0]  # grade -1: unjudged, left out as trec_eval does
    assert len(kept) < len(rows) and fast.grades.size == len(kept)
    assert fast.queries[:2] == ["q0", "q0"] and fast.grades.tolist()[:3] == [int(line.split()[3]) for line in kept[:3]]
    # a pair judged twice in a large file: the line reader names both lines
    monkeypatch.setattr(trec, "FAST_QRELS_BYTES", 1 << 20)
    path.write_text("".join(rows) + rows[7].replace(" 0 d", " 1 d"))
    with pytest.raises(trec.InputError, match=rf"big.qrels:{len(rows) + 1}: .*already judged at line 8"):
        trec.read_qrels(path)


def test_duplicate_and_unknown_errors_on_both_paths(tmp_path, monkeypatch):
    (tmp_path / "c.cla").write_text("PSB 1\n1 3\na 0 3\nx\ny\nz\n")
    (tmp_path / "dup.trec").write_text("x Q0 y 1 0.9 t\nx Q0 z 2 0.8 t\nx Q0 y 3 0.7 t\n" + "".join(f"{q} Q0 x 1 0.5 t\n" for q in "yz"))
    (tmp_path / "unk.trec").write_text("x Q0 y 1 0.9 t\nx Q0 w 2 0.8 t\n" + "".join(f"{q} Q0 x 1 0.5 t\n" for q in "yz"))
    for scorer in (shrec_score.score, _whole):  # streamed, and read whole
        with pytest.raises(shrec_score.InputError, match=r"dup.trec:3: expected each target once per query; x y is already ranked at line 1"):
            scorer([tmp_path / "dup.trec"], tmp_path / "c.cla")
        with pytest.raises(shrec_score.InputError, match=r"unk.trec:2: expected a target id of the collection, got unknown id 'w'"):
            scorer([tmp_path / "unk.trec"], tmp_path / "c.cla")


#: Target id styles: packed into uint64 keys (at most 8 bytes), hashed (longer),
#: both in one batch, and multi-byte UTF-8 (byte order decides ties).
ID_STYLES = {
    "short": lambda d: f"d{d}",
    "long": lambda d: f"LA{d:010d}-x",
    "mixed": lambda d: f"d{d}" if d % 2 else f"LA{d:010d}-x",
    "utf8": lambda d: f"é{d}ü",
    # ClueWeb09-like (25 bytes) and UUID-like (36 bytes) in one list: rows of words, hashed
    "clueweb-uuid": lambda d: f"clueweb09-en{d % 12:04d}-{d % 100:02d}-{d:05d}" if d % 2 else f"{d * 2654435761 % 2**32:08x}-0d8d-11e6-a6b6-2e6de3695b0e",
    # some ids wider than _kernels.WORDS_MAX_BYTES: their batches take the general path
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


@pytest.mark.parametrize("style", ID_STYLES)
@pytest.mark.parametrize("seed, grouped", [(0, True), (1, True), (2, False)])
def test_streamed_trec_equals_the_in_memory_reader(tmp_path, monkeypatch, seed, grouped, style):
    from shrec_score import stream
    from shrec_score.io import trec_stream


    run, qrels = _random_trec(tmp_path, seed, grouped, doc=ID_STYLES[style])
    measures = ["AP", "NN", "FT", "P@10", "RR", "NDCG@10", "ADR", "AP_highly", "ndcg_cut.10", "bpref"]
    monkeypatch.setattr(trec_stream, "BATCH_BYTES", 1 << 10)  # ~40 lines a batch: queries span batches
    fallbacks = []
    read_whole = stream.TrecStreamRun.read_whole
    monkeypatch.setattr(stream.TrecStreamRun, "read_whole", lambda self, rel: fallbacks.append(1) or read_whole(self, rel))
    streamed = shrec_score.score([run], qrels, measures=measures)
    assert len(fallbacks) == (0 if grouped else 1)  # a grouped file is streamed to the end; a shuffled one is read whole
    whole = _whole([run], qrels, measures=measures)
    pd.testing.assert_frame_equal(streamed.per_query, whole.per_query)
    pd.testing.assert_frame_equal(streamed.pr_curve, whole.pr_curve)
    pd.testing.assert_frame_equal(streamed.curves, whole.curves)
    note = f"{run}: 1 topic(s) without relevance judgments passed over (unjudged), 2 lines"
    assert note in streamed.warnings and note in whole.warnings


@pytest.mark.parametrize("prefix", ["m", "model-of-the-collection-"])
def test_streamed_all_against_all_run_with_ties_equals_the_in_memory_reader(tmp_path, monkeypatch, prefix):
    from shrec_score import stream
    from shrec_score.io import trec_stream


    rng = np.random.default_rng(5)
    ids = [f"{prefix}{i}" for i in range(40)]
    classes = [ids[i : i + 8] for i in range(0, 40, 8)]
    cla = "PSB 1\n5 40\n" + "".join(f"c{k} 0 8\n" + "\n".join(c) + "\n" for k, c in enumerate(classes))
    (tmp_path / "c.cla").write_text(cla)
    lines = []
    for q in ids:  # every model ranked, itself included (dropped), scores with many ties
        for t, sc in zip(rng.permutation(ids), np.round(rng.random(40), 1)):
            lines.append(f"{q} Q0 {t} 0 {sc} r\n")
    (tmp_path / "run.trec").write_text("".join(lines))
    monkeypatch.setattr(trec_stream, "BATCH_BYTES", 1 << 10)
    monkeypatch.setattr(stream.TrecStreamRun, "read_whole", lambda self, rel: pytest.fail("not streamed"))
    streamed = shrec_score.score([tmp_path / "run.trec"], tmp_path / "c.cla", measures=["NN", "FT", "ST", "E", "DCG", "AP"])
    whole = _whole([tmp_path / "run.trec"], tmp_path / "c.cla", measures=["NN", "FT", "ST", "E", "DCG", "AP"])
    pd.testing.assert_frame_equal(streamed.per_query, whole.per_query)
    assert streamed.per_query["AP"].between(0, 1).all() and len(streamed.per_query) == 40


def test_streamed_errors_are_the_exact_ones(tmp_path, monkeypatch):
    from shrec_score.io import trec_stream


    monkeypatch.setattr(trec_stream, "BATCH_BYTES", 1 << 10)
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


def test_packed_keys_are_one_to_one_and_in_byte_order():
    pa = pytest.importorskip("pyarrow", reason="the fast extra")
    from shrec_score._kernels import pack_ids as _packed

    ids = ["b", "a", "ab", "a0", "zzzzzzzz", "é", "e", "A", "9", "ba"]
    keys = _packed(pa.array(ids).slice(1))  # a slice: offsets start inside the buffer
    assert len(set(keys.tolist())) == len(ids) - 1
    by_key = [x for _, x in sorted(zip(keys.tolist(), ids[1:]))]
    assert by_key == sorted(ids[1:], key=lambda x: x.encode())
    assert _packed(pa.array(["a", "123456789"])) is None  # 9 bytes
    assert _packed(pa.array(["a", "a\x00"])) is None  # a NUL would alias the padding


def test_judged_targets_of_query_rows(tmp_path):
    from shrec_score.io.trec import read_qrels
    from shrec_score.relevance import QrelsRelevance

    (tmp_path / "q.qrels").write_text("a 0 x 1\na 0 y 0\nb 0 z 2\nc 0 x 1\nc 0 w -1\n")
    rel = QrelsRelevance.from_qrels(read_qrels(tmp_path / "q.qrels"))
    names = lambda rows: sorted(rel.target_ids[i] for i in rel.judged_targets(np.array(rows)))  # noqa: E731
    assert names([0]) == ["x", "y"]
    assert names([2, 1]) == ["x", "z"]  # c's w (grade -1) is in the pool but unjudged, as in trec_eval
    assert names([0, 2]) == ["x", "y"]
    assert names([]) == []
    assert "w" in rel.target_ids  # still a known id
    # the judgments themselves, query after query in the order asked for
    pos, targets, grades = rel.judgments_of(np.array([2, 0]))
    got = [(int(p), rel.target_ids[t], int(g)) for p, t, g in zip(pos, targets, grades)]
    assert got[:1] == [(0, "x", 1)]  # c: the grade -1 line is left out
    assert sorted(got[1:]) == [(1, "x", 1), (1, "y", 0)]


@pytest.mark.parametrize("seed", [1, 3])
def test_gains_found_while_reading_equal_the_engine_lookup(tmp_path, monkeypatch, seed):
    """Short ids with qrels: the stream finds each line's judgment among its own
    query's (one mix per (query, id)); the same scores as the in-memory reader,
    also when two judgments mix alike and the general path takes the batch."""
    pytest.importorskip("pyarrow", reason="the fast extra")
    from shrec_score import stream
    from shrec_score.io import trec_stream

    # a small pool: every id is judged for several queries of a batch
    run, qrels = _random_trec(tmp_path, seed, pool=70)
    measures = ["AP", "NN", "FT", "P@10", "RR", "NDCG@10", "ADR"]
    monkeypatch.setattr(trec_stream, "BATCH_BYTES", 1 << 11)
    taken = []
    pairs = stream._judged_pairs

    def spy(*args):
        found = pairs(*args)
        taken.append(found is not None)
        return found

    monkeypatch.setattr(stream, "_judged_pairs", spy)
    streamed = shrec_score.score([run], qrels, measures=measures).per_query
    assert taken and all(taken)
    whole = _whole([run], qrels, measures=measures).per_query
    pd.testing.assert_frame_equal(streamed, whole)
    assert whole["AP"].gt(0).sum() > 10
    # without the query in the mix, an id judged for two queries of a batch collides
    from shrec_score import _kernels

    monkeypatch.setattr(_kernels, "MIX_ROW", np.uint64(0))
    taken.clear()
    pd.testing.assert_frame_equal(shrec_score.score([run], qrels, measures=measures).per_query, whole)
    assert taken.count(False) >= 2  # batches handed to the general path


def test_repeated_pairs_exactly_even_when_the_fast_mix_collides():
    from shrec_score._kernels import has_repeats as _repeated

    rng = np.random.default_rng(4)
    for _ in range(20):
        rowq, code = rng.integers(0, 5, 300), rng.integers(-(2**62), 2**62, 300)
        if rng.random() < 0.5:
            code[7] = code[100]
            rowq[7] = rowq[100]
        pairs = list(zip(rowq.tolist(), code.tolist()))
        assert _repeated(rowq, code) == (len(set(pairs)) < len(pairs))
        # query by query, lists of one length: each list's hashes sorted on their own
        order = np.argsort(rowq, kind="stable")
        lens = np.bincount(rowq)
        if (lens == lens[0]).all():
            assert _repeated(rowq[order], code[order], lens) == (len(set(pairs)) < len(pairs))
    # lists of one length (3 x 4), with and without a repeat inside one list
    rowq = np.repeat([0, 1, 2], 4)
    code = np.array([5, 6, 7, 8, 5, 6, 7, 8, 1, 2, 3, 4])
    assert not _repeated(rowq, code, np.array([4, 4, 4]))
    code[11] = 1
    assert _repeated(rowq, code, np.array([4, 4, 4]))
    # 32-bit hashes alike but ids not: settled on the ids (no repeat)
    a = 0x9E3779B97F4A7C15
    twins = np.array([x * pow(a, -1, 2**64) % 2**64 for x in (1, 1 + 2**20)], dtype=np.uint64).view(np.int64)
    assert (twins.view(np.uint64) * np.uint64(a) >> np.uint64(32)).astype(np.uint32).tolist() == [0, 0]
    assert not _repeated(np.array([0, 0]), twins, np.array([2]))
    # (row 1, code 0) and (row 0, code c) mix to the same 64 bits: not a repeat
    a, b = 0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F
    c = (b * pow(a, -1, 2**64)) % 2**64
    rowq, code = np.array([1, 0]), np.array([0, c]).astype(np.uint64).view(np.int64)
    mix = code.astype(np.uint64) * np.uint64(a) + rowq.astype(np.uint64) * np.uint64(b)
    assert mix[0] == mix[1]
    assert not _repeated(rowq, code)
    assert _repeated(np.array([1, 0, 1]), np.concatenate([code, code[:1]]))


def test_lookup_equals_a_dict():
    from shrec_score.relevance import lookup

    rng = np.random.default_rng(8)
    for n_cand in (0, 1, 3, 500, 5000):
        pool = rng.integers(-(2**63) + 2**56, 2**63 - 1, 20_000)
        cand_keys = np.sort(rng.choice(pool, n_cand, replace=False))
        cand_idx = rng.permutation(10 * n_cand + 1)[:n_cand]
        keys = rng.choice(pool, 3000)
        where = dict(zip(cand_keys.tolist(), cand_idx.tolist()))
        want = [where.get(k, -7) for k in keys.tolist()]
        assert lookup(keys, cand_keys, cand_idx, -7).tolist() == want


def test_read_qrels_on_either_reader(tmp_path):
    small = tmp_path / "small.qrels"
    small.write_text("q1 0 d1 1\nq1 0 d2 0\n")
    got = trec.read_qrels(small)
    assert got.queries == ["q1", "q1"] and got.targets == ["d1", "d2"]
    big = tmp_path / "big.qrels"
    big.write_text("".join(f"q{i % 97} 0 d{i} {i % 3}\n" for i in range(80_000)))
    assert big.stat().st_size >= trec.FAST_QRELS_BYTES
    got = trec.read_qrels(big)
    assert got.targets[:3] == ["d0", "d1", "d2"] and got.grades[:4].tolist() == [0, 1, 2, 0] and len(got.query_ids) == 97


@pytest.mark.parametrize("weak", ["length", "prefix"])
def test_hashed_long_ids_stay_exact_when_hashes_collide(tmp_path, monkeypatch, weak):
    """Ids too long to pack are hashed (_kernels.hash_words).  With a hash that
    collides on purpose (every id of one length alike, or ids alike but for their last digits)
    a hit is confirmed on the ids or the batch / run takes
    the general path: the scores are still the in-memory reader's."""
    from shrec_score import _kernels, stream
    from shrec_score.io import trec_stream

    run, qrels = _random_trec(tmp_path, 0, pool=120, doc=ID_STYLES["long"])
    measures = ["AP", "NN", "FT", "P@10", "RR", "NDCG@10", "ADR"]
    monkeypatch.setattr(trec_stream, "BATCH_BYTES", 1 << 11)
    whole = _whole([run], qrels, measures=measures).per_query
    exact = shrec_score.score([run], qrels, measures=measures).per_query
    pd.testing.assert_frame_equal(exact, whole)

    def weak_hash(words, lengths):
        if weak == "length":
            return _kernels.hash_words(np.zeros((len(lengths), 1), dtype=np.uint64), lengths)
        cut = words.copy()
        cut[:, -1] &= np.uint64(0xFFFF)  # "LA0000000123-x": "LA000000" "01" (the rest of the last word dropped)
        return _kernels.hash_words(cut, lengths)

    monkeypatch.setattr(stream, "hash_words", weak_hash)
    slow = []
    pairs, read_whole = stream._judged_pairs, stream.TrecStreamRun.read_whole
    monkeypatch.setattr(stream, "_judged_pairs", lambda *a: (lambda f: slow.append(f is None) or f)(pairs(*a)))
    monkeypatch.setattr(stream.TrecStreamRun, "read_whole", lambda self, rel: slow.append(True) or read_whole(self, rel))
    pd.testing.assert_frame_equal(shrec_score.score([run], qrels, measures=measures).per_query, whole)
    assert any(slow)  # the collisions were seen and sent to an exact path


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


def test_a_streamed_run_scored_against_two_qrels_uses_each_ones_ids(tmp_path):
    """The run record caches the relevance's target ids (as arrow ids, packed
    keys, words); a second scoring of the same record against other qrels
    with as many targets must look its ids up among the new ones."""
    from shrec_score.loading import load_relevance, load_runs

    run = tmp_path / "run.trec"
    run.write_text("".join(f"q{q} Q0 doc-long-identifier-{d:04d} {r + 1} {50 - r} t\n" for q in range(3) for r, d in enumerate(range(q, q + 20))))
    first, second = tmp_path / "a.qrels", tmp_path / "b.qrels"
    # as many judged targets in both, different ids: doc d relevant in a, doc d + 1 in b
    first.write_text("".join(f"q{q} 0 doc-long-identifier-{d:04d} 1\n" for q in range(3) for d in range(q, q + 20, 4)))
    second.write_text("".join(f"q{q} 0 doc-long-identifier-{d + 1:04d} 1\n" for q in range(3) for d in range(q, q + 20, 4)))
    rel_a, rel_b = load_relevance(str(first)), load_relevance(str(second))
    assert len(rel_a.target_ids) == len(rel_b.target_ids)
    (record,), _ = load_runs([str(run)], rel_a)
    a = shrec_score.score([record], rel_a, measures=["NN", "P@10"]).per_query
    b = shrec_score.score([record], rel_b, measures=["NN", "P@10"]).per_query
    # by hand: a's relevant docs sit at places 1, 5, 9, ...: NN 1, P@10 3/10; b's at 2, 6, 10: NN 0, P@10 3/10
    assert a["NN"].tolist() == [1.0] * 3 and a["P@10"].tolist() == [0.3] * 3
    assert b["NN"].tolist() == [0.0] * 3 and b["P@10"].tolist() == [0.3] * 3
