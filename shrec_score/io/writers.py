"""Text of the CSV files (written by :mod:`shrec_score.outdir`, as one unit)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..table import Table

if TYPE_CHECKING:
    import pandas as pd


def frame_to_csv(frame: Table | pd.DataFrame) -> str:
    """CSV text of a table (:meth:`~shrec_score.table.Table.to_csv`, without pandas) or a frame: floats
    in full precision (repr), NaN as empty, LF line ends."""
    if isinstance(frame, Table):
        return frame.to_csv()
    return frame.to_csv(index=False, na_rep="", lineterminator="\n")
