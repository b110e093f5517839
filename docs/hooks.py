"""MkDocs hooks of the documentation site (mkdocs.yml ``hooks:``).

The pages are written for two readers: GitHub, where a page under docs/
may link a file of the repository (``../configs``), and the site, which
holds docs/ alone.  In the site, a link leaving docs/ loses its target but
keeps its text (each such label names the path already), except
``../CHANGELOG.md``, which is the site's changelog page, made from
CHANGELOG.md here.  Every other link is left to ``mkdocs build --strict``.

The docstrings cross-reference in Sphinx's roles (``:class:`~shrec_score.Report```),
which the API reference would show as they are: the role is dropped and
the name kept (its last part after ``~``), as Sphinx shows it.
"""

from __future__ import annotations

import os
import re
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj):<code>(~?)([\w.]+)(\(\))?(?: &lt;[\w.]+&gt;)?</code>")
OUTSIDE = re.compile(r"\[([^\]]+)\]\(\.\./([^)#\s]+)(#[^)\s]*)?\)")


def _outside(match: re.Match[str]) -> str:
    label, path, anchor = match.group(1), match.group(2), match.group(3) or ""
    if path == "CHANGELOG.md":
        return f"[{label}](changelog.md{anchor})"
    if not os.path.exists(os.path.join(ROOT, path)):
        return match.group(0)  # broken on GitHub too: left for --strict to report
    return label


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if page.file.src_uri == "changelog.md":
        with open(os.path.join(ROOT, "CHANGELOG.md"), encoding="utf-8") as f:
            markdown = f.read()
        # CHANGELOG.md's links are relative to the repository's top: docs/X is X here,
        # anything else is a file outside docs/ (then handled as every page's are)
        markdown = re.sub(r"\]\((?!docs/|[a-z]+:|#)", "](../", markdown).replace("](docs/", "](")
    return OUTSIDE.sub(_outside, markdown)


def _role(match: re.Match[str]) -> str:
    name = match.group(2).rsplit(".", 1)[-1] if match.group(1) else match.group(2)
    return f"<code>{name}{match.group(3) or ''}</code>"


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    return ROLE.sub(_role, html)
