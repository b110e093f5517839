"""Tie-aware scoring with SHREC 2006 graded relevance (issue 19): matrices and
ranked-list files with distances, every graded measure and curve against the
mean / best / worst over every arrangement of the grades in each tie group."""

from __future__ import annotations

import os

import numpy as np
import pytest

from shrec_score.engine import score_run
from shrec_score.io.lists import read_list_run
from shrec_score.measures import GainBlock, Settings, get_measure
from shrec_score.measures.cumgain import gain_vectors
from shrec_score.model import Classification, MatrixRun, RunSource
from shrec_score.relevance import Relevance
from tests.test_ties import arrangements

GRADED = [f"{m}_{lv}" for m in ("TP", "FN", "FT", "ST", "P", "R", "AP") for lv in ("highly", "relevant")] + [
    "ADR", "CG@2", "DCG@4", "NCG@5", "NDCG@3", "NDCG@9",
]


def sister_relevance(seed: int) -> tuple[Relevance, np.ndarray]:
    rng = np.random.default_rng(seed)
    names, parents = ["a", "b", "c", "p"], ["p", "p", "0", "0"]
    n = 10
    cla = Classification("t.cla", names, parents, [f"t{i}" for i in range(n)], rng.integers(0, 3, n).astype(np.int32))
    nq = 8
    queries = Classification("q.cla", names, parents, [f"q{i}" for i in range(nq)], rng.integers(0, 3, nq).astype(np.int32))
    rel = Relevance.from_classification(cla, queries, grades="sister")
    levels = [1, 2, 3, 4, 2, 10, 3, 5]
    d = np.stack([rng.integers(0, levels[i], n) for i in range(nq)]).astype(np.float64) / 8
    return rel, d


def brute(rel: Relevance, d: np.ndarray, q: int, depth: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    order = sorted(range(d.shape[1]), key=lambda c: (d[q, c], c))
    grades = [int(rel.gains(np.array([q]), np.array([c]))[0]) for c in order]
    arr = arrangements(grades, [d[q, c] for c in order])
    n_arr, n = arr.shape
    ch, cr = rel.n_relevant(2)[q], rel.n_relevant(1)[q]
    gb = GainBlock(arr.astype(np.int8), np.full(n_arr, n), np.full(n_arr, ch), np.full(n_arr, cr), n, 2)
    return {m: get_measure(m).compute(gb, Settings()) for m in GRADED}, gain_vectors(gb, depth)


def score_all_modes(make_run: object, rel: Relevance, depth: int) -> dict[str, object]:
    out = {}
    for mode in ("expected", "optimistic", "pessimistic"):
        out[mode] = score_run(make_run(), rel, [get_measure(m) for m in GRADED], Settings(ties=mode, curve_depth=depth), curves=True)  # type: ignore[operator]
    return out


@pytest.mark.parametrize("seed", range(3))
def test_graded_matrix_and_list_files_match_brute_force(tmp_path: object, seed: int) -> None:
    rel, d = sister_relevance(seed)
    depth = 10
    matrix = score_all_modes(lambda: MatrixRun("m", "m.npy", d, rel.query_ids, np.arange(d.shape[0]), np.arange(d.shape[1])), rel, depth)
    # the same run as ranked-list files with distances (rule order: distance, then lower column)
    folder = os.path.join(str(tmp_path), "run")
    os.makedirs(folder)
    for q, qid in enumerate(rel.query_ids):
        order = sorted(range(d.shape[1]), key=lambda c: (d[q, c], c))
        with open(os.path.join(folder, qid), "w") as f:
            f.write("".join(f"{rel.target_ids[c]} {float(d[q, c])!r}\n" for c in order))

    def lists() -> object:
        return read_list_run(RunSource("l", folder, "lists"), rel.query_ids, rel.target_index, ties=True)

    listed = score_all_modes(lists, rel, depth)
    curves: dict[str, dict[str, list[np.ndarray]]] = {mode: {k: [] for k in ("CG", "DCG", "NCG", "NDCG")} for mode in matrix}
    for q in range(d.shape[0]):
        if rel.n_relevant(1)[q] == 0:
            continue
        values, vectors = brute(rel, d, q, depth)
        for m in GRADED:
            for mode, want in (("expected", np.mean), ("optimistic", np.max), ("pessimistic", np.min)):
                if m.startswith("FN_"):  # lower is better: the bounds swap
                    want = {"optimistic": np.min, "pessimistic": np.max}.get(mode, want)
                for got in (matrix, listed):
                    have = got[mode].values[m][q]  # type: ignore[attr-defined]
                    if np.isnan(values[m]).all():
                        assert np.isnan(have)
                    else:
                        assert have == pytest.approx(want(values[m]), abs=1e-12), (m, q, mode)
        for mode in curves:
            for k, v in vectors.items():
                curves[mode][k].append(v.mean(axis=0) if mode == "expected" else (v.max(axis=0) if mode == "optimistic" else v.min(axis=0)))
    # the SHREC 2006 curves: means over queries of the per-query vectors
    for mode in curves:
        for k in ("CG", "DCG", "NCG", "NDCG"):
            want = np.nanmean(np.array(curves[mode][k]), axis=0)
            for got in (matrix, listed):
                np.testing.assert_allclose(got[mode].vectors[k].mean(), want, atol=1e-12)  # type: ignore[attr-defined]


def test_list_files_without_distances_have_no_ties(tmp_path: object) -> None:
    rel, d = sister_relevance(0)
    folder = os.path.join(str(tmp_path), "run")
    os.makedirs(folder)
    for qid in rel.query_ids:
        with open(os.path.join(folder, qid), "w") as f:
            f.write("".join(f"{t}\n" for t in rel.target_ids))
    run = read_list_run(RunSource("l", folder, "lists"), rel.query_ids, rel.target_index, ties=True)
    assert run.tie_start is not None
    assert (run.tie_start == np.arange(run.targets.size) - np.repeat(run.offsets[:-1], run.lengths())).all()  # every entry its own group
    rule = score_run(run, rel, [get_measure(m) for m in GRADED], Settings())
    for mode in ("expected", "optimistic", "pessimistic"):
        other = score_run(run, rel, [get_measure(m) for m in GRADED], Settings(ties=mode))
        for m in GRADED:
            np.testing.assert_allclose(other.values[m], rule.values[m], atol=1e-15)
