"""Writes AVIRIS deliveries and scaled ENVI scenes as the agencies ship them, with numpy."""
import os

import numpy as np

FLIGHTLINE = "f080611t01p00r07"
IMAGE = FLIGHTLINE + "rdn_c_sc01_ort_img"


def write_envi(path, cube, extra="", interleave="bip"):
    """ENVI pair: `path` is the data file; the header is path + '.hdr' when extensionless."""
    if cube.ndim == 2:
        cube = cube[..., np.newaxis]
    lines, samples, bands = cube.shape
    codes = {np.dtype("int16"): 2, np.dtype("uint16"): 12, np.dtype("float32"): 4, np.dtype("uint8"): 1}
    order = {"bip": (0, 1, 2), "bil": (0, 2, 1), "bsq": (2, 0, 1)}[interleave]
    np.ascontiguousarray(cube.transpose(order)).astype(cube.dtype.newbyteorder("<")).tofile(path)
    stem, ext = os.path.splitext(path)
    header = stem + ".hdr" if ext in (".img", ".dat") else path + ".hdr"
    with open(header, "w") as f:
        f.write(f"ENVI\nsamples = {samples}\nlines = {lines}\nbands = {bands}\nheader offset = 0\n"
                f"file type = ENVI Standard\ndata type = {codes[cube.dtype]}\ninterleave = {interleave}\n"
                f"byte order = 0\n{extra}")
    return header


def classic_factors(bands):
    """AVIRIS-Classic gains: 300 for the first spectrometers, 600 and 1200 further out."""
    factors = np.full(bands, 300.0)
    factors[bands // 2:] = 600.0
    factors[3 * bands // 4:] = 1200.0
    return factors


def classic_centres(bands):
    return np.linspace(366.0, 2496.0, bands), np.full(bands, 9.7)


def classes_cube(lines, samples, bands, classes, seed, scale):
    """int16 DN: class spectra plus noise, and a truth raster (class 1..classes)."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, classes + 1, size=(lines, samples)).astype(np.uint8)
    means = rng.uniform(2000, 4000, size=(classes + 1, bands)) * scale
    cube = means[truth] + rng.normal(0, 1500, size=(lines, samples, bands)) * scale
    return np.clip(np.rint(cube), 1, 32000).astype(np.int16), truth


def aviris_classic(folder, lines=24, samples=20, bands=32, seed=5, gain_rows=None):
    """An AVIRIS-Classic delivery: extensionless int16 image without band centres, the
    flightline's .gain and .spc beside it. Returns (DN cube, truth, factors, centres, fwhm)."""
    factors = classic_factors(bands)
    scale = factors / factors.min()  # DN ranges as the gains imply: physical values alike per band
    dn, truth = classes_cube(lines, samples, bands, 4, seed, scale)
    write_envi(os.path.join(folder, IMAGE), dn, "data ignore value = -9999\n")
    with open(os.path.join(folder, FLIGHTLINE + "rdn_c.gain"), "w") as f:
        rows = gain_rows if gain_rows is not None else range(bands)
        for b in rows:
            f.write(f"{factors[b]:10.3f} {b + 1:4d}\n")
    centres, fwhm = classic_centres(bands)
    with open(os.path.join(folder, FLIGHTLINE + "rdn_c.spc"), "w") as f:
        for b in range(bands):
            f.write(f"{centres[b]:10.4f} {fwhm[b]:8.4f} {0.1:6.3f} {0.2:6.3f} {b + 1:4d}\n")
    write_envi(os.path.join(folder, "truth.img"), truth)
    return dn, truth, factors, centres, fwhm


def campaign_job_file(folder, scenes, name="campaign.toml", extra=""):
    """A job file whose [mnf] step builds one campaign basis (3 components) over `scenes`;
    `extra` adds lines to the [mnf] table. Returns its path."""
    listed = ", ".join(f'"{s}"' for s in scenes)
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write(f'[job]\nname = "c"\noutput = "out"\nbackend = "cpu"\n\n[collection]\nscenes = [{listed}]\n\n'
                f'[mnf]\nbasis = "campaign"\ncomponents = 3\n{extra}')
    return path
