"""Line numbers of the .cla and ShapeNet readers (issue 30.21): a line ends at
LF, CRLF or a lone CR and nowhere else, so the line an error names is the
line ``grep -n`` (counting newlines) shows; U+2028, U+2029, U+0085, form
feed, vertical tab and ``\\x1c``-``\\x1e`` are characters of a name (the TREC
files' field rule), not line or field breaks."""

from __future__ import annotations

import gzip

import pytest

from shrec_score.errors import InputError
from shrec_score.io.cla import read_classification
from shrec_score.io.shapenet import read_shapenet_truth
from shrec_score.io.text import text_lines

#: What str.splitlines (the old reader) broke lines at, besides LF and CR: characters of a name...
INSIDE = ["\u2028", "\u2029", "\x85", "\x1c", "\x1d", "\x1e"]
#: ... or blanks between fields (trec.BLANKS), ignored at the end of a line
BLANK = ["\x0c", "\x0b"]


def _grep_n(data: bytes, needle: bytes) -> int:
    """The line grep -n gives the last line holding ``needle``: newlines before it, plus one."""
    return data[: data.rindex(needle)].count(b"\n") + 1


@pytest.mark.parametrize("name", [f"m{c}2" for c in INSIDE] + [f"m2{c}" for c in BLANK])
@pytest.mark.parametrize("compressed", [False, True])
def test_a_cla_error_after_a_name_holding_a_separator_names_grep_s_line(tmp_path, name, compressed):
    text = f"PSB 1\n2 4\n\nchair 0 2\nm1\n{name}\n\ntable 0 2\nm3\nm1\n"  # m1 listed twice, on line 10
    data = text.encode()
    path = tmp_path / ("c.cla.gz" if compressed else "c.cla")
    path.write_bytes(gzip.compress(data) if compressed else data)
    with pytest.raises(InputError) as err:
        read_classification(path)
    assert err.value.line == _grep_n(data, b"m1") == 10  # the second m1
    assert f"{path}:10: " in str(err.value)


@pytest.mark.parametrize("sep", INSIDE)
def test_a_name_holding_a_separator_is_one_name(tmp_path, sep):
    path = tmp_path / "c.cla"
    path.write_text(f"PSB 1\n1 2\n\nch{sep}air 0 2\nm{sep}1\nm2\n", encoding="utf-8")
    cla = read_classification(path)
    assert cla.class_names == [f"ch{sep}air"] and cla.ids == [f"m{sep}1", "m2"]


@pytest.mark.parametrize("sep", BLANK)
def test_a_form_feed_or_vertical_tab_separates_fields_as_in_trec_files(tmp_path, sep):
    path = tmp_path / "c.cla"
    path.write_text(f"PSB 1\n1 2\n\nchair{sep}0 2\nm1{sep}\n{sep}m2\n", encoding="utf-8")
    cla = read_classification(path)
    assert cla.class_names == ["chair"] and cla.ids == ["m1", "m2"]


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
def test_line_ends_lf_crlf_and_a_lone_cr_count_alike(tmp_path, end):
    """docs/inputs.md: a line ends at LF, CRLF or a lone CR (old Mac files)."""
    path = tmp_path / "c.cla"
    path.write_bytes(end.join(["PSB 1", "1 2", "", "chair 0 2", "m\u20281", "m\u20281", ""]).encode())
    with pytest.raises(InputError) as err:
        read_classification(path)
    assert err.value.line == 6  # the sixth line: the same id again
    assert list(text_lines(path))[4] == (5, "m\u20281")


def test_a_shapenet_error_after_a_line_holding_u2028_names_grep_s_line(tmp_path):
    data = (
        "id,synsetId,subSynsetId,modelId,split\n"
        "000001,02691156,02691156,a\u2028b,train\n"  # U+2028 inside a model id: one line, 5 fields
        "000002,02691156,02691156,c\x85d\x0ce,test\n"
        "000001,02691156,02691156,f,test\n"  # id 000001 again, on line 4
    ).encode()
    path = tmp_path / "all.csv"
    path.write_bytes(data)
    with pytest.raises(InputError) as err:
        read_shapenet_truth(path)
    assert err.value.line == data.count(b"\n") == 4
    assert "already listed at line 2" in str(err.value)
    path.write_bytes(data[: data.rindex(b"000001")])
    ids, *_ = read_shapenet_truth(path)
    assert ids == ["000001", "000002"]
