import glob
import io
import os

import pandas as pd
import pytest
from click.testing import CliRunner

from shrec_score import InputError
from shrec_score.cli import cli
from shrec_score.config import KEYS, load_config

from .conftest import ROOT, SHARED_DATA

CONFIGS = os.path.join(ROOT, "configs")


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.mark.parametrize("name", sorted(os.path.basename(p) for p in glob.glob(os.path.join(CONFIGS, "*.yaml"))))
def test_every_preset_scores_its_sample(name, monkeypatch):
    monkeypatch.chdir(ROOT)
    cfg_path = os.path.join("configs", name)
    if "shrec2021" in name and not os.path.isdir(SHARED_DATA):
        pytest.skip("../shared/data is absent: the SHREC 2021 preset points there")
    cfg = load_config(cfg_path)
    r = run("--config", cfg_path, "--format", "csv")
    assert r.exit_code == 0, r.output
    board = pd.read_csv(io.StringIO(r.stdout))
    assert len(board) >= 3 and board["rank"].tolist() == list(range(1, len(board) + 1))
    sort = cfg.get("sort") or ("tau_b" if "ground_truth" in cfg else "ADR" if cfg.get("grades") == "sister" else "NN")
    values = board[sort].tolist()
    assert values == sorted(values, reverse=True)


def test_presets_of_the_seed_tracks_exist_with_their_conventions(monkeypatch):
    for name in ["psb", "shrec2006", "shrec2018-sketch-scene", "shrec2018-image-scene", "shrec2021-ch", "sbir-kendall"]:
        assert os.path.isfile(os.path.join(CONFIGS, f"{name}.yaml")), name
    monkeypatch.chdir(ROOT)
    import yaml

    raw = {n: yaml.safe_load(open(os.path.join(CONFIGS, f"{n}.yaml"))) for n in ["psb", "shrec2006", "shrec2021-ch"]}
    assert raw["psb"]["matrix_order"] == "listing" and "queries" not in raw["psb"]
    assert raw["shrec2006"]["grades"] == "sister" and raw["shrec2006"]["sort"] == "ADR"
    assert raw["shrec2021-ch"]["matrix_order"] == "numeric"


def test_command_line_overrides_the_config(monkeypatch):
    monkeypatch.chdir(ROOT)
    r = run("--config", "configs/psb.yaml", "--sort", "AP", "-m", "NN,AP", "--format", "csv")
    assert r.exit_code == 0, r.output
    board = pd.read_csv(io.StringIO(r.stdout))
    assert board.columns.tolist() == ["rank", "run", "queries", "NN", "AP"]
    assert board["AP"].tolist() == sorted(board["AP"], reverse=True)


def write(tmp_path, text):
    p = tmp_path / "track.yaml"
    p.write_text(text)
    (tmp_path / "c.cla").write_text("PSB 1\n1 2\na 0 2\n1\n2\n")
    return p


@pytest.mark.parametrize(
    "text, message",
    [
        ("relevance: c.cla\nsortt: NN\n", "track.yaml:2: unknown key 'sortt'; expected one of: description, relevance"),
        ("relevance: c.cla\ne_depth: deep\n", "track.yaml:2: expected 'e_depth' to be a whole number >= 1, got 'deep'"),
        ("relevance: c.cla\nmeasures: NN\n", "track.yaml:2: expected 'measures' to be a list of measure names, got 'NN'"),
        ("relevance: missing.cla\n", "track.yaml:1: 'relevance': expected an existing file, got "),
        ("grades: gold\n", "track.yaml:1: expected 'grades' to be binary or sister, got 'gold'"),
        ("- a\n- b\n", "track.yaml:1: expected a YAML mapping of settings (key: value), got list"),
        ("relevance: [unclosed\n", "track.yaml:2: expected a YAML mapping of settings"),
    ],
)
def test_bad_configs_name_the_key_file_and_line(tmp_path, text, message):
    p = write(tmp_path, text)
    with pytest.raises(InputError) as info:
        load_config(p)
    assert message in str(info.value)
    r = run("--config", p, str(tmp_path))
    assert r.exit_code == 2 and message in r.output and len(r.output.strip().splitlines()) == 1


def test_paths_are_relative_to_the_config_file(tmp_path):
    p = write(tmp_path, "relevance: c.cla\nruns: [.]\n")
    cfg = load_config(p)
    assert os.path.samefile(cfg["relevance"], tmp_path / "c.cla")
    assert set(KEYS) >= {"relevance", "queries", "grades", "run_format", "matrix_order", "measures", "sort", "e_depth", "dcg_cutoffs", "pr_levels"}
