"""Retrieval measures: one module per family, and a registry by name."""

from .base import GainBlock, RankBlock
from .cumgain import dcg
from .measure import Measure, Settings, column_higher_is_better, get_measure, known_measures
from .precision import (
    PR_LEVELS,
    average_precision,
    pr_curve,
    precision_at,
    recall_at,
    reciprocal_rank,
)
from .registry import (
    DEFAULT_BINARY,
    DEFAULT_GRADED,
    SHOWN_GRADED,
    graded_defaults,
    measure_listing,
    measure_table,
)
from .tiers import e_measure, first_tier, nearest_neighbor, second_tier

__all__ = [
    "RankBlock", "GainBlock", "DEFAULT_GRADED", "SHOWN_GRADED", "graded_defaults", "dcg", "PR_LEVELS", "pr_curve",
    "average_precision", "precision_at", "recall_at", "reciprocal_rank", "DEFAULT_BINARY", "Measure", "Settings",
    "get_measure", "known_measures", "e_measure", "first_tier", "nearest_neighbor", "second_tier",
    "column_higher_is_better", "measure_listing", "measure_table",
]
