"""shrec-score: scoring of SHREC, Princeton Shape Benchmark and sketch-based retrieval runs."""

__version__ = "0.1.0"

from .api import load_relevance, load_runs, score, score_kendall  # noqa: E402
from .errors import InputError  # noqa: E402
from .io.cla import read_classification  # noqa: E402
from .model import Classification, RankedRun  # noqa: E402
from .relevance import Relevance  # noqa: E402
from .report import Report  # noqa: E402

__all__ = [
    "__version__", "score", "score_kendall", "load_relevance", "load_runs", "InputError", "read_classification",
    "Classification", "RankedRun", "Relevance", "Report",
]
