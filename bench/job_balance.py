#!/usr/bin/python3
"""How `hyperbatch run` shares its scenes between ranks, timed whole, for each binary
given (this build and a baseline, in the same call):

  resumed: a job of S equal generated scenes whose every other scene (the ones a fixed
           deal by size gives rank 0) is already done, rerun on R ranks;
  fresh:   the same job from nothing on R ranks.

    bench/job_balance.py --binary this=build/ci/src/hyperbatch --binary base=OLD \\
        [--ranks 2] [--scenes 8] [--rounds 3] [--lines 1024 --samples 256 --bands 64]

Prints one aligned row per binary and case: the wall seconds of each round, their
median, the scenes each rank ran (metrics.json), and the ideal (the fresh run's
median scaled to the half of the scenes left).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

SCENE = """
[[generate]]
name = "s{index}"
lines = {lines}
samples = {samples}
bands = {bands}
classes = 4
seed = {seed}
"""


def job_text(out, indices, a):
    scenes = "".join(SCENE.format(index=i, lines=a.lines, samples=a.samples, bands=a.bands, seed=100 + i)
                     for i in indices)
    return f'[job]\nname = "balance"\noutput = "{out}"\n{scenes}\n[mnf]\ncomponents = 5\n'


def run(binary, job, ranks):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    command = [binary, "run", job, "--no-progress"]
    if ranks > 1:
        command = [shutil.which("mpirun"), "--oversubscribe", "-np", str(ranks)] + command
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=env)
    return time.perf_counter() - start


def ran_per_rank(out):
    with open(os.path.join(out, "metrics.json")) as f:
        per_rank = json.load(f)["per_rank"]
    return [r["stages"].get("mnf", {}).get("done", 0) for r in sorted(per_rank, key=lambda r: r["rank"])]


def one_case(binary, case, a, tmp):
    seconds, counts = [], None
    for round_ in range(a.rounds):
        out = os.path.join(tmp, f"out-{case}-{round_}")
        job = os.path.join(tmp, f"{case}-{round_}.toml")
        if case == "resumed":  # the scenes a fixed deal gives rank 0, done beforehand
            with open(job, "w") as f:
                f.write(job_text(out, range(0, a.scenes, 2), a))
            run(binary, job, 1)
        with open(job, "w") as f:
            f.write(job_text(out, range(a.scenes), a))
        seconds.append(run(binary, job, a.ranks))
        counts = ran_per_rank(out)
        shutil.rmtree(out)
    return seconds, counts


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", action="append", required=True, help="NAME=PATH")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--scenes", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--lines", type=int, default=1024)
    parser.add_argument("--samples", type=int, default=256)
    parser.add_argument("--bands", type=int, default=64)
    a = parser.parse_args()
    print(f"{a.scenes} scenes of {a.lines} x {a.samples} x {a.bands} int16, steps generate + mnf, {a.ranks} ranks")
    print(f"{'binary':<8} {'case':<8} {'rounds (s)':<24} {'median':>7} {'ideal':>7}  scenes run per rank")
    with tempfile.TemporaryDirectory() as tmp:
        for name, binary in (b.split("=", 1) for b in a.binary):
            fresh, fresh_counts = one_case(binary, "fresh", a, tmp)
            resumed, resumed_counts = one_case(binary, "resumed", a, tmp)
            for case, seconds, counts, ideal in (("fresh", fresh, fresh_counts, statistics.median(fresh)),
                                                 ("resumed", resumed, resumed_counts, statistics.median(fresh) / 2)):
                rounds = " ".join(f"{s:.2f}" for s in seconds)
                print(f"{name:<8} {case:<8} {rounds:<24} {statistics.median(seconds):>7.2f} {ideal:>7.2f}  {counts}")


if __name__ == "__main__":
    main()
