"""Every real scene in ../shared/data read by hyperbatch and, independently, by
Spectral Python: `info` agrees on the header, and pixel values agree after
ingest (HDF5, read by h5py) and after export in every interleave (read by SPy)."""
import glob
import os

import numpy as np

import hbtest

args = hbtest.parse_args()
hbtest.require_shared_data(args.shared_data)
try:
    import h5py
    import spectral.io.envi as envi
except ImportError as e:
    hbtest.skip(f"oracle missing: {e} (apt-get install python3-spectral python3-h5py)")

checks = hbtest.Checks()
DTYPES = {1: "uint8", 2: "int16", 3: "int32", 4: "float32", 5: "float64", 12: "uint16",
          13: "uint32", 14: "int64", 15: "uint64"}


def spy_cube(header):
    """The scene as SPy sees it, shape (lines, samples, bands)."""
    img = envi.open(header)
    if hasattr(img, "spectra"):  # spectral library: lines = spectra, samples = channels
        return img, np.asarray(img.spectra).reshape(img.spectra.shape[0], img.spectra.shape[1], 1)
    return img, np.asarray(img.load(dtype=img.dtype) if hasattr(img, "load") else img[:, :, :])


def check_info(header, img, cube):
    info = hbtest.run_json(args.cli, "info", header)
    meta = img.metadata
    lines, samples, bands = cube.shape
    checks.equal((info["lines"], info["samples"], info["bands"]), (lines, samples, bands), f"{header} shape")
    checks.equal(info["data_type"], DTYPES[int(meta["data type"])], f"{header} data type")
    checks.equal(info["interleave"], meta.get("interleave", "bsq").lower(), f"{header} interleave")
    checks.equal(info["byte_order"], int(meta.get("byte order", 0)), f"{header} byte order")
    if "wavelength" in meta:
        wl = [float(w) for w in meta["wavelength"]]
        checks.equal(info["wavelength_range"], [min(wl), max(wl)], f"{header} wavelength range")
    if "class names" in meta:
        checks.equal(info["class_names"], [n.strip() for n in meta["class names"]], f"{header} class names")


def check_pixels(header, cube, tmp):
    h5 = os.path.join(tmp, "scene.h5")
    hbtest.run(args.cli, "ingest", header, "-o", h5)
    with h5py.File(h5, "r") as f:
        stored = f["/cube"][...]
    checks.equal(stored.dtype, cube.dtype, f"{header} HDF5 dtype")
    checks.true(np.array_equal(stored, cube), f"{header}: HDF5 cube differs from SPy's read")
    for interleave in ("bsq", "bil", "bip"):
        out = os.path.join(tmp, f"export_{interleave}.hdr")
        hbtest.run(args.cli, "export", h5, "-o", out, "--interleave", interleave)
        img = envi.open(out)
        checks.equal(img.metadata["interleave"].lower(), interleave, f"{out} interleave")
        back = np.asarray(img.load(dtype=img.dtype))
        checks.true(np.array_equal(back, cube), f"{header}: export as {interleave} differs")


headers = sorted(glob.glob(os.path.join(args.shared_data, "*", "*.hdr")))
checks.true(len(headers) > 0, "no headers found in the shared data")
for header in headers:
    img, cube = spy_cube(header)
    check_info(header, img, cube)
    if not hasattr(img, "spectra"):
        with hbtest.workdir() as tmp:
            check_pixels(header, cube, tmp)
    print(f"ok {os.path.relpath(header, args.shared_data)} {cube.shape} {cube.dtype}")
checks.done("test_real_scenes")
