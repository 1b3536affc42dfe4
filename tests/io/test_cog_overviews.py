"""GeoTIFF outputs' overviews against GDAL's COG driver: a class map's overviews, built
by hyperbatch in memory (io/gtiff/cog_source.hpp), hold the pixels and sizes the driver
makes itself (the oracle: gdal_translate -of COG of the same raster, overviews ignored
and rebuilt); a float cube's overviews, which the driver builds, likewise. The files are
valid COGs (GDAL's validate_cloud_optimized_geotiff), 3 ranks write the same bytes as 1,
and no staged or temporary file stays behind."""
import os
import subprocess
import sys

import numpy as np

import clitest
import hbtest
from ortho_support import gdalinfo, srs_wkt, write_envi

LINES, SAMPLES = 1300, 700  # past the driver's 512-pixel threshold in both directions
COG_OPTIONS = ["-co", "COMPRESS=ZSTD", "-co", "LEVEL=1", "-co", "PREDICTOR=NO"]


def overview_pixels(path, level, work):
    """Overview `level` (0 = the largest) of a GeoTIFF as (lines, samples, bands)."""
    copy = os.path.join(work, "ovr_copy.img")
    subprocess.run(["gdal_translate", "-q", "-ovr", str(level), "-of", "ENVI", "-co", "INTERLEAVE=BIP", path, copy],
                   check=True)
    info = gdalinfo(copy)
    dtype = {"Float32": "<f4", "UInt16": "<u2", "Byte": "u1"}[info["bands"][0]["type"]]
    return np.fromfile(copy, dtype=dtype).reshape(info["size"][1], info["size"][0], len(info["bands"]))


def driver_oracle(path, work):
    """The COG driver's own overviews of the raster in `path`."""
    oracle = os.path.join(work, "oracle.tif")
    subprocess.run(["gdal_translate", "-q", "-of", "COG", *COG_OPTIONS, "-co", "OVERVIEWS=IGNORE_EXISTING", path,
                    oracle], check=True)
    return oracle


def check_overviews(path, work, checks, what):
    got_sizes = gdalinfo(path)["bands"][0].get("overviews", [])
    oracle = driver_oracle(path, work)
    want_sizes = gdalinfo(oracle)["bands"][0].get("overviews", [])
    checks.true(len(want_sizes) > 1, f"{what}: the driver makes overviews of this raster")
    checks.equal([o["size"] for o in got_sizes], [o["size"] for o in want_sizes], f"{what}: overview sizes")
    for level in range(len(want_sizes)):
        got, want = overview_pixels(path, level, work), overview_pixels(oracle, level, work)
        checks.true(np.array_equal(got, want, equal_nan=True), f"{what}: overview {level} pixels are the driver's")
    valid = subprocess.run([sys.executable, "-m", "osgeo_utils.samples.validate_cloud_optimized_geotiff", path],
                           capture_output=True, text=True)
    checks.equal(valid.returncode, 0, f"{what}: GDAL's COG validation: {valid.stdout}{valid.stderr}")


def write_inputs(work):
    rng = np.random.default_rng(3)
    # Blocky classes with speckle: overviews that depend on which pixel is picked.
    blocks = rng.integers(1, 6, size=(LINES // 20 + 1, SAMPLES // 20 + 1))
    classes = np.kron(blocks, np.ones((20, 20), dtype=np.int64))[:LINES, :SAMPLES]
    speckle = rng.random((LINES, SAMPLES)) < 0.2
    classes[speckle] = rng.integers(0, 6, size=int(speckle.sum()))
    write_envi(os.path.join(work, "classes"), classes.astype(np.uint8)[..., None], "bsq",
               "file type = ENVI Classification\nclasses = 6\n"
               "class names = {Unclassified, Tree, Water, Road, Roof, Field}\n"
               "class lookup = {0, 0, 0, 0, 128, 0, 0, 0, 255, 200, 200, 200, 160, 40, 40, 240, 220, 90}\n")
    write_envi(os.path.join(work, "prod"), rng.normal(size=(LINES, SAMPLES, 2)).astype(np.float32), "bil")
    sample, line = np.meshgrid(np.arange(1, SAMPLES + 1, dtype=np.int32), np.arange(1, LINES + 1, dtype=np.int32))
    write_envi(os.path.join(work, "glt"), np.stack([sample, line], axis=2), "bsq",
               "map info = {UTM, 1, 1, 500000, 4100000, 2, 2, 11, North, WGS-84, units=Meters}\n"
               f"coordinate system string = {{{srs_wkt('EPSG:32611')}}}\n")


def main():
    args = clitest.parse_args()
    checks = hbtest.Checks()
    with clitest.tempfile_dir() as work:
        write_inputs(work)
        cli = clitest.checked_runner(args, checks)
        cli(work, "ortho", "classes.hdr", "--glt", "glt.hdr", "-o", "map.tif")
        check_overviews(os.path.join(work, "map.tif"), work, checks, "class map")
        info = gdalinfo(os.path.join(work, "map.tif"))
        checks.equal(info["bands"][0].get("noDataValue"), 0, "class map no-data")
        checks.equal(info["bands"][0]["colorTable"]["entries"][5][:3], [240, 220, 90], "class map colour table")
        cli(work, "ortho", "classes.hdr", "--glt", "glt.hdr", "-o", "map3.tif", ranks=3)
        same = open(os.path.join(work, "map.tif"), "rb").read() == open(os.path.join(work, "map3.tif"), "rb").read()
        checks.true(same, "class map: 3 ranks write the bytes of 1")
        cli(work, "ortho", "prod.hdr", "--glt", "glt.hdr", "-o", "prod.tif")
        check_overviews(os.path.join(work, "prod.tif"), work, checks, "float cube")
        left = [n for n in os.listdir(work) if n.startswith(".") or ".tmp" in n or n.endswith(".stage")]
        checks.equal(left, [], "no staged or temporary file left")
    checks.done("cog_overviews")


if __name__ == "__main__":
    main()
