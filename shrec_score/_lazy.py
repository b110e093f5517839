"""pandas imported at the first use of ``pd``, not with the package (docs/architecture.md, "Tables without pandas")."""

from __future__ import annotations

import importlib
from typing import Any


class _LazyPandas:
    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module("pandas"), attr)


pd: Any = _LazyPandas()
