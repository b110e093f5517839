"""Every run shape: matrices in three encodings, distance-first lists, TREC, detection."""

import io

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import shrec_score
from shrec_score import InputError
from shrec_score.cli import cli

CLA = "PSB 1\n2 6\na 0 3\n10\n11\n12\nb 0 3\n20\n21\n22\n"
IDS = ["10", "11", "12", "20", "21", "22"]


def all_against_all_matrix(seed=0):
    rng = np.random.default_rng(seed)
    d = rng.random((6, 6)).astype(np.float32)
    return (d + d.T) / 2


def per_query(report):
    return report.per_query.set_index("query")


@pytest.fixture
def cla(tmp_path):
    p = tmp_path / "c.cla"
    p.write_text(CLA)
    return p


def test_matrix_encodings_give_identical_scores(tmp_path, cla):
    d = all_against_all_matrix()
    runs = tmp_path / "runs"
    runs.mkdir()
    np.save(runs / "A.npy", d)
    d.tofile(runs / "B.bin")  # PSB binary: float32, row-major, no header
    np.savetxt(runs / "C.txt", d.astype(np.float64), fmt="%.9g")
    report = shrec_score.score([runs], cla)
    assert sorted(report.leaderboard["run"]) == ["A", "B", "C"]
    pq = report.per_query
    a, b, c = (pq[pq["run"] == r].drop(columns="run").reset_index(drop=True) for r in "ABC")
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(a, c)
    # against a hand ranking of query 10: own column removed, sorted by distance
    order = [IDS[j] for j in sorted(range(6), key=lambda j: (d[0, j], j)) if j != 0]
    hits = [i + 1 for i, t in enumerate(order) if t in ("11", "12")]
    assert per_query(report).loc["10"].query("run == 'A'")["AP"].item() == pytest.approx((1 / hits[0] + 2 / hits[1]) / 2)


def test_ties_broken_by_lower_column_and_own_column_removed(tmp_path, cla):
    d = np.zeros((6, 6))  # every distance tied
    np.save(tmp_path / "tied.npy", d)
    report = shrec_score.score([tmp_path / "tied.npy"], cla, measures=["NN", "FT", "AP"])
    pq = per_query(report)
    # query 10: remaining columns in order 11 12 20 21 22 -> hits at 1, 2
    assert pq.loc["10", ["NN", "FT", "AP"]].tolist() == [1.0, 1.0, 1.0]
    # query 20: 10 11 12 21 22 -> hits at 4, 5
    assert pq.loc["20", ["NN", "FT", "AP"]].tolist() == [0.0, 0.0, (1 / 4 + 2 / 5) / 2]
    # query 12: 10 11 20 21 22 -> hits at 1, 2
    assert pq.loc["12", "AP"] == 1.0


def test_matrix_shape_is_checked(tmp_path, cla):
    np.save(tmp_path / "small.npy", np.zeros((6, 5)))
    with pytest.raises(InputError, match=r"small.npy: expected a 6 x 6 matrix \(queries x targets of the classifications\), got 6 x 5"):
        shrec_score.score([tmp_path / "small.npy"], cla)
    (tmp_path / "bad.bin").write_bytes(b"\0" * 10)
    with pytest.raises(InputError, match="expected a PSB binary matrix of 6 x 6 float32 \\(144 bytes\\), got 10 bytes"):
        shrec_score.score([tmp_path / "bad.bin"], cla)
    (tmp_path / "ragged.txt").write_text("0 1 2 3 4 5\n" * 3 + "0 1 2 3 4\n" + "0 1 2 3 4 5\n" * 2)
    with pytest.raises(InputError, match=r"ragged.txt:4: expected 6 distances per row \(as on the first row\), got 5"):
        shrec_score.score([tmp_path / "ragged.txt"], cla)
    (tmp_path / "nan.txt").write_text("0 1 2 3 4 5\n0 1 nan 3 4 5\n" + "0 1 2 3 4 5\n" * 4)
    with pytest.raises(InputError, match=r"nan.txt:2: expected a number in every cell; row 2 \(query '11'\) column 3, got NaN"):
        shrec_score.score([tmp_path / "nan.txt"], cla)


@pytest.mark.parametrize("settings", [{}, {"depth": 2}, {"judged_only": True}])
def test_the_first_nan_cell_in_row_order_is_named_across_the_engine_s_chunks(tmp_path, monkeypatch, settings):
    """Queries listed 5 4 3 2 1 0, rows in numeric order, NaN cells at rows 1 and 4, chunks of two queries (on
    both of the engine's paths: ranks only, and ranked lists for --depth / --judged-only): row 2 is named, though
    the chunk of queries 5 and 4 meets row 5's NaN first (a regression hunt: a chunk looked only at its rows)."""
    from shrec_score import Settings, engine

    monkeypatch.setattr(engine, "CHUNK_ENTRIES", 12)  # 6 targets a list: two queries a chunk
    (tmp_path / "c.cla").write_text("PSB 1\n2 6\n\nA 0 3\n5\n4\n3\n\nB 0 3\n2\n1\n0\n")
    m = np.arange(36, dtype=np.float32).reshape(6, 6)
    m[4, 0] = m[1, 2] = np.nan
    np.save(tmp_path / "m.npy", m)
    with pytest.raises(InputError) as got:
        shrec_score.score([tmp_path / "m.npy"], tmp_path / "c.cla", matrix_order="numeric", measures=["NN"], settings=Settings(**settings))
    assert str(got.value) == f"{tmp_path / 'm.npy'}:2: expected a number in every cell; row 2 (query '1') column 3, got NaN"


def test_matrix_order_listing_numeric_and_refusal(tmp_path):
    # listing order 2 0 1 differs from numeric order 0 1 2
    (tmp_path / "t.cla").write_text("PSB 1\n2 3\na 0 1\n2\nb 0 2\n0\n1\n")
    d = np.array([[0, 1, 2], [1, 0, 3], [2, 3, 0]], dtype=float)
    np.save(tmp_path / "m.npy", d)
    with pytest.raises(InputError, match="--matrix-order listing \\(PSB tools\\) or --matrix-order numeric"):
        shrec_score.score([tmp_path / "m.npy"], tmp_path / "t.cla")
    numeric = per_query(shrec_score.score([tmp_path / "m.npy"], tmp_path / "t.cla", matrix_order="numeric", measures=["NN"]))
    listing = per_query(shrec_score.score([tmp_path / "m.npy"], tmp_path / "t.cla", matrix_order="listing", measures=["NN"]))
    # numeric: row 0 = id 0 (class b); its nearest other column is 1 (id 1, class b) -> NN 1
    assert numeric.loc["0", "NN"] == 1.0
    # listing: row 1 = id 0; nearest other column is 0 (= id 2, class a) -> NN 0
    assert listing.loc["0", "NN"] == 0.0
    assert np.isnan(numeric.loc["2", "NN"])  # class a has no other member: K = 0


def test_distance_first_lines_are_detected(tmp_path, cla):
    run = tmp_path / "runs" / "r"
    run.mkdir(parents=True)
    for q in IDS:
        others = [t for t in IDS if t != q]
        (run / f"{q}.txt").write_text("".join(f"{0.1 * i:.1f} {t}\n" for i, t in enumerate(others)))
    report = shrec_score.score([tmp_path / "runs"], cla, measures=["NN"])
    # lists follow IDS order without the query: 10 -> 11 first (same class), 20 -> 10 first (not)
    assert per_query(report).loc["10", "NN"] == 1.0 and per_query(report).loc["20", "NN"] == 0.0
    (run / "10.txt").write_text("0.1 11\n0.2 99\n")
    with pytest.raises(InputError, match=r"10.txt:2: expected a target id of the collection \(ids were found in the second column\), got unknown id '99'"):
        shrec_score.score([tmp_path / "runs"], cla)
    (run / "10.txt").write_text("x 0.1\ny 0.2\n")
    with pytest.raises(InputError, match=r"10.txt:1: expected a target id of the collection .*unknown id 'x'"):
        shrec_score.score([tmp_path / "runs"], cla)


def test_trec_run_ranked_by_score_then_id_descending(tmp_path, cla):
    lines = []
    for q in IDS:
        for t in IDS:
            if t != q:
                lines.append(f"{q} Q0 {t} 1 0.5 tag")  # every score tied -> id descending
    (tmp_path / "run.trec").write_text("\n".join(lines) + "\n")
    report = shrec_score.score([tmp_path / "run.trec"], cla, measures=["NN", "AP"])
    pq = per_query(report)
    # query 20: ids descending 22 21 12 11 10 -> hits at 1, 2
    assert pq.loc["20", "AP"] == 1.0
    # query 10: 22 21 20 12 11 -> hits at 4, 5
    assert pq.loc["10", "AP"] == pytest.approx((1 / 4 + 2 / 5) / 2)
    assert report.leaderboard["run"].tolist() == ["run.trec"]


def test_trec_run_errors_name_the_line(tmp_path, cla):
    (tmp_path / "bad.trec").write_text("10 Q0 11 1 0.5 t\n10 Q0 12 2 abc t\n")
    with pytest.raises(InputError, match=r"bad.trec:2: expected a number as score \(5th field\), got 'abc'"):
        shrec_score.score([tmp_path / "bad.trec"], cla, run_format="trec")
    (tmp_path / "bad.trec").write_text("10 Q0 11 1 0.5 t\n10 Q0 12 2 0.4\n")  # 7+ fields are trec_eval's rule (test_trec_wild); 5 are too few
    with pytest.raises(InputError, match=r'bad.trec:2: expected "query_id Q0 target_id rank score tag", got 5 fields'):
        shrec_score.score([tmp_path / "bad.trec"], cla, run_format="trec")
    (tmp_path / "bad.trec").write_text("10 Q0 11 1 0.5 t\n10 Q0 11 2 0.4 t\n")
    with pytest.raises(InputError, match=r"bad.trec:2: expected each target once per query; 10 11 is already ranked at line 1"):
        shrec_score.score([tmp_path / "bad.trec"], cla, run_format="trec")


def test_undetectable_format_exits_2_and_names_the_choices(tmp_path, cla):
    (tmp_path / "notes.txt").write_text("hello world\n")
    r = CliRunner().invoke(cli, [str(tmp_path / "notes.txt"), "-r", str(cla)])
    assert r.exit_code == 2
    assert "cannot tell the run format" in r.output and "--run-format lists|matrix|trec" in r.output


def test_run_format_override(tmp_path, cla):
    # a folder of files named after queries is a ranked-list run; --run-format lists forces it
    run = tmp_path / "r"
    run.mkdir()
    for q in IDS:
        (run / q).write_text("\n".join(t for t in IDS if t != q) + "\n")
    r = CliRunner().invoke(cli, [str(run), "-r", str(cla), "--run-format", "lists", "-m", "NN", "--format", "csv"])
    assert r.exit_code == 0, r.output
    assert pd.read_csv(io.StringIO(r.stdout))["run"].tolist() == ["r"]
    r = CliRunner().invoke(cli, [str(run), "-r", str(cla), "--run-format", "matrix"])
    assert r.exit_code == 2 and "expected a 6 x 6 matrix" in r.output


def test_a_2000_by_2000_matrix_scores_like_the_reference_on_sampled_rows(tmp_path):
    n, classes = 2000, 40
    rng = np.random.default_rng(5)
    labels = rng.integers(0, classes, size=n)
    ids = [str(i) for i in range(n)]
    body = ["PSB 1", f"{classes} {n}"]
    for c in range(classes):
        members = [ids[i] for i in np.flatnonzero(labels == c)]
        body += [f"c{c} 0 {len(members)}", *members]
    (tmp_path / "big.cla").write_text("\n".join(body) + "\n")
    listing = [x for x in body if x.isdigit() and not x.startswith("PSB")]
    listing = [ids[i] for c in range(classes) for i in np.flatnonzero(labels == c)]
    d = rng.random((n, n)).astype(np.float32)
    d[rng.random((n, n)) < 0.2] = 0.5  # many ties
    np.save(tmp_path / "big.npy", d)
    report = shrec_score.score([tmp_path / "big.npy"], tmp_path / "big.cla", matrix_order="listing", measures=["FT", "AP"])
    pq = per_query(report)
    cls = {ids[i]: labels[i] for i in range(n)}
    for row in rng.choice(n, size=15, replace=False):
        q = listing[row]
        order = [j for j in np.argsort(d[row], kind="stable") if j != row]
        gains = [cls[listing[j]] == cls[q] for j in order]
        k = sum(gains)
        hits = np.flatnonzero(gains) + 1
        assert pq.loc[q, "AP"] == pytest.approx(sum((i + 1) / h for i, h in enumerate(hits)) / k, rel=1e-12)
        assert pq.loc[q, "FT"] == pytest.approx((hits <= k).sum() / k, rel=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_fast_matrix_path_equals_full_ranking_path(seed):
    """ranks from one sort per block and searchsorted (binary measures) == ranks from a stable argsort of every row."""
    from shrec_score.engine import rank_block
    from shrec_score.model import Classification, MatrixRun
    from shrec_score.ranking import matrix_rank_block, matrix_to_ranked_run
    from shrec_score.relevance import Relevance

    rng = np.random.default_rng(seed)
    n = 120
    labels = np.sort(rng.integers(0, 7, n)).astype(np.int32)
    cla = Classification("r.cla", [f"c{i}" for i in range(7)], ["0"] * 7, [str(i) for i in range(n)], labels)
    queries = None
    if seed % 2:
        queries = Classification("q.cla", [f"c{i}" for i in range(7)], ["0"] * 7, [f"q{i}" for i in range(40)], np.sort(rng.integers(0, 7, 40)).astype(np.int32))
    rel = Relevance.from_classification(cla, queries)
    levels = [6, 60, 100000, 3][seed % 4]  # heavy ties, some ties, few ties, massive ties
    d = rng.integers(0, levels, size=(len(rel.query_ids), n)).astype(np.float32 if seed < 4 else np.float64)
    d[rng.random(d.shape) < 0.02] = -0.0
    d[rng.random(d.shape) < 0.02] = np.inf
    d[rng.random(d.shape) < 0.01] = -np.inf
    run = MatrixRun("m", "m.npy", d, rel.query_ids, np.arange(len(rel.query_ids)), np.arange(n))
    rows = np.arange(rel.n_queries)
    fast = matrix_rank_block(run, rel.relevant_targets(1), rel.n_relevant(1), rel.self_index, rows)
    lists = matrix_to_ranked_run(run, rel.self_index, rows)
    full = rank_block(lists, rel, rows, rel.list_gains(rows, lists.offsets, lists.targets))
    np.testing.assert_array_equal(fast.rel_ranks, full.rel_ranks)
    np.testing.assert_array_equal(fast.n_retrieved, full.n_retrieved)


def test_streamed_ascii_matrix_equals_the_in_memory_one(tmp_path, cla, monkeypatch):
    from shrec_score.io import matrix as matrix_mod

    d = all_against_all_matrix(3).astype(np.float64)
    text = "".join(" ".join(f"{v:.9g}" for v in row) + "\n" for row in d)
    (tmp_path / "m.txt").write_text(text)
    whole = shrec_score.score([tmp_path / "m.txt"], cla).per_query
    monkeypatch.setattr(matrix_mod, "STREAM_ABOVE", 0)
    monkeypatch.setattr(matrix_mod, "STREAM_CHUNK", 50)  # a few rows per chunk, cut mid-line
    streamed = shrec_score.score([tmp_path / "m.txt"], cla).per_query
    pd.testing.assert_frame_equal(whole, streamed)
    lines = text.splitlines()
    lines[4] = lines[4] + " 7"
    (tmp_path / "m.txt").write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"m.txt:5: expected 6 distances per row \(as on the first row\), got 7"):
        shrec_score.score([tmp_path / "m.txt"], cla)
    (tmp_path / "m.txt").write_text("\n".join(lines[:3]) + "\n")
    with pytest.raises(InputError, match=r"expected a 6 x 6 matrix .*, got 3 x 6"):
        shrec_score.score([tmp_path / "m.txt"], cla)


@pytest.mark.parametrize(("n_rows", "n_cols"), [(6, 5), (7, 6), (40, 6), (5, 6)])
def test_a_matrix_of_the_wrong_shape_gives_the_same_error_plain_or_compressed(tmp_path, cla, n_rows, n_cols):
    """A matrix of the wrong shape for 6 models: read whole (plain) it is 'expected a 6 x 6 matrix ..., got R x C'.
    Streamed (gzip) a column short was 'm.txt.gz:1: expected 6 distances per row (as on the first row), got 5';
    rows too many were 'got an empty file' (the reader stopped before it knew the width), then 'got more than 7
    rows' for a file of 7 rows; 5 rows were 'got 5 rows'.  Every form reads the width from the first row and
    counts every row now, and says the same."""
    import gzip

    text = "".join(" ".join(str(abs(i - j)) for j in range(n_cols)) + "\n" for i in range(n_rows))
    (tmp_path / "m.txt").write_text(text)
    (tmp_path / "m.txt.gz").write_bytes(gzip.compress(text.encode()))
    for name in ("m.txt", "m.txt.gz"):
        with pytest.raises(InputError) as raised:
            shrec_score.score([tmp_path / name], cla)
        assert str(raised.value) == f"{tmp_path / name}: expected a 6 x 6 matrix (queries x targets of the classifications), got {n_rows} x {n_cols}"


def test_a_matrix_on_the_general_path_is_ranked_a_chunk_of_queries_at_a_time(tmp_path):
    """issue 30.17: under --depth (as under --grades sister or --judged-only) a
    matrix's lists are made a chunk of queries at a time: the traced peak stays
    well under the 72 MB that every list of a 3,000^2 matrix takes (int64), and
    a no-op depth gives the numbers of the binary path."""
    import tracemalloc

    from click.testing import CliRunner

    from shrec_score.cli import cli

    n = 3000
    m = np.round(np.random.default_rng(17).random((n, n)), 3).astype(np.float32)
    np.save(tmp_path / "m.npy", m)
    (tmp_path / "c.cla").write_text(f"PSB 1\n60 {n}\n" + "".join(f"c{c} 0 50\n" + "".join(f"{c * 50 + i}\n" for i in range(50)) for c in range(60)))
    args = ["score", str(tmp_path / "m.npy"), "-r", str(tmp_path / "c.cla"), "--format", "csv", "--per-query", "--quiet", "-m", "NN,FT,AP"]
    tracemalloc.start()
    try:
        cut = CliRunner().invoke(cli, [*args, "--depth", str(n - 1)])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert cut.exit_code == 0, cut.stderr
    assert peak < 80 << 20, f"peak {peak / 2**20:.0f} MiB"  # 140 MiB when every list was made at once
    assert cut.stdout == CliRunner().invoke(cli, args).stdout


@pytest.mark.skipif(np.__version__.startswith("1."), reason="numpy 1's parser warns on a bad token, which the reader silences")
def test_reading_an_ascii_matrix_leaves_the_warnings_machinery_alone(tmp_path):
    # the library touches no global state of its host: a catch_warnings() around numpy's parser reset Python's
    # record of the warnings already shown (and, from threads, could leave an 'ignore' filter behind for good)
    import warnings

    from shrec_score.io.matrix import read_ascii_matrix

    (tmp_path / "good.txt").write_text("0 0.5\n0.5 0\n")
    (tmp_path / "bad.txt").write_text("0 0.5\n0.5 x\n")

    def warn() -> None:
        warnings.warn("shown once at this line", UserWarning, stacklevel=1)

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("default")  # once per place
        warn()
        assert read_ascii_matrix(str(tmp_path / "good.txt"), (2, 2)).tolist() == [[0, 0.5], [0.5, 0]]
        with pytest.raises(InputError, match=r"bad.txt:2: "):
            read_ascii_matrix(str(tmp_path / "bad.txt"), (2, 2))
        warn()
    assert [str(w.message) for w in seen] == ["shown once at this line"]


def test_score_refuses_a_row_block_matrix_naming_the_function_that_reads_it(tmp_path, cla):
    """score() read a folder of .npy shards as a folder of runs and refused its manifest.json as a run of no
    known format (the CLI sends row-block matrices to distributed.score itself): it now says what the folder is
    and what reads it, for the folder itself and for one inside a folder of runs."""
    from shrec_score.io.chunked import write_row_blocks

    m = np.arange(36, dtype=np.float32).reshape(6, 6)
    (tmp_path / "runs").mkdir()
    write_row_blocks(str(tmp_path / "runs" / "shards"), "npy-shards", m, m.dtype, 2)
    np.save(tmp_path / "runs" / "other.npy", m)
    said = "expected a run read whole, got a matrix stored by blocks of rows (npy-shards); only scoring reads those: `shrec-score RUNS`, or shrec_score.distributed.score from Python"
    for given in (tmp_path / "runs" / "shards", tmp_path / "runs"):
        with pytest.raises(InputError) as got:
            shrec_score.score([given], cla)
        assert str(got.value) == f"{tmp_path / 'runs' / 'shards'}: {said}"
