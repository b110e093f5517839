"""Generate sample_runs/ deterministically (the output is committed), and pack psb-like/ as the package's demo contest.

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
import tarfile

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
    _write_cla(os.path.join(out, "classes.cla"), list(PARENTS), classes)

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


def _write_cla(path: str, parents: list[str], classes: list[tuple[str, str, list]]) -> None:
    lines = ["PSB 1", f"{len(parents) + len(classes)} {sum(len(m) for _, _, m in classes)}", ""]
    for p in parents:
        lines += [f"{p} 0 0", ""]
    for name, parent, members in classes:
        lines.append(f"{name} {parent} {len(members)}")
        lines += [str(m) for m in members]
        lines.append("")
    with open(path, "w", newline="\n") as fh:
        fh.write("\n".join(lines))


def make_shrec2006_like(root: str, seed: int = 30) -> None:
    """30 external queries against the psb-like collection, graded by sister classes.

    Like SHREC 2006: each query is classified into a class of the collection;
    runs are ranked-list folders; two runs return only the first 50 results
    (as Shilane et al. returned 200 of 1814), so P, R and the counts mean
    something for them.
    """
    rng = np.random.default_rng(seed)
    targets = os.path.join(root, "psb-like", "classes.cla")
    names, parents, members = _read_cla_simple(targets)
    leaves = [i for i, m in enumerate(members) if m]
    ids = [m for ms in members for m in ms]
    label = {m: i for i, ms in enumerate(members) for m in ms}
    dim = 8
    centre = {i: rng.normal(0, 4.0, dim) for i in leaves}
    for i in leaves:  # sisters near each other, as in the psb-like model
        sib = [j for j in leaves if parents[j] == parents[i]]
        centre[i] = centre[sib[0]] * 0.6 + centre[i] * 0.4
    x = {m: centre[label[m]] + rng.normal(0, 0.9, dim) for m in ids}
    q_classes = rng.choice(leaves, size=30)
    queries = [f"q{i + 1}" for i in range(30)]
    qx = {q: centre[c] + rng.normal(0, 0.9, dim) for q, c in zip(queries, q_classes)}
    out = os.path.join(root, "shrec2006-like")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    used_parents = sorted({parents[c] for c in q_classes})
    by_class: dict[int, list[str]] = {}
    for q, c in zip(queries, q_classes):
        by_class.setdefault(int(c), []).append(q)
    _write_cla(os.path.join(out, "queries.cla"), used_parents, [(names[c], parents[c], qs) for c, qs in sorted(by_class.items())])
    runs = {"A1": (0.5, None), "B1": (1.5, None), "B2": (1.5, 50), "C1": (3.0, None), "D1": (6.0, 50)}
    for name, (noise, cut) in runs.items():
        folder = os.path.join(out, "runs", name)
        os.makedirs(folder)
        for q in queries:
            d = np.array([np.linalg.norm(qx[q] - x[m]) for m in ids]) + rng.gamma(2.0, noise, size=len(ids))
            order = np.lexsort((np.arange(len(ids)), np.round(d, 6)))[:cut]
            with open(os.path.join(folder, f"{q}.txt"), "w", newline="\n") as fh:
                fh.write("".join(f"{ids[j]} {d[j]:.6f}\n" for j in order))


def _read_cla_simple(path: str) -> tuple[list[str], list[str], list[list[str]]]:
    tokens = [ln.split() for ln in open(path).read().splitlines() if ln.split()][2:]
    names, parents, members, i = [], [], [], 0
    while i < len(tokens):
        name, parent, count = tokens[i]
        names.append(name)
        parents.append(parent)
        members.append([t[0] for t in tokens[i + 1 : i + 1 + int(count)]])
        i += 1 + int(count)
    return names, parents, members


SCENES = ["apartment", "church", "classroom", "city", "farm", "forest", "highway", "kitchen", "market", "park"]


def make_scene_track(root: str, folder: str, kind: str, seed: int) -> None:
    """SHREC 2018 scene retrieval in small: 10 classes, 5 queries (sketches or
    images) and 10 3D scenes per class; K = |C|.  Runs are dissimilarity
    matrices (rows = queries, columns = targets): ASCII for the sketch track,
    .npy for the image track.  Ids are 0..n-1 in listing order."""
    rng = np.random.default_rng(seed)
    dim = 6
    centre = rng.normal(0, 3.0, (len(SCENES), dim))
    t_lab = np.repeat(np.arange(len(SCENES)), 10)
    q_lab = np.repeat(np.arange(len(SCENES)), 5)
    tx = centre[t_lab] + rng.normal(0, 1.0, (t_lab.size, dim))
    qx = centre[q_lab] + rng.normal(0, 1.3, (q_lab.size, dim))
    out = os.path.join(root, folder)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "runs"))
    _write_cla(os.path.join(out, "targets.cla"), [], [(s, "0", list(np.flatnonzero(t_lab == i))) for i, s in enumerate(SCENES)])
    _write_cla(os.path.join(out, f"{kind}_queries.cla"), [], [(s, "0", list(np.flatnonzero(q_lab == i))) for i, s in enumerate(SCENES)])
    true = np.sqrt(((qx[:, None, :] - tx[None, :, :]) ** 2).sum(-1))
    for name, noise in {"TCL": 0.8, "VGG": 2.0, "BoW": 4.5}.items():
        d = (true + rng.gamma(2.0, noise, size=true.shape)).astype(np.float32)
        if kind == "sketch":
            np.savetxt(os.path.join(out, "runs", f"{name}.txt"), d, fmt="%.6f")
        else:
            np.save(os.path.join(out, "runs", f"{name}.npy"), d)


def make_sbir(root: str, seed: int = 2010) -> None:
    """Sketch-based image retrieval benchmark after Eitz et al. 2010 (seed 004).

    31 groups of one sketch and 40 images.  Each image has a latent
    similarity to its sketch; 28 simulated participants score it on 1..7
    (rounded, clipped), and the mean is the ground truth (ties happen).
    Three runs rank the images by a noisy distance (noise grows from
    "strong" to "weak"); "weak" rounds its distances to one decimal (ties).
    """
    rng = np.random.default_rng(seed)
    out = os.path.join(root, "sbir")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    rows = ["query,item,score"]
    latent = {}
    for g in range(1, 32):
        q = f"sketch{g:02d}"
        sim = rng.uniform(1, 7, size=40)
        for i in range(40):
            item = f"img{g:02d}_{i:02d}"
            votes = np.clip(np.round(sim[i] + rng.normal(0, 1.2, size=28)), 1, 7)
            rows.append(f"{q},{item},{votes.mean():.4f}")
            latent[(q, item)] = sim[i]
    with open(os.path.join(out, "ground_truth.csv"), "w", newline="\n") as fh:
        fh.write("\n".join(rows) + "\n")
    for name, noise, decimals in (("strong", 0.6, 6), ("medium", 1.5, 6), ("weak", 3.0, 1)):
        folder = os.path.join(out, "runs", name)
        os.makedirs(folder)
        for g in range(1, 32):
            q = f"sketch{g:02d}"
            items = [f"img{g:02d}_{i:02d}" for i in range(40)]
            d = np.round(np.array([8 - latent[(q, it)] for it in items]) + rng.normal(0, noise, size=40), decimals)
            order = np.lexsort((np.arange(40), d))
            with open(os.path.join(folder, f"{q}.txt"), "w", newline="\n") as fh:
                fh.write("".join(f"{items[j]} {d[j]:.{decimals}f}\n" for j in order))


# ShapeNet Core55 style: synset -> its sub-synsets (models may also be labelled at synset level only)
SYNSETS = {
    "02691156": ["02690373", "02842573", "03335030"],  # airplane: airliner, biplane, fighter
    "03001627": ["02738535", "03002210"],  # chair: armchair, chaise longue
    "04379243": ["03063968", "03620967", "04603729"],  # table: dining, kitchen, worktable
    "02958343": [],  # car: synset level only
}
# name -> noise added to the true distances, list length (None: the whole split)
SHAPENET_RUNS = {"RotationNet": (1.5, None), "DeepVoxNet": (4.0, 12), "ShapeDNA": (6.0, 40)}


def make_shapenet_like(root: str, seed: int = 2017) -> None:
    """shapenet-like/: a SHREC'17 ShapeNet Core55 style ground truth
    (id,synsetId,subSynsetId,modelId,split; 6-digit ids; about a fifth of
    the models labelled only at synset level) of 64 test and 16 train models,
    and three runs of the test split as folders of per-query files without
    extension (``target_id distance`` lines; the query may retrieve itself):
    one ranks the whole split, the others return their first 12 or 40."""
    rng = np.random.default_rng(seed)
    dim = 6
    rows = []
    feats = []
    for syn, subs in SYNSETS.items():
        syn_centre = rng.normal(0, 1.5, dim)
        centres = {sub: syn_centre + rng.normal(0, 1.5, dim) for sub in subs}
        for _ in range(20):
            sub = syn if not subs or rng.random() < 0.2 else subs[int(rng.integers(len(subs)))]
            rows.append([syn, sub])
            feats.append(centres.get(sub, syn_centre) + rng.normal(0, 1.0, dim))
    order = rng.permutation(len(rows))
    rows = [rows[i] for i in order]
    x = np.asarray([feats[i] for i in order])
    split = ["train" if i % 5 == 4 else "test" for i in range(len(rows))]
    ids = [f"{i + 1:06d}" for i in range(len(rows))]
    out = os.path.join(root, "shapenet-like")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    with open(os.path.join(out, "ground_truth.csv"), "w", newline="\n") as fh:
        fh.write("id,synsetId,subSynsetId,modelId,split\n")
        for i, (syn, sub) in enumerate(rows):
            model = "".join(f"{int(b):x}" for b in rng.integers(0, 16, 32))
            fh.write(f"{ids[i]},{syn},{sub},{model},{split[i]}\n")
    test = [i for i in range(len(rows)) if split[i] == "test"]
    for run, (noise, length) in SHAPENET_RUNS.items():
        folder = os.path.join(out, "runs", run)
        os.makedirs(folder)
        for q in test:
            d = np.sqrt(((x[test] - x[q]) ** 2).sum(axis=1)) + np.abs(rng.normal(0, noise, len(test)))
            ranked = np.lexsort((np.arange(len(test)), d))[:length]
            with open(os.path.join(folder, ids[q]), "w", newline="\n") as fh:
                fh.write("".join(f"{ids[test[j]]} {d[j]:.4f}\n" for j in ranked))


def pack_demo(source: str, archive: str) -> None:
    """Pack ``source`` as ``psb-like/...`` into ``archive`` (tar, xz) deterministically: sorted names, no times,
    no owners (shrec_score/demo/psb-like.tar.xz, the contest of ``shrec-score demo``)."""

    def plain(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.mtime, info.mode, info.uid, info.gid, info.uname, info.gname = 0, 0o644, 0, 0, "", ""
        return info

    paths = (os.path.join(folder, name) for folder, _, names in os.walk(source) for name in names)
    with tarfile.open(archive, "w:xz", preset=9, format=tarfile.PAX_FORMAT) as tar:
        for rel in sorted(os.path.relpath(p, source).replace(os.sep, "/") for p in paths):
            tar.add(os.path.join(source, rel), f"psb-like/{rel}", filter=plain)


if __name__ == "__main__":
    make_shapenet_like(HERE)
    make_sbir(HERE)
    make_psb_like(HERE)
    make_shrec2006_like(HERE)
    make_scene_track(HERE, "scene-sketch", "sketch", 2018)
    make_scene_track(HERE, "scene-image", "image", 2019)
    for name in ("psb-like", "shrec2006-like", "scene-sketch", "scene-image", "sbir", "shapenet-like"):
        print("wrote", os.path.join(HERE, name))
    pack_demo(os.path.join(HERE, "psb-like"), os.path.join(HERE, os.pardir, "shrec_score", "demo", "psb-like.tar.xz"))
