"""Track presets in YAML (rules: docs/usage.md#track-presets): read, every key checked (an :class:`InputError`
naming the key, file and line), paths resolved against the preset's folder."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .choices import AVERAGES, GRADES, MATRIX_ORDERS, MISSING, RUN_FORMATS, TIES
from .errors import InputError, shown
from .measures import Settings
from .options import Options

#: A check of a preset value.
Check = Callable[[Any], bool]
_str: Check = lambda v: isinstance(v, str)
_int: Check = lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1
_bool: Check = lambda v: isinstance(v, bool)
_str_list: Check = lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v)
_int_list: Check = lambda v: isinstance(v, list) and len(v) > 0 and all(_int(x) for x in v)
_folder: Check = lambda v: isinstance(v, str) and v != ""
_folder_or_true: Check = lambda v: isinstance(v, bool) or _folder(v)


def _choice(options: Sequence[str]) -> tuple[Check, str, str]:
    return (lambda v: v in options), ", ".join(options[:-1]) + " or " + options[-1], ""


#: key -> (check, what is expected, is a path)
KEYS: dict[str, tuple[Check, str, str]] = {
    "description": (_str, "a text", ""),
    "relevance": (_str, "a file path", "file"),
    "queries": (_str, "a file path", "file"),
    "collection": (_str, "a file path", "file"),
    "collection_size": (_int, "a whole number >= 1", ""),
    "grades": _choice(GRADES),
    "run_format": _choice(RUN_FORMATS),
    "strip_zeros": (_bool, "true or false", ""),  # run ids compared without leading zeros
    "id_map": (_str, "a file path", "file"),  # run spelling -> relevance spelling
    "matrix_order": _choice(MATRIX_ORDERS),
    "measures": (_str_list, "a list of measure names", ""),
    "sort": (_str, "a measure name", ""),
    "rank_by": (_str, "a measure name", ""),
    "e_depth": (_int, "a whole number >= 1", ""),
    "dcg_cutoffs": (_int_list, "a list of whole numbers >= 1", ""),
    "pr_levels": (_int, "a whole number >= 1 (the number of recall levels)", ""),
    "cutoffs": (_int_list, "a list of whole numbers >= 1", ""),
    "rel_level": (_int, "a whole number >= 1", ""),
    "average": _choice(AVERAGES),
    "missing_queries": _choice(MISSING),
    "min_class_size": (_int, "a whole number >= 1", ""),
    "split": (_str, "a split name of the ShapeNet ground truth", ""),
    "ties": _choice(TIES),
    "runs": (_str_list, "a list of paths", "paths"),
    "ground_truth": (_str, "a file path", "file"),
    "ground_truth_higher_is_better": (_bool, "true or false", ""),
    "lower_is_better": (_bool, "true or false", ""),
    # what an organiser publishes (issue 31.14): folders written, not read (not checked)
    "out": (_folder, "a folder path", "folder"),
    "plots": (_folder_or_true, "a folder path, or true for --out DIR/plots/ (false: none)", "folder"),
    "html": (_folder_or_true, "a folder path, or true for --out DIR/report/ (false: none)", "folder"),
    "significance": (_bool, "true or false", ""),
    "title": (lambda v: isinstance(v, str) and v.strip() != "" and "\n" not in v, "a text of one line", ""),
    "dask": (_str, "a Dask scheduler address (tcp://HOST:8786) or local:N", ""),
}


def read_yaml_mapping(path: str, text: str, what: str, keys: str) -> tuple[dict[Any, Any], dict[Any, int]]:
    """The file ``path``'s ``text`` as a YAML mapping (empty file: empty) and the line of each key; errors
    name the file and line: "expected a YAML mapping of ``what`` (``keys``)"."""
    import yaml

    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = str(getattr(exc, "problem", None) or exc).splitlines()[0]
        raise InputError(path, mark.line + 1 if mark is not None else None, f"expected a YAML mapping of {what}", problem) from None
    if data is None:
        return {}, {}
    if not isinstance(data, dict):
        raise InputError(path, 1, f"expected a YAML mapping of {what} ({keys})", type(data).__name__)
    return data, {k.value: k.start_mark.line + 1 for k, _ in node.value}


def load_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and check a track preset; paths come back resolved against its folder."""
    from .io.text import entry_is_folder, read_text, regular_file

    path = os.fspath(path)
    data, lines = read_yaml_mapping(path, read_text(path), "settings", "key: value")
    base = os.path.dirname(os.path.abspath(path))
    for key, value in data.items():
        line = lines.get(key)
        if key not in KEYS:
            raise InputError(path, line, f"unknown key {shown(str(key))}; expected one of: {', '.join(KEYS)}")
        check, expected, kind = KEYS[key]
        if not check(value):
            raise InputError(path, line, f"expected {shown(key)} to be {expected}", shown(value if isinstance(value, str) else repr(value)))
        where = (path, line, shown(key))
        if kind in ("file", "folder") and isinstance(value, str):
            value = _resolve(base, value)
        if kind == "file":
            _check_path(regular_file, value, where, "an existing file", "a regular file")
        elif kind == "paths":
            value = [_resolve(base, v) for v in value]
            for v in value:
                _check_path(entry_is_folder, v, where, "existing files or folders", "regular files or folders")
        data[key] = value
    return data


def preset_or(cfg: Mapping[str, Any], given: Any, key: str, default: Any = None) -> Any:
    """``given`` from the command line (unless None or ``()``: not given), else the preset's ``key``, else ``default``."""
    return given if given is not None and given != () else cfg.get(key, default)


def preset_options(cfg: Mapping[str, Any], given: Mapping[str, Any] | None = None, **extra: Any) -> Options:
    """The Options of the CLI and the server's upload check: a preset's keys ``cfg`` (:func:`load_config`), each
    under the flag ``given[key]`` unless that is None or ``()``; ``extra``: more keywords of :meth:`Options.build`."""
    flags = given or {}
    pick = lambda key: preset_or(cfg, flags.get(key), key)
    settings = {k: pick(k) for k in ("rel_level", "e_depth", "pr_levels", "depth", "judged_only", "min_class_size")}
    settings |= {"missing": pick("missing_queries"), "dcg_cutoffs": tuple(cfg.get("dcg_cutoffs", ())) or None}
    plain = [k for k in Options.__dataclass_fields__ if k in KEYS and k not in ("significance", "strip_zeros")]
    return Options.build(
        **{key: pick(key) for key in plain},  # None: the default of Options
        settings=Settings(**{k: v for k, v in settings.items() if v is not None}),  # None: the default of Settings
        lenient=bool(flags.get("lenient")),
        strip_zeros=bool(flags.get("strip_zeros")) or cfg.get("strip_zeros", False),
        **extra,
    )


def _resolve(base: str, value: str) -> str:
    return value if os.path.isabs(value) else os.path.relpath(os.path.normpath(os.path.join(base, value)))


def _check_path(probe: Callable[[str], object], value: str, where: tuple[str, int | None, str], existing: str, regular: str) -> None:
    """``probe(value)`` (the readers' own path check), its error restated for the config's key and line."""
    path, line, key = where
    try:
        probe(value)
    except InputError as exc:
        expected, got = (regular, f"{value}: {exc.got}") if os.path.lexists(value) else (existing, f"{value} not found")
        raise InputError(path, line, f"{key}: expected {expected}", got) from None
