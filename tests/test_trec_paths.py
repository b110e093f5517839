"""The TREC readers: pyarrow and pandas paths agree, and the trec_eval order is exact."""

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
    got = trec_order(q, s, lambda: rank)
    got = list(range(n)) if got is None else got.tolist()
    want = python_trec_order(q.tolist(), s.tolist(), docs)
    assert [(q[i], s[i], docs[i]) for i in got] == [(q[i], s[i], docs[i]) for i in want]


@pytest.fixture
def no_arrow(monkeypatch):
    monkeypatch.setattr(trec, "USE_ARROW", False)


def _scores(d):
    return shrec_score.score(
        [f"{d}/results.test"], f"{d}/qrels.test", measures=["AP", "FT", "P@5", "RR"]
    ).per_query.set_index("query")


def test_pandas_path_equals_arrow_path_on_trec_eval_data(monkeypatch):
    pytest.importorskip("pyarrow", reason="the fast extra")
    d = shared_path("trec_eval")
    with_arrow = _scores(d)
    monkeypatch.setattr(trec, "USE_ARROW", False)
    pd.testing.assert_frame_equal(with_arrow, _scores(d))


def test_large_qrels_fast_path_equals_line_reader(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow", reason="the fast extra")
    rng = np.random.default_rng(2)
    rows = [f"q{q} 0 d{d} {g}\n" for q in range(400) for d, g in zip(rng.choice(5000, 200, replace=False), rng.integers(-1, 3, 200))]
    path = tmp_path / "big.qrels"
    path.write_text("".join(rows))
    assert path.stat().st_size > (1 << 20)
    fast = trec.read_qrels(path)
    monkeypatch.setattr(trec, "USE_ARROW", False)
    slow = trec.read_qrels(path)
    assert (fast.queries, fast.targets, fast.grades) == (slow.queries, slow.targets, slow.grades)


def test_duplicate_and_unknown_errors_on_both_paths(tmp_path, monkeypatch):
    (tmp_path / "c.cla").write_text("PSB 1\n1 3\na 0 3\nx\ny\nz\n")
    (tmp_path / "dup.trec").write_text("x Q0 y 1 0.9 t\nx Q0 z 2 0.8 t\nx Q0 y 3 0.7 t\n" + "".join(f"{q} Q0 x 1 0.5 t\n" for q in "yz"))
    (tmp_path / "unk.trec").write_text("x Q0 y 1 0.9 t\nx Q0 w 2 0.8 t\n" + "".join(f"{q} Q0 x 1 0.5 t\n" for q in "yz"))
    for arrow in (True, False):
        monkeypatch.setattr(trec, "USE_ARROW", arrow)
        with pytest.raises(shrec_score.InputError, match=r"dup.trec:3: expected each target once per query; x y is already ranked at line 1"):
            shrec_score.score([tmp_path / "dup.trec"], tmp_path / "c.cla")
        with pytest.raises(shrec_score.InputError, match=r"unk.trec:2: expected a target id of the collection, got unknown id 'w'"):
            shrec_score.score([tmp_path / "unk.trec"], tmp_path / "c.cla")
