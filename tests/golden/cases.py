"""The scorings whose CSV files are stored in tests/golden/<case>/ (issue 29).

Each case is the argument list of one ``shrec-score`` call, with ``{shared}``
for ../shared/data and ``{gen}`` for the folder of generated inputs
(:func:`generate`).  ``make_golden.py`` wrote the stored files once, with
shrec-score 0.1.0 at commit 344bbd6 (before the simplification of issue 29);
tests/test_golden.py scores every case again and compares every CSV to them:
the same files, rows, columns and text, numbers equal to 1e-12.
"""

from __future__ import annotations

import os

import numpy as np

TRE = "{shared}/trec_eval"
PSB_LIKE = ["sample_runs/psb-like/runs", "-r", "sample_runs/psb-like/classes.cla"]
CH = "{shared}/shrec2021-ch"

CASES: dict[str, list[str]] = {
    # every preset
    "config-psb": ["--config", "configs/psb.yaml"],
    "config-sbir-kendall": ["--config", "configs/sbir-kendall.yaml"],
    "config-shrec2006": ["--config", "configs/shrec2006.yaml"],
    "config-shrec2017-shapenet": ["--config", "configs/shrec2017-shapenet.yaml"],
    "config-shrec2018-image-scene": ["--config", "configs/shrec2018-image-scene.yaml"],
    "config-shrec2018-sketch-scene": ["--config", "configs/shrec2018-sketch-scene.yaml"],
    "config-shrec2021-ch": ["--config", "configs/shrec2021-ch.yaml"],
    # sample_runs under other options
    "psb-like": PSB_LIKE,
    "psb-like-expected": [*PSB_LIKE, "--ties", "expected"],
    "psb-like-optimistic": [*PSB_LIKE, "--ties", "optimistic"],
    "psb-like-pessimistic": [*PSB_LIKE, "--ties", "pessimistic"],
    "psb-like-macro": [*PSB_LIKE, "--average", "macro"],
    "psb-like-sister": [*PSB_LIKE, "--grades", "sister"],
    "psb-like-lenient": [*PSB_LIKE, "--lenient"],
    "psb-like-significance": [*PSB_LIKE, "--significance", "--seed", "3", "--resamples", "500"],
    "psb-like-measures": [*PSB_LIKE, "-m", "NN,FT,ST,E,DCG,AP,RR,P@10,R@10,ndcg,map_cut.10,success.5,ndcg_cut.10,num_ret,num_rel,num_rel_ret,set_F,CG@10,NDCG@10", "--depth", "50"],
    "shrec2006-expected": ["--config", "configs/shrec2006.yaml", "--ties", "expected"],
    "shapenet-macro": ["--config", "configs/shrec2017-shapenet.yaml", "--average", "macro"],
    "scene-sketch-expected": ["--config", "configs/shrec2018-sketch-scene.yaml", "--ties", "expected"],
    "scene-image-pessimistic": ["--config", "configs/shrec2018-image-scene.yaml", "--ties", "pessimistic"],
    # ../shared/data: SHREC 2021 (real participants' matrices, massive ties)
    "shrec2021-culture-expected": ["--config", "configs/shrec2021-ch.yaml", "--ties", "expected"],
    "shrec2021-shape": [f"{CH}/shape", "-r", f"{CH}/shape/datasetShape.cla", "-q", f"{CH}/shape/queryShape.cla", "--run-format", "matrix", "--matrix-order", "numeric"],
    "shrec2021-shape-optimistic": [f"{CH}/shape", "-r", f"{CH}/shape/datasetShape.cla", "-q", f"{CH}/shape/queryShape.cla", "--run-format", "matrix", "--matrix-order", "numeric", "--ties", "optimistic"],
    # ../shared/data: trec_eval's own test files
    "trec": [f"{TRE}/results.test", "-r", f"{TRE}/qrels.test"],
    "trec-all": [f"{TRE}/results.test", "-r", f"{TRE}/qrels.test", "-m", "map,Rprec,recip_rank,P.5,P.10,recall.10,ndcg,ndcg_cut.10,bpref,num_ret,num_rel,num_rel_ret,gm_map,set_F,iprec_at_recall_0.50,map_cut.100,success.10"],
    "trec-level2": [f"{TRE}/results.test", "-r", f"{TRE}/qrels.rel_level", "--rel-level", "2", "-m", "map,Rprec,P.10,ndcg,bpref,num_rel,num_rel_ret"],
    "trec-level3-zero": [f"{TRE}/results.test", "-r", f"{TRE}/qrels.rel_level", "--rel-level", "3", "--missing-queries", "zero", "-m", "map,P.10,ndcg_cut.10"],
    "trec-judged-depth": [f"{TRE}/results.test", "-r", f"{TRE}/qrels.test", "--judged-only", "--depth", "100"],
    "trec-trunc-skip": [f"{TRE}/results.trunc", "-r", f"{TRE}/qrels.test", "--missing-queries", "skip"],
    "trec-expected": [f"{TRE}/results.test", "-r", f"{TRE}/qrels.test", "--ties", "expected", "-m", "map,P.10,recip_rank,ndcg"],
    "trec-lenient": [f"{TRE}/results.test", "-r", f"{TRE}/qrels.test", "--lenient"],
    # ../shared/data: the PSB test classification with a generated matrix (ties from rounding)
    "psb-test-matrix": ["{gen}/psb-test", "-r", "{shared}/psb/test.cla", "--run-format", "matrix", "--matrix-order", "listing"],
    "psb-test-matrix-expected": ["{gen}/psb-test", "-r", "{shared}/psb/test.cla", "--run-format", "matrix", "--matrix-order", "listing", "--ties", "expected"],
    "psb-test-matrix-macro": ["{gen}/psb-test", "-r", "{shared}/psb/test.cla", "--run-format", "matrix", "--matrix-order", "numeric", "--average", "macro", "--min-class-size", "3"],
    "psb-coarse2-lists": ["{gen}/psb-coarse2", "-r", "{shared}/psb/coarse2Test.cla", "--run-format", "lists"],
    "psb-coarse2-lists-expected": ["{gen}/psb-coarse2", "-r", "{shared}/psb/coarse2Test.cla", "--run-format", "lists", "--ties", "expected"],
}


def model_ids(cla: str) -> list[str]:
    """The model ids of a PSB .cla in listing order (a plain reading, for the generator)."""
    ids: list[str] = []
    with open(cla) as fh:
        lines = [ln.split() for ln in fh]
    i = 3
    while i < len(lines):
        if len(lines[i]) == 3:
            count = int(lines[i][2])
            ids += [w[0] for w in lines[i + 1 : i + 1 + count]]
            i += 1 + count
        else:
            i += 1
    return ids


def generate(shared: str, gen: str) -> None:
    """Write the generated inputs (deterministic: PCG64 with fixed seeds)."""
    rng = np.random.default_rng(29)
    for name, cla in (("psb-test", "test.cla"),):
        n = len(model_ids(os.path.join(shared, "psb", cla)))
        os.makedirs(os.path.join(gen, name), exist_ok=True)
        for run in ("A", "B"):
            m = np.round(rng.random((n, n)), 2).astype(np.float32)  # two decimals: many ties
            np.save(os.path.join(gen, name, f"{run}.npy"), m)
    ids = model_ids(os.path.join(shared, "psb", "coarse2Test.cla"))
    for run in ("A", "B"):
        folder = os.path.join(gen, "psb-coarse2", run)
        os.makedirs(folder, exist_ok=True)
        for q in ids:
            order = rng.permutation(len(ids))[:120]
            dist = np.sort(np.round(rng.random(len(order)), 2))
            with open(os.path.join(folder, f"{q}.txt"), "w") as fh:
                fh.writelines(f"{ids[j]} {d:.2f}\n" for j, d in zip(order, dist))
