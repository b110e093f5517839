"""Hostile names (issue 16): every renderer escapes every text cell from input.

Run names, query ids, class names, column names and the signature may hold a
newline, ``|``, ``$``, ``{}``, ``<b>``, ``&``, ``\\``, ``%``, ``#``, ``_``,
``^``, ``~``, backticks, ``*``, a tab, an ESC sequence or rich markup.  The
Markdown and LaTeX tables keep their shape and show each name as itself, the
trec lines keep three fields, the terminal gets no markup and no control
character, and CSV and JSON carry the names unchanged.
"""

import html
import io
import json
import re

import pandas as pd
import pytest

import shrec_score
from shrec_score import render
from shrec_score.aggregate import leaderboard_table
from shrec_score.errors import visible
from shrec_score.report import Report
from shrec_score.significance import pairwise
from shrec_score.table import Table

# Two classes of three models; ids and class names hostile too (a .cla splits on whitespace only).
CLASSES = {"a|<i>&$": ["q|1", "q<2>", "q&3"], "b_*`[x]~": ["q$4", "q#5", "q%6"]}
CLA = "PSB 1\n2 6\n" + "".join(f"{c} 0 3\n" + "".join(f"{q}\n" for q in qs) for c, qs in CLASSES.items())
QUERIES = [q for qs in CLASSES.values() for q in qs]

# Run folder names: anything but "/" and NUL.  The value says which list each run returns.
RUNS = {
    "a\nb|c": "mates",
    "<b>x<\\b> & $y$": "others",
    "[bold]x": "mates",
    "[bold red]y[\\bold red]": "others",
    "\x1b[31mred": "one",
    "t\tab\\%#_^~`*{}": "mates",
    "_em_ **st** `co` [l](u)": "others",
    "\ufeffbom": "one",
    " pad ": "mates",
    "plain": "others",
}


def _lists(q):
    mates = [m for qs in CLASSES.values() if q in qs for m in qs if m != q]
    others = [m for qs in CLASSES.values() if q not in qs for m in qs]
    return {"mates": mates + others, "others": others[:1] + mates, "one": mates[:1]}


# NN (first hit a class mate) and FP_relevant (non-relevant models retrieved)
EXPECTED = {"mates": (1.0, 3.0), "others": (0.0, 1.0), "one": (1.0, 0.0)}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    (folder / "c.cla").write_text(CLA)
    for name, kind in RUNS.items():
        run = folder / "runs" / name
        run.mkdir(parents=True)
        for q in QUERIES:
            (run / f"{q}.txt").write_text("\n".join(_lists(q)[kind]) + "\n")
    return shrec_score.score(
        [folder / "runs"], folder / "c.cla", run_format="lists", measures=["NN", "FP_relevant"],
        significance=True, n_resamples=200, seed=1,
    )


def _built():
    """A report built from frames: names with "/" (impossible in a folder name) and a hostile column."""
    runs = ["[bold red]x[/]", "</td><script>alert(1)</script>", "a/b\r\nc", "100% \\textbf{x} & #1"]
    queries = ["q 1", "q\n2", "[red]q3[/red]"]
    col = "my|col_*<i>"
    values = {runs[0]: [0.5, 0.7, 0.9], runs[1]: [0.1, 0.2, 0.3], runs[2]: [0.4, 0.4, 0.4], runs[3]: [1.0, 0.0, 0.5]}
    per_query = pd.DataFrame(
        [{"run": r, "query": q, "class": "[b]c|1", col: v} for r in runs for q, v in zip(queries, values[r])]
    )
    per_run = pd.DataFrame({"run": runs, "queries": [3] * 4, col: [sum(values[r]) / 3 for r in runs]})
    board = leaderboard_table(Table.from_pandas(per_run), col)
    return Report(
        per_query=per_query,
        leaderboard=board,
        pr_curve=pd.DataFrame(columns=["run", "recall", "precision"]),
        measures=[col],
        shown=[col],
        sort=col,
        signature={"version": shrec_score.__version__, "mode": "[bold]m[/]", "relevance": "C:\\x|<y>_z.cla\nEVIL", "queries": 3},
        significance=pairwise(per_query, col, board["run"].tolist(), n_resamples=100, seed=0, higher_is_better=True),
    )


def _fields(report):
    """The constructor arguments of ``report`` but its per-query ranking."""
    return dict(per_query=report.per_query, leaderboard=report.leaderboard, pr_curve=report.pr_curve, measures=report.measures,
                shown=report.shown, sort=report.sort, signature=report.signature, significance=report.significance)


# -- Markdown ------------------------------------------------------------------

UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")
MD_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")  # CommonMark: a backslash before ASCII punctuation


def _md_unescape(cell):
    return html.unescape(MD_ESCAPE.sub(r"\1", cell))


def _md_table(text, n_cols):
    lines = text.split("\n")
    end = lines.index("")
    table, rest = lines[:end], lines[end + 1 :]
    for line in table:
        assert len(UNESCAPED_PIPE.findall(line)) == n_cols + 1, line
        assert "<" not in line and ">" not in line, line
    rows = [[c.strip() for c in UNESCAPED_PIPE.split(line)[1:-1]] for line in table]
    return rows[0], rows[2:], rest


@pytest.mark.parametrize("which", ["scored", "built"])
def test_markdown_table_keeps_its_shape_and_each_name_round_trips(hostile, which):
    report = hostile if which == "scored" else _built()
    n_cols = 3 + len(report.shown)
    head, rows, rest = _md_table(render.to_markdown(report), n_cols)
    assert len(rows) == len(report.leaderboard)
    assert [_md_unescape(h) for h in head] == ["rank", "run", "queries", *(render.display_name(m) for m in report.shown)]
    assert [_md_unescape(r[1]) for r in rows] == [visible(str(r)) for r in report.leaderboard["run"]]
    # the footer: one line, the only HTML is its own <sub> tags
    assert rest == [f"<sub>{rest[0][5:-6]}</sub>", ""]
    assert "<" not in rest[0][5:-6] and ">" not in rest[0][5:-6]
    assert _md_unescape(rest[0][5:-6]) == visible(report.signature_text())


def test_markdown_values_sit_under_their_columns(hostile):
    _, rows, _ = _md_table(render.to_markdown(hostile), 5)
    for row in rows:
        nn, fp = EXPECTED[RUNS[_md_unescape(row[1]).replace("\\n", "\n").replace("\\t", "\t").replace("\\x1b", "\x1b").replace("\\ufeff", "\ufeff")]]
        assert row[2] == "6"
        assert row[3].strip("*") == f"{nn:.4f}" and (row[3].startswith("**") == (nn == 1.0))
        assert row[4].strip("*") == f"{fp:.4f}" and (row[4].startswith("**") == (fp == 0.0))


@pytest.mark.parametrize("which", ["scored", "built"])
def test_markdown_renders_each_name_as_plain_text(hostile, which):
    """A real CommonMark + GFM-table parser sees one text per cell: no emphasis, code, link or HTML."""
    markdown_it = pytest.importorskip("markdown_it")
    report = hostile if which == "scored" else _built()
    md = markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"])
    tokens = md.parse(render.to_markdown(report))
    cells, in_body = [], False
    for tok in tokens:
        in_body = (in_body or tok.type == "tbody_open") and tok.type != "tbody_close"
        if in_body and tok.type == "inline":
            kinds = {c.type for c in tok.children}
            assert kinds <= {"text", "strong_open", "strong_close"}, (tok.content, kinds)
            cells.append("".join(c.content for c in tok.children if c.type == "text"))
    n_cols = 3 + len(report.shown)
    assert len(cells) == n_cols * len(report.leaderboard)
    assert cells[1::n_cols] == [visible(str(r)) for r in report.leaderboard["run"]]
    footer = [t for t in tokens if t.type == "inline"][-1]
    assert [c.type for c in footer.children if c.type.startswith("html")] == ["html_inline", "html_inline"]


def test_md_escape_rules():
    assert render.md_escape("FP_relevant") == "FP_relevant"  # intraword "_" cannot emphasise
    assert render.md_escape("_x_") == "\\_x\\_" and render.md_escape("a__b") == "a\\_\\_b"
    assert render.md_escape("a|b") == "a\\|b"
    assert render.md_escape("<b>&") == "&lt;b&gt;&amp;"
    assert render.md_escape("a\nb") == "a\\\\nb"  # visible "\n", its backslash escaped
    assert render.md_escape("*`$[]\\~") == "\\*\\`\\$\\[\\]\\\\\\~"
    assert render.md_escape(" x ") == "&#32;x&#32;"


# -- LaTeX ---------------------------------------------------------------------

TEX_ESCAPES = {
    "\\textbackslash{}": "\\", "\\textasciicircum{}": "^", "\\textasciitilde{}": "~",
    "\\textless{}": "<", "\\textgreater{}": ">", "\\textbar{}": "|",
    "\\ ": "\0", "\\{": "{", "\\}": "}", "\\$": "$", "\\&": "&", "\\#": "#", "\\_": "_", "\\%": "%",
}


def _tex_cells(row):
    """The literal text of each cell of a tabular row; fails on any unescaped special character.

    Plain spaces at the edges of a cell are dropped (as LaTeX does), escaped ones (``\\ ``) kept.
    """
    assert row.endswith(" \\\\") and "\n" not in row, row
    body, cells, cur, bold, i = row[: -len(" \\\\")], [], "", 0, 0
    while i < len(body):
        if body.startswith("\\textbf{", i):
            bold, i = bold + 1, i + len("\\textbf{")
            continue
        esc = next((e for e in TEX_ESCAPES if body.startswith(e, i)), None)
        if esc is not None:
            cur, i = cur + TEX_ESCAPES[esc], i + len(esc)
            continue
        ch = body[i]
        if ch == "}" and bold:
            bold -= 1
        elif ch == "&":
            assert not bold, row
            cells.append(cur.strip().replace("\0", " "))
            cur = ""
        else:
            assert ch not in "\\{}$&#^_%~", f"unescaped {ch!r} at {i} in {row!r}"
            cur += ch
        i += 1
    assert not bold, row
    return [*cells, cur.strip().replace("\0", " ")]


@pytest.mark.parametrize("which", ["scored", "built"])
def test_latex_rows_are_one_line_with_every_special_escaped(hostile, which):
    report = hostile if which == "scored" else _built()
    has_ci = f"{report.sort}_ci_low" in report.leaderboard.columns  # the scored report has significance: its CI column
    n_cols = 3 + len(report.shown) + has_ci
    # the significance marks are the renderer's own LaTeX (issue 31.16), not text from input
    lines = render.to_latex(report).replace("$^\\dagger$", "").split("\n")
    assert lines[0] == f"% {visible(report.signature_text())}"
    # a complete table environment (issue 31.16): the booktabs comment, caption and label, then the tabular
    assert lines[2:4] == ["\\begin{table}[htbp]", "\\centering"] and lines[5] == "\\label{tab:leaderboard}"
    assert lines[6:8] == [f"\\begin{{tabular}}{{rlr{'r' * (n_cols - 3)}}}", "\\toprule"]
    assert lines[9] == "\\midrule"
    n = len(report.leaderboard)
    assert lines[10 + n : 12 + n] == ["\\bottomrule", "\\end{tabular}"] and lines[12 + n] == "\\end{table}"
    rows = [lines[8], *lines[10 : 10 + n]]
    for row in rows:
        assert len(re.findall(r"(?<!\\)&", row)) == n_cols - 1, row
    cells = [_tex_cells(row) for row in rows]
    assert all(len(c) == n_cols for c in cells)
    ci = ["95% CI"] * has_ci
    assert cells[0] == ["rank", "run", "queries", *(render.display_name(m) for m in report.shown[:1]), *ci, *(render.display_name(m) for m in report.shown[1:])]
    assert [c[1] for c in cells[1:]] == [visible(str(r)) for r in report.leaderboard["run"]]
    assert [c[0] for c in cells[1:]] == [str(k) for k in range(1, n + 1)]


def test_tex_escape_rules():
    assert render.tex_escape("\\{}$&#^_%~") == (
        "\\textbackslash{}\\{\\}\\$\\&\\#\\textasciicircum{}\\_\\%\\textasciitilde{}"
    )
    assert render.tex_escape("a\nb") == "a\\textbackslash{}nb"
    assert _tex_cells(render.tex_escape("x\\y{z}") + " \\\\") == ["x\\y{z}"]
    assert render.tex_escape(" pad ") == "\\ pad\\ "


# -- trec ------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["scored", "built"])
@pytest.mark.parametrize("per_query", [False, True])
def test_trec_lines_keep_three_fields(hostile, which, per_query):
    report = hostile if which == "scored" else _built()
    lines = render.to_trec(report, per_query=per_query).split("\n")
    assert lines[-1] == ""
    lines = lines[:-1]
    n_values = report.per_query[report.measures].notna().sum().sum() if per_query else 0
    assert len(lines) == len(report.leaderboard) * (2 + len(report.measures)) + n_values
    for line in lines:
        fields = line.split("\t")
        assert len(fields) == 3, line
        assert fields[0].rstrip() and not re.search(r"\s", fields[0].rstrip()), line
        assert not re.search(r"\s", fields[1] + fields[2]), line
        assert line.split() == [f.strip() for f in fields]  # a whitespace-splitting reader agrees
    runids = [ln.split("\t")[2] for ln in lines if ln.startswith("runid ")]
    assert runids == [visible(str(r)).replace(" ", "\\x20") for r in report.leaderboard["run"]]


def test_trec_field_rules():
    assert render.trec_field("my run\tv2\n") == "my\\x20run\\tv2\\n"
    assert render.trec_field("plain_run") == "plain_run"


# -- rich terminal -----------------------------------------------------------------


def _rich(report, **kw):
    from rich.console import Console

    buf = io.StringIO()
    render.to_rich(report, Console(file=buf, width=200, color_system=None), **kw)
    return buf.getvalue()


def test_rich_prints_markup_literally_and_no_control_character(hostile):
    out = _rich(hostile, per_query=True)
    assert "\x1b" not in out and "\t" not in out and "\ufeff" not in out
    assert "[bold]x" in out and "[bold red]y[\\bold red]" in out
    assert "\\x1b[31mred" in out and "\\ufeffbom" in out and "t\\tab\\%#_^~`*{}" in out
    assert "a\\nb|c" in out and "<b>x<\\b> & $y$" in out
    assert "q|1" in out and "q<2>" in out and "a|<i>&$" in out and "b_*`[x]~" in out  # per-query table
    sig_table = out[out.index("Pairwise randomization tests") :]
    assert "[bold]x" in sig_table and "\\x1b[31mred" in sig_table
    # every run on its own leaderboard line
    board = out[: out.index("Pairwise randomization tests")]
    for name in RUNS:
        assert sum(visible(name.strip()) in line for line in board.splitlines()) >= 1, name


def test_rich_built_report_title_caption_header_and_ranking(hostile):
    report = _built()
    out = _rich(report, per_query=True)
    assert "\x1b" not in out and "\r" not in out
    assert "[bold red]x[/]" in out and "</td><script>alert(1)</script>" in out and "a/b\\r\\nc" in out
    assert "my|col_*<i>" in out  # title and column header
    assert "[bold]m[/]" in out  # caption (signature mode)
    assert "C:\\x|<y>_z.cla\\nEVIL" in out  # signature line, one line
    assert "[red]q3[/red]" in out and "q\\n2" in out and "[b]c|1" in out
    ranked = Report(**_fields(report), ranking=pd.DataFrame(
        {"query": ["[red]q3[/red]"] * 2, "rank": [1, 2], "run": ["[bold red]x[/]", "a/b\r\nc"], "value": [0.9, 0.4]}
    ), rank_by="other")
    out = _rich(ranked, per_query=True)
    assert "[red]q3[/red]" in out and "[bold red]x[/] 0.9000 > a/b\\r\\nc 0.4000" in out and "\x1b" not in out


def test_rich_keeps_bold_on_the_best_value_only(hostile):
    from rich.console import Console

    buf = io.StringIO()
    render.to_rich(hostile, Console(file=buf, width=200, force_terminal=True, color_system="standard"))
    out = buf.getvalue()
    lines = out.splitlines()
    line = next(ln for ln in lines if "\\x1b[31mred" in ln)  # NN 1, FP_relevant 0: both best
    assert "\x1b[1m1.0000\x1b[0m" in line and "\x1b[1m0.0000\x1b[0m" in line
    line = next(ln for ln in lines if "[bold]x" in ln)  # NN 1 (best), FP_relevant 3 (worst)
    assert "\x1b[1m1.0000\x1b[0m" in line and " 3.0000 " in line
    assert "\x1b[1m[bold]x" not in line  # the name is neither bold nor read as markup
    assert "\x1b[31m" not in out


# -- CSV and JSON ----------------------------------------------------------------


def test_csv_and_json_round_trip_newline_comma_and_quote(tmp_path):
    names = ['a,"b"\nc', "x'y,z\r\n", "plain"]
    (tmp_path / "c.cla").write_text(CLA)
    for name in names:
        for q in QUERIES:
            (tmp_path / "runs" / name).mkdir(parents=True, exist_ok=True)
            (tmp_path / "runs" / name / f"{q}.txt").write_text("\n".join(_lists(q)["mates"]) + "\n")
    report = shrec_score.score([tmp_path / "runs"], tmp_path / "c.cla", run_format="lists", measures=["NN"])
    board = pd.read_csv(io.StringIO(render.to_csv(report)), keep_default_na=False)
    assert sorted(board["run"]) == sorted(names) and board["NN"].tolist() == [1.0] * 3
    per_query = pd.read_csv(io.StringIO(render.to_csv(report, per_query=True)), keep_default_na=False)
    assert sorted(set(per_query["run"])) == sorted(names) and sorted(set(per_query["query"])) == sorted(QUERIES)
    assert sorted(set(per_query["class"])) == sorted(CLASSES)
    doc = json.loads(render.to_json(report, per_query=True))
    assert sorted(r["run"] for r in doc["leaderboard"]) == sorted(names)
    assert {r["query"] for r in doc["per_query"]} == set(QUERIES)
