"""Organiser's report: significance, per-class results, macro averaging,
paper tables, trec_eval-style output, the signature and the plots."""

import json
import os
import sys

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import shrec_score
from shrec_score.cli import cli
from shrec_score.significance import bootstrap_ci, holm, pairwise, randomization_test

from .conftest import ROOT

scipy_stats = pytest.importorskip("scipy.stats", reason="scipy is a test extra")

CLA = "PSB 1\n2 6\na 0 3\nq1\nq2\nq3\nb 0 3\nq4\nq5\nq6\n"


def test_identical_runs_give_p_one():
    a = np.random.default_rng(0).random(30)
    assert randomization_test(a, a.copy()) == 1.0
    assert randomization_test(a[:10], a[:10].copy()) == 1.0


def test_a_run_better_on_every_one_of_30_queries_is_significant():
    rng = np.random.default_rng(1)
    b = rng.random(30) * 0.5
    a = b + 0.01 + rng.random(30) * 0.1
    p = randomization_test(a, b, n_resamples=10_000, seed=3)
    assert p < 0.05
    assert p == 1 / 10_001  # no random sign pattern reaches the observed mean: (0 + 1) / (R + 1)
    assert randomization_test(a, b, seed=3) == p  # seeded: reproducible


@pytest.mark.parametrize("seed", range(4))
def test_agrees_with_scipy_permutation_test_exactly_on_small_cases(seed):
    rng = np.random.default_rng(seed)
    a = rng.random(9).round(2)
    b = (a + rng.normal(0.05, 0.1, 9)).round(2)
    ref = scipy_stats.permutation_test(
        (a, b), lambda x, y, axis: np.mean(x - y, axis=axis), permutation_type="samples", alternative="two-sided", n_resamples=np.inf
    ).pvalue
    assert randomization_test(a, b) == pytest.approx(ref, abs=1e-12)


def test_holm_by_hand():
    # m = 4: sorted p 0.01, 0.02, 0.03, 0.5 -> 4*0.01, 3*0.02, max(.., 2*0.03), max(.., 1*0.5)
    got = holm(np.array([0.03, 0.5, 0.01, 0.02]))
    assert got.tolist() == pytest.approx([0.06, 0.5, 0.04, 0.06])


def test_bootstrap_interval_is_seeded_and_contains_the_mean():
    v = np.random.default_rng(5).random(40)
    lo, hi = bootstrap_ci(v, seed=7)
    assert lo < v.mean() < hi and (lo, hi) == bootstrap_ci(v, seed=7)
    assert bootstrap_ci(np.full(10, 0.3)) == pytest.approx((0.3, 0.3))


def test_pairwise_table_counts_wins_ties_losses():
    pq = pd.DataFrame({"run": ["A"] * 4 + ["B"] * 4, "query": list("wxyz") * 2, "AP": [0.9, 0.5, 0.4, 0.1, 0.8, 0.5, 0.6, 0.0]})
    t = pairwise(pq, "AP", ["A", "B"])
    row = t.iloc[0]
    assert (row["run_a"], row["run_b"], row["wins"], row["ties"], row["losses"]) == ("A", "B", 2, 1, 1)
    assert row["mean_diff"] == pytest.approx((0.1 + 0 - 0.2 + 0.1) / 4)
    assert row["p_adjusted"] == row["p_value"]  # one comparison


@pytest.fixture
def two_runs(tmp_path):
    (tmp_path / "c.cla").write_text(CLA)
    lists = {
        "good": {"q1": "q2 q3 q4", "q2": "q1 q3 q4", "q3": "q4 q1 q2", "q4": "q5 q6 q1", "q5": "q4 q6 q1", "q6": "q4 q5 q1"},
        "bad": {"q1": "q4 q5 q2", "q2": "q4 q1 q3", "q3": "q1 q2 q4", "q4": "q1 q2 q5", "q5": "q1 q4 q6", "q6": "q1 q2 q3"},
    }
    for run, qs in lists.items():
        d = tmp_path / "runs" / run
        d.mkdir(parents=True)
        for q, ranked in qs.items():
            (d / f"{q}.txt").write_text("\n".join(ranked.split()) + "\n")
    return tmp_path


def test_per_class_and_macro_average_by_hand(two_runs):
    # NN of 'good': q1..q6 = 1 1 0 1 1 1; classes a = q1..q3, b = q4..q6
    # make class a smaller in scored queries: drop nothing; macro = (2/3 + 1) / 2, micro = 5/6
    micro = shrec_score.score([two_runs / "runs"], two_runs / "c.cla", measures=["NN"])
    macro = shrec_score.score([two_runs / "runs"], two_runs / "c.cla", measures=["NN"], average="macro")
    pc = micro.per_class.set_index(["run", "class"])
    assert pc.loc[("good", "a"), "NN"] == pytest.approx(2 / 3) and pc.loc[("good", "b"), "NN"] == 1.0
    assert pc.loc[("good", "a"), "queries"] == 3
    assert micro.leaderboard.set_index("run").loc["good", "NN"] == pytest.approx(5 / 6)
    assert macro.leaderboard.set_index("run").loc["good", "NN"] == pytest.approx((2 / 3 + 1) / 2)
    assert "macro" in macro.signature["averaging"]


def test_formats_markdown_latex_trec_and_signature_file(two_runs):
    args = [str(two_runs / "runs"), "-r", str(two_runs / "c.cla"), "-m", "NN,AP"]
    md = CliRunner().invoke(cli, [*args, "--format", "markdown"]).stdout.splitlines()
    assert md[0] == "| rank | run | queries | NN | mAP |"
    assert md[2].startswith("| 1 | good | 6 | **0.8333** | **") and "**" not in md[3]
    assert md[-1].startswith("<sub>shrec-score ")
    tex = CliRunner().invoke(cli, [*args, "--format", "latex"]).stdout
    assert "\\textbf{0.8333}" in tex and tex.startswith("% shrec-score ") and "\\toprule" in tex
    trec = CliRunner().invoke(cli, [*args, "--format", "trec", "--per-query"]).stdout.splitlines()
    assert trec[0].split("\t") == ["runid                 ", "all", "good"]
    # NN and AP leave a query without relevant items out where trec_eval counts 0:
    # not trec_eval's P_1 and map, so printed under their own names (issue 31.1)
    assert "NN                    \tq1\t1.0000" in trec and not any(ln.startswith(("P_1", "map")) for ln in trec)
    assert "num_q                 \tall\t6" in trec
    ap_all = [ln for ln in trec if ln.startswith("AP ") and "\tall\t" in ln]
    assert len(ap_all) == 2
    out = two_runs / "out"
    r = CliRunner().invoke(cli, [*args, "--out", str(out), "--significance", "--seed", "4", "--resamples", "500"])
    assert r.exit_code == 0, r.output
    sig = (out / "signature.txt").read_text().splitlines()
    assert sig[0] == f"version: {shrec_score.__version__}"
    assert any(s.startswith("significance: paired randomization test on NN, Holm-corrected, 500 resamples, seed 4") for s in sig)
    table = pd.read_csv(out / "significance.csv")
    assert table.columns.tolist() == ["run_a", "run_b", "queries", "mean_diff", "wins", "ties", "losses", "p_value", "p_adjusted", "significant"]
    board = pd.read_csv(out / "per_run.csv")
    assert {"NN_ci_low", "NN_ci_high"} <= set(board.columns)
    assert (out / "leaderboard.md").read_text().startswith("| rank | run |")
    assert (out / "leaderboard.tex").read_text().startswith("% shrec-score ")


def test_plots_png_and_svg(two_runs, tmp_path):
    pytest.importorskip("matplotlib", reason="plots extra")
    r = CliRunner().invoke(cli, [str(two_runs / "runs"), "-r", str(two_runs / "c.cla"), "--plots", str(tmp_path / "fig")])
    assert r.exit_code == 0, r.output
    names = sorted(os.listdir(tmp_path / "fig"))
    # the four figures and the manifest that lists them (see shrec_score.outdir)
    assert names == [".shrec-score-manifest.json", "per_class_NN.png", "per_class_NN.svg", "pr_curves.png", "pr_curves.svg"]
    assert json.loads((tmp_path / "fig" / ".shrec-score-manifest.json").read_text())["files"] == names[1:]
    assert (tmp_path / "fig" / "pr_curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_graded_plots(monkeypatch, tmp_path):
    pytest.importorskip("matplotlib", reason="plots extra")
    monkeypatch.chdir(ROOT)
    r = CliRunner().invoke(cli, ["--config", "configs/shrec2006.yaml", "--plots", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert {"ndcg_vs_rank.png", "cg_vs_recall.svg", "per_class_ADR.png"} <= set(os.listdir(tmp_path))


def test_twenty_runs_get_twenty_distinct_styles():
    pytest.importorskip("matplotlib", reason="plots extra")
    from shrec_score.plots import styles

    st = styles(24)
    keys = {(s["color"], s["linestyle"], s["marker"]) for s in st}
    assert len(keys) == 24
    assert len({(s["linestyle"], s["marker"]) for s in st[:20]}) == 20  # apart in greyscale too


def test_plots_without_matplotlib_exit_2_with_the_install_command(two_runs, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    r = CliRunner().invoke(cli, [str(two_runs / "runs"), "-r", str(two_runs / "c.cla"), "--plots", str(tmp_path / "fig"), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2
    assert r.output.strip() == "Error: --plots needs matplotlib; install it with: pip install 'shrec-score[plots]' (or: pip install matplotlib)"
    assert not (tmp_path / "o").exists()


def test_progress_bar_stays_off_without_a_terminal():
    from shrec_score.cli.outputs import ProgressBar as _ProgressBar

    bar = _ProgressBar(enabled=False)
    bar.started -= 100
    bar("scoring", 1, 10)
    assert bar.bar is None
    on = _ProgressBar(enabled=True)
    on("scoring", 1, 10)  # within the first second: nothing shown yet
    assert on.bar is None


@pytest.mark.parametrize(("measure", "average"), [("gm_map", "micro"), ("num_rel_ret", "micro"), ("AP", "macro"), ("gm_map", "macro"), ("num_rel_ret", "macro")])
def test_the_bootstrap_interval_holds_the_runs_value_whatever_its_aggregate(measure, average):
    """The interval was the bootstrap of the plain mean of the per-query column, whatever the run's value
    is: for gm_map (per query a log) it was negative around 0.92, for num_rel_ret (a sum) [7.0, 8.2]
    around 306, under --average macro the micro interval.  It is now the measure's own aggregate (per
    class under macro), so it holds the value; the macro values of a sum and of a geometric mean are the
    sum of the class sums and the geometric mean of the class values, computed here from per_query."""
    samples = os.path.join(ROOT, "sample_runs", "psb-like")
    report = shrec_score.score([os.path.join(samples, "runs")], os.path.join(samples, "classes.cla"), measures=[measure],
                               sort=measure, average=average, significance=True, n_resamples=2000)
    board = report.leaderboard
    assert len(board) >= 2
    for _, row in board.iterrows():
        assert row[f"{measure}_ci_low"] <= row[measure] <= row[f"{measure}_ci_high"], row.to_dict()
        values = report.per_query[report.per_query["run"] == row["run"]]
        if average == "micro":
            continue
        per_class = values.groupby("class", sort=False)[measure]
        expected = {"AP": per_class.mean().mean(), "num_rel_ret": per_class.sum().sum(), "gm_map": np.exp(per_class.mean().mean())}[measure]
        assert row[measure] == pytest.approx(expected, rel=1e-12)
    v = np.array([0.2, 0.5, 0.9, 0.4, 0.7])
    assert bootstrap_ci(v, how="sum", seed=3) == pytest.approx(tuple(5 * x for x in bootstrap_ci(v, seed=3)), rel=1e-12)
    assert bootstrap_ci(np.log(v), how="geometric", seed=3) == pytest.approx(tuple(np.exp(bootstrap_ci(np.log(v), seed=3))), rel=1e-12)
