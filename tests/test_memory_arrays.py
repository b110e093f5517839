"""shrec_score.evaluate takes any array-like: numpy arrays and memory maps,
objects with ``__array__``, objects with ``__dlpack__`` (PyTorch, CuPy, JAX)
in host memory or on a device, which is read a block of rows at a time."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import cdist

import shrec_score
from shrec_score import engine, memory

from .conftest import ROOT

MEASURES = ["NN", "FT", "ST", "E", "DCG", "AP"]


class DeviceArray:
    """A 2-D array "on a GPU": only ``shape``, row slices and DLPack.

    Like a CUDA tensor, it refuses to export itself except as a host copy
    (``dl_device=(kDLCPU, 0), copy=True``, DLPack 1.0), and it logs how many
    rows each host copy held.  It has no ``__array__``.
    """

    def __init__(self, data: np.ndarray, log: list[int]) -> None:
        self.data, self.log, self.shape = data, log, data.shape

    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA, device 0

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if dl_device is None or int(dl_device[0]) != 1 or not copy:
            raise BufferError("device memory: only a copy to the host is possible")
        self.log.append(len(self.data))
        return self.data.copy().__dlpack__(max_version=max_version)

    def __getitem__(self, rows):
        assert isinstance(rows, slice), "a device array is sliced, never gathered"
        return DeviceArray(self.data[rows], self.log)


class HostDLPack:
    """An array in host memory exposing only ``__dlpack__`` / ``__dlpack_device__`` (a delegating wrapper)."""

    def __init__(self, data: np.ndarray) -> None:
        self.data = data

    def __dlpack_device__(self):
        return self.data.__dlpack_device__()

    def __dlpack__(self, **kwargs):
        return self.data.__dlpack__(**kwargs)


class ArrayOnly:
    """An array-like exposing only ``__array__``."""

    def __init__(self, data: np.ndarray) -> None:
        self.data = data

    def __array__(self, dtype=None, copy=None):
        return self.data if dtype is None else self.data.astype(dtype)


@pytest.fixture
def data():
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 8, 600)
    x = rng.normal(size=(8, 5))[labels] + rng.normal(scale=1.2, size=(600, 5))
    return x, labels


def _same(a, b):
    pd.testing.assert_frame_equal(a.per_query, b.per_query, check_exact=True)
    pd.testing.assert_frame_equal(a.per_run, b.per_run, check_exact=True)


def test_a_device_matrix_is_copied_to_the_host_in_blocks_and_scores_as_numpy(data, monkeypatch):
    x, labels = data
    d = np.round(cdist(x, x), 1).astype(np.float32)  # ties: the lower column first on both paths
    monkeypatch.setattr(memory, "DEVICE_BLOCK_BYTES", 100 * 600 * 4)  # the NaN check walks 100 rows at a time
    monkeypatch.setattr(engine, "CHUNK_ENTRIES", 256 * 599)  # chunks of 256 queries of 599 targets
    log: list[int] = []
    got = shrec_score.evaluate(distances=DeviceArray(d, log), labels=labels, measures=MEASURES)
    _same(got, shrec_score.evaluate(distances=d, labels=labels, measures=MEASURES))
    assert log and max(log) <= 256 < len(d), log  # blocks of rows (the ranking reads a chunk of 256), never the whole
    assert sum(log) >= 2 * len(d) - 1  # every row checked, then ranked


def test_device_embeddings_are_copied_in_blocks_and_score_as_numpy(data, monkeypatch):
    x, labels = data
    monkeypatch.setattr(memory, "DEVICE_BLOCK_BYTES", 64 * 5 * 8)
    log: list[int] = []
    got = shrec_score.evaluate(embeddings=DeviceArray(x, log), labels=labels, metric="cosine", dtype="float64", measures=MEASURES)
    _same(got, shrec_score.evaluate(embeddings=x, labels=labels, metric="cosine", dtype="float64", measures=MEASURES))
    assert max(log) == 64 and sum(log) == len(x) + 1  # one row for the dtype, then one copy the check and the scoring share
    sep_log: list[int] = []
    q, t = DeviceArray(x[:50], sep_log), DeviceArray(x[50:], sep_log)
    got = shrec_score.evaluate(query_embeddings=q, target_embeddings=t, query_labels=labels[:50], target_labels=labels[50:], measures=MEASURES)
    want = shrec_score.evaluate(query_embeddings=x[:50], target_embeddings=x[50:], query_labels=labels[:50], target_labels=labels[50:], measures=MEASURES)
    _same(got, want)
    assert max(sep_log) <= 64


def test_a_nan_on_the_device_is_one_value_error_naming_the_argument(data):
    x, labels = data
    d = cdist(x, x)
    d[400, 3] = np.nan
    with pytest.raises(ValueError, match=r"^distances: expected no NaN \(lenient=True ranks NaN distances last\), got nan at row 400, column 3$"):
        shrec_score.evaluate(distances=DeviceArray(d, []), labels=labels)
    x = x.copy()
    x[7, 1] = np.inf
    with pytest.raises(ValueError, match=r"^embeddings: expected finite numbers"):
        shrec_score.evaluate(embeddings=DeviceArray(x, []), labels=labels)
    with pytest.raises(ValueError, match=r"^embeddings: expected a 2-D array, got shape \(600,\)"):
        shrec_score.evaluate(embeddings=DeviceArray(x[:, 0], []), labels=labels)


def test_host_dlpack_and_array_only_objects_score_as_numpy(data):
    x, labels = data
    d = cdist(x, x)
    want = shrec_score.evaluate(distances=d, labels=labels, measures=MEASURES)
    _same(shrec_score.evaluate(distances=HostDLPack(d), labels=labels, measures=MEASURES), want)
    _same(shrec_score.evaluate(distances=ArrayOnly(d), labels=labels, measures=MEASURES), want)
    want = shrec_score.evaluate(embeddings=x, labels=labels, measures=MEASURES)
    _same(shrec_score.evaluate(embeddings=HostDLPack(x), labels=labels, measures=MEASURES), want)
    _same(shrec_score.evaluate(embeddings=ArrayOnly(x), labels=labels, measures=MEASURES), want)
    assert isinstance(memory._array("distances", HostDLPack(d)), np.ndarray)
    assert np.shares_memory(memory._array("distances", HostDLPack(d)), d)  # viewed, not copied


def test_a_memory_map_scores_as_the_array(tmp_path, data):
    x, labels = data
    d = cdist(x, x).astype(np.float32)
    np.save(tmp_path / "d.npy", d)
    mapped = np.load(tmp_path / "d.npy", mmap_mode="r")
    _same(shrec_score.evaluate(distances=mapped, labels=labels, measures=MEASURES), shrec_score.evaluate(distances=d, labels=labels, measures=MEASURES))


def test_torch_is_not_imported_unless_the_user_passes_a_tensor():
    code = "import sys, numpy as np, shrec_score\nx = np.random.default_rng(0).normal(size=(30, 3))\nshrec_score.evaluate(embeddings=x, labels=[i % 3 for i in range(30)])\nprint(sorted(m for m in ('torch', 'cupy', 'jax', 'tensorflow') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_torch_tensors_score_as_numpy(data):
    torch = pytest.importorskip("torch", reason="torch is not installed (not in the test extra: a multi-GB download)")
    x, labels = data
    d = np.round(cdist(x, x), 1).astype(np.float32)
    _same(shrec_score.evaluate(distances=torch.from_numpy(d), labels=labels, measures=MEASURES), shrec_score.evaluate(distances=d, labels=labels, measures=MEASURES))
    want = shrec_score.evaluate(embeddings=x, labels=labels, metric="inner_product", measures=MEASURES)
    t = torch.tensor(x, requires_grad=True)  # the end of a training step: detached, not refused
    _same(shrec_score.evaluate(embeddings=t, labels=labels, metric="inner_product", measures=MEASURES), want)
    _same(shrec_score.evaluate(embeddings=torch.from_numpy(x), labels=torch.from_numpy(labels), metric="inner_product", measures=MEASURES), want)
    with pytest.raises(ValueError, match="^embeddings: expected an array of numbers, got Tensor"):
        shrec_score.evaluate(embeddings=torch.from_numpy(x).to(torch.bfloat16), labels=labels)


def test_cuda_tensors_score_as_numpy(data):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    x, labels = data
    d = cdist(x, x)
    got = shrec_score.evaluate(distances=torch.from_numpy(d).cuda(), labels=labels, measures=MEASURES)
    _same(got, shrec_score.evaluate(distances=d, labels=labels, measures=MEASURES))
    got = shrec_score.evaluate(embeddings=torch.from_numpy(x).cuda(), labels=labels, measures=MEASURES)
    _same(got, shrec_score.evaluate(embeddings=x, labels=labels, measures=MEASURES))


@pytest.mark.parametrize("missing", [None, float("nan"), np.nan])
def test_a_missing_label_is_refused_naming_its_position(missing):
    """issue 30.23: None or NaN is a missing label, not a class named "None" or "nan"."""
    labels = [0, 0, 1, missing, 1, 1]
    emb = np.arange(12, dtype=np.float64).reshape(6, 2)
    with pytest.raises(ValueError, match=r"^labels: expected a label for every item, got 1 missing \(None or NaN\), the first at position 3$"):
        shrec_score.evaluate(embeddings=emb, labels=labels)
    with pytest.raises(ValueError, match=r"^labels: expected a label for every item, got 1 missing \(None or NaN\), the first at position 3$"):
        shrec_score.evaluate(embeddings=emb, labels=np.asarray(labels, dtype=object))


def test_embedding_distances_read_in_blocks_equal_scipy_and_each_other():
    """EmbeddingDistances computes PRODUCT_BYTES of products at a time and
    hands out each row block as a new array: any read order gives the same rows, and
    they equal scipy's cdist (to float32 rounding)."""
    rng = np.random.default_rng(8)
    x = rng.normal(size=(700, 24)).astype(np.float32)
    d = memory.EmbeddingDistances(x, x, "euclidean", np.dtype(np.float32))
    d.PRODUCT_BYTES = 200 * 700 * 4  # 200 rows a product, so that reads cross products
    first = np.concatenate([d[a : a + 90] for a in range(0, 700, 90)])
    block = d[100:150]
    block[:] = -1  # a copy: the next reads are not changed
    again = np.concatenate([d[a : a + 33] for a in range(0, 700, 33)])
    assert np.array_equal(first, again)
    np.testing.assert_allclose(first, cdist(x, x), rtol=1e-4, atol=1e-2)  # |q|^2 + |t|^2 - 2 q.t in float32: 0 comes out near 0.004
    assert np.array_equal(d[np.array([5, 3])], d[3:6][[2, 0]])
