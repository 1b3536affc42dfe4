"""`hyperbatch knn` against scikit-learn on Jasper Ridge (100 x 100 x 198, 4 classes).

hyperbatch draws the stratified split and exports it (--export-split); this script fits
KNeighborsClassifier(algorithm='brute') on exactly those training pixels and features
(all 198 bands: the scene has no bad band list) and compares labels on every pixel,
vote shares, neighbours, and the accuracy report (overall accuracy, kappa, confusion
matrix recomputed with sklearn.metrics). Disagreements are classified: a tie at the
k-th neighbour distance or in the vote is legitimately broken differently by sklearn.
Then: the same run as HDF5 output, a saved training file used with --train, and bad input.
"""
import json
import os
import subprocess

import numpy as np

import hbtest

args = hbtest.parse_args()
hbtest.require_shared_data(args.shared_data)
JASPER = os.path.join(args.shared_data, "jasper_ridge")
SCENE = os.path.join(JASPER, "jasper_ridge.hdr")
TRUTH = os.path.join(JASPER, "jasper_ridge_labels_gt.hdr")
if not (os.path.exists(SCENE) and os.path.exists(TRUTH)):
    hbtest.skip(f"Jasper Ridge scene or labels missing under {JASPER}")
try:
    import h5py
    import spectral.io.envi as envi
    from sklearn.metrics import cohen_kappa_score, confusion_matrix
    from sklearn.neighbors import KNeighborsClassifier
except ImportError as e:
    hbtest.skip(f"oracle missing: {e} (apt-get install python3-sklearn python3-spectral python3-h5py)")

probe = subprocess.run([args.cli, "--quiet", "info", SCENE], capture_output=True, text=True)
if probe.returncode != 0 and "not implemented" in probe.stderr:
    hbtest.skip("this build cannot read ENVI scenes yet (io/envi_* not merged)")

checks = hbtest.Checks()
MIN_AGREEMENT = 0.999


def load_envi(header):
    img = envi.open(header)
    return np.asarray(img.load(dtype=img.dtype))


X = load_envi(SCENE).reshape(-1, 198).astype(np.float64)  # pixel p = line * samples + sample
TRUTH_IDS = load_envi(TRUTH).reshape(-1).astype(np.int64)


def check_split(split, per_class, fraction):
    train = np.asarray(split["train_pixels"], dtype=np.int64)
    evalp = np.asarray(split["eval_pixels"], dtype=np.int64)
    checks.equal(list(TRUTH_IDS[train]), split["train_labels"], "exported training labels are the truth")
    labelled = np.flatnonzero(TRUTH_IDS > 0)
    checks.true(np.array_equal(np.union1d(train, evalp), labelled) and len(np.intersect1d(train, evalp)) == 0,
                "training and evaluation pixels partition the labelled pixels")
    for c in np.unique(TRUTH_IDS[labelled]):
        size = int((TRUTH_IDS == c).sum())
        want = min(per_class, size) if per_class else max(1, int(np.floor(fraction * size + 0.5)))
        checks.equal(int((TRUTH_IDS[train] == c).sum()), want, f"training pixels of class {c}")
    return train, evalp


def tie_kind(p, train, k, metric):
    """Why sklearn may legitimately differ at pixel p: a distance tie at rank k, or a vote tie."""
    if metric == "cosine":
        a = X[p] / np.linalg.norm(X[p])
        t = X[train] / np.linalg.norm(X[train], axis=1)[:, None]
        d = 1.0 - t @ a
    else:
        d = ((X[train] - X[p]) ** 2).sum(1)
    order = np.argsort(d, kind="stable")
    ds = d[order]
    if k < len(ds) and abs(ds[k] - ds[k - 1]) <= 1e-6 * max(abs(ds[k]), 1e-12):
        return "distance tie at rank k"
    counts = np.bincount(TRUTH_IDS[train][order[:k]])
    if (counts == counts.max()).sum() > 1:
        return "vote tie"
    return None


def check_case(tmp, name, k, split_args, weights="uniform", metric="euclidean"):
    out = os.path.join(tmp, f"{name}.hdr")
    split_path = os.path.join(tmp, f"{name}_split.json")
    report = os.path.join(tmp, f"{name}_report")
    summary = hbtest.run_json(args.cli, "knn", SCENE, "--truth", TRUTH, "-k", k, "-o", out, "--seed", 7,
                              "--weights", weights, "--metric", metric, *split_args,
                              "--export-split", split_path, "--report", report)
    with open(split_path) as f:
        split = json.load(f)
    per_class = int(split_args[1]) if split_args[0] == "--train-per-class" else None
    fraction = float(split_args[1]) if split_args[0] == "--train-fraction" else None
    train, evalp = check_split(split, per_class, fraction)

    sk = KNeighborsClassifier(n_neighbors=k, algorithm="brute", weights=weights, metric=metric)
    sk.fit(X[train], TRUTH_IDS[train])
    want = sk.predict(X)
    got = load_envi(out).reshape(-1).astype(np.int64)
    differ = np.flatnonzero(got != want)
    kinds = {}
    for p in differ:
        kind = tie_kind(p, train, k, metric) or "unexplained"
        kinds[kind] = kinds.get(kind, 0) + 1
    agreement = 1.0 - len(differ) / len(got)
    print(f"{name}: k={k} {metric} {weights}: {len(differ)} of {len(got)} labels differ {kinds}")
    checks.true(agreement >= MIN_AGREEMENT, f"{name}: label agreement {agreement:.5f} < {MIN_AGREEMENT}")

    # Vote shares: sklearn's predict_proba of the winner. Uniform shares are multiples of
    # 1/k; distance weights carry FP32 distance rounding (~1e-7 of the squared norms),
    # which may also swap a near-tied k-th neighbour: allow that on 0.1% of pixels.
    confidence = load_envi(os.path.join(tmp, f"{name}_confidence.hdr")).reshape(-1)
    share = sk.predict_proba(X).max(axis=1)
    tolerance = 1e-6 if weights == "uniform" else 1e-3
    off = int((np.abs(confidence - share) > tolerance).sum())
    print(f"{name}: {off} vote shares differ from sklearn's by more than {tolerance}")
    checks.true(off <= (1.0 - MIN_AGREEMENT) * len(share), f"{name}: confidence = sklearn's vote share")

    # The report against sklearn.metrics on the evaluation pixels.
    with open(report + ".json") as f:
        rep = json.load(f)
    checks.equal(rep, summary_without_files(summary), f"{name}: --json summary equals the report file")
    acc = rep["accuracy"]
    truth_e, got_e = TRUTH_IDS[evalp], got[evalp]
    sk_accuracy = float((want[evalp] == truth_e).mean())
    checks.equal(acc["evaluation_pixels"], len(evalp), f"{name}: evaluation pixels")
    checks.true(abs(acc["overall_accuracy"] - float((got_e == truth_e).mean())) < 1e-12, f"{name}: overall accuracy")
    checks.true(abs(acc["overall_accuracy"] - sk_accuracy) <= 0.001,
                f"{name}: overall accuracy {acc['overall_accuracy']} vs sklearn {sk_accuracy}")
    checks.true(abs(acc["kappa"] - cohen_kappa_score(truth_e, got_e)) < 1e-9, f"{name}: kappa")
    ids = acc["class_ids"]
    checks.equal(acc["confusion_matrix"], confusion_matrix(truth_e, got_e, labels=ids).tolist(), f"{name}: confusion")
    for c in acc["per_class"]:
        t, g = truth_e == c["id"], got_e == c["id"]
        checks.true(abs(c["producers_accuracy"] - (t & g).sum() / t.sum()) < 1e-12, f"{name}: producer's {c['id']}")
        checks.true(abs(c["users_accuracy"] - (t & g).sum() / g.sum()) < 1e-12, f"{name}: user's {c['id']}")
    checks.true(os.path.getsize(report + ".md") > 0, f"{name}: Markdown report written")
    return out, sk, train


def summary_without_files(summary):
    summary = dict(summary)
    summary.pop("report_files", None)
    return summary


def check_neighbors(tmp, sk, train, k):
    """--neighbors: indices are training rows in split order, distances Euclidean.

    Distances come from the FP32 expansion |q|^2 + |t|^2 - 2 q.t on data centred on the
    training mean, so squared distances carry ~1e-7 of the centred squared norms."""
    out = os.path.join(tmp, "nb.hdr")
    hbtest.run(args.cli, "knn", SCENE, "--truth", TRUTH, "-k", k, "-o", out, "--seed", 7, "--train-per-class", 60,
               "--neighbors")
    index = load_envi(os.path.join(tmp, "nb_neighbors_index.hdr")).reshape(-1, k).astype(np.int64)
    dist = load_envi(os.path.join(tmp, "nb_neighbors_distance.hdr")).reshape(-1, k).astype(np.float64)
    mean = X[train].mean(axis=0)
    norms = ((X - mean) ** 2).sum(1)
    bound = 1e-6 * (norms[:, None] + norms[train][index])
    exact = ((X[train][index] - X[:, None, :]) ** 2).sum(2)
    checks.true(bool((np.abs(dist ** 2 - exact) <= bound).all()), "neighbour distances belong to their indices")
    want_d, _ = sk.kneighbors(X)
    checks.true(bool((np.abs(dist ** 2 - want_d ** 2) <= 2 * bound).all()), "neighbour distances = sklearn's kneighbors")
    checks.true(bool((np.diff(dist, axis=1) >= 0).all()), "neighbours ascend by distance")
    checks.true(bool((dist[train, 0] == 0).all() and (index[train, 0] == np.arange(len(train))).all()),
                "a training pixel is its own nearest neighbour at distance exactly 0")


def check_hdf5_and_training_file(tmp, envi_map):
    h5 = os.path.join(tmp, "map.h5")
    saved = os.path.join(tmp, "train.h5")
    hbtest.run(args.cli, "knn", SCENE, "--truth", TRUTH, "-k", 5, "-o", h5, "--seed", 7, "--train-per-class", 60,
               "--neighbors", "--save-training", saved)
    envi_labels = load_envi(envi_map)
    envi_conf = load_envi(envi_map.replace(".hdr", "_confidence.hdr"))
    with h5py.File(h5, "r") as f:
        checks.true(np.array_equal(f["/cube"][...].reshape(envi_labels.shape), envi_labels), "HDF5 class map = ENVI")
        checks.true(np.array_equal(f["/confidence"][...].reshape(envi_conf.shape), envi_conf), "HDF5 confidence = ENVI")
        checks.equal(f["/neighbors/index"].shape, (100, 100, 5), "HDF5 neighbour index shape")
    with h5py.File(saved, "r") as f:
        checks.equal(f["/train/features"].shape, (240, 198), "saved training features")
        checks.true(np.array_equal(f["/train/features"][...], X[f["/train/pixels"][...]].astype(np.float32)),
                    "saved training rows are the scene pixels")
    again = os.path.join(tmp, "from_file.hdr")
    hbtest.run(args.cli, "knn", SCENE, "--train", saved, "--truth", TRUTH, "-k", 5, "-o", again)
    checks.true(np.array_equal(load_envi(again), envi_labels), "--train FILE.h5 reproduces the truth-drawn run")


def check_bad_input(tmp):
    out = os.path.join(tmp, "too_many.hdr")
    hbtest.run(args.cli, "knn", SCENE, "--truth", TRUTH, "-k", 41, "-o", out, "--train-per-class", 10, expect=2)
    checks.true(not os.path.exists(out), "k > training count leaves no output")
    other = os.path.join(args.shared_data, "indian_pines")
    headers = [h for h in os.listdir(other) if h.endswith(".hdr")] if os.path.isdir(other) else []
    if headers:
        wrong = os.path.join(other, headers[0])
        hbtest.run(args.cli, "knn", SCENE, "--truth", wrong, "-k", 1, "-o", out, "--train-per-class", 10, expect=3)
        checks.true(not os.path.exists(out), "a truth raster of another shape leaves no output")


with hbtest.workdir() as tmp:
    first = None
    for k in (1, 5, 15):
        out, sk, train = check_case(tmp, f"pc_k{k}", k, ["--train-per-class", "60"])
        if k == 5:
            first, sk5, train5 = out, sk, train
    check_case(tmp, "frac_k5", 5, ["--train-fraction", "0.05"])
    check_case(tmp, "dist_k15", 15, ["--train-fraction", "0.02"], weights="distance")
    check_case(tmp, "cos_k5", 5, ["--train-per-class", "60"], metric="cosine")
    check_neighbors(tmp, sk5, train5, 5)
    check_hdf5_and_training_file(tmp, first)
    check_bad_input(tmp)
checks.done("test_knn_sklearn")
