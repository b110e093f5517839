"""A run that ranks only some of the queries (--missing-queries): an error by
default, as trec_eval 10 stops; ``skip`` averages over the queries the run
has (trec_eval 9, pytrec_eval); ``zero`` scores the others as empty lists
(trec_eval -c).  The oracle is pytrec-eval-terrier per topic."""

from __future__ import annotations

import math
import shutil

import numpy as np
import pandas as pd
import pytest

import shrec_score
from shrec_score.errors import InputError

pytrec_eval = pytest.importorskip("pytrec_eval")

#: ours -> pytrec_eval's name
MEASURES = {"AP": "map", "P@10": "P_10", "bpref": "bpref", "ndcg_cut.10": "ndcg_cut_10"}


@pytest.fixture
def subset(tmp_path):
    """Graded qrels over 6 topics (every topic has a relevant document); a run for 4 of them, with ties."""
    rng = np.random.default_rng(5)
    topics = [f"t{i}" for i in range(6)]
    qrels, run = {}, {}
    lines_q, lines_r = [], []
    for t in topics:
        docs = rng.choice(300, 40, replace=False)
        grades = rng.integers(0, 3, 40)
        grades[0] = 2
        qrels[t] = {f"d{d}": int(g) for d, g in zip(docs, grades)}
        lines_q += [f"{t} 0 d{d} {g}" for d, g in zip(docs, grades)]
    for t in topics[:4]:
        docs = rng.choice(300, 60, replace=False)
        scores = np.round(rng.random(60), 1)  # ties
        run[t] = {f"d{d}": float(s) for d, s in zip(docs, scores)}
        lines_r += [f"{t} Q0 d{d} {i} {s} r" for i, (d, s) in enumerate(zip(docs, scores))]
    (tmp_path / "q.qrels").write_text("\n".join(lines_q) + "\n")
    (tmp_path / "sub.run").write_text("\n".join(lines_r) + "\n")
    per_topic = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES.values())).evaluate(run)
    return tmp_path, topics, per_topic


def _board(tmp_path, **kw):
    return shrec_score.score([tmp_path / "sub.run"], tmp_path / "q.qrels", measures=list(MEASURES), **kw)


def test_by_default_a_missing_query_is_an_error(subset):
    tmp_path, _, _ = subset
    with pytest.raises(InputError, match=r"sub.run: expected a ranking for every query; run 'sub.run' has none for 2 of 6 queries"):
        _board(tmp_path)


@pytest.mark.parametrize("shuffled", [False, True])
def test_skip_averages_over_the_queries_the_run_has(subset, shuffled):
    tmp_path, topics, per_topic = subset
    if shuffled:  # not grouped by query: read whole instead of streamed
        lines = (tmp_path / "sub.run").read_text().splitlines()
        np.random.default_rng(1).shuffle(lines)
        (tmp_path / "sub.run").write_text("\n".join(lines) + "\n")
    report = _board(tmp_path, settings=shrec_score.Settings(missing="skip"))
    pq = report.per_query.set_index("query")
    for ours, theirs in MEASURES.items():
        for t in topics[:4]:
            assert pq.loc[t, ours] == pytest.approx(per_topic[t][theirs], abs=1e-9)
        assert pq.loc[topics[4:], ours].isna().all()  # listed, empty, out of the mean
        mean = np.mean([per_topic[t][theirs] for t in topics[:4]])
        assert report.leaderboard.loc[0, ours] == pytest.approx(mean, abs=1e-9)
    assert "note: run 'sub.run' ranks nothing for 2 of 6 queries: left out of the means (--missing-queries skip)" in report.warnings
    assert "trec_eval's default" in report.signature["lists"]


def test_zero_scores_the_others_as_empty_lists_as_trec_eval_c(subset):
    tmp_path, topics, per_topic = subset
    report = _board(tmp_path, settings=shrec_score.Settings(missing="zero"))
    pq = report.per_query.set_index("query")
    for ours, theirs in MEASURES.items():
        assert (pq.loc[topics[4:], ours] == 0).all()
        mean = sum(per_topic[t][theirs] for t in topics[:4]) / 6  # trec_eval -c: every judged topic counts
        assert report.leaderboard.loc[0, ours] == pytest.approx(mean, abs=1e-9)
    assert "note: run 'sub.run' ranks nothing for 2 of 6 queries: scored as empty lists (--missing-queries zero)" in report.warnings


def test_the_cli_flag_and_a_mis_spelt_value(subset):
    from click.testing import CliRunner

    from shrec_score.cli import cli

    tmp_path, topics, per_topic = subset
    args = [str(tmp_path / "sub.run"), "-r", str(tmp_path / "q.qrels"), "-m", "AP", "--format", "csv", "--quiet"]
    r = CliRunner().invoke(cli, [*args, "--missing-queries", "zero"])
    assert r.exit_code == 0, r.output
    board = pd.read_csv(__import__("io").StringIO(r.stdout))
    assert board.loc[0, "AP"] == pytest.approx(sum(per_topic[t]["map"] for t in topics[:4]) / 6, abs=1e-9)
    r = CliRunner().invoke(cli, [*args, "--missing-queries", "Zero"])
    assert r.exit_code == 2 and "Zero" in r.output
    with pytest.raises(shrec_score.OptionError, match="missing"):
        _board(tmp_path, settings=shrec_score.Settings(missing="Zero"))


def test_ranked_list_folders_follow_the_same_rule(tmp_path):
    runs = tmp_path / "D2"
    shutil.copytree("sample_runs/psb-like/runs/D2", runs)
    first = sorted(runs.iterdir())[0]
    first.unlink()
    cla = "sample_runs/psb-like/classes.cla"
    with pytest.raises(InputError, match="has none for 1 of"):
        shrec_score.score([runs], cla, measures=["NN", "AP"])
    skipped = shrec_score.score([runs], cla, measures=["NN", "AP"], settings=shrec_score.Settings(missing="skip")).per_query.set_index("query")
    zeroed = shrec_score.score([runs], cla, measures=["NN", "AP"], settings=shrec_score.Settings(missing="zero")).per_query.set_index("query")
    q = first.name.split(".")[0]
    assert math.isnan(skipped.loc[q, "AP"]) and zeroed.loc[q, "AP"] == 0
    others = skipped.index != q
    pd.testing.assert_series_equal(skipped.loc[others, "AP"], zeroed.loc[others, "AP"])
