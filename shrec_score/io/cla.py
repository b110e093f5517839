"""Reader of Princeton Shape Benchmark ``.cla`` classification files (PSB 1)::

    PSB 1
    numClasses numModels
    className parentClassName numModelsInClass
    modelId
    ...

The rules: docs/inputs.md, "Relevance".
"""

from __future__ import annotations

import os

import numpy as np

from ..errors import InputError, shown
from ..model import Classification
from .numbers import is_count
from .text import read_text_lines
from .trec import fields as blank_fields


def read_classification(path: str | os.PathLike[str]) -> Classification:
    """Read a PSB ``.cla`` file, checking it against its header (an :class:`InputError`
    for a missing ``PSB 1``, counts that disagree, a model id listed twice, a duplicate
    class or an undefined parent class)."""
    path = os.fspath(path)
    lines = [(n, blank_fields(line)) for n, line in read_text_lines(path)]  # the TREC files' field rule: U+2028 or NBSP is part of a name
    lines = [(n, f) for n, f in lines if f]
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

    class_names: list[str] = []
    class_parents: list[str] = []
    class_lines: list[int] = []
    class_at: dict[str, int] = {}
    ids: list[str] = []
    labels: list[int] = []
    seen: dict[str, tuple[str, int]] = {}

    i = 2
    while i < len(lines):
        n, fields = lines[i]
        if len(fields) != 3 or not is_count(fields[2]):
            raise InputError(path, n, 'expected a class line "name parent count"', f"{len(fields)} field(s) {shown(' '.join(fields))}")
        name, parent, count = fields[0], fields[1], int(fields[2])
        if name in class_at:
            raise InputError(path, n, f"expected each class once; class {shown(name)} is already defined at line {class_lines[class_at[name]]}")
        class_at[name] = len(class_names)
        class_names.append(name)
        class_parents.append(parent)
        class_lines.append(n)
        label = class_at[name]
        for k in range(count):
            i += 1
            if i >= len(lines):
                raise InputError(path, None, f"expected {count} model ids for class {shown(name)} (line {n})", f"end of file after {k}")
            m, f = lines[i]
            if len(f) != 1:
                raise InputError(
                    path, m, f"expected a model id (class {shown(name)} at line {n} declares {count} models)", f"{len(f)} fields {shown(' '.join(f))}"
                )
            model = f[0]
            if model in seen:
                other_class, other_line = seen[model]
                raise InputError(path, m, f"expected each model id once; {shown(model)} is already listed in class {shown(other_class)} at line {other_line}")
            seen[model] = (name, m)
            ids.append(model)
            labels.append(label)
        i += 1

    for name, parent, line in zip(class_names, class_parents, class_lines):
        if parent != "0" and parent not in class_at:
            raise InputError(path, line, f"expected parent class {shown(parent)} of class {shown(name)} to be defined in the file (or 0 for the root)")
    if len(class_names) != n_classes_declared:
        raise InputError(path, lines[1][0], f"header declares {n_classes_declared} classes", f"{len(class_names)} class lines")
    if len(ids) != n_models_declared:
        raise InputError(path, lines[1][0], f"header declares {n_models_declared} models", f"{len(ids)} model ids")
    return Classification(path, class_names, class_parents, ids, np.asarray(labels, dtype=np.int32))

