"""shrec-score: scoring of SHREC, Princeton Shape Benchmark and sketch-based retrieval runs; the public API is
imported on first use (PEP 562), so that ``shrec-score --help`` stays fast."""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_MODULES = {  # module -> the public names it holds
    "api": ("score", "score_kendall"),
    "memory": ("evaluate",),
    "tiereport": ("tie_report",),
    "loading": ("load_relevance", "load_runs"),
    "options": ("Options",),
    "errors": ("InputError", "OptionError"),
    "io.cla": ("read_classification",),
    "model": ("Classification", "RankedRun", "MatrixRun"),
    "relevance": ("Relevance",),
    "report": ("Report",),
    "measures": ("measures", "Settings"),
}
_API = {name: module for module, names in _MODULES.items() for name in names}

__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    if name not in _API:
        raise AttributeError(f"module 'shrec_score' has no attribute {name!r}")
    module = importlib.import_module(f".{_API[name]}", __name__)
    globals()[name] = value = module if name == _API[name] else getattr(module, name)  # imported once
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
