"""The library as a notebook or a training loop uses it: options checked up
front, every public run type accepted, no state shared between calls, and
the caller's memory left alone."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest

import shrec_score
from shrec_score import loading
from shrec_score.errors import OptionError
from shrec_score.io.matrix import read_matrix
from shrec_score.model import MatrixRun

PSB = "sample_runs/psb-like"


@pytest.mark.parametrize(
    "option, value, allowed",
    [("grades", "Sister", "binary, sister"), ("average", "Macro", "micro, macro"), ("run_format", "TREC", "auto, lists, matrix, trec, shrec2011"),
     ("matrix_order", "Numeric", "listing, numeric")],
)
def test_a_miscased_option_is_refused_before_any_run_is_read(monkeypatch, option, value, allowed):
    read = []
    monkeypatch.setattr(loading, "discover_runs", lambda *a, **k: read.append(a) or ([], []))
    with pytest.raises(OptionError, match=rf"^{option}: expected one of {allowed}, got '{value}' \(did you mean '{value.lower()}'"):
        shrec_score.score([f"{PSB}/runs"], f"{PSB}/classes.cla", **{option: value})
    assert read == []
    assert isinstance(OptionError("x"), ValueError)


def test_unknown_measure_sort_and_keyword_are_refused_up_front():
    with pytest.raises(OptionError, match=r"^unknown measure 'XX'"):
        shrec_score.score(["nowhere"], "no.cla", measures=["NN", "XX"])
    with pytest.raises(OptionError, match=r"^sort: unknown measure 'best'"):
        shrec_score.score(["nowhere"], "no.cla", sort="best")
    # names are case-sensitive; the hint names the same name in its case first (difflib alone offered 'map@5')
    with pytest.raises(OptionError, match=r"^unknown measure 'p@5' \(did you mean 'P@5' or "):
        shrec_score.score(["nowhere"], "no.cla", measures=["p@5"])
    with pytest.raises(OptionError, match=r"^unknown option 'average_mode'"):
        shrec_score.score(["nowhere"], "no.cla", average_mode="macro")
    # options= takes an Options: a dict there was an AttributeError deep in the scoring (a bug hunt)
    with pytest.raises(OptionError, match=r"^options: expected an Options \(Options.build\(...\)\) or keywords, got dict$"):
        shrec_score.score([f"{PSB}/runs"], f"{PSB}/classes.cla", options={"lenient": True})
    # aliases find the measure; the column keeps the name as typed (issue 31.4)
    assert shrec_score.Options.build(measures=["mAP", "T1"], sort="MAP").measures == ("mAP", "T1")
    assert shrec_score.Options.build(measures=["mAP", "T1"], sort="MAP").sort == "AP"


def test_a_matrix_run_object_scores_as_its_file(tmp_path):
    """score() takes a MatrixRun a notebook built, with the same values as the file."""
    cla = tmp_path / "c.cla"
    cla.write_text("PSB 1\n2 6\na 0 3\nm0\nm1\nm2\nb 0 3\nm3\nm4\nm5\n")
    rng = np.random.default_rng(0)
    d = rng.random((6, 6)).astype(np.float32)
    np.save(tmp_path / "run.npy", d)
    from_file = shrec_score.score([tmp_path / "run.npy"], cla, measures=["NN", "FT", "AP"])
    rel = shrec_score.load_relevance(cla)
    run = MatrixRun("run", "memory", d, list(rel.query_ids), np.arange(6), np.arange(6))
    from_memory = shrec_score.score([run], rel, measures=["NN", "FT", "AP"])
    pd.testing.assert_frame_equal(from_file.per_query, from_memory.per_query)
    # query m0: its own column dropped; distances to m1..m5 rank the rest
    order = [j for j in np.argsort(d[0], kind="stable") if j != 0]
    first_relevant = [i for i, j in enumerate(order, start=1) if j in (1, 2)]
    ap = sum((k + 1) / r for k, r in enumerate(first_relevant)) / 2
    assert from_memory.per_query.set_index("query").loc["m0", "AP"] == pytest.approx(ap)


def test_two_threads_scoring_at_once_agree_with_sequential_calls(tmp_path):
    """Read-ahead, worker pools and backends are per call: two threads give what two calls in a row give."""
    run = tmp_path / "run.trec"
    qrels = tmp_path / "q.qrels"
    rng = np.random.default_rng(4)
    lines, judged = [], []
    for q in range(40):
        docs = rng.choice(300, 100, replace=False)
        lines += [f"q{q} Q0 d{x} {i} {s:.2f} r\n" for i, (x, s) in enumerate(zip(docs, np.sort(rng.random(100))[::-1]))]
        judged += [f"q{q} 0 d{x} {g}\n" for x, g in zip(rng.choice(300, 30, replace=False), rng.integers(0, 3, 30))]
    run.write_text("".join(lines))
    qrels.write_text("".join(judged))
    jobs = {"trec": lambda: shrec_score.score([run], qrels, measures=["AP", "NDCG@10", "P@5"]).per_query,
            "psb": lambda: shrec_score.score([f"{PSB}/runs"], f"{PSB}/classes.cla").per_query}
    sequential = {k: f() for k, f in jobs.items()}
    for _ in range(3):
        results: dict[str, pd.DataFrame] = {}
        threads = [threading.Thread(target=lambda k=k, f=f, out=results: out.__setitem__(k, f())) for k, f in jobs.items()]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        for k in jobs:
            pd.testing.assert_frame_equal(results[k], sequential[k])
    assert not [t for t in threading.enumerate() if t.name.startswith("shrec-score read")]


def test_the_callers_copy_on_write_memmap_keeps_its_edits(tmp_path):
    """Ranking a caller's memory map never madvises it (its private edits would be lost)."""
    cla = tmp_path / "c.cla"
    n = 600
    cla.write_text("PSB 1\n2 %d\na 0 %d\n" % (n, n // 2) + "".join(f"m{i}\n" for i in range(n // 2)) + f"b 0 {n // 2}\n" + "".join(f"m{i}\n" for i in range(n // 2, n)))
    np.save(tmp_path / "d.npy", np.random.default_rng(1).random((n, n)).astype(np.float32))
    m = np.load(tmp_path / "d.npy", mmap_mode="c")
    m[:, :] = 7.0  # private edits, not in the file
    rel = shrec_score.load_relevance(cla)
    shrec_score.score([MatrixRun("run", "memory", m, list(rel.query_ids), np.arange(n), np.arange(n))], rel, measures=["NN"])
    assert (m == 7.0).all()
    assert read_matrix(str(tmp_path / "d.npy"), (n, n))[0, 0] != 7.0  # the file itself never had them


def test_a_run_read_against_one_qrels_is_refused_against_another(tmp_path):
    """Run records hold indices into the target ids of the relevance they were
    read against (a bug of 0.1.0 scored them against a second qrels with the
    first one's ids): another relevance refuses them, the same one (read again)
    scores them as the paths."""
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 d1 1 0.9 r\nq1 Q0 d2 2 0.8 r\nq1 Q0 d3 3 0.7 r\n")
    (tmp_path / "a.txt").write_text("q1 0 d3 1\n")
    (tmp_path / "b.txt").write_text("q1 0 d9 1\nq1 0 d1 1\n")
    rel_a = shrec_score.load_relevance(str(tmp_path / "a.txt"))
    runs, _ = shrec_score.load_runs([str(run)], rel_a)
    with pytest.raises(shrec_score.OptionError, match="was read against another relevance"):
        shrec_score.score(runs, shrec_score.load_relevance(str(tmp_path / "b.txt")), measures=["AP"])
    again = shrec_score.score(runs, shrec_score.load_relevance(str(tmp_path / "a.txt")), measures=["AP"])
    assert again.per_query["AP"].tolist() == [1 / 3]  # d3 at rank 3: AP = 1/3
    assert shrec_score.score([str(run)], str(tmp_path / "b.txt"), measures=["AP"]).per_query["AP"].tolist() == [0.5]  # d1 at 1 of 2 relevant


@pytest.mark.parametrize(
    "option, value, allowed", [("missing", "skipp", "error, skip, zero"), ("missing", "Skip", "error, skip, zero"), ("matrix_order", "Listing", "listing, numeric")]
)
def test_load_runs_refuses_a_value_outside_its_set(option, value, allowed):
    # load_runs is public (docs/api.md): a misspelt value was taken as "not error" (missing) or ignored
    rel = shrec_score.load_relevance(f"{PSB}/classes.cla")
    with pytest.raises(OptionError, match=rf"^{option}: expected one of {allowed}, got '{value}'"):
        shrec_score.load_runs([f"{PSB}/runs"], rel, **{option: value})
