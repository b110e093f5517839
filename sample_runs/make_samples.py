"""Generate sample_runs/ deterministically (the output is committed).

    python sample_runs/make_samples.py

psb-like/: a hierarchical PSB classification of about 150 models in 20 leaf classes
under 6 parents, and 4 runs of clearly different quality (ranked-list
folders with distances).  Models are points around their class centre, class
centres around their parent's centre (so sister classes are near each other,
which graded "sister" relevance rewards); a run's distances are the true
distances plus noise of a run-specific size.
"""

from __future__ import annotations

import os
import shutil

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

PARENTS = {
    "vehicle": ["car", "truck", "bicycle", "motorcycle"],
    "animal": ["dog", "horse", "bird", "fish"],
    "furniture": ["chair", "table", "bed"],
    "plant": ["tree", "flower", "potted_plant"],
    "building": ["house", "tower", "church"],
    "tool": ["hammer", "screwdriver", "wrench"],
}
# name -> noise added to the true distances (smaller = better run)
RUNS = {"MVCNN": 0.5, "LFD": 1.2, "SHD": 2.4, "D2": 5.0}


def make_psb_like(root: str, seed: int = 2006) -> None:
    rng = np.random.default_rng(seed)
    leaves = [(leaf, parent) for parent, kids in PARENTS.items() for leaf in kids]
    sizes = rng.integers(5, 11, size=len(leaves))
    n_models = int(sizes.sum())
    dim = 8
    ids: list[int] = []
    labels: list[int] = []
    feats = []
    parent_centre = {p: rng.normal(0, 4.0, dim) for p in PARENTS}
    next_id = rng.permutation(n_models) + 1000
    k = 0
    classes = []
    for c, ((leaf, parent), n) in enumerate(zip(leaves, sizes)):
        centre = parent_centre[parent] + rng.normal(0, 1.6, dim)
        members = sorted(int(x) for x in next_id[k : k + n])
        k += n
        classes.append((leaf, parent, members))
        for m in members:
            ids.append(m)
            labels.append(c)
            feats.append(centre + rng.normal(0, 0.8, dim))
    x = np.asarray(feats)

    out = os.path.join(root, "psb-like")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    lines = ["PSB 1", f"{len(PARENTS) + len(leaves)} {len(ids)}", ""]
    for p in PARENTS:
        lines += [f"{p} 0 0", ""]
    for leaf, parent, members in classes:
        lines.append(f"{leaf} {parent} {len(members)}")
        lines += [str(m) for m in members]
        lines.append("")
    with open(os.path.join(out, "classes.cla"), "w", newline="\n") as fh:
        fh.write("\n".join(lines))

    true = np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(-1))
    for name, noise in RUNS.items():
        d = true + rng.gamma(2.0, noise, size=true.shape)
        d = (d + d.T) / 2
        np.fill_diagonal(d, 0.0)
        folder = os.path.join(out, "runs", name)
        os.makedirs(folder)
        for i, q in enumerate(ids):
            order = np.lexsort((np.arange(len(ids)), np.round(d[i], 6)))
            with open(os.path.join(folder, f"{q}.txt"), "w", newline="\n") as fh:
                fh.write("".join(f"{ids[j]} {d[i, j]:.6f}\n" for j in order))


if __name__ == "__main__":
    make_psb_like(HERE)
    print("wrote", os.path.join(HERE, "psb-like"))
