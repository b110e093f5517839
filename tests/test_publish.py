"""What an organiser publishes (issue 31.14-17): a preset that holds the whole
publishing command, the LaTeX table, and the notes under the tables.

Everything is driven through the CLI, as an organiser runs it; the numbers
in the LaTeX tables are checked against the CSV files the same scoring
writes (read back with the csv module).
"""

from __future__ import annotations

import csv
import os

import pytest
from click.testing import CliRunner

from shrec_score.cli import cli

from .conftest import SAMPLES

EPOCH = "1795392000"  # 2026-11-23


def run(*args: object, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, [str(a) for a in args], env={"SOURCE_DATE_EPOCH": EPOCH, **(env or {})})


def read_csv(path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def preset(tmp_path, extra: str = "") -> str:
    """The SHREC 2006 sample as a preset in ``tmp_path`` with the publishing keys of ``extra``."""
    p = tmp_path / "track.yaml"
    p.write_text(
        f"relevance: {os.path.join(SAMPLES, 'psb-like', 'classes.cla')}\n"
        f"queries: {os.path.join(SAMPLES, 'shrec2006-like', 'queries.cla')}\n"
        f"runs: [{os.path.join(SAMPLES, 'shrec2006-like', 'runs')}]\n"
        "grades: sister\nrun_format: lists\nsort: ADR\n" + extra,
        encoding="utf-8",
    )
    return str(p)


PUBLISH = """out: published
plots: true
html: true
significance: true
title: "SHREC 2006 <results>"
description: |
  Thirty queries & the PSB.

  Second paragraph.
"""


# -- 14. a preset holds the whole publishing command -------------------------------------------------


def test_a_preset_holds_the_whole_publishing_command(tmp_path):
    pytest.importorskip("matplotlib", reason="plots extra: plots: true draws the figures")
    p = preset(tmp_path, PUBLISH)
    r = run("--config", p, "--resamples", "200", "--format", "csv", "--quiet")
    assert r.exit_code == 0, r.output
    out = tmp_path / "published"  # relative to the preset, like every path there
    assert (out / "per_run.csv").is_file() and (out / "significance.csv").is_file()
    assert (out / "plots" / "pr_curves.svg").is_file() and (out / "plots" / "pr_curves.png").is_file()
    page = (out / "report" / "index.html").read_text(encoding="utf-8")
    assert "<h1>SHREC 2006 &lt;results&gt;</h1>" in page
    assert '<p>Thirty queries &amp; the PSB.</p>' in page and "<p>Second paragraph.</p>" in page
    # significance: the per-run intervals are in the CSV printed on stdout
    assert "ADR_ci_low" in r.stdout.splitlines()[0]


def test_the_command_line_beats_the_preset_negatives_included(tmp_path):
    p = preset(tmp_path, PUBLISH)
    other = tmp_path / "elsewhere"
    r = run("--config", p, "--out", other, "--no-plots", "--no-significance", "--html", "--title", "Mine", "--format", "csv", "--quiet")
    assert r.exit_code == 0, r.output
    assert not (tmp_path / "published").exists()
    assert (other / "per_run.csv").is_file()
    assert not (other / "plots").exists() and not (other / "significance.csv").exists()
    assert "ADR_ci_low" not in r.stdout.splitlines()[0]
    page = (other / "report" / "index.html").read_text(encoding="utf-8")
    assert "<h1>Mine</h1>" in page and "Second paragraph." in page  # the preset's description stays
    r = run("--config", p, "--out", other, "--no-plots", "--html", "--description", "Ours & <theirs>.\n\nSecond.", "--format", "csv", "--quiet")
    assert r.exit_code == 0, r.output
    page = (other / "report" / "index.html").read_text(encoding="utf-8")
    assert '<div class="description"><p>Ours &amp; &lt;theirs&gt;.</p><p>Second.</p></div>' in page
    assert "<h1>SHREC 2006 &lt;results&gt;</h1>" in page and "Thirty queries" not in page
    r = run("--config", p, "--no-out", "--no-html", "--no-plots", "--format", "csv", "--quiet", "--resamples", "100")
    assert r.exit_code == 0, r.output
    assert not (tmp_path / "published").exists()
    assert "ADR_ci_low" in r.stdout.splitlines()[0]  # significance: true from the preset


@pytest.mark.parametrize("flag", ["out", "html", "plots"])
def test_a_folder_and_its_negative_together_are_refused(tmp_path, flag):
    p = preset(tmp_path)
    r = run("--config", p, f"--{flag}", tmp_path / "x", f"--no-{flag}", "--out", tmp_path / "o") if flag != "out" else run(
        "--config", p, "--out", tmp_path / "x", "--no-out"
    )
    assert r.exit_code == 2
    assert r.output.strip().splitlines()[-1] == f"Error: --{flag} and --no-{flag}: expected one of them, got both"
    assert not (tmp_path / "x").exists()


def test_significance_and_no_significance_together_are_refused(tmp_path):
    r = run("--config", preset(tmp_path), "--significance", "--no-significance")
    assert r.exit_code == 2
    assert "Error: --significance/--no-significance: expected once, got 2 times" in r.output


@pytest.mark.parametrize(
    "extra, message",
    [
        ("significance: yes please\n", "track.yaml:7: expected 'significance' to be true or false, got 'yes please'"),
        ("title: [a, b]\n", "track.yaml:7: expected 'title' to be a text of one line, got '[\\'a\\', \\'b\\']'"),
        ("title: \"two\\nlines\"\n", "track.yaml:7: expected 'title' to be a text of one line, got 'two\\nlines'"),
        ("plots: 3\n", "track.yaml:7: expected 'plots' to be a folder path, or true for --out DIR/plots/ (false: none), got '3'"),
        ("out: true\n", "track.yaml:7: expected 'out' to be a folder path, got 'True'"),
        ("html: 12\n", "track.yaml:7: expected 'html' to be a folder path, or true for --out DIR/report/ (false: none), got '12'"),
        ("description: 5\n", "track.yaml:7: expected 'description' to be a text, got '5'"),
        ("titel: x\n", "track.yaml:7: unknown key 'titel'; expected one of: description, "),
    ],
)
def test_bad_publishing_keys_are_one_line_errors(tmp_path, extra, message):
    r = run("--config", preset(tmp_path, extra))
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], r.output


def test_html_true_without_out_says_what_it_needs(tmp_path):
    r = run("--config", preset(tmp_path, "html: true\n"), "--format", "csv")
    assert r.exit_code == 2
    assert "--html without a folder writes under --out DIR/report/: expected --out DIR (or --html DIR)" in r.output
    r = run("--config", preset(tmp_path, "plots: true\n"), "--format", "csv")
    assert r.exit_code == 2
    assert "--plots without a folder writes under --out DIR/plots/: expected --out DIR (or --plots DIR)" in r.output


# -- 16. LaTeX: complete tables, numbers from the CSV the same scoring writes ---------------------------


@pytest.fixture(scope="module")
def latex_scoring(tmp_path_factory):
    """The SHREC 2006 sample with --significance and --out; ADR (the sort), NDCG@100 (blank for B2 and D1), CG@100."""
    tmp = tmp_path_factory.mktemp("latex")
    out = tmp / "out"
    r = run("--config", preset(tmp), "-m", "ADR,NDCG@100,CG@100", "--rank-by", "ADR", "--significance", "--resamples", "500",
            "--out", out, "--format", "latex", "--quiet")
    assert r.exit_code == 0, r.output
    return out, r.stdout


def _cells(line: str) -> list[str]:
    assert line.endswith(" \\\\"), line
    return [c.strip() for c in line[: -len(" \\\\")].split(" & ")]


def test_latex_is_a_complete_table_with_ci_and_significance_marks(latex_scoring):
    out, stdout = latex_scoring
    tex = (out / "leaderboard.tex").read_text(encoding="utf-8")
    assert stdout == tex  # --format latex prints what leaderboard.tex holds
    lines = tex.splitlines()
    signature = (out / "signature.txt").read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("% shrec-score ") and "significance: paired randomization test on ADR" in lines[0]
    assert len(signature) > 3  # every setting, on one comment line
    assert lines[1] == "% needs \\usepackage{booktabs} (\\toprule, \\midrule, \\bottomrule)"
    first = lines[: lines.index("\\end{table}") + 1]
    assert first[2:4] == ["\\begin{table}[htbp]", "\\centering"]
    assert first[4].startswith("\\caption{Mean of each measure per run, best first by ADR") and first[4].endswith("}")
    assert "$^\\dagger$: significantly worse than the best run" in first[4]
    assert first[5] == "\\label{tab:leaderboard}"
    assert first[6:8] == ["\\begin{tabular}{rlrrrrr}", "\\toprule"]
    assert _cells(first[8]) == ["rank", "run", "queries", "ADR", "95\\% CI", "NDCG@100", "CG@100"]
    per_run = read_csv(out / "per_run.csv")
    sig = read_csv(out / "significance.csv")
    best = per_run[0]["run"]
    worse = {r["run_b"] if r["run_a"] == best else r["run_a"] for r in sig if best in (r["run_a"], r["run_b"]) and r["significant"] == "True"}
    assert worse  # the sample's best run beats at least one other significantly
    rows = first[10 : 10 + len(per_run)]
    assert first[10 + len(per_run) : 10 + len(per_run) + 2] == ["\\bottomrule", "\\end{tabular}"]

    def shown(value: str, column: str) -> str:
        if value == "":
            return ""
        best_value = max(float(p[column]) for p in per_run if p[column] != "")
        text = f"{float(value):.4f}"
        return f"\\textbf{{{text}}}" if text == f"{best_value:.4f}" else text

    for k, (row, rec) in enumerate(zip(rows, per_run), 1):
        adr = shown(rec["ADR"], "ADR") + ("$^\\dagger$" if rec["run"] in worse else "")
        ci = f"[{float(rec['ADR_ci_low']):.4f}, {float(rec['ADR_ci_high']):.4f}]"
        assert _cells(row) == [str(k), rec["run"], rec["queries"], adr, ci, shown(rec["NDCG@100"], "NDCG@100"), shown(rec["CG@100"], "CG@100")]


def test_latex_significance_matrix_is_a_second_table(latex_scoring):
    out, _ = latex_scoring
    lines = (out / "leaderboard.tex").read_text(encoding="utf-8").splitlines()
    second = lines[lines.index("\\end{table}") + 1 :]
    assert second[:3] == ["", "\\begin{table}[htbp]", "\\centering"]
    assert second[3].startswith("\\caption{Pairwise randomization tests on ADR: Holm-adjusted $p$-value")
    assert second[4] == "\\label{tab:significance}"
    runs = [p["run"] for p in read_csv(out / "per_run.csv")]
    assert second[5:7] == [f"\\begin{{tabular}}{{l{'r' * len(runs)}}}", "\\toprule"]
    assert _cells(second[7]) == ["", *runs] and second[8] == "\\midrule"
    expected: dict[tuple[str, str], str] = {}
    for rec in read_csv(out / "significance.csv"):
        p = f"{float(rec['p_adjusted']):.4f}"
        cell = f"\\textbf{{{p}}}" if rec["significant"] == "True" else p
        expected[(rec["run_a"], rec["run_b"])] = expected[(rec["run_b"], rec["run_a"])] = cell
    for a, row in zip(runs, second[9 : 9 + len(runs)]):
        assert _cells(row) == [a, *("--" if a == b else expected[(a, b)] for b in runs)]
    assert second[9 + len(runs) :] == ["\\bottomrule", "\\end{tabular}", "\\end{table}"]


def test_latex_without_significance_has_no_ci_marks_nor_matrix(tmp_path):
    r = run("--config", preset(tmp_path), "-m", "ADR,AP_highly", "--rank-by", "ADR", "--format", "latex", "--quiet")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines.count("\\begin{table}[htbp]") == 1 and lines[-1] == "\\end{table}"
    assert "dagger" not in r.stdout and "CI" not in r.stdout
    assert _cells(lines[8]) == ["rank", "run", "queries", "ADR", "AP\\_highly"]


# -- 17. blank cells explained under every table; the signature once ----------------------------------

BLANK = (
    "Blank cells: no query of the run has a value of the measure, so it has no mean. "
    "NDCG@100: B2, D1 (NDCG vector at rank k (SHREC 2006; empty when the list is shorter than k))."
)


def test_blank_cells_are_explained_under_each_table(tmp_path):
    outputs = {}
    for fmt in ("table", "markdown", "latex", "csv"):
        r = run("--config", preset(tmp_path), "-m", "ADR,NDCG@100", "--rank-by", "ADR", "--format", fmt, "--quiet", env={"COLUMNS": "400"})
        assert r.exit_code == 0, r.output
        outputs[fmt] = r.stdout
    import io

    per_run = list(csv.DictReader(io.StringIO(outputs["csv"])))
    # the runs whose NDCG@100 is blank are those the note names (their lists stop before rank 100)
    assert [p["run"] for p in per_run if p["NDCG@100"] == ""] == ["B2", "D1"]
    table = " ".join(line.strip() for line in outputs["table"].splitlines())
    assert table.count(BLANK) == 1
    md = outputs["markdown"].splitlines()
    assert md[-3:] == [BLANK, "", md[-1]] and md[-1].startswith("<sub>shrec-score ")  # the note, then the signature
    assert f"\\par\\smallskip{{\\footnotesize {BLANK}}}" in outputs["latex"]
    # the signature is printed once on the terminal, under the note
    signature = [line for line in outputs["table"].splitlines() if line.startswith("shrec-score ")]
    assert len(signature) == 1 and table.index(BLANK) < table.index(signature[0].strip())
    assert outputs["table"].count("mode: separate queries") == 1


def test_no_note_without_blank_cells(tmp_path):
    r = run("--config", preset(tmp_path), "-m", "ADR,NDCG@10", "--rank-by", "ADR", "--format", "table", "--quiet")
    assert r.exit_code == 0 and "Blank cells" not in r.stdout
    r = run("--config", preset(tmp_path), "-m", "ADR,NDCG@10", "--rank-by", "ADR", "--format", "latex", "--quiet")
    assert "Blank cells" not in r.stdout and "footnotesize" not in r.stdout


def test_the_page_explains_blank_cells_under_the_leaderboard(tmp_path):
    pytest.importorskip("matplotlib", reason="the page draws its figures")
    out = tmp_path / "out"
    r = run("--config", preset(tmp_path), "-m", "ADR,NDCG@100", "--rank-by", "ADR", "--out", out, "--html", "--format", "csv", "--quiet")
    assert r.exit_code == 0, r.output
    page = (out / "report" / "index.html").read_text(encoding="utf-8")
    section = page[page.index('<section id="leaderboard"') : page.index("</section>", page.index('<section id="leaderboard"'))]
    assert f'<p class="note blank-note">{BLANK}</p>' in section
    assert section.index("</table>") < section.index("blank-note")


# -- 15. the figures: 12+ runs apart in colour and marker, legends outside the axes ---------------------


def test_twelve_and_more_runs_differ_in_colour_and_marker():
    pytest.importorskip("matplotlib", reason="plots extra")
    from matplotlib.colors import to_rgb

    from shrec_score.plots import styles

    st = styles(20)
    assert len({to_rgb(s["color"]) for s in st}) == 20  # 20 runs, 20 colours
    assert len({s["marker"] for s in st[:11]}) == 11  # and 11 markers before one repeats
    assert len({(s["linestyle"], s["marker"]) for s in styles(44)}) == 44  # dash x marker: apart in grey up to 44 runs
    # no two colours of the palette nearly alike (Euclidean RGB distance at least 0.2; tab10's closest pair is 0.33)
    rgb = [to_rgb(s["color"]) for s in st]
    gaps = [sum((x - y) ** 2 for x, y in zip(a, b)) ** 0.5 for i, a in enumerate(rgb) for b in rgb[i + 1 :]]
    assert min(gaps) >= 0.2


@pytest.mark.parametrize("n_runs", [5, 14])
def test_the_legends_cover_no_curve_nor_bar(n_runs):
    pytest.importorskip("matplotlib", reason="plots extra")
    from matplotlib.figure import Figure

    from shrec_score.plots import legend_outside, plot_pr_curves

    from .html_pages import big_report

    report = big_report(n_runs=n_runs, n_queries=100)
    ax = plot_pr_curves(report)
    fig = ax.figure
    fig.canvas.draw()
    legend, frame = ax.get_legend().get_window_extent(), ax.get_window_extent()
    assert legend.x0 >= frame.x1  # the legend starts right of the axes: no curve under it
    assert len(ax.get_legend().get_texts()) == n_runs
    # the per-class bars use the same placement
    fig2 = Figure()
    ax2 = fig2.subplots()
    ax2.bar(range(3), [1, 2, 3], label="run")
    legend_outside(ax2)
    fig2.canvas.draw()
    assert ax2.get_legend().get_window_extent().x0 >= ax2.get_window_extent().x1
