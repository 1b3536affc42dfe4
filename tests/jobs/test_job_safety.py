"""What a job may not do to its folders, one check per ctest name (--check NAME), each
run by one process or, with --ranks N, under `mpirun -np N`:

  outputs_not_inputs  globs never match the output folder; a listed scene inside it is exit 3
  scene_names         unsafe scene names are exit 3 naming key and line; nothing written outside
  output_lock         a second run on a busy folder exits 4 naming host and pid; the first is
                      unharmed; the lock of a SIGKILLed run is free again
  generate_overflow   a [[generate]] whose byte count overflows 64 bits is exit 3
  generate_disk_full  a [[generate]] too big for the disk is exit 4 (tmpfs; skipped without mount)
  manifest_bytes      two uninterrupted runs give byte-identical manifest.json; a touch redoes nothing
"""
import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

from jobtest import SKIP, Checks, manifest, metrics, skip, workdir, write

SCENE = """
[[generate]]
name = "{name}"
lines = {lines}
samples = 40
bands = 32
classes = 3
seed = {seed}
"""
STEPS = '[mnf]\ncomponents = 3\n[knn]\nk = 3\ntrain_fraction = 0.1\nfeatures = "mnf"\n[quicklooks]\n[report]\n'
MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


class Runner:
    """`hyperbatch run` by one process or under mpirun."""

    def __init__(self, cli, ranks):
        self.cli, self.ranks = cli, ranks
        if ranks > 1 and shutil.which("mpirun") is None:
            skip("mpirun is absent")

    def command(self, job, *extra):
        run = [self.cli, "run", job, "--no-progress", *extra]
        return run if self.ranks == 1 else [shutil.which("mpirun"), "--oversubscribe", "-np", str(self.ranks), *run]

    def run(self, job, *extra, expect=0):
        proc = subprocess.run(self.command(job, *extra), capture_output=True, text=True, env=MPI_ENV, timeout=600)
        if proc.returncode != expect:
            raise AssertionError(f"{self.ranks} rank(s): run {job}: exit {proc.returncode}, expected {expect}\n"
                                 f"stdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-4000:]}")
        return proc

    def start(self, job, *extra):
        # A session of its own: signal_session() reaches mpirun and every rank.
        return subprocess.Popen(self.command(job, *extra), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                env=MPI_ENV, start_new_session=True)


def job_text(output, body):
    return f'[job]\nname = "safety"\noutput = "{output}"\n{body}'


def input_scene(cli, tmp, folder, name):
    """An ENVI scene at FOLDER/NAME.hdr (+ .img) and its truth NAME_truth.hdr, made by a job of its own."""
    prep = write(os.path.join(tmp, f"prep-{name}.toml"), job_text(f"prep-{name}", SCENE.format(name=name, lines=48, seed=9)))
    subprocess.run([cli, "run", prep, "--no-progress"], check=True, capture_output=True)
    os.makedirs(folder, exist_ok=True)
    for stem in (name, name + "_truth"):
        for ext in (".hdr", ".img"):
            shutil.copy(os.path.join(tmp, f"prep-{name}", "generated", stem + ext), os.path.join(folder, stem + ext))
    return os.path.join(folder, name + ".hdr")


def expect_key_error(runner, job, key, line, checks, code=3):
    proc = runner.run(job, expect=code)
    checks.true(f"field '{key}'" in proc.stderr and f"line {line}:" in proc.stderr,
                f"the message names '{key}' and line {line}: {proc.stderr[-600:]!r}")
    return proc


def check_outputs_not_inputs(runner, cli, tmp, checks):
    """The output folder inside the input folder, reached by the job's glob (through a
    symlink, so only file identity tells): reruns never take their own products."""
    input_scene(cli, tmp, os.path.join(tmp, "data", "in", "a"), "a")
    os.symlink(os.path.join(tmp, "data"), os.path.join(tmp, "link"))
    os.remove(os.path.join(tmp, "data", "in", "a", "a_truth.hdr"))  # the glob takes every header
    job = write(os.path.join(tmp, "glob.toml"), job_text("data/out", '[collection]\nglobs = ["link/*/*/*.hdr"]\n' +
                                                          SCENE.format(name="g1", lines=48, seed=1) +
                                                          '[mnf]\ncomponents = 3\n[quicklooks]\n[report]\n'))
    out = os.path.join(tmp, "data", "out")
    for attempt in ("first run", "rerun", "third run"):
        runner.run(job)
        scenes = sorted({scene for scene, _ in manifest(out)})
        checks.equal(scenes, ["a", "g1"], f"{attempt}: the scenes are the input and the generated one only")
    stages = metrics(out)["stages"]
    checks.equal(sum(s["done"] for s in stages.values()), 0, "the rerun found no new scene and redid nothing")

    inside = os.path.join(out, "generated", "g1.hdr")
    listed = write(os.path.join(tmp, "listed.toml"), job_text("data/out", f'\n[collection]\nscenes = [\n  "{inside}",\n]\n'))
    expect_key_error(runner, listed, "collection.scenes", 7, checks)
    table = write(os.path.join(tmp, "table.toml"), job_text("data/out", f'[[collection.scene]]\nname = "x"\npath = "{inside}"\n'))
    expect_key_error(runner, table, "collection.scene.path", 6, checks)
    only_outputs = write(os.path.join(tmp, "only.toml"), job_text("data", '[collection]\nglobs = ["data/out/*/*.hdr"]\n'))
    expect_key_error(runner, only_outputs, "collection.globs", 5, checks)


def tree(root):
    found = set()
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            found.add(os.path.relpath(os.path.join(folder, name), root))
    return found


def check_scene_names(runner, cli, tmp, checks):
    """Names are one path component of a safe alphabet, whether given or derived."""
    work = os.path.join(tmp, "jobs", "deep")
    os.makedirs(work)
    scene = input_scene(cli, tmp, os.path.join(tmp, "scenes"), "a")
    odd = os.path.join(tmp, "scenes", "odd name.hdr")
    shutil.copy(scene, odd)
    shutil.copy(scene.replace(".hdr", ".img"), odd.replace(".hdr", ".img"))
    table = '[[collection.scene]]\npath = "{path}"\nname = "{name}"\n'
    cases = [  # body, key, line (the [job] table takes lines 1-3)
        (table.format(path=scene, name="../../x"), "collection.scene.name", 6),
        (table.format(path=scene, name="../x/y"), "collection.scene.name", 6),
        (table.format(path=scene, name=".hidden"), "collection.scene.name", 6),
        (table.format(path=scene, name="a b"), "collection.scene.name", 6),
        (table.format(path=scene, name="/abs"), "collection.scene.name", 6),
        (SCENE.format(name="../../x", lines=48, seed=1), "generate.name", 6),
        (SCENE.format(name="sub/x", lines=48, seed=1), "generate.name", 6),
        (f'[collection]\nscenes = ["{scene}", "{odd}"]\n', "collection.scenes", 5),
        ('[collection]\nglobs = [\n  "' + os.path.join(tmp, "scenes", "odd*.hdr") + '",\n]\n', "collection.globs", 6),
        (f'[[collection.scene]]\npath = "{odd}"\n', "collection.scene.path", 5),
    ]
    before = tree(tmp)
    for i, (body, key, line) in enumerate(cases):
        job = write(os.path.join(work, f"names{i}.toml"), job_text("out", body))
        expect_key_error(runner, job, key, line, checks)
    after = tree(tmp) - {os.path.relpath(os.path.join(work, f"names{i}.toml"), tmp) for i in range(len(cases))}
    checks.equal(sorted(after - before), [], "nothing written by the rejected jobs")
    good = write(os.path.join(work, "good.toml"), job_text("out", table.format(path=odd, name="odd-name_1.x")))
    runner.run(good)
    checks.true(os.path.isdir(os.path.join(work, "out", "scenes", "odd-name_1.x")), "a safe given name is used")


def lock_holder(out, timeout=60):
    """(host, pid) written in the lock file by the run holding it."""
    path = os.path.join(out, "hyperbatch.lock")
    deadline = time.time() + timeout
    while time.time() < deadline:
        if os.path.exists(path):
            words = open(path).read().split()
            if len(words) == 4 and words[0] == "host" and words[2] == "pid":
                return words[1], int(words[3])
        time.sleep(0.01)
    raise AssertionError(f"no run took {path}")


def signal_session(leader, sig):
    """`sig` to every process of the session `leader` started. mpirun puts each rank in a
    process group of its own, so killpg() on mpirun's group reaches mpirun alone: the
    ranks ran on, and under load finished and freed the lock while a stopped mpirun
    was thought to hold them."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()  # after "pid (comm)": state ppid pgrp session
            if int(fields[3]) == leader:
                os.kill(int(entry), sig)
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile


def check_output_lock(runner, cli, tmp, checks):
    """One run at a time per output folder."""
    body = "".join(SCENE.format(name=f"s{i}", lines=400, seed=i) for i in range(4)) + STEPS
    job = write(os.path.join(tmp, "lock.toml"), job_text("out", body))
    out = os.path.join(tmp, "out")
    first = runner.start(job)
    host, pid = lock_holder(out)
    signal_session(first.pid, signal.SIGSTOP)  # mid-run for certain while the second one tries
    try:
        checks.equal(host, socket.gethostname(), "the lock file records the host")
        if runner.ranks == 1:
            checks.equal(pid, first.pid, "the lock file records the holder's pid")
        started = time.time()
        second = runner.run(job, expect=4)
        checks.true(time.time() - started < 30, "the second run gave up at once")
        checks.true(f"host {host}" in second.stderr and f"pid {pid}" in second.stderr,
                    f"the second run names the holder's host and pid: {second.stderr[-600:]!r}")
        checks.true(first.poll() is None, "the first run was still going while the second was refused")
    finally:
        signal_session(first.pid, signal.SIGCONT)
    _, err = first.communicate(timeout=600)
    checks.equal(first.returncode, 0, f"the first run completed unharmed: {err[-2000:]}")
    entries = manifest(out)
    checks.equal(len(entries), 4 * 4, "every step (generate, mnf, knn, quicklooks) of every scene")
    checks.true(all(e["status"] == "done" for e in entries.values()), "every entry done")
    checks.equal(os.listdir(os.path.join(out, "manifest.d")), [], "the first run's journals were merged, none lost")

    shutil.rmtree(out)
    killed = runner.start(job)
    lock_holder(out)
    signal_session(killed.pid, signal.SIGKILL)
    killed.wait()
    runner.run(job)
    checks.true(all(e["status"] == "done" for e in manifest(out).values()), "a SIGKILLed run's lock is free again")

    # A job array's tasks share the folder with each other, never with a whole run (the
    # array's merge started by hand): it would remove their temporaries and journals.
    shutil.rmtree(out)
    task = runner.start(job, "--shard", "0/2")
    lock_holder(out)
    signal_session(task.pid, signal.SIGSTOP)
    try:
        whole = runner.run(job, expect=4)
        checks.true("another hyperbatch run is using it" in whole.stderr,
                    f"a whole run is refused while a task of the array runs: {whole.stderr[-600:]!r}")
        runner.run(job, "--shard", "1/2")  # the array's other task, beside the first
    finally:
        signal_session(task.pid, signal.SIGCONT)
    _, err = task.communicate(timeout=600)
    checks.equal(task.returncode, 0, f"the stopped task completed unharmed: {err[-2000:]}")
    runner.run(job)  # the merge
    entries = manifest(out)
    checks.equal(len(entries), 4 * 4, "the array's tasks and the merge: every step of every scene")
    checks.true(all(e["status"] == "done" for e in entries.values()), "every entry done")

    shutil.rmtree(out)
    whole = runner.start(job)
    lock_holder(out)
    signal_session(whole.pid, signal.SIGSTOP)
    try:
        task = runner.run(job, "--shard", "0/2", expect=4)
        checks.true("another hyperbatch run is using it" in task.stderr,
                    f"a task of an array is refused while a whole run runs: {task.stderr[-600:]!r}")
    finally:
        signal_session(whole.pid, signal.SIGCONT)
    _, err = whole.communicate(timeout=600)
    checks.equal(whole.returncode, 0, f"the whole run completed unharmed: {err[-2000:]}")


def check_generate_overflow(runner, cli, tmp, checks):
    overflow = ('\n[[generate]]\nname = "huge"\nlines = 2147483648\nsamples = 1048576\nbands = 4096\n')
    job = write(os.path.join(tmp, "overflow.toml"), job_text("out", overflow))
    expect_key_error(runner, job, "generate.lines * samples * bands", 5, checks)
    checks.true(not os.path.exists(os.path.join(tmp, "out")), "nothing written")
    # 4 PiB: fits in 64 bits, not on any disk here.
    petabytes = '[[generate]]\nname = "vast"\nlines = 2147483648\nsamples = 1048576\nbands = 1\n'
    proc = runner.run(write(os.path.join(tmp, "vast.toml"), job_text("out", petabytes)), expect=4)
    checks.true("no space left" in proc.stderr and "needs" in proc.stderr, f"too big for the disk: {proc.stderr[-600:]!r}")


def check_generate_disk_full(runner, cli, tmp, checks):
    small = os.path.join(tmp, "small")
    os.makedirs(small)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", small], capture_output=True, text=True)
    if mounted.returncode != 0:
        skip(f"cannot mount a tmpfs: {mounted.stderr.strip()}")
    try:
        # 128 x 128 x 64 int16 = 2 MiB: more than the 2 MiB tmpfs has free.
        big = '[[generate]]\nname = "big"\nlines = 128\nsamples = 128\nbands = 64\n'
        job = write(os.path.join(tmp, "full.toml"), job_text(os.path.join(small, "out"), big))
        proc = runner.run(job, expect=4)
        folder = os.path.join(small, "out", "generated")
        checks.true(folder in proc.stderr and "no space left" in proc.stderr, f"names the folder: {proc.stderr[-600:]!r}")
        checks.true("needs 2" in proc.stderr and " free" in proc.stderr, f"says needed and free bytes: {proc.stderr!r}")
        checks.true(not os.path.exists(os.path.join(folder, "big.img")), "nothing generated")
        fits = write(os.path.join(tmp, "fits.toml"), job_text(os.path.join(small, "out"), SCENE.format(name="s", lines=48, seed=1)))
        runner.run(fits)
    finally:
        subprocess.run(["umount", small], check=False)


def check_manifest_bytes(runner, cli, tmp, checks):
    scene = input_scene(cli, tmp, os.path.join(tmp, "scenes"), "a")
    body = f'[collection]\nscenes = ["{scene}"]\ntruth = "{{dir}}/{{stem}}_truth.hdr"\n[ingest]\n' + "".join(
        SCENE.format(name=f"s{i}", lines=48, seed=i) for i in range(2)) + STEPS
    job = write(os.path.join(tmp, "bytes.toml"), job_text("out", body))
    out = os.path.join(tmp, "out")
    runner.run(job)
    first = open(os.path.join(out, "manifest.json"), "rb").read()
    checks.true(b"finished_ns" not in first, "no times in manifest.json")
    shutil.rmtree(out)
    time.sleep(1.1)  # other file dates
    runner.run(job)
    checks.true(open(os.path.join(out, "manifest.json"), "rb").read() == first, "two runs: byte-identical manifest.json")
    os.utime(scene, (time.time() + 100, time.time() + 100))  # a touch: same content, new date
    runner.run(job)
    checks.true(open(os.path.join(out, "manifest.json"), "rb").read() == first, "a rerun after a touch: same bytes")
    stages = metrics(out)["stages"]
    checks.equal(sum(s["done"] for s in stages.values()), 0, "a touched scene is not redone (contents, not dates)")


CHECKS = {
    "outputs_not_inputs": check_outputs_not_inputs,
    "scene_names": check_scene_names,
    "output_lock": check_output_lock,
    "generate_overflow": check_generate_overflow,
    "generate_disk_full": check_generate_disk_full,
    "manifest_bytes": check_manifest_bytes,
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--shared-data", required=True)
    parser.add_argument("--check", required=True, choices=sorted(CHECKS))
    parser.add_argument("--ranks", type=int, default=1)
    args = parser.parse_args()
    checks = Checks()
    runner = Runner(args.cli, args.ranks)
    with workdir() as tmp:
        os.chdir(tmp)
        CHECKS[args.check](runner, args.cli, tmp, checks)
    checks.done(f"{args.check} ({args.ranks} rank{'s' if args.ranks > 1 else ''})")


if __name__ == "__main__":
    sys.exit(main())
