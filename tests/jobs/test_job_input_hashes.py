"""Input hashes are remembered across runs (OUTPUT/input-hashes/): a rerun does not read
an unchanged scene again (-v says "unchanged since hashed: not read again"), a touched
scene is read again but redoes nothing (its content is the same), and a scene whose
content changed with its size kept and its modification time set back is still
detected (its status-change time moved) and its steps are redone. One process (which
never starts MPI), or with --ranks N under `mpirun -np N`."""
import argparse
import os
import shutil
import subprocess
import time

from jobtest import Checks, manifest, metrics, workdir, write

JOB = """
[job]
name = "hashes"
output = "out"

[[collection.scene]]
path = "{a}"

[[collection.scene]]
path = "{b}"

[ingest]
[mnf]
components = 3
"""
READ = "hashed: reading"
NOT_READ = "unchanged since hashed: not read again"


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--cli", required=True)
    p.add_argument("--shared-data", default="")
    p.add_argument("--ranks", type=int, default=1)
    return p.parse_args()


def lines_about(log, path, what):
    return [line for line in log.splitlines() if f"input {path} " in line and what in line]


class Runner:
    def __init__(self, cli, ranks):
        self.cli, self.ranks = cli, ranks

    def run(self, job):
        command = [self.cli, "-v", "run", job, "--no-progress"]
        if self.ranks > 1:
            command = [shutil.which("mpirun"), "--oversubscribe", "-np", str(self.ranks), *command]
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
        assert proc.returncode == 0, f"run {job}: exit {proc.returncode}\n{proc.stderr[-4000:]}"
        return proc.stderr


def done_steps(out):
    return sum(s["done"] for s in metrics(out)["stages"].values())


def main():
    args = parse()
    checks = Checks()
    runner = Runner(args.cli, args.ranks)
    with workdir() as tmp:
        data = os.path.join(tmp, "data")
        os.makedirs(data)
        for name, seed in (("a", 1), ("b", 2)):
            subprocess.run([args.cli, "-q", "synth", "-o", os.path.join(data, name + ".hdr"), "--lines", "48",
                            "--samples", "40", "--bands", "12", "--classes", "3", "--seed", str(seed)], check=True)
        a_img, b_img = os.path.join(data, "a.img"), os.path.join(data, "b.img")
        job = write(os.path.join(tmp, "job.toml"), JOB.format(a=os.path.join(data, "a.hdr"), b=os.path.join(data, "b.hdr")))
        out = os.path.join(tmp, "out")
        time.sleep(2.2)  # hashes are kept across runs for files unchanged for 2 s (coarse file-system clocks)

        log = runner.run(job)
        checks.true(lines_about(log, a_img, READ) and lines_about(log, b_img, READ), "the first run reads both scenes")
        if args.ranks == 1:
            checks.true("MPI not started" in log and "MPI started" not in log.replace("MPI not started", ""),
                        "one process runs the job without starting MPI")
        checks.true(len(os.listdir(os.path.join(out, "input-hashes"))) >= 4, "and keeps their hashes (.hdr and .img)")
        first = manifest(out)

        log = runner.run(job)
        checks.equal(lines_about(log, a_img, READ) + lines_about(log, b_img, READ), [], "a rerun reads no scene again")
        checks.true(lines_about(log, a_img, NOT_READ) and lines_about(log, b_img, NOT_READ),
                    "it says the scenes were not read again")
        checks.equal(done_steps(out), 0, "and redoes nothing")

        now = time.time()
        os.utime(a_img, (now, now))
        log = runner.run(job)
        checks.true(lines_about(log, a_img, READ), "a touched scene is read again")
        checks.equal(lines_about(log, b_img, READ), [], "the other is not")
        checks.equal(done_steps(out), 0, "the same content redoes nothing")

        time.sleep(2.2)
        runner.run(job)  # a.img's hash is now old enough to be kept
        before = os.stat(a_img)
        with open(a_img, "r+b") as f:  # same size, other content, modification time set back
            f.seek(before.st_size // 2)
            byte = f.read(1)
            f.seek(before.st_size // 2)
            f.write(bytes([byte[0] ^ 0xFF]))
        os.utime(a_img, ns=(before.st_atime_ns, before.st_mtime_ns))
        after = os.stat(a_img)
        checks.true(after.st_size == before.st_size and after.st_mtime_ns == before.st_mtime_ns,
                    "the changed scene keeps its size and modification time")
        log = runner.run(job)
        checks.true(lines_about(log, a_img, READ), "the changed scene is read again")
        checks.equal(done_steps(out), 2, "its ingest and mnf are redone")
        changed = manifest(out)
        checks.true(changed[("a", "ingest")]["checksum"] != first[("a", "ingest")]["checksum"],
                    "with a new checksum")
        checks.equal(changed[("b", "ingest")]["checksum"], first[("b", "ingest")]["checksum"],
                     "the other scene's checksum stays")
    checks.done(f"input hashes ({args.ranks} rank{'s' if args.ranks > 1 else ''})")


if __name__ == "__main__":
    main()
