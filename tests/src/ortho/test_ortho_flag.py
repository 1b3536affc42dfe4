"""--ortho GLT on knn, sam and mnf (src/cli/ortho_after.hpp): each product straight onto
the grid equals the command without it followed by `hyperbatch ortho`, byte for byte
(ENVI files, HDF5 datasets, GeoTIFF pixels and georeference), for ENVI and EMIT GLTs,
the same bytes on 1 and 3 ranks, on the CPU and (--part cuda) the GPU backend; a bad GLT
is bad input before any work, with nothing written and no temporary left."""
import json
import os
import shutil
import sys

import h5py
import numpy as np

import clitest
import hbtest
from ortho_support import gdal_pixels, gdalinfo, random_glt, srs_wkt, write_emit_glt, write_envi

LINES, SAMPLES = 12, 9
GRID_LINES, GRID_SAMPLES = 14, 13
UTM_MAP_INFO = "{UTM, 1, 1, 500000, 4100000, 2, 2, 11, North, WGS-84, units=Meters}"
EMIT_GT = [-120.0, 0.001, 0.0, 35.0, 0.0, -0.001]
GLTS = ("glt.hdr", "granule.nc")
# GDAL reads back the .tif outputs; a host without it (the GPU host) checks ENVI and HDF5.
HAVE_GDAL = shutil.which("gdalinfo") is not None
FORMATS = ("hdr", "h5", "tif") if HAVE_GDAL else ("hdr", "h5")
PLAIN_WGS84 = ('GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563]],PRIMEM["Greenwich",0],'
               'UNIT["degree",0.0174532925199433]]')


def wkt(code):
    return srs_wkt(code) if HAVE_GDAL else PLAIN_WGS84
KNN = ("knn", "../scene.hdr", "--truth", "../scene_truth.hdr", "--train-fraction", "0.5", "-k", "3")
SAM = ("sam", "../scene.hdr", "--truth", "../scene_truth.hdr")
MNF = ("mnf", "../scene.hdr", "--components", "3")


class Fixture:
    def __init__(self, work, args, checks, backend):
        self.work, self.checks, self.backend = work, checks, backend
        self.cli = clitest.checked_runner(args, checks)
        self.args = args
        self.cli(work, "synth", "-o", "scene.hdr", "--lines", LINES, "--samples", SAMPLES, "--bands", 6,
                 "--classes", 3, "--seed", 3)
        rng = np.random.default_rng(11)
        sample, line = random_glt(rng, GRID_LINES, GRID_SAMPLES, LINES, SAMPLES)
        self.glt_planes = np.stack([sample, line], axis=2)
        write_envi(self.path("glt"), self.glt_planes, "bsq",
                   f"map info = {UTM_MAP_INFO}\ncoordinate system string = {{{wkt('EPSG:32611')}}}\n")
        write_emit_glt(self.path("granule.nc"), sample, line, EMIT_GT, wkt("EPSG:4326"), (LINES, SAMPLES))
        self.runs = 0

    def path(self, *names):
        return os.path.join(self.work, *names)

    def folder(self):
        """A fresh folder for one comparison (its outputs and, for the check, nothing else)."""
        self.runs += 1
        name = self.path(f"run{self.runs}")
        os.mkdir(name)
        return name

    def run(self, folder, *argv, ranks=1, expect=0):
        return self.cli(folder, *argv, "--backend", self.backend, ranks=ranks, expect=expect)

    def ortho(self, folder, product, glt, out):
        self.run(folder, "ortho", product, "--glt", "../" + glt, "-o", out)


def envi_files_equal(checks, a, b, what):
    """Data bytes equal; headers equal but for the description (it names the product)."""
    checks.true(open(a + ".img", "rb").read() == open(b + ".img", "rb").read(), f"{what}: data bytes")
    header = lambda p: [l for l in open(p + ".hdr").read().split("\n") if not l.startswith("description")]
    checks.equal(header(a), header(b), f"{what}: header")


def h5_datasets_equal(checks, a, b, names, what):
    with h5py.File(a, "r") as one, h5py.File(b, "r") as two:
        for name in names:
            checks.true(one[name][...].tobytes() == two[name][...].tobytes(), f"{what}: /{name} bytes")
            attrs = lambda d: {k: np.asarray(v).tolist() for k, v in d.attrs.items() if k != "description"}
            checks.equal(attrs(one[name]), attrs(two[name]), f"{what}: /{name} attributes")


def tif_equal(checks, f, a, b, what):
    checks.true(np.array_equal(gdal_pixels(a, f.work), gdal_pixels(b, f.work), equal_nan=True), f"{what}: pixels")
    one, two = gdalinfo(a), gdalinfo(b)
    for key in ("geoTransform", "coordinateSystem", "size"):
        checks.equal(one[key], two[key], f"{what}: {key}")
    band = lambda i: [{k: v for k, v in b.items() if k not in ("metadata",)} for b in i["bands"]]
    checks.equal(band(one), band(two), f"{what}: bands (type, no-data, colour table, descriptions)")


def no_hidden_files(checks, folder, what):
    hidden = [n for n in os.listdir(folder) if n.startswith(".")]
    checks.equal(hidden, [], f"{what}: no temporary left")


def check_knn(f):
    checks = f.checks
    for glt in GLTS:
        ref = f.folder()
        f.run(ref, *KNN, "-o", "classes.hdr")
        f.run(ref, *KNN, "-o", "classes.h5")
        for ext in FORMATS:
            direct = f.folder()
            f.run(direct, *KNN, "-o", f"map.{ext}", "--ortho", "../" + glt)
            source = "classes.h5" if ext == "h5" else "classes.hdr"
            f.ortho(ref, source, glt, f"map.{ext}")
            f.ortho(ref, "classes_confidence.hdr", glt, f"map_confidence.{ext}")
            what = f"knn --ortho {glt} -o map.{ext}"
            if ext == "hdr":
                envi_files_equal(checks, f.path(direct, "map"), f.path(ref, "map"), what)
                envi_files_equal(checks, f.path(direct, "map_confidence"), f.path(ref, "map_confidence"), what)
            elif ext == "h5":
                h5_datasets_equal(checks, f.path(direct, "map.h5"), f.path(ref, "map.h5"), ["cube"], what)
                with h5py.File(f.path(direct, "map.h5"), "r") as h, h5py.File(f.path(ref, "map_confidence.h5")) as c:
                    checks.true(h["confidence"][...].tobytes() == c["cube"][...].tobytes(), f"{what}: /confidence")
            else:
                tif_equal(checks, f, f.path(direct, "map.tif"), f.path(ref, "map.tif"), what)
                tif_equal(checks, f, f.path(direct, "map_confidence.tif"), f.path(ref, "map_confidence.tif"), what)
            report = json.load(open(f.path(direct, "map_report.json")))
            want = [f"map.{ext}"] + ([] if ext == "h5" else [f"map_confidence.{ext}"])
            checks.equal(report["outputs"], want, f"{what}: the report names the outputs on the grid")
            checks.true(".tmp." not in open(f.path(direct, "map_report.md")).read(), f"{what}: no temporary in the report")
            no_hidden_files(checks, direct, what)


def check_sam(f):
    checks = f.checks
    for glt in GLTS:
        ref = f.folder()
        f.run(ref, *SAM, "-o", "classes.hdr", "--rules", "rules.hdr")
        f.run(ref, *SAM, "-o", "classes.h5", "--rules", "rules.h5")
        for ext in FORMATS:
            direct = f.folder()
            f.run(direct, *SAM, "-o", f"map.{ext}", "--rules", f"rules.{ext}", "--ortho", "../" + glt)
            f.ortho(ref, "classes.h5" if ext == "h5" else "classes.hdr", glt, f"map.{ext}")
            f.ortho(ref, "classes_score.hdr", glt, f"map_score.{ext}")
            f.ortho(ref, "rules.h5" if ext == "h5" else "rules.hdr", glt, f"rules_map.{ext}")
            what = f"sam --ortho {glt} -o map.{ext}"
            if ext == "hdr":
                for name, two_step in (("map", "map"), ("map_score", "map_score"), ("rules", "rules_map")):
                    envi_files_equal(checks, f.path(direct, name), f.path(ref, two_step), f"{what}: {name}")
            elif ext == "h5":
                h5_datasets_equal(checks, f.path(direct, "map.h5"), f.path(ref, "map.h5"), ["cube"], what)
                h5_datasets_equal(checks, f.path(direct, "rules.h5"), f.path(ref, "rules_map.h5"), ["cube"], what)
                with h5py.File(f.path(direct, "map.h5"), "r") as h, h5py.File(f.path(ref, "map_score.h5")) as s:
                    checks.true(h["score"][...].tobytes() == s["cube"][...].tobytes(), f"{what}: /score")
            else:
                for name, two_step in (("map", "map"), ("map_score", "map_score"), ("rules", "rules_map")):
                    tif_equal(checks, f, f.path(direct, name + ".tif"), f.path(ref, two_step + ".tif"), f"{what}: {name}")
            no_hidden_files(checks, direct, what)


def check_mnf(f):
    checks = f.checks
    for glt in GLTS:
        ref = f.folder()
        f.run(ref, *MNF, "-o", "comp.h5")
        f.run(ref, *MNF, "-o", "comp.hdr", "--denoise", "clean.hdr")
        direct = f.folder()
        f.run(direct, *MNF, "-o", "map.h5", "--ortho", "../" + glt)
        f.ortho(ref, "comp.h5", glt, "map.h5")
        what = f"mnf --ortho {glt} -o map.h5"
        h5_datasets_equal(checks, f.path(direct, "map.h5"), f.path(ref, "map.h5"), ["cube"], what)
        stats = ["mnf/eigenvalues", "mnf/transform", "mnf/mean"]
        h5_datasets_equal(checks, f.path(direct, "map.h5"), f.path(ref, "comp.h5"), stats, what + " statistics")
        f.run(direct, *MNF, "-o", "map.hdr", "--denoise", "clean.hdr", "--ortho", "../" + glt)
        f.ortho(ref, "comp.hdr", glt, "map.hdr")
        f.ortho(ref, "clean.hdr", glt, "clean_map.hdr")
        what = f"mnf --ortho {glt} -o map.hdr"
        envi_files_equal(checks, f.path(direct, "map"), f.path(ref, "map"), what)
        envi_files_equal(checks, f.path(direct, "clean"), f.path(ref, "clean_map"), what + " --denoise")
        h5_datasets_equal(checks, f.path(direct, "map.stats.h5"), f.path(ref, "comp.stats.h5"), stats,
                          what + " statistics beside it")
        if HAVE_GDAL:
            f.run(direct, *MNF, "-o", "map.tif", "--ortho", "../" + glt)
            f.ortho(ref, "comp.hdr", glt, "map.tif")
            tif_equal(checks, f, f.path(direct, "map.tif"), f.path(ref, "map.tif"), f"mnf --ortho {glt} -o map.tif")
            checks.true(os.path.exists(f.path(direct, "map.stats.h5")), "mnf -o map.tif: statistics beside it")
        no_hidden_files(checks, direct, f"mnf --ortho {glt}")


def check_ranks(f):
    if not f.args.mpiexec:
        return
    checks = f.checks
    for command, name in ((KNN, "knn"), (SAM, "sam"), (MNF, "mnf")):
        for glt in GLTS:
            one, three = f.folder(), f.folder()
            for ext in FORMATS:
                f.run(one, *command, "-o", f"map.{ext}", "--ortho", "../" + glt)
                f.run(three, *command, "-o", f"map.{ext}", "--ortho", "../" + glt, ranks=3)
            what = f"{name} --ortho {glt} on 1 and 3 ranks"
            checks.true(open(f.path(one, "map.img"), "rb").read() == open(f.path(three, "map.img"), "rb").read()
                        and open(f.path(one, "map.hdr")).read() == open(f.path(three, "map.hdr")).read(),
                        f"{what}: ENVI, the same bytes")
            with h5py.File(f.path(one, "map.h5"), "r") as a, h5py.File(f.path(three, "map.h5"), "r") as b:
                names = []
                a.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
                checks.true(all(a[n][...].tobytes() == b[n][...].tobytes() for n in names), f"{what}: HDF5 {names}")
            if HAVE_GDAL:
                checks.true(np.array_equal(gdal_pixels(f.path(one, "map.tif"), f.work),
                                           gdal_pixels(f.path(three, "map.tif"), f.work), equal_nan=True),
                            f"{what}: GeoTIFF pixels")
            no_hidden_files(checks, three, what)


def expect_refused(f, argv, code, field, ranks=1):
    folder = f.path("refused")
    os.makedirs(folder, exist_ok=True)
    before = clitest.snapshot(f.work)
    got, _, stderr = clitest.run(f.args.cli, [*argv, "--backend", f.backend], folder, f.args.mpiexec, ranks)
    what = " ".join(argv)
    f.checks.equal(got, code, f"{what}: exit code ({stderr})")
    lines = [clitest.one_error_line(stderr, what)] if ranks == 1 else clitest.rank_error_lines(stderr)
    f.checks.true(lines and all(field in line for line in lines), f"{what}: the error names {field}: {stderr}")
    f.checks.equal(clitest.snapshot(f.work), before, f"{what}: nothing written, no temporary left")


def check_bad_glt(f):
    outside = f.glt_planes.copy()
    outside[3, 4, 1] = LINES + 1
    write_envi(f.path("glt_outside"), outside, "bsq", f"map info = {UTM_MAP_INFO}\n")
    sample, line = f.glt_planes[..., 0], f.glt_planes[..., 1]
    write_emit_glt(f.path("other_scene.nc"), sample, line, EMIT_GT, wkt("EPSG:4326"), (LINES + 1, SAMPLES))
    for command in (KNN, SAM, MNF):
        for ext in FORMATS:
            expect_refused(f, [*command, "-o", f"map.{ext}", "--ortho", "../glt_outside.hdr"], 3,
                           "glt_outside.hdr: field 'band 2'")
        expect_refused(f, [*command, "-o", "map.h5", "--ortho", "../other_scene.nc"], 3, "field 'lines'")
        if f.args.mpiexec:
            expect_refused(f, [*command, "-o", "map.tif", "--ortho", "../glt_outside.hdr"], 3, "field 'band 2'",
                           ranks=3)
    # The product step fails after the GLT passed: nothing written, no temporary left.
    f.cli(f.work, "synth", "-o", "other.hdr", "--lines", LINES + 2, "--samples", SAMPLES, "--bands", 6, "--seed", 4)
    other_truth = ["--truth", "../other_truth.hdr", "--train-fraction", "0.5", "-k", "3"]
    for ext in ("hdr", "h5", "tif"):
        expect_refused(f, ["knn", "../scene.hdr", *other_truth, "-o", f"map.{ext}", "--ortho", "../glt.hdr"], 3,
                       "other_truth.hdr")
    expect_refused(f, [*KNN, "-o", "map.h5", "--neighbors", "--ortho", "../glt.hdr"], 2, "--neighbors")
    expect_refused(f, [*MNF, "-o", "map.h5", "--stats-only", "--ortho", "../glt.hdr"], 2, "--stats-only")
    expect_refused(f, [*KNN, "-o", "../glt.hdr", "--ortho", "../glt.hdr"], 2, "-o")


def main():
    args = clitest.parse_args()
    checks = hbtest.Checks()
    backend = clitest.backend_or_skip(args, hbtest.skip)
    with clitest.tempfile_dir() as work:
        f = Fixture(work, args, checks, backend)
        parts = {"knn": check_knn, "sam": check_sam, "mnf": check_mnf, "ranks": check_ranks, "bad": check_bad_glt}
        for name, check in parts.items():
            if args.part in ("all", "cuda", name) and not (args.part == "cuda" and name in ("ranks", "bad")):
                check(f)
    checks.done("--ortho")


if __name__ == "__main__":
    sys.exit(main())
