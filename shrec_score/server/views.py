"""What the server shows: a team's runs and the leaderboard, as plain data
(the JSON of the API and the pages' rows), each limited to what its phase allows.

The numbers are the CLI's: each run's row of ``per_run.csv`` as its worker
wrote it, ordered by :func:`shrec_score.aggregate.leaderboard` on the
preset's ``sort`` measure (else the first measure column), ties by run name.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import math
from typing import Any

from .contest import Contest

#: per_run.csv's columns before the measures.
FIXED = ("run", "queries")


def per_run_row(text: str) -> dict[str, Any]:
    """A worker's ``per_run.csv`` (a header and one row) as {column: value}, numbers as numbers."""
    header, row = list(csv.reader(io.StringIO(text)))[:2]
    out: dict[str, Any] = {}
    for key, value in zip(header, row):
        if key == "run":
            out[key] = value
        elif key == "queries":
            out[key] = int(value)
        else:
            number = float(value) if value not in ("", "nan", "NaN") else math.nan
            out[key] = None if math.isnan(number) else number
    return out


def run_view(contest: Contest, run: dict[str, Any], now: dt.datetime) -> dict[str, Any]:
    """A run as its team sees it: scores only when its phase shows them."""
    phase = contest.phase(run["phase"])
    out = {
        "id": run["id"],
        "name": run["name"],
        "run": run["label"],
        "phase": run["phase"],
        "status": run["status"],
        "sha256": run["sha256"],
        "submitted": run["submitted"],
        "finished": run["finished"],
    }
    if run["status"] == "failed":
        out["reason"] = run["reason"]
    if run["status"] == "scored" and phase is not None and phase.shows_scores(now):
        out["scores"] = {k: v for k, v in per_run_row(run["per_run"]).items() if k != "run"}
    return out


def sort_measure(contest: Contest, columns: list[str]) -> str:
    measures = [c for c in columns if c not in FIXED]
    return contest.sort if contest.sort in measures else measures[0]


def leaderboard(contest: Contest, runs: list[dict[str, Any]], now: dt.datetime) -> list[dict[str, Any]]:
    """Per phase (hidden phases left out): its columns and rows, best first.

    A phase whose scores are not shown yet (``after-close`` before it
    closes) lists its accepted runs by name, without a number.
    """
    out = []
    for phase in contest.phases:
        if phase.leaderboard == "hidden":
            continue
        mine = [r for r in runs if r["phase"] == phase.name and r["status"] != "failed"]
        entry: dict[str, Any] = {"name": phase.name, "leaderboard": phase.leaderboard, "opens": phase.opens.isoformat(), "closes": phase.closes.isoformat()}
        if not phase.shows_scores(now):
            entry.update(columns=["run", "status"], rows=[{"run": r["label"], "status": "accepted"} for r in sorted(mine, key=lambda r: r["label"])])
        else:
            scored = [per_run_row(r["per_run"]) for r in mine if r["status"] == "scored"]
            entry.update(_ranked(contest, scored))
        out.append(entry)
    return out


def _ranked(contest: Contest, rows: list[dict[str, Any]]) -> dict[str, Any]:
    if not rows:
        return {"columns": ["rank", *FIXED], "rows": []}
    import pandas as pd

    from ..aggregate import leaderboard as order

    columns = list(rows[0])
    frame = pd.DataFrame([[r.get(c) for c in columns] for r in rows], columns=columns)
    for c in columns[2:]:
        frame[c] = frame[c].astype("float64")
    board = order(frame, sort_measure(contest, columns))
    ranked = []
    for record in board.to_dict(orient="records"):
        ranked.append({k: (None if isinstance(v, float) and math.isnan(v) else v.item() if hasattr(v, "item") else v) for k, v in record.items()})
    return {"columns": list(board.columns), "rows": ranked}
