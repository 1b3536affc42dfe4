"""Job files: validation errors name the key and its line (exit 3); a corrupt scene is
recorded as failed in the manifest and the report while the others complete (exit 6);
a rerun skips what is done and redoes only what a changed parameter touches."""
import filecmp
import os
import shutil
import subprocess

import h5py
import numpy as np

from jobtest import EXIT_SCENES_FAILED, Checks, manifest, metrics, parse_args, png_pixels, png_size, run_job, workdir, write

SCENE = """
[[generate]]
name = "{name}"
lines = 48
samples = 40
bands = 32
classes = 3
seed = {seed}
"""


def check_validation(cli, tmp, checks):
    cases = {  # job text -> (key, line) the message must name
        '[job]\nname = "x"\noutput = "o"\n[mnf]\ncomponents = "ten"\n': ("mnf.components", 5),
        '[job]\nname = "x"\noutput = "o"\n\n[mnf]\ncomponets = 3\n': ("mnf.componets", 6),
        '[job]\nname = "x"\noutput = "o"\n[knn]\nk = 5\n': ("knn.k", 5),
        '[job]\nname = "x"\noutput = "o"\n[mnf]\nbasis = "global"\n': ("mnf.basis", 5),
        '[job]\nname = "x"\n\n\noutput = 7\n': ("job.output", 5),
        '[job]\nname = "x"\noutput = "o"\n[knn\n': ("toml", 4),
        '[job]\nname = "x"\noutput = "o"\n[mystery]\na = 1\n': ("mystery", 4),
        '[job]\nname = "x"\noutput = "o"\n[""]\n': ('""', 4),
        '[job]\nname = "x"\noutput = "o"\n"a b" = 1\n': ('job."a b"', 4),
        '[job]\nname = "x"\noutput = "o"\n[[generate]]\nname = "g"\nlines = -3\n': ("generate.lines", 6),
    }
    for i, (text, (key, line)) in enumerate(cases.items()):
        job = write(os.path.join(tmp, f"bad{i}.toml"), text)
        proc = subprocess.run([cli, "run", job], capture_output=True, text=True)
        checks.equal(proc.returncode, 3, f"exit code for {key}")
        checks.true(f"field '{key}'" in proc.stderr and f"line {line}:" in proc.stderr,
                    f"message names '{key}' and line {line}: {proc.stderr!r}")
        checks.true(job in proc.stderr, f"message names the job file: {proc.stderr!r}")


def check_sam_step(cli, shared, tmp, checks):
    """A [sam] step classifies each scene against a spectral library (resampled to it)."""
    library = os.path.join(shared, "usgs_library", "usgs_1995_aviris224.hdr")
    if not os.path.exists(library):
        print(f"sam step: skipped, {library} is absent (../shared beside the clone)")
        return
    job = write(os.path.join(tmp, "sam.toml"), '[job]\nname = "s"\noutput = "out-sam"\n' + SCENE.format(name="s", seed=1) +
                f'[sam]\nlibrary = "{library}"\nmax_angle = 0.5\n')
    run_job(cli, job)
    out = os.path.join(tmp, "out-sam")
    entry = manifest(out)[("s", "sam")]
    checks.equal(entry["status"], "done", "sam step in the manifest")
    classes = [os.path.join(out, p) for p in entry.get("outputs", []) if p.endswith("sam_classes.hdr")]
    checks.true(len(classes) == 1 and os.path.exists(classes[0]), f"sam class map written: {entry.get('outputs')}")
    checks.equal(entry["summary"]["classified"] + entry["summary"]["below_threshold"] + entry["summary"]["ignored"],
                 48 * 40, "every pixel accounted for")


def stretched_rgb(components, low, high):
    """Components 1-3 (lines x samples x n) as the quicklook draws them: each stretched
    from its low to its high percentile (the nearest-rank value of the finite ones) to
    0-255, rounded half away from zero; non-finite pixels black."""
    rgb = np.zeros(components.shape[:2] + (3,), np.uint8)
    for c in range(3):
        band = components[..., min(c, components.shape[2] - 1)].astype(np.float64)
        finite = np.sort(band[np.isfinite(band)])
        lo, hi = (finite[int(np.floor(p / 100.0 * (finite.size - 1) + 0.5))] for p in (low, high))
        t = (band - lo) / (hi - lo) if hi > lo else np.full(band.shape, 0.5)
        scaled = 255.0 * np.clip(t, 0.0, 1.0)
        rgb[..., c] = np.floor(np.where(np.isfinite(band), scaled, 0.0) + 0.5).astype(np.uint8)
    return rgb


def check_corrupt_scene(cli, tmp, checks):
    # A header promising far more data than its file holds.
    write(os.path.join(tmp, "corrupt.hdr"), "ENVI\nsamples = 40\nlines = 48\nbands = 32\nheader offset = 0\n"
          "file type = ENVI Standard\ndata type = 2\ninterleave = bip\nbyte order = 0\n")
    with open(os.path.join(tmp, "corrupt.img"), "wb") as f:
        f.write(b"\0" * 1000)
    job = write(os.path.join(tmp, "corrupt.toml"), '[job]\nname = "c"\noutput = "out-c"\n'
                '[collection]\nscenes = ["corrupt.hdr"]\n' + SCENE.format(name="good", seed=2) +
                '[mnf]\ncomponents = 3\n[knn]\nk = 3\ntrain_fraction = 0.1\nfeatures = "mnf"\n[quicklooks]\n[report]\n')
    proc = run_job(cli, job, expect=EXIT_SCENES_FAILED)
    out = os.path.join(tmp, "out-c")
    m = manifest(out)
    checks.equal(m[("corrupt", "mnf")]["status"], "failed", "corrupt scene's mnf entry")
    checks.true("corrupt.img" in m[("corrupt", "mnf")]["error"], "the error names the data file")
    for step in ("generate", "mnf", "knn", "quicklooks"):
        checks.equal(m[("good", step)]["status"], "done", f"good scene's {step}")
    checks.equal(png_size(os.path.join(out, "scenes/good/mnf_rgb.png")), (40, 48), "MNF quicklook size")
    with h5py.File(os.path.join(out, "scenes/good/mnf.h5")) as f:
        expected = stretched_rgb(f["cube"][()], 2.0, 98.0)
    wrong = int(np.count_nonzero(png_pixels(os.path.join(out, "scenes/good/mnf_rgb.png")) != expected))
    checks.equal(wrong, 0, "MNF quicklook bytes differing from components 1-3 stretched 2-98 %")
    report = open(os.path.join(out, "report.md")).read()
    checks.true("| corrupt | failed (mnf) |" in report and "## Failed scenes" in report, "report lists the failure")
    checks.true("1 of 2 scenes failed" in proc.stderr, f"stderr says how many failed: {proc.stderr[-300:]}")


def step_counts(out, what):
    """{step: count} of the last run's steps that were done, skipped or failed (metrics.json)."""
    return {step: s[what] for step, s in metrics(out)["stages"].items()}


def check_skip_and_redo(cli, tmp, checks):
    text = ('[job]\nname = "r"\noutput = "out-r"\n' + SCENE.format(name="s1", seed=3) + SCENE.format(name="s2", seed=4) +
            '[ingest]\n[mnf]\ncomponents = 3\n[knn]\nk = {k}\ntrain_fraction = 0.1\nfeatures = "mnf"\n[quicklooks]\n[report]\n')
    job = write(os.path.join(tmp, "r.toml"), text.format(k=3))
    out = os.path.join(tmp, "out-r")
    run_job(cli, job)
    first = manifest(out)
    run_job(cli, job)
    checks.equal(manifest(out), first, "a rerun of a finished job leaves the manifest as it was")
    checks.equal(set(step_counts(out, "done").values()), {0}, "a rerun of a finished job redoes nothing")
    write(job, text.format(k=5))
    run_job(cli, job)
    third = manifest(out)
    done, skipped = step_counts(out, "done"), step_counts(out, "skipped")
    for step in ("generate", "ingest", "mnf"):
        checks.equal((done[step], skipped[step]), (0, 2), f"{step} kept on both scenes")
        for scene in ("s1", "s2"):
            checks.equal(third[(scene, step)]["checksum"], first[(scene, step)]["checksum"], f"{scene} {step} unchanged")
    for step in ("knn", "quicklooks"):
        checks.equal((done[step], skipped[step]), (2, 0), f"{step} redone on both scenes")
        for scene in ("s1", "s2"):
            checks.true(third[(scene, step)]["checksum"] != first[(scene, step)]["checksum"], f"{scene} {step} new checksum")
    for scene in ("s1", "s2"):
        checks.equal(third[(scene, "knn")]["summary"]["k"], 5, "knn redone with the new k")


def check_campaign_basis(cli, shared, tmp, checks):
    """A campaign of one scene twice (ENVI and HDF5 copies) has that scene's own MNF basis:
    the moments double, so the basis is unchanged up to the n-1 normalisation of the noise
    covariance (components scale by sqrt(2(m-1)/(2m-1)): 2.6e-5 relative for m = 9801 residuals)."""
    import h5py
    import numpy as np
    jasper = os.path.join(shared, "jasper_ridge", "jasper_ridge.hdr")
    if not os.path.exists(jasper):
        print(f"campaign basis: skipped, {jasper} absent")
        return
    copy = os.path.join(tmp, "jasper_copy.h5")
    subprocess.run([cli, "-q", "ingest", jasper, "-o", copy], check=True)
    job = write(os.path.join(tmp, "campaign.toml"), '[job]\nname = "campaign"\noutput = "out-campaign"\n'
                f'[collection]\nscenes = ["{jasper}", "{copy}"]\n[mnf]\nbasis = "campaign"\ncomponents = 4\n[report]\n')
    run_job(cli, job)
    own = os.path.join(tmp, "own.h5")
    subprocess.run([cli, "-q", "mnf", jasper, "-o", own, "--components", "4"], check=True)
    with h5py.File(own) as f:
        reference = f["cube"][...].astype(np.float64)
    out = os.path.join(tmp, "out-campaign", "scenes")
    for scene in ("jasper_ridge", "jasper_copy"):
        with h5py.File(os.path.join(out, scene, "mnf.h5")) as f:
            got = f["cube"][...].astype(np.float64)
        for c in range(4):
            sign = np.sign(np.sum(got[..., c] * reference[..., c]))
            err = np.max(np.abs(sign * got[..., c] - reference[..., c])) / np.max(np.abs(reference[..., c]))
            checks.true(err < 1e-4, f"{scene} campaign component {c + 1} equals the scene's own (rel. error {err:.2e})")
    with open(os.path.join(tmp, "out-campaign", "report.md")) as f:
        checks.true("one campaign-wide basis" in f.read(), "the report names the campaign basis")


def check_campaign_moments(cli, tmp, checks, ranks=1):
    """Campaign statistics over two different scenes equal numpy's over the pooled pixels:
    data covariance of all pixels, noise covariance of the diff residuals of each scene
    (SPy's noise_from_diffs: covariance of x(r,c) - x(r+1,c+1), halved)."""
    import h5py
    import numpy as np
    job = write(os.path.join(tmp, f"moments{ranks}.toml"), f'[job]\nname = "m"\noutput = "out-m{ranks}"\n' +
                SCENE.format(name="m1", seed=11) + SCENE.format(name="m2", seed=12) +
                '[mnf]\nbasis = "campaign"\ncomponents = 3\n')
    if ranks == 1:
        run_job(cli, job)
    else:  # each rank gathers its own scene; rank 0 sums them in name order
        run_mpi_job(cli, job, ranks)
    out = os.path.join(tmp, f"out-m{ranks}")
    pixels, residuals = [], []
    for name in ("m1", "m2"):
        hdr = open(os.path.join(out, "generated", name + ".hdr")).read()
        cube = np.fromfile(os.path.join(out, "generated", name + ".img"), dtype="<i2").reshape(48, 40, 32).astype(float)
        # `reflectance scale factor = 10000` in the header: the job reads float32 reflectance.
        cube = (cube * (1.0 / 10000)).astype(np.float32).astype(float)
        checks.true("interleave = bip" in hdr, f"{name} is BIP")
        pixels.append(cube.reshape(-1, 32))
        residuals.append((cube[:-1, :-1, :] - cube[1:, 1:, :]).reshape(-1, 32))
    data_cov = np.cov(np.concatenate(pixels).T)
    noise_cov = np.cov(np.concatenate(residuals).T) / 2
    with h5py.File(os.path.join(out, "campaign", "mnf_basis.h5")) as f:
        got_data = f["mnf/data_covariance"][...]
        got_noise = f["mnf/noise_covariance"][...]
        checks.equal(int(f["mnf"].attrs["data_pixels"]), 2 * 48 * 40, "campaign pixel count")
    for what, got, want in (("data", got_data, data_cov), ("noise", got_noise, noise_cov)):
        err = np.max(np.abs(got - want)) / np.max(np.abs(want))
        checks.true(err < 1e-9, f"{ranks} rank(s): campaign {what} covariance matches numpy (rel. error {err:.1e})")


def run_mpi_job(cli, job, ranks):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    subprocess.run([shutil.which("mpirun"), "--oversubscribe", "-np", str(ranks), cli, "run", job, "--no-progress"],
                   check=True, capture_output=True, env=env)


def check_campaign_same_bytes(cli, tmp, checks):
    """A campaign basis over five scenes dealt to 1 and 3 ranks: the same bits (the scenes'
    moments are summed in name order whichever rank holds them), and those of `mnf
    --stats-only` over the scenes; every scene's MNF components are the same bytes too."""
    import h5py
    import numpy as np
    outs = {}
    for ranks in (1, 3):
        outs[ranks] = os.path.join(tmp, f"out-same{ranks}")
        job = write(os.path.join(tmp, f"same{ranks}.toml"), f'[job]\nname = "s"\noutput = "{outs[ranks]}"\n' +
                    "".join(SCENE.format(name=f"c{i}", seed=20 + i) for i in range(5)) +
                    '[mnf]\nbasis = "campaign"\ncomponents = 3\n')
        run_job(cli, job) if ranks == 1 else run_mpi_job(cli, job, ranks)
    # `mnf --stats-only` over the same scenes in name order sums them the same way.
    cli_stats = os.path.join(tmp, "same-cli.h5")
    subprocess.run([cli, "mnf", "--stats-only", *(os.path.join(outs[1], "generated", f"c{i}.hdr") for i in range(5)),
                    "-o", cli_stats, "--components", "3"], check=True, capture_output=True)
    with h5py.File(os.path.join(outs[1], "campaign", "mnf_basis.h5")) as a, \
            h5py.File(os.path.join(outs[3], "campaign", "mnf_basis.h5")) as b, h5py.File(cli_stats) as c:
        for name in ("data_covariance", "noise_covariance", "mean", "eigenvalues", "transform"):
            checks.true(np.array_equal(a["mnf"][name][()], b["mnf"][name][()]),
                        f"campaign basis '{name}': the same bits on 1 and 3 ranks")
            checks.true(np.array_equal(a["mnf"][name][()], c["mnf"][name][()]),
                        f"campaign basis '{name}': the same bits as mnf --stats-only")
    for i in range(5):
        with h5py.File(os.path.join(outs[1], "scenes", f"c{i}", "mnf.h5")) as a, \
                h5py.File(os.path.join(outs[3], "scenes", f"c{i}", "mnf.h5")) as b:
            checks.true(np.array_equal(a["components"][()], b["components"][()]),
                        f"c{i}: the same campaign components on 1 and 3 ranks")
    # A scene's steps after the basis may run on another rank than its first ones: the
    # checksums still chain through every step, as on one rank, so a rerun skips all.
    one, three = manifest(outs[1]), manifest(outs[3])
    checks.equal(sorted(one), sorted(three), "the same manifest entries on 1 and 3 ranks")
    checks.true(all(one[key]["checksum"] == three[key]["checksum"] for key in one),
                "the same checksums on 1 and 3 ranks")
    run_mpi_job(cli, os.path.join(tmp, "same3.toml"), 2)
    stages = metrics(outs[3])["stages"]
    checks.true(all(stage["done"] == 0 for stage in stages.values()), f"a rerun on 2 ranks redoes nothing: {stages}")


def check_scenes_taken_once(cli, tmp, checks):
    """Ranks take the whole scenes as each is free: in a rerun over six scenes of which
    three are done, every scene's steps run or are skipped exactly once across 3 ranks,
    the outputs are a one-rank run's bytes, and the claims are gone afterwards."""
    outs = {ranks: os.path.join(tmp, f"out-taken{ranks}") for ranks in (1, 3)}

    def job(ranks, names):
        return write(os.path.join(tmp, f"taken{ranks}.toml"), f'[job]\nname = "t"\noutput = "{outs[ranks]}"\n' +
                     "".join(SCENE.format(name=f"t{i}", seed=40 + i) for i in names) + '[mnf]\ncomponents = 3\n')

    run_job(cli, job(1, range(6)))
    run_mpi_job(cli, job(3, range(0, 6, 2)), 3)
    run_mpi_job(cli, job(3, range(6)), 3)
    stages = metrics(outs[3])["stages"]
    for step in ("generate", "mnf"):
        checks.equal((stages[step]["done"], stages[step]["skipped"]), (3, 3), f"{step}: 3 scenes run, 3 skipped")
    for i in range(6):
        scene = os.path.join("generated", f"t{i}.img")
        checks.true(filecmp.cmp(os.path.join(outs[1], scene), os.path.join(outs[3], scene), shallow=False),
                    f"t{i}: one rank's scene")
    import h5py
    import numpy as np
    for i in range(6):
        with h5py.File(os.path.join(outs[1], "scenes", f"t{i}", "mnf.h5")) as a, \
                h5py.File(os.path.join(outs[3], "scenes", f"t{i}", "mnf.h5")) as b:
            checks.true(np.array_equal(a["components"][()], b["components"][()]), f"t{i}: one rank's components")
    checks.true(not any(name.startswith("claims") for name in os.listdir(os.path.join(outs[3], "manifest.d"))),
                "no claims left after the run")


def check_submit_scripts(cli, tmp, checks):
    """`submit --dry-run` prints the script it wrote next to the outputs, from the right template."""
    job = write(os.path.join(tmp, "sub.toml"), '[job]\nname = "sub job"\noutput = "out-sub"\n' + SCENE.format(name="s", seed=1))
    script_path = os.path.join(tmp, "out-sub", "hyperbatch.sbatch")
    cases = [
        (["--nodes", "2", "--gpus-per-node", "4", "--time", "01:00:00", "--partition", "gpu"],
         ["#SBATCH --nodes=2", "#SBATCH --ntasks-per-node=4", "#SBATCH --gpus-per-task=1", "#SBATCH --time=01:00:00",
          "#SBATCH --partition=gpu", "srun --mpi=pmix --distribution=block:block --gpu-bind=single:1 ",
          "#SBATCH --job-name=sub_job", "multi-node.sbatch"], ["--gpus-per-node"]),
        (["--nodes", "1", "--gpus-per-node", "0", "--tasks-per-node", "2"],
         ["#SBATCH --nodes=1", "#SBATCH --ntasks-per-node=2", "srun --mpi=pmix " + os.path.realpath(cli), "one-node.sbatch"],
         ["gpu", "--time", "--partition"]),
        (["--nodes", "1", "--gpus-per-node", "4", "--array", "8"],
         ["#SBATCH --array=0-7", '--shard "${SLURM_ARRAY_TASK_ID}/8"', "array.sbatch", "--gpus-per-task=1"], []),
    ]
    for extra, wanted, unwanted in cases:
        proc = subprocess.run([cli, "submit", job, *extra, "--dry-run"], capture_output=True, text=True)
        checks.equal(proc.returncode, 0, f"submit {extra}: {proc.stderr}")
        printed = proc.stdout.split("\n", 1)[1]
        checks.equal(printed, open(script_path).read(), "the printed script is the one written next to the outputs")
        for line in wanted:
            checks.true(line in printed, f"submit {extra}: script has {line!r}:\n{printed}")
        for word in unwanted:
            checks.true(word not in printed.split("set -euo")[0].replace(cli, ""), f"submit {extra}: no {word!r}")
    bad = subprocess.run([cli, "submit", job, "--gpus-per-node", "4", "--tasks-per-node", "2", "--dry-run"],
                         capture_output=True, text=True)
    checks.equal(bad.returncode, 2, "tasks != GPUs is a usage error")


def check_shared_scene(cli, tmp, checks):
    """A scene above large_scene_mb is processed by every rank together (its rows dealt
    over them): under mpirun -np 2 its MNF components and class map equal a one-process
    run's, and the manifest records each of its steps once."""
    text = ('[job]\nname = "big"\noutput = "out-big{n}"\nlarge_scene_mb = 1\n'
            '[[generate]]\nname = "big"\nlines = 160\nsamples = 128\nbands = 32\nclasses = 4\nseed = 5\n'
            '[[generate]]\nname = "small"\nlines = 40\nsamples = 30\nbands = 32\nclasses = 3\nseed = 6\n'
            '[mnf]\ncomponents = 6\n[knn]\nk = 5\ntrain_fraction = 0.1\nseed = 1\nfeatures = "mnf"\n[quicklooks]\n')
    outs = {}
    for n in (1, 2):
        job = write(os.path.join(tmp, f"big{n}.toml"), text.format(n=n))
        if n == 1:
            run_job(cli, job)
        else:
            env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
            proc = subprocess.run([shutil.which("mpirun"), "--oversubscribe", "-np", "2", cli, "run", job, "--no-progress"],
                                  capture_output=True, text=True, timeout=300, env=env)
            checks.equal(proc.returncode, 0, f"mpirun -np 2 hyperbatch run: {proc.stderr[-2000:]}")
            logs = os.path.join(tmp, "out-big2", "logs")
            rank0 = [f for f in os.listdir(logs) if f.endswith("-rank0.log")]
            checks.true(bool(rank0) and "1 shared by all 2 ranks" in open(os.path.join(logs, rank0[0])).read(),
                        "the large scene is shared by the ranks")
        outs[n] = os.path.join(tmp, f"out-big{n}")
    with h5py.File(os.path.join(outs[1], "scenes", "big", "mnf.h5")) as a, h5py.File(os.path.join(outs[2], "scenes", "big", "mnf.h5")) as b:
        checks.true(np.array_equal(a["components"][()], b["components"][()], equal_nan=True), "shared scene: same MNF components")
    same = open(os.path.join(outs[1], "scenes", "big", "classes.img"), "rb").read() == \
        open(os.path.join(outs[2], "scenes", "big", "classes.img"), "rb").read()
    checks.true(same, "shared scene: same class map bytes as one process")
    entries = manifest(outs[2])
    checks.equal(entries[("big", "knn")]["status"], "done", "shared scene's knn in the manifest")
    checks.equal(entries[("small", "knn")]["status"], "done", "the other scene's knn in the manifest")


def main():
    args = parse_args()
    checks = Checks()
    with workdir() as tmp:
        check_validation(args.cli, tmp, checks)
        check_sam_step(args.cli, args.shared_data, tmp, checks)
        check_corrupt_scene(args.cli, tmp, checks)
        check_skip_and_redo(args.cli, tmp, checks)
        check_submit_scripts(args.cli, tmp, checks)
        check_campaign_moments(args.cli, tmp, checks)
        if shutil.which("mpirun"):
            check_campaign_moments(args.cli, tmp, checks, ranks=2)
            check_campaign_same_bytes(args.cli, tmp, checks)
            check_scenes_taken_once(args.cli, tmp, checks)
            check_shared_scene(args.cli, tmp, checks)
        check_campaign_basis(args.cli, args.shared_data, tmp, checks)
    checks.done("job files")


if __name__ == "__main__":
    main()
