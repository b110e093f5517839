"""Write shrec_score/demo/psb-like.tar.xz, the contest of ``shrec-score demo``: sample_runs/psb-like/
packed deterministically (sorted names, no times, no owners); ``make samples`` runs it.
"""

from __future__ import annotations

import io
import lzma
import os
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, os.pardir, os.pardir, "sample_runs", "psb-like")
ARCHIVE = os.path.join(HERE, "psb-like.tar.xz")


def pack(source: str = SOURCE, archive: str = ARCHIVE) -> None:
    """Pack ``source`` as ``psb-like/...`` into ``archive`` (tar, xz)."""
    paths = (os.path.join(folder, name) for folder, _, names in os.walk(source) for name in names)
    files = sorted(os.path.relpath(p, source).replace(os.sep, "/") for p in paths)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for rel in files:
            with open(os.path.join(source, rel), "rb") as f:
                data = f.read()
            info = tarfile.TarInfo(f"psb-like/{rel}")
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    with open(archive, "wb") as f:
        f.write(lzma.compress(buffer.getvalue(), preset=9))


if __name__ == "__main__":
    pack()
