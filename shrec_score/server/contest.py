"""CONTEST.yaml, read and checked once at start; its track written out as ``DATA/track.yaml`` (docs/server.md)."""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from typing import Any

from ..errors import InputError, shown

#: How a phase shows scores: to everyone at once, only once it closed, never.
VISIBILITY = ("live", "after-close", "hidden")

#: Optional keys with their defaults (numbers > 0; whole numbers for max_members, cpu_seconds and memory_mb).
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

#: key -> (its check, what it is expected to be); the keys of CONTEST.yaml, then those of a phase.
_text = (lambda v: isinstance(v, str) and v.strip() != "", "a text")
_positive = (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0, "a number > 0")
_whole = (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1, "a whole number >= 1")
KEYS: dict[str, tuple[Any, str]] = {
    "title": _text,
    "track": (lambda v: isinstance(v, (str, dict)), "a preset's path or a mapping of its keys"),
    "relevance": (lambda v: isinstance(v, str) and v != "", "a file path"),
    "data": (lambda v: isinstance(v, str) and v != "", "a folder path"),
    "phases": (lambda v: isinstance(v, list) and v != [], "a list of {name, opens, closes, max_runs, leaderboard}"),
    **dict.fromkeys(LIMITS, _positive),
    **dict.fromkeys(("max_members", "cpu_seconds", "memory_mb"), _whole),
}
PHASE_KEYS: dict[str, tuple[Any, str]] = {
    "name": (_text[0], "a text of its own"),
    **dict.fromkeys(("opens", "closes"), (lambda v: True, "")),  # checked by _time
    "max_runs": _whole,
    "leaderboard": (lambda v: v in VISIBILITY, "one of " + ", ".join(VISIBILITY)),
}


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
    title: str
    preset: str  # DATA/track.yaml, the contest's relevance in it
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
    required = [k for k in KEYS if k not in LIMITS]
    data, lines = read_yaml_mapping(path, read_text(path), "contest settings", ", ".join(required))
    base = os.path.dirname(os.path.abspath(path))

    def fail(key: str, expected: str, got: Any = None) -> InputError:
        shown_got = None if got is None else shown(got if isinstance(got, str) else repr(got))
        return InputError(path, lines.get(key), expected, shown_got)

    _checked(data, KEYS, required, fail)
    relevance, folder = _absolute(base, data["relevance"]), _absolute(base, data["data"])
    if not os.path.isfile(relevance):
        raise fail("relevance", "expected 'relevance' to be an existing file", f"{relevance} not found")
    limits = {k: float(data.get(k, v)) for k, v in LIMITS.items()}
    track, root = data["track"], base  # a preset's keys, its paths made absolute (against its folder, or the contest's)
    if isinstance(track, str):
        track, root = load_config(_absolute(base, track)), os.getcwd()  # its errors and lines; paths relative to the cwd
    else:
        _checked(track, PRESET_KEYS, (), lambda key, expected, got=None: fail("track", expected, got), "track: ")
    paths = [k for k, v in track.items() if PRESET_KEYS[k][2] in ("file", "folder") and isinstance(v, str)]
    decided = ("runs", "html", "plots", "out", "significance", "ground_truth", "dask")  # by the server itself
    settings = {k: _absolute(root, v) if k in paths else v for k, v in track.items() if k not in decided}
    settings["relevance"] = relevance
    phases = _phases(data["phases"], lambda key, expected, got=None: fail("phases", expected, got))
    os.makedirs(folder, exist_ok=True)
    preset = os.path.join(folder, "track.yaml")
    text = "# written by shrec-score serve from " + path.replace("\n", " ") + "\n" + yaml.safe_dump(settings, sort_keys=True)
    if not os.path.exists(preset) or open(preset, encoding="utf-8").read() != text:
        with open(preset + ".tmp", "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(preset + ".tmp", preset)
    load_config(preset)  # every path it names exists and is a regular file
    return Contest(data["title"].strip(), preset, folder, phases, limits)


def _checked(item: dict[Any, Any], keys: dict[str, Any], required: Any, fail: Any, where: str = "") -> None:
    """InputError for a key of ``item`` not in ``keys``, one of ``required`` missing, or a value its check refuses."""
    for key in item:
        if key not in keys:
            raise fail(key, f"{where}unknown key {shown(str(key))}; expected one of: {', '.join(keys)}")
    for key in required:
        if key not in item:
            raise fail(key, f"{where}expected the key {shown(key)}")
    for key, (check, expected, *_) in keys.items():
        if key in item and not check(item[key]):
            raise fail(key, f"{where}expected {shown(key)} to be {expected}", item[key])


def _absolute(base: str, value: str) -> str:
    return os.path.normpath(value if os.path.isabs(value) else os.path.join(base, value))


def _phases(value: list[Any], fail: Any) -> tuple[Phase, ...]:
    out: list[Phase] = []
    for i, item in enumerate(value, start=1):
        where = f"phases[{i}]"
        if not isinstance(item, dict):
            raise fail(None, f"{where}: expected a mapping of {', '.join(PHASE_KEYS)}", item)
        _checked(item, PHASE_KEYS, PHASE_KEYS, fail, f"{where}: ")
        if any(p.name == item["name"] for p in out):
            raise fail(None, f"{where}: expected 'name' to be a text of its own", item["name"])
        opens, closes = (_time(item[k], f"{where}: {k}", fail) for k in ("opens", "closes"))
        if closes <= opens:
            raise fail(None, f"{where}: expected 'closes' after 'opens'", item["closes"])
        out.append(Phase(item["name"], opens, closes, item["max_runs"], item["leaderboard"]))
    return tuple(out)


def _time(value: Any, where: str, fail: Any) -> dt.datetime:
    """An ISO 8601 time with a zone (YAML reads an unquoted one as a datetime)."""
    text = value[:-1] + "+00:00" if isinstance(value, str) and value.endswith("Z") else value  # (3.10 refuses a Z)
    try:
        t = dt.datetime.fromisoformat(text) if isinstance(text, str) else text
    except ValueError:
        t = None
    if not isinstance(t, dt.datetime) or t.tzinfo is None:
        raise fail(None, f"{where}: expected an ISO 8601 time with a zone (2026-03-01T12:00:00Z)", str(value))
    return t
