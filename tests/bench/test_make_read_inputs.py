"""bench_make_read_inputs writes the read benchmark's inputs as the Python writers of the
tests do (tests/io/archive_products.py, emit_granules.py, as bench/read_formats.sh calls
them): the same ENVI and DN bytes, the same .gain text, a granule with the same values,
layout, attributes and stored chunk bytes; and `ingest` reads the same cube from each."""
import argparse
import os
import subprocess
import sys

import numpy as np

import hbtest

parser = argparse.ArgumentParser()
parser.add_argument("--cli", required=True)
parser.add_argument("--shared-data", required=True)
parser.add_argument("--tool", required=True)
args = parser.parse_args()
try:
    import h5py
    import netCDF4  # noqa: F401 (the granule writer)
    import spectral.io.envi as envi
except ImportError as e:
    hbtest.skip(f"oracle missing: {e} (apt-get install python3-netcdf4 python3-h5py python3-spectral)")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "io"))
import archive_products as ap  # noqa: E402
import emit_granules as emit  # noqa: E402

checks = hbtest.Checks()
LINES, SAMPLES, BANDS = 37, 9, 12  # 37 lines: the last granule chunk is a partial one
CLASSIC = [ap.IMAGE, ap.IMAGE + ".hdr", ap.FLIGHTLINE + "rdn_c.gain"]


def python_inputs(folder):
    """bench/read_formats.sh's Python path."""
    dn = np.asarray(envi.open(os.path.join(folder, "..", "dn.hdr")).load(dtype=np.int16, scale=False))
    factors = ap.classic_factors(dn.shape[2])
    physical = (dn.astype(np.float64) / factors).astype(np.float32)
    ap.write_envi(os.path.join(folder, "envi.img"), physical)
    ap.write_envi(os.path.join(folder, ap.IMAGE), dn)
    with open(os.path.join(folder, ap.FLIGHTLINE + "rdn_c.gain"), "w") as f:
        for b, factor in enumerate(factors):
            f.write(f"{factor:10.3f} {b + 1:4d}\n")
    wl, fwhm, good = emit.band_parameters(dn.shape[2])
    emit.write_granule(os.path.join(folder, "granule.nc"), "radiance", physical, wl, fwhm, good, chunk_rows=16)
    return physical


def read(path):
    with open(path, "rb") as f:
        return f.read()


def envi_cube(path):
    image = envi.open(path)
    return image.metadata["interleave"], np.asarray(image.load(scale=False))


def check_envi(py, cpp):
    checks.equal(read(os.path.join(cpp, "envi.img")), read(os.path.join(py, "envi.img")), "ENVI float32 bytes")
    checks.equal(read(os.path.join(cpp, ap.IMAGE)), read(os.path.join(py, ap.IMAGE)), "AVIRIS-Classic DN bytes")
    checks.equal(read(os.path.join(cpp, CLASSIC[2])), read(os.path.join(py, CLASSIC[2])), ".gain text")
    for header in ("envi.hdr", CLASSIC[1]):
        got, want = envi_cube(os.path.join(cpp, header)), envi_cube(os.path.join(py, header))
        checks.equal(got[0], want[0], f"{header}: interleave")
        checks.equal(got[1].dtype, want[1].dtype, f"{header}: data type")
        checks.true(np.array_equal(got[1], want[1]), f"{header}: the header reads the same cube")


def attribute(value):
    return value.decode() if isinstance(value, bytes) else value


def check_dataset(got, want, name):
    checks.equal((got.shape, got.dtype), (want.shape, want.dtype), f"{name}: shape and type")
    checks.true(np.array_equal(got[...], want[...]), f"{name}: values")


def check_granule(py, cpp):
    with h5py.File(os.path.join(cpp, "granule.nc"), "r") as got, h5py.File(os.path.join(py, "granule.nc"), "r") as want:
        for key in ("geotransform", "spatial_ref", "title"):
            checks.true(np.array_equal(attribute(got.attrs[key]), attribute(want.attrs[key])),
                        f"global attribute {key}")
        g, w = got["radiance"], want["radiance"]
        check_dataset(g, w, "radiance")
        checks.equal((g.chunks, g.compression, g.compression_opts, g.shuffle, g.fillvalue),
                     (w.chunks, w.compression, w.compression_opts, w.shuffle, w.fillvalue), "radiance layout")
        checks.equal((g.attrs["_FillValue"].dtype, list(g.attrs["_FillValue"])),
                     (w.attrs["_FillValue"].dtype, list(w.attrs["_FillValue"])), "_FillValue")
        for row in range(0, LINES, 16):
            checks.equal(g.id.read_direct_chunk((row, 0, 0)), w.id.read_direct_chunk((row, 0, 0)),
                         f"stored chunk at row {row}")
        for name in ("wavelengths", "fwhm", "good_wavelengths"):
            check_dataset(got["sensor_band_parameters"][name], want["sensor_band_parameters"][name], name)
        for name in ("lat", "lon", "elev", "glt_x", "glt_y"):
            check_dataset(got["location"][name], want["location"][name], f"location/{name}")


def ingested(folder, name, *options):
    hbtest.run(args.cli, "ingest", os.path.join(folder, name), *options, "-o", os.path.join(folder, name + ".h5"))
    with h5py.File(os.path.join(folder, name + ".h5"), "r") as f:
        return f["cube"][...]


def check_ingest(py, cpp, physical):
    for name, options in (("envi.hdr", []), ("granule.nc", []), (ap.IMAGE, ["--units", "physical"])):
        for folder in (py, cpp):
            info = hbtest.run_json(args.cli, "info", os.path.join(folder, name))
            checks.equal((info["lines"], info["samples"], info["bands"]), (LINES, SAMPLES, BANDS), f"info {name}")
        got, want = ingested(cpp, name, *options), ingested(py, name, *options)
        checks.equal(got.dtype, np.float32, f"ingest {name}: float32")
        checks.true(np.array_equal(got.view(np.uint32), want.view(np.uint32)), f"ingest {name}: the same bits")
        checks.true(np.allclose(got, physical, rtol=1e-6), f"ingest {name}: the physical cube")


def check_bad_input(folder):
    proc = subprocess.run([args.tool, os.path.join(folder, "py", "envi.hdr"), os.path.join(folder, "bad")],
                          capture_output=True, text=True)
    checks.equal(proc.returncode, 3, f"a float32 cube is bad input: {proc.stderr}")
    checks.equal(len(proc.stderr.splitlines()), 1, "one error line")
    checks.true(not os.path.exists(os.path.join(folder, "bad")) or not os.listdir(os.path.join(folder, "bad")),
                "nothing written")


with hbtest.workdir() as tmp:
    hbtest.run(args.cli, "synth", "-o", os.path.join(tmp, "dn.hdr"), "--lines", LINES, "--samples", SAMPLES,
               "--bands", BANDS, "--classes", 3, "--seed", 1)
    py, cpp = os.path.join(tmp, "py"), os.path.join(tmp, "cpp")
    os.mkdir(py)
    os.mkdir(cpp)
    physical = python_inputs(py)
    subprocess.run([args.tool, os.path.join(tmp, "dn.hdr"), cpp], check=True)
    check_envi(py, cpp)
    check_granule(py, cpp)
    check_ingest(py, cpp, physical)
    os.mkdir(os.path.join(tmp, "bad"))
    check_bad_input(tmp)
checks.done("make_read_inputs")
