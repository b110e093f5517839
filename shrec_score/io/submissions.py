"""What e-mailed submissions bring besides ranked lists: clutter of unzipped archives, ids spelled otherwise than
the relevance spells them and the ``--id-map`` files that map them; the rules: docs/inputs.md, "Runs"."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping

from ..errors import InputError, shown
from .compressed import strip_suffix
from .text import text_lines

#: A run's id -> the relevance's spelling of it (built by :func:`shrec_score.join.id_spelling`).
Spell = Callable[[str], str]

#: Clutter of unzipped submissions (lower case) besides dot-files and ``readme*``.
CLUTTER = frozenset({"thumbs.db", "ehthumbs.db", "desktop.ini", "__macosx", "icon\r", "$recycle.bin"})


def is_clutter(name: str) -> bool:
    """Whether a folder entry is clutter of an unzipped submission: a dot-file, ``README*``, :data:`CLUTTER`."""
    low = name.lower()
    return name.startswith(".") or low.startswith("readme") or low in CLUTTER


def clutter_note(folder: str, listing: Iterable[str] | None) -> str | None:
    """The one note naming the clutter among a run folder's ``listing`` (folders shown with a ``/``), or None when
    there is none (or no listing: the reader names the folder's problem)."""
    names = sorted(n for n in listing or () if is_clutter(n))
    if not names:
        return None
    shown_names = [n + "/" if os.path.isdir(os.path.join(folder, n)) else n for n in names]
    listed = ", ".join(shown(n) if not n.isprintable() else n for n in shown_names[:5])
    more = f", and {len(names) - 5} more" if len(names) > 5 else ""
    return f"{folder}: {len(names)} entries that are not ranked lists passed over ({listed}{more})"


def no_query_error(folder: str, names: list[str], known: Mapping[str, object]) -> InputError:
    """The error for a run folder none of whose files is named after a query, with the likely cause."""
    run = os.path.basename(os.path.normpath(folder))
    stems = [strip_suffix(n).rsplit(".", 1)[0] for n in names]
    return InputError(folder, None, f"no file of run {shown(run)} names a query; {id_hint(stems, list(known))}")


def strip_zeros(run_id: str) -> str:
    """An id without its leading zeros (``0042`` -> ``42``); ``0`` and ``000`` stay ``0``."""
    return run_id.lstrip("0") or ("0" if run_id else run_id)


def id_hint(run_ids: list[str], ids: list[str]) -> str:
    """Why the ids a run spells match none of the relevance's ``ids``, and the option that maps them."""
    stripped = {strip_zeros(q): q for q in ids}
    for r in run_ids:
        q = stripped.get(strip_zeros(r))
        if q is not None:
            return f"ids look zero-padded ({shown(r)} vs {shown(q)}): try --strip-zeros or --id-map FILE"
    for r in run_ids[:20]:  # (a few: every relevance id is tried against each)
        q = next((q for q in ids if q and q != r and q in r), None)
        if q is not None:
            return f"ids look prefixed or suffixed ({shown(r)} vs {shown(q)}): try --id-map FILE"
    first = f"{shown(run_ids[0])}" if run_ids else "none"
    return f"expected files named after query ids (such as {shown(ids[0]) if ids else 'none'}), got {first} and the like; --id-map FILE maps spellings"


def read_id_map(path: str | os.PathLike[str]) -> dict[str, str]:
    """The run's spelling -> the relevance's spelling, from an ``--id-map`` file (two columns a line)."""
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
