"""Independent reader/writer for the HDF5 cube tests: h5py sees hyperbatch cubes as
plain arrays with plain attributes, and hyperbatch reads cubes h5py users write.

  check PATH DTYPE LINES SAMPLES BANDS ROWS_PER_CHUNK   asserts shape, dtype, pixels, attributes
  write PATH                                            writes a cube the way an h5py user would
Exit 77 when h5py is missing (the test is skipped)."""
import sys

try:
    import h5py
    import numpy as np
except ImportError:
    sys.exit(77)


def pattern(dtype, lines, samples, bands):
    """The formula of tests/io/test_hdf5_support.hpp (pattern_value)."""
    r, s, b = np.meshgrid(np.arange(lines), np.arange(samples), np.arange(bands), indexing="ij")
    base = ((r * 1009 + s * 31 + b * 7) % 211).astype(np.float64)
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        values, info = base * 0.25 - 20.0, np.finfo(dtype)
    elif dtype.kind == "i":
        values, info = base - 105.0, np.iinfo(dtype)
    else:
        values, info = base, np.iinfo(dtype)
    out = values.astype(dtype)
    out[0, 0, 0] = info.min
    out[-1, -1, -1] = info.max
    return out


def expected_attributes(bands):
    """full_metadata(bands) of tests/io/test_hdf5_support.hpp, as h5py returns it."""
    b = np.arange(bands)
    return {
        "description": 'Scene {with braces}, commas, = signs; and "quotes"',
        "file_type": "ENVI Standard",
        "wavelength": np.array([400.1 + 0.1 * float(i) + 0.2 for i in b]),
        "fwhm": np.array([9.75 + 1e-9 * float(i) for i in b]),
        "bbl": np.where(b % 3 == 1, 0, 1).astype(np.int32),
        "band_names": ["" if i == 1 else f"Band {i}, {{nm}}" for i in b],
        "wavelength_units": "Nanometers",
        "data_ignore_value": -9999.5,
        "map_info": "UTM, 1.000, 1.000, 500000.0, 4000000.0, 3.0e+01, 3.0e+01, 13, North, WGS-84",
        "coordinate_system_string": 'PROJCS["WGS_1984_UTM_Zone_13N",GEOGCS["GCS_WGS_1984"]]',
        "classes": 3,
        "class_names": ["Unclassified", "Water, deep", "{Vegetation}"],
        "class_lookup": np.array([0, 0, 0, 0, 0, 255, 0, 255, 0], dtype=np.int32),
        "spectra_names": ["alunite GDS84", "kaolinite, CM9"],
        "extra_keys": ["sensor type", "reflectance scale factor", "acquisition time", "sensor type"],
        "extra_values": ["AVIRIS", "10000", "{2001-06-19, 12:00}", "duplicate keys keep their order"],
        "source_file": "/data/f970619t01p02_r02_sc01.a.rfl",
        "envi_interleave": "bil",
        "envi_byte_order": 1,
        # the map info's grid in GDAL's terms (docs/formats.md), written beside it
        "geotransform": np.array([500000.0, 30.0, 0.0, 4000000.0, 0.0, -30.0]),
        "spatial_ref": 'PROJCS["WGS_1984_UTM_Zone_13N",GEOGCS["GCS_WGS_1984"]]',
    }


def check_attribute(name, got, want):
    if isinstance(want, str):
        assert isinstance(got, str), f"{name}: {type(got)} is not str"
        assert got == want, f"{name}: {got!r} != {want!r}"
    elif isinstance(want, list):
        assert isinstance(got, np.ndarray), f"{name}: {type(got)} is not an array"
        assert [str(x) for x in got] == want, f"{name}: {list(got)!r} != {want!r}"
    elif isinstance(want, np.ndarray):
        assert got.dtype == want.dtype, f"{name}: dtype {got.dtype} != {want.dtype}"
        assert np.array_equal(got, want), f"{name}: {got!r} != {want!r}"
    else:
        assert np.ndim(got) == 0 and got == want, f"{name}: {got!r} != {want!r}"


def check(path, dtype, lines, samples, bands, rows_per_chunk):
    with h5py.File(path, "r") as f:
        assert f.attrs["format"] == "hyperbatch-cube", f.attrs["format"]
        assert f.attrs["format_version"] == 1
        cube = f["cube"]
        assert cube.shape == (lines, samples, bands), cube.shape
        assert cube.dtype == np.dtype(dtype), cube.dtype
        assert cube.chunks == (rows_per_chunk, samples, bands), cube.chunks
        assert cube.compression is None
        assert np.array_equal(cube[...], pattern(dtype, lines, samples, bands)), "pixels differ"
        assert np.array_equal(cube[2:4], pattern(dtype, lines, samples, bands)[2:4])
        want = expected_attributes(bands)
        assert set(cube.attrs.keys()) == set(want), sorted(set(cube.attrs.keys()) ^ set(want))
        for name, value in want.items():
            check_attribute(name, cube.attrs[name], value)


def write(path):
    with h5py.File(path, "w") as f:
        f["cube"] = pattern("uint16", 4, 3, 2)
        attrs = f["cube"].attrs
        attrs["wavelength"] = [450.0, 550.0]
        attrs["band_names"] = ["blue", "green"]
        attrs["classes"] = 5                   # h5py stores Python ints as int64
        attrs["data_ignore_value"] = -9999     # an integer where a float is expected
        attrs["bbl"] = np.array([1, 0])
        attrs["description"] = "written by h5py"
        attrs["map_info"] = np.bytes_("UTM, 1")  # fixed-length ASCII
        attrs["envi_interleave"] = "bsq"


if __name__ == "__main__":
    mode, path = sys.argv[1], sys.argv[2]
    if mode == "check":
        check(path, sys.argv[3], *(int(x) for x in sys.argv[4:8]))
    elif mode == "write":
        write(path)
    else:
        sys.exit(f"unknown mode {mode}")
    print("ok")
