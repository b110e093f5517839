"""shrec_score.evaluate: distance matrices and embeddings from memory score as
the same data through files, and embeddings never become a full matrix."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import cdist

import shrec_score
from shrec_score.errors import OptionError

MEASURES = ["NN", "FT", "ST", "E", "DCG", "AP"]


def _cla(path, ids, labels):
    """Write a .cla (ids grouped by class); return its path and the listing order as positions in ``ids``."""
    names = list(dict.fromkeys(labels))
    lines = ["PSB 1", f"{len(names)} {len(ids)}"]
    order = []
    for n in names:
        members = [k for k, lab in enumerate(labels) if lab == n]
        order += members
        lines += ["", f"{n} 0 {len(members)}", *[ids[k] for k in members]]
    path.write_text("\n".join(lines) + "\n")
    return path, np.asarray(order)


def _by_query(frame):
    return frame.sort_values("query", key=lambda q: q.str.lstrip("q").astype(int)).reset_index(drop=True)


@pytest.fixture
def data():
    rng = np.random.default_rng(7)
    labels = [f"c{k}" for k in rng.integers(0, 5, 40)]
    centres = rng.normal(size=(5, 6))
    x = np.array([centres[int(lab[1:])] for lab in labels]) + rng.normal(scale=0.9, size=(40, 6))
    # items grouped by first appearance of their class, as a .cla lists them: then the
    # array's order is the file's listing order, and ties (lower column first) fall alike
    first = {lab: k for k, lab in reversed(list(enumerate(labels)))}
    order = sorted(range(len(labels)), key=lambda k: first[labels[k]])
    return x[order], [labels[k] for k in order]


def test_a_matrix_in_memory_scores_as_the_same_npy_file(tmp_path, data):
    x, labels = data
    d = np.round(cdist(x, x), 1).astype(np.float32)  # rounded: ties, ranked by the lower column on both paths
    ids = [str(i) for i in range(len(labels))]
    cla, order = _cla(tmp_path / "c.cla", ids, labels)
    np.save(tmp_path / "run.npy", d[np.ix_(order, order)])  # the file's rows and columns follow the .cla listing
    from_file = shrec_score.score([tmp_path / "run.npy"], cla, measures=MEASURES, matrix_order="listing")
    in_memory = shrec_score.evaluate(distances=d, labels=labels, measures=MEASURES, name="run")
    pd.testing.assert_frame_equal(_by_query(in_memory.per_query), _by_query(from_file.per_query), check_exact=True)
    pd.testing.assert_frame_equal(in_memory.per_run, from_file.per_run, check_exact=True)


def test_separate_queries_and_targets_score_as_the_files(tmp_path, data):
    x, labels = data
    q, t = x[::3], np.delete(x, np.s_[::3], axis=0)  # every class on both sides
    labels_q, labels_t = labels[::3], [lab for k, lab in enumerate(labels) if k % 3]
    d = np.round(cdist(q, t), 1)
    t_ids = [str(i) for i in range(len(t))]
    q_ids = [f"q{i}" for i in range(len(q))]
    (tc, t_order), (qc, q_order) = _cla(tmp_path / "t.cla", t_ids, labels_t), _cla(tmp_path / "q.cla", q_ids, labels_q)
    np.save(tmp_path / "run.npy", d[np.ix_(q_order, t_order)])
    from_file = shrec_score.score([tmp_path / "run.npy"], tc, queries=qc, measures=MEASURES, matrix_order="listing")
    in_memory = shrec_score.evaluate(distances=d, query_labels=labels_q, target_labels=labels_t, measures=MEASURES, name="run")
    pd.testing.assert_frame_equal(_by_query(in_memory.per_query), _by_query(from_file.per_query), check_exact=True)
    pd.testing.assert_frame_equal(in_memory.per_run, from_file.per_run, check_exact=True)


@pytest.mark.parametrize(
    ("metric", "reference"),
    [
        ("euclidean", lambda a, b: cdist(a, b)),
        ("sqeuclidean", lambda a, b: cdist(a, b, "sqeuclidean")),
        ("cosine", lambda a, b: cdist(a, b, "cosine")),
        ("inner_product", lambda a, b: -(a @ b.T)),
    ],
)
def test_embeddings_score_as_their_brute_force_distances(data, metric, reference):
    x, labels = data
    want = shrec_score.evaluate(distances=reference(x, x), labels=labels, measures=MEASURES)
    got = shrec_score.evaluate(embeddings=x, labels=labels, metric=metric, dtype="float64", measures=MEASURES)
    pd.testing.assert_frame_equal(got.per_query, want.per_query, rtol=1e-12)
    sep = shrec_score.evaluate(query_embeddings=x[:10], target_embeddings=x[10:], query_labels=labels[:10], target_labels=labels[10:], metric=metric, dtype="float64", measures=MEASURES)
    ref = shrec_score.evaluate(distances=reference(x[:10], x[10:]), query_labels=labels[:10], target_labels=labels[10:], measures=MEASURES)
    pd.testing.assert_frame_equal(sep.per_query, ref.per_query, rtol=1e-12)


def test_labels_as_strings_ints_and_categoricals_agree(data):
    x, labels = data
    codes = [int(lab[1:]) for lab in labels]
    by_str = shrec_score.evaluate(embeddings=x, labels=labels, measures=MEASURES).per_run
    for other in (codes, np.asarray(codes), pd.Categorical(labels), pd.Series(labels, dtype="category")):
        got = shrec_score.evaluate(embeddings=x, labels=other, measures=MEASURES).per_run
        pd.testing.assert_frame_equal(got.drop(columns=[]), by_str, check_exact=True)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"distances": np.zeros((3, 4)), "labels": ["a", "a", "b"]}, r"distances: expected shape \(3, 3\)"),
        ({"distances": np.array([[0, np.nan], [1, 0]]), "labels": ["a", "a"]}, "distances: expected no NaN"),
        ({"embeddings": np.zeros((3, 2)), "labels": ["a", "b"]}, r"embeddings: expected shape \(2, d\)"),
        ({"embeddings": np.zeros((2, 2)), "labels": ["a", "a"], "metric": "manhattan"}, "metric: expected one of euclidean"),
        ({"embeddings": np.zeros((2, 2)), "labels": [1, "1"]}, "labels: expected labels with distinct texts"),
        ({"embeddings": np.zeros((2, 2))}, "labels: expected labels="),
        ({"embeddings": np.zeros((2, 2)), "labels": ["a", "a"], "average": "Macro"}, "average"),
        # target_embeddings= beside labels= or distances= was scored without it, silently
        (
            {"embeddings": np.zeros((2, 2)), "target_embeddings": np.ones((2, 2)), "labels": ["a", "a"]},
            r"^target_embeddings: expected only with query_embeddings=, got it with embeddings= and labels=$",
        ),
        (
            {"distances": np.zeros((2, 2)), "target_embeddings": np.ones((2, 2)), "labels": ["a", "a"]},
            r"^target_embeddings: expected only with query_embeddings=, got it with distances= and labels=$",
        ),
        (
            {"distances": np.zeros((2, 3)), "target_embeddings": np.ones((3, 2)), "query_labels": ["a", "b"],
             "target_labels": ["a", "a", "b"]},
            r"^target_embeddings: expected only with query_embeddings=, got it with distances=$",
        ),
        (
            {"run": {"q": {"d": 1.0}}, "qrels": {"q": {"d": 1}}, "target_embeddings": np.ones((2, 2))},
            r"^run: expected run= and qrels= together, without distances, embeddings or labels$",
        ),
        (
            {"run": {"q": {"d": 1.0}}, "qrels": {"q": {"d": 1}}, "target_labels": ["a", "b"]},
            r"^run: expected run= and qrels= together, without distances, embeddings or labels$",
        ),
    ],
)
def test_bad_arguments_are_one_clear_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        shrec_score.evaluate(**kwargs)


def test_embeddings_never_become_a_full_matrix():
    """10,000 x 16 all-against-all: the full float32 matrix would be 400 MB;
    the traced peak (blocks of rows being ranked, about 100 MB) stays under a
    third of it, and it grows with the number of items, not its square."""
    import tracemalloc

    rng = np.random.default_rng(0)
    n = 10_000
    x = rng.normal(size=(n, 16)).astype(np.float32)
    y = np.repeat(np.arange(50), n // 50)
    tracemalloc.start()
    try:
        report = shrec_score.evaluate(embeddings=x, labels=y, measures=["NN", "AP"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert report.leaderboard.loc[0, "queries"] == n
    assert peak < n * n * 4 / 3, f"{peak / 2**20:.0f} MiB"


def test_the_readme_example_runs():
    """The README's "From a notebook" block, executed as it is written."""
    import re

    text = open("README.md", encoding="utf-8").read()
    section = text[text.index("### From a notebook") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)  # noqa: S102 - our own documentation
    assert scope["report"].leaderboard.loc[0, "queries"] == 10
    assert len(scope["ax"].lines) == 1 and scope["ax"].figure is scope["fig"]  # the PR curve, on the reader's Axes


@pytest.fixture
def trec_tables(tmp_path):
    """A graded qrels and a run with ties and unjudged documents, as DataFrames, nested dicts and files."""
    rng = np.random.default_rng(11)
    run_rows, qrel_rows = [], []
    for q in range(6):
        docs = rng.choice(80, 30, replace=False)
        run_rows += [(f"t{q}", f"d{d}", float(s)) for d, s in zip(docs, np.round(rng.random(30), 1))]
        judged = rng.choice(80, 25, replace=False)
        grades = rng.integers(0, 3, 25)
        grades[0] = 1
        qrel_rows += [(f"t{q}", f"d{d}", int(g)) for d, g in zip(judged, grades)]
    run = pd.DataFrame(run_rows, columns=["query_id", "doc_id", "score"])
    qrels = pd.DataFrame(qrel_rows, columns=["query_id", "doc_id", "relevance"])
    (tmp_path / "run").write_text("".join(f"{q} Q0 {d} 0 {s!r} r\n" for q, d, s in run_rows))
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrel_rows))
    return run, qrels, tmp_path


TREC_MEASURES = {"AP": "map", "P@10": "P_10", "RR": "recip_rank", "ndcg_cut.10": "ndcg_cut_10", "bpref": "bpref"}


def test_trec_dataframes_and_dicts_score_as_the_files_and_as_pytrec_eval(trec_tables):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    run, qrels, tmp_path = trec_tables
    measures = list(TREC_MEASURES)
    from_file = shrec_score.score([tmp_path / "run"], tmp_path / "qrels", measures=measures).per_query
    frames = shrec_score.evaluate(run=run, qrels=qrels, measures=measures).per_query
    pd.testing.assert_frame_equal(frames, from_file, check_exact=True)
    as_dicts = {
        "run": {q: dict(zip(g["doc_id"], g["score"])) for q, g in run.groupby("query_id")},
        "qrels": {q: dict(zip(g["doc_id"], g["relevance"])) for q, g in qrels.groupby("query_id")},
    }
    dicts = shrec_score.evaluate(**as_dicts, measures=measures).per_query
    pd.testing.assert_frame_equal(dicts, from_file, check_exact=True)
    theirs = pytrec_eval.RelevanceEvaluator(as_dicts["qrels"], set(TREC_MEASURES.values())).evaluate(as_dicts["run"])
    for ours, name in TREC_MEASURES.items():
        for q, value in zip(dicts["query"], dicts[ours]):
            assert value == pytest.approx(theirs[q][name], abs=1e-9), (ours, q)


def test_ranx_and_ir_measures_column_names(trec_tables):
    run, qrels, _ = trec_tables
    want = shrec_score.evaluate(run=run, qrels=qrels, measures=["AP"]).per_query
    ranx_style = run.rename(columns={"query_id": "q_id"})
    trec_style = qrels.rename(columns={"doc_id": "docno", "relevance": "rel"})
    got = shrec_score.evaluate(run=ranx_style, qrels=trec_style, measures=["AP"]).per_query
    pd.testing.assert_frame_equal(got, want, check_exact=True)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.drop(columns=["score"]), "run: expected a column score"),
        (lambda r: r.assign(score=["x"] + list(r["score"][1:])), "run: expected a number as score in every row, got 'x' in row 0"),
        (lambda r: r.assign(doc_id=["a b"] + list(r["doc_id"][1:])), "run: expected doc ids without blanks"),
        (lambda r: pd.concat([r, r.iloc[:1]]), r"run: expected each \(query, doc\) pair once"),
    ],
)
def test_bad_tables_are_one_value_error(trec_tables, change, message):
    run, qrels, _ = trec_tables
    with pytest.raises(ValueError, match=message):
        shrec_score.evaluate(run=change(run), qrels=qrels)


def test_labels_as_a_cla_path_or_classification_score_as_the_npy_file(tmp_path, data):
    from shrec_score.io.cla import read_classification

    x, labels = data
    rng = np.random.default_rng(3)
    ids = [str(i) for i in rng.permutation(len(labels))]  # integer ids, listed out of numeric order
    cla, _ = _cla(tmp_path / "c.cla", ids, labels)
    d = np.round(cdist(x, x), 1)  # row i = the i-th listed model: the data fixture's items are grouped as the .cla lists them
    np.save(tmp_path / "run.npy", d)
    from_file = shrec_score.score([tmp_path / "run.npy"], cla, measures=MEASURES, matrix_order="listing")
    for given in (str(cla), cla, read_classification(cla)):
        got = shrec_score.evaluate(distances=d, labels=given, measures=MEASURES, matrix_order="listing", name="run")
        pd.testing.assert_frame_equal(got.per_query, from_file.per_query, check_exact=True)
    # the .npy reader's rule: integer ids out of numeric order need matrix_order=
    with pytest.raises(ValueError, match="^labels: the query ids are integers and their numeric order differs"):
        shrec_score.evaluate(distances=d, labels=cla)
    numeric = shrec_score.score([tmp_path / "run.npy"], cla, measures=MEASURES, matrix_order="numeric")
    got = shrec_score.evaluate(distances=d, labels=cla, measures=MEASURES, matrix_order="numeric", name="run")
    pd.testing.assert_frame_equal(got.per_query, numeric.per_query, check_exact=True)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"embeddings": np.zeros((3, 2)), "labels": ["a", "a"]},
        {"embeddings": np.full((2, 2), np.nan), "labels": ["a", "a"]},
        {"embeddings": np.zeros((2, 2)), "labels": ["a", "a"], "metric": "l1"},
        {"distances": np.array([[0.0, np.nan], [1.0, 0.0]]), "labels": ["a", "a"]},
        {"query_embeddings": np.zeros((2, 3)), "target_embeddings": np.zeros((2, 4)), "query_labels": ["a", "b"], "target_labels": ["a", "b"]},
    ],
)
def test_bad_arguments_fail_before_any_work(monkeypatch, kwargs):
    """The ValueError comes before a distance is computed or anything is scored."""
    from shrec_score import api, memory

    def reached(*args, **kw):
        raise AssertionError("work started before the arguments were checked")

    monkeypatch.setattr(api, "score", reached)
    monkeypatch.setattr(memory.EmbeddingDistances, "block", reached)
    with pytest.raises(ValueError):
        shrec_score.evaluate(**kwargs)


def test_score_options_apply_as_on_the_file(tmp_path, data):
    """Options of score() pass through evaluate unchanged: a minimum class
    size (psbTable's CUTOFF) gives the file path's tables."""
    x, labels = data
    d = np.round(cdist(x, x), 1)
    ids = [str(i) for i in range(len(labels))]
    cla, _ = _cla(tmp_path / "c.cla", ids, labels)
    np.save(tmp_path / "a.npy", d)
    sizes = pd.Series(labels).value_counts()
    cut = int(sizes.median()) + 1  # some classes below it, some not
    from shrec_score.measures import Settings

    opts = {"measures": MEASURES, "settings": Settings(min_class_size=cut)}
    from_file = shrec_score.score([tmp_path / "a.npy"], cla, matrix_order="listing", **opts)
    got = shrec_score.evaluate(distances=d, labels=labels, name="a", **opts)
    pd.testing.assert_frame_equal(_by_query(got.per_query), _by_query(from_file.per_query), check_exact=True)
    pd.testing.assert_frame_equal(got.per_run, from_file.per_run, check_exact=True)
    assert 0 < got.leaderboard.loc[0, "queries"] < len(labels)  # the small classes' queries left out
    # score()'s options= too (it was "unknown option 'options'", a bug hunt), and R@k refused there as well
    built = shrec_score.evaluate(distances=d, labels=labels, name="a", options=shrec_score.Options.build(**opts))
    pd.testing.assert_frame_equal(built.per_run, from_file.per_run, check_exact=True)
    with pytest.raises(OptionError, match=r"R@5"):
        shrec_score.evaluate(distances=d, labels=labels, options=shrec_score.Options.build(measures=["R@5"]))


@pytest.mark.parametrize("ties", ["expected", "optimistic", "pessimistic"])
def test_ties_option_scores_as_on_the_file(tmp_path, data, ties):
    """score()'s ties= passes through evaluate: a matrix with many ties in memory
    gives the same per-query tables as the same .npy file."""
    x, labels = data
    d = np.round(cdist(x, x), 0)  # whole numbers: many tie groups, relevant items among them
    ids = [str(i) for i in range(len(labels))]
    cla, _ = _cla(tmp_path / "c.cla", ids, labels)
    np.save(tmp_path / "run.npy", d)
    measures = ["NN", "FT", "ST", "AP"]
    from_file = shrec_score.score([tmp_path / "run.npy"], cla, measures=measures, matrix_order="listing", ties=ties)
    got = shrec_score.evaluate(distances=d, labels=labels, measures=measures, ties=ties, name="run")
    pd.testing.assert_frame_equal(_by_query(got.per_query), _by_query(from_file.per_query), check_exact=True)
    rule = shrec_score.evaluate(distances=d, labels=labels, measures=measures, name="run")
    assert not got.per_query[measures].equals(rule.per_query[measures])  # the ties do matter here


def test_a_trec_table_run_named_qrels_or_with_a_slash():
    """name= becomes the run's file name in a temporary folder: 'qrels' does not overwrite the
    qrels (d2, the one relevant document, at rank 2: AP 1/2), and a name with '/' is refused."""
    run = pd.DataFrame({"query": ["q1", "q1"], "doc": ["d1", "d2"], "score": [2.0, 1.0]})
    qrels = pd.DataFrame({"query": ["q1", "q1"], "doc": ["d1", "d2"], "relevance": [0, 1]})
    board = shrec_score.evaluate(run=run, qrels=qrels, name="qrels", measures=["AP"]).leaderboard
    assert board["run"].tolist() == ["qrels"] and board["AP"].tolist() == [0.5]
    with pytest.raises(ValueError, match=r"^name: expected a run name that is a file name \(no '/'\), got 'x/y'$"):
        shrec_score.evaluate(run=run, qrels=qrels, name="x/y", measures=["AP"])


def test_table_errors_name_the_arguments_and_trec_names_the_run():
    """A bug hunt: an error of evaluate(run=, qrels=) named a temporary file already deleted
    ('/tmp/shrec-score-.../run/run: expected a ranking for every query'); to_trec() wrote the files'
    placeholder tag 'r' as the run id; a dict of lists was an AttributeError; per_query_wide('ap') a
    bare KeyError; the library took n_resamples=1 where the CLI wants 100 at least."""
    qrels = {"1": {"a": 1, "b": 0}, "2": {"c": 1}}
    with pytest.raises(ValueError, match=r"^run=: expected a ranking for every query") as raised:
        shrec_score.evaluate(run={"1": {"a": 1.0, "b": 0.5}}, qrels=qrels)
    assert "/tmp" not in str(raised.value) and "shrec-score-" not in str(raised.value)
    report = shrec_score.evaluate(run={"1": {"a": 1.0, "b": 0.5}, "2": {"c": 2.0}}, qrels=qrels, name="bm25", measures=["map", "P.5"])
    assert [line.split() for line in report.to_trec().splitlines()] == [["runid", "all", "bm25"], ["num_q", "all", "2"], ["map", "all", "1.0000"], ["P_5", "all", "0.2000"]]
    with pytest.raises(ValueError, match=r"^run: expected a dict \{query: \{doc: score\}\}"):
        shrec_score.evaluate(run={"1": [("a", 1.0)]}, qrels=qrels)
    assert report.per_query_wide("P_5")["bm25"].tolist() == [0.2, 0.2]  # P.5's column, in trec_eval's spelling
    for other in ("NN", "ap"):  # a measure not in the report; no measure at all
        with pytest.raises(ValueError, match=rf"^measure: expected one of the report's measures map, P.5, got '{other}'"):
            report.per_query_wide(other)
    with pytest.raises(shrec_score.OptionError, match="n_resamples"):
        shrec_score.evaluate(run={"1": {"a": 1.0}, "2": {"c": 2.0}}, qrels=qrels, significance=True, n_resamples=1)


def test_nan_distances_under_lenient_score_as_the_same_matrix_file(tmp_path):
    """evaluate(distances=...) refused a NaN even with lenient=True, where score() ranks a NaN cell last
    and counts it (a bug hunt); without lenient the error names the row and the column."""
    rng = np.random.default_rng(2)
    d = rng.random((6, 6))
    np.fill_diagonal(d, 0)
    d[2, 4] = np.nan
    labels = ["a", "a", "a", "b", "b", "b"]
    with pytest.raises(ValueError, match=r"^distances: expected no NaN .*, got nan at row 2, column 4$"):
        shrec_score.evaluate(distances=d, labels=labels)
    got = shrec_score.evaluate(distances=d, labels=labels, lenient=True, measures=["NN", "AP"])
    lines = ["PSB 1", "2 6", "", "a 0 3", "m0", "m1", "m2", "", "b 0 3", "m3", "m4", "m5"]
    (tmp_path / "c.cla").write_text("\n".join(lines) + "\n")
    np.save(tmp_path / "run.npy", d)
    want = shrec_score.score([tmp_path / "run.npy"], tmp_path / "c.cla", lenient=True, measures=["NN", "AP"])
    assert got.per_query[["NN", "AP"]].to_numpy().tolist() == want.per_query[["NN", "AP"]].to_numpy().tolist()
    assert any("1 NaN cells ranked last" in w for w in got.warnings), got.warnings
