"""Write shrec_score/demo/psb-like.tar.xz, the contest of ``shrec-score demo``: sample_runs/psb-like/
packed deterministically (sorted names, no times, no owners); ``make samples`` runs it."""

from __future__ import annotations

import os
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, os.pardir, os.pardir, "sample_runs", "psb-like")
ARCHIVE = os.path.join(HERE, "psb-like.tar.xz")


def pack(source: str = SOURCE, archive: str = ARCHIVE) -> None:
    """Pack ``source`` as ``psb-like/...`` into ``archive`` (tar, xz)."""

    def plain(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.mtime, info.mode, info.uid, info.gid, info.uname, info.gname = 0, 0o644, 0, 0, "", ""
        return info

    paths = (os.path.join(folder, name) for folder, _, names in os.walk(source) for name in names)
    with tarfile.open(archive, "w:xz", preset=9, format=tarfile.PAX_FORMAT) as tar:
        for rel in sorted(os.path.relpath(p, source).replace(os.sep, "/") for p in paths):
            tar.add(os.path.join(source, rel), f"psb-like/{rel}", filter=plain)


if __name__ == "__main__":
    pack()
