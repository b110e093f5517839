"""evaluate() with several models: one report, every model a run, significance as
for runs; labels -1 warned about with a count; 2-D labels refused naming the shape."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import cdist

import shrec_score

MEASURES = ["NN", "FT", "MAP@R", "AP"]


@pytest.fixture
def models():
    rng = np.random.default_rng(4)
    labels = np.repeat(np.arange(6), 5)
    centres = rng.normal(size=(6, 5))
    good = centres[labels] + rng.normal(scale=0.5, size=(30, 5))
    poor = centres[labels] + rng.normal(scale=2.0, size=(30, 5))
    return {"good": good, "poor": poor}, labels


def test_a_dict_of_embeddings_scores_each_model_as_alone(models):
    x, labels = models
    together = shrec_score.evaluate(embeddings=x, labels=labels, measures=MEASURES)
    assert sorted(together.leaderboard["run"]) == ["good", "poor"]
    for name, emb in x.items():
        alone = shrec_score.evaluate(embeddings=emb, labels=labels, measures=MEASURES, name=name)
        got = together.per_query[together.per_query["run"] == name].reset_index(drop=True)
        pd.testing.assert_frame_equal(got, alone.per_query, check_exact=True)
        row = together.per_run.set_index("run").loc[name]
        for m in MEASURES:
            assert row[m] == alone.per_run.loc[0, m]


def test_the_leaderboard_ranks_the_models_by_the_sort_measure(models):
    x, labels = models
    board = shrec_score.evaluate(embeddings=x, labels=labels, measures=MEASURES, sort="MAP@R").leaderboard
    assert board["run"].tolist() == ["good", "poor"]  # by construction (scale 0.5 against 2.0)
    assert board["MAP@R"].is_monotonic_decreasing
    assert board["rank"].tolist() == [1, 2]


def test_significance_between_models_as_between_run_files(tmp_path, models):
    """The same two matrices as .npy files in one run folder give the same tests;
    mean_diff is the difference of the two models' means over the same queries."""
    x, labels = models
    dist = {name: cdist(e, e) for name, e in x.items()}
    kw = {"measures": MEASURES, "sort": "AP", "significance": True, "n_resamples": 500, "seed": 3}
    report = shrec_score.evaluate(distances=dist, labels=labels, **kw)
    sig = report.significance
    assert len(sig) == 1
    means = report.per_query.groupby("run")["AP"].mean()
    assert sig.loc[0, "mean_diff"] == pytest.approx(means[sig.loc[0, "run_a"]] - means[sig.loc[0, "run_b"]], abs=1e-12)
    runs = tmp_path / "runs"
    runs.mkdir()
    for name, d in dist.items():
        np.save(runs / f"{name}.npy", d)
    cla = tmp_path / "c.cla"
    lines = ["PSB 1", f"6 {len(labels)}"]
    for c in range(6):
        members = np.flatnonzero(labels == c)
        lines += ["", f"{c} 0 {len(members)}", *[str(i) for i in members]]
    cla.write_text("\n".join(lines) + "\n")
    from_files = shrec_score.score([runs], cla, matrix_order="numeric", **kw)
    pd.testing.assert_frame_equal(sig, from_files.significance, check_exact=True)
    assert "AP_ci_low" in report.leaderboard.columns


def test_a_dict_of_separate_query_and_target_embeddings(models):
    x, labels = models
    q = {k: v[::3] for k, v in x.items()}
    t = {k: np.delete(v, np.s_[::3], axis=0) for k, v in x.items()}
    lq, lt = labels[::3], np.delete(labels, np.s_[::3])
    together = shrec_score.evaluate(query_embeddings=q, target_embeddings=t, query_labels=lq, target_labels=lt, measures=MEASURES)
    alone = shrec_score.evaluate(query_embeddings=q["poor"], target_embeddings=t["poor"], query_labels=lq, target_labels=lt, measures=MEASURES, name="poor")
    got = together.per_query[together.per_query["run"] == "poor"].reset_index(drop=True)
    pd.testing.assert_frame_equal(got, alone.per_query, check_exact=True)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"embeddings": {}}, "embeddings: expected at least one model, got an empty dict"),
        ({"embeddings": {"A": np.zeros((4, 2)), 3: np.zeros((4, 2))}}, "embeddings: expected model names as non-empty strings, got 3"),
        ({"embeddings": {"A": np.zeros((4, 2)), "B": np.zeros((3, 2))}}, r"embeddings\['B'\]: expected shape \(4, d\)"),
        ({"distances": {"A": np.zeros((4, 4)), "B": np.zeros((4, 5))}}, r"distances\['B'\]: expected shape \(4, 4\)"),
        ({"embeddings": {"A": np.zeros((4, 2))}, "name": "x"}, "name: the keys of embeddings= name the models"),
    ],
)
def test_bad_dicts_of_models_fail_before_any_work(monkeypatch, kwargs, message):
    from shrec_score import api, memory

    def reached(*args, **kw):
        raise AssertionError("work started before every model was checked")

    monkeypatch.setattr(api, "score", reached)
    monkeypatch.setattr(memory.EmbeddingDistances, "block", reached)
    with pytest.raises(ValueError, match=message):
        shrec_score.evaluate(labels=["a", "a", "b", "b"], **kwargs)


def test_query_and_target_dicts_must_name_the_same_models():
    q = {"A": np.zeros((2, 2)), "B": np.zeros((2, 2))}
    t = {"A": np.zeros((2, 2))}
    with pytest.raises(ValueError, match=r"target_embeddings: expected the models of query_embeddings \('A', 'B'\), got 'A'"):
        shrec_score.evaluate(query_embeddings=q, target_embeddings=t, query_labels=["a", "b"], target_labels=["a", "b"])


def test_labels_minus_one_are_left_out_with_a_warning_counting_them():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(9, 3))
    labels = [0, 0, 0, 1, 1, 1, -1, -1, -1]
    with pytest.warns(UserWarning, match=r"labels: 3 of 9 items have the label -1 \(the PSB's miscellaneous class\)") as record:
        report = shrec_score.evaluate(embeddings=x, labels=labels, measures=["NN"])
    assert record[0].filename == __file__  # points at the caller's line
    assert report.leaderboard.loc[0, "queries"] == 6
    assert sorted(report.per_query["query"].astype(int)) == [0, 1, 2, 3, 4, 5]


def test_target_labels_minus_one_are_counted_apart():
    q, t = np.zeros((2, 2)), np.arange(8.0).reshape(4, 2)
    with pytest.warns(UserWarning) as record:
        shrec_score.evaluate(query_embeddings=q, target_embeddings=t, query_labels=["a", "-1"], target_labels=["a", "-1", "-1", "a"], measures=["NN"])
    texts = sorted(str(w.message) for w in record)
    assert texts[0].startswith("query_labels: 1 of 2 items have the label -1")
    assert texts[1].startswith("target_labels: 2 of 4 items have the label -1") and "never relevant" in texts[1]


def test_no_warning_without_minus_one():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        shrec_score.evaluate(embeddings=np.arange(8.0).reshape(4, 2), labels=["a", "a", "b", "b"], measures=["NN"])


@pytest.mark.parametrize(
    ("labels", "shape"),
    [
        (np.eye(3)[[0, 0, 1, 1, 2, 2]], "(6, 3)"),
        (np.array([[0], [0], [1], [1], [2], [2]]), "(6, 1)"),
        ([[0, 1], [0, 1], [1, 0], [1, 0], [1, 0], [0, 1]], "(6, 2)"),
        (pd.DataFrame(np.eye(2)[[0, 0, 1, 1, 0, 1]]), "(6, 2)"),
    ],
)
def test_one_hot_or_2d_labels_are_refused_naming_the_shape(labels, shape):
    with pytest.raises(ValueError) as err:
        shrec_score.evaluate(embeddings=np.zeros((6, 2)), labels=labels)
    assert str(err.value).startswith(f"labels: expected one label per item (shape (n,)), got shape {shape}")
    assert "argmax(axis=1)" in str(err.value)


def test_tuple_labels_are_labels_not_a_second_axis():
    """Tuples are hashable labels (a list of lists is 2-D).  1-D points 0, 3, 1, 4 in
    classes A, A, B, B: each query's own class sits at rank 2, 3, 3, 2 of 3 -> AP 1/2,
    1/3, 1/3, 1/2, mean 5/12; no nearest neighbour shares the class."""
    labels = [("A", 1), ("A", 1), ("B", 2), ("B", 2)]
    board = shrec_score.evaluate(embeddings=np.array([[0.0], [3.0], [1.0], [4.0]]), labels=labels, measures=["NN", "AP"]).leaderboard
    assert board["NN"].tolist() == [0.0] and board["AP"].tolist() == [pytest.approx(5 / 12, abs=1e-15)]


def test_a_dict_of_query_embeddings_needs_a_dict_of_target_embeddings():
    with pytest.raises(ValueError, match=r"target_embeddings: expected a dict \{name: array\} for a dict of query_embeddings"):
        shrec_score.evaluate(query_embeddings={"A": np.zeros((2, 2))}, target_embeddings=np.zeros((2, 2)), query_labels=["a", "b"], target_labels=["a", "b"])
