"""shrec-score: scoring of SHREC, Princeton Shape Benchmark and sketch-based retrieval runs.

The public API is imported on first use (PEP 562), so that ``shrec-score --help`` stays fast."""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_API = {
    "score": "api",
    "score_kendall": "api",
    "evaluate": "memory",
    "tie_report": "tiereport",
    "load_relevance": "loading",
    "load_runs": "loading",
    "Options": "options",
    "InputError": "errors",
    "OptionError": "errors",
    "read_classification": "io.cla",
    "Classification": "model",
    "RankedRun": "model",
    "MatrixRun": "model",
    "Relevance": "relevance",
    "Report": "report",
    "measures": "measures",
    "Settings": "measures",
}

__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'shrec_score' has no attribute {name!r}")
    mod = importlib.import_module(f".{module}", __name__)
    value = mod if name == module else getattr(mod, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
