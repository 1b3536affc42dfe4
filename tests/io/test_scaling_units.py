"""Physical units: AVIRIS-Classic .gain/.spc, ENVI gain/offset keys and reflectance
scale factor. `info` says which scaling applies; ingest/export keep the stored numbers
(bit-identical round trip) unless --units physical; analysis commands work in physical
units unless --units raw. MNF is unchanged by per-band scaling, SAM and KNN are not:
checked against numpy and scikit-learn on the physical values, on 1 and 3 ranks."""
import json
import os

import numpy as np

import archive_products as ap
import clitest
import hbtest

args = clitest.parse_args()
# --part cuda: the same checks on the GPU backend (ctest label cuda; skipped without a GPU).
BACKEND = clitest.backend_or_skip(args, hbtest.skip)
try:
    import h5py
    import spectral.io.envi as envi
    from sklearn.neighbors import KNeighborsClassifier
except ImportError as e:
    hbtest.skip(f"oracle missing: {e} (apt-get install python3-h5py python3-spectral python3-sklearn)")
checks = hbtest.Checks()

cli = clitest.checked_runner(args, checks)


def envi_array(path):
    img = envi.open(path)
    return np.asarray(img.load(dtype=img.dtype))


def check_classic_info(folder, factors, centres, fwhm):
    info = json.loads(cli(folder, "info", ap.IMAGE, "--json")[0])
    scaling = info["scaling"]
    checks.true(scaling["source"].endswith(ap.FLIGHTLINE + "rdn_c.gain"), f"scaling source: {scaling['source']}")
    checks.true(np.allclose(scaling["gain"], 1.0 / factors, rtol=1e-15), "gain = 1 / factor")
    checks.equal(scaling["offset"], [0.0] * len(factors), "no offset")
    checks.equal(scaling["units"], "microwatts/cm^2/nm/sr", "radiance units")
    checks.equal(info["wavelength_range"], [float(centres[0]), float(centres[-1])], "band centres from .spc")
    text = cli(folder, "info", ap.IMAGE)[0]
    checks.true("scaling" in text and ".gain" in text, "text info names the .gain file")


def check_classic_ingest(folder, dn, factors):
    cli(folder, "ingest", ap.IMAGE, "-o", "raw.h5")
    with h5py.File(os.path.join(folder, "raw.h5"), "r") as f:
        checks.true(np.array_equal(f["cube"][...], dn), "ingest keeps the stored DN")
        checks.true(np.allclose(f["cube"].attrs["scaling_gain"], 1.0 / factors), "the scaling travels as metadata")
    cli(folder, "export", "raw.h5", "-o", "back.hdr")
    with open(os.path.join(folder, ap.IMAGE), "rb") as a, open(os.path.join(folder, "back.img"), "rb") as b:
        checks.true(a.read() == b.read(), "ingest + export: bit-identical data")
    back = envi.open(os.path.join(folder, "back.hdr"))
    checks.true(np.allclose([float(g) for g in back.metadata["data gain values"]], 1.0 / factors),
                "export writes the scaling as ENVI data gain values")
    cli(folder, "ingest", ap.IMAGE, "-o", "phys.h5", "--units", "physical")
    with h5py.File(os.path.join(folder, "phys.h5"), "r") as f:
        phys = f["cube"][...]
        checks.equal(phys.dtype, np.float32, "physical ingest is float32")
        checks.true("scaling_gain" not in f["cube"].attrs, "physical values carry no scaling")
    want = (dn.astype(np.float64) * (1.0 / factors)).astype(np.float32)
    checks.true(np.array_equal(phys, want), "physical = DN / factor")
    return want


def spectral_angles(pixels, means):
    p = pixels / np.linalg.norm(pixels, axis=-1, keepdims=True)
    m = means / np.linalg.norm(means, axis=-1, keepdims=True)
    return np.arccos(np.clip(p @ m.T, -1, 1))


def check_sam(folder, phys, dn, truth):
    """SAM against class means of the truth: physical angles match numpy's on physical
    values; raw angles (per-band gains ignored) do not."""
    classes = np.unique(truth)
    means = np.stack([phys[truth == c].astype(np.float64).mean(axis=0) for c in classes])
    want = spectral_angles(phys.astype(np.float64), means)
    for ranks in sorted({1, clitest.most_ranks(BACKEND, 3)}):
        cli(folder, "sam", ap.IMAGE, "--truth", "truth.img", "-o", f"sam_{ranks}.hdr", "--backend", BACKEND,
            "--tile-rows", 5, ranks=ranks)
        score = envi_array(os.path.join(folder, f"sam_{ranks}_score.hdr"))[..., 0]
        checks.true(np.allclose(score, want.min(axis=-1), atol=1e-5), f"SAM angles in physical units ({ranks} ranks)")
        labels = envi_array(os.path.join(folder, f"sam_{ranks}.hdr"))[..., 0]
        checks.true(np.array_equal(labels, classes[want.argmin(axis=-1)]), f"SAM classes ({ranks} ranks)")
    cli(folder, "sam", ap.IMAGE, "--truth", "truth.img", "-o", "sam_raw.hdr", "--backend", BACKEND, "--units", "raw")
    raw_score = envi_array(os.path.join(folder, "sam_raw_score.hdr"))[..., 0]
    checks.true(not np.allclose(raw_score, want.min(axis=-1), atol=1e-4), "raw SAM angles differ from physical")


def check_knn(folder, phys, truth):
    """KNN in physical units equals scikit-learn's on the physical values, with the
    training split hyperbatch exported; --units raw gives other labels."""
    x = phys.reshape(-1, phys.shape[-1]).astype(np.float64)
    y = truth.reshape(-1)
    results = {}
    many = clitest.most_ranks(BACKEND, 3)
    for units, ranks in sorted({("physical", 1), ("physical", many), ("raw", 1)}):
        name = f"knn_{units}_{ranks}"
        split = ["--export-split", f"{name}.json"] if ranks == 1 else []  # exported on one rank only
        cli(folder, "knn", ap.IMAGE, "--truth", "truth.img", "-k", 3, "--train-fraction", 0.3, "--seed", 2,
            "-o", f"{name}.hdr", *split, "--backend", BACKEND, "--units", units, "--tile-rows", 5, ranks=ranks)
        results[name] = envi_array(os.path.join(folder, f"{name}.hdr")).reshape(-1)
        if split and units == "physical":
            with open(os.path.join(folder, f"{name}.json")) as f:
                train = np.asarray(json.load(f)["train_pixels"], dtype=np.int64)
            sk = KNeighborsClassifier(n_neighbors=3, algorithm="brute").fit(x[train], y[train])
            agree = float((sk.predict(x) == results[name]).mean())
            checks.true(agree >= 0.995, f"KNN physical labels = sklearn's ({ranks} ranks): {agree}")
    if many > 1:
        checks.true(np.array_equal(results["knn_physical_1"], results[f"knn_physical_{many}"]),
                    f"KNN: 1 and {many} ranks")
    checks.true(not np.array_equal(results["knn_physical_1"], results["knn_raw_1"]), "KNN: raw units differ")


def eigenvalues(folder, name):
    with h5py.File(os.path.join(folder, name), "r") as f:
        return f["mnf/eigenvalues"][...]


def check_mnf(folder):
    """MNF eigenvalues are invariant to per-band gains: physical = raw."""
    cli(folder, "mnf", ap.IMAGE, "-o", "mnf_phys.h5", "--stats-only", "--backend", BACKEND)
    cli(folder, "mnf", ap.IMAGE, "-o", "mnf_raw.h5", "--stats-only", "--backend", BACKEND, "--units", "raw")
    phys, raw = eigenvalues(folder, "mnf_phys.h5"), eigenvalues(folder, "mnf_raw.h5")
    checks.true(np.allclose(phys, raw, rtol=1e-6), f"MNF eigenvalues unchanged by scaling: {phys[:3]} {raw[:3]}")


def check_envi_keys(folder):
    """ENVI gain/offset keys and reflectance scale factor."""
    rng = np.random.default_rng(9)
    dn = rng.integers(0, 10000, size=(6, 5, 4)).astype(np.uint16)
    gain, offset = np.array([0.5, 2.0, 1e-4, 3.0]), np.array([0.0, -1.5, 0.25, 10.0])
    ap.write_envi(os.path.join(folder, "keys.img"), dn,
                  "data gain values = {" + ", ".join(map(repr, gain)) + "}\n"
                  "data offset values = {" + ", ".join(map(repr, offset)) + "}\n")
    info = json.loads(cli(folder, "info", "keys.hdr", "--json")[0])
    checks.equal(info["scaling"]["source"], "ENVI header 'data gain values'", "gain keys named as the source")
    cli(folder, "ingest", "keys.hdr", "-o", "keys.h5", "--units", "physical")
    with h5py.File(os.path.join(folder, "keys.h5"), "r") as f:
        checks.true(np.array_equal(f["cube"][...], (gain * dn + offset).astype(np.float32)), "gain x DN + offset")
    ap.write_envi(os.path.join(folder, "refl.img"), dn, "reflectance scale factor = 10000\n")
    cli(folder, "ingest", "refl.hdr", "-o", "refl.h5", "--units", "physical")
    with h5py.File(os.path.join(folder, "refl.h5"), "r") as f:
        checks.true(np.array_equal(f["cube"][...], (dn * (1.0 / 10000)).astype(np.float32)), "DN / factor")
    cli(folder, "ingest", "keys.hdr", "-o", "keys_raw.h5")
    info = json.loads(cli(folder, "info", "keys_raw.h5", "--json")[0])
    checks.true(np.allclose(info["scaling"]["offset"], offset), "the HDF5 copy reads the ENVI keys it carries")
    cli(folder, "export", "keys_raw.h5", "-o", "keys_back.hdr")
    with open(os.path.join(folder, "keys.img"), "rb") as a, open(os.path.join(folder, "keys_back.img"), "rb") as b:
        checks.true(a.read() == b.read(), "scaled ENVI round trip is bit-identical")
    checks.equal(envi.open(os.path.join(folder, "keys_back.hdr")).metadata["data gain values"],
                 [repr(g) for g in gain], "gain keys kept verbatim")


def refused(folder, argv, name, field, what):
    before = sorted(os.listdir(folder))
    _, err = cli(folder, *argv, expect=3)
    line = clitest.one_error_line(err, what)
    checks.true(name in line and field in line, f"{what}: names {name} and {field}: {line}")
    checks.equal(sorted(os.listdir(folder)), before, f"{what}: nothing written")


def check_bad_calibration():
    with hbtest.workdir() as tmp:
        ap.aviris_classic(tmp, gain_rows=range(31))
        refused(tmp, ["ingest", ap.IMAGE, "-o", "x.h5"], ap.FLIGHTLINE + "rdn_c.gain", "channels",
                ".gain of the wrong length")
        refused(tmp, ["mnf", ap.IMAGE, "-o", "x.h5"], ap.FLIGHTLINE + "rdn_c.gain", "channels",
                ".gain of the wrong length (mnf)")
    with hbtest.workdir() as tmp:
        ap.write_envi(os.path.join(tmp, "bad.img"), np.zeros((2, 2, 3), np.int16), "data gain values = {1, 2}\n")
        refused(tmp, ["info", "bad.hdr"], "bad.hdr", "data gain values", "gain list of the wrong length")


def check_aviris_ng_names():
    """AVIRIS-NG and AVIRIS-3 deliveries: extensionless ENVI pairs of every product name."""
    names = ["ang20190712t191233_rfl_v2v2_img", "ang20170323t202244_corr_v2p13_img",
             "ang20190712t191233_rdn_v2v2_img", "ang20190712t191233_rdn_v2v2_ort",
             "AV320230915t213013_L2A_OE_main_98b13fd2_RFL_ORT", "AV320230915t213013_L1B_RDN_main_98b13fd2_RDN_ORT"]
    with hbtest.workdir() as tmp:
        cube = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
        for name in names:
            ap.write_envi(os.path.join(tmp, name), cube, interleave="bil")
            info = json.loads(cli(tmp, "info", name, "--json")[0])
            checks.equal((info["lines"], info["samples"], info["bands"]), cube.shape, f"{name} opens")
            checks.true("scaling" not in info, f"{name}: no scaling")


with hbtest.workdir() as tmp:
    dn, truth, factors, centres, fwhm = ap.aviris_classic(tmp)
    check_classic_info(tmp, factors, centres, fwhm)
    phys = check_classic_ingest(tmp, dn, factors)
    check_sam(tmp, phys, dn, truth)
    check_knn(tmp, phys, truth)
    check_mnf(tmp)
    check_envi_keys(tmp)
check_bad_calibration()
check_aviris_ng_names()
checks.done("test_scaling_units")
