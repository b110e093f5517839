"""The pieces every table of the results page shares: text escaped for HTML (:func:`text`) and for the JSON
block (:func:`json_for_script`), numbers as shown (:func:`fmt`) and sorted (:func:`sort_key`), cells.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

from ..escape import html_text as text  # the one HTML escape (report's notebook table uses it too)

BEST = "\u2605"  # the star next to a best value
NEAR_BEST = "\u2248"  # "not significantly different from the best"


def json_for_script(data: Any) -> str:
    """``data`` as JSON safe inside ``<script type="application/json">``: ``< > &``, U+2028 and U+2029 as
    ``\\uXXXX`` escapes (the same string for ``JSON.parse``), so neither ``</script>`` nor ``<!--`` appears.

    >>> json_for_script({"run": "</script><!--"})
    '{"run":"\\\\u003c/script\\\\u003e\\\\u003c!--"}'
    """
    raw = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return re.sub("[<>&\u2028\u2029]", lambda m: f"\\u{ord(m[0]):04x}", raw)


def number(value: Any) -> float | None:
    """``value`` as a float, None when it is undefined (NaN, None) or no number."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def fmt(value: Any) -> str:
    """A value as the tables show it: 4 decimals, empty when undefined."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return f"{float(value):.4f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


def sort_key(value: Any) -> str:
    """A cell's sort key (``data-v``): the number, or empty when undefined (sorted last)."""
    v = number(value)
    return "" if v is None else repr(v)


def scaled(value: Any) -> int | None:
    """A per-query value for the JSON block: round(value x 10^4), None when undefined."""
    v = number(value)
    return None if v is None or math.isinf(v) else int(round(v * 10_000))


def section(ident: str, heading: str, body: Iterable[str]) -> str:
    """A ``<section>`` of the page with its ``<h2>`` heading (``ident``: the stable id)."""
    return "\n".join([f'<section id="{ident}" aria-labelledby="{ident}-h">', f'<h2 id="{ident}-h">{heading}</h2>', *body, "</section>"])


def header(label: str, column_kind: str, first: str, extra: str = "", title: str = "") -> str:
    """A sortable header cell: a ``<button>`` inside ``<th>``."""
    t = f' title="{text(title)}"' if title else ""
    return f'<th scope="col" data-kind="{column_kind}" data-first="{first}"{extra}><button type="button"{t}>{label}</button></th>'


def arrow(higher: bool | None) -> str:
    """The arrow after a measure's name in a header: which way is better."""
    if higher is None:
        return ""
    return ' <span class="dir" aria-hidden="true">' + ("\u2191" if higher else "\u2193") + "</span>"


def best_of(values: Sequence[Any], higher: bool | None) -> str | None:
    """The formatted best value of a column (ties at 4 decimals are all best)."""
    nums = [v for v in (number(x) for x in values) if v is not None]
    if higher is None or not nums:
        return None
    return fmt(max(nums) if higher else min(nums))


def num_cell(value: Any, best: str | None) -> str:
    """A value cell, in bold with a star when it shows the column's ``best``."""
    shown, data = fmt(value), sort_key(value)
    if best is not None and shown and shown == best:
        return f'<td class="num best" data-v="{data}"><strong>{shown}</strong> <span class="star" role="img" aria-label="best">{BEST}</span></td>'
    return f'<td class="num" data-v="{data}">{shown}</td>'
