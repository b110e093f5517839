"""trec_eval's own test suite (NIST): per topic and 'all', to the 4 printed decimals."""

import os

import pytest
from click.testing import CliRunner

import shrec_score
from shrec_score.cli import cli

from .conftest import shared_path

OURS = {"map": "AP", "Rprec": "FT", "P_5": "P@5", "P_10": "P@10", "recip_rank": "RR"}


def expected(path):
    out = {}
    for line in open(path, encoding="utf-8"):
        f = line.split()
        if len(f) == 3 and f[0] in OURS:
            out[(f[0], f[1])] = f[2]
    return out


def check(report, exp):
    pq = report.per_query.set_index("query")
    board = report.leaderboard.iloc[0]
    n = 0
    for (measure, topic), text in exp.items():
        value = board[OURS[measure]] if topic == "all" else pq.loc[topic, OURS[measure]]
        assert f"{value:.4f}" == text, (measure, topic)
        n += 1
    return n


@pytest.mark.parametrize("out_file", ["out.test.aq", "out.test.a"])
def test_binary_qrels_reproduce_trec_eval(out_file):
    d = shared_path("trec_eval")
    report = shrec_score.score([os.path.join(d, "results.test")], os.path.join(d, "qrels.test"), measures=list(OURS.values()))
    n = check(report, expected(os.path.join(d, out_file)))
    assert n == (20 if out_file.endswith("aq") else 5)


def test_rel_level_2_reproduces_trec_eval_l2():
    d = shared_path("trec_eval")
    report = shrec_score.score(
        [os.path.join(d, "results.test")],
        os.path.join(d, "qrels.rel_level"),
        measures=list(OURS.values()),
        settings=shrec_score.measures.Settings(rel_level=2),
    )
    assert check(report, expected(os.path.join(d, "out.test.aql"))) == 20


def test_cli_trec_run_default_measures_and_rel_level():
    d = shared_path("trec_eval")
    r = CliRunner().invoke(
        cli, [os.path.join(d, "results.test"), "-r", os.path.join(d, "qrels.rel_level"), "--rel-level", "2", "-m", "AP,RR", "--format", "csv"]
    )
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[1].split(",")[:3] == ["1", "results.test", "3"]
    assert f"{float(r.stdout.splitlines()[1].split(',')[3]):.4f}" == "0.1667"
    r = CliRunner().invoke(cli, [os.path.join(d, "results.test"), "-r", os.path.join(d, "qrels.test"), "--cutoffs", "5,20", "--format", "csv"])
    assert r.stdout.splitlines()[0] == "rank,run,queries,AP,FT,RR,P@5,P@20,R@5,R@20,NN,DCG"
