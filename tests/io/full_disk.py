"""A full disk, for every command that writes and every output format, on one rank and
on three: exit 4, an error line saying "no space left" and naming the output, no crash,
nothing left on the full disk and every input unchanged. MNF with --components claims
its output's space while the statistics pass runs, so it stops before the transform.
The disk is a real tmpfs too small for the outputs, mounted for the test (root only:
skipped, exit 77, elsewhere)."""
import argparse
import hashlib
import os
import subprocess
import sys
import tempfile

SKIP = 77
RANKS = (1, 3)


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
            return check_every_output(args, d, full)
        finally:
            subprocess.run(["umount", full], check=True)


def commands(d, full, ext):
    """(name, arguments, output) of each command that writes, its output on the full disk."""
    scene, truth, library = (os.path.join(d, n) for n in ("s.hdr", "s_truth.hdr", "s_library.hdr"))
    out = os.path.join(full, "out" + ext)
    return [
        ("mnf --components", ["mnf", scene, "-o", out, "--components", 20], out),
        ("mnf --variance", ["mnf", scene, "-o", out, "--variance", 0.9999], out),
        ("ingest/export", ["ingest" if ext == ".h5" else "export", scene if ext == ".h5" else
                           os.path.join(d, "s.h5"), "-o", out], out),
        ("knn --neighbors", ["knn", scene, "--truth", truth, "--train-fraction", 0.05, "-k", 3, "-o", out,
                             "--neighbors"], out),
        ("sam --rules", ["sam", scene, "--library", library, "-o", out, "--rules", os.path.join(full, "rules" + ext)],
         out),
        ("synth", ["synth", "-o", out, "--lines", 1000, "--samples", 100, "--bands", 50, "--seed", 3], out),
    ]


def digest(folder):
    """The bytes and modification times of every file in `folder`."""
    state = {}
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            with open(path, "rb") as f:
                state[name] = (hashlib.sha256(f.read()).hexdigest(), os.stat(path).st_mtime_ns)
    return state


def check_every_output(args, d, full):
    cli = args.cli
    synth = ["synth", "-o", os.path.join(d, "s.hdr"), "--lines", 1000, "--samples", 100, "--bands", 50, "--seed", 1]
    subprocess.run([cli, "-q", *map(str, synth)], check=True)  # 20 float components: 8 MB, for 2 MB of disk
    subprocess.run([cli, "-q", "ingest", os.path.join(d, "s.hdr"), "-o", os.path.join(d, "s.h5")], check=True)
    inputs = digest(d)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    checked = 0
    for ranks in RANKS:
        if ranks > 1 and not args.mpiexec:
            continue
        launch = [] if ranks == 1 else [args.mpiexec, "--oversubscribe", "--allow-run-as-root", "-np", str(ranks)]
        for ext in (".hdr", ".h5"):
            for name, arguments, out in commands(d, full, ext):
                what = f"{name} to {ext} on {ranks} rank{'s' if ranks > 1 else ''}"
                proc = subprocess.run([*launch, cli, *map(str, arguments)], capture_output=True, text=True,
                                      timeout=180, env=env)
                errors = [line for line in proc.stderr.splitlines() if "hyperbatch: error" in line]
                assert proc.returncode == 4 or (ranks > 1 and proc.returncode not in (0, 139)), \
                    f"{what}: exit {proc.returncode}, expected 4\n{proc.stderr[-3000:]}"
                assert "Segmentation fault" not in proc.stderr, f"{what}: crashed\n{proc.stderr[-3000:]}"
                assert errors and all("no space left" in line for line in errors), f"{what}: {proc.stderr[-3000:]}"
                # At most one line a rank: mpirun stops the ranks still running once one has exited.
                assert 1 <= len(errors) <= ranks, f"{what}: one error line a rank\n{proc.stderr[-3000:]}"
                assert any(full + os.sep in line and ".tmp." not in line for line in errors), \
                    f"{what}: the error names no output\n{proc.stderr[-3000:]}"
                if name == "mnf --components":
                    assert "transform pass" not in proc.stderr, f"{what}: the transform ran: {proc.stderr[-2000:]}"
                assert os.listdir(full) == [], f"{what}: left behind {os.listdir(full)}"
                assert digest(d) == inputs, f"{what}: an input changed"
                print(f"{what}: exit {proc.returncode}: {errors[0]}")
                checked += 1
    print(f"{checked} passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
