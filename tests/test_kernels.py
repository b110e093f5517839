"""shrec_score._kernels (the judged-pair membership test) against a Python
dictionary, a Python set and numpy."""

from __future__ import annotations

import numpy as np
import pytest

from shrec_score import _kernels as k


@pytest.mark.parametrize("seed", range(5))
def test_lookup_equals_a_dictionary(seed):
    rng = np.random.default_rng(seed)
    sorted_keys = np.unique(rng.integers(-(2**62), 2**62, 500))
    values = rng.integers(0, 100, sorted_keys.size)
    # 3,000 absent keys against a bitmap of 2**14 slots, 500 of them set: about 90 pass the bitmap and must be refused by the search
    keys = np.concatenate([rng.choice(sorted_keys, 300), rng.integers(-(2**62), 2**62, 3000), sorted_keys[:1] + 1])
    table = dict(zip(sorted_keys.tolist(), values.tolist()))
    want = np.asarray([table.get(key, -1) for key in keys.tolist()])
    assert (want >= 0).sum() >= 300
    np.testing.assert_array_equal(k.lookup(keys, sorted_keys, values, -1), want)
    assert k.lookup(keys[:0], sorted_keys, values, -1).size == 0
    assert (k.lookup(keys, sorted_keys[:0], values[:0], -7) == -7).all()


@pytest.mark.parametrize("seed", range(5))
def test_isin_equals_a_set_and_numpy(seed):
    """(query << 32 | target) keys as the engine's judged mask builds them;
    ``among`` unsorted with repeats; keys next to members (off by one)."""
    rng = np.random.default_rng(seed)
    among = (rng.integers(0, 50, 400).astype(np.int64) << 32) | rng.integers(0, 2000, 400)
    among = np.concatenate([among, among[:20]])  # repeats
    keys = np.concatenate([rng.choice(among, 300), among[:50] + 1, among[:50] - 1, (rng.integers(0, 50, 3000).astype(np.int64) << 32) | rng.integers(0, 2000, 3000)])
    members = set(among.tolist())
    want = np.asarray([key in members for key in keys.tolist()])
    assert want.any() and not want.all()
    np.testing.assert_array_equal(k.isin(keys, among), want)
    np.testing.assert_array_equal(want, np.isin(keys, among))
    assert k.isin(keys[:0], among).size == 0
    assert not k.isin(keys, among[:0]).any()
