"""Reader of ``--id-map`` files (two columns a line: the run's spelling of an id, then the relevance's); the rules:
docs/inputs.md, "Ids spelled otherwise"."""

from __future__ import annotations

import os

from ..errors import InputError, shown
from .text import text_lines


def read_id_map(path: str | os.PathLike[str]) -> dict[str, str]:
    """The run's spelling -> the relevance's spelling, from an ``--id-map`` file."""
    path = os.fspath(path)
    mapped: dict[str, tuple[str, int]] = {}  # run id -> (relevance id, its first line)
    for n, line in text_lines(path):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        fields = [f.strip() for f in (text.split(",") if "," in text else text.split())]
        if len(fields) != 2 or not all(fields):
            raise InputError(path, n, 'expected "<run id> <relevance id>" (two columns)', f"{sum(map(bool, fields))} fields")
        run_id, rel_id = fields
        mapped_to, first = mapped.setdefault(run_id, (rel_id, n))
        if mapped_to != rel_id:
            raise InputError(path, n, f"expected each run id once; {shown(run_id)} is already mapped at line {first}")
    return {run_id: rel_id for run_id, (rel_id, _) in mapped.items()}
