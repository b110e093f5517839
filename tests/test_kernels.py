"""Each kernel of shrec_score._kernels against its plain reference implementation."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from shrec_score import _kernels as k


@pytest.mark.parametrize("seed", range(5))
def test_lookup_equals_a_dictionary(seed):
    rng = np.random.default_rng(seed)
    sorted_keys = np.unique(rng.integers(-(2**62), 2**62, 500))
    values = rng.integers(0, 100, sorted_keys.size)
    keys = np.concatenate([rng.choice(sorted_keys, 300), rng.integers(-(2**62), 2**62, 3000), sorted_keys[:1] + 1])
    np.testing.assert_array_equal(k.lookup(keys, sorted_keys, values, -1), k.lookup_reference(keys, sorted_keys, values, -1))
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
    want = k.isin_reference(keys, among)
    assert want.any() and not want.all()
    np.testing.assert_array_equal(k.isin(keys, among), want)
    np.testing.assert_array_equal(want, np.isin(keys, among))
    assert k.isin(keys[:0], among).size == 0
    assert not k.isin(keys, among[:0]).any()


@pytest.mark.parametrize("seed", range(5))
def test_has_repeats_equals_a_set_of_pairs(seed):
    rng = np.random.default_rng(seed)
    for _ in range(50):
        n_rows, width = rng.integers(1, 6), rng.integers(2, 12)
        rows = np.repeat(np.arange(n_rows), width)
        keys = rng.integers(0, width * 2, rows.size)
        lens = np.full(n_rows, width)
        want = k.has_repeats_reference(rows, keys)
        assert k.has_repeats(rows, keys) == want
        assert k.has_repeats(rows, keys, lens) == want  # the per-row path


def test_has_repeats_is_exact_when_the_mixes_collide(monkeypatch):
    """With the row multiplier zeroed, (0, 5) and (1, 5) mix alike: the pairs settle it."""
    monkeypatch.setattr(k, "MIX_ROW", np.uint64(0))
    assert not k.has_repeats(np.array([0, 1]), np.array([5, 5]))
    assert k.has_repeats(np.array([0, 1, 1]), np.array([5, 5, 5]))


def test_pack_ids_equals_int_from_bytes_and_keeps_byte_order():
    ids = ["b", "a", "ab", "a0", "zzzzzzzz", "é", "e", "A", "9", "ba", "M00001"]
    got = k.pack_ids(pa.array(ids))
    np.testing.assert_array_equal(got, k.pack_ids_reference(ids))
    assert [x for _, x in sorted(zip(got.tolist(), ids))] == sorted(ids, key=str.encode)
    np.testing.assert_array_equal(k.pack_ids(pa.array(ids).slice(3)), k.pack_ids_reference(ids[3:]))
    for bad in (["a", "123456789"], ["a", "a\x00"], ["a", ""]):
        assert k.pack_ids(pa.array(bad)) is None and k.pack_ids_reference(bad) is None


def test_byte_order_rank_and_rank_of():
    ids = ["b", "é", "a", "Z", "aa"]
    assert k.byte_order_rank(ids).tolist() == [sorted(ids, key=str.encode).index(x) for x in ids]
    order = np.array([2, 0, 1])
    assert k.rank_of(order)[order].tolist() == [0, 1, 2]


@pytest.mark.parametrize("seed", range(5))
def test_hash_ids_equals_its_reference(seed):
    rng = np.random.default_rng(seed)
    alphabet = list("ab-0Z\u00e9\u4e2d")
    ids = ["".join(rng.choice(alphabet, rng.integers(0, 40))) for _ in range(2000)]
    ids += ["clueweb09-en0000-00-00000", "5f992bbc-0d8d-11e6-a6b6-2e6de3695b0e", "a" * 8, "a" * 9, ""]
    arr = pa.array(ids)
    np.testing.assert_array_equal(k.hash_ids(arr), k.hash_ids_reference(ids))
    np.testing.assert_array_equal(k.hash_ids(arr.slice(7, 500)), k.hash_ids_reference(ids[7:507]))  # offsets of a slice
    one_length = [i for i in ids if len(i.encode()) == 9]
    np.testing.assert_array_equal(k.hash_ids(pa.array(one_length, pa.string())), k.hash_ids_reference(one_length))
    assert k.hash_ids(pa.array([], pa.string())).size == 0


def test_hash_ids_equal_ids_equal_hashes_and_no_collision_on_long_ids():
    cw = [f"clueweb09-en{d:04d}-{f:02d}-{r:05d}" for d in range(3) for f in range(10) for r in range(0, 40000, 37)]
    h = k.hash_ids(pa.array(cw + cw[:100]))
    assert np.unique(h).size == len(cw)  # distinct ids that differ in one byte only: distinct hashes
    np.testing.assert_array_equal(h[len(cw) :], h[:100])
    # bytes past an id's end (the next id) do not leak into its hash
    np.testing.assert_array_equal(k.hash_ids(pa.array(["abcdefghij", "x"]))[:1], k.hash_ids(pa.array(["abcdefghij", "y"]))[:1])
    assert k.hash_ids(pa.array(["a", None])) is None
    assert k.hash_ids(pa.array([1, 2])) is None


def _random_ids(seed: int, n: int = 2000) -> list[str]:
    """Ids of 0-60 UTF-8 bytes (NUL, multi-byte characters, prefixes of each other), repeats included."""
    rng = np.random.default_rng(seed)
    alphabet = list("ab-0Z\u00e9\u4e2d\x00")
    ids = ["".join(rng.choice(alphabet, rng.integers(0, 30))) for _ in range(n)]
    ids += ["clueweb09-en0000-00-00000", "5f992bbc-0d8d-11e6-a6b6-2e6de3695b0e", "a" * 8, "a" * 9, "a" * 16, "", "ab", "ab\x00", "ab\x00\x00"]
    return ids + ids[:50]


@pytest.mark.parametrize("seed", range(4))
def test_id_words_and_hash_words_equal_their_references(seed):
    ids = _random_ids(seed)
    arr = pa.array(ids)
    words, lengths = k.id_words(arr)
    ref_words, ref_lengths = k.id_words_reference(ids)
    np.testing.assert_array_equal(words, ref_words)  # ascii_rpad pads byte-wise, also for non-ASCII UTF-8
    np.testing.assert_array_equal(lengths, ref_lengths)
    np.testing.assert_array_equal(k.hash_words(words, lengths), k.hash_words_reference(ids))
    part = k.id_words(arr.slice(7, 500))  # offsets of a slice, a narrower width
    np.testing.assert_array_equal(k.hash_words(*part), k.hash_words_reference(ids[7:507]))
    # the width does not change a hash: ids laid out beside a longer one hash alike
    wide = k.id_words(pa.array(ids[:100] + ["x" * 100]))
    assert wide[0].shape[1] == 13 and words.shape[1] < 13
    np.testing.assert_array_equal(k.hash_words(*wide)[:100], k.hash_words(words, lengths)[:100])
    empty = k.id_words(pa.array([], pa.string()))
    assert empty[0].shape == (0, 1) and k.hash_words(*empty).size == 0


def test_hash_words_separates_ids_alike_but_for_one_byte():
    cw = [f"clueweb09-en{d:04d}-{f:02d}-{r:05d}" for d in range(3) for f in range(10) for r in range(0, 40000, 37)]
    uuid = [f"{a:08x}-0d8d-11e6-a6b6-2e6de3695b{b:02x}" for a in range(0, 2**32, 2**22) for b in range(16)]
    ids = cw + uuid
    h = k.hash_words(*k.id_words(pa.array(ids + ids[:100])))
    assert np.unique(h).size == len(ids)
    np.testing.assert_array_equal(h[len(ids) :], h[:100])
    # a byte past the end never counts: "ab" and "ab\0" differ by their length
    assert np.unique(k.hash_words(*k.id_words(pa.array(["ab", "ab\x00", "ab\x00\x00"])))).size == 3


def test_id_words_refuses_what_it_cannot_lay_out():
    assert k.id_words(pa.array(["a", None])) is None
    assert k.id_words(pa.array([1, 2])) is None
    assert k.id_words(pa.array(["a", "x" * (k.WORDS_MAX_BYTES + 1)])) is None
    assert k.id_words(pa.array(["a", "x" * k.WORDS_MAX_BYTES])) is not None


@pytest.mark.parametrize("seed", range(4))
def test_words_equal_against_the_ids(seed):
    ids = _random_ids(seed, 1500)
    words, lengths = k.id_words(pa.array(ids))
    # rows of two layouts of different widths: equal exactly where the ids are
    rng = np.random.default_rng(seed)
    other = [ids[i] if rng.random() < 0.5 else ids[(i + 1) % len(ids)] for i in range(len(ids))] + ["y" * 70]
    b_words, b_lengths = k.id_words(pa.array(other))
    got = k.words_equal(words, lengths, b_words[:-1], b_lengths[:-1])
    np.testing.assert_array_equal(got, [a == b for a, b in zip(ids, other)])
