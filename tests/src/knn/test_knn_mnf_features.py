"""`hyperbatch knn --features mnf:N` classifies on the scene's first N MNF components:
the labels equal scikit-learn's brute-force KNN fitted on the components that
`hyperbatch mnf --components N` writes (read with h5py), on the same training split;
`--apply STATS.h5` uses a basis computed elsewhere.
Runs on a synthetic scene the test generates, so it needs no shared data."""
import json
import os

import numpy as np

import hbtest

args = hbtest.parse_args()
try:
    import h5py
    import spectral.io.envi as envi
    from sklearn.neighbors import KNeighborsClassifier
except ImportError as e:
    hbtest.skip(f"oracle missing: {e} (apt-get install python3-sklearn python3-spectral python3-h5py)")

checks = hbtest.Checks()
N, K = 8, 5
with hbtest.workdir() as tmp:
    scene = os.path.join(tmp, "scene.hdr")
    hbtest.run(args.cli, "synth", "-o", scene, "--lines", 72, "--samples", 90, "--bands", 60,
               "--classes", 4, "--seed", 3, "--fill-border", 0.1)
    truth = os.path.join(tmp, "scene_truth.hdr")
    components = os.path.join(tmp, "mnf.h5")
    hbtest.run(args.cli, "mnf", scene, "-o", components, "--components", N)
    with h5py.File(components, "r") as f:
        Z = f["/components"][...].reshape(-1, N).astype(np.float64)

    out = os.path.join(tmp, "classes.hdr")
    split_path = os.path.join(tmp, "split.json")
    hbtest.run(args.cli, "knn", scene, "--truth", truth, "--train-fraction", 0.1, "--seed", 5, "-k", K,
               "--features", f"mnf:{N}", "-o", out, "--export-split", split_path)
    checks.true(not any(".mnf-features" in name for name in os.listdir(tmp)), "the temporary components cube is removed")
    with open(split_path) as f:
        train = np.asarray(json.load(f)["train_pixels"], dtype=np.int64)
    ids = np.asarray(envi.open(truth).load()).reshape(-1).astype(np.int64)
    got = np.asarray(envi.open(out).load()).reshape(-1).astype(np.int64)

    valid = np.isfinite(Z).all(axis=1)
    checks.true(valid.sum() > 0.8 * len(valid) and (~valid).sum() > 0, "the scene has valid and no-data pixels")
    checks.true(np.all(got[~valid] == 0), "no-data pixels stay unclassified")
    sk = KNeighborsClassifier(n_neighbors=K, algorithm="brute").fit(Z[train], ids[train])
    want = sk.predict(Z[valid])
    agreement = float((got[valid] == want).mean())
    print(f"mnf:{N} features: {agreement:.5f} of {valid.sum()} labels equal sklearn's")
    checks.true(agreement >= 0.999, f"label agreement with sklearn on MNF components {agreement:.5f} < 0.999")

    # The components cube is HDF5: read tile by tile (18 tiles) while the class map is
    # written into HDF5 between tiles, on the one thread that may call the library.
    h5_out = os.path.join(tmp, "classes.h5")
    hbtest.run(args.cli, "knn", scene, "--truth", truth, "--train-fraction", 0.1, "--seed", 5, "-k", K,
               "--features", f"mnf:{N}", "--tile-rows", 4, "-o", h5_out)
    with h5py.File(h5_out, "r") as f:
        checks.true(np.array_equal(f["/cube"][...].reshape(-1).astype(np.int64), got),
                    "HDF5 scene in 18 tiles to an HDF5 class map: the ENVI run's labels")

    # --apply: a basis computed elsewhere (here the scene's own, via --stats-only) gives
    # the same class map as computing it in the run.
    stats = os.path.join(tmp, "stats.h5")
    hbtest.run(args.cli, "mnf", scene, "-o", stats, "--stats-only")
    applied = os.path.join(tmp, "classes_applied.hdr")
    hbtest.run(args.cli, "knn", scene, "--truth", truth, "--train-fraction", 0.1, "--seed", 5, "-k", K,
               "--features", f"mnf:{N}", "--apply", stats, "-o", applied)
    same = np.asarray(envi.open(applied).load()).reshape(-1).astype(np.int64)
    checks.true(np.array_equal(same, got), "--apply with the scene's own statistics gives the same class map")
    hbtest.run(args.cli, "knn", scene, "--truth", truth, "--train-fraction", 0.1, "-k", K, "--apply", stats,
               "-o", os.path.join(tmp, "refused.hdr"), expect=2)
checks.done("test_knn_mnf_features")
