"""pandas imported on first use, not with the package.

Importing pandas (with pyarrow) takes 0.4-0.5 s on the bench machine, a
third of a contest-sized run.  Modules write ``pd.DataFrame`` as usual; the
import happens at the first attribute access.  The scoring's own tables are
:class:`shrec_score.table.Table` and need no pandas (nor do the TREC readers:
they build their pyarrow arrays from numpy buffers, see ``io/trec.arrow_strings``).
"""

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
