"""Compressed inputs are inflated in bounded pieces (issue 30.16): a gzip bomb
in a ranked-list file or a .cla is refused at its first over-long line, in
one line, without holding the inflated bytes."""

from __future__ import annotations

import gzip
import os
import tracemalloc
import zlib

from click.testing import CliRunner

from shrec_score.cli import cli

CLA = "PSB 1\n2 4\na 0 2\nm1\nm2\nb 0 2\nm3\nm4\n"
INFLATED = 64 << 20  # 64 MiB of one line


def _bomb(path, head: bytes = b"m2 0.1\n") -> None:
    """``head`` then 64 MiB without a newline, gzip'd (64 KiB on disk)."""
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    with open(path, "wb") as fh:
        fh.write(z.compress(head))
        block = b"a" * (1 << 20)
        for _ in range(INFLATED >> 20):
            fh.write(z.compress(block))
        fh.write(z.flush())
    assert os.path.getsize(path) < INFLATED // 100


def _score(args: list[str]) -> tuple[int, str, int]:
    tracemalloc.start()
    try:
        r = CliRunner().invoke(cli, args)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return r.exit_code, r.stderr, peak


def test_a_gzip_bomb_in_a_ranked_list_is_refused_in_bounded_memory(tmp_path):
    (tmp_path / "c.cla").write_text(CLA)
    run = tmp_path / "runs" / "r"
    run.mkdir(parents=True)
    for q, others in {"m1": "m2 m3 m4", "m2": "m1 m3 m4", "m3": "m4 m1 m2", "m4": "m3 m1 m2"}.items():
        (run / f"{q}.txt").write_text("".join(f"{t} 0.{i + 1}\n" for i, t in enumerate(others.split())))
    _bomb(run / "m1.txt")
    code, err, peak = _score(["score", str(tmp_path / "runs"), "-r", str(tmp_path / "c.cla"), "--quiet"])
    assert code == 2
    assert err == f"Error: {run / 'm1.txt'}:2: expected lines of at most 1,048,576 bytes (1 MiB), got a line of {INFLATED:,} bytes\n"
    assert peak < 48 << 20, f"peak {peak / 2**20:.0f} MiB for a {INFLATED >> 20} MiB line"


def test_a_gzip_bomb_as_a_classification_is_refused_in_bounded_memory(tmp_path):
    cla = tmp_path / "c.cla"
    _bomb(cla, b"PSB 1\n2 4\na 0 2\n")
    (tmp_path / "r.npy").write_bytes(b"")
    code, err, peak = _score(["score", str(tmp_path / "r.npy"), "-r", str(cla), "--quiet"])
    assert err == f"Error: {cla}:4: expected lines of at most 1,048,576 bytes (1 MiB), got a line of {INFLATED:,} bytes\n"
    assert code == 2
    assert peak < 48 << 20, f"peak {peak / 2**20:.0f} MiB"


def test_a_small_gzip_list_still_reads(tmp_path):
    (tmp_path / "c.cla").write_text(CLA)
    plain, packed = tmp_path / "plain" / "r", tmp_path / "packed" / "r"
    for folder in (plain, packed):
        folder.mkdir(parents=True)
    for q, others in {"m1": "m2 m3 m4", "m2": "m1 m3 m4", "m3": "m4 m1 m2", "m4": "m3 m1 m2"}.items():
        text = "".join(f"{t} 0.{i + 1}\n" for i, t in enumerate(others.split()))
        (plain / f"{q}.txt").write_text(text)
        (packed / f"{q}.txt").write_bytes(gzip.compress(text.encode(), mtime=0))
    outs = [CliRunner().invoke(cli, ["score", str(f.parent), "-r", str(tmp_path / "c.cla"), "--format", "csv", "--per-query", "--quiet"]) for f in (plain, packed)]
    assert outs[0].exit_code == 0 and outs[0].stdout == outs[1].stdout
    assert outs[0].stdout.splitlines()[1].split(",")[:4] == ["r", "m1", "a", "1.0"]
