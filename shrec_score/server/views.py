"""What the server shows: a team's runs and the leaderboard (the CLI's ``per_run.csv`` rows) as plain data for the
API's JSON and the pages, each limited to what its phase allows (docs/server.md).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import math
from typing import Any

from .contest import Contest

#: per_run.csv's columns before the measures, with their types.
FIXED = {"run": str, "queries": int}
#: A run's fields as the API shows them (``run`` is the stored ``label``).
SHOWN = ("id", "name", "run", "phase", "status", "sha256", "submitted", "finished")


def per_run_row(text: str) -> dict[str, Any]:
    """A scoring child's ``per_run.csv`` (a header and one row) as {column: value}, numbers as numbers."""
    header, row = list(csv.reader(io.StringIO(text)))[:2]
    return {k: FIXED[k](v) if k in FIXED else None if v == "" else _plain(float(v)) for k, v in zip(header, row)}


def _plain(value: Any) -> Any:
    """A JSON value: NaN as None."""
    return None if isinstance(value, float) and math.isnan(value) else value


def run_views(contest: Contest, runs: list[dict[str, Any]], now: dt.datetime) -> list[dict[str, Any]]:
    """Runs as their team sees them: scores only when their phase shows them."""
    out = []
    for run in runs:
        phase = contest.phase(run["phase"])
        view = {k: run["label" if k == "run" else k] for k in SHOWN}
        if run["status"] == "failed":
            view["reason"] = run["reason"]
        if run["status"] == "scored" and phase is not None and phase.shows_scores(now):
            view["scores"] = {k: v for k, v in per_run_row(run["per_run"]).items() if k != "run"}
        out.append(view)
    return out


def leaderboard(contest: Contest, runs: list[dict[str, Any]], now: dt.datetime, sort: str) -> list[dict[str, Any]]:
    """Per phase not hidden: its columns and rows, best first by the CLI's column ``sort`` (:attr:`.RunChecker.sort`);
    a phase whose scores are not shown yet (``after-close`` before it closes) lists its accepted runs by name."""
    out = []
    for phase in contest.phases:
        if phase.leaderboard == "hidden":
            continue
        mine = [r for r in runs if r["phase"] == phase.name and r["status"] != "failed"]
        entry: dict[str, Any] = {"name": phase.name, "leaderboard": phase.leaderboard, "opens": phase.opens.isoformat(),
                                 "closes": phase.closes.isoformat()}
        if not phase.shows_scores(now):
            rows = [{"run": r["label"], "status": "accepted"} for r in sorted(mine, key=lambda r: r["label"])]
            entry.update(columns=["run", "status"], rows=rows)
        else:
            entry.update(_ranked(sort, [per_run_row(r["per_run"]) for r in mine if r["status"] == "scored"]))
        out.append(entry)
    return out


def _ranked(sort: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    if not rows:
        return {"columns": ["rank", *FIXED], "rows": []}
    from ..aggregate import leaderboard_table
    from ..table import Table

    measures = list(rows[0])[len(FIXED) :]
    measure = sort if sort in measures else measures[0]  # (a row scored before a preset changed)
    columns: dict[str, Any] = {k: [r[k] for r in rows] for k in FIXED}
    columns.update({m: [math.nan if r.get(m) is None else r[m] for r in rows] for m in measures})  # floats
    board = leaderboard_table(Table(columns, len(rows)), measure)
    return {"columns": board.columns, "rows": [dict(zip(board.columns, map(_plain, r))) for r in board.records()]}
