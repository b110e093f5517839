"""Relevance.list_gains: the gains of ranked lists held end to end (CSR).

ClassRelevance looks long lists up one at a time in its class x target
table; the plain twin (Relevance.list_gains: each entry's query row
repeated, then gains) and a hand computation from the classes are the
oracles.
"""

from __future__ import annotations

import numpy as np
import pytest

from shrec_score import engine, relevance
from shrec_score.model import Classification, RankedRun
from shrec_score.relevance import Relevance

NAMES = ["p0", "p1", "p2"] + [f"c{c}" for c in range(12)]
PARENTS = ["0", "0", "0"] + [f"p{c % 3}" for c in range(12)]


def _sister(n_targets: int, n_queries: int, seed: int) -> tuple[Relevance, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    t_labels = rng.integers(3, 15, n_targets)
    q_labels = rng.integers(3, 15, n_queries)
    targets = Classification("t.cla", NAMES, PARENTS, [f"t{i}" for i in range(n_targets)], t_labels.astype(np.int32))
    queries = Classification("q.cla", NAMES, PARENTS, [f"q{i}" for i in range(n_queries)], q_labels.astype(np.int32))
    return Relevance.from_classification(targets, queries, grades="sister"), q_labels, t_labels


def _hand(q_labels: np.ndarray, t_labels: np.ndarray, rows: list[int], lists: list[np.ndarray]) -> list[int]:
    """Sister grades written out: own class 2, a sibling class under a real parent 1, else 0."""
    out = []
    for r, lst in zip(rows, lists):
        q = int(q_labels[r])
        out += [2 if q == t else int(PARENTS[q] != "0" and PARENTS[q] == PARENTS[t]) for t in t_labels[lst].tolist()]
    return out


@pytest.mark.parametrize("length", [0, 1, 255, 256, 300, 500])
def test_class_list_gains_against_the_plain_twin_and_the_hand(length):
    """Lists of one length each side of LIST_GAINS_MIN_MEAN (the per-list and
    the all-at-once ways), full permutations and shorter lists, queries in
    any order and repeated: equal to the twin and to the grades by hand."""
    rel, q_labels, t_labels = _sister(500, 40, 71)
    rng = np.random.default_rng(length)
    rows = rng.integers(0, 40, 25)
    lists = [rng.permutation(500)[:length] for _ in rows]
    offsets = np.concatenate([[0], np.cumsum([len(x) for x in lists])]).astype(np.int64)
    targets = np.concatenate(lists).astype(np.int64)
    got = rel.list_gains(rows, offsets, targets)
    assert got.dtype == Relevance.list_gains(rel, rows, offsets, targets).dtype
    assert got.tolist() == Relevance.list_gains(rel, rows, offsets, targets).tolist()
    assert got.tolist() == _hand(q_labels, t_labels, rows.tolist(), lists)
    if length >= 256:
        assert set(got.tolist()) == {0, 1, 2}


def test_class_list_gains_takes_the_per_list_way_and_falls_back(monkeypatch):
    """Long lists go one take a list (no repeat of the query rows); lists of
    mixed lengths (some empty) agree with the twin; a target outside the
    collection goes the plain way (which then fails as gains does)."""
    rel, q_labels, t_labels = _sister(700, 30, 72)
    rng = np.random.default_rng(5)
    rows = np.arange(30)[::-1].copy()
    lists = [rng.permutation(700)[: int(n)] for n in rng.choice([0, 3, 700, 650], 30)]
    offsets = np.concatenate([[0], np.cumsum([len(x) for x in lists])]).astype(np.int64)
    targets = np.concatenate(lists).astype(np.int64)
    repeats = []
    real_repeat = np.repeat
    monkeypatch.setattr(relevance.np, "repeat", lambda *a, **k: repeats.append(1) or real_repeat(*a, **k))
    got = rel.list_gains(rows, offsets, targets)
    assert repeats == []  # the per-list way
    monkeypatch.undo()
    assert got.tolist() == Relevance.list_gains(rel, rows, offsets, targets).tolist()
    assert got.tolist() == _hand(q_labels, t_labels, rows.tolist(), lists)
    bad = targets.copy()
    bad[-1] = 700  # outside the collection: the plain way, as gains (an IndexError)
    with pytest.raises(IndexError):
        rel.list_gains(rows, offsets, bad)
    with pytest.raises(IndexError):
        rel.gains(np.repeat(rows, np.diff(offsets)), bad)
    assert rel.list_gains(rows[:0], np.zeros(1, dtype=np.int64), targets[:0]).tolist() == []


def test_flat_gains_of_a_run_chunk_equal_the_repeated_lookup(monkeypatch):
    """Relevance.list_gains over a run cut by engine.run_chunks (sub-runs whose
    offsets start at 0) equals each entry's gain looked up one by one."""
    rel, q_labels, t_labels = _sister(400, 12, 73)
    rng = np.random.default_rng(9)
    lists = {q: rng.permutation(400)[: int(rng.integers(300, 401))] for q in rel.query_ids}
    run = RankedRun.from_lists("r", lists)
    monkeypatch.setattr(engine, "CHUNK_ENTRIES", 1000)
    seen = 0
    for rows, sub in engine.run_chunks(run):
        got = rel.list_gains(rows, sub.offsets, sub.targets)
        hand = [int(rel.gains(np.array([r]), np.array([t]))[0]) for r, lst in zip(rows.tolist(), (sub.ranked_list(i) for i in range(len(rows)))) for t in lst.tolist()]
        assert got.tolist() == hand
        seen += len(rows)
    assert seen == 12


def test_class_gains_broadcast_as_the_base_class_promises():
    """Relevance.gains broadcasts its arguments (a column of query rows
    against a row of targets: a query x target table); ClassRelevance's
    class x class lookup too, equal to the hand."""
    rel, q_labels, t_labels = _sister(30, 6, 5)
    q = np.array([[0], [3], [5]])
    t = np.array([2, 7, 11, 29])
    got = rel.gains(q, t)
    assert got.shape == (3, 4)
    assert got.tolist() == [_hand(q_labels, t_labels, [r], [t]) for r in (0, 3, 5)]


def test_qrels_gains_broadcast_and_take_a_single_pair(tmp_path):
    """QrelsRelevance.gains broadcasts as Relevance.gains promises: a column of query rows against a row of
    targets (judged and unjudged ids: 0, or ``missing``), and a single (query, target) pair, as ClassRelevance's."""
    from shrec_score.io.trec import read_qrels

    path = tmp_path / "q.qrels"
    path.write_text("1 0 a 2\n1 0 b 0\n2 0 b 1\n2 0 c 1\n")
    rel = Relevance.from_qrels(read_qrels(path))
    ids = list(rel.target_ids)
    a, b, c = ids.index("a"), ids.index("b"), ids.index("c")
    unjudged = len(ids)  # an id no line judges (an open collection's)
    got = rel.gains(np.array([[0], [1]]), np.array([a, b, c, unjudged]))
    assert got.tolist() == [[2, 0, 0, 0], [0, 1, 1, 0]]
    assert rel.gains(np.array([[0], [1]]), np.array([a, c]), missing=-1).tolist() == [[2, -1], [-1, 1]]
    assert int(rel.gains(0, a)) == 2 and int(rel.gains(1, unjudged)) == 0
    assert int(rel.gains(np.int64(1), np.int64(a), missing=-1)) == -1
