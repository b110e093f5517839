import math

import numpy as np
import pytest

from shrec_score.measures import (
    PR_LEVELS,
    RankBlock,
    average_precision,
    dcg,
    e_measure,
    first_tier,
    get_measure,
    nearest_neighbor,
    pr_curve,
    precision_at,
    recall_at,
    reciprocal_rank,
    second_tier,
)

from . import reference as ref


def rank_block(ranks: list[list[int]], n_relevant: list[int], n_retrieved: list[int]) -> RankBlock:
    """A block from the relevant items' ranks per query, padded with inf to the largest K."""
    out = np.full((len(ranks), max(1, *n_relevant, *map(len, ranks))), np.inf)
    for i, r in enumerate(ranks):
        out[i, : len(r)] = sorted(r)
    return RankBlock(out, np.asarray(n_relevant, dtype=np.int64), np.asarray(n_retrieved, dtype=np.int64))

# The PSB psbPlot example: K = 5, hits at ranks 1, 4, 10, 41, 44.
EX = np.array([[1.0, 4.0, 10.0, 41.0, 44.0]])
K5 = np.array([5])


def test_psbplot_example_precision_at_recall_levels():
    got = pr_curve(EX, n_relevant=K5, levels=np.array([0.2, 0.4, 0.6, 0.8, 1.0]))[0]
    assert got.tolist() == pytest.approx([1 / 1, 2 / 4, 3 / 10, 4 / 41, 5 / 44])
    assert got.round(6).tolist() == [1.0, 0.5, 0.3, 0.097561, 0.113636]


def test_psbplot_example_interpolates_between_hits_and_skips_levels_below_one_over_k():
    got = pr_curve(EX, n_relevant=K5)[0]
    assert np.isnan(got[:3]).all()  # 0.05, 0.10, 0.15 < 1/5
    # level 0.30 -> position 1.5: halfway between 1/1 and 2/4
    assert got[5] == pytest.approx((1 / 1 + 2 / 4) / 2)
    # level 0.90 -> position 4.5: halfway between 4/41 and 5/44
    assert got[17] == pytest.approx((4 / 41 + 5 / 44) / 2)
    assert got[19] == pytest.approx(5 / 44)


def test_psbplot_example_scalar_measures():
    assert nearest_neighbor(EX, n_relevant=K5)[0] == 1.0
    assert first_tier(EX, n_relevant=K5)[0] == 2 / 5  # ranks 1 and 4 are within 5
    assert second_tier(EX, n_relevant=K5)[0] == 3 / 5  # 1, 4, 10 within 10
    assert e_measure(EX, n_relevant=K5, n_retrieved=np.array([100]))[0] == pytest.approx(2 * (3 / 32) * (3 / 5) / (3 / 32 + 3 / 5))
    assert average_precision(EX, n_relevant=K5)[0] == pytest.approx((1 / 1 + 2 / 4 + 3 / 10 + 4 / 41 + 5 / 44) / 5)
    ideal = 1 + 1 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4) + 1 / math.log2(5)
    actual = 1 + 1 / math.log2(4) + 1 / math.log2(10) + 1 / math.log2(41) + 1 / math.log2(44)
    assert dcg(EX, n_relevant=K5)[0] == pytest.approx(actual / ideal)
    assert precision_at(EX, n_relevant=K5, k=10)[0] == 3 / 10
    assert recall_at(EX, n_relevant=K5, k=10)[0] == 3 / 5
    assert reciprocal_rank(np.array([[4.0, 9.0]]), n_relevant=np.array([2]))[0] == 1 / 4


def test_unretrieved_relevant_items_and_short_lists():
    # K = 4, only two retrieved (ranks 2 and 3) in a list of 3
    r = np.array([[2.0, 3.0, np.inf, np.inf]])
    k = np.array([4])
    assert average_precision(r, n_relevant=k)[0] == pytest.approx((1 / 2 + 2 / 3) / 4)
    assert first_tier(r, n_relevant=k)[0] == 2 / 4
    assert e_measure(r, n_relevant=k, n_retrieved=np.array([3]))[0] == pytest.approx(2 * (2 / 3) * (2 / 4) / (2 / 3 + 2 / 4))
    assert reciprocal_rank(np.array([[np.inf]]), n_relevant=np.array([1]))[0] == 0.0


def test_no_relevant_item_gives_nan_for_every_measure():
    r = np.array([[np.inf]])
    k = np.array([0])
    for f in (nearest_neighbor, first_tier, second_tier, average_precision, dcg, reciprocal_rank):
        assert np.isnan(f(r, n_relevant=k)[0]), f.__name__
    assert np.isnan(e_measure(r, n_relevant=k, n_retrieved=np.array([10]))[0])
    assert np.isnan(pr_curve(r, n_relevant=k)).all()


def _random_case(rng, n_targets=60):
    k = int(rng.integers(1, 25))
    gains = [0] * n_targets
    for i in rng.choice(n_targets, size=k, replace=False):
        gains[i] = 1
    length = int(rng.integers(1, n_targets + 1))
    return gains[:length], k


@pytest.mark.parametrize("seed", range(5))
def test_block_measures_equal_the_reference_loops(seed):
    rng = np.random.default_rng(seed)
    cases = [_random_case(rng) for _ in range(40)]
    block = rank_block(
        [[i + 1 for i, g in enumerate(gains) if g] for gains, _ in cases],
        [k for _, k in cases],
        [len(g) for g, _ in cases],
    )
    got = {
        name: get_measure(name).compute(block, __import__("shrec_score").measures.Settings())
        for name in ("NN", "FT", "ST", "E", "DCG", "AP", "RR", "P@10")
    }
    want = {
        "NN": [ref.nn(g, k) for g, k in cases],
        "FT": [ref.ft(g, k) for g, k in cases],
        "ST": [ref.st(g, k) for g, k in cases],
        "E": [ref.e_measure(g, k) for g, k in cases],
        "DCG": [ref.dcg(g, k) for g, k in cases],
        "AP": [ref.ap(g, k) for g, k in cases],
        "RR": [ref.rr(g, k) for g, k in cases],
        "P@10": [ref.p_at(g, k, 10) for g, k in cases],
    }
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-12, err_msg=name)
    pr = pr_curve(block.rel_ranks, n_relevant=block.n_relevant)
    want_pr = [ref.pr_curve(g, k, PR_LEVELS) for g, k in cases]
    np.testing.assert_allclose(pr, np.array(want_pr), rtol=1e-12)


def test_every_measure_in_range_and_perfect_ranking_scores_one():
    rng = np.random.default_rng(7)
    cases = [_random_case(rng) for _ in range(30)]
    block = rank_block(
        [[i + 1 for i, g in enumerate(gains) if g] for gains, _ in cases], [k for _, k in cases], [60] * 30
    )
    perfect = rank_block([list(range(1, k + 1)) for _, k in cases], [k for _, k in cases], [60] * 30)
    from shrec_score.measures import Settings

    for name in ("NN", "FT", "ST", "E", "DCG", "AP", "RR"):
        v = get_measure(name).compute(block, Settings())
        assert ((v >= 0) & (v <= 1)).all(), name
        if name != "E":  # E tops out at 2K / (32 + K) < 1 when K < 32
            assert (get_measure(name).compute(perfect, Settings()) == 1).all(), name


def test_registry_refuses_unknown_and_duplicate_names():
    from shrec_score.measures.measure import Measure, register

    with pytest.raises(KeyError):
        get_measure("NDCG@k")
    with pytest.raises(ValueError, match="registered twice"):
        register(Measure("NN", "", lambda b, s: b.n_relevant))
    assert get_measure("mAP").name == "AP"
    assert get_measure("P@5").name == "P@5"
