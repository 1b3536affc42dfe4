"""A full disk stops MNF before its transform: one line naming the output, exit 4
(I/O), nothing left behind; on one rank and on two. The disk is a real tmpfs too small
for the components, mounted for the test (root only: skipped, exit 77, elsewhere)."""
import argparse
import os
import subprocess
import sys
import tempfile

SKIP = 77


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cli", required=True)
    p.add_argument("--shared-data", required=True)
    p.add_argument("--mpiexec", default="")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="hbfull-") as d:
        full = os.path.join(d, "full")
        os.mkdir(full)
        mount = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", full], capture_output=True, text=True)
        if mount.returncode != 0:
            print(f"SKIPPED: cannot mount a small tmpfs to fill (needs root): {mount.stderr.strip()}")
            return SKIP
        try:
            return check(args, d, full)
        finally:
            subprocess.run(["umount", full], check=True)


def check(args, d, full):
    scene = os.path.join(d, "s.hdr")
    synth = ["synth", "-o", scene, "--lines", 1000, "--samples", 100, "--bands", 50, "--seed", 1]
    subprocess.run([args.cli, "-q", *map(str, synth)], check=True)  # 20 float components: 8 MB, for 2 MB of disk
    out = os.path.join(full, "out.hdr")
    mnf = [args.cli, "mnf", scene, "-o", out, "--components", "20"]  # the log says which passes ran
    runs = [("one rank", mnf)]
    if args.mpiexec:
        runs.append(("two ranks", [args.mpiexec, "--oversubscribe", "--allow-run-as-root", "-np", "2", *mnf]))
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    for what, cmd in runs:
        proc = subprocess.run(list(map(str, cmd)), capture_output=True, text=True, timeout=120, env=env)
        assert proc.returncode == 4 or (what != "one rank" and proc.returncode != 0), \
            f"{what}: exit {proc.returncode}, expected 4\n{proc.stderr[-2000:]}"
        assert f"{out}: no space left for the output" in proc.stderr, f"{what}: {proc.stderr[-2000:]}"
        assert "transform pass" not in proc.stderr, f"{what}: the transform ran: {proc.stderr[-2000:]}"
        assert os.listdir(full) == [], f"{what}: left behind {os.listdir(full)}"
        print(f"{what}: exit {proc.returncode}:", *[line for line in proc.stderr.splitlines() if "error" in line])
    return 0


if __name__ == "__main__":
    sys.exit(main())
