"""psbTable parity (--min-class-size 3, configs/psb.yaml).

psbTable (the Princeton Shape Benchmark's C++ tool) leaves every model of a
class with at most 2 models out of its micro average and every such class
out of its ``-macro`` average (its ``CUTOFF 2``), besides the ``-1``
miscellaneous class.  The reference below transcribes psbTable's rules as
the issue and the PSB paper state them, one model at a time in plain
Python, without the project's code path:

* the query's own column is ranked last and not counted; other ties go to
  the lower column;
* K = C - 1 (C: the class's size); NN = [first result relevant];
  FT = hits in the first K / K; ST = hits in the first min(2K, N - 1) / K;
* E = 2PR / (P + R) over the first min(N - 1, 32) results, P = hits / depth,
  R = hits / K;
* DCG = (sum over relevant ranks r of 1 if r = 1 else 1/log2 r) / (the same
  for ranks 1..K);
* micro: mean over the counted models; macro: mean over the counted classes
  of their models' means.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import shrec_score

MEASURES = ["NN", "FT", "ST", "E", "DCG"]


def psbtable_reference(labels, dist, cutoff=2):
    n = len(labels)
    per_model, per_class = {}, {}
    sizes = {c: labels.count(c) for c in set(labels)}
    for i, c in enumerate(labels):
        if c == "-1" or sizes[c] <= cutoff:
            continue
        others = sorted((j for j in range(n) if j != i), key=lambda j: (dist[i][j], j))
        rel = [labels[j] == c for j in others]
        k = sizes[c] - 1
        def hits(d, rel=rel):
            return sum(rel[:d])

        depth = min(n - 1, 32)
        p, r = hits(depth) / depth, hits(depth) / k
        ideal = sum(1 if x == 1 else 1 / math.log2(x) for x in range(1, k + 1))
        vals = {
            "NN": float(rel[0]),
            "FT": hits(k) / k,
            "ST": hits(min(2 * k, n - 1)) / k,
            "E": 0.0 if p + r == 0 else 2 * p * r / (p + r),
            "DCG": sum((1 if x == 1 else 1 / math.log2(x)) for x, ok in enumerate(rel, start=1) if ok) / ideal,
        }
        per_model[i] = vals
        per_class.setdefault(c, []).append(vals)
    micro = {m: sum(v[m] for v in per_model.values()) / len(per_model) for m in MEASURES}
    macro = {m: sum(sum(v[m] for v in vs) / len(vs) for vs in per_class.values()) / len(per_class) for m in MEASURES}
    return micro, macro, len(per_model)


def collection(tmp_path, sizes, seed, misc_first=False):
    """A .cla with classes of the given sizes (and a -1 class of 3) and a distance matrix with ties."""
    rng = np.random.default_rng(seed)
    classes = [(f"c{i}", s) for i, s in enumerate(sizes)]
    classes = ([("-1", 3)] + classes) if misc_first else (classes + [("-1", 3)])
    labels, lines, mid = [], [], 0
    for name, size in classes:
        lines += ["", f"{name} 0 {size}"]
        for _ in range(size):
            lines.append(f"m{mid}")
            labels.append(name)
            mid += 1
    (tmp_path / "c.cla").write_text("\n".join(["PSB 1", f"{len(classes)} {mid}", *lines]) + "\n")
    lab = np.array([hash(x) % 97 for x in labels], dtype=float)
    dist = np.round(np.abs(lab[:, None] - lab[None, :]) / 97 + rng.random((mid, mid)) * 0.6, 1)  # same class closer, many ties
    np.save(tmp_path / "run.npy", dist.astype(np.float32))
    return labels, dist.astype(np.float32).astype(float).tolist()


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("misc_first", [False, True])
def test_micro_and_macro_equal_psbtable_with_classes_of_one_and_two(tmp_path, seed, misc_first):
    labels, dist = collection(tmp_path, [1, 2, 3, 4, 5, 2, 6, 1], seed, misc_first)
    micro, macro, counted = psbtable_reference(labels, dist)
    settings = shrec_score.Settings(min_class_size=3)
    for average, want in (("micro", micro), ("macro", macro)):
        report = shrec_score.score([tmp_path / "run.npy"], tmp_path / "c.cla", measures=MEASURES, settings=settings, average=average, matrix_order="listing")
        row = report.leaderboard.iloc[0]
        for m in MEASURES:
            assert row[m] == pytest.approx(want[m], abs=1e-12), (average, m)
    assert row["queries"] == counted
    small = sum(1 for c in labels if c != "-1" and labels.count(c) <= 2)
    assert f"note: {small} of {len([c for c in labels if c != '-1'])} queries, of 4 classes with fewer than 3 models" in " ".join(report.warnings)


def test_without_the_cutoff_small_classes_count(tmp_path):
    """The default (1) keeps every query with K > 0: classes of 2 models count, classes of 1 have K = 0."""
    labels, dist = collection(tmp_path, [1, 2, 3, 4], 5)
    micro, _, _ = psbtable_reference(labels, dist, cutoff=1)
    report = shrec_score.score([tmp_path / "run.npy"], tmp_path / "c.cla", measures=MEASURES, matrix_order="listing")
    for m in MEASURES:
        assert report.leaderboard.iloc[0][m] == pytest.approx(micro[m], abs=1e-12)


def test_the_psb_preset_sets_the_cutoff_and_small_queries_stay_listed(tmp_path):
    from shrec_score.config import load_config

    assert load_config("configs/psb.yaml")["min_class_size"] == 3
    labels, _ = collection(tmp_path, [1, 2, 3], 0)
    report = shrec_score.score([tmp_path / "run.npy"], tmp_path / "c.cla", measures=MEASURES, settings=shrec_score.Settings(min_class_size=3), matrix_order="listing")
    pq = report.per_query.set_index("query")
    assert pq.loc[["m0", "m1", "m2"], "NN"].isna().all()  # classes of 1 and 2: listed, empty
    assert pq.loc[["m3", "m4", "m5"], "NN"].notna().all()
    assert "left out (psbTable's CUTOFF)" in report.signature["averaging"]


@pytest.mark.parametrize("name", ["test.cla", "coarse2Train.cla"])
def test_psb_classifications_with_a_generated_matrix(tmp_path, name):
    """The PSB's own classifications (../shared/data/psb) with a random matrix:
    the preset's rule gives the reference's micro and macro."""
    from shrec_score.io.cla import read_classification

    from .conftest import shared_path

    path = shared_path("psb", name)
    cla = read_classification(path)
    labels = [cla.class_names[k] for k in cla.labels]
    rng = np.random.default_rng(3)
    n = len(labels)
    dist = np.round(rng.random((n, n)), 2).astype(np.float32)  # ties
    np.save(tmp_path / "run.npy", dist)
    micro, macro, counted = psbtable_reference(labels, dist.astype(float).tolist())
    settings = shrec_score.Settings(min_class_size=3)
    for average, want in (("micro", micro), ("macro", macro)):
        report = shrec_score.score([tmp_path / "run.npy"], path, measures=MEASURES, settings=settings, average=average, matrix_order="listing")
        for m in MEASURES:
            assert report.leaderboard.iloc[0][m] == pytest.approx(want[m], abs=1e-9), (name, average, m)
    assert report.leaderboard.iloc[0]["queries"] == counted
