"""SHREC 2021 Cultural Heritage: every participant's matrix, scored by shrec-score
and by an independent per-query loop written here (numeric matrix order: row i
is query id i, column j is target id j, as the track's evaluator reads them)."""

import glob
import math
import os

import numpy as np
import pytest

import shrec_score
from shrec_score import InputError

from .conftest import shared_path


def read_cla_plain(path):
    """id -> class, parsed independently of shrec_score."""
    tokens = [ln.split() for ln in open(path, encoding="utf-8").read().splitlines()]
    tokens = [t for t in tokens if t][2:]
    out, i = {}, 0
    while i < len(tokens):
        name, _, count = tokens[i]
        for k in range(int(count)):
            out[tokens[i + 1 + k][0]] = name
        i += 1 + int(count)
    return out


def oracle(matrix_path, qcla, tcla):
    q_class = read_cla_plain(qcla)
    t_class = read_cla_plain(tcla)
    d = np.loadtxt(matrix_path)
    targets = sorted(t_class, key=int)
    rows = {}
    for qid in sorted(q_class, key=int):
        row = d[int(qid)]
        order = sorted(range(len(targets)), key=lambda j: (row[j], j))  # ties: lower column first
        gains = [1 if t_class[targets[j]] == q_class[qid] else 0 for j in order]
        k = sum(1 for t in targets if t_class[t] == q_class[qid])
        hits = [i + 1 for i, g in enumerate(gains) if g]
        nn = float(gains[0])
        ft = sum(1 for r in hits if r <= k) / k
        st = sum(1 for r in hits if r <= 2 * k) / k
        h32 = sum(1 for r in hits if r <= 32)
        p, rc = h32 / 32, h32 / k
        e = 0.0 if h32 == 0 else 2 * p * rc / (p + rc)
        dcg = sum(1.0 if r == 1 else 1 / math.log2(r) for r in hits) / (1 + sum(1 / math.log2(i) for i in range(2, k + 1)))
        ap = sum((n + 1) / r for n, r in enumerate(hits)) / k
        rows[qid] = {"NN": nn, "FT": ft, "ST": st, "E": e, "DCG": dcg, "AP": ap}
    return rows


@pytest.mark.parametrize("challenge, qname, tname", [("culture", "queryCulture.cla", "datasetCulture.cla"), ("shape", "queryShape.cla", "datasetShape.cla")])
def test_every_run_matches_the_independent_loop(challenge, qname, tname):
    folder = shared_path("shrec2021-ch", challenge)
    qcla, tcla = os.path.join(folder, qname), os.path.join(folder, tname)
    report = shrec_score.score([folder], tcla, queries=qcla, matrix_order="numeric")
    runs = sorted(os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(folder, "*.txt")))
    assert sorted(report.leaderboard["run"]) == runs
    for run in runs:
        want = oracle(os.path.join(folder, run + ".txt"), qcla, tcla)
        got = report.per_query[report.per_query["run"] == run].set_index("query")
        assert len(got) == len(want)
        for qid, values in want.items():
            for m, v in values.items():
                assert got.loc[qid, m] == pytest.approx(v, rel=1e-12, abs=1e-15), (run, qid, m)


def test_massive_ties_are_broken_by_column():
    folder = shared_path("shrec2021-ch", "culture")
    d = np.loadtxt(os.path.join(folder, "RVN.run2.txt"))
    tied = [(i, len(np.unique(row))) for i, row in enumerate(d)]
    assert min(n for _, n in tied) < d.shape[1] / 2  # the run really is full of ties


def test_shape_challenge_refuses_to_guess_the_matrix_order():
    folder = shared_path("shrec2021-ch", "shape")
    with pytest.raises(InputError, match="--matrix-order listing .* or --matrix-order numeric"):
        shrec_score.score([folder], os.path.join(folder, "datasetShape.cla"), queries=os.path.join(folder, "queryShape.cla"))
