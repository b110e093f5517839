"""Track presets in YAML: describe a track once, score every run the same way.

Read with ``yaml.safe_load`` semantics (``yaml.compose`` on the safe loader,
which also gives line numbers).  Paths are relative to the config file.
Command-line options override the config.  The publishing keys (``out``,
``plots``, ``html``, ``significance``, ``title``, ``description``) make a
preset the whole command an organiser runs; each has a flag that overrides
it, the negative included (``--no-plots``, ``--no-html``,
``--no-significance``, ``--no-out``).  An unknown key, a value of the
wrong type or a missing file is an :class:`InputError` naming the key, the
file and the line.  Paths must name regular files (or folders, for
``runs``): a FIFO or a device is refused before anything opens it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from .errors import InputError, shown


def _str(v: Any) -> bool:
    return isinstance(v, str)


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 1


def _bool(v: Any) -> bool:
    return isinstance(v, bool)


def _str_list(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _int_list(v: Any) -> bool:
    return isinstance(v, list) and all(_int(x) for x in v) and len(v) > 0


def _line(v: Any) -> bool:
    return isinstance(v, str) and v.strip() != "" and "\n" not in v


def _folder(v: Any) -> bool:
    return isinstance(v, str) and v != ""


def _folder_or_true(v: Any) -> bool:
    return isinstance(v, bool) or (isinstance(v, str) and v != "")


def _choice(*options: str) -> Callable[[Any], bool]:
    def check(v: Any) -> bool:
        return v in options

    check.__doc__ = " or ".join(options)
    return check


#: key -> (check, what is expected, is a path)
KEYS: dict[str, tuple[Callable[[Any], bool], str, str]] = {
    "description": (_str, "a text", ""),
    "relevance": (_str, "a file path", "file"),
    "queries": (_str, "a file path", "file"),
    "collection": (_str, "a file path", "file"),
    "collection_size": (_int, "a whole number >= 1", ""),
    "grades": (_choice("binary", "sister"), "binary or sister", ""),
    "run_format": (_choice("auto", "lists", "matrix", "trec", "shrec2011"), "auto, lists, matrix, trec or shrec2011", ""),
    "strip_zeros": (_bool, "true or false", ""),  # run ids compared without leading zeros
    "id_map": (_str, "a file path", "file"),  # run spelling -> relevance spelling
    "matrix_order": (_choice("listing", "numeric"), "listing or numeric", ""),
    "measures": (_str_list, "a list of measure names", ""),
    "sort": (_str, "a measure name", ""),
    "rank_by": (_str, "a measure name", ""),
    "e_depth": (_int, "a whole number >= 1", ""),
    "dcg_cutoffs": (_int_list, "a list of whole numbers >= 1", ""),
    "pr_levels": (_int, "a whole number >= 1 (the number of recall levels)", ""),
    "cutoffs": (_int_list, "a list of whole numbers >= 1", ""),
    "rel_level": (_int, "a whole number >= 1", ""),
    "average": (_choice("micro", "macro"), "micro or macro", ""),
    "missing_queries": (_choice("error", "skip", "zero"), "error, skip or zero", ""),
    "min_class_size": (_int, "a whole number >= 1", ""),
    "split": (_str, "a split name of the ShapeNet ground truth", ""),
    "ties": (_choice("rule", "expected", "optimistic", "pessimistic"), "rule, expected, optimistic or pessimistic", ""),
    "runs": (_str_list, "a list of paths", "paths"),
    "ground_truth": (_str, "a file path", "file"),
    "ground_truth_higher_is_better": (_bool, "true or false", ""),
    "lower_is_better": (_bool, "true or false", ""),
    # what an organiser publishes (issue 31.14): folders written, not read (not checked)
    "out": (_folder, "a folder path", "folder"),
    "plots": (_folder_or_true, "a folder path, or true for --out DIR/plots/ (false: none)", "folder"),
    "html": (_folder_or_true, "a folder path, or true for --out DIR/report/ (false: none)", "folder"),
    "significance": (_bool, "true or false", ""),
    "title": (_line, "a text of one line", ""),
    "dask": (_str, "a Dask scheduler address (tcp://HOST:8786) or local:N", ""),
}


def load_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and check a track preset; paths come back resolved against its folder."""
    import yaml

    path = os.fspath(path)
    from .io.text import entry_is_folder, read_text, regular_file

    text = read_text(path)
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = str(getattr(exc, "problem", None) or exc).splitlines()[0]
        raise InputError(path, line, "expected a YAML mapping of settings", problem) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError(path, 1, "expected a YAML mapping of settings (key: value)", type(data).__name__)
    lines = {k.value: k.start_mark.line + 1 for k, _ in node.value}
    base = os.path.dirname(os.path.abspath(path))
    out: dict[str, Any] = {}
    for key, value in data.items():
        line = lines.get(key)
        if key not in KEYS:
            raise InputError(path, line, f"unknown key {shown(str(key))}; expected one of: {', '.join(KEYS)}")
        check, expected, kind = KEYS[key]
        if not check(value):
            raise InputError(path, line, f"expected {shown(key)} to be {expected}", shown(value if isinstance(value, str) else repr(value)))
        where = (path, line, shown(key))
        if kind == "file":
            value = _resolve(base, value)
            _check_path(regular_file, value, where, "an existing file", "a regular file")
        elif kind == "folder" and isinstance(value, str):
            value = _resolve(base, value)
        elif kind == "paths":
            value = [_resolve(base, v) for v in value]
            for v in value:
                _check_path(entry_is_folder, v, where, "existing files or folders", "regular files or folders")
        out[key] = value
    return out


def _resolve(base: str, value: str) -> str:
    full = value if os.path.isabs(value) else os.path.join(base, value)
    return os.path.relpath(os.path.normpath(full)) if not os.path.isabs(value) else full


def _check_path(probe: Callable[[str], object], value: str, where: tuple[str, int | None, str], existing: str, regular: str) -> None:
    """``probe(value)`` (the readers' own path check), its error restated for the config's key and line."""
    path, line, key = where
    try:
        probe(value)
    except InputError as exc:
        if not os.path.lexists(value):
            raise InputError(path, line, f"{key}: expected {existing}", f"{value} not found") from None
        raise InputError(path, line, f"{key}: expected {regular}", f"{value}: {exc.got}") from None
