"""Relevance is fixed once built: Ds is declared or unknown, whatever reader handled a run."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

import shrec_score


def _write(tmp_path, seed=3):
    """Graded qrels over 5 queries, and one TREC run written twice: grouped by
    query (streamed) and with its lines shuffled (read whole)."""
    rng = random.Random(seed)
    queries = [f"q{i}" for i in range(5)]
    docs = [f"d{i:03d}" for i in range(40)]
    qrels, lines = [], []
    for q in queries:
        for d in rng.sample(docs, 12):
            qrels.append(f"{q} 0 {d} {rng.choice([0, 1, 2])}")
        for rank, d in enumerate(rng.sample(docs, 20), start=1):
            lines.append(f"{q} Q0 {d} {rank} {100 - rank}.5 tag")
    (tmp_path / "qrels.txt").write_text("\n".join(qrels) + "\n")
    grouped = tmp_path / "grouped"
    shuffled = tmp_path / "shuffled"
    grouped.mkdir()
    shuffled.mkdir()
    (grouped / "run.trec").write_text("\n".join(lines) + "\n")
    rng.shuffle(lines)
    (shuffled / "run.trec").write_text("\n".join(lines) + "\n")
    return tmp_path / "qrels.txt", grouped / "run.trec", shuffled / "run.trec"


def _per_query(run, qrels, **kw):
    report = shrec_score.score([run], qrels, measures=["TN_relevant", "TN_highly", "TP_relevant", "FP_relevant", "FN_relevant"], **kw)
    return report.per_query.set_index("query")


def test_tn_is_empty_without_a_declared_collection_whatever_the_reader(tmp_path):
    qrels, grouped, shuffled = _write(tmp_path)
    a = _per_query(grouped, qrels)
    b = _per_query(shuffled, qrels)
    assert a["TN_relevant"].isna().all() and a["TN_highly"].isna().all()
    assert b["TN_relevant"].isna().all() and b["TN_highly"].isna().all()
    # the counts that need no Ds agree
    np.testing.assert_array_equal(a["TP_relevant"], b["TP_relevant"])
    # and the signature says why TN is empty, in words rather than "None"
    report = shrec_score.score([grouped], qrels, measures=["TN_relevant"])
    assert report.signature["collection"] == "unknown (TN columns empty)"
    assert "collection: unknown (TN columns empty)" in report.signature_text()


def test_tn_with_a_declared_size_is_the_same_for_a_streamed_and_a_shuffled_run(tmp_path):
    qrels, grouped, shuffled = _write(tmp_path)
    a = _per_query(grouped, qrels, collection_size=1000)
    b = _per_query(shuffled, qrels, collection_size=1000)
    np.testing.assert_array_equal(a["TN_relevant"].to_numpy(), b["TN_relevant"].to_numpy())
    # by hand: TN = Ds + Vr - Va - Cr, with Va = 20 retrieved, Vr = TP, Cr = TP + FN
    vr, cr = a["TP_relevant"], a["TP_relevant"] + a["FN_relevant"]
    np.testing.assert_array_equal(a["TN_relevant"].to_numpy(), (1000 + vr - 20 - cr).to_numpy())


def test_reading_runs_leaves_the_relevance_as_it_was(tmp_path):
    qrels, grouped, shuffled = _write(tmp_path)
    rel = shrec_score.load_relevance(qrels)
    before = (list(rel.target_ids), rel.collection_size, rel.n_relevant(1).tolist())
    shrec_score.score([shuffled], rel, measures=["AP"])
    shrec_score.score([grouped], rel, measures=["AP"])
    assert (list(rel.target_ids), rel.collection_size, rel.n_relevant(1).tolist()) == before
    assert rel.collection_size is None and not rel.closed
    with pytest.raises(dataclasses.FrozenInstanceError):
        rel.collection_size = 5  # type: ignore[misc]
