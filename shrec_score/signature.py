"""The output signature: the shrec-score version and every setting that changes a number (api's scorings give them;
docs/outputs.md), unused (None) ones left out."""

from __future__ import annotations

from typing import Any

from . import __version__

#: The signature's ``ties`` entry per tie mode (``--ties``).
TIE_MODES = {
    "rule": "lists: file order; matrices: distance, then lower column; TREC: score desc, then id desc",
    "expected": "expected: exact mean over every order inside each tie group (equal distances in a matrix row or a list, equal TREC scores in a topic)",
    "optimistic": "optimistic: inside each tie group (equal distances or scores) higher grades first",
    "pessimistic": "pessimistic: inside each tie group (equal distances or scores) higher grades last",
}


def signature(**settings: Any) -> dict[str, Any]:
    """The shrec-score version, then ``settings`` in the order given, those that are None left out."""
    return {"version": __version__, **{k: v for k, v in settings.items() if v is not None}}
