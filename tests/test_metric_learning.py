"""MAP@R and pytorch-metric-learning's AccuracyCalculator keys, through evaluate(),
against a plain transcription of their definitions (Musgrave et al. 2020,
"A Metric Learning Reality Check", section 3.2, and the AccuracyCalculator
documentation), written here from the definitions."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import shrec_score
from shrec_score.measures import get_measure
from shrec_score.measures.precision import map_at_r

KEYS = ["precision_at_1", "r_precision", "mean_average_precision_at_r", "mean_reciprocal_rank"]


def neighbour_matches(dist: np.ndarray, labels: np.ndarray) -> list[np.ndarray]:
    """Per query, whether each of its neighbours shares its label: the other items
    sorted by distance, equal distances by the lower index (shrec-score's tie rule)."""
    out = []
    for q in range(len(labels)):
        others = np.array([j for j in range(len(labels)) if j != q])
        order = others[np.argsort(dist[q, others], kind="stable")]
        out.append(labels[order] == labels[q])
    return out


def accuracy_calculator(matches: np.ndarray) -> dict[str, float] | None:
    """The four keys for one query, from its neighbours' matches (None: a lone query,
    no other item of its class, which AccuracyCalculator leaves out)."""
    r = int(matches.sum())
    if r == 0:
        return None
    hits = np.cumsum(matches)
    precision_at_i = hits / np.arange(1, len(matches) + 1)
    return {
        "precision_at_1": float(matches[0]),
        "r_precision": float(matches[:r].sum() / r),
        "mean_average_precision_at_r": float((precision_at_i[:r] * matches[:r]).sum() / r),
        "mean_reciprocal_rank": float(1.0 / (np.argmax(matches) + 1)),
    }


def oracle_means(dist: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    per_query = [v for v in (accuracy_calculator(m) for m in neighbour_matches(dist, labels)) if v is not None]
    return {k: float(np.mean([v[k] for v in per_query])) for k in KEYS}


def test_map_at_r_by_hand():
    # R = 3 relevant items at ranks 1, 3, 4: P(1) rel(1) + P(3) rel(3); rank 4 is past R
    assert map_at_r(np.array([[1.0, 3.0, 4.0]]), n_relevant=np.array([3]))[0] == pytest.approx((1 / 1 + 2 / 3) / 3)
    # R = 2, relevant at ranks 2 and 4: only rank 2 counts, P(2) = 1/2
    # R = 1, relevant at rank 1: 1; K = 0: empty
    got = map_at_r(np.array([[2.0, 4.0], [1.0, np.inf], [np.inf, np.inf]]), n_relevant=np.array([2, 1, 0]))
    assert got[:2].tolist() == [(1 / 2) / 2, 1.0]
    assert np.isnan(got[2])


def test_map_at_r_by_hand_through_evaluate():
    """Five items, classes a a a b b; query 0's row ranks 3, 1, 4, 2 (distances 1..4):
    its relevant items 1 and 2 are at ranks 2 and 4, R = 2: MAP@R = (1/2) / 2."""
    labels = ["a", "a", "a", "b", "b"]
    d = np.array(
        [
            [0, 2, 4, 1, 3],
            [2, 0, 1, 5, 6],  # query 1: item 2 first, item 0 second -> R = 2, 1
            [4, 1, 0, 5, 6],  # query 2: 1, 0 -> 1
            [1, 5, 5, 0, 9],  # query 3 (b): 0, 1, 2 (tie: lower column), then 4 at rank 4 -> R = 1: 0
            [3, 6, 6, 9, 0],  # query 4 (b): 0, 1, 2, 3 -> relevant 3 at rank 4 -> 0
        ],
        dtype=np.float64,
    )
    report = shrec_score.evaluate(distances=d, labels=labels, measures=["MAP@R", *KEYS])
    per_query = report.per_query
    assert per_query["MAP@R"].tolist() == [(1 / 2) / 2, 1.0, 1.0, 0.0, 0.0]
    assert report.leaderboard.loc[0, "MAP@R"] == pytest.approx(((1 / 2) / 2 + 1 + 1 + 0 + 0) / 5)
    assert oracle_means(d, np.array(labels))["mean_average_precision_at_r"] == pytest.approx(report.leaderboard.loc[0, "MAP@R"])


def test_the_keys_are_names_of_the_equal_measures():
    assert {k: get_measure(k).name for k in KEYS} == {
        "precision_at_1": "NN",
        "r_precision": "FT",
        "mean_average_precision_at_r": "MAP@R",
        "mean_reciprocal_rank": "RR",
    }


def _scored(x: np.ndarray, labels: np.ndarray, **kw: object) -> dict[str, float]:
    report = shrec_score.evaluate(embeddings=x, labels=labels, metric="sqeuclidean", dtype="float64", measures=KEYS, **kw)
    board = report.leaderboard
    return {k: float(board.loc[0, k]) for k in KEYS}  # columns are named as the measures were typed


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_keys_equal_the_transcription_on_embeddings_with_ties(seed):
    """Small integer embeddings: many equal squared distances (exact in float64),
    ranked by the lower column as the transcription ranks them; a lone query."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, size=(30, 2)).astype(np.float64)
    labels = np.concatenate([rng.integers(0, 4, 29), [9]])  # class 9: a lone query
    dist = ((x[:, None, :] - x[None, :, :]) ** 2).sum(axis=-1)
    assert len(np.unique(dist)) < 10  # ties everywhere
    want = oracle_means(dist, labels)
    got = _scored(x, labels)
    assert got == pytest.approx(want, abs=1e-12)


def test_keys_equal_the_transcription_on_random_embeddings():
    rng = np.random.default_rng(11)
    x = rng.normal(size=(120, 8))
    labels = rng.integers(0, 7, 120)
    dist = ((x[:, None, :] - x[None, :, :]) ** 2).sum(axis=-1)
    got = _scored(x, labels)
    assert got == pytest.approx(oracle_means(dist, labels), abs=1e-12)


def _every_order_mean(dist_row: np.ndarray, matches_of: np.ndarray) -> float:
    """Mean MAP@R over every order inside each group of equal distances (the transcription per order)."""
    values = np.unique(dist_row)
    groups = [np.flatnonzero(dist_row == v) for v in values]
    total, count = 0.0, 0
    for orders in itertools.product(*(itertools.permutations(g) for g in groups)):
        order = np.concatenate(orders)
        result = accuracy_calculator(matches_of[order])
        assert result is not None
        total += result["mean_average_precision_at_r"]
        count += 1
    return total / count


def test_map_at_r_under_ties_expected_is_the_mean_over_every_order():
    labels = np.array(["a", "a", "b", "a", "b", "a", "b"])
    d = np.array(
        [
            [0, 1, 1, 1, 2, 2, 2],
            [1, 0, 3, 3, 3, 1, 1],
            [1, 3, 0, 2, 2, 2, 2],
            [1, 3, 2, 0, 1, 1, 5],
            [2, 3, 2, 1, 0, 1, 1],
            [2, 1, 2, 1, 1, 0, 4],
            [2, 1, 2, 5, 1, 4, 0],
        ],
        dtype=np.float64,
    )
    report = shrec_score.evaluate(distances=d, labels=list(labels), measures=["MAP@R"], ties="expected")
    for q in range(len(labels)):
        others = np.array([j for j in range(len(labels)) if j != q])
        want = _every_order_mean(d[q, others], labels[others] == labels[q])
        assert report.per_query["MAP@R"][q] == pytest.approx(want, abs=1e-12), q


def test_map_at_r_optimistic_and_pessimistic_bound_expected():
    rng = np.random.default_rng(5)
    x = rng.integers(0, 2, size=(25, 3)).astype(np.float64)
    labels = rng.integers(0, 3, 25)
    kw = {"embeddings": x, "labels": labels, "metric": "sqeuclidean", "dtype": "float64", "measures": ["MAP@R"]}
    low, mid, high = (shrec_score.evaluate(ties=t, **kw).per_query["MAP@R"].to_numpy() for t in ("pessimistic", "expected", "optimistic"))
    assert (low <= mid + 1e-12).all() and (mid <= high + 1e-12).all() and (low < high).any()


@pytest.mark.parametrize("name", ["R@1", "Recall@1", "recall@10", "RECALL@5"])
def test_recall_at_k_in_evaluate_names_both_meanings(name):
    k = name.split("@")[1]
    with pytest.raises(ValueError) as err:
        shrec_score.evaluate(embeddings=np.zeros((4, 2)), labels=["a", "a", "b", "b"], measures=["NN", name])
    message = str(err.value)
    assert f"IR recall at {k}" in message and f"'recall.{k}'" in message
    assert f"metric-learning Recall@{k}" in message and f"'success.{k}'" in message


def test_recall_at_k_as_sort_is_refused_too():
    with pytest.raises(ValueError, match="'success.1'"):
        shrec_score.evaluate(embeddings=np.zeros((4, 2)), labels=["a", "a", "b", "b"], measures=["NN"], sort="R@1")


def test_success_k_is_the_metric_learning_recall_at_k():
    """A hit in the first k (every query has a relevant item here: no lone query)."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(40, 4))
    labels = np.repeat(np.arange(8), 5)
    dist = ((x[:, None, :] - x[None, :, :]) ** 2).sum(axis=-1)
    want = {k: np.mean([m[:k].any() for m in neighbour_matches(dist, labels)]) for k in (1, 4)}
    board = shrec_score.evaluate(embeddings=x, labels=labels, metric="sqeuclidean", dtype="float64", measures=["success.1", "success.4"]).leaderboard
    assert board.loc[0, "success.1"] == pytest.approx(want[1], abs=1e-12)
    assert board.loc[0, "success.4"] == pytest.approx(want[4], abs=1e-12)
