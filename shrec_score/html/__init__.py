"""The organiser's results page, one self-contained ``index.html`` (docs/outputs.md, "The results page";
its escaping, printing and size rules: docs/architecture.md).

The markup is the Jinja2 template ``page.html`` (autoescape on, every value first made visible: no text from
input becomes markup), a ``<section>`` with a stable id per part: ``summary``, ``leaderboard``, ``plots``,
``significance``, ``per-class``, ``per-query``, ``files``.  :mod:`.tables` gives it the tables' values,
:mod:`.explorer` the per-query explorer's JSON block; the style sheet and script are ``report.css`` and
``report.js``.
"""

from __future__ import annotations

import html
import os
import re
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from ..errors import InputError, visible
from ..escape import html_template
from ..measures.registry import display_name
from ..notes import significance_matrix
from ..outdir import publish
from ..plots import plot_files, renumber_svg_ids
from .explorer import EXPLORER_BUDGET, explorer, explorer_data
from .tables import PRINT_COLUMNS, fmt, json_for_script, leaderboard, per_class, sort_key

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
    sig, texts = report.significance, paragraphs(description or "")
    matrix_runs, matrix = significance_matrix(report)
    return html_template(_asset("page.html"), fmt=fmt, key=sort_key).render(
        css=Markup(_asset("report.css")), script=Markup(_asset("report.js")), signature=report.signature,
        heading=title or "Retrieval results", window=title or (texts[0] if texts else "Retrieval results"),
        description=texts, date=page_date() if date is None else date,
        runs=len(report.tables["leaderboard"]), queries=len(set(report.tables["per_query"]["query"].tolist())),
        sort=display_name(report.sort), board=leaderboard(report), print_columns=PRINT_COLUMNS, warnings=report.warnings,
        plots=_plots(report, figures) if plots else None, matrix_runs=matrix_runs, matrix=matrix,
        pairs=None if sig is None else list(sig.itertuples(index=False)), heat=per_class(report),
        explorer=explorer(report), links=links or {}, data=Markup(json_for_script(explorer_data(report))),
    )


def _asset(name: str) -> str:
    """The text of a file shipped beside this module (the page's template, style sheet and script)."""
    from importlib.resources import files

    return files(__name__).joinpath(name).read_text(encoding="utf-8")


def html_files(report: Report, **kwargs: Any) -> dict[str, str]:
    """``{"index.html": to_html(report, **kwargs)}``: the files of ``--html``."""
    return {"index.html": to_html(report, **kwargs)}


def write_html(report: Report, out_dir: str | os.PathLike[str], **kwargs: Any) -> list[str]:
    """Replace the folder ``out_dir`` with ``index.html`` as one unit (keywords: :func:`to_html`'s); the paths written."""
    return publish(out_dir, html_files(report, **kwargs))


def paragraphs(description: str) -> list[str]:
    """A plain-text description's paragraphs: split at blank lines, each one's lines joined by a space.

    >>> paragraphs("One\\nline.\\n\\n  Two.\\n")
    ['One line.', 'Two.']
    """
    blocks = re.split(r"\n[ \t]*\n", description.replace("\r\n", "\n").replace("\r", "\n"))
    return [" ".join(line.strip() for line in b.splitlines() if line.strip()) for b in blocks if b.strip()]


_SVG_JUNK = re.compile(r"<\?xml.*?\?>|<!DOCTYPE.*?>|<!--.*?-->|<metadata>.*?</metadata>", re.S)


def inline_svg(svg: str, prefix: str, title: str) -> str:
    """An SVG file's text ready to sit in the page: prolog, DOCTYPE, comments and metadata dropped; every
    ``id`` renamed ``prefix`` + its number in order of appearance (references follow); the root gets
    ``role="img"``, ``aria-labelledby`` and an escaped ``<title>``."""
    svg = renumber_svg_ids(_SVG_JUNK.sub("", svg).strip(), prefix)
    label = html.escape(visible(title))
    head = f' role="img" aria-labelledby="{prefix}title"><title id="{prefix}title">{label}</title>'
    return re.sub(r"<svg\b([^>]*)>", lambda m: f"<svg{m.group(1)}{head}", svg, count=1)


def _plots(report: Report, figures: Mapping[str, bytes] | None) -> str | list[dict[str, Any]]:
    """The figures to inline (svg, title, wide), or the note that says why there is none."""
    if figures is None:
        try:
            figures = plot_files(report, formats=("svg",))
        except InputError:  # what plot_files raises without matplotlib
            return "No plots: they need matplotlib (pip install 'shrec-score[plots]')."
    out = []
    for i, (name, data) in enumerate((n, d) for n, d in figures.items() if n.endswith(".svg")):
        stem = name[: -len(".svg")]
        bars = f"{display_name(report.sort)} per class, one bar per run" if stem.startswith("per_class_") else None
        title = bars or PLOT_TITLES.get(stem, stem.replace("_", " "))
        svg = inline_svg(data.decode("utf-8"), f"f{i}-", title)
        size = re.search(r'<svg[^>]*\bwidth="([\d.]+)pt"[^>]*\bheight="([\d.]+)pt"', svg)
        wide = size is not None and float(size.group(1)) > 1.7 * float(size.group(2))
        out.append({"svg": Markup(svg), "title": title, "wide": wide})
    return out or "No figure applies to this report."
