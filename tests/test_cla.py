import glob
import os

import pytest

from shrec_score import InputError, read_classification
from shrec_score.model import MISC_CLASS

from .conftest import shared_path


def write(tmp_path, text, name="c.cla", newline="\n"):
    p = tmp_path / name
    p.write_bytes(text.replace("\n", newline).encode())
    return str(p)


HIER = """PSB 1
4 5

animal 0 0

dog animal 2
11
12

cat animal 1
13

vehicle 0 2
20
21
"""


def class_of(c, model_id):
    return c.class_names[c.labels[c.ids.index(model_id)]]


def class_sizes(c):
    """Models per class, every class named (a pure parent: 0)."""
    return {name: int((c.labels == i).sum()) for i, name in enumerate(c.class_names)}


def test_hierarchy_pure_parents_and_classes_with_models(tmp_path):
    c = read_classification(write(tmp_path, HIER))
    assert c.class_names == ["animal", "dog", "cat", "vehicle"]
    assert c.class_parents == ["0", "animal", "animal", "0"]
    assert c.ids == ["11", "12", "13", "20", "21"]
    assert [class_of(c, m) for m in c.ids] == ["dog", "dog", "cat", "vehicle", "vehicle"]
    assert class_sizes(c) == {"animal": 0, "dog": 2, "cat": 1, "vehicle": 2}


def test_crlf_trailing_spaces_and_blank_lines_are_free(tmp_path):
    messy = HIER.replace("dog animal 2", "dog   animal\t2   ").replace("\n\n", "\n \n\n")
    c = read_classification(write(tmp_path, messy, newline="\r\n"))
    assert c.ids == ["11", "12", "13", "20", "21"]
    assert class_of(c, "12") == "dog"


@pytest.mark.parametrize(
    "text, needle",
    [
        (HIER.replace("4 5", "5 5"), "c.cla:2: header declares 5 classes, got 4 class lines"),
        (HIER.replace("4 5", "4 6"), "c.cla:2: header declares 6 models, got 5 model ids"),
        (HIER.replace("13\n", "12\n"), "c.cla:11: expected each model id once; '12' is already listed in class 'dog' at line 8"),
        (HIER.replace("cat animal 1", "cat animals 1"), "c.cla:10: expected parent class 'animals' of class 'cat'"),
        (HIER.replace("PSB 1", "PSX 1"), 'c.cla:1: expected the header "PSB 1"'),
        (HIER.replace("dog animal 2", "dog animal two"), 'c.cla:6: expected a class line "name parent count"'),
        (HIER.replace("vehicle 0 2", "vehicle 0 3"), "expected 3 model ids for class 'vehicle' (line 13), got end of file after 2"),
        (HIER.replace("cat animal 1", "dog animal 1"), "class 'dog' is already defined at line 6"),
    ],
)
def test_malformed_files_name_file_and_line(tmp_path, text, needle):
    path = write(tmp_path, text)
    with pytest.raises(InputError) as info:
        read_classification(path)
    assert needle in str(info.value)
    assert str(info.value).startswith(path)
    assert "\n" not in str(info.value)


def _independent_counts(path):
    """Header and per-class counts by a second, line-by-line reading."""
    lines = [ln.split() for ln in open(path, encoding="utf-8").read().splitlines()]
    lines = [ln for ln in lines if ln]
    n_classes, n_models = int(lines[1][0]), int(lines[1][1])
    class_lines = [ln for ln in lines[2:] if len(ln) == 3]
    return n_classes, n_models, {ln[0]: int(ln[2]) for ln in class_lines}, {ln[0]: ln[1] for ln in class_lines}


def test_every_psb_file(tmp_path):
    folder = shared_path("psb")
    files = sorted(glob.glob(os.path.join(folder, "*.cla")))
    assert len(files) == 8
    for path in files:
        c = read_classification(path)
        n_classes, n_models, sizes, parents = _independent_counts(path)
        assert (len(c.class_names), len(c.ids)) == (n_classes, n_models), path
        assert class_sizes(c) == sizes, path
        assert dict(zip(c.class_names, c.class_parents)) == parents, path
        assert all(p == "0" or p in sizes for p in c.class_parents), path
        assert len(set(c.ids)) == len(c.ids) == n_models


def test_psb_base_test_classification_facts():
    c = read_classification(shared_path("psb", "test.cla"))
    assert (len(c.class_names), len(c.ids)) == (131, 907)
    assert class_sizes(c)["biplane"] == 14 and class_of(c, "1119") == "biplane"
    parent = dict(zip(c.class_names, c.class_parents))
    assert parent["biplane"] == "airplane" and parent["airplane"] == "aircraft" and parent["aircraft"] == "0"
    # pure parents hold no models
    assert class_sizes(c)["aircraft"] == 0


def test_psb_coarse2_has_the_misc_class():
    c = read_classification(shared_path("psb", "coarse2Test.cla"))
    assert class_sizes(c)[MISC_CLASS] == 121
