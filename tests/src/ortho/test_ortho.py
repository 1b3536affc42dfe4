"""hyperbatch ortho against numpy (the gather), h5py (HDF5 outputs) and GDAL (every
.tif: geotransform, CRS, colour table, no-data, COG layout; the ENVI and HDF5 grids),
for ENVI and EMIT GLTs, on 1 and 3 ranks, and its bad-input contract."""
import os
import subprocess
import sys

import h5py
import numpy as np

import clitest
from ortho_support import (gather, gdal_pixels, gdalinfo, random_glt, read_envi, srs_wkt, write_emit_glt,
                           write_envi)

LINES, SAMPLES, BANDS = 7, 5, 3
GRID_LINES, GRID_SAMPLES = 9, 11  # larger than the scene
UTM_MAP_INFO = "{UTM, 1, 1, 500000, 4100000, 2, 2, 11, North, WGS-84, units=Meters}"
EMIT_GT = [-120.0, 0.001, 0.0, 35.0, 0.0, -0.001]


class Fixture:
    def __init__(self, work, cli, mpiexec):
        self.work, self.cli, self.mpiexec = work, cli, mpiexec
        rng = np.random.default_rng(7)
        self.product = rng.normal(size=(LINES, SAMPLES, BANDS)).astype(np.float32)
        self.classes = rng.integers(0, 4, size=(LINES, SAMPLES, 1)).astype(np.uint8)
        self.sample, self.line = random_glt(rng, GRID_LINES, GRID_SAMPLES, LINES, SAMPLES)
        self.utm = srs_wkt("EPSG:32611")
        self.geo = srs_wkt("EPSG:4326")
        write_envi(self.path("prod"), self.product, "bil",
                   "wavelength = {450.5, 550.25, 650}\nwavelength units = Nanometers\n"
                   "band names = {blue, green, red}\n")
        write_envi(self.path("classes"), self.classes, "bsq",
                   "file type = ENVI Classification\nclasses = 4\n"
                   "class names = {Unclassified, Tree, Water, Road}\n"
                   "class lookup = {0, 0, 0, 0, 128, 0, 0, 0, 255, 200, 200, 200}\n")
        self.glt_planes = np.stack([self.sample, self.line], axis=2)
        write_envi(self.path("glt"), self.glt_planes, "bsq",
                   f"map info = {UTM_MAP_INFO}\ncoordinate system string = {{{self.utm}}}\n")
        rotated = UTM_MAP_INFO.replace("units=Meters", "units=Meters, rotation=30")
        write_envi(self.path("glt_rot"), self.glt_planes, "bil",
                   f"map info = {rotated}\ncoordinate system string = {{{self.utm}}}\n")
        write_emit_glt(self.path("granule.nc"), self.sample, self.line, EMIT_GT, self.geo, (LINES, SAMPLES))

    def path(self, name):
        return os.path.join(self.work, name)

    def ortho(self, product, glt, out, ranks=1, expect=0, extra=()):
        code, stdout, stderr = clitest.run(self.cli, ["--quiet", "ortho", product, "--glt", glt, "-o", out, *extra],
                                           self.work, self.mpiexec, ranks)
        assert code == expect, f"ortho {product} {glt} {out}: exit {code}, expected {expect}\n{stdout}\n{stderr}"
        return stderr


def equal_nan(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)


def check_envi_glt(f, checks):
    want = gather(f.product, f.sample, f.line, np.nan)
    f.ortho("prod.hdr", "glt.hdr", "out.hdr")
    got, header = read_envi(f.path("out"))
    checks.true(equal_nan(got, want), "ENVI GLT -> ENVI: the numpy gather")
    checks.true("map info = {UTM, 1, 1, 500000, 4100000, 2, 2, 11, North, WGS-84, units=Meters}" in header,
                "ENVI output keeps the GLT's map info")
    checks.true("coordinate system string" in header, "ENVI output has a coordinate system string")
    glt_gt = gdalinfo(f.path("glt.hdr"))["geoTransform"]
    checks.equal(gdalinfo(f.path("out.hdr"))["geoTransform"], glt_gt, "GDAL places the ENVI output like the GLT")

    f.ortho("prod.hdr", "glt.hdr", "out.h5")
    with h5py.File(f.path("out.h5"), "r") as h:
        checks.true(equal_nan(h["cube"][...], want), "ENVI GLT -> HDF5: the numpy gather")
        checks.equal(list(h["cube"].attrs["geotransform"]), glt_gt, "HDF5 /cube geotransform (GDAL order)")
        checks.equal(h["cube"].attrs["spatial_ref"], f.utm, "HDF5 /cube spatial_ref")
    check_gdal_places_hdf5(f, "out.h5", glt_gt, checks)

    f.ortho("prod.hdr", "glt.hdr", "out.tif")
    info = gdalinfo(f.path("out.tif"))
    checks.equal(info["geoTransform"], glt_gt, "GeoTIFF geotransform")
    checks.true("UTM zone 11N" in info["coordinateSystem"]["wkt"], "GeoTIFF CRS")
    checks.equal(info["metadata"]["IMAGE_STRUCTURE"].get("LAYOUT"), "COG", "GeoTIFF is a COG")
    checks.equal([b["description"] for b in info["bands"]], ["blue", "green", "red"], "band descriptions")
    checks.equal([b["type"] for b in info["bands"]], ["Float32"] * 3, "float bands stay float32")
    checks.true(all(b.get("noDataValue") == "NaN" for b in info["bands"]), "float no-data is NaN")
    checks.equal(info["bands"][1]["metadata"][""]["wavelength"], "550.25", "band wavelength")
    checks.true(equal_nan(gdal_pixels(f.path("out.tif"), f.work), want), "GeoTIFF pixels: the numpy gather")

    f.ortho("prod.hdr", "glt_rot.hdr", "rot.tif")
    want_gt = gdalinfo(f.path("glt_rot.hdr"))["geoTransform"]
    got_gt = gdalinfo(f.path("rot.tif"))["geoTransform"]
    checks.true(np.allclose(got_gt, want_gt, rtol=0, atol=1e-6), f"rotated grid: {got_gt} vs GDAL's {want_gt}")


def check_gdal_places_hdf5(f, name, want_gt, checks):
    """The recipe of docs/formats.md: GDAL's HDF5 driver reads /cube as bands x lines, so
    transpose with gdalmdimtranslate, then place with the attributes."""
    with h5py.File(f.path(name), "r") as h:
        gt = list(h["cube"].attrs["geotransform"])
        wkt = h["cube"].attrs["spatial_ref"]
        lines, samples, _ = h["cube"].shape
    stage, placed = f.path("staged.tif"), f.path("placed.tif")
    subprocess.run(["gdalmdimtranslate", "-q", f.path(name), stage, "-array", "name=/cube,transpose=[2,0,1]"],
                   check=True)
    ullr = [gt[0], gt[3], gt[0] + samples * gt[1], gt[3] + lines * gt[5]]
    subprocess.run(["gdal_translate", "-q", "-a_srs", wkt, "-a_ullr", *map(repr, ullr), stage, placed], check=True)
    info = gdalinfo(placed)
    checks.true(np.allclose(info["geoTransform"], want_gt), "GDAL places the HDF5 output (recipe)")
    checks.equal(info["size"], [samples, lines], "GDAL reads the HDF5 grid as samples x lines")
    os.remove(stage)
    os.remove(placed)


def check_class_map(f, checks):
    want = gather(f.classes, f.sample, f.line, 0)
    f.ortho("classes.hdr", "glt.hdr", "classes_map.tif")
    info = gdalinfo(f.path("classes_map.tif"))
    band = info["bands"][0]
    checks.equal(band["type"], "UInt16", "class map GeoTIFF is uint16")
    checks.equal(band.get("noDataValue"), 0, "class map no-data is 0 (unclassified)")
    checks.equal([e[:3] for e in band["colorTable"]["entries"][:4]],
                 [[0, 0, 0], [0, 128, 0], [0, 0, 255], [200, 200, 200]], "colour table")
    checks.equal(info["metadata"]["IMAGE_STRUCTURE"].get("LAYOUT"), "COG", "class map is a COG")
    text = subprocess.run(["gdalinfo", f.path("classes_map.tif")], capture_output=True, text=True).stdout
    checks.true("Categories:" in text and "Water" in text, "category names")
    checks.true(np.array_equal(gdal_pixels(f.path("classes_map.tif"), f.work), want.astype(np.uint16)),
                "class map pixels: the numpy gather")
    f.ortho("classes.hdr", "glt.hdr", "classes_map.hdr")
    got, header = read_envi(f.path("classes_map"))
    checks.true(np.array_equal(got, want), "class map -> ENVI: the numpy gather")
    checks.true("class names = { Unclassified, Tree, Water, Road}" in " ".join(header.split()),
                "class names carry over")


def check_emit_glt(f, checks):
    want = gather(f.product, f.sample, f.line, np.nan)
    f.ortho("prod.hdr", "granule.nc", "emit.h5")
    with h5py.File(f.path("emit.h5"), "r") as h:
        checks.true(equal_nan(h["cube"][...], want), "EMIT GLT -> HDF5: the numpy gather")
        checks.equal(list(h["cube"].attrs["geotransform"]), EMIT_GT, "EMIT grid geotransform")
        checks.equal(h["cube"].attrs["spatial_ref"], f.geo, "EMIT grid WKT")
    check_gdal_places_hdf5(f, "emit.h5", EMIT_GT, checks)
    f.ortho("prod.hdr", "granule.nc", "emit.hdr")
    got, header = read_envi(f.path("emit"))
    checks.true(equal_nan(got, want), "EMIT GLT -> ENVI: the numpy gather")
    checks.true(np.allclose(gdalinfo(f.path("emit.hdr"))["geoTransform"], EMIT_GT), "GDAL places the ENVI output")
    f.ortho("prod.hdr", "granule.nc", "emit.tif")
    info = gdalinfo(f.path("emit.tif"))
    checks.true(np.allclose(info["geoTransform"], EMIT_GT), "EMIT GeoTIFF geotransform")
    checks.true('ID["EPSG",4326]' in info["coordinateSystem"]["wkt"], "EMIT GeoTIFF CRS is EPSG:4326")
    checks.true(equal_nan(gdal_pixels(f.path("emit.tif"), f.work), want), "EMIT GeoTIFF pixels")


def same_bytes(a, b):
    return open(a, "rb").read() == open(b, "rb").read()


def check_ranks(f, checks):
    if not f.mpiexec:
        return
    for out in ("r1.hdr", "r1.h5", "r1.tif"):
        f.ortho("prod.hdr", "glt.hdr", out, extra=("--tile-rows", "4"))
        f.ortho("prod.hdr", "glt.hdr", out.replace("r1", "r3"), ranks=3, extra=("--tile-rows", "2"))
    checks.true(same_bytes(f.path("r1.img"), f.path("r3.img")) and same_bytes(f.path("r1.hdr"), f.path("r3.hdr")),
                "ENVI output: the same bytes on 1 and 3 ranks")
    with h5py.File(f.path("r1.h5"), "r") as one, h5py.File(f.path("r3.h5"), "r") as three:
        checks.true(one["cube"][...].tobytes() == three["cube"][...].tobytes(), "HDF5 /cube: the same bytes on 1 and 3 ranks")
        checks.equal(sorted(one["cube"].attrs), sorted(three["cube"].attrs), "HDF5 attributes on 1 and 3 ranks")
        checks.true(all(np.array_equal(one["cube"].attrs[k], three["cube"].attrs[k]) for k in one["cube"].attrs),
                    "HDF5 attribute values on 1 and 3 ranks")
    checks.true(equal_nan(gdal_pixels(f.path("r3.tif"), f.work), gdal_pixels(f.path("r1.tif"), f.work)),
                "GeoTIFF under 3 ranks: the same pixels")
    f.ortho("classes.hdr", "granule.nc", "e3.h5", ranks=3, extra=("--tile-rows", "1"))
    with h5py.File(f.path("e3.h5"), "r") as h:
        checks.true(np.array_equal(h["cube"][...], gather(f.classes, f.sample, f.line, 0)), "EMIT GLT on 3 ranks")


def expect_bad_input(f, checks, product, glt, field, ranks=1):
    before = clitest.snapshot(f.work)
    code, _, stderr = clitest.run(f.cli, ["ortho", product, "--glt", glt, "-o", "bad.tif"], f.work, f.mpiexec, ranks)
    checks.equal(code, 3, f"bad input {glt}: exit code")
    if ranks == 1:
        lines = [clitest.one_error_line(stderr, f"bad input {glt}")]
    else:  # under mpirun each rank says why it stopped, one line each
        lines = clitest.rank_error_lines(stderr)
        checks.equal(len(lines), ranks, f"one line per rank: {stderr}")
    for line in lines:
        checks.true(field in line, f"the error names {field}: {line}")
    checks.equal(clitest.snapshot(f.work), before, f"bad input {glt}: nothing written, inputs untouched")


def check_bad_input(f, checks):
    outside = f.glt_planes.copy()
    outside[2, 3, 0] = SAMPLES + 1
    write_envi(f.path("glt_outside"), outside, "bsq")
    expect_bad_input(f, checks, "prod.hdr", "glt_outside.hdr", "glt_outside.hdr: field 'band 1'")
    outside = f.glt_planes.copy()
    outside[8, 10] = [-1, -(LINES + 1)]
    write_envi(f.path("glt_outside_line"), outside, "bsq")
    expect_bad_input(f, checks, "prod.hdr", "glt_outside_line.hdr", "field 'band 2'")
    if f.mpiexec:
        expect_bad_input(f, checks, "prod.hdr", "glt_outside_line.hdr", "field 'band 2'", ranks=3)
    write_envi(f.path("glt_float"), f.glt_planes.astype(np.float32), "bsq")
    expect_bad_input(f, checks, "prod.hdr", "glt_float.hdr", "field 'data type'")
    write_envi(f.path("glt_3"), np.concatenate([f.glt_planes, f.glt_planes[:, :, :1]], axis=2), "bsq")
    expect_bad_input(f, checks, "prod.hdr", "glt_3.hdr", "field 'bands'")
    write_emit_glt(f.path("other_scene.nc"), f.sample, f.line, EMIT_GT, f.geo, (LINES + 1, SAMPLES))
    expect_bad_input(f, checks, "prod.hdr", "other_scene.nc", "prod.hdr: field 'lines'")
    write_emit_glt(f.path("float_glt.nc"), f.sample.astype(np.float32), f.line, EMIT_GT, f.geo)
    expect_bad_input(f, checks, "prod.hdr", "float_glt.nc", "field 'location/glt_x'")
    with h5py.File(f.path("no_glt.nc"), "w") as h:
        h.create_dataset("reflectance", data=np.zeros((2, 2, 2), np.float32))
    expect_bad_input(f, checks, "prod.hdr", "no_glt.nc", "field 'location/glt_x'")


def check_job(f, checks):
    """[ortho] in a job: each product of the scene on the grid of the GLT its pattern names."""
    code, _, err = clitest.run(f.cli, ["--quiet", "synth", "-o", "flight.hdr", "--lines", LINES, "--samples", SAMPLES,
                                       "--bands", 6, "--classes", 3, "--seed", 1], f.work)
    assert code == 0, err
    with open(f.path("flight.hdr"), "a") as header:  # the scene itself on a (sensor-aligned) map grid
        header.write("map info = {UTM, 1, 1, 600000, 4000000, 15, 15, 11, North, WGS-84, units=Meters}\n")
    write_envi(f.path("flight_glt"), f.glt_planes, "bsq",
               f"map info = {UTM_MAP_INFO}\ncoordinate system string = {{{f.utm}}}\n")
    with open(f.path("job.toml"), "w") as job:
        job.write('[job]\nname = "ortho"\noutput = "job-out"\nbackend = "cpu"\n'
                  '[collection]\nscenes = ["flight.hdr"]\ntruth = "{dir}/{stem}_truth.hdr"\n'
                  '[knn]\nk = 1\ntrain_fraction = 0.5\n[mnf]\ncomponents = 2\n'
                  '[ortho]\nglt = "{dir}/{stem}_glt.hdr"\nformat = "tif"\n[quicklooks]\n')
    code, _, err = clitest.run(f.cli, ["--quiet", "run", "job.toml"], f.work)
    checks.equal(code, 0, f"job with [ortho]: {err}")
    scene = os.path.join(f.work, "job-out", "scenes", "flight")
    classes, _ = read_envi(os.path.join(scene, "classes"))
    mapped = gdal_pixels(os.path.join(scene, "classes_map.tif"), f.work)
    checks.true(np.array_equal(mapped, gather(classes, f.sample, f.line, 0).astype(np.uint16)),
                "job: the KNN class map on the grid")
    info = gdalinfo(os.path.join(scene, "mnf_map.tif"))
    checks.equal(info["geoTransform"], gdalinfo(f.path("flight_glt.hdr"))["geoTransform"], "job: the MNF map's grid")
    quicklook = gdalinfo(os.path.join(scene, "classes.tif"))
    checks.equal(quicklook["geoTransform"], [600000.0, 15.0, 0.0, 4000000.0, 0.0, -15.0], "job: GeoTIFF quicklook's grid")
    checks.equal([b["type"] for b in quicklook["bands"]], ["Byte"] * 3, "job: GeoTIFF quicklook is RGB")


def main():
    args = clitest.parse_args()
    checks = __import__("hbtest").Checks()
    with clitest.tempfile_dir() as work:
        f = Fixture(work, args.cli, args.mpiexec)
        parts = {"envi": check_envi_glt, "classes": check_class_map, "emit": check_emit_glt, "ranks": check_ranks,
                 "bad": check_bad_input, "job": check_job}
        for name, check in parts.items():
            if args.part in ("all", name):
                check(f, checks)
    checks.done("ortho")


if __name__ == "__main__":
    sys.exit(main())
