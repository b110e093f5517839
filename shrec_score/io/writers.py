"""Writers that never leave a half-written file: write to a temporary file in
the same folder, then rename it into place."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd
else:
    from .._lazy import pd  # imported on first use (see _lazy)


def frame_to_csv(frame: pd.DataFrame) -> str:
    """CSV text of a frame: floats in full precision (repr), NaN as empty, LF line ends."""
    return frame.to_csv(index=False, na_rep="", lineterminator="\n")


def write_files_atomically(out_dir: str | os.PathLike[str], files: Mapping[str, str]) -> list[str]:
    """Write ``{name: text}`` into ``out_dir``; each file appears whole or not at all.

    All files are first written to temporary files, then renamed into place,
    so an error while rendering leaves no output.  Only the named files are
    touched in an existing folder.
    """
    out_dir = os.fspath(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    staged: list[tuple[str, str]] = []
    try:
        for name, text in files.items():
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=out_dir)
            staged.append((tmp, os.path.join(out_dir, name)))
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
        for tmp, final in staged:
            os.replace(tmp, final)
    finally:
        for tmp, _ in staged:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return [final for _, final in staged]
