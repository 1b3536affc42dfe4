"""Under a real Slurm: the test starts munged, slurmctld and slurmd on localhost
(slurm/local-cluster), submits a 2-task job with `hyperbatch submit` over the real
Jasper Ridge scene (as ENVI and as an HDF5 cube ingested here) and a synthetic scene,
waits for it, checks outputs, manifest, metrics, quicklooks and report; then kills a
rerun of the job with `scancel --signal=KILL` mid-run, resubmits it and compares the
outputs byte for byte; checks that ranks mpirun starts inside a batch script get local
ranks of their own; and stops the daemons it started. Skips with a message when Slurm or the real data are absent."""
import argparse
import glob
import os
import shutil
import subprocess
import tempfile
import time

from jobtest import SKIP, Checks, data_files, manifest, metrics, png_size, skip, write

JOB = """
[job]
name = "slurm-test"
output = "out"

[[collection.scene]]
path = "{jasper}"
truth = "{truth}"

[[collection.scene]]
path = "{jasper_h5}"
name = "jasper_ridge_h5"
truth = "{truth}"

[[generate]]
name = "synthetic"
lines = 96
samples = 120
bands = 198
classes = 4
seed = 5

[mnf]
components = 6

[knn]
k = 5
train_per_class = 50
seed = 4
features = "mnf"

[quicklooks]
[report]
"""


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--cli", required=True)
    p.add_argument("--shared-data", required=True)
    p.add_argument("--local-cluster", required=True)
    return p.parse_args()


def wait_for(job_id, env, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        out = subprocess.run(["scontrol", "show", "job", job_id], capture_output=True, text=True, env=env).stdout
        state = next((w.split("=", 1)[1] for w in out.split() if w.startswith("JobState=")), "UNKNOWN")
        if state in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"):
            return state
        time.sleep(0.5)
    return "WAITED_TOO_LONG"


def submit(cli, job, env):
    sub = subprocess.run([cli, "submit", job, "--nodes", "1", "--gpus-per-node", "0", "--tasks-per-node", "2",
                          "--time", "00:05:00"], capture_output=True, text=True, env=env)
    return sub, sub.stdout.strip()


def journal_lines(out):
    return sum(open(p).read().count("\n") for p in glob.glob(os.path.join(out, "manifest.d", "*.jsonl")))


def check_kill_and_resume(cli, tmp, env, checks):
    """scancel --signal=KILL --full mid-run, resubmit: the outputs equal the first run's."""
    out = os.path.join(tmp, "out")
    reference = data_files(out)
    shutil.move(out, os.path.join(tmp, "reference"))
    job = os.path.join(tmp, "job.toml")
    _, job_id = submit(cli, job, env)
    deadline = time.time() + 120
    while journal_lines(out) < 3 and time.time() < deadline:
        time.sleep(0.02)
    subprocess.run(["scancel", "--signal=KILL", "--full", job_id], check=True, env=env)
    state = wait_for(job_id, env, 60)
    killed_at = journal_lines(out)
    checks.true(state in ("FAILED", "CANCELLED"), f"the killed job ended {state}")
    checks.true(3 <= killed_at < 10, f"killed mid-run ({killed_at} of 10 steps journaled)")
    checks.true(not os.path.exists(os.path.join(out, "report.md")), "no report from the killed job")
    _, job_id = submit(cli, job, env)
    checks.equal(wait_for(job_id, env, 240), "COMPLETED", "the resubmitted job")
    stages = metrics(out)["stages"]
    checks.equal(sum(s["skipped"] for s in stages.values()), killed_at, "steps done before the kill were skipped")
    resumed = data_files(out)
    checks.equal(sorted(resumed), sorted(reference), "the same files as the uninterrupted job")
    checks.true(all(resumed[k] == reference[k] for k in reference), "byte-identical to the uninterrupted job")


def check_array(cli, tmp, env, checks):
    """A job array of 2 shards, then the dependent task that merges and reports."""
    job = write(os.path.join(tmp, "array.toml"), '[job]\nname = "array"\noutput = "out-array"\n' + "".join(
        f'[[generate]]\nname = "a{i}"\nlines = {40 + 8 * i}\nsamples = 48\nbands = 24\nclasses = 3\nseed = {i}\n'
        for i in range(3)) + '[mnf]\ncomponents = 3\n[report]\n')
    sub = subprocess.run([cli, "submit", job, "--array", "2", "--tasks-per-node", "1"], capture_output=True, text=True,
                         env=env)
    ids = sub.stdout.split()
    checks.equal(len(ids), 2, f"submit --array prints the array's and the report task's ids: {sub.stdout!r} {sub.stderr}")
    checks.equal(wait_for(ids[1], env, 120), "COMPLETED", "the report task after the array")
    out = os.path.join(tmp, "out-array")
    shards = [metrics(out, f"metrics-shard{i}.json") for i in range(2)]
    checks.equal(sorted(m["shard"] for m in shards), [0, 1], "one metrics file per shard")
    # Dealt by size: a2 (largest) to shard 0, a1 to shard 1, a0 to shard 1 (fewer bytes).
    checks.equal([m["stages"]["mnf"]["done"] for m in shards], [1, 2], "scenes per shard follow the size rule")
    checks.true(all(e["status"] == "done" for e in manifest(out).values()), "every scene done")
    checks.true("3 scenes: 3 complete, 0 failed" in open(os.path.join(out, "report.md")).read(), "the merged report")


def check_run(cli, shared, tmp, env, checks):
    jasper = os.path.join(shared, "jasper_ridge", "jasper_ridge.hdr")
    truth = os.path.join(shared, "jasper_ridge", "jasper_ridge_labels_gt.hdr")
    jasper_h5 = os.path.join(tmp, "jasper_ridge.h5")
    subprocess.run([cli, "-q", "ingest", jasper, "-o", jasper_h5], check=True)
    job = write(os.path.join(tmp, "job.toml"), JOB.format(jasper=jasper, truth=truth, jasper_h5=jasper_h5))
    sub, job_id = submit(cli, job, env)
    checks.equal(sub.returncode, 0, f"hyperbatch submit: {sub.stderr}")
    checks.true(job_id.isdigit(), f"submit prints the job id: {sub.stdout!r}")
    out = os.path.join(tmp, "out")
    script = open(os.path.join(out, "hyperbatch.sbatch")).read()
    checks.true("srun --mpi=pmix" in script and "--ntasks-per-node=2" in script, "the script written next to the outputs")
    state = wait_for(job_id, env, 240)
    log = os.path.join(out, "logs", f"slurm-{job_id}.out")
    log_text = open(log).read() if os.path.exists(log) else "(no log)"
    checks.equal(state, "COMPLETED", f"Slurm job state; log tail:\n{log_text[-3000:]}")

    m = manifest(out)
    scenes = ("jasper_ridge", "jasper_ridge_h5", "synthetic")
    for scene in scenes:
        for step in ("mnf", "knn", "quicklooks"):
            checks.equal(m[(scene, step)]["status"], "done", f"{scene} {step}")
        checks.equal(png_size(os.path.join(out, "scenes", scene, "mnf_rgb.png")),
                     (120, 96) if scene == "synthetic" else (100, 100), f"{scene} MNF quicklook size")
        w, h = png_size(os.path.join(out, "scenes", scene, "classes.png"))
        legend = m[(scene, "quicklooks")]["summary"]["legend_width"]
        checks.equal(w, (120 if scene == "synthetic" else 100) + legend, f"{scene} class map + legend width")
        checks.true(h >= (96 if scene == "synthetic" else 100), f"{scene} class map height")
    # The real scene as ENVI and as HDF5 is one scene: the same classes, pixel for pixel.
    same = [open(os.path.join(out, "scenes", s, "classes.img"), "rb").read() for s in scenes[:2]]
    checks.true(same[0] == same[1], "ENVI and HDF5 copies of Jasper Ridge give identical class maps")
    accuracy = m[("jasper_ridge", "knn")]["summary"]["accuracy"]["overall_accuracy"]
    checks.true(0.7 < accuracy <= 1.0, f"Jasper Ridge accuracy {accuracy} is plausible")

    mx = metrics(out)
    checks.equal(mx["ranks"], 2, "metrics: ranks")
    checks.equal(sorted(r["rank"] for r in mx["per_rank"]), [0, 1], "metrics: one entry per rank")
    checks.true(all(r["stages"]["mnf"]["done"] >= 1 for r in mx["per_rank"]), "both ranks processed scenes")
    checks.equal(sum(r["stages"]["mnf"]["done"] for r in mx["per_rank"]), 3, "three scenes in all")
    checks.true(all(mx["stages"][s]["pixels"] > 0 and mx["stages"][s]["seconds"] > 0 for s in ("mnf", "knn")),
                "stage totals have pixels and seconds")
    checks.true(mx["versions"]["hyperbatch"] and mx["hosts"], "versions and hosts recorded")
    report = open(os.path.join(out, "report.md")).read()
    for scene in scenes:
        checks.true(f"![MNF components 1-3](scenes/{scene}/mnf_rgb.png)" in report, f"report links {scene}'s quicklook")
    checks.true("| id | class | truth pixels |" in report and "3 complete, 0 failed" in report, "report tables")


def check_mpirun_in_batch(cli, tmp, env, checks):
    """mpirun inside a batch script: every rank inherits the batch step's SLURM_LOCALID=0,
    and still each gets a node-local rank of its own (so a GPU of its own)."""
    scene = os.path.join(tmp, "small.hdr")
    subprocess.run([cli, "-q", "synth", "-o", scene, "--lines", "64", "--samples", "32", "--bands", "16",
                    "--classes", "2", "--seed", "1"], check=True)
    mpirun = shutil.which("mpirun")
    script = write(os.path.join(tmp, "mpirun.sbatch"), f"""#!/bin/bash
{mpirun} --allow-run-as-root --oversubscribe -np 2 {cli} mnf {scene} -o {tmp}/small_mnf.h5 --components 3 --backend cpu
""")
    log = os.path.join(tmp, "mpirun.out")
    sub = subprocess.run(["sbatch", "--parsable", "-n", "2", "-o", log, script], capture_output=True, text=True, env=env)
    checks.equal(sub.returncode, 0, f"sbatch: {sub.stderr}")
    state = wait_for(sub.stdout.strip().split(";")[0], env, 120)
    text = open(log).read() if os.path.exists(log) else "(no log)"
    checks.equal(state, "COMPLETED", f"mpirun job state; log tail:\n{text[-2000:]}")
    for rank in (0, 1):
        checks.true(f"rank {rank} on " in text and f"(local rank {rank} of 2)" in text,
                    f"mpirun in a batch script: rank {rank} has local rank {rank}; log:\n{text[-2000:]}")


def main():
    args = parse_args()
    if not os.path.isdir(args.shared_data):
        skip(f"real data folder {args.shared_data} is absent")
    missing = [t for t in ("munged", "slurmctld", "slurmd", "sbatch", "scontrol") if shutil.which(t) is None]
    if missing:
        skip(f"Slurm is not installed ({', '.join(missing)} missing): HB_WITH_SLURM=1 scripts/install-deps")
    if os.geteuid() != 0:
        skip("starting slurmd needs root")
    checks = Checks()
    tmp = tempfile.mkdtemp(prefix="hbslurm-")
    cluster = os.path.join(tmp, "cluster")
    env = dict(os.environ, SLURM_CONF=os.path.join(cluster, "slurm.conf"))
    try:
        started = subprocess.run([args.local_cluster, "start", cluster], capture_output=True, text=True)
        if started.returncode != 0:
            raise AssertionError(f"local Slurm did not start: {started.stdout}{started.stderr}")
        check_run(args.cli, args.shared_data, tmp, env, checks)
        check_kill_and_resume(args.cli, tmp, env, checks)
        check_array(args.cli, tmp, env, checks)
        check_mpirun_in_batch(args.cli, tmp, env, checks)
    finally:
        subprocess.run([args.local_cluster, "stop", cluster])
        shutil.rmtree(tmp, ignore_errors=True)
    checks.done("jobs under Slurm")


if __name__ == "__main__":
    main()
