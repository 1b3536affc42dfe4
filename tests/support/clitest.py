"""Helpers for the CLI contract tests: run hyperbatch as a user would (logging on),
check the one-line error contract, and snapshot a folder's files."""
import argparse
import os
import subprocess

ERROR_PREFIX = "hyperbatch: error: "


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--shared-data", required=True)
    parser.add_argument("--mpiexec", default="")
    parser.add_argument("--part", default="all")
    return parser.parse_args()


def run(cli, args, cwd, mpiexec="", ranks=1, timeout=120):
    """Returns (exit code, stdout, stderr); no --quiet, so stray log lines would show."""
    command = [cli, *map(str, args)]
    env = dict(os.environ)
    if ranks > 1:
        # -q: mpirun keeps its own notices about a non-zero exit to itself
        command = [mpiexec, "-q", "--oversubscribe", "-np", str(ranks), *command]
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    return proc.returncode, proc.stdout, proc.stderr


def checked_runner(args, checks):
    """cli(folder, *argv, ranks=1, expect=0) -> (stdout, stderr): a quiet run whose exit
    code `checks` compares with `expect`."""
    def cli(folder, *argv, ranks=1, expect=0):
        code, out, err = run(args.cli, ["--quiet", *argv], folder, args.mpiexec, ranks)
        checks.equal(code, expect, f"hyperbatch {' '.join(map(str, argv))} (ranks {ranks}): {err}")
        return out, err
    return cli


def backend_or_skip(args, skip):
    """--part cuda: the GPU backend (the ctest label cuda), skipped via `skip` when no
    GPU is visible; otherwise the CPU backend."""
    import shutil
    if args.part != "cuda":
        return "cpu"
    if shutil.which("nvidia-smi") is None or subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode != 0:
        skip("no GPU visible")
    return "cuda"


def most_ranks(backend, wanted):
    """The ranks a run of `backend` may start here, at most `wanted`: the CUDA backend
    takes one GPU a rank, and more ranks than GPUs is a usage error."""
    if backend != "cuda":
        return wanted
    listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
    return max(1, min(wanted, sum(line.startswith("GPU ") for line in listed.splitlines())))


def one_error_line(stderr, what):
    """The single error line of a failed run; fails on zero or several lines."""
    lines = stderr.splitlines()
    assert len(lines) == 1, f"{what}: expected one stderr line, got {len(lines)}:\n{stderr}"
    assert lines[0].startswith(ERROR_PREFIX), f"{what}: not an error line: {lines[0]}"
    return lines[0]


def rank_error_lines(stderr):
    """hyperbatch's error lines of a run under a launcher, one a rank. What the MPI
    runtime prints of its own (libevent's "[warn] Epoll MOD(1) ... failed" as ranks
    stop) is not hyperbatch's, and is left out."""
    return [line for line in stderr.splitlines() if line.startswith("hyperbatch: error")]


def snapshot(folder):
    """Every file under `folder` (links not followed): its bytes and modification time."""
    state = {}
    for root, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(root, name)
            st = os.lstat(path)
            if os.path.islink(path):
                state[path] = ("link", os.readlink(path))
            else:
                with open(path, "rb") as f:
                    state[path] = (f.read(), st.st_mtime_ns)
    return state


def synth_scene(cli, folder, name="s", lines=8):
    code, _, err = run(cli, ["--quiet", "synth", "-o", f"{name}.hdr", "--lines", lines, "--samples", 8, "--bands", 6,
                             "--classes", 3, "--seed", 1], folder)
    assert code == 0, err


def tempfile_dir():
    import tempfile
    return tempfile.TemporaryDirectory(prefix="hbcli-")
