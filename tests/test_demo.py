"""``shrec-score demo OUT``: the sample contest shipped in the package is
sample_runs/psb-like byte for byte, and the demo's numbers are those of
scoring sample_runs/psb-like through the CLI, NN and FT recomputed here by hand."""

import csv
import io
import lzma
import os
import tarfile

from click.testing import CliRunner

from shrec_score.cli import cli

from .conftest import ROOT, SAMPLES

PSB = os.path.join(SAMPLES, "psb-like")
ARCHIVE = os.path.join(ROOT, "shrec_score", "demo", "psb-like.tar.xz")


def sample_files() -> dict[str, bytes]:
    found = {}
    for parent, _, names in os.walk(PSB):
        for name in names:
            path = os.path.join(parent, name)
            with open(path, "rb") as f:
                found[os.path.relpath(path, PSB).replace(os.sep, "/")] = f.read()
    return found


def test_the_shipped_contest_is_sample_runs_psb_like():
    with tarfile.open(fileobj=io.BytesIO(lzma.decompress(open(ARCHIVE, "rb").read()))) as tar:
        shipped = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
    expected = {f"psb-like/{rel}": data for rel, data in sample_files().items()}
    assert sorted(shipped) == sorted(expected), "regenerate it: make samples (sample_runs/make_samples.py)"
    assert shipped == expected, "regenerate it: make samples (sample_runs/make_samples.py)"
    assert len(shipped) == 1 + 4 * 152


def read_cla(path: str) -> dict[str, str]:
    """model id -> class, from a PSB .cla (header 2 lines, then 'name parent n' and n ids)."""
    lines = [ln.split() for ln in open(path).read().splitlines()[2:] if ln.strip()]
    cls, i = {}, 0
    while i < len(lines):
        name, _, n = lines[i]
        cls.update((m[0], name) for m in lines[i + 1 : i + 1 + int(n)])
        i += 1 + int(n)
    return cls


def hand_nn_ft(run_folder: str, cls: dict[str, str]) -> tuple[float, float]:
    """Nearest neighbour and first tier of a run, the query itself left out of its list."""
    nn = ft = 0.0
    for q, c in cls.items():
        ranked = [ln.split()[0] for ln in open(os.path.join(run_folder, f"{q}.txt")).read().splitlines()]
        ranked = [t for t in ranked if t != q]
        k = sum(1 for x in cls.values() if x == c) - 1
        nn += cls[ranked[0]] == c
        ft += sum(cls[t] == c for t in ranked[:k]) / k
    return nn / len(cls), ft / len(cls)


def test_demo_scores_the_sample_contest_as_the_cli_scores_sample_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["demo", "out", "--format", "csv"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert sorted(os.listdir("out")) == ["psb-like", "results"]
    # the contest written is the sample's
    for rel, data in sample_files().items():
        assert (tmp_path / "out" / "psb-like" / rel).read_bytes() == data, rel
    # its files are those of `shrec-score sample_runs/psb-like/runs --relevance ... --out`
    direct = CliRunner().invoke(cli, [os.path.join(PSB, "runs"), "--relevance", os.path.join(PSB, "classes.cla"), "--out", "direct", "--format", "csv"], catch_exceptions=False)
    assert direct.exit_code == 0
    for name in ("per_run.csv", "per_query.csv", "pr_curve.csv", "per_class.csv"):
        assert (tmp_path / "out" / "results" / name).read_bytes() == (tmp_path / "direct" / name).read_bytes(), name
    # and its numbers are right: NN and FT counted here from the ranked lists
    rows = {r["run"]: r for r in csv.DictReader(open(tmp_path / "out" / "results" / "per_run.csv"))}
    assert sorted(rows) == ["D2", "LFD", "MVCNN", "SHD"]
    cls = read_cla(os.path.join(PSB, "classes.cla"))
    assert len(cls) == 152
    for run, row in rows.items():
        nn, ft = hand_nn_ft(os.path.join(PSB, "runs", run), cls)
        assert float(row["NN"]) == nn and abs(float(row["FT"]) - ft) < 1e-12, run
    assert float(rows["MVCNN"]["NN"]) == 148 / 152  # the README's 0.9737
    assert result.output.splitlines()[0].startswith("rank,run,queries,NN,FT,")


def test_demo_again_into_the_same_folder_and_a_foreign_file_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(cli, ["demo", "out", "--format", "csv"]).exit_code == 0
    os.remove("out/psb-like/runs/D2/1000.txt")  # a demo cut short: the next one completes it
    again = CliRunner().invoke(cli, ["demo", "out", "--format", "csv"])
    assert again.exit_code == 0 and os.path.isfile("out/psb-like/runs/D2/1000.txt")
    before = (tmp_path / "out" / "results" / "per_run.csv").read_bytes()
    (tmp_path / "out" / "psb-like" / "runs" / "mine.txt").write_text("x\n")
    refused = CliRunner().invoke(cli, ["demo", "out"])
    assert refused.exit_code == 2
    assert refused.output.strip().splitlines() == [
        f"Error: {os.path.join('out', 'psb-like', 'runs', 'mine.txt')}: expected only the sample contest's files in "
        f"{os.path.join('out', 'psb-like')}, got a file of another (give another OUT)"]
    assert (tmp_path / "out" / "results" / "per_run.csv").read_bytes() == before


def test_a_file_where_the_results_go_is_one_line_naming_it(tmp_path, monkeypatch):
    # demo runs the score command itself: its error is the output folder's, not a usage error of 'score -o'
    monkeypatch.chdir(tmp_path)
    os.mkdir("out")
    (tmp_path / "out" / "results").write_text("mine\n")
    r = CliRunner().invoke(cli, ["demo", "out"])
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [f"Error: {os.path.join('out', 'results')}: expected a folder for the output, got a file"]
    assert (tmp_path / "out" / "results").read_text() == "mine\n"
