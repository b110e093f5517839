"""pandas imported at the first attribute access of ``pd``, not with the package (it costs more
than a contest-sized scoring; docs/architecture.md, "Tables without pandas")."""

from __future__ import annotations

import importlib
from typing import Any


class _LazyModule:
    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        module = importlib.import_module(self._name)
        return getattr(module, attr)


pd: Any = _LazyModule("pandas")
