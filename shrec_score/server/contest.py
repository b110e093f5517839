"""CONTEST.yaml: a contest's settings, read and checked once at start (docs/server.md#contestyaml).

A bad key or value is an :class:`~shrec_score.errors.InputError` naming the file and the line.  The
track is written out as the preset ``DATA/track.yaml`` (paths absolute, the contest's
``relevance:``), the one file the worker, ``contest export`` and the upload check read.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from typing import Any

from ..errors import InputError, shown

#: How a phase shows scores: to everyone at once, only once it closed, never.
VISIBILITY = ("live", "after-close", "hidden")

#: Optional keys with their defaults (numbers >= 1).
LIMITS: dict[str, float] = {
    "max_upload_mb": 50,  # the body of one upload
    "max_unpacked_mb": 500,  # an archive's members, uncompressed, together
    "max_members": 5000,  # an archive's members
    "max_ratio": 200,  # uncompressed / compressed size of an archive
    "rate_limit": 30,  # uploads per token per minute
    "cpu_seconds": 300,  # the scoring of one run
    "memory_mb": 4096,
    "wall_seconds": 600,
}

REQUIRED = ("title", "track", "relevance", "data", "phases")
KEYS = (*REQUIRED, *LIMITS)
PHASE_KEYS = ("name", "opens", "closes", "max_runs", "leaderboard")


@dataclass(frozen=True)
class Phase:
    name: str
    opens: dt.datetime
    closes: dt.datetime
    max_runs: int
    leaderboard: str

    def shows_scores(self, now: dt.datetime) -> bool:
        """Whether the phase's scores may be shown (to their team and on the leaderboard)."""
        return self.leaderboard == "live" or (self.leaderboard == "after-close" and now >= self.closes)


@dataclass(frozen=True)
class Contest:
    path: str
    title: str
    preset: str  # DATA/track.yaml
    relevance: str
    data: str
    phases: tuple[Phase, ...]
    limits: dict[str, float]

    def open_phase(self, now: dt.datetime) -> Phase | None:
        return next((p for p in self.phases if p.opens <= now < p.closes), None)

    def phase(self, name: str) -> Phase | None:
        return next((p for p in self.phases if p.name == name), None)


def now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def stamp() -> str:
    """Now, as the store keeps times (ISO 8601, seconds, UTC)."""
    return now().isoformat(timespec="seconds")


def load_contest(path: str | os.PathLike[str]) -> Contest:
    """Read and check CONTEST.yaml; writes the track's preset into the data folder."""
    import yaml

    from ..config import KEYS as PRESET_KEYS
    from ..config import load_config, read_yaml_mapping
    from ..io.text import read_text

    path = os.fspath(path)
    data, lines = read_yaml_mapping(path, read_text(path), "contest settings", ", ".join(REQUIRED))
    base = os.path.dirname(os.path.abspath(path))

    def fail(key: str, expected: str, got: Any = None) -> InputError:
        shown_got = None if got is None else shown(got if isinstance(got, str) else repr(got))
        return InputError(path, lines.get(key), expected, shown_got)

    for key in data:
        if key not in KEYS:
            raise fail(key, f"unknown key {shown(str(key))}; expected one of: {', '.join(KEYS)}")
    for key in REQUIRED:
        if key not in data:
            raise InputError(path, None, f"expected the key {shown(key)}")
    for key, what in (("title", "a text"), ("relevance", "a file path"), ("data", "a folder path")):
        if not isinstance(data[key], str) or not (data[key].strip() if key == "title" else data[key]):
            raise fail(key, f"expected {key!r} to be {what}", data[key])
    title, track = data["title"], data["track"]
    relevance, folder = _absolute(base, data["relevance"]), _absolute(base, data["data"])
    if not os.path.isfile(relevance):
        raise fail("relevance", "expected 'relevance' to be an existing file", f"{relevance} not found")
    limits = dict(LIMITS)
    for key in [k for k in LIMITS if k in data]:
        value = data[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise fail(key, f"expected {shown(key)} to be a number > 0", value)
        limits[key] = float(value)
    # the track: a preset's keys, its paths made absolute (against the preset's folder, or the contest's)
    if isinstance(track, str):
        settings = load_config(_absolute(base, track))  # its own errors, its own lines
        settings = {k: os.path.abspath(v) if PRESET_KEYS[k][2] in ("file", "folder") and isinstance(v, str) else v for k, v in settings.items()}
    elif isinstance(track, dict):
        settings = {}
        for key, value in track.items():
            if key not in PRESET_KEYS:
                raise fail("track", f"track: unknown key {shown(str(key))}; expected one of: {', '.join(PRESET_KEYS)}")
            check, expected, kind = PRESET_KEYS[key]
            if not check(value):
                raise fail("track", f"track: expected {shown(key)} to be {expected}", value)
            settings[key] = _absolute(base, value) if kind in ("file", "folder") and isinstance(value, str) else value
    else:
        raise fail("track", "expected 'track' to be a preset's path or a mapping of its keys", track)
    for key in ("runs", "html", "plots", "out", "significance", "ground_truth", "dask"):  # what the server decides itself
        settings.pop(key, None)
    settings["relevance"] = relevance
    phases = _phases(data["phases"], lambda expected, got=None: fail("phases", expected, got))
    os.makedirs(folder, exist_ok=True)
    preset = os.path.join(folder, "track.yaml")
    text = "# written by shrec-score serve from " + path.replace("\n", " ") + "\n" + yaml.safe_dump(settings, sort_keys=True)
    if not os.path.exists(preset) or open(preset, encoding="utf-8").read() != text:
        tmp = preset + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, preset)
    load_config(preset)  # every path it names exists and is a regular file
    return Contest(path, title.strip(), preset, relevance, folder, phases, limits)


def _absolute(base: str, value: str) -> str:
    return os.path.normpath(value if os.path.isabs(value) else os.path.join(base, value))


def _phases(value: Any, fail: Any) -> tuple[Phase, ...]:
    if not isinstance(value, list) or not value:
        raise fail("expected 'phases' to be a list of {name, opens, closes, max_runs, leaderboard}", value)
    out: list[Phase] = []
    for i, item in enumerate(value, start=1):
        where = f"phases[{i}]"
        if not isinstance(item, dict):
            raise fail(f"{where}: expected a mapping of {', '.join(PHASE_KEYS)}", item)
        for key in item:
            if key not in PHASE_KEYS:
                raise fail(f"{where}: unknown key {shown(str(key))}; expected one of: {', '.join(PHASE_KEYS)}")
        for key in PHASE_KEYS:
            if key not in item:
                raise fail(f"{where}: expected the key {shown(key)}")
        name, runs, board = item["name"], item["max_runs"], item["leaderboard"]
        if not isinstance(name, str) or not name.strip() or any(p.name == name for p in out):
            raise fail(f"{where}: expected 'name' to be a text of its own", name)
        if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
            raise fail(f"{where}: expected 'max_runs' to be a whole number >= 1", runs)
        if board not in VISIBILITY:
            raise fail(f"{where}: expected 'leaderboard' to be one of {', '.join(VISIBILITY)}", board)
        opens, closes = (_time(item[k], f"{where}: {k}", fail) for k in ("opens", "closes"))
        if closes <= opens:
            raise fail(f"{where}: expected 'closes' after 'opens'", item["closes"])
        out.append(Phase(name, opens, closes, runs, board))
    return tuple(out)


def _time(value: Any, where: str, fail: Any) -> dt.datetime:
    """An ISO 8601 time with a zone (YAML reads an unquoted one as a datetime)."""
    try:
        t = dt.datetime.fromisoformat(value) if isinstance(value, str) else value
    except ValueError:
        t = None
    if not isinstance(t, dt.datetime) or t.tzinfo is None:
        raise fail(f"{where}: expected an ISO 8601 time with a zone (2026-03-01T12:00:00Z)", str(value))
    return t
