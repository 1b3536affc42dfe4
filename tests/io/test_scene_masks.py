"""--mask: a single-band raster (nonzero = exclude) or an EMIT mask granule with
--mask-bands removes pixels from statistics, training and classification (class 0),
on 1 and 3 ranks; a mask of the wrong shape or an unknown flag band is bad input."""
import json
import os

import numpy as np

import archive_products as ap
import clitest
import emit_granules as emit
import hbtest

args = clitest.parse_args()
# --part cuda: the same checks on the GPU backend (ctest label cuda; skipped without a GPU).
BACKEND = clitest.backend_or_skip(args, hbtest.skip)
try:
    import h5py
    import netCDF4  # noqa: F401 (the granule writer)
    import spectral.io.envi as envi
except ImportError as e:
    hbtest.skip(f"oracle missing: {e} (apt-get install python3-netcdf4 python3-h5py python3-spectral)")
checks = hbtest.Checks()

cli = clitest.checked_runner(args, checks)


def envi_array(path):
    img = envi.open(path)
    return np.asarray(img.load(dtype=img.dtype))[..., 0]


def check_mnf_mean(folder):
    """Statistics skip masked pixels: the MNF mean is numpy's over the others."""
    rng = np.random.default_rng(11)
    cube = rng.integers(100, 4000, size=(30, 20, 6)).astype(np.int16)
    mask = np.zeros((30, 20), np.uint8)
    mask[5:12, 3:9] = 1
    cube[mask == 1] = 32000  # masked pixels are outliers: they would move the mean
    ap.write_envi(os.path.join(folder, "scene.img"), cube)
    ap.write_envi(os.path.join(folder, "mask.img"), mask)
    for ranks in sorted({1, clitest.most_ranks(BACKEND, 3)}):
        cli(folder, "mnf", "scene.hdr", "--mask", "mask.hdr", "-o", f"stats_{ranks}.h5", "--stats-only",
            "--backend", BACKEND, "--tile-rows", 4, ranks=ranks)
        with h5py.File(os.path.join(folder, f"stats_{ranks}.h5"), "r") as f:
            mean = f["mnf/mean"][...]
            pixels = int(f["mnf"].attrs["data_pixels"])
        want = cube[mask == 0].astype(np.float64).mean(axis=0)
        checks.true(np.allclose(mean, want, rtol=1e-9), f"MNF mean without masked pixels ({ranks} ranks)")
        checks.equal(pixels, int((mask == 0).sum()), f"MNF data pixels ({ranks} ranks)")


def check_knn_mask(folder):
    """Masked pixels are class 0 and never drawn for training."""
    dn, truth, *_ = ap.aviris_classic(folder)
    mask = np.zeros(truth.shape, np.uint8)
    mask[::4, ::3] = 1
    ap.write_envi(os.path.join(folder, "knn_mask.img"), mask)
    labels = {}
    for ranks in sorted({1, clitest.most_ranks(BACKEND, 3)}):
        split = ["--export-split", f"split_{ranks}.json"] if ranks == 1 else []  # exported on one rank only
        cli(folder, "knn", ap.IMAGE, "--truth", "truth.img", "-k", 3, "--train-fraction", 0.3, "--mask",
            "knn_mask.hdr", "-o", f"knn_{ranks}.hdr", *split, "--backend", BACKEND, ranks=ranks)
        labels[ranks] = envi_array(os.path.join(folder, f"knn_{ranks}.hdr"))
        checks.true((labels[ranks][mask == 1] == 0).all(), f"KNN: masked pixels are class 0 ({ranks} ranks)")
        checks.true((labels[ranks][mask == 0] != 0).all(), f"KNN: the others are classified ({ranks} ranks)")
        if not split:
            continue
        with open(os.path.join(folder, f"split_{ranks}.json")) as f:
            train = np.asarray(json.load(f)["train_pixels"], dtype=np.int64)
        checks.true(not mask.reshape(-1)[train].any(), f"KNN: no masked pixel trains ({ranks} ranks)")
    if 3 in labels:
        checks.true(np.array_equal(labels[1], labels[3]), "KNN with a mask: 1 and 3 ranks")


def check_emit_mask(folder):
    """An EMIT mask granule: the flag bands named by --mask-bands exclude pixels."""
    data, *_ = emit.reflectance_granule(os.path.join(folder, "rfl.nc"))
    lines, samples, _ = data.shape
    truth = np.random.default_rng(2).integers(1, 4, size=(lines, samples)).astype(np.uint8)
    ap.write_envi(os.path.join(folder, "rfl_truth.img"), truth)
    cloud, aggregate = [(10, 4), (20, 7)], [(30, 2)]
    emit.mask_granule(os.path.join(folder, "mask.nc"), lines, samples,
                      flagged=[(r, c, 0) for r, c in cloud] + [(r, c, 7) for r, c in aggregate])
    for ranks in sorted({1, clitest.most_ranks(BACKEND, 3)}):
        out = f"sam_cloud_{ranks}.hdr"
        cli(folder, "sam", "rfl.nc", "--truth", "rfl_truth.hdr", "--mask", "mask.nc", "--mask-bands", "Cloud flag",
            "-o", out, "--backend", BACKEND, ranks=ranks)
        classes = envi_array(os.path.join(folder, out))
        checks.true(all(classes[r, c] == 0 for r, c in cloud), f"cloud pixels are class 0 ({ranks} ranks)")
        checks.true(all(classes[r, c] != 0 for r, c in aggregate), f"aggregate-only pixels classified ({ranks} ranks)")
    cli(folder, "sam", "rfl.nc", "--truth", "rfl_truth.hdr", "--mask", "mask.nc", "-o", "sam_default.hdr",
        "--backend", BACKEND)
    classes = envi_array(os.path.join(folder, "sam_default.hdr"))
    checks.true(all(classes[r, c] == 0 for r, c in aggregate), "default: the Aggregate Flag excludes")
    refused(folder, ["sam", "rfl.nc", "--truth", "rfl_truth.hdr", "--mask", "mask.nc", "--mask-bands", "Snow flag",
                     "-o", "x.hdr"], "mask.nc", "mask_bands", "unknown flag band")


def refused(folder, argv, name, field, what):
    before = sorted(os.listdir(folder))
    _, err = cli(folder, *argv, expect=3)
    line = clitest.one_error_line(err, what)
    checks.true(name in line and field in line, f"{what}: names {name} and {field}: {line}")
    checks.equal(sorted(os.listdir(folder)), before, f"{what}: nothing written")


def check_mask_is_not_an_output(folder):
    before = sorted(os.listdir(folder))
    _, err = cli(folder, "mnf", "scene.hdr", "--mask", "mask.hdr", "-o", "mask.hdr", expect=2)
    checks.true("--mask" in clitest.one_error_line(err, "-o names the mask"), f"names --mask: {err}")
    checks.equal(sorted(os.listdir(folder)), before, "the mask is untouched")


def check_wrong_shape(folder):
    ap.write_envi(os.path.join(folder, "small_mask.img"), np.zeros((3, 3, 1), np.uint8))
    refused(folder, ["mnf", "scene.hdr", "--mask", "small_mask.hdr", "-o", "x.h5"], "small_mask.hdr", "shape",
            "mask of the wrong shape")


with hbtest.workdir() as tmp:
    check_mnf_mean(tmp)
    check_wrong_shape(tmp)
    check_mask_is_not_an_output(tmp)
with hbtest.workdir() as tmp:
    check_knn_mask(tmp)
with hbtest.workdir() as tmp:
    check_emit_mask(tmp)
checks.done("test_scene_masks")
