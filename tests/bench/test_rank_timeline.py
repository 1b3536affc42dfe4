"""bench/rank_timeline.py on real `hyperbatch -v run` logs (the archive part reads each
run's with it): over four generated scenes with mnf and knn steps, one process and
`mpirun -np 2`, it lists every rank, their scenes add up to the job's, each rank's steps
fit inside the ranks' span, and L is the launcher's seconds outside that span."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

import hbtest

parser = argparse.ArgumentParser()
parser.add_argument("--cli", required=True)
parser.add_argument("--shared-data", required=True)
parser.add_argument("--tool", required=True)
parser.add_argument("--mpiexec", default="")
args = parser.parse_args()

SCENES = 4
JOB = '[job]\nname = "t"\noutput = "{out}"\nbackend = "cpu"\n' + "".join(
    f'[[generate]]\nname = "s{i}"\nlines = 48\nsamples = 40\nbands = 32\nclasses = 3\nseed = {i + 1}\n'
    for i in range(SCENES)) + '[mnf]\ncomponents = 3\n[knn]\nk = 3\ntrain_per_class = 20\nfeatures = "mnf"\n'
SPAN = re.compile(r"the ranks' span ([0-9.]+) s, L = (-?[0-9.]+) s of ([0-9.]+) s$")
ROW = re.compile(r"^\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)"
                 r"\s+([0-9.]+)\s+([0-9.]+)$")


def timed_run(tmp, name, launcher):
    job = os.path.join(tmp, name + ".toml")
    with open(job, "w") as f:
        f.write(JOB.format(out=os.path.join(tmp, "out-" + name)))
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    start = time.monotonic()
    proc = subprocess.run([*launcher, args.cli, "-v", "run", job, "--no-progress"], capture_output=True, text=True,
                          env=env, timeout=300)
    wall = time.monotonic() - start
    if proc.returncode != 0:
        raise AssertionError(f"{name}: exit {proc.returncode}\n{proc.stderr[-3000:]}")
    log = os.path.join(tmp, name + ".log")
    with open(log, "w") as f:
        f.write(proc.stderr)
    return log, wall


def check(checks, log, wall, ranks):
    out = subprocess.run([sys.executable, args.tool, log, "--wall", f"{wall:.3f}"], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    span = SPAN.search(out[0])
    checks.true(span is not None, f"{ranks} rank(s): the first line gives the span and L: {out[0]!r}")
    seconds, outside, total = map(float, span.groups())
    checks.true(0 < seconds <= total and abs(seconds + outside - total) < 0.02, f"span {seconds} + L {outside} = {total}")
    rows = [ROW.match(line) for line in out[2:]]
    checks.true(all(rows), f"every row parses: {out[2:]}")
    checks.equal([int(r[1]) for r in rows], list(range(ranks)), "one row a rank, in order")
    checks.equal(sum(int(r[4]) for r in rows), SCENES, "the ranks' scenes add up to the job's")
    for r in rows:
        steps = float(r[5]) + float(r[7]) + float(r[9])
        checks.true(steps <= seconds + 0.01, f"rank {r[1]}: its steps ({steps:.2f} s) fit in the span ({seconds:.2f} s)")
        if int(r[4]) > 0:
            checks.true(float(r[5]) > 0 and float(r[7]) > 0, f"rank {r[1]}: its scenes ran mnf and knn")


checks = hbtest.Checks()
with hbtest.workdir() as tmp:
    check(checks, *timed_run(tmp, "one", []), 1)
    mpiexec = args.mpiexec or shutil.which("mpirun")
    if mpiexec:
        check(checks, *timed_run(tmp, "two", [mpiexec, "--oversubscribe", "-np", "2"]), 2)
checks.done("rank_timeline")
