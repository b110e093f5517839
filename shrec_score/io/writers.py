"""Text of the CSV files (written by :mod:`shrec_score.outdir`, as one unit)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd
else:
    from .._lazy import pd  # imported on first use (see _lazy)


def frame_to_csv(frame: pd.DataFrame) -> str:
    """CSV text of a frame: floats in full precision (repr), NaN as empty, LF line ends."""
    return frame.to_csv(index=False, na_rep="", lineterminator="\n")
