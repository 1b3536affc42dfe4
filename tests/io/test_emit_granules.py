"""EMIT granules (netCDF4, deflate-chunked) open as scenes: the root variable is the
cube (downtrack = lines, crosstrack = samples), band parameters, good bands, the fill
value and the georeference come from the granule. Checked against netCDF4/h5py reads,
on 1 and 3 ranks (collective reads of compressed chunks), and bad granules exit 3."""
import json
import os

import numpy as np

import clitest
import emit_granules as emit
import hbtest

args = clitest.parse_args()
try:
    import h5py
    import netCDF4  # noqa: F401 (the granule writer)
except ImportError as e:
    hbtest.skip(f"oracle missing: {e} (apt-get install python3-netcdf4 python3-h5py)")
checks = hbtest.Checks()

cli = clitest.checked_runner(args, checks)


def check_info(folder, data, wavelengths, fwhm, good):
    info = json.loads(cli(folder, "info", "rfl.nc", "--json")[0])
    checks.equal((info["lines"], info["samples"], info["bands"]), data.shape, "granule shape")
    checks.equal(info["data_type"], "float32", "granule type")
    checks.equal(info["bad_bands"], [int(b) for b in np.flatnonzero(good == 0)], "good_wavelengths -> bad bands")
    checks.equal(info["data_ignore_value"], emit.FILL, "_FillValue -> ignore value")
    checks.equal(info["wavelength_range"], [float(wavelengths[0]), float(wavelengths[-1])], "wavelengths")
    checks.equal(info["geotransform"], emit.GEOTRANSFORM, "geotransform")
    checks.equal(info["spatial_ref"], emit.WKT, "spatial_ref")
    checks.equal(info["geolocation"], [f"/location/{n}" for n in ("lat", "lon", "elev", "glt_x", "glt_y")],
                 "location arrays")
    checks.true("scaling" not in info, "reflectance needs no scaling")
    text = cli(folder, "info", "rfl.nc")[0]
    checks.true("geotransform" in text and "spatial ref" in text, "text info names the georeference")


def check_ingest(folder, data, wavelengths, fwhm, good, ranks):
    out = f"rfl_{ranks}.h5"
    cli(folder, "ingest", "rfl.nc", "-o", out, ranks=ranks)
    with h5py.File(os.path.join(folder, out), "r") as f:
        cube = f["cube"]
        checks.true(np.array_equal(cube[...], data), f"ingested cube equals the granule's reflectance ({ranks} ranks)")
        checks.true(np.allclose(cube.attrs["wavelength"], wavelengths), "wavelength attribute")
        checks.true(np.allclose(cube.attrs["fwhm"], fwhm), "fwhm attribute")
        checks.equal(list(cube.attrs["bbl"]), [int(g != 0) for g in good], "bbl attribute")
        checks.equal(float(cube.attrs["data_ignore_value"]), emit.FILL, "ignore value attribute")
        checks.equal(list(cube.attrs["geotransform"]), emit.GEOTRANSFORM, "geotransform travels")


def components(folder, name):
    with h5py.File(os.path.join(folder, name), "r") as f:
        return f["cube"][...]


def check_mnf_ranks(folder):
    """The granule read collectively by 3 ranks gives the bytes one rank gives, and the
    same as the ingested HDF5 cube: compressed chunks read like any cube."""
    for ranks in (1, 3):
        cli(folder, "mnf", "rfl.nc", "-o", f"mnf_{ranks}.h5", "--components", 5, "--backend", "cpu",
            "--tile-rows", 7, ranks=ranks)
    cli(folder, "mnf", "rfl_1.h5", "-o", "mnf_h5.h5", "--components", 5, "--backend", "cpu", "--tile-rows", 7)
    one = components(folder, "mnf_1.h5")
    checks.true(np.array_equal(one, components(folder, "mnf_3.h5"), equal_nan=True), "MNF on 1 and 3 ranks")
    checks.true(np.array_equal(one, components(folder, "mnf_h5.h5"), equal_nan=True), "MNF of granule and ingest")
    checks.true(np.isnan(one[0, 0]).all(), "fill pixels stay no-data")


def check_mask_granule(folder, lines, samples):
    mask = emit.mask_granule(os.path.join(folder, "mask.nc"), lines, samples, flagged=[(2, 3, 0)])
    info = json.loads(cli(folder, "info", "mask.nc", "--json")[0])
    checks.equal(info["bands"], len(emit.MASK_BANDS), "mask granule bands")
    cli(folder, "ingest", "mask.nc", "-o", "mask.h5")
    with h5py.File(os.path.join(folder, "mask.h5"), "r") as f:
        checks.true(np.array_equal(f["cube"][...], mask), "mask granule values")
        names = [n.decode() if isinstance(n, bytes) else n for n in f["cube"].attrs["band_names"]]
        checks.equal(names, emit.MASK_BANDS, "mask_bands -> band names")


def refused(folder, granule, field, what):
    before = sorted(os.listdir(folder))
    _, err = cli(folder, "ingest", granule, "-o", "refused.h5", expect=3)
    line = clitest.one_error_line(err, what)
    checks.true(granule in line and field in line, f"{what}: names {granule} and {field}: {line}")
    checks.equal(sorted(os.listdir(folder)), before, f"{what}: nothing written")


def check_bad_granules(folder, data, wavelengths, fwhm, good):
    emit.write_granule(os.path.join(folder, "no_wl.nc"), "reflectance", data, None, fwhm, good)
    refused(folder, "no_wl.nc", "/sensor_band_parameters/wavelengths", "granule without wavelengths")
    emit.write_granule(os.path.join(folder, "no_group.nc"), "reflectance", data, band_group=False)
    refused(folder, "no_group.nc", "/sensor_band_parameters", "granule without band parameters")
    emit.write_granule(os.path.join(folder, "short_good.nc"), "reflectance", data, wavelengths, fwhm, good[:-1])
    refused(folder, "short_good.nc", "good_wavelengths", "good_wavelengths of the wrong length")
    emit.write_granule(os.path.join(folder, "no_names.nc"), "mask", data[..., :8])
    refused(folder, "no_names.nc", "/sensor_band_parameters", "mask granule without mask_bands")


with hbtest.workdir() as tmp:
    granule = emit.reflectance_granule(os.path.join(tmp, "rfl.nc"))
    data = granule[0]
    check_info(tmp, *granule)
    for ranks in (1, 3):
        check_ingest(tmp, *granule, ranks)
    check_mnf_ranks(tmp)
    check_mask_granule(tmp, data.shape[0], data.shape[1])
    check_bad_granules(tmp, *granule)
checks.done("test_emit_granules")
