"""`hyperbatch knn --train FILE.h5 -k K --neighbors` at large k (1024 and 4096) against a
float64 brute force and scikit-learn: the command's lists, not only its kernels.

A training file of 5000 rows x 16 bands (eight clustered classes far from the origin,
with duplicated rows, so that ties and cancellation both occur) and a 20 x 30 query
scene. For every query: each listed distance is the float64 distance of its listed row,
the lists ascend, the k-th distance is the float64 k-th smallest, every row strictly
nearer than the k-th (by more than the FP32 error bound) is listed, sklearn's
kneighbors distances agree, and the class map is sklearn's majority vote wherever the
vote is not tied. `--part cuda` runs the same on the GPU (ctest label cuda)."""
import os

import clitest
import hbtest

args = clitest.parse_args()
BACKEND = clitest.backend_or_skip(args, hbtest.skip)
try:
    import h5py
    import numpy as np
    from sklearn.neighbors import NearestNeighbors
except ImportError as e:
    hbtest.skip(f"oracle missing: {e} (apt-get install python3-numpy python3-h5py python3-sklearn)")

checks = hbtest.Checks()
BANDS, CLASSES, ROWS, LINES, SAMPLES = 16, 8, 5000, 20, 30
rng = np.random.default_rng(11)
centres = 100.0 + 5.0 * rng.standard_normal((CLASSES, BANDS))
labels = np.arange(ROWS) % CLASSES + 1
train = (centres[labels - 1] + rng.standard_normal((ROWS, BANDS))).astype(np.float32)
train[ROWS - 40:] = train[:40]  # duplicated rows: equal distances, broken by row index
queries = (centres[rng.integers(0, CLASSES, LINES * SAMPLES)] +
           1.5 * rng.standard_normal((LINES * SAMPLES, BANDS))).astype(np.float32)


def write_inputs(folder):
    scene = os.path.join(folder, "scene")
    queries.tofile(scene + ".img")
    with open(scene + ".hdr", "w") as f:
        f.write(f"ENVI\nsamples = {SAMPLES}\nlines = {LINES}\nbands = {BANDS}\nheader offset = 0\n"
                "file type = ENVI Standard\ndata type = 4\ninterleave = bip\nbyte order = 0\n")
    training = os.path.join(folder, "train.h5")
    with h5py.File(training, "w") as f:
        f["/train/features"] = train
        f["/train/labels"] = labels.astype(np.int64)
    return scene + ".hdr", training


ENVI_TYPES = {1: np.uint8, 2: np.int16, 3: np.int32, 4: np.float32, 5: np.float64, 12: np.uint16, 13: np.uint32,
              14: np.int64, 15: np.uint64}


def load(header, k):
    """An ENVI BIP output as [pixels x k], in the type its header names."""
    with open(header) as f:
        code = int(next(line for line in f if line.startswith("data type")).split("=")[1])
    return np.fromfile(header.replace(".hdr", ".img"), dtype=ENVI_TYPES[code]).reshape(-1, k)


def check_lists(tag, index, dist, k):
    q = queries.astype(np.float64)
    t = train.astype(np.float64)
    exact = ((q[:, None, :] - t[None, :, :]) ** 2).sum(2)  # [queries x rows], float64
    mean = t.mean(0)
    norms_q = ((q - mean) ** 2).sum(1)
    norms_t = ((t - mean) ** 2).sum(1)
    # FP32 |q|^2 + |t|^2 - 2 q.t on centred data: a few ulps of the centred norms.
    bound = 2e-6 * (norms_q[:, None] + norms_t.max())
    listed = np.take_along_axis(exact, index, 1)
    checks.true(bool((index >= 0).all() and (index < ROWS).all()), f"{tag}: indices are training rows")
    checks.true(bool((np.abs(dist.astype(np.float64) ** 2 - listed) <= bound).all()),
                f"{tag}: each distance is its row's float64 distance")
    checks.true(bool((np.diff(dist, axis=1) >= 0).all()), f"{tag}: lists ascend")
    kth = np.sort(exact, 1)[:, k - 1]
    checks.true(bool((np.abs(listed[:, -1] - kth) <= bound[:, 0]).all()), f"{tag}: the k-th is float64's k-th")
    must = exact < (kth - bound[:, 0])[:, None]  # strictly nearer than the k-th, beyond rounding
    found = np.zeros_like(must)
    np.put_along_axis(found, index, True, 1)
    checks.true(bool((found | ~must).all()), f"{tag}: every clearly nearer row is listed")
    checks.true(bool(all(len(set(row)) == k for row in index)), f"{tag}: no row listed twice")
    nn = NearestNeighbors(n_neighbors=k, algorithm="brute").fit(t)
    want, _ = nn.kneighbors(q)
    checks.true(bool((np.abs(dist.astype(np.float64) ** 2 - want ** 2) <= 2 * bound).all()),
                f"{tag}: distances = sklearn's kneighbors")
    return index


def check_votes(tag, classes, index, k):
    votes = np.zeros((len(index), CLASSES + 1), dtype=np.int64)
    for c in range(1, CLASSES + 1):
        votes[:, c] = (labels[index] == c).sum(1)
    top = votes.max(1)
    clear = (votes == top[:, None]).sum(1) == 1  # no tie for the most votes
    checks.true(bool((classes[clear] == votes.argmax(1)[clear]).all()),
                f"{tag}: the class map is the majority of the lists ({int(clear.sum())} untied pixels)")


with hbtest.workdir() as folder:
    scene, training = write_inputs(folder)
    for k in (1024, 4096):
        out = os.path.join(folder, f"k{k}.hdr")
        hbtest.run(args.cli, "knn", scene, "--train", training, "-k", k, "-o", out, "--neighbors",
                   "--backend", BACKEND)
        tag = f"k = {k} ({BACKEND})"
        index = load(out.replace(".hdr", "_neighbors_index.hdr"), k).astype(np.int64)
        dist = load(out.replace(".hdr", "_neighbors_distance.hdr"), k)
        check_lists(tag, index, dist, k)
        classes = load(out, 1)[:, 0]
        check_votes(tag, classes, index, k)
        map_only = os.path.join(folder, f"k{k}_map.hdr")
        hbtest.run(args.cli, "knn", scene, "--train", training, "-k", k, "-o", map_only, "--backend", BACKEND)
        checks.true(np.array_equal(load(map_only, 1)[:, 0], classes),
                    f"{tag}: the class map without --neighbors is the same")
checks.done("knn at large k against float64 and scikit-learn")
