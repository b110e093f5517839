"""One input, one answer (issue 30): a differential harness.

Each input is generated, re-encoded in ways that must not change what it
means (line ends, a BOM, tabs, doubled blanks, gzip...) and fed through every
path the tool can take (plain or compressed, every tie mode, --lenient,
``check`` and ``score``, list folder or matrix).  A valid input must give the
same CSV bytes whatever the path; a broken one the same verdict: the same exit
status and the same message (file and line included), and ``check`` must
refuse what ``score`` refuses.

The cases known to fail on the current readers are marked ``xfail(strict=True)``
with the number of the point in issue 30 they show; a fix turns them into
passes (and the strict mark into a failure until it is removed).
"""

from __future__ import annotations

import gzip
import itertools
import os

import numpy as np
import pytest
from click.testing import CliRunner

from shrec_score.cli import cli

MODES = ["rule", "expected", "optimistic", "pessimistic"]
COUNT = {"cases": 0}

# -- TREC runs ---------------------------------------------------------------------

QRELS = "q1 0 d1 1\nq1 0 d3 1\nq1 0 d5 1\nq2 0 d2 1\nq2 0 d4 1\n"
#: (query, doc, score): a tie in q1 (d2 and d3), q2 in order
ROWS = [("q1", "d1", "0.9"), ("q1", "d2", "0.5"), ("q1", "d3", "0.5"), ("q1", "d4", "0.3"), ("q1", "d5", "0.1"),
        ("q2", "d4", "2"), ("q2", "d1", "1.5"), ("q2", "d2", "1")]


def trec_text(sep: str = " ", eol: str = "\n", tag: str = "run1", bom: bool = False, indent: str = "", after_doc: str = "", extra: str = "") -> str:
    lines = [f"{indent}{q}{sep}Q0{sep}{d}{after_doc}{sep}{i + 1}{sep}{s}{sep}{tag}{extra}" for i, (q, d, s) in enumerate(ROWS)]
    return ("\ufeff" if bom else "") + eol.join(lines) + eol


#: Re-encodings that must score as the plain run does (trec_eval splits on any
#: run of whitespace; the tag is the rest of the line).
SAME_AS_BASE = {
    "crlf": dict(eol="\r\n"),
    "bom": dict(bom=True),
    "tabs": dict(sep="\t"),
    "doubled-blanks": dict(sep="  "),
    "tab-indent": dict(indent="\t"),
    "two-word-tag": dict(tag="my run"),
    "tabs-and-tag-with-spaces": dict(sep="\t", tag="my run"),
    "seven-fields": dict(extra=" extra"),
    "bom+two-word-tag": dict(bom=True, tag="my run"),
    # issue 30.6: any run of ASCII blanks separates fields, as for trec_eval
    "form-feed-after-doc": dict(after_doc="\f"),
    "vertical-tab-after-doc": dict(after_doc="\v"),
    "tab-after-doc": dict(after_doc="\t"),
    "tab-indent-tabs": dict(sep="\t", indent=" "),
    "form-feed-indent+two-word-tag": dict(indent="\f", tag="my run"),
    # issue 30.7: a lone CR ends a line whatever the tags
    "cr": dict(eol="\r"),
    "cr+two-word-tag": dict(eol="\r", tag="my run"),
    "cr+tabs+doubled-blanks": dict(eol="\r", sep="\t "),
    "crlf+form-feed": dict(eol="\r\n", after_doc="\f"),
}


def _write(folder, name: str, text: str, gz: bool) -> str:
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name + (".gz" if gz else ""))
    data = text.encode("utf-8")
    with open(path, "wb") as fh:
        fh.write(gzip.compress(data, mtime=0) if gz else data)
    return path


def _run(args: list[str], path: str | None = None) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of the CLI, the run's path replaced by RUN."""
    COUNT["cases"] += 1
    r = CliRunner().invoke(cli, args)
    out, err = r.stdout, r.stderr
    if path is not None:
        out, err = out.replace(path, "RUN"), err.replace(path, "RUN")
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    return r.exit_code, out, err


def _trec_score(path: str, qrels: str, mode: str, lenient: bool = False) -> tuple[int, str, str]:
    args = ["score", path, "-r", qrels, "--run-format", "trec", "-m", "AP,NN,P@2,NDCG@5", "--ties", mode, "--format", "csv", "--per-query", "--quiet"]
    return _run(args + (["--lenient"] if lenient else []), path)


@pytest.fixture(scope="module")
def trec_base(tmp_path_factory):
    folder = tmp_path_factory.mktemp("trec")
    qrels = _write(folder, "qrels.txt", QRELS, False)
    base = _write(folder / "base", "run", trec_text(), False)
    want = {mode: _trec_score(base, qrels, mode) for mode in MODES}
    for code, out, _ in want.values():
        assert code == 0 and out.count("\n") == 3  # header, then q1 and q2
    # the base itself: AP of q1 under the rule (d3 before d2: trec_eval's docno order) = (1 + 2/2 + 3/5) / 3
    head, q1 = want["rule"][1].splitlines()[:2]
    assert float(dict(zip(head.split(","), q1.split(",")))["AP"]) == pytest.approx((1 + 2 / 2 + 3 / 5) / 3)
    return folder, qrels, want


def _same_as_base(trec_base, name: str, kwargs: dict) -> None:
    folder, qrels, want = trec_base
    for gz, mode, lenient in itertools.product((False, True), MODES, (False, True)):
        path = _write(folder / name, "run", trec_text(**kwargs), gz)
        got = _trec_score(path, qrels, mode, lenient)
        assert got[:2] == want[mode][:2], (name, gz, mode, lenient, got[2])


@pytest.mark.parametrize("name", sorted(SAME_AS_BASE))
def test_trec_reencodings_score_as_the_plain_run(trec_base, name):
    _same_as_base(trec_base, name, SAME_AS_BASE[name])


#: Runs with a doubtful line: one verdict (exit status, message) on every path,
#: and check's verdict the same.  A no-break space is not a field separator
#: (trec_eval splits on ASCII whitespace): "d\u00a01" is an unjudged document.
BROKEN = {  # name: (lines added to the 8 of the base run, the line named; None: a valid run)
    "five-fields-after-doubled-blank": ("q1  Q0 d3 3 0.7\n", 9),  # issue 30.2
    "five-fields-tab-after-doubled-tab": ("q1\t\tQ0\td3\t3\t0.7\n", 9),  # issue 30.2
    "five-fields-trailing-blank": ("q1 Q0 d3 3 0.7 \n", 9),  # issue 30.2: an empty tag
    "five-fields-leading-blank": (" q1 Q0 d3 3 0.7\n", 9),  # issue 30.2
    "repeated-doc": ("q1 Q0 d1 1 0.9 r\nq1 Q0 d1 2 0.8 r\n", 9),  # d1 is ranked at line 1 already
    "repeated-doc-after-form-feed": ("q1 Q0 d1\f 1 0.9 r\n", 9),  # issue 30.6: d1 and d1\f are one id
    "score-not-a-number": ("q1 Q0 d1 1 high r\n", 9),
    "score-nan": ("q1 Q0 d1 1 nan r\n", 9),
    "line-of-three-fields": ("bad line here\n", 9),
    "nbsp-in-id": ("q1 Q0 d\u00a01 1 0.9 r\n", None),
    "u2028-in-id": ("q1 Q0 d\u20281 1 0.9 r\n", None),
    "x1c-in-id": ("q1 Q0 d\x1c1 1 0.9 r\n", None),
}
#: Ids with a character that is no field separator (trec_eval's rule): valid runs.
VALID_ODD_IDS = tuple(n for n, (_, line) in BROKEN.items() if line is None)


def _verdicts(folder, qrels: str, name: str, text: str) -> set[tuple[int, str]]:
    seen = set()
    for gz, eol in itertools.product((False, True), ("\n", "\r\n", "\r")):  # issue 30.7: the same line numbers
        path = _write(folder / name, "run", text.replace("\n", eol), gz)
        for mode in MODES:
            code, _, err = _trec_score(path, qrels, mode)
            seen.add((code, err.strip().replace(".gz", "")))
        code, out, err = _run(["check", path, "-r", qrels, "--run-format", "trec"], path)
        seen.add(("check", code))
    return seen


def _check_message(folder, qrels: str, name: str, text: str) -> tuple[str, str]:
    """The first error as check words it and as score words it (prefixes taken off)."""
    path = _write(folder / name, "run", text, False)
    _, out, _ = _run(["check", path, "-r", qrels, "--run-format", "trec"], path)
    _, _, err = _trec_score(path, qrels, "rule")
    first = next(line for line in out.splitlines() if ": error: " in line)
    return first.replace(": error: ", ": ", 1), err.strip().removeprefix("Error: ")


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_trec_run_gets_one_verdict(trec_base, name):
    folder, qrels, _ = trec_base
    text = BROKEN[name][0]
    seen = _verdicts(folder, qrels, name, trec_text() + text)
    scores = {v for v in seen if v[0] != "check"}
    assert len(scores) == 1, seen
    (code, message), = scores
    assert ("check", code) in seen  # check refuses what score refuses, and passes what it scores
    line = BROKEN[name][1]
    if line is None:
        assert code == 0
    else:
        assert code == 2 and message.count("\n") == 0 and f"RUN:{line}: " in message, message


@pytest.mark.parametrize("neighbours", ["plain", "two-word-tag", "tabs", "form-feed-after-doc", "cr"])
def test_a_short_line_is_refused_whatever_its_neighbours(trec_base, neighbours):
    """issue 30.2: whether a line is accepted does not depend on the lines
    around it (nor on where it is, nor on the compression)."""
    folder, qrels, _ = trec_base
    kwargs = {"plain": {}, "two-word-tag": dict(tag="my run"), "tabs": dict(sep="\t"), "form-feed-after-doc": dict(after_doc="\f"), "cr": dict(eol="\r")}[neighbours]
    eol = kwargs.get("eol", "\n")
    lines = trec_text(**kwargs).split(eol)[:-1]
    for at, gz in itertools.product((0, 4, len(lines)), (False, True)):
        text = eol.join(lines[:at] + ["q1  Q0 d3 3 0.7"] + lines[at:]) + eol
        path = _write(folder / f"short-{neighbours}", "run", text, gz)
        code, _, err = _trec_score(path, qrels, "rule")
        assert (code, err.strip().replace(".gz", "")) == (2, f'Error: RUN:{at + 1}: expected "query_id Q0 target_id rank score tag", got 5 fields'), (at, gz)


@pytest.mark.parametrize("name", [n for n in sorted(BROKEN) if n not in VALID_ODD_IDS])
def test_lenient_drops_a_broken_line_and_says_so(trec_base, name):
    """issue 30.2: --lenient scores a run whose line is refused, and counts what it dropped."""
    folder, qrels, _ = trec_base
    for gz in (False, True):
        path = _write(folder / (name + "-lenient"), "run", trec_text() + BROKEN[name][0], gz)
        code, _, err = _run(["score", path, "-r", qrels, "--run-format", "trec", "-m", "AP", "--lenient"], path)
        assert code == 0 and "dropped" in err and "nothing dropped" not in err, (gz, err)


# -- ranked-list folders and matrices ------------------------------------------------

CLA = "PSB 1\n2 6\na 0 3\nm0\nm1\nm2\nb 0 3\nm3\nm4\nm5\n"
NUMERIC_CLA = "PSB 1\n2 6\na 0 3\n0\n1\n2\nb 0 3\n3\n4\n5\n"


def _matrix() -> np.ndarray:
    rng = np.random.default_rng(30)
    m = np.round(rng.random((6, 6)), 1)  # one decimal: ties
    np.fill_diagonal(m, 0.0)
    return m


def _list_text(row: np.ndarray, names: list[str], sep: str = " ", eol: str = "\n", bom: bool = False, distances: str = "all") -> str:
    order = np.argsort(row, kind="stable")
    lines = []
    for k, j in enumerate(order):
        with_d = distances == "all" or (distances == "some" and k % 2 == 0)
        lines.append(f"{names[j]}{sep}{float(row[j])!r}" if with_d else names[j])
    return ("\ufeff" if bom else "") + eol.join(lines) + eol


def _list_folder(root, variant: str, gz: bool = False, **kwargs) -> str:
    m = _matrix()
    names = [f"m{i}" for i in range(6)]
    run = root / variant / "runs" / "r"
    os.makedirs(run, exist_ok=True)
    for i in range(6):
        _write(run, f"m{i}.txt", _list_text(m[i], names, **kwargs), gz)
    return str(root / variant / "runs")


def _score_lists(runs: str, cla: str, mode: str, *extra: str) -> tuple[int, str, str]:
    return _run(["score", runs, "-r", cla, "--ties", mode, "--format", "csv", "--per-query", "--quiet", *extra])


@pytest.fixture(scope="module")
def lists_base(tmp_path_factory):
    root = tmp_path_factory.mktemp("lists")
    cla = _write(root, "c.cla", CLA, False)
    runs = _list_folder(root, "base")
    return root, cla, {mode: _score_lists(runs, cla, mode) for mode in MODES}


@pytest.mark.parametrize("variant,kwargs", [("crlf", dict(eol="\r\n")), ("tabs", dict(sep="\t")), ("bom", dict(bom=True)), ("gzip", dict(gz=True))])
def test_list_folder_reencodings_score_as_the_plain_folder(lists_base, variant, kwargs):
    root, cla, want = lists_base
    runs = _list_folder(root, variant, **kwargs)
    for mode in MODES:
        for lenient in ((), ("--lenient",)):
            got = _score_lists(runs, cla, mode, *lenient)
            assert got[0] == 0 and got[:2] == want[mode][:2], (variant, mode, lenient)


def test_a_matrix_scores_as_the_same_list_folder_in_every_tie_mode(lists_base, tmp_path):
    """The matrix and the list folder hold the same ranking: the same numbers
    (the per-query CSV's run column aside) in every tie mode."""
    root, cla, want = lists_base
    np.save(tmp_path / "r.npy", _matrix())
    ncla = _write(tmp_path, "n.cla", NUMERIC_CLA, False)
    for mode in MODES:
        code, out, _ = _run(["score", str(tmp_path / "r.npy"), "-r", ncla, "--run-format", "matrix", "--ties", mode, "--format", "csv", "--per-query", "--quiet"])
        assert code == 0
        values = [line.split(",")[3:] for line in out.splitlines()[1:]]
        expected = [line.split(",")[3:] for line in want[mode][1].splitlines()[1:]]
        assert values == expected and len(values) == 6, mode


def test_distances_on_some_lines_only_get_one_verdict(lists_base):
    """issue 30.20: validity must not depend on the tie mode, nor on check vs score."""
    root, cla, _ = lists_base
    runs = _list_folder(root, "some-distances", distances="some")
    verdicts = {mode: _score_lists(runs, cla, mode)[0] for mode in MODES}
    verdicts["check"] = _run(["check", runs, "-r", cla])[0]
    verdicts["ties"] = _run(["ties", runs, "-r", cla])[0]
    assert len(set(verdicts.values())) == 1, verdicts


def test_a_ragged_ascii_matrix_is_refused_naming_line_2(tmp_path):
    """issue 30.3: rows of 4, 5, 3 and 4 values hold 16 = 4 x 4 values: not a matrix."""
    cla = _write(tmp_path, "n.cla", "PSB 1\n2 4\na 0 2\n0\n1\nb 0 2\n2\n3\n", False)
    path = _write(tmp_path, "r.txt", "0 1 2 3\n1 0 2 3 4\n2 1 0\n3 2 1 0\n", False)
    code, _, err = _run(["score", path, "-r", cla, "--run-format", "matrix", "--quiet"], path)
    assert code == 2 and "RUN:2:" in err and err.count("\n") == 1, err


@pytest.mark.parametrize("name", [n for n in sorted(BROKEN) if n not in VALID_ODD_IDS] + ["missing-query", "blank-lines-only"])
def test_check_and_score_say_the_same_words(trec_base, name):
    folder, qrels, _ = trec_base
    other = {"missing-query": trec_text().replace("q2 ", "q3 "), "blank-lines-only": "\n \t\n\f\n"}
    text = other[name] if name in other else trec_text() + BROKEN[name][0]
    said_by_check, said_by_score = _check_message(folder, qrels, name + "-words", text)
    assert said_by_check == said_by_score


def test_harness_size():
    """The harness says how many cases it ran (runs last in this file)."""
    print(f"differential harness: {COUNT['cases']} CLI runs")
    assert COUNT["cases"] > 200


def test_text_that_starts_with_bzh_is_text_and_a_bzip2_file_is_bzip2(tmp_path):
    """issue 30.22: a list whose first target id starts with BZh is read as
    text (a bzip2 stream is BZh, a digit 1-9 and its block magic); the same
    list compressed with bzip2 scores the same."""
    import bz2

    cla = _write(tmp_path, "c.cla", "PSB 1\n2 4\na 0 2\nBZh1\nBZh2\nb 0 2\nBZh3\nBZh4\n", False)
    runs = {}
    for name, opener in (("plain", open), ("bzip2", bz2.open)):
        run = tmp_path / name / "r"
        os.makedirs(run)
        for q in ("BZh1", "BZh2", "BZh3", "BZh4"):
            others = [t for t in ("BZh2", "BZh1", "BZh4", "BZh3") if t != q]
            with opener(run / f"{q}.txt", "wt") as fh:
                fh.write("".join(f"{t} {0.1 * (i + 1):.1f}\n" for i, t in enumerate(others)))
        runs[name] = _run(["score", str(tmp_path / name), "-r", cla, "--format", "csv", "--per-query", "--quiet"])
    assert runs["plain"][0] == 0, runs["plain"][2]
    assert runs["plain"][:2] == runs["bzip2"][:2]
    # BZh1's list: BZh2 (relevant) first: NN 1
    assert runs["plain"][1].splitlines()[1].split(",")[:4] == ["r", "BZh1", "a", "1.0"]


def test_a_trec_run_with_a_nul_byte_is_read_as_a_trec_run(tmp_path):
    """issue 30.25: a NUL byte in a TREC run does not make it a PSB binary matrix."""
    qrels = _write(tmp_path, "q.txt", QRELS, False)
    path = _write(tmp_path, "run", trec_text().replace("d4", "d\x004", 1), False)
    code, _, err = _run(["score", path, "-r", qrels, "--quiet"], path)
    assert "binary matrix" not in err
    assert (code, err) == _run(["score", path, "-r", qrels, "--run-format", "trec", "--quiet"], path)[::2]


def test_a_ragged_ascii_matrix_is_refused_when_streamed_too(tmp_path, monkeypatch):
    """The large-matrix path (parsed a piece at a time) refuses it on the same line."""
    from shrec_score.io import matrix

    monkeypatch.setattr(matrix, "STREAM_ABOVE", 0)
    cla = _write(tmp_path, "n.cla", "PSB 1\n2 4\na 0 2\n0\n1\nb 0 2\n2\n3\n", False)
    path = _write(tmp_path, "r.txt", "0 1 2 3\n1 0 2 3 4\n2 1 0\n3 2 1 0\n", False)
    code, _, err = _run(["score", path, "-r", cla, "--run-format", "matrix", "--quiet"], path)
    assert code == 2 and err == "Error: RUN:2: expected 4 distances per row (as on the first row), got 5\n", err


def test_a_form_feed_inside_a_matrix_row_separates_numbers_and_lines_are_counted_by_newlines(tmp_path):
    """issue 30.21: a form feed is a blank between two numbers, not a line break:
    the error on line 3 is reported on line 3."""
    cla = _write(tmp_path, "n.cla", "PSB 1\n2 4\na 0 2\n0\n1\nb 0 2\n2\n3\n", False)
    path = _write(tmp_path, "r.txt", "0 1\f2 3\n1 0 2 3\n2 1 0 x\n3 2 1 0\n", False)
    code, _, err = _run(["score", path, "-r", cla, "--run-format", "matrix", "--quiet"], path)
    assert code == 2 and err == "Error: RUN:3: expected a number as distance, got 'x'\n", err


def test_without_a_tie_every_tie_mode_gives_the_rules_bytes(tmp_path):
    """issue 30.10: a matrix without a single tie has one order per query:
    --ties expected, optimistic and pessimistic write the rule's numbers, to
    the last bit; with ties in some rows only, the other rows keep theirs."""
    rng = np.random.default_rng(10)
    n = 120
    m = rng.random((n, n))  # float64 draws: no two equal in a row
    np.save(tmp_path / "m.npy", m)
    cla = "PSB 1\n6 120\n" + "".join(f"c{c} 0 20\n" + "".join(f"{c * 20 + i}\n" for i in range(20)) for c in range(6))
    cla_path = _write(tmp_path, "c.cla", cla, False)

    def per_query(path: str, mode: str) -> list[str]:
        code, out, err = _run(["score", path, "-r", cla_path, "--ties", mode, "--format", "csv", "--per-query", "--quiet", "-m", "NN,FT,ST,E,DCG,AP"])
        assert code == 0, err
        return out.splitlines()

    rule = per_query(str(tmp_path / "m.npy"), "rule")
    for mode in ("expected", "optimistic", "pessimistic"):
        assert per_query(str(tmp_path / "m.npy"), mode) == rule, mode
    m[:10] = np.round(m[:10], 1)  # ties in the first ten rows only
    np.save(tmp_path / "t.npy", m)
    tied_rule, tied_expected = per_query(str(tmp_path / "t.npy"), "rule"), per_query(str(tmp_path / "t.npy"), "expected")
    def values(lines: list[str]) -> list[str]:
        return [line.split(",", 1)[1] for line in lines]  # the run's name aside

    assert values(tied_expected[11:]) == values(rule[11:]) == values(tied_rule[11:])
    assert tied_expected[1:11] != tied_rule[1:11]
