"""Text from input written for each output format: shown as itself, never
read as markup, the table's shape kept.

:func:`md_escape` (Markdown), :func:`tex_escape` (LaTeX) and
:func:`rich_text` (the terminal) each first make control and format
characters visible (:func:`shrec_score.errors.visible`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import visible

if TYPE_CHECKING:
    from rich.text import Text


#: Markdown: characters written with a backslash before them.
_MD_BACKSLASH = frozenset("\\`*_[]$|~")
#: Markdown: characters written as HTML entities, so no raw HTML passes.
_MD_ENTITY = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}


def md_escape(text: str) -> str:
    """``text`` for a Markdown table cell: shows as itself, keeps the table's shape.

    Control and format characters are made visible (a newline becomes the
    two characters ``\\n``); ``\\ ` * _ [ ] $ | ~`` get a backslash (``|``
    as ``\\|`` so no cell is split); ``< > &`` become ``&lt; &gt; &amp;``, so
    no raw HTML passes; a leading or trailing space becomes ``&#32;`` (a
    cell is trimmed).  An ``_`` between two letters or digits is left as it
    is: it cannot open or close emphasis there (CommonMark), and
    ``FP_relevant`` stays readable.

    >>> md_escape("a|b <i>*x*</i> c_d _e_")
    'a\\\\|b &lt;i&gt;\\\\*x\\\\*&lt;/i&gt; c_d \\\\_e\\\\_'
    """
    text = visible(text)
    out = []
    for i, ch in enumerate(text):
        if ch in _MD_ENTITY:
            out.append(_MD_ENTITY[ch])
        elif ch == "_" and 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum():
            out.append(ch)
        elif ch in _MD_BACKSLASH:
            out.append("\\" + ch)
        else:
            out.append(ch)
    return _edge_spaces("".join(out), "&#32;")


#: LaTeX: the ten special characters (and ``< > |``, which are other glyphs in the OT1 encoding).
_TEX = str.maketrans({
    "\\": "\\textbackslash{}", "{": "\\{", "}": "\\}", "$": "\\$", "&": "\\&", "#": "\\#", "^": "\\textasciicircum{}",
    "_": "\\_", "%": "\\%", "~": "\\textasciitilde{}", "<": "\\textless{}", ">": "\\textgreater{}", "|": "\\textbar{}",
})


def tex_escape(text: str) -> str:
    """``text`` for a LaTeX cell: one line, every special character escaped.

    Control and format characters are first made visible (a newline becomes
    ``\\n``, then ``\\textbackslash{}n``), so a row stays one line; then
    ``\\ { } $ & # ^ _ % ~`` (and ``< > |``) are replaced, in one pass; a
    leading or trailing space becomes ``\\ `` (a cell drops plain ones).

    >>> tex_escape("a_b & {c}~")
    'a\\\\_b \\\\& \\\\{c\\\\}\\\\textasciitilde{}'
    """
    return _edge_spaces(visible(text).translate(_TEX), "\\ ")


def _edge_spaces(text: str, space: str) -> str:
    """``text`` with its leading and trailing spaces written as ``space`` (a table cell trims plain ones)."""
    body = text.strip(" ")
    lead = len(text) - len(text.lstrip(" "))
    trail = len(text) - len(body) - lead
    return space * lead + body + space * trail


def rich_text(text: str, style: str = "") -> Text:
    """``text`` as a :class:`rich.text.Text`: no markup read, control characters visible.

    ``style`` covers the characters only, not the padding rich adds to a cell.
    """
    from rich.text import Text

    out = Text(visible(text))
    if style:
        out.stylize(style)
    return out
