"""shrec_score.plots leaves its host process alone.

The plots use matplotlib's object API only: the caller's backend is not
switched, ``matplotlib.pyplot`` is not imported (so no pyplot figure is left
open), ``rcParams`` are not changed, and two threads writing plots of two
reports at once write the same files as writing them one after the other.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import xml.etree.ElementTree as ET

import pytest

from .conftest import ROOT, SAMPLES

matplotlib = pytest.importorskip("matplotlib", reason="plots extra")

PSB_RUNS = os.path.join(SAMPLES, "psb-like", "runs")
PSB_CLA = os.path.join(SAMPLES, "psb-like", "classes.cla")
S06_RUNS = os.path.join(SAMPLES, "shrec2006-like", "runs")
S06_QUERIES = os.path.join(SAMPLES, "shrec2006-like", "queries.cla")

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SVG_NS = "{http://www.w3.org/2000/svg}"

# Builds the PSB-like report in a child process; the child's stdout is parsed.
_BUILD = f"""
import shrec_score
from shrec_score.plots import write_plots
report = shrec_score.score([{PSB_RUNS!r}], relevance={PSB_CLA!r})
"""


def _psb_report():
    import shrec_score

    return shrec_score.score([PSB_RUNS], relevance=PSB_CLA)


def _graded_report():
    import shrec_score

    return shrec_score.score([S06_RUNS], relevance=PSB_CLA, queries=S06_QUERIES, grades="sister", run_format="lists", sort="ADR")


@pytest.fixture(scope="module")
def reports():
    """Two different reports: binary PSB-like (NN) and graded SHREC 2006-like (ADR)."""
    return {"psb": _psb_report(), "graded": _graded_report()}


def _run_child(body: str) -> str:
    """Run ``body`` in a fresh interpreter (cwd = repository) and return its stdout."""
    code = textwrap.dedent(body)
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    env["PYTHONPATH"] = ROOT
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _read_all(folder) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in sorted(os.listdir(folder))}


def test_backend_is_unchanged_and_pyplot_is_not_imported(tmp_path):
    out = _run_child(
        _BUILD
        + f"""
import sys
import matplotlib
matplotlib.use("svg")  # a non-Agg backend that works headless
before = matplotlib.get_backend()
rc_before = matplotlib.rcParams.copy()
assert "matplotlib.pyplot" not in sys.modules
paths = write_plots(report, {str(tmp_path / "fig")!r})
assert paths, "nothing written"
print("backend", before, matplotlib.get_backend())
print("pyplot", "matplotlib.pyplot" in sys.modules)
print("rc_same", matplotlib.rcParams.copy() == rc_before)
"""
    )
    lines = dict(line.split(" ", 1) for line in out.splitlines())
    assert lines["backend"] == "svg svg"
    assert lines["pyplot"] == "False"
    assert lines["rc_same"] == "True"
    assert sorted(os.listdir(tmp_path / "fig")) == [".shrec-score-manifest.json", "per_class_NN.png", "per_class_NN.svg", "pr_curves.png", "pr_curves.svg"]


def test_no_pyplot_figure_is_left_open_and_backend_kept_when_host_uses_pyplot(tmp_path):
    out = _run_child(
        _BUILD
        + f"""
import matplotlib
import matplotlib.pyplot as plt
plt.switch_backend("pdf")
before = matplotlib.get_backend()
host = plt.figure()  # the host's own figure must stay the current one
assert plt.get_fignums() == [host.number]
write_plots(report, {str(tmp_path / "fig")!r})
print("backend", before, matplotlib.get_backend())
print("fignums", plt.get_fignums() == [host.number])
print("current", plt.gcf() is host)
plt.close(host)
print("empty", plt.get_fignums() == [])
"""
    )
    lines = dict(line.split(" ", 1) for line in out.splitlines())
    assert lines == {"backend": "pdf pdf", "fignums": "True", "current": "True", "empty": "True"}


def test_two_threads_write_the_same_files_as_one_after_the_other(reports, tmp_path):
    from shrec_score.plots import write_plots

    # no svg.hashsalt: the library renumbers matplotlib's random SVG ids itself
    names = sorted(reports)
    for name in names:
        write_plots(reports[name], tmp_path / "serial" / name)

    errors: list[BaseException] = []
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # interleave the two threads finely
    try:
        for attempt in range(2):
            start = threading.Barrier(len(names))

            def work(name, attempt=attempt, start=start):
                try:
                    start.wait()
                    write_plots(reports[name], tmp_path / f"threads{attempt}" / name)
                except BaseException as exc:  # pragma: no cover - reported below
                    errors.append(exc)

            threads = [threading.Thread(target=work, args=(n,)) for n in names]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=300)
            assert not any(t.is_alive() for t in threads)
    finally:
        sys.setswitchinterval(switch)
    assert not errors, errors

    for name in names:
        serial = _read_all(tmp_path / "serial" / name)
        assert len(serial) >= 4
        for attempt in range(2):
            threaded = _read_all(tmp_path / f"threads{attempt}" / name)
            assert threaded.keys() == serial.keys()
            for fname in serial:
                assert threaded[fname] == serial[fname], f"{name}/{fname} differs when written from two threads"
    # the two reports really are different
    assert set(_read_all(tmp_path / "serial" / "graded")) >= {"ndcg_vs_rank.svg", "cg_vs_recall.png", "per_class_ADR.png"}
    assert "ndcg_vs_rank.svg" not in _read_all(tmp_path / "serial" / "psb")


def test_the_same_report_gives_the_same_bytes_in_every_format(reports):
    """No date in an SVG or a PDF and no random SVG id (matplotlib draws them from a uuid unless
    svg.hashsalt is set, which the library leaves alone): two drawings of a report are the same bytes."""
    from shrec_score.plots import plot_files

    assert matplotlib.rcParams["svg.hashsalt"] is None
    first, second = (plot_files(reports["graded"], formats=("svg", "pdf", "png")) for _ in range(2))
    assert first.keys() == second.keys() and {n.rsplit(".", 1)[1] for n in first} == {"svg", "pdf", "png"}
    assert [n for n in first if first[n] != second[n]] == []
    svg = first["pr_curves.svg"].decode()
    assert 'id="s0"' in svg and "url(#s" in svg


def test_written_files_parse(reports, tmp_path):
    from PIL import Image

    from shrec_score.plots import write_plots

    paths = write_plots(reports["graded"], tmp_path)
    listed = sorted(os.listdir(tmp_path))
    assert listed[0] == ".shrec-score-manifest.json"  # beside the figures, the list of them
    assert sorted(os.path.basename(p) for p in paths) == listed[1:]
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
    for path in paths:
        if path.endswith(".png"):
            with open(path, "rb") as fh:
                assert fh.read(8) == PNG_SIGNATURE
            with Image.open(path) as im:
                im.verify()
            with Image.open(path) as im:
                assert im.format == "PNG" and im.size[0] > 300 and im.size[1] > 300
        else:
            assert path.endswith(".svg")
            root = ET.parse(path).getroot()
            assert root.tag == f"{SVG_NS}svg"
            assert root.find(f".//{SVG_NS}path") is not None
            with open(path, encoding="utf-8") as fh:
                assert "<dc:date>" not in fh.read()  # metadata={"Date": None}


def test_missing_matplotlib_raises_input_error_with_install_hint(reports, tmp_path, monkeypatch):
    from shrec_score.errors import InputError
    from shrec_score.plots import INSTALL_HINT, write_plots

    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(InputError) as err:
        write_plots(reports["psb"], tmp_path / "fig")
    assert str(err.value) == f"--plots needs matplotlib; install it with: {INSTALL_HINT}"
    assert not (tmp_path / "fig").exists()


def test_pr_curves_go_onto_the_callers_axes(reports):
    """plot_pr_curves(report, ax=...) draws on the Axes the caller passes in:
    one line per run with the report's own precision-recall points, the
    caller's figure, and nothing else created."""
    import numpy as np
    from matplotlib.figure import Figure

    from shrec_score.plots import plot_pr_curves

    report = reports["psb"]
    fig = Figure()
    left, right = fig.subplots(1, 2)
    before = list(fig.axes)
    assert plot_pr_curves(report, ax=right) is right
    assert right.figure is fig and fig.axes == before  # no new Axes, no new figure
    assert not left.lines  # the other panel is untouched
    runs = list(report.leaderboard["run"])
    assert len(right.lines) == len(runs)
    for line, run in zip(right.lines, runs):
        want = report.pr_curve[report.pr_curve["run"] == run]
        np.testing.assert_array_equal(line.get_xdata(), want["recall"].to_numpy())
        np.testing.assert_array_equal(line.get_ydata(), want["precision"].to_numpy())
        assert line.get_label() == f"{run} (NN {report.leaderboard.set_index('run').loc[run, 'NN']:.3f})"
    assert right.get_xlabel() == "Recall" and right.get_ylabel() == "Precision"
    assert right.get_legend() is not None


def test_pr_curves_without_axes_make_a_standalone_figure_and_no_pyplot(reports):
    out = _run_child(
        _BUILD
        + """
import sys
from shrec_score.plots import plot_pr_curves
ax = plot_pr_curves(report)
print("lines", len(ax.lines))
print("pyplot", "matplotlib.pyplot" in sys.modules)
"""
    )
    lines = dict(line.split(" ", 1) for line in out.splitlines())
    assert lines == {"lines": str(len(reports["psb"].leaderboard)), "pyplot": "False"}


def test_run_names_the_font_cannot_draw_give_one_line_and_none_with_quiet(tmp_path):
    """issue 30.24: matplotlib warns once per missing glyph and figure; the CLI
    says it in one line naming the runs, and nothing under --quiet."""
    import shutil

    from click.testing import CliRunner

    from shrec_score.cli import cli

    src = os.path.join(ROOT, "sample_runs", "psb-like")
    runs = tmp_path / "runs"
    shutil.copytree(os.path.join(src, "runs"), runs)
    first = sorted(os.listdir(runs))[0]
    os.rename(runs / first, runs / "中文🙂")
    args = ["score", str(runs), "-r", os.path.join(src, "classes.cla"), "--format", "csv"]
    loud = CliRunner().invoke(cli, [*args, "--plots", str(tmp_path / "p1")])
    assert loud.exit_code == 0, loud.stderr
    glyph_lines = [line for line in loud.stderr.splitlines() if "glyph" in line.lower()]
    assert glyph_lines == ["warning: plots: the font has no glyph for 3 character(s) of the run names '中文🙂': they are drawn as empty boxes"], loud.stderr
    quiet = CliRunner().invoke(cli, [*args, "--plots", str(tmp_path / "p2"), "--quiet"])
    assert quiet.exit_code == 0 and quiet.stderr == ""
    assert sorted(os.listdir(tmp_path / "p1")) == sorted(os.listdir(tmp_path / "p2")) and len(os.listdir(tmp_path / "p1")) >= 2
