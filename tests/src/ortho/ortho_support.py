"""Inputs for the ortho tests, written with numpy and h5py: ENVI products and GLTs,
EMIT-like granules, and the numpy oracle of the gather."""
import json
import os
import subprocess

import h5py
import numpy as np

ENVI_CODES = {np.dtype("uint8"): 1, np.dtype("int16"): 2, np.dtype("int32"): 3, np.dtype("float32"): 4,
              np.dtype("float64"): 5, np.dtype("uint16"): 12}


def srs_wkt(code):
    """WKT1 of an EPSG code, as GDAL spells it (the ENVI coordinate system string)."""
    out = subprocess.run(["gdalsrsinfo", "-o", "wkt1", code], capture_output=True, text=True, check=True).stdout
    return " ".join(line.strip() for line in out.splitlines() if line.strip())


def write_envi(path_base, array, interleave="bip", extra=""):
    """array: (lines, samples, bands). Writes PATH.hdr + PATH.img."""
    lines, samples, bands = array.shape
    if interleave == "bsq":
        data = array.transpose(2, 0, 1)
    elif interleave == "bil":
        data = array.transpose(0, 2, 1)
    else:
        data = array
    np.ascontiguousarray(data).astype(array.dtype.newbyteorder("<")).tofile(path_base + ".img")
    with open(path_base + ".hdr", "w") as f:
        f.write(f"ENVI\nsamples = {samples}\nlines = {lines}\nbands = {bands}\nheader offset = 0\n"
                f"data type = {ENVI_CODES[array.dtype]}\ninterleave = {interleave}\nbyte order = 0\n{extra}")
    return path_base + ".hdr"


def read_envi(path_base):
    """Reads PATH.hdr/.img written by hyperbatch (any interleave) -> (lines, samples, bands)."""
    header = open(path_base + ".hdr").read()
    fields = {}
    for line in header.splitlines():
        if "=" in line and not line.startswith(" "):
            key, value = line.split("=", 1)
            fields[key.strip()] = value.strip()
    lines, samples, bands = int(fields["lines"]), int(fields["samples"]), int(fields["bands"])
    dtype = {v: k for k, v in ENVI_CODES.items()}[int(fields["data type"])]
    raw = np.fromfile(path_base + ".img", dtype=dtype.newbyteorder("<" if fields.get("byte order", "0") == "0" else ">"))
    order = fields["interleave"].lower()
    if order == "bsq":
        return raw.reshape(bands, lines, samples).transpose(1, 2, 0), header
    if order == "bil":
        return raw.reshape(lines, bands, samples).transpose(0, 2, 1), header
    return raw.reshape(lines, samples, bands), header


def random_glt(rng, grid_lines, grid_samples, scene_lines, scene_samples):
    """1-based (sample, line) planes with no-data (0) and neighbour fills (negative)."""
    sample = rng.integers(1, scene_samples + 1, size=(grid_lines, grid_samples)).astype(np.int32)
    line = rng.integers(1, scene_lines + 1, size=(grid_lines, grid_samples)).astype(np.int32)
    empty = rng.random((grid_lines, grid_samples)) < 0.25
    sample[empty] = 0
    line[empty] = 0
    filled = (rng.random((grid_lines, grid_samples)) < 0.2) & ~empty
    sample[filled] *= -1
    line[filled] *= -1
    return sample, line


def gather(product, sample, line, fill):
    """The numpy oracle: grid pixel = product[|line|-1, |sample|-1], fill where 0."""
    out = np.empty(sample.shape + (product.shape[2],), dtype=product.dtype)
    out[...] = fill
    valid = (sample != 0) & (line != 0)
    out[valid] = product[np.abs(line[valid]) - 1, np.abs(sample[valid]) - 1]
    return out


def write_emit_glt(path, sample, line, geotransform, wkt, scene_shape=None):
    """An EMIT-like granule: location/glt_x, glt_y and the grid as global attributes."""
    with h5py.File(path, "w") as f:
        loc = f.create_group("location")
        loc.create_dataset("glt_x", data=sample)
        loc.create_dataset("glt_y", data=line)
        f.attrs["geotransform"] = np.asarray(geotransform, dtype=np.float64)
        f.attrs["spatial_ref"] = wkt
        if scene_shape is not None:
            f.create_dataset("downtrack", shape=(scene_shape[0],), dtype="f4")
            f.create_dataset("crosstrack", shape=(scene_shape[1],), dtype="f4")


def gdalinfo(path):
    if path.endswith(".hdr"):  # GDAL opens ENVI rasters by their data file
        path = path[:-4] + ".img"
    out = subprocess.run(["gdalinfo", "-json", "-mdd", "all", path], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def gdal_pixels(path, work):
    """The raster of any GDAL-readable file as (lines, samples, bands), via an ENVI copy."""
    copy = os.path.join(work, "gdal_copy")
    subprocess.run(["gdal_translate", "-q", "-of", "ENVI", "-co", "INTERLEAVE=BIP", path, copy + ".img"], check=True)
    info = gdalinfo(copy + ".img")
    lines, samples, bands = info["size"][1], info["size"][0], len(info["bands"])
    dtype = {"Float32": "<f4", "UInt16": "<u2", "Byte": "u1", "Int16": "<i2", "Int32": "<i4", "Float64": "<f8"}[
        info["bands"][0]["type"]]
    return np.fromfile(copy + ".img", dtype=dtype).reshape(lines, samples, bands)
