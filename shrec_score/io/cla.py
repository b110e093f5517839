"""Reader of Princeton Shape Benchmark ``.cla`` classification files (``PSB 1``, ``numClasses numModels``, then per
class ``name parent count`` and ``count`` model ids); the rules: docs/inputs.md, "Relevance"."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..errors import InputError, shown
from ..model import Classification
from .numbers import is_count
from .trec import trec_lines


def read_classification(path: str | os.PathLike[str], fh: Any = None) -> Classification:
    """A PSB ``.cla`` (``fh``: ``path`` opened) checked against its header, for repeated ids, undefined parents."""
    path = os.fspath(path)
    lines = list(trec_lines(path, fh))  # the TREC files' field rule: U+2028 or NBSP is part of a name
    if not lines:
        raise InputError(path, None, 'expected a PSB classification starting with "PSB 1"', "an empty file")
    n, fields = lines[0]
    if fields[:1] != ["PSB"] or len(fields) != 2:
        raise InputError(path, n, 'expected the header "PSB 1"', shown(" ".join(fields)))
    if len(lines) < 2:
        raise InputError(path, None, 'expected a line "numClasses numModels" after the header', "end of file")
    n, fields = lines[1]
    if len(fields) != 2 or not all(is_count(f) for f in fields):
        raise InputError(path, n, 'expected "numClasses numModels" (two whole numbers)', shown(" ".join(fields)))
    n_classes_declared, n_models_declared = int(fields[0]), int(fields[1])

    classes: dict[str, tuple[str, int]] = {}  # name -> (parent, line), in file order
    seen: dict[str, tuple[str, int]] = {}  # model id -> (class, line), in file order
    labels: list[int] = []
    rest = iter(lines[2:])
    for n, fields in rest:
        if len(fields) != 3 or not is_count(fields[2]):
            raise InputError(path, n, 'expected a class line "name parent count"', f"{len(fields)} field(s) {shown(' '.join(fields))}")
        name, parent, count = fields[0], fields[1], int(fields[2])
        if name in classes:
            raise InputError(path, n, f"expected each class once; class {shown(name)} is already defined at line {classes[name][1]}")
        classes[name] = (parent, n)
        for k in range(count):
            m, f = next(rest, (None, []))
            if m is None:
                raise InputError(path, None, f"expected {count} model ids for class {shown(name)} (line {n})", f"end of file after {k}")
            if len(f) != 1:
                raise InputError(
                    path, m, f"expected a model id (class {shown(name)} at line {n} declares {count} models)", f"{len(f)} fields {shown(' '.join(f))}"
                )
            model = f[0]
            if model in seen:
                other_class, other_line = seen[model]
                raise InputError(path, m, f"expected each model id once; {shown(model)} is already listed in class {shown(other_class)} at line {other_line}")
            seen[model] = (name, m)
            labels.append(len(classes) - 1)

    for name, (parent, line) in classes.items():
        if parent != "0" and parent not in classes:
            raise InputError(path, line, f"expected parent class {shown(parent)} of class {shown(name)} to be defined in the file (or 0 for the root)")
    if len(classes) != n_classes_declared:
        raise InputError(path, lines[1][0], f"header declares {n_classes_declared} classes", f"{len(classes)} class lines")
    if len(seen) != n_models_declared:
        raise InputError(path, lines[1][0], f"header declares {n_models_declared} models", f"{len(seen)} model ids")
    parents = [p for p, _ in classes.values()]
    return Classification(path, list(classes), parents, list(seen), np.asarray(labels, dtype=np.int32))
