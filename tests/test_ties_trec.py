"""Tie-aware scoring of TREC runs with graded qrels (issue 19): every measure
exact under ``ties="expected"`` (binary, SHREC 2006 graded, trec_eval's)
equals the mean over every distinct arrangement of the judged grades
(unjudged apart) inside each group of equal scores; ``optimistic`` /
``pessimistic`` equal the best / worst arrangement.  Read by the streaming
reader and by the whole-file reader; refused measures are refused.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import shrec_score
from shrec_score.errors import OptionError
from shrec_score.measures import GainBlock, RankBlock, Settings, get_measure
from shrec_score.measures.treceval import JudgedBlock
from tests.test_ties import arrangements

GRADED = [f"{m}_{lv}" for m in ("TP", "FP", "FN", "FT", "ST", "P", "R", "AP") for lv in ("highly", "relevant")] + [
    "ADR", "CG@3", "DCG@3", "NCG@4", "NDCG@4", "NDCG@6",
]
JUDGED = ["ndcg", "ndcg_cut.3", "ndcg_cut.5", "map_cut.2", "map_cut.5", "success.1", "success.3", "num_ret", "num_rel", "num_rel_ret", "set_F"]
BINARY = ["AP", "RR", "NN", "FT", "P@2", "P@5", "R@3", "DCG", "ST", "E"]
ALL = GRADED + JUDGED + BINARY


def make_topics(seed: int) -> tuple[dict[str, list[tuple[str, float, int]]], dict[str, dict[str, int]]]:
    """Topics: ranked docs (id, score, label: -1 unjudged, else the grade) and the qrels."""
    rng = np.random.default_rng(seed)
    run: dict[str, list[tuple[str, float, int]]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for t in range(6):
        q = f"T{t}"
        n = int(rng.integers(6, 11))
        scores = rng.integers(0, [1, 2, 3, 4, 3, 6][t], n) / 4  # exact in binary: equal parsed doubles
        labels = rng.choice([-1, 0, 0, 1, 2], n)
        if not (labels >= 1).any():
            labels[0] = 1
        docs = [f"d{t}_{i:02d}" for i in range(n)]
        run[q] = list(zip(docs, scores.tolist(), labels.tolist()))
        qrels[q] = {d: int(g) for d, g in zip(docs, labels) if g >= 0}
        qrels[q].update({f"x{t}_{i}": int(rng.integers(0, 3)) for i in range(int(rng.integers(0, 3)))})  # judged, not retrieved
    return run, qrels


def write(tmp_path: object, run: dict, qrels: dict) -> tuple[str, str]:
    import os

    folder = os.path.join(str(tmp_path), "runs")
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(0)
    lines = [f"{q} Q0 {d} 0 {s!r} tag" for q, docs in run.items() for d, s, _ in docs]
    rng.shuffle(lines)  # any line order: the reader ranks
    with open(os.path.join(folder, "r.run"), "w") as f:
        f.write("\n".join(sorted(lines, key=lambda x: x.split()[0])) + "\n")
    qpath = os.path.join(str(tmp_path), "q.qrels")
    with open(qpath, "w") as f:
        f.write("".join(f"{q} 0 {d} {g}\n" for q, js in qrels.items() for d, g in js.items()))
    return folder, qpath


def brute(docs: list[tuple[str, float, int]], judged: dict[str, int], settings: Settings) -> dict[str, np.ndarray]:
    """Every measure on every arrangement (rows), by the rule-mode formulas."""
    ranked = sorted(docs, key=lambda x: (-x[1], tuple(-b for b in x[0].encode())))  # trec_eval: score desc, id desc
    labels = [lab for _, _, lab in ranked]
    arr = arrangements(labels, [s for _, s, _ in ranked])
    gains = np.maximum(arr, 0)
    n_arr, n = arr.shape
    grades = np.array(list(judged.values()))
    counts = np.bincount(grades, minlength=3)
    gb = GainBlock(gains.astype(np.int8), np.full(n_arr, n), np.full(n_arr, counts[2]), np.full(n_arr, counts[1:].sum()), -1, 2)
    jb = JudgedBlock(arr.astype(np.int16), np.full(n_arr, n), np.tile(counts, (n_arr, 1)), settings.rel_level)
    k = int(counts[settings.rel_level :].sum())
    ranks = np.full((n_arr, max(1, k)), np.inf)
    for i, a in enumerate(gains):
        pos = np.flatnonzero(a >= settings.rel_level) + 1
        ranks[i, : pos.size] = pos
    rb = RankBlock(ranks, np.full(n_arr, k), np.full(n_arr, n))
    out = {}
    for name in ALL:
        m = get_measure(name)
        out[name] = m.compute({"graded": gb, "judged": jb, "binary": rb}[m.kind], settings)
    return out


def scored(folder: str, qpath: str, mode: str, **kw: object) -> pd.DataFrame:
    report = shrec_score.score([folder], qpath, measures=ALL, ties=mode, **kw)
    return report.per_query.set_index("query")


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("reader", ["strict", "lenient"])
def test_every_exact_measure_matches_brute_force(tmp_path: object, seed: int, reader: str) -> None:
    run, qrels = make_topics(seed)
    folder, qpath = write(tmp_path, run, qrels)
    kw = {"lenient": True} if reader == "lenient" else {}  # lenient: repeats dropped instead of refused
    got = {mode: scored(folder, qpath, mode, **kw) for mode in ("expected", "optimistic", "pessimistic", "rule")}
    settings = Settings()
    spread = 0
    for q, docs in run.items():
        values = brute(docs, qrels[q], settings)
        for name in ALL:
            v = values[name]
            for mode, want in (("expected", np.mean), ("optimistic", np.max), ("pessimistic", np.min)):
                have = got[mode].loc[q, name]
                if np.isnan(v).all() or (get_measure(name).kind == "binary" and (v == 0).all() and np.isnan(have)):
                    assert np.isnan(have) or have == 0, (name, q, mode)
                    continue
                assert have == pytest.approx(want(v), abs=1e-12), (name, q, mode)
        spread += int(values["AP"].max() > values["AP"].min())
    assert spread >= 3  # the ties matter on several topics


def test_refused_measures_under_expected(tmp_path: object) -> None:
    run, qrels = make_topics(0)
    folder, qpath = write(tmp_path, run, qrels)
    for name in ("bpref", "gm_map", "iprec_at_recall_0.50"):
        with pytest.raises(OptionError, match=rf"ties: {name} has no exact expected value"):
            shrec_score.score([folder], qpath, measures=["AP", name], ties="expected")
        shrec_score.score([folder], qpath, measures=["AP", name], ties="optimistic")  # the bounds are fine
    with pytest.raises(OptionError, match="ties: expected with depth"):
        shrec_score.score([folder], qpath, measures=["AP"], ties="expected", settings=Settings(depth=3))


def test_rule_mode_is_unchanged_and_signature_names_the_mode(tmp_path: object) -> None:
    run, qrels = make_topics(1)
    folder, qpath = write(tmp_path, run, qrels)
    default = shrec_score.score([folder], qpath, measures=ALL)
    rule = shrec_score.score([folder], qpath, measures=ALL, ties="rule")
    pd.testing.assert_frame_equal(default.per_query, rule.per_query)
    assert default.signature["ties"] == rule.signature["ties"]
    assert default.signature["ties"].startswith("lists: file order")
    exp = shrec_score.score([folder], qpath, measures=ALL, ties="expected")
    assert exp.signature["ties"].startswith("expected: exact mean")


def test_measure_table_marks_the_refused_measures() -> None:
    from shrec_score.measures import measure_table

    refused = {row.name for row in measure_table() if not row.ties_exact}
    shapenet = {"shapenet.P@N", "shapenet.R@N", "shapenet.F1@N", "shapenet.mAP", "shapenet.NDCG"}  # cut at 1000: not written
    ir_measures = {"P(rel=r)@k", *(f"IPrec@{x / 10:.1f}" for x in range(11))}  # measures/measure.py: no exact method written
    assert refused == {"bpref", "gm_map", *(f"iprec_at_recall_{x / 10:.2f}" for x in range(11)), *shapenet, *ir_measures}


def test_option_validation_and_cli(tmp_path: object) -> None:
    from click.testing import CliRunner

    from shrec_score.cli import cli
    from shrec_score.options import Options

    with pytest.raises(OptionError, match="ties: expected one of rule, expected, optimistic, pessimistic, got 'Expected'"):
        Options.build(ties="Expected")
    assert Options.build(ties="pessimistic").settings.ties == "pessimistic"
    assert Options.build().settings.ties == "rule"
    run, qrels = make_topics(2)
    folder, qpath = write(tmp_path, run, qrels)
    bad = CliRunner().invoke(cli, [folder, "-r", qpath, "-m", "AP,bpref", "--ties", "expected", "--format", "csv"])
    assert bad.exit_code == 2 and "ties: bpref has no exact expected value" in bad.output and "Traceback" not in bad.output
    import os

    cfg = os.path.join(str(tmp_path), "c.yaml")
    with open(cfg, "w") as f:
        f.write(f"relevance: {qpath}\nruns: [{folder}]\nmeasures: [AP, P@2]\nties: optimistic\n")
    via_yaml = CliRunner().invoke(cli, ["-c", cfg, "--format", "csv"])
    direct = shrec_score.score([folder], qpath, measures=["AP", "P@2"], ties="optimistic")
    assert via_yaml.exit_code == 0, via_yaml.output
    assert f"{float(direct.leaderboard['AP'].iloc[0])!r}" in via_yaml.output


def test_tie_report_on_a_trec_run_equals_the_scorings(tmp_path: object) -> None:
    """``shrec-score ties`` (CSV) on a TREC run: each column is the mean of a
    scoring in that mode, and the share of tie-dependent topics is counted by hand."""
    import io

    from click.testing import CliRunner

    from shrec_score.cli import cli

    run, qrels = make_topics(0)
    folder, qpath = write(tmp_path, run, qrels)
    out = CliRunner().invoke(cli, ["ties", folder, "-r", qpath, "-m", "AP,P@2", "--format", "csv"])
    assert out.exit_code == 0, out.output
    frame = pd.read_csv(io.StringIO(out.output)).set_index("measure")
    for mode in ("pessimistic", "rule", "optimistic", "expected"):
        board = shrec_score.score([folder], qpath, measures=["AP", "P@2"], ties=mode).leaderboard.iloc[0]
        for m in ("AP", "P@2"):
            assert frame.loc[m, mode] == pytest.approx(float(board[m]), abs=1e-15)
    # by hand: a topic depends on the ties when its best and worst arrangements differ
    settings = Settings()
    dep = [brute(docs, qrels[q], settings)["AP"] for q, docs in run.items()]
    assert frame.loc["AP", "tied_queries"] == pytest.approx(np.mean([v.max() > v.min() for v in dep]))


def test_judged_only_keeps_the_tie_groups_of_the_judged(tmp_path: object) -> None:
    """--judged-only (trec_eval -J) leaves the unjudged out and the tie groups
    shrink: the same as scoring the judged lines alone, arrangement by arrangement."""
    run, qrels = make_topics(4)
    folder, qpath = write(tmp_path, run, qrels)
    names = ["AP", "RR", "P@2", "ndcg_cut.3", "NDCG@4", "AP_highly"]
    got = {
        mode: shrec_score.score([folder], qpath, measures=names, ties=mode, settings=Settings(judged_only=True)).per_query.set_index("query")
        for mode in ("expected", "optimistic", "pessimistic")
    }
    for q, docs in run.items():
        judged = [x for x in docs if x[2] >= 0]
        values = brute(judged, qrels[q], Settings())
        for name in names:
            v = values[name]
            for mode, want in (("expected", np.mean), ("optimistic", np.max), ("pessimistic", np.min)):
                have = got[mode].loc[q, name]
                if np.isnan(v).all():
                    assert np.isnan(have)
                else:
                    assert have == pytest.approx(want(v), abs=1e-12), (name, q, mode)
