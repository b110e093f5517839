"""The organiser's results page, one self-contained ``index.html`` (docs/outputs.md, "The results page";
its escaping, printing and size rules: docs/architecture.md).

This module assembles the page, a ``<section>`` with a stable id per part: ``summary``, ``leaderboard``,
``plots``, ``significance``, ``per-class``, ``per-query``, ``files``.  :mod:`.tables` writes the leaderboard,
the pairwise tests and the heat map, :mod:`.explorer` the per-query explorer and its JSON block, :mod:`.cells`
the escaping and shared cells; the style sheet and script are the package data ``report.css`` and ``report.js``.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..measures.registry import display_name
from ..outdir import publish
from .cells import json_for_script, section, text
from .explorer import EXPLORER_BUDGET, explorer, explorer_data
from .tables import PRINT_COLUMNS, leaderboard, per_class, significance

if TYPE_CHECKING:
    from ..report import Report

__all__ = ["EXPLORER_BUDGET", "PLOT_TITLES", "PRINT_COLUMNS", "html_files", "inline_svg", "json_for_script", "to_html", "write_html"]

#: Plot file stem (see :func:`shrec_score.plots.plot_files`) -> accessible title.
PLOT_TITLES = {
    "pr_curves": "Precision-recall curves of every run (mean precision at each recall level)",
    "ndcg_vs_rank": "Mean normalized discounted cumulated gain (NDCG) against rank, every run",
    "cg_vs_recall": "Mean cumulated gain (CG) and discounted cumulated gain (DCG) against recall, every run",
}


def page_date() -> str:
    """Today (UTC), or the day of SOURCE_DATE_EPOCH when set (reproducible pages, as reproducible builds do)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    return time.strftime("%Y-%m-%d", time.gmtime(int(epoch) if epoch.isdigit() else None))


def to_html(
    report: Report, *, title: str | None = None, description: str | None = None, date: str | None = None,
    figures: Mapping[str, bytes] | None = None, plots: bool = True, links: Mapping[str, str] | None = None,
) -> str:
    """The results page of ``report``, one self-contained HTML document.

    ``title``: the heading and window title (default "Retrieval results"; the window then takes the
    description's first paragraph).  ``description``: plain text, escaped, a paragraph per block of lines.
    ``date``: shown as given (default :func:`page_date`; give it, or set SOURCE_DATE_EPOCH, for a byte-identical page).  ``figures``:
    :func:`shrec_score.plots.plot_files`'s files, the ``.svg`` ones put inline; None draws them here when
    matplotlib is installed.  ``plots=False``: no plot section.  ``links``: label -> href of the files
    written beside the page.
    """
    if date is None:
        date = page_date()
    heading = title or "Retrieval results"
    window = title or next(iter(paragraphs(description or "")), heading)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta name="generator" content="shrec-score {text(report.signature.get("version", ""))}">',
        f"<title>{text(window)}</title>",
        f"<style>\n{_asset('report.css')}</style>",
        "</head>",
        "<body>",
        '<a class="skip" href="#leaderboard">Skip to the leaderboard</a>',
        "<main>",
        _summary(report, heading, description, date),
        leaderboard(report),
        _plots(report, figures) if plots else "",
        significance(report) if report.significance is not None else "",
        per_class(report),
        explorer(report),
        _files(links),
        "</main>",
        f'<script type="application/json" id="shrec-data">{json_for_script(explorer_data(report))}</script>',
        f"<script>\n{_asset('report.js')}</script>",
        "</body>",
        "</html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def _asset(name: str) -> str:
    """The text of a file shipped beside this module (the page's style sheet and script)."""
    from importlib.resources import files

    return files(__name__).joinpath(name).read_text(encoding="utf-8")


def html_files(report: Report, **kwargs: Any) -> dict[str, str]:
    """``{"index.html": to_html(report, **kwargs)}``: the files of ``--html``."""
    return {"index.html": to_html(report, **kwargs)}


def write_html(report: Report, out_dir: str | os.PathLike[str], **kwargs: Any) -> list[str]:
    """Replace the folder ``out_dir`` with ``index.html`` as one unit (keywords: :func:`to_html`'s); the paths written."""
    return publish(out_dir, html_files(report, **kwargs))


def _summary(report: Report, heading: str, description: str | None, date: str) -> str:
    sig = "".join(f"<dt>{text(k)}</dt><dd>{text(v)}</dd>" for k, v in report.signature.items())
    out = ['<header id="summary">', f"<h1>{text(heading)}</h1>"]
    if description:
        out.append('<div class="description">' + "".join(f"<p>{text(p)}</p>" for p in paragraphs(description)) + "</div>")
    pq = report.per_query
    runs, queries = len(report.tables["leaderboard"]), pq["query"].nunique() if len(pq) else 0
    out.append(
        f'<p class="meta">Scored on <time datetime="{text(date)}">{text(date)}</time>; {runs} run{"s" if runs != 1 else ""}, '
        f"{queries} quer{'ies' if queries != 1 else 'y'}; leaderboard sorted by {text(display_name(report.sort))}.</p>"
    )
    out.append(f'<details class="signature"><summary>Signature (every setting that changes a number)</summary><dl>{sig}</dl></details>')
    out.append("</header>")
    return "\n".join(out)


def paragraphs(description: str) -> list[str]:
    """A plain-text description's paragraphs: split at blank lines, each one's lines joined by a space.

    >>> paragraphs("One\\nline.\\n\\n  Two.\\n")
    ['One line.', 'Two.']
    """
    blocks = re.split(r"\n[ \t]*\n", description.replace("\r\n", "\n").replace("\r", "\n"))
    return [" ".join(line.strip() for line in b.splitlines() if line.strip()) for b in blocks if b.strip()]


def _figures(report: Report, figures: Mapping[str, bytes] | None) -> dict[str, bytes] | None:
    if figures is not None:
        return dict(figures)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return None
    from ..plots import plot_files

    return plot_files(report, formats=("svg",))


_SVG_JUNK = re.compile(r"<\?xml.*?\?>|<!DOCTYPE.*?>|<!--.*?-->|<metadata>.*?</metadata>", re.S)
_SVG_ID = re.compile(r'\bid="([^"]+)"')


def inline_svg(svg: str, prefix: str, title: str) -> str:
    """An SVG file's text ready to sit in the page: prolog, DOCTYPE, comments and metadata dropped; every
    ``id`` renamed ``prefix`` + its number in order of appearance (references follow); the root gets
    ``role="img"``, ``aria-labelledby`` and an escaped ``<title>``."""
    svg = _SVG_JUNK.sub("", svg).strip()
    new = {old: f"{prefix}{i}" for i, old in enumerate(dict.fromkeys(_SVG_ID.findall(svg)))}
    svg = _SVG_ID.sub(lambda m: f'id="{new[m.group(1)]}"', svg)
    svg = re.sub(r"#([A-Za-z_][\w.:-]*)", lambda m: f"#{new[m.group(1)]}" if m.group(1) in new else m.group(0), svg)
    head = f' role="img" aria-labelledby="{prefix}title"><title id="{prefix}title">{text(title)}</title>'
    return re.sub(r"<svg\b([^>]*)>", lambda m: f"<svg{m.group(1)}{head}", svg, count=1)


def _plots(report: Report, figures: Mapping[str, bytes] | None) -> str:
    files = _figures(report, figures)
    if files is None:
        return section("plots", "Plots", ['<p class="note">No plots: they need matplotlib (pip install \'shrec-score[plots]\').</p>'])
    body = []
    for i, (name, data) in enumerate((n, d) for n, d in files.items() if n.endswith(".svg")):
        stem = name[: -len(".svg")]
        bars = f"{display_name(report.sort)} per class, one bar per run" if stem.startswith("per_class_") else None
        title = bars or PLOT_TITLES.get(stem, stem.replace("_", " "))
        svg = inline_svg(data.decode("utf-8"), f"f{i}-", title)
        size = re.search(r'<svg[^>]*\bwidth="([\d.]+)pt"[^>]*\bheight="([\d.]+)pt"', svg)
        wide = size is not None and float(size.group(1)) > 1.7 * float(size.group(2))
        body.append(
            f'<figure class="plot{" wide" if wide else ""}"><div class="figbox">{svg}</div><figcaption>{text(title)}</figcaption></figure>'
        )
    if not body:
        return section("plots", "Plots", ['<p class="note">No figure applies to this report.</p>'])
    return section("plots", "Plots", ['<div class="plots">', *body, "</div>"])


def _files(links: Mapping[str, str] | None) -> str:
    if not links:
        return section("files", "Files", ['<p class="note">No data files were written beside this page (use --out with --html).</p>'])
    items = "".join(f'<li><a href="{text(href)}">{text(label)}</a></li>' for label, href in links.items())
    return section("files", "Files", ["<p>Written beside this page by the same scoring:</p>", f'<ul class="files">{items}</ul>'])


