"""Text from input for each output format, shown as itself (never read as markup, the table's shape kept); each
first makes control and format characters visible (:func:`shrec_score.errors.visible`; docs/inputs.md)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from .errors import visible

if TYPE_CHECKING:
    from jinja2 import Template
    from rich.text import Text


def html_template(source: str, **filters: Callable[..., str]) -> Template:
    """``source`` as a Jinja2 template that writes every value as HTML text: control characters made
    visible, then escaped (autoescape); a ``Markup`` value (markup made here: an SVG, a style sheet) as it is.

    >>> html_template('<td title="{{ v }}">{{ v }}</td>').render(v='<b>"&\\n')
    '<td title="&lt;b&gt;&#34;&amp;\\\\n">&lt;b&gt;&#34;&amp;\\\\n</td>'
    """
    from jinja2 import Environment, StrictUndefined
    from markupsafe import Markup

    shown = lambda value: value if isinstance(value, Markup) else visible(str(value))
    env = Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True, undefined=StrictUndefined, finalize=shown)
    env.filters.update(filters)
    return env.from_string(source)


#: Markdown: ``< > &`` as HTML entities (no raw HTML passes); ``\ ` * [ ] $ | ~`` and an ``_`` that is not
#: between two letters or digits (there it cannot open or close emphasis, CommonMark) after a backslash.
_MD = re.compile(r"[<>&]|[\\`*\[\]$|~]|(?<![^\W_])_|_(?![^\W_])")
_MD_ENTITY = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}


def md_escape(text: str) -> str:
    """``text`` for a Markdown table cell: shows as itself, keeps the table's shape (``|`` as ``\\|``); a
    leading or trailing space becomes ``&#32;`` (a cell is trimmed); ``FP_relevant`` stays readable."""
    return _edge_spaces(_MD.sub(lambda m: _MD_ENTITY.get(m[0], "\\" + m[0]), visible(text)), "&#32;")


#: LaTeX: the ten special characters (and ``< > |``, which are other glyphs in the OT1 encoding).
_TEX = str.maketrans({
    "\\": "\\textbackslash{}", "{": "\\{", "}": "\\}", "$": "\\$", "&": "\\&", "#": "\\#", "^": "\\textasciicircum{}",
    "_": "\\_", "%": "\\%", "~": "\\textasciitilde{}", "<": "\\textless{}", ">": "\\textgreater{}", "|": "\\textbar{}",
})


def tex_escape(text: str) -> str:
    """``text`` for a LaTeX cell: one line (a newline is first made the visible ``\\n``), every special
    character escaped in one pass, a leading or trailing space as ``\\ `` (a cell drops plain ones)."""
    return _edge_spaces(visible(text).translate(_TEX), "\\ ")


def _edge_spaces(text: str, space: str) -> str:
    """``text`` with its leading and trailing spaces written as ``space`` (a table cell trims plain ones)."""
    return re.sub(r"^ +| +$", lambda m: space * len(m[0]), text)


def rich_text(text: str, style: str = "") -> Text:
    """``text`` as a rich ``Text``: no markup read, controls visible, ``style`` on the text, not a cell's padding."""
    from rich.text import Text

    return Text.styled(visible(text), style)
