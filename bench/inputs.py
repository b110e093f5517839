"""The bench's inputs, generated into bench/_data (git-ignored) when missing.

Seeded: two generations give the same bytes (checked on 2026-11-25 with sha256
over all of bench/_data), so the numbers stored from 0.1.0 in bench/golden stay
valid.  Changing a generator means storing them again (bench/make_golden.py).

    nice -n 10 python bench/inputs.py trec,trec-long,lists,matrix10k,matrix4k
"""

from __future__ import annotations

import os
import shutil
import sys

import numpy as np

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_data")
GOLDEN_CASES = ("trec", "trec-long", "lists", "matrix10k", "matrix4k")



def write_cla(path: str, labels: np.ndarray, names: list[str]) -> None:
    """A PSB .cla of the classes used: class ``class<label>``, members ``names``."""
    with open(path, "w") as fh:
        used = np.unique(labels).tolist()
        fh.write(f"PSB 1\n{len(used)} {labels.size}\n")
        for c in used:
            members = np.flatnonzero(labels == c)
            fh.write(f"class{c} 0 {members.size}\n" + "".join(names[i] + "\n" for i in members.tolist()))


def _digits(values: np.ndarray, width: int, pad: bool = False) -> np.ndarray:
    """Decimal digits of non-negative integers as a (n, width) uint8 matrix;
    leading zeros are NUL bytes (dropped with the other padding), unless ``pad``."""
    v = values.astype(np.int64)
    out = np.empty((v.size, width), dtype=np.uint8)
    for j in range(width - 1, -1, -1):
        out[:, j] = 48 + v % 10
        v = v // 10
    if not pad:
        lead = np.cumsum(out != 48, axis=1) == 0  # zeros before the first non-zero digit
        lead[:, -1] = False  # 0 is written "0"
        out[lead] = 0
    return out


def make_matrix(n: int, folder: str | None = None) -> tuple[str, str]:
    """An n x n float32 all-against-all matrix (ids 0..n-1), classes of about
    35 models (random sizes), 4 decimals (some ties, as real descriptors have)."""
    folder = folder or os.path.join(DATA, f"matrix{n}")
    npy, cla = os.path.join(folder, "run.npy"), os.path.join(folder, "classes.cla")
    if os.path.exists(npy):
        return npy, cla
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(n)
    labels = np.sort(rng.integers(0, n // 35, n))
    write_cla(cla, labels, [str(i) for i in range(n)])
    m = np.lib.format.open_memmap(npy + ".tmp", mode="w+", dtype=np.float32, shape=(n, n))
    for a in range(0, n, 500):
        block = rng.random((min(n, a + 500) - a, n), dtype=np.float32)
        block -= 0.35 * (labels[a : a + 500, None] == labels[None, :])
        m[a : a + 500] = np.round(block, 4)
    m.flush()
    del m
    os.replace(npy + ".tmp", npy)
    return npy, cla


def make_lists(n_queries: int = 1_000, n_targets: int = 8_987, n_classes: int = 171) -> tuple[str, str, str]:
    """SHREC 2014 sketch-track shape, one run: a file per query sketch
    (``S00001.txt``), every target (``M00001``) ranked with a 6-decimal distance."""
    folder = os.path.join(DATA, "lists")
    cla, qcla, run = (os.path.join(folder, f) for f in ("targets.cla", "queries.cla", "runs/team1"))
    if os.path.exists(os.path.join(folder, "done")):
        return cla, qcla, os.path.dirname(run)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(run)
    rng = np.random.default_rng(2014)
    labels = np.sort(rng.integers(0, n_classes, n_targets))
    q_labels = rng.integers(0, n_classes, n_queries)
    write_cla(cla, labels, [f"M{i:05d}" for i in range(1, n_targets + 1)])
    write_cla(qcla, q_labels, [f"S{i:05d}" for i in range(1, n_queries + 1)])
    ids = np.concatenate([np.full((n_targets, 1), ord("M"), np.uint8), _digits(np.arange(1, n_targets + 1), 5, pad=True)], axis=1)
    col = np.zeros((n_targets, 1), np.uint8)
    for q in range(n_queries):  # relevant targets nearer
        d = rng.integers(0, 1_000_000, n_targets) + (labels != q_labels[q]) * 500_000
        order = np.argsort(d, kind="stable")
        d = d[order]
        text = np.concatenate([ids[order], col + 32, _digits(d // 1_000_000, 1), col + 46, _digits(d % 1_000_000, 6, pad=True), col + 10], axis=1)
        with open(os.path.join(run, f"S{q + 1:05d}.txt"), "wb") as fh:
            fh.write(text.tobytes())
    open(os.path.join(folder, "done"), "w").close()
    return cla, qcla, os.path.dirname(run)


def trec_paths(name: str) -> tuple[str, str]:
    folder = os.path.join(DATA, name)
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, "run.trec"), os.path.join(folder, "qrels.txt")


def make_trec(n_queries: int = 10_000, depth: int = 1_000, n_rel: int = 50) -> tuple[str, str]:
    """Short ids (``D123456`` of a pool of 200,000), 3-decimal scores, binary qrels:
    50 relevant documents a query, half of them in the list."""
    run, qrels = trec_paths(f"trec{n_queries}")
    if os.path.exists(run) and os.path.exists(qrels):
        return run, qrels
    rng = np.random.default_rng(11)
    with open(run + ".tmp", "w") as fr, open(qrels + ".tmp", "w") as fq:
        for q in range(n_queries):
            docs = rng.choice(200_000, size=depth + n_rel, replace=False)
            relevant, ranked = docs[depth:], docs[:depth].copy()
            ranked[np.sort(rng.choice(depth, size=n_rel // 2, replace=False))] = relevant[: n_rel // 2]
            scores = np.round(np.sort(rng.random(depth))[::-1] * 100, 3)
            fr.write("".join(f"q{q} Q0 D{d} {i + 1} {s:.3f} bench\n" for i, (d, s) in enumerate(zip(ranked, scores))))
            fq.write("".join(f"q{q} 0 D{d} 1\n" for d in relevant))
    os.replace(run + ".tmp", run)
    os.replace(qrels + ".tmp", qrels)
    return run, qrels


def long_ids(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` distinct ids as a (n, 36) NUL-padded uint8 matrix: even indices
    ClueWeb09-like (``clueweb09-en0000-00-00000``), odd ones UUID-like."""
    ids = np.zeros((n, 36), dtype=np.uint8)
    cw = np.arange(0, n, 2)
    ids[cw, :12] = np.frombuffer(b"clueweb09-en", np.uint8)
    k = cw // 2  # distinct: directory, file, record from the index
    ids[cw, 12:16] = _digits(k // 50_000, 4, pad=True)
    ids[cw, 16] = ord("-")
    ids[cw, 17:19] = _digits(k // 1_000 % 50, 2, pad=True)
    ids[cw, 19] = ord("-")
    ids[cw, 20:25] = _digits(k % 1_000 * 37 + rng.integers(0, 37, cw.size), 5, pad=True)
    uu = np.arange(1, n, 2)
    nib = rng.integers(0, 16, (uu.size, 32))
    nib[:, :5] = _digits(uu // 2, 5, pad=True) - 48  # distinct: the index in the first 5 nibbles
    cols = [c for c in range(36) if c not in (8, 13, 18, 23)]
    ids[np.ix_(uu, cols)] = np.frombuffer(b"0123456789abcdef", np.uint8)[nib]
    ids[uu[:, None], np.array([8, 13, 18, 23])] = ord("-")
    return ids


def make_trec_long(n_queries: int = 10_000, depth: int = 1_000, n_judged: int = 50, pool: int = 200_000) -> tuple[str, str]:
    """Long ids mixed in every list, 4-decimal scores (about 25 tied pairs a
    list), 50 judgments a query graded 0-2, half of them in the list; written
    with numpy byte matrices, 500 queries at a time."""
    run, qrels = trec_paths(f"trec-long{n_queries}")
    if os.path.exists(run) and os.path.exists(qrels):
        return run, qrels
    rng = np.random.default_rng(17)
    ids = long_ids(pool, rng)
    qid_text = np.concatenate([np.full((n_queries, 1), ord("q"), np.uint8), _digits(np.arange(n_queries), 5)], axis=1)
    rank_text = _digits(np.arange(1, depth + 1), 4)

    def const(text: bytes, n: int) -> np.ndarray:
        return np.broadcast_to(np.frombuffer(text, np.uint8), (n, len(text)))

    def emit(fh, *columns: np.ndarray) -> None:
        flat = np.concatenate(columns, axis=1).ravel()
        fh.write(flat[flat != 0].tobytes())

    with open(run + ".tmp", "wb") as fr, open(qrels + ".tmp", "wb") as fq:
        for q0 in range(0, n_queries, 500):
            qs = np.arange(q0, min(n_queries, q0 + 500))
            nq, n, m = qs.size, qs.size * depth, qs.size * n_judged
            docs = np.stack([rng.choice(pool, size=depth + n_judged, replace=False) for _ in qs])
            judged, ranked = docs[:, depth:], docs[:, :depth].copy()
            pos = np.argsort(rng.random((nq, depth)), axis=1)[:, : n_judged // 2]
            np.put_along_axis(ranked, pos, judged[:, : n_judged // 2], axis=1)
            grades = rng.choice(3, size=(nq, n_judged), p=[0.4, 0.4, 0.2])
            scores = -np.sort(-rng.integers(0, 20_000, (nq, depth)), axis=1).ravel()
            emit(fr, np.repeat(qid_text[qs], depth, axis=0), const(b" Q0 ", n), ids[ranked.ravel()], const(b" ", n),
                 np.tile(rank_text, (nq, 1)), const(b" ", n), _digits(scores // 10_000, 1), const(b".", n),
                 _digits(scores % 10_000, 4, pad=True), const(b" bench\n", n))
            emit(fq, np.repeat(qid_text[qs], n_judged, axis=0), const(b" 0 ", m), ids[judged.ravel()], const(b" ", m),
                 (48 + grades.reshape(-1, 1)).astype(np.uint8), const(b"\n", m))
    os.replace(run + ".tmp", run)
    os.replace(qrels + ".tmp", qrels)
    return run, qrels


#: Ours and trec_eval's names of the TREC measures (ndcg_cut.10 is trec_eval's, not SHREC 2006's NDCG@10).
TREC_MEASURES = {"map": "AP", "P_1": "NN", "Rprec": "FT", "P_10": "P@10", "ndcg_cut_10": "ndcg_cut.10"}


def case_args(case: str) -> list[str]:
    """The CLI arguments that score a generated case (its inputs made if missing)."""
    if case in ("trec", "trec-long"):
        run, qrels = make_trec() if case == "trec" else make_trec_long()
        return [run, "-r", qrels, "--run-format", "trec", "-m", ",".join(TREC_MEASURES.values())]
    if case == "lists":
        cla, qcla, runs = make_lists()
        return [runs, "-r", cla, "-q", qcla]
    npy, cla = make_matrix({"matrix10k": 10_000, "matrix4k": 4_000}[case])
    return [npy, "-r", cla, "--run-format", "matrix"]


if __name__ == "__main__":
    for case in sys.argv[1].split(","):
        if case in GOLDEN_CASES:
            case_args(case)
