"""SHREC'16/'17 ShapeNet Core55: ground truth, taxonomy grades, the five summary measures.

The oracle is :class:`Reference`, a plain transcription of the official
evaluator's definitions (issue 18): Python loops over each ranked list, no
numpy, none of the project's code.  It is checked on a taxonomy with all
four grades, lists of many lengths (empty, short, longer than 1000), a
synset larger than 1000 (C capped) and queries that retrieve themselves.
"""

from __future__ import annotations

import csv
import io
import math
import os
import random

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import shrec_score
from shrec_score.cli import cli
from shrec_score.errors import InputError
from shrec_score.io.shapenet import read_shapenet_truth
from shrec_score.measures.base import GainBlock
from shrec_score.measures.shapenet import (
    average_precision_retrieved,
    f1_at_n,
    ndcg_retrieved,
    precision_at_n,
    recall_at_n,
)
from shrec_score.model import RankedRun
from shrec_score.relevance import TaxonomyRelevance

from .conftest import ROOT, SAMPLES

NAMES = ["shapenet.P@N", "shapenet.R@N", "shapenet.F1@N", "shapenet.mAP", "shapenet.NDCG"]
OFFICIAL = ["P@N", "R@N", "F1@N", "mAP", "NDCG"]


# -- the independent reference --------------------------------------------------


class Reference:
    """The definitions of issue 18, written out with loops."""

    def __init__(self, synset: dict[str, str], subsynset: dict[str, str]):
        self.synset = synset
        self.subsynset = subsynset

    def grade(self, q: str, t: str) -> int:
        if self.synset[q] != self.synset[t]:
            return 0
        if self.subsynset[q] == self.subsynset[t]:
            return 3
        if self.subsynset[t] == self.synset[t]:  # the target is labelled at synset level only
            return 2
        return 1

    def measures(self, q: str, ranked: list[str]) -> dict[str, float]:
        ranked = ranked[:1000]
        grades = [self.grade(q, t) for t in ranked]
        n = len(ranked)
        hits = 0
        precisions = []
        for i, g in enumerate(grades, start=1):
            if g > 0:
                hits += 1
                precisions.append(hits / i)
        size = 0
        for t in self.synset:
            if self.synset[t] == self.synset[q]:
                size += 1
        c = min(size, 1000)
        p = hits / n if n > 0 else 0.0
        r = hits / c
        f1 = 2 * p * r / (p + r) if p + r > 0 else 0.0
        ap = sum(precisions) / len(precisions) if precisions else 0.0

        def dcg(gs: list[int]) -> float:
            total = 0.0
            for i, g in enumerate(gs, start=1):
                total += g if i == 1 else g / math.log2(i)
            return total

        ideal = dcg(sorted(grades, reverse=True))
        ndcg = dcg(grades) / ideal if ideal > 0 else 0.0
        return {"P@N": p, "R@N": r, "F1@N": f1, "mAP": ap, "NDCG": ndcg}

    def table(self, lists: dict[str, list[str]]) -> dict[str, dict[str, float]]:
        return {q: self.measures(q, lst) for q, lst in lists.items()}

    def summary(self, lists: dict[str, list[str]]) -> list[tuple[str, dict[str, float]]]:
        """microALL, one row per synset (first-appearance order of the queries), macroALL."""
        values = self.table(lists)
        rows = [("microALL", {m: sum(v[m] for v in values.values()) / len(values) for m in OFFICIAL})]
        synsets = list(dict.fromkeys(self.synset[q] for q in lists))
        per_synset = []
        for s in synsets:
            qs = [q for q in lists if self.synset[q] == s]
            per_synset.append((s, {m: sum(values[q][m] for q in qs) / len(qs) for m in OFFICIAL}))
        rows += per_synset
        rows.append(("macroALL", {m: sum(v[m] for _, v in per_synset) / len(per_synset) for m in OFFICIAL}))
        return rows


# -- a random collection ----------------------------------------------------------


def _taxonomy(seed: int = 18):
    """About 1,400 models: a synset of 1,100 (C capped at 1000) and small ones,
    sub-synsets and models labelled at synset level only."""
    rng = random.Random(seed)
    plan = {"S1": (1100, ["S1a", "S1b", "S1c"]), "S2": (150, ["S2a", "S2b"]), "S3": (100, []), "S4": (60, ["S4a"])}
    synset, subsynset = {}, {}
    ids = []
    n = 0
    for syn, (size, subs) in plan.items():
        for _ in range(size):
            n += 1
            mid = f"{n:06d}"
            ids.append(mid)
            synset[mid] = syn
            subsynset[mid] = syn if not subs or rng.random() < 0.25 else rng.choice(subs)
    rng.shuffle(ids)
    return ids, synset, subsynset


def _lists(ids: list[str], synset: dict[str, str], seed: int, n_queries: int | None = None) -> dict[str, list[str]]:
    """Ranked lists of every model: mostly short, some empty, some longer than
    1000; about half retrieve themselves (first or further down)."""
    rng = random.Random(seed)
    lists = {}
    for q in ids[:n_queries]:
        kind = rng.random()
        length = 0 if kind < 0.02 else rng.randint(1001, 1300) if kind < 0.05 else rng.randint(1, 60)
        same = [t for t in ids if synset[t] == synset[q] and t != q]
        pool = rng.sample(same, min(len(same), length // 2 + 1)) + rng.sample(ids, min(len(ids), length))
        ranked = list(dict.fromkeys(t for t in pool if t != q))
        rng.shuffle(ranked)
        ranked = ranked[:length]
        if length and rng.random() < 0.5:
            ranked.insert(0 if rng.random() < 0.5 else rng.randint(0, len(ranked)), q)
            ranked = ranked[: max(length, 1)]
        lists[q] = ranked
    return lists


def _relevance(ids, synset, subsynset) -> TaxonomyRelevance:
    return TaxonomyRelevance.from_rows("gt.csv", ids, [synset[i] for i in ids], [subsynset[i] for i in ids], ["test"] * len(ids))


def _run(rel: TaxonomyRelevance, name: str, lists: dict[str, list[str]]) -> RankedRun:
    index = rel.target_index
    return RankedRun.from_lists(name, {q: np.asarray([index[t] for t in lists.get(q, [])], dtype=np.int64) for q in rel.query_ids})


@pytest.fixture(scope="module")
def collection():
    ids, synset, subsynset = _taxonomy()
    rel = _relevance(ids, synset, subsynset)
    lists = {name: _lists(ids, synset, seed) for name, seed in (("a", 1), ("b", 2))}
    return ids, synset, subsynset, rel, lists


def test_the_random_collection_covers_every_case(collection):
    ids, synset, subsynset, rel, lists = collection
    ref = Reference(synset, subsynset)
    grades = {ref.grade(q, t) for lst in lists.values() for q, ranked in lst.items() for t in ranked}
    assert grades == {0, 1, 2, 3}
    lengths = [len(r) for lst in lists.values() for r in lst.values()]
    assert min(lengths) == 0 and max(lengths) > 1000 and len(set(lengths)) > 50
    assert sum(q in r for lst in lists.values() for q, r in lst.items()) > 500  # queries retrieving themselves
    assert max(sum(1 for t in ids if synset[t] == s) for s in set(synset.values())) > 1000  # C capped


def test_every_measure_per_query_equals_the_reference(collection):
    ids, synset, subsynset, rel, lists = collection
    ref = Reference(synset, subsynset)
    report = shrec_score.score([_run(rel, n, lst) for n, lst in lists.items()], rel)
    assert report.measures == NAMES
    for name, lst in lists.items():
        expected = ref.table(lst)
        got = report.per_query[report.per_query["run"] == name].set_index("query")
        for m, o in zip(NAMES, OFFICIAL):
            want = np.array([expected[q][o] for q in rel.query_ids])
            np.testing.assert_allclose(got.loc[rel.query_ids, m].to_numpy(), want, rtol=0, atol=1e-12, err_msg=f"{name} {m}")
        assert list(got.loc[rel.query_ids, "class"]) == [synset[q] for q in rel.query_ids]


def test_micro_macro_and_per_synset_means_equal_the_reference(collection):
    ids, synset, subsynset, rel, lists = collection
    ref = Reference(synset, subsynset)
    runs = [_run(rel, n, lst) for n, lst in lists.items()]
    micro = shrec_score.score(runs, rel).per_run.set_index("run")
    macro = shrec_score.score(runs, rel, average="macro")
    for name, lst in lists.items():
        rows = dict(ref.summary({q: lst[q] for q in rel.query_ids}))
        for m, o in zip(NAMES, OFFICIAL):
            assert micro.loc[name, m] == pytest.approx(rows["microALL"][o], abs=1e-12)
            assert macro.per_run.set_index("run").loc[name, m] == pytest.approx(rows["macroALL"][o], abs=1e-12)
        per_class = macro.per_class[macro.per_class["run"] == name].set_index("class")
        assert set(per_class.index) == {"S1", "S2", "S3", "S4"}
        for s in per_class.index:
            for m, o in zip(NAMES, OFFICIAL):
                assert per_class.loc[s, m] == pytest.approx(rows[s][o], abs=1e-12)


def test_the_summary_file_has_the_official_layout_and_values(collection, tmp_path):
    ids, synset, subsynset, rel, lists = collection
    ref = Reference(synset, subsynset)
    report = shrec_score.score([_run(rel, n, lst) for n, lst in lists.items()], rel)
    report.to_csv_files(tmp_path / "out")
    for name, lst in lists.items():
        with open(tmp_path / "out" / f"shapenet_summary_{name}.csv", newline="") as fh:
            rows = list(csv.reader(fh))
        assert rows[0] == ["class", *OFFICIAL]
        expected = ref.summary({q: lst[q] for q in rel.query_ids})
        assert [r[0] for r in rows[1:]] == [label for label, _ in expected]
        assert rows[1][0] == "microALL" and rows[-1][0] == "macroALL"
        for row, (_, want) in zip(rows[1:], expected):
            assert [float(x) for x in row[1:]] == pytest.approx([want[o] for o in OFFICIAL], abs=1e-12)
    per_run = pd.read_csv(tmp_path / "out" / "per_run.csv")
    assert list(per_run.columns) == ["run", "queries", *OFFICIAL]
    assert list(pd.read_csv(tmp_path / "out" / "per_class.csv").columns) == ["run", "class", "queries", *OFFICIAL]


# -- hand computations ------------------------------------------------------------


def test_hand_computed_query():
    # synset A: sub-synsets A1 (q, t1), A2 (t2), synset-level t3; synset B: u
    ids = ["q", "t1", "t2", "t3", "u"]
    rel = TaxonomyRelevance.from_rows("gt.csv", ids, ["A", "A", "A", "A", "B"], ["A1", "A1", "A2", "A", "B"], ["test"] * 5)
    assert rel.gains(np.zeros(5, dtype=np.int64), np.arange(5)).tolist() == [3, 3, 1, 2, 0]
    assert rel.n_relevant(1)[0] == 4  # C counts the query itself
    lists = {"q": ["u", "q", "t2", "t3"], "t1": ["t1"], "t2": ["u"], "t3": ["t3", "t1", "q", "t2", "u"], "u": ["q", "u"]}
    report = shrec_score.score([_run(rel, "r", lists)], rel)
    row = report.per_query.set_index("query").loc["q"]
    p, r = 3 / 4, 3 / 4
    assert row["shapenet.P@N"] == p and row["shapenet.R@N"] == r
    assert row["shapenet.F1@N"] == pytest.approx(2 * p * r / (p + r))
    assert row["shapenet.mAP"] == pytest.approx((1 / 2 + 2 / 3 + 3 / 4) / 3)
    dcg = 0 + 3 / math.log2(2) + 1 / math.log2(3) + 2 / math.log2(4)
    ideal = 3 + 2 / math.log2(2) + 1 / math.log2(3) + 0
    assert row["shapenet.NDCG"] == pytest.approx(dcg / ideal)
    t2 = report.per_query.set_index("query").loc["t2"]  # nothing relevant retrieved: NDCG 0/0 -> 0
    assert t2[NAMES].tolist() == [0.0, 0.0, 0.0, 0.0, 0.0]
    u = report.per_query.set_index("query").loc["u"]  # the query retrieving itself second: C = 1
    assert u[NAMES].tolist() == pytest.approx([1 / 2, 1.0, 2 * 0.5 / 1.5, 1 / 2, 3 / math.log2(2) / 3])


def test_the_cut_at_1000_applies_before_every_measure():
    # 1,500 items: relevant at ranks 1, 1000 and 1001..1500; C = min(1501, 1000) = 1000
    gains = [3] + [0] * 998 + [3] + [3] * 500
    b = GainBlock.from_gains([gains], [0], [1501], -1, top=3)
    assert precision_at_n(b).tolist() == [2 / 1000]
    assert recall_at_n(b).tolist() == [2 / 1000]
    assert average_precision_retrieved(b).tolist() == [(1 / 1 + 2 / 1000) / 2]
    assert ndcg_retrieved(b).tolist() == pytest.approx([(3 + 3 / math.log2(1000)) / (3 + 3 / math.log2(2))])
    assert f1_at_n(b).tolist() == pytest.approx([2 / 1000])


# -- reading ----------------------------------------------------------------------

GT = "id,synsetId,subSynsetId,modelId,split\n000001,A,A1,m1,test\n000002,A,A,m2,test\n000003,B,B,m3,test\n000004,A,A1,m4,train\n"


def _write_run(folder, lists: dict[str, list[str]]) -> None:
    os.makedirs(folder, exist_ok=True)
    for q, lst in lists.items():
        with open(os.path.join(folder, q), "w") as fh:
            fh.write("".join(f"{t}\n" for t in lst))


def test_a_first_line_holding_the_query_id_is_the_query_ranked_first(tmp_path):
    gt = tmp_path / "gt.csv"
    gt.write_text(GT)
    _write_run(tmp_path / "runs" / "r", {"000001": ["000001", "000003"], "000002": ["000001"], "000003": ["000003", "000002"]})
    report = shrec_score.score([tmp_path / "runs" / "r"], gt, split="test")
    q1 = report.per_query.set_index("query").loc["000001"]
    # not skipped as a SHREC 2012 header line: N = 2, the query counts at rank 1
    assert q1["shapenet.P@N"] == 1 / 2 and q1["shapenet.R@N"] == 1 / 2  # C = 2 test models in A
    assert report.per_query["query"].tolist() == ["000001", "000002", "000003"]  # the test split only


def test_a_file_holding_only_its_query_id_is_not_counted_as_empty(tmp_path):
    """The empty-files message counts by the reader's rule: a ShapeNet file
    holding only its own query id line is a list of one (the query ranked
    first), not an empty file; --lenient counts the same files as empty."""
    gt = tmp_path / "gt.csv"
    gt.write_text(GT)
    run = tmp_path / "runs" / "r"
    _write_run(run, {"000001": [], "000002": ["000002"], "000003": ["000003", "000002"]})
    expected = f"{run / '000001'}: expected a ranked list, got an empty file (1 of 3 query files of run 'r' are empty; --lenient scores them as empty lists)"
    with pytest.raises(InputError) as info:
        shrec_score.score([run], gt, split="test")
    assert str(info.value) == expected
    report = shrec_score.score([run], gt, split="test", lenient=True)
    assert "--lenient: run 'r': 1 empty ranked lists (scored 0)" in report.warnings
    q2 = report.per_query.set_index("query").loc["000002"]
    assert q2["shapenet.P@N"] == 1 / 1  # its one entry is itself, relevant
    (run / "000002").write_text("")  # now two empty files of three
    with pytest.raises(InputError, match=r"\(2 of 3 query files of run 'r' are empty;"):
        shrec_score.score([run], gt, split="test")


def test_split_is_required_with_several_and_must_exist(tmp_path):
    gt = tmp_path / "gt.csv"
    gt.write_text(GT)
    _write_run(tmp_path / "runs" / "r", {"000001": ["000001"]})
    with pytest.raises(InputError, match=r"expected --split .*the splits test, train"):
        shrec_score.score([tmp_path / "runs" / "r"], gt)
    with pytest.raises(InputError, match=r"expected --split to name a split .*got 'val'"):
        shrec_score.score([tmp_path / "runs" / "r"], gt, split="val")


@pytest.mark.parametrize(
    "text, line, expected",
    [
        ("id,synsetId,subSynsetId,modelId\n", 1, "expected the header id,synsetId,subSynsetId,modelId,split"),
        ("id,synsetId,subSynsetId,modelId,split\n1,A,A,m,test\n2,A,A,m\n", 3, "expected 5 fields"),
        ("id,synsetId,subSynsetId,modelId,split\n1,A,A,m,test\n\n1,B,B,m,test\n", 4, "expected each id once; '1' is already listed at line 2"),
        ("id,synsetId,subSynsetId,modelId,split\n1,A,,m,test\n", 2, "subSynsetId is empty"),
    ],
)
def test_bad_ground_truth_lines_name_the_file_and_line(tmp_path, text, line, expected):
    gt = tmp_path / "gt.csv"
    gt.write_text(text)
    with pytest.raises(InputError) as err:
        read_shapenet_truth(gt)
    assert err.value.line == line and expected in str(err.value)
    _write_run(tmp_path / "runs" / "r", {"1": ["1"]})
    result = CliRunner().invoke(cli, ["score", str(tmp_path / "runs"), "-r", str(gt), "--split", "test"])
    assert result.exit_code == 2  # a first line starting with "id," is read as a ShapeNet ground truth
    last = result.stderr.strip().splitlines()[-1]
    assert f"{gt}:{line}: " in last and expected in last
    assert "Traceback" not in result.output


def test_compressed_ground_truth_reads_as_the_plain_file(tmp_path):
    import gzip

    (tmp_path / "gt.csv.gz").write_bytes(gzip.compress(GT.encode()))
    (tmp_path / "gt.csv").write_text(GT)
    assert read_shapenet_truth(tmp_path / "gt.csv.gz")[0] == read_shapenet_truth(tmp_path / "gt.csv")[0] == ["000001", "000002", "000003", "000004"]


# -- the preset -------------------------------------------------------------------


def _read_sample():
    folder = os.path.join(SAMPLES, "shapenet-like")
    synset, subsynset, test = {}, {}, []
    with open(os.path.join(folder, "ground_truth.csv"), newline="") as fh:
        for row in csv.DictReader(fh):
            if row["split"] == "test":
                synset[row["id"]] = row["synsetId"]
                subsynset[row["id"]] = row["subSynsetId"]
                test.append(row["id"])
    runs = {}
    for name in sorted(os.listdir(os.path.join(folder, "runs"))):
        runs[name] = {}
        for q in test:
            with open(os.path.join(folder, "runs", name, q)) as fh:
                runs[name][q] = [line.split()[0] for line in fh if line.strip()]
    return Reference(synset, subsynset), runs


@pytest.mark.parametrize("average", ["micro", "macro"])
def test_the_preset_scores_the_sample_as_the_reference(tmp_path, monkeypatch, average):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["--config", "configs/shrec2017-shapenet.yaml", "--average", average, "--out", str(out), "--format", "csv"])
    assert result.exit_code == 0, result.output
    ref, runs = _read_sample()
    per_run = pd.read_csv(out / "per_run.csv").set_index("run")
    assert list(per_run.columns) == ["queries", *OFFICIAL]
    board = pd.read_csv(io.StringIO(result.stdout))
    assert board["shapenet.mAP"].tolist() == sorted(board["shapenet.mAP"], reverse=True)
    assert len(runs) == 3
    for name, lists in runs.items():
        rows = dict(ref.summary(lists))
        want = rows["microALL" if average == "micro" else "macroALL"]
        assert per_run.loc[name, OFFICIAL].tolist() == pytest.approx([want[o] for o in OFFICIAL], abs=1e-12)
        summary = pd.read_csv(out / f"shapenet_summary_{name}.csv", dtype={"class": str})
        assert summary["class"].tolist() == list(rows)
        assert summary[OFFICIAL].to_numpy() == pytest.approx(np.array([[v[o] for o in OFFICIAL] for v in rows.values()]), abs=1e-12)


def test_ids_of_another_split_are_refused_or_dropped_and_counted(tmp_path):
    gt = tmp_path / "gt.csv"
    gt.write_text(GT)
    # 000004 is a train model: the official evaluator skips it silently
    _write_run(tmp_path / "runs" / "r", {"000001": ["000001", "000004", "000002"], "000002": ["000002"], "000003": ["000003"]})
    strict = CliRunner().invoke(cli, ["score", str(tmp_path / "runs"), "-r", str(gt), "--split", "test"])
    assert strict.exit_code == 2 and "000001:2: " in strict.stderr and "'000004'" in strict.stderr
    check = CliRunner().invoke(cli, ["check", str(tmp_path / "runs"), "-r", str(gt), "--split", "test"])
    assert check.exit_code == 2 and "000001:2: error: unknown target id '000004'" in check.stdout
    report = shrec_score.score([tmp_path / "runs" / "r"], gt, split="test", lenient=True)
    q1 = report.per_query.set_index("query").loc["000001"]
    assert q1["shapenet.P@N"] == 2 / 2 and q1["shapenet.mAP"] == 1.0  # as if 000004 were not listed
    assert any("1 unknown target ids dropped" in w for w in report.warnings)


def test_a_distance_matrix_keeps_the_own_column_and_scores_as_its_lists(tmp_path):
    gt = tmp_path / "gt.csv"
    gt.write_text(GT)
    ids = ["000001", "000002", "000003"]
    d = np.array([[0.0, 1.0, 1.0], [2.0, 0.5, 0.1], [1.0, 3.0, 0.0]])  # a tie in row 1: the lower column first
    np.save(tmp_path / "mx.npy", d)
    ranked = {q: [ids[j] for j in np.argsort(d[i], kind="stable")] for i, q in enumerate(ids)}
    assert ranked["000001"] == ["000001", "000002", "000003"] and ranked["000002"] == ["000003", "000002", "000001"]
    ref = Reference({"000001": "A", "000002": "A", "000003": "B"}, {"000001": "A1", "000002": "A", "000003": "B"})
    report = shrec_score.score([tmp_path / "mx.npy"], gt, split="test")
    got = report.per_query.set_index("query")
    for q in ids:
        assert got.loc[q, NAMES].tolist() == pytest.approx([ref.measures(q, ranked[q])[o] for o in OFFICIAL], abs=1e-12)


def test_missing_queries_skip_averages_over_the_files_present_as_the_official_tool(tmp_path, monkeypatch):
    import shutil

    ref, runs = _read_sample()
    src = os.path.join(SAMPLES, "shapenet-like")
    shutil.copy(os.path.join(src, "ground_truth.csv"), tmp_path / "gt.csv")
    shutil.copytree(os.path.join(src, "runs", "ShapeDNA"), tmp_path / "runs" / "ShapeDNA")
    lists = dict(runs["ShapeDNA"])
    gone = [q for i, q in enumerate(list(lists)) if i % 3 == 0]
    for q in gone:
        os.remove(tmp_path / "runs" / "ShapeDNA" / q)
        del lists[q]
    strict = CliRunner().invoke(cli, ["score", str(tmp_path / "runs"), "-r", str(tmp_path / "gt.csv"), "--split", "test"])
    assert strict.exit_code == 2 and f"first missing: '{gone[0]}'" in strict.stderr
    for average, row in (("micro", "microALL"), ("macro", "macroALL")):
        report = shrec_score.score([tmp_path / "runs" / "ShapeDNA"], tmp_path / "gt.csv", split="test", average=average, settings=shrec_score.measures.Settings(missing="skip"))
        want = dict(ref.summary(lists))[row]
        assert report.per_run[NAMES].iloc[0].tolist() == pytest.approx([want[o] for o in OFFICIAL], abs=1e-12)
        assert report.per_run["queries"].iloc[0] == len(lists)


def test_the_official_names_also_head_the_confidence_interval_columns(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(cli, ["--config", "configs/shrec2017-shapenet.yaml", "--significance", "--resamples", "200", "--out", str(tmp_path / "o"), "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert list(pd.read_csv(tmp_path / "o" / "per_run.csv").columns) == ["run", "queries", *OFFICIAL, "mAP_ci_low", "mAP_ci_high"]
    assert "shapenet.mAP_ci_low" in result.stdout.splitlines()[0]  # the command line's names on stdout
