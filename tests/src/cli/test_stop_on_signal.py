"""SIGTERM and SIGINT stop a command within a second: exit 128 + the signal, one line
saying so, no temporary left, the inputs untouched; under mpirun every rank stops, the
first one says so, and no temporary is left. Temporaries that a SIGKILLed process leaves behind are removed by
the next command that writes the same output."""
import glob
import hashlib
import os
import signal
import subprocess
import sys
import time

import hbtest

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def temporaries(folder):
    return sorted(os.path.basename(p) for p in glob.glob(os.path.join(folder, ".*.tmp.*")))


def digest(paths):
    out = {}
    for path in paths:
        with open(path, "rb") as f:
            out[path] = (hashlib.sha256(f.read()).hexdigest(), os.stat(path).st_mtime_ns)
    return out


def start_and_wait_for_temporary(command, folder):
    """Starts `command` and returns it once it has a temporary in `folder` (still running)."""
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV)
    deadline = time.monotonic() + 60
    while not temporaries(folder):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"{' '.join(command)} made no temporary before it ended: {proc.stderr.read()}")
        time.sleep(0.01)
    return proc


def stop_with(checks, command, folder, sig, inputs, ranks):
    before = digest(inputs)
    proc = start_and_wait_for_temporary(command, folder)
    sent = time.monotonic()
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    seconds = time.monotonic() - sent
    what = f"{signal.Signals(sig).name} on {ranks} rank{'s' if ranks > 1 else ''}"
    stops = [line for line in err.splitlines() if line.startswith("hyperbatch: stopped by")]
    checks.true(seconds < 1.5 if ranks == 1 else seconds < 5, f"{what}: stopped after {seconds:.2f} s")
    if ranks == 1:
        checks.equal(proc.returncode, 128 + sig, f"{what}: exit code")
        checks.equal(len(stops), 1, f"{what}: one line saying so\n{err}")
        checks.true(f"SIG{signal.Signals(sig).name[3:]}" in stops[0], f"{what}: names the signal: {stops}")
    else:
        checks.true(proc.returncode != 0, f"{what}: mpirun's exit code")
        checks.equal(len(stops), 1, f"{what}: one line, from the first rank\n{err}")
    checks.equal(temporaries(folder), [], f"{what}: temporaries left")
    checks.equal(digest(inputs), before, f"{what}: inputs changed")
    print(f"{what}: stopped in {seconds:.2f} s, exit {proc.returncode}")


def main():
    args = hbtest.parse_args()
    checks = hbtest.Checks()
    with hbtest.workdir() as d:
        scene = os.path.join(d, "s.hdr")
        # Large enough that the transform runs for seconds on a CI core.
        hbtest.run(args.cli, "synth", "-o", scene, "--lines", 3000, "--samples", 400, "--bands", 100, "--seed", 5)
        inputs = [scene, os.path.join(d, "s.img")]
        for ext in (".h5", ".hdr"):
            out = os.path.join(d, "out" + ext)
            mnf = [args.cli, "mnf", scene, "-o", out, "--components", 30]
            for sig in (signal.SIGTERM, signal.SIGINT):
                stop_with(checks, list(map(str, mnf)), d, sig, inputs, 1)
            mpirun = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", "3", *map(str, mnf)]
            stop_with(checks, mpirun, d, signal.SIGTERM, inputs, 3)
            # A SIGKILLed process cannot clean up; the next command writing the output does.
            proc = start_and_wait_for_temporary(list(map(str, mnf)), d)
            proc.kill()
            proc.wait()
            left = temporaries(d)
            checks.true(left != [], f"SIGKILL {ext}: the killed process left its temporary")
            hbtest.run(args.cli, "mnf", scene, "-o", out, "--components", 2)
            checks.equal(temporaries(d), [], f"SIGKILL {ext}: the next command removed {left}")
            os.remove(out)
    checks.done("stop on signal")


if __name__ == "__main__":
    sys.exit(main())
