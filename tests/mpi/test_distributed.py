"""Distributed runs of the real CLI under mpirun (CPU ranks): the same answer for any
rank count and tile size, and a failure on one rank stops every rank with its cause.

Parts (--part): mnf (bitwise-equal statistics, eigenvalues and components for 1-4
ranks, several tile sizes, uneven blocks, a rank whose block is all fill, ENVI and HDF5
in and out), knn (bitwise-equal class maps, ring and allgather modes), sam (bitwise-equal
class maps, scores and per-class rules, ENVI and HDF5 out, with and without dedup),
failure, one_rank (synth, ingest, export and info under a launcher: rank 0 runs them,
the same bytes as one rank, said once)."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))
try:
    import h5py  # noqa: E402
except ImportError:
    print("SKIPPED: python3-h5py is not installed")
    sys.exit(77)

RANKS = (1, 2, 3, 4)
TIMEOUT_S = 60  # per mpirun: a hang is a failure, not a stuck CI job


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--cli", required=True)
    p.add_argument("--shared-data", required=True)
    p.add_argument("--mpiexec", required=True)
    p.add_argument("--part", required=True, choices=["mnf", "knn", "sam", "failure", "one_rank"])
    return p.parse_args()


class Runner:
    def __init__(self, cli, mpiexec, cwd):
        self.cli, self.mpiexec, self.cwd = cli, mpiexec, cwd

    def mpi(self, ranks, *args, expect=0, verbose=False):
        cmd = [self.mpiexec, "--oversubscribe", "--allow-run-as-root", "-np", str(ranks), self.cli,
               "-v" if verbose else "-q", *map(str, args)]
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OMPI_MCA_rmaps_base_oversubscribe="1")
        try:
            proc = subprocess.run(cmd, cwd=self.cwd, capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"hang: {' '.join(cmd)} did not finish in {TIMEOUT_S} s")
        ok = proc.returncode == 0 if expect == 0 else proc.returncode != 0
        if not ok:
            raise AssertionError(f"{' '.join(cmd)}: exit {proc.returncode}, expected "
                                 f"{'0' if expect == 0 else 'non-zero'}\nstderr: {proc.stderr[-4000:]}")
        return proc

    def serial(self, *args):
        subprocess.run([self.cli, "-q", *map(str, args)], cwd=self.cwd, check=True)


def same_bits(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


class Reference:
    """The first result of a sweep; every later one must be the same bits."""

    def __init__(self):
        self.value = None

    def check(self, got, what):
        """Returns the number of comparisons made (0 for the reference itself)."""
        if self.value is None:
            self.value = got
            return 0
        for key, value in got.items():
            assert same_bits(value, self.value[key]), f"{what}: {key} differs"
        return 1


def make_scenes(run, d):
    """s.hdr: 96 x 24 x 20 int16 with a fill border; f.hdr: rows 12.. all fill, so that
    with 4 ranks the last block holds nothing but fill."""
    run.serial("synth", "-o", f"{d}/s.hdr", "--lines", 96, "--samples", 24, "--bands", 20, "--classes", 4,
               "--fill-border", 0.2, "--seed", 7)
    raw = np.fromfile(f"{d}/s.img", dtype="<i2").reshape(96, 24, 20)
    raw[12:] = -9999
    raw.tofile(f"{d}/f.img")
    with open(f"{d}/s.hdr") as src, open(f"{d}/f.hdr", "w") as dst:
        dst.write(src.read())
    run.serial("ingest", f"{d}/s.hdr", "-o", f"{d}/s.h5")


def part_mnf(run, d):
    make_scenes(run, d)
    checks = 0
    for scene in ("s.hdr", "s.h5", "f.hdr"):
        reference = None
        for ranks in RANKS:
            for tile_rows in (5, 16, None):  # None: the memory budget's (one tile for this scene)
                out = f"{d}/m_{scene}_{ranks}_{tile_rows}.h5"
                tiling = ["--tile-rows", tile_rows] if tile_rows else []
                run.mpi(ranks, "mnf", f"{d}/{scene}", "-o", out, *tiling)
                with h5py.File(out) as f:
                    got = {k: f[k][()] for k in ("mnf/eigenvalues", "mnf/data_covariance",
                                                 "mnf/noise_covariance", "mnf/mean", "cube")}
                if reference is None:
                    reference = got
                    continue
                ev, ref = got["mnf/eigenvalues"], reference["mnf/eigenvalues"]
                rel = np.max(np.abs(ev - ref) / np.abs(ref))
                assert rel <= 1e-12, f"{scene}, {ranks} ranks, {tile_rows}-row tiles: eigenvalues differ by {rel:g}"
                for key, value in got.items():
                    assert same_bits(value, reference[key]), \
                        f"{scene}, {ranks} ranks, {tile_rows}-row tiles: {key} is not bitwise the same as 1 rank"
                checks += 1
    # The all-fill block: with 4 ranks the last rank's tiles lie in the fill rows.
    proc = run.mpi(4, "mnf", f"{d}/f.hdr", "-o", f"{d}/fill4.h5", "--tile-rows", 4, verbose=True)
    block = re.search(r"rank 3 has rows \[(\d+), (\d+)\)", proc.stderr)
    assert block, "rank 3 did not log its block"
    assert int(block.group(1)) >= 12 and int(block.group(2)) > int(block.group(1)), \
        f"rank 3's rows [{block.group(1)}, {block.group(2)}) are not a non-empty all-fill block"
    # ENVI output written by several ranks into one file: the same bytes as one rank.
    run.mpi(1, "mnf", f"{d}/s.hdr", "-o", f"{d}/e1.hdr", "--tile-rows", 7, "--denoise", f"{d}/dn1.hdr")
    run.mpi(3, "mnf", f"{d}/s.hdr", "-o", f"{d}/e3.hdr", "--tile-rows", 7, "--denoise", f"{d}/dn3.hdr")
    for a, b in (("e1.img", "e3.img"), ("dn1.img", "dn3.img")):
        assert open(f"{d}/{a}", "rb").read() == open(f"{d}/{b}", "rb").read(), f"{b} differs from {a}"
    return checks + 2 + part_campaign(run, d)


def part_campaign(run, d):
    """--stats-only over three scenes: the same bits for 1-3 ranks, and the pooled mean
    and covariance of numpy over every valid pixel of the three scenes."""
    run.serial("synth", "-o", f"{d}/t.hdr", "--lines", 50, "--samples", 24, "--bands", 20, "--classes", 3, "--seed", 9)
    scenes = [f"{d}/s.hdr", f"{d}/t.hdr", f"{d}/f.hdr"]
    reference = None
    for ranks in (1, 2, 3):
        out = f"{d}/campaign_{ranks}.h5"
        run.mpi(ranks, "mnf", "--stats-only", *scenes, "-o", out)
        with h5py.File(out) as f:
            got = {k: f["mnf/" + k][()] for k in ("eigenvalues", "mean", "data_covariance", "noise_covariance")}
        if reference is None:
            reference = got
            continue
        for key, value in got.items():
            assert same_bits(value, reference[key]), f"campaign, {ranks} ranks: {key} differs from 1 rank"
    pixels = []
    for name, lines in (("s", 96), ("t", 50), ("f", 96)):
        x = np.fromfile(f"{d}/{name}.img", dtype="<i2").reshape(lines * 24, 20).astype(float)
        # Synthetic scenes say `reflectance scale factor = 10000`: commands read float32 reflectance.
        reflectance = (x[(x != -9999).all(axis=1)] * (1.0 / 10000)).astype(np.float32).astype(float)
        pixels.append(reflectance)
    x = np.vstack(pixels)
    mean_err = np.max(np.abs(x.mean(axis=0) - reference["mean"]) / np.abs(x.mean(axis=0)))
    cov = np.cov(x.T)
    cov_err = np.max(np.abs(cov - reference["data_covariance"])) / np.max(np.abs(cov))
    assert mean_err < 1e-12 and cov_err < 1e-10, f"campaign statistics: mean {mean_err:g}, covariance {cov_err:g}"
    return 3


def part_knn(run, d):
    """Class maps and confidences bitwise equal for 1-4 ranks, ring and allgather, two
    tile sizes. (Neighbour distances are not compared bitwise: the FP32 |q|^2+|t|^2-2q.t
    expansion rounds differently with the shard shape; see src/knn/README.md.)"""
    make_scenes(run, d)
    reference, checks = Reference(), 0
    for ranks in RANKS:
        for mode in (("ring", "allgather") if ranks > 1 else ("auto",)):
            for tile_rows in (5, None):
                out = f"{d}/k_{ranks}_{mode}_{tile_rows}.h5"
                tiling = ["--tile-rows", tile_rows] if tile_rows else []
                run.mpi(ranks, "knn", f"{d}/s.hdr", "--truth", f"{d}/s_truth.hdr", "--train-fraction", 0.3, "-k", 5,
                        "-o", out, "--shard-mode", mode, *tiling)
                with h5py.File(out) as f:
                    got = {k: f[k][()] for k in ("cube", "confidence")}
                checks += reference.check(got, f"{ranks} ranks, {mode}, {tile_rows} rows")
    return checks + part_knn_per_class(run, d)


def part_knn_per_class(run, d):
    """--train-per-class draws without a validity pass (each rank checks the pixels the
    draw reaches in its share of rows): class maps and accuracy reports equal for 1-4
    ranks, and the evaluation pixels are every labelled valid pixel but the training
    ones. On f.hdr the labels of rows 12.. lie on fill, so the draw must skip them and
    every class runs out of valid pixels before 20."""
    import json
    checks = 0
    for scene in ("s", "f"):
        truth = np.fromfile(f"{d}/s_truth.img", dtype=np.uint8)  # ENVI data type 1
        raw = np.fromfile(f"{d}/{scene}.img", dtype="<i2").reshape(96 * 24, 20)
        usable = (truth != 0) & (raw != -9999).all(axis=1)
        reference = Reference()
        for ranks in RANKS:
            for tile_rows in (5, None):
                out = f"{d}/kp_{scene}_{ranks}_{tile_rows}.h5"
                tiling = ["--tile-rows", tile_rows] if tile_rows else []
                run.mpi(ranks, "knn", f"{d}/{scene}.hdr", "--truth", f"{d}/s_truth.hdr", "--train-per-class", 20,
                        "-k", 3, "-o", out, "--report", f"{d}/kp_{scene}_{ranks}_{tile_rows}", *tiling)
                with h5py.File(out) as f:
                    got = {k: f[k][()] for k in ("cube", "confidence")}
                with open(f"{d}/kp_{scene}_{ranks}_{tile_rows}.json") as f:
                    report = json.load(f)
                accuracy = report["accuracy"]
                assert accuracy["evaluation_pixels"] == usable.sum() - report["training_rows"], \
                    f"{scene}, {ranks} ranks: {accuracy['evaluation_pixels']} evaluation pixels, " \
                    f"expected {usable.sum()} usable - {report['training_rows']} training"
                got["matrix"] = np.array(accuracy["confusion_matrix"])
                checks += reference.check(got, f"{scene}, per class, {ranks} ranks, {tile_rows} rows")
        if scene == "f":
            per_class = np.bincount(truth[usable])[1:]
            assert report["training_rows"] == np.minimum(per_class, 20).sum(), "f: not every usable pixel of a small class trained"
    return checks + part_knn_training_file(run, d)


def part_knn_training_file(run, d):
    """A saved training file with --truth evaluating: each rank reads only its block's
    truth rows. ENVI class maps (each rank's rows written into the one file) and the
    confusion matrix bitwise equal for 1-4 ranks; every labelled valid pixel evaluated."""
    import json
    run.mpi(1, "knn", f"{d}/s.hdr", "--truth", f"{d}/s_truth.hdr", "--train-per-class", 15, "-k", 3,
            "-o", f"{d}/kt_saved.hdr", "--save-training", f"{d}/kt_training.h5")
    truth = np.fromfile(f"{d}/s_truth.img", dtype=np.uint8)
    raw = np.fromfile(f"{d}/s.img", dtype="<i2").reshape(96 * 24, 20)
    usable = (truth != 0) & (raw != -9999).all(axis=1)
    reference, checks = Reference(), 0
    for ranks in RANKS:
        for tile_rows in (7, None):
            base = f"{d}/kt_{ranks}_{tile_rows}"
            tiling = ["--tile-rows", tile_rows] if tile_rows else []
            run.mpi(ranks, "knn", f"{d}/s.hdr", "--train", f"{d}/kt_training.h5", "--truth", f"{d}/s_truth.hdr",
                    "-k", 3, "-o", f"{base}.hdr", "--report", base, *tiling)
            with open(f"{base}.json") as f:
                accuracy = json.load(f)["accuracy"]
            assert accuracy["evaluation_pixels"] == usable.sum(), \
                f"{ranks} ranks: {accuracy['evaluation_pixels']} evaluation pixels, expected {usable.sum()}"
            got = {"cube": np.fromfile(f"{base}.img", dtype=np.uint8),
                   "confidence": np.fromfile(f"{base}_confidence.img", dtype="<f4"),
                   "matrix": np.array(accuracy["confusion_matrix"])}
            checks += reference.check(got, f"training file, {ranks} ranks, {tile_rows} rows")
    return checks + part_knn_split_files(run, d)


def part_knn_split_files(run, d):
    """--save-training, --export-split and --features mnf:N under any rank count: the
    saved training rows, the exported split and the class map on MNF features are the
    same as on one rank."""
    import json
    reference, checks = Reference(), 0
    for ranks in RANKS:
        base = f"{d}/ks_{ranks}"
        run.mpi(ranks, "knn", f"{d}/s.hdr", "--truth", f"{d}/s_truth.hdr", "--train-fraction", 0.2, "-k", 3,
                "-o", f"{base}.hdr", "--save-training", f"{base}_train.h5", "--export-split", f"{base}_split.json")
        run.mpi(ranks, "knn", f"{d}/s.hdr", "--truth", f"{d}/s_truth.hdr", "--train-per-class", 15, "-k", 3,
                "--features", "mnf:4", "-o", f"{base}_mnf.h5")
        with h5py.File(f"{base}_train.h5") as f:
            got = {f"train/{k}": f["train"][k][()] for k in ("features", "labels", "pixels")}
        with h5py.File(f"{base}_mnf.h5") as f:
            got["mnf cube"] = f["cube"][()]
        with open(f"{base}_split.json") as f:
            split = json.load(f)
        got["split"] = np.frombuffer(json.dumps(split, sort_keys=True).encode(), dtype=np.uint8)
        got["cube"] = np.fromfile(f"{base}.img", dtype=np.uint8)
        checks += reference.check(got, f"split files and MNF features, {ranks} ranks")
    leftovers = [n for n in os.listdir(d) if n.startswith(".ks_")]
    assert not leftovers, f"temporary MNF features left behind: {leftovers}"
    return checks


def part_sam(run, d):
    """SAM class maps, best scores and per-class scores bitwise equal for 1-4 ranks (rows
    in balanced blocks, one shared output file), tile sizes 5 and the default, with the
    fill border deduplicated or not; also on the f scene whose last block is all fill."""
    make_scenes(run, d)
    checks = 0
    for scene in ("s", "f"):
        reference = Reference()
        for ranks in RANKS:
            for tile_rows, dedup in ((5, "on"), (None, "off")):
                tag = f"{scene}_{ranks}_{tile_rows}_{dedup}"
                tiling = ["--tile-rows", tile_rows] if tile_rows else []
                run.mpi(ranks, "sam", f"{d}/{scene}.hdr", "--library", f"{d}/s_library.hdr", "-o", f"{d}/m_{tag}.h5",
                        "--rules", f"{d}/r_{tag}.hdr", "--dedup", dedup, *tiling)
                with h5py.File(f"{d}/m_{tag}.h5") as f:
                    got = {k: f[k][()] for k in ("cube", "score")}
                got["rules"] = np.fromfile(f"{d}/r_{tag}.img", dtype=np.uint8)
                checks += reference.check(got, f"{scene}: {ranks} ranks, {tile_rows} rows, dedup {dedup}")
    return checks


def part_failure(run, d):
    """A truncated scene: every rank fails, the job exits non-zero without hanging, the
    message names the rank, its host and the cause, and no output appears."""
    make_scenes(run, d)
    data = open(f"{d}/s.img", "rb").read()
    open(f"{d}/s.img", "wb").write(data[: len(data) // 2])
    checks = 0
    for command in (["mnf", f"{d}/s.hdr", "-o", f"{d}/bad.h5"],
                    ["knn", f"{d}/s.hdr", "--truth", f"{d}/s_truth.hdr", "--train-fraction", 0.3, "-k", 3,
                     "-o", f"{d}/bad_knn.h5"]):
        proc = run.mpi(3, *command, expect=1)
        assert re.search(r"error on rank \d+ \(\S+\)", proc.stderr), f"no rank/host in: {proc.stderr[-2000:]}"
        assert "shorter" in proc.stderr, f"cause missing: {proc.stderr[-2000:]}"
        leftovers = [n for n in os.listdir(d) if n.startswith("bad")]
        assert not leftovers, f"output left behind: {leftovers}"
        checks += 1
    # A corrupt scene seen by one rank only: campaign scene 2 goes to rank 2 of 3.
    run.serial("synth", "-o", f"{d}/ok.hdr", "--lines", 20, "--samples", 24, "--bands", 20, "--seed", 3)
    proc = run.mpi(3, "mnf", "--stats-only", f"{d}/ok.hdr", f"{d}/ok.hdr", f"{d}/s.hdr", "-o", f"{d}/bad_campaign.h5",
                   expect=1)
    assert re.search(r"error on rank 2 \(\S+\): .*s\.img.*shorter", proc.stderr), proc.stderr[-2000:]
    assert re.search(r"error on rank 0 \(\S+\): rank 2 \(\S+\) failed", proc.stderr), proc.stderr[-2000:]
    assert not [n for n in os.listdir(d) if n.startswith("bad")], "output left behind"
    return checks + 1


def part_one_rank(run, d):
    """Commands that do not divide their work run on rank 0 alone under a launcher: the
    same bytes as one rank, their report printed once, and a failure said in one line
    with the command's exit code."""
    run.serial("synth", "-o", f"{d}/one.hdr", "--lines", 60, "--samples", 20, "--bands", 12, "--seed", 5)
    run.serial("ingest", f"{d}/one.hdr", "-o", f"{d}/one.h5")
    run.serial("export", f"{d}/one.h5", "-o", f"{d}/one_back.hdr")
    checks = 0
    for ranks in (2, 3):
        proc = run.mpi(ranks, "synth", "-o", f"{d}/m{ranks}.hdr", "--lines", 60, "--samples", 20, "--bands", 12,
                       "--seed", 5, "--json")
        assert len(proc.stdout.splitlines()) == 1, f"synth on {ranks} ranks printed: {proc.stdout}"
        run.mpi(ranks, "ingest", f"{d}/m{ranks}.hdr", "-o", f"{d}/m{ranks}.h5")
        run.mpi(ranks, "export", f"{d}/m{ranks}.h5", "-o", f"{d}/m{ranks}_back.hdr")
        for one, many in (("one.img", f"m{ranks}.img"), ("one_truth.img", f"m{ranks}_truth.img"),
                          ("one_back.img", f"m{ranks}_back.img")):
            assert open(f"{d}/{one}", "rb").read() == open(f"{d}/{many}", "rb").read(), f"{many} differs"
        with h5py.File(f"{d}/one.h5") as a, h5py.File(f"{d}/m{ranks}.h5") as b:
            assert same_bits(a["cube"][()], b["cube"][()]), f"m{ranks}.h5 differs"
        info = run.mpi(ranks, "info", f"{d}/one.h5", "--json")
        assert info.stdout.count('"lines"') == 1, f"info on {ranks} ranks printed: {info.stdout}"
        failed = run.mpi(ranks, "info", f"{d}/absent.hdr", expect=1)
        errors = [line for line in failed.stderr.splitlines() if "hyperbatch: error" in line]
        assert failed.returncode == 4 and len(errors) == 1 and "absent.hdr" in errors[0], failed.stderr[-2000:]
        checks += 6
    assert not [n for n in os.listdir(d) if ".tmp." in n], f"temporaries left: {os.listdir(d)}"
    return checks


def main():
    args = parse_args()
    with tempfile.TemporaryDirectory(prefix="hbmpi-") as d:
        run = Runner(args.cli, args.mpiexec, d)
        parts = {"mnf": part_mnf, "knn": part_knn, "sam": part_sam, "failure": part_failure,
                 "one_rank": part_one_rank}
        checks = parts[args.part](run, d)
    assert checks > 0, "nothing was checked"
    print(f"OK: {checks} comparisons")


if __name__ == "__main__":
    main()
