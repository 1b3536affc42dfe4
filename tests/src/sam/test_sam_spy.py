"""`hyperbatch sam` against Spectral Python and numpy on real data.

Jasper Ridge (100 x 100 x 198 int16 AVIRIS) with its ground-truth endmember library,
and the USGS 1995 mineral library (498 spectra at the 224 AVIRIS channels) resampled to
the scene: the scene records no band centres, so a copy of its header gets the AVIRIS
centres of its channels (band names give the channel numbers) shifted by 3 nm, which
makes the resampling real interpolation. Checked:
  * angles within 1e-6 rad of spectral.spectral_angles, class maps identical;
  * SCM correlations against numpy Pearson;
  * the resampled library (--save-library) against np.interp and a numpy Gaussian;
  * thresholds, ignored pixels, class means (truth raster, KNN training file), HDF5 output;
  * bad libraries: one line naming file and field, exit 3, no output left.
"""
import os
import re
import subprocess

import numpy as np

import hbtest

args = hbtest.parse_args()
hbtest.require_shared_data(args.shared_data)
JASPER = os.path.join(args.shared_data, "jasper_ridge")
SCENE = os.path.join(JASPER, "jasper_ridge.hdr")
ENDMEMBERS = os.path.join(JASPER, "jasper_ridge_endmembers_gt.hdr")
TRUTH = os.path.join(JASPER, "jasper_ridge_labels_gt.hdr")
USGS = os.path.join(args.shared_data, "usgs_library", "usgs_1995_aviris224.hdr")
if not all(os.path.exists(p) for p in (SCENE, ENDMEMBERS, TRUTH, USGS)):
    hbtest.skip("Jasper Ridge or the USGS library missing under " + args.shared_data)
try:
    import h5py
    import spectral
    import spectral.io.envi as envi
except ImportError as e:
    hbtest.skip(f"oracle missing: {e} (apt-get install python3-spectral python3-h5py)")

checks = hbtest.Checks()
X = np.asarray(envi.open(SCENE).load()).astype(np.float64)  # (100, 100, 198)
END = np.asarray(envi.open(ENDMEMBERS, ENDMEMBERS[:-4] + ".sli").spectra, dtype=np.float64)
USGS_LIB = envi.open(USGS, USGS[:-4] + ".sli")
USGS_SPECTRA = np.asarray(USGS_LIB.spectra, dtype=np.float64)
USGS_NM = np.asarray(USGS_LIB.bands.centers) * 1000.0
USGS_FWHM = np.asarray(USGS_LIB.bands.bandwidths) * 1000.0


def load(header):
    return np.asarray(envi.open(header).load())


def sam_run(work, *options, expect=0):
    return hbtest.run(args.cli, "sam", *options, expect=expect)


def near_tie(scores, best, want, larger_is_better):
    """Pixels where hyperbatch's winner and the oracle's differ only by rounding."""
    s = scores.reshape(-1, scores.shape[-1])
    got_score = s[np.arange(len(best)), best]
    want_score = s[np.arange(len(want)), want]
    return np.abs(got_score - want_score) < 1e-9


def check_angles(work, scene_x, library, rules, class_map, what):
    want = spectral.spectral_angles(scene_x, library)
    got = load(rules)
    checks.true(np.nanmax(np.abs(got - want)) <= 1e-6, f"{what}: angles within 1e-6 rad of spectral_angles "
                f"(max {np.nanmax(np.abs(got - want)):.2e})")
    labels = load(class_map)[:, :, 0].reshape(-1).astype(np.int64)
    oracle = np.argmin(want, axis=2).reshape(-1) + 1
    differ = labels != oracle
    checks.true(not differ.any() or near_tie(want, labels[differ] - 1, oracle[differ] - 1, False).all(),
                f"{what}: class map identical to argmin of spectral_angles ({differ.sum()} near-tie differences)")
    checks.equal(int(differ.sum()), 0, f"{what}: no differing class")


def channel_numbers():
    meta = envi.open(SCENE).metadata
    return np.array([int(re.search(r"(\d+)$", n).group(1)) for n in meta["band names"]])


def scene_with_centres(work, shift_nm, name, extra=""):
    """A header beside a link to Jasper's data, with the AVIRIS centres (+ shift) and FWHM."""
    ch = channel_numbers() - 1
    text = open(SCENE).read()
    text += "wavelength units = Nanometers\n"
    text += "wavelength = {" + ", ".join(f"{w:.6f}" for w in USGS_NM[ch] + shift_nm) + "}\n"
    text += "fwhm = {" + ", ".join(f"{w:.6f}" for w in USGS_FWHM[ch]) + "}\n" + extra
    header = os.path.join(work, name + ".hdr")
    open(header, "w").write(text)
    os.symlink(os.path.join(JASPER, "jasper_ridge.img"), os.path.join(work, name + ".img"))
    return header, USGS_NM[ch] + shift_nm, USGS_FWHM[ch]


def reference_linear(centres):
    order = np.argsort(USGS_NM, kind="stable")
    return np.array([np.interp(centres, USGS_NM[order], s[order]) for s in USGS_SPECTRA])


def reference_gaussian(centres, fwhm):
    order = np.argsort(USGS_NM, kind="stable")
    nm = USGS_NM[order]
    width = np.empty_like(nm)
    width[1:-1] = (nm[2:] - nm[:-2]) / 2
    width[0], width[-1] = nm[1] - nm[0], nm[-1] - nm[-2]
    out = np.empty((len(USGS_SPECTRA), len(centres)))
    for f, (c, w) in enumerate(zip(centres, fwhm)):
        z = (nm - c) / (w / (2 * np.sqrt(2 * np.log(2))))
        weight = np.where(np.abs(z) <= 3, np.exp(-0.5 * z * z) * width, 0.0)
        out[:, f] = USGS_SPECTRA[:, order] @ (weight / weight.sum())
    return out


with hbtest.workdir() as work:
    # 1. Jasper Ridge endmembers: the library already on the scene's 198 channels.
    out = os.path.join(work, "end.hdr")
    sam_run(work, SCENE, "--library", ENDMEMBERS, "-o", out, "--rules", os.path.join(work, "end_rules.hdr"),
            "--backend", "cpu")
    check_angles(work, X, END, os.path.join(work, "end_rules.hdr"), out, "Jasper endmembers")
    best = load(os.path.join(work, "end_score.hdr"))[:, :, 0]
    checks.true(np.allclose(best, spectral.spectral_angles(X, END).min(axis=2), atol=1e-6, rtol=0), "best angle image")
    hdr = envi.open(out).metadata
    checks.equal(hdr["file type"], "ENVI Classification", "class map file type")
    checks.equal(hdr["class names"], ["Unclassified", "Tree", "Water", "Dirt", "Road"], "class names from the library")

    # 2. The USGS library resampled: linear and Gaussian, against numpy; then SPy angles.
    shifted, centres, fwhm = scene_with_centres(work, 3.0, "shifted")
    Xs = X  # same pixels
    for how, reference in (("linear", reference_linear(centres)), ("gaussian", reference_gaussian(centres, fwhm))):
        saved = os.path.join(work, f"usgs_{how}.h5")
        rules = os.path.join(work, f"usgs_{how}_rules.hdr")
        cmap = os.path.join(work, f"usgs_{how}.hdr")
        sam_run(work, shifted, "--library", USGS, "--resample", how, "--save-library", saved, "--rules", rules,
                "-o", cmap, "--backend", "cpu")
        with h5py.File(saved, "r") as f:
            ours = f["/library/spectra"][()]
            checks.equal([n.decode() if isinstance(n, bytes) else n for n in f["/library/names"][()]][:2],
                         list(USGS_LIB.names[:2]), f"{how}: names kept")
        checks.equal(ours.shape, (498, 198), f"{how}: every scene band covered")
        checks.true(np.allclose(ours, reference, rtol=1e-12, atol=1e-12), f"{how}: resampled library = numpy "
                    f"(max {np.abs(ours - reference).max():.2e})")
        check_angles(work, Xs, reference, rules, cmap, f"USGS {how}")
    # Centres equal to the library's: channels taken as they are.
    matched, _, _ = scene_with_centres(work, 0.0, "matched")
    saved = os.path.join(work, "usgs_matched.h5")
    sam_run(work, matched, "--library", USGS, "--save-library", saved, "-o", os.path.join(work, "m.hdr"))
    with h5py.File(saved, "r") as f:
        checks.true(np.array_equal(f["/library/spectra"][()], USGS_SPECTRA[:, channel_numbers() - 1]),
                    "matched centres: library channels unchanged")
    # The library read back from its HDF5 form gives the same classes.
    sam_run(work, shifted, "--library", os.path.join(work, "usgs_linear.h5"), "-o", os.path.join(work, "again.hdr"))
    checks.true(np.array_equal(load(os.path.join(work, "again.hdr")), load(os.path.join(work, "usgs_linear.hdr"))),
                "HDF5 library round trip: same class map")

    # 3. SCM: Pearson correlation with numpy.
    rules = os.path.join(work, "scm_rules.hdr")
    sam_run(work, SCENE, "--library", ENDMEMBERS, "--method", "scm", "-o", os.path.join(work, "scm.hdr"),
            "--rules", rules)
    P = X.reshape(-1, 198)
    Pc = P - P.mean(axis=1, keepdims=True)
    Ec = END - END.mean(axis=1, keepdims=True)
    r = (Pc @ Ec.T) / np.outer(np.linalg.norm(Pc, axis=1), np.linalg.norm(Ec, axis=1))
    checks.true(np.abs(load(rules).reshape(-1, 4) - r).max() <= 1e-6, "SCM: correlations = numpy Pearson")
    checks.true(np.array_equal(load(os.path.join(work, "scm.hdr")).reshape(-1), np.argmax(r, axis=1) + 1),
                "SCM: class = best correlation")

    # 4. Thresholds.
    sam_run(work, SCENE, "--library", ENDMEMBERS, "--max-angle", "0.1", "-o", os.path.join(work, "thr.hdr"))
    angles = spectral.spectral_angles(X, END)
    want = np.where(angles.min(axis=2) <= 0.1, np.argmin(angles, axis=2) + 1, 0)
    got = load(os.path.join(work, "thr.hdr"))[:, :, 0]
    checks.true(0 < (want == 0).sum() < want.size, "threshold leaves some pixels unclassified")
    checks.true(np.array_equal(got, want), "--max-angle: unclassified exactly where the best angle exceeds it")
    sam_run(work, SCENE, "--library", ENDMEMBERS, "--method", "scm", "--min-correlation", "0.99",
            "-o", os.path.join(work, "thr_scm.hdr"))
    want = np.where(r.max(axis=1) >= 0.99, np.argmax(r, axis=1) + 1, 0)
    checks.true(np.array_equal(load(os.path.join(work, "thr_scm.hdr")).reshape(-1), want), "--min-correlation")

    # 5. Ignored pixels: a copy with the ignore value in one band of some pixels.
    raw = np.fromfile(os.path.join(JASPER, "jasper_ridge.img"), dtype="<i2").reshape(100, 100, 198).copy()
    raw[10, 20:30, 50] = -777
    raw[99, 99, 0] = -777
    raw.tofile(os.path.join(work, "holes.img"))
    open(os.path.join(work, "holes.hdr"), "w").write(open(SCENE).read() + "data ignore value = -777\n")
    sam_run(work, os.path.join(work, "holes.hdr"), "--library", ENDMEMBERS, "-o", os.path.join(work, "holes_map.hdr"),
            "--rules", os.path.join(work, "holes_rules.hdr"), "--tile-rows", "7")
    cm = load(os.path.join(work, "holes_map.hdr"))[:, :, 0]
    hole = raw[:, :, :].min(axis=2) == -777
    checks.true(hole.sum() == 11 and (cm[hole] == 0).all() and (cm[~hole] > 0).all(), "ignored pixels unclassified")
    checks.true(np.isnan(load(os.path.join(work, "holes_rules.hdr"))[hole]).all(), "ignored pixels: NaN scores")

    # 6. Class means from the truth raster, and HDF5 output.
    out = os.path.join(work, "means.h5")
    sam_run(work, SCENE, "--truth", TRUTH, "-o", out)
    labels = load(TRUTH)[:, :, 0].reshape(-1)
    means = np.array([P[labels == c].mean(axis=0) for c in range(1, 5)])
    want = np.argmin(spectral.spectral_angles(X, means), axis=2) + 1
    with h5py.File(out, "r") as f:
        checks.true(np.array_equal(f["/cube"][()][:, :, 0], want), "--truth class means: class map (HDF5 /cube)")
        checks.true(np.allclose(f["/score"][()][:, :, 0], spectral.spectral_angles(X, means).min(axis=2), atol=1e-6),
                    "--truth class means: /score = best angle")

    # Class means of a KNN training file (rows drawn and saved by `knn --save-training`).
    training = os.path.join(work, "train.h5")
    hbtest.run(args.cli, "knn", SCENE, "--truth", TRUTH, "--train-fraction", "0.1", "-k", "1",
               "-o", os.path.join(work, "knn.hdr"), "--save-training", training)
    with h5py.File(training, "r") as f:
        rows, row_labels = f["/train/features"][()].astype(np.float64), f["/train/labels"][()]
    means = np.array([rows[row_labels == c].mean(axis=0) for c in range(1, 5)])
    sam_run(work, SCENE, "--train", training, "-o", os.path.join(work, "train_map.hdr"),
            "--rules", os.path.join(work, "train_rules.hdr"))
    check_angles(work, X, means, os.path.join(work, "train_rules.hdr"), os.path.join(work, "train_map.hdr"),
                 "--train class means")

    # 7. Bad libraries: one line naming file and field, exit 3, nothing left behind.
    def refused(library, field, scene=SCENE):
        target = os.path.join(work, "bad", "map.hdr")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        proc = subprocess.run([args.cli, "--quiet", "sam", scene, "--library", library, "-o", target, "--rules",
                               os.path.join(work, "bad", "rules.hdr")], capture_output=True, text=True)
        lines = proc.stderr.strip().splitlines()
        checks.equal(proc.returncode, 3, f"{library}: exit code")
        checks.true(len(lines) == 1 and os.path.basename(library) in lines[0] and field in lines[0],
                    f"{library}: one line naming the file and '{field}': {proc.stderr!r}")
        checks.equal(os.listdir(os.path.dirname(target)), [], f"{library}: no output left")

    standard = os.path.join(work, "standard.hdr")
    open(standard, "w").write(open(ENDMEMBERS).read().replace("ENVI Spectral Library", "ENVI Standard"))
    os.symlink(ENDMEMBERS[:-4] + ".sli", os.path.join(work, "standard.sli"))
    refused(standard, "file type")
    far, _, _ = scene_with_centres(work, 5000.0, "far")
    refused(USGS, "wavelength", scene=far)
    refused(USGS, "wavelength")  # no centres on the scene, 224 channels for 198 bands
    zero = os.path.join(work, "zero.h5")
    with h5py.File(zero, "w") as f:
        f["/library/spectra"] = np.vstack([END, np.zeros((1, 198))])
    refused(zero, "spectra")
    with h5py.File(os.path.join(work, "empty.h5"), "w") as f:
        f["/other"] = np.zeros(3)
    refused(os.path.join(work, "empty.h5"), "/library")

checks.done("sam matches Spectral Python and numpy")
