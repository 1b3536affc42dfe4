"""A process started on its own (no mpirun, no srun) is one rank and never starts MPI:
with OMPI_MCA_pml naming no component, which makes any MPI_Init abort, `--help`,
`info` (a real scene), `synth`, `ingest` to HDF5 (the serial driver), `mnf`, `knn` and
`sam` still succeed, and -v says "MPI not started". The control: the same environment under
`mpirun -np 1` fails, so the signal is real. Under mpirun every rank starts MPI."""
import os
import subprocess
import sys

import clitest

NO_MPI = {"OMPI_MCA_pml": "hb_no_such_component"}


def run(cli, args, cwd, extra_env=None, launcher=None):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", **(extra_env or {}))
    command = [*(launcher or []), cli, *map(str, args)]
    proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120, env=env)
    return proc.returncode, proc.stdout, proc.stderr


def expect_success_without_mpi(cli, args, cwd):
    code, out, err = run(cli, ["-v", *args], cwd, NO_MPI)
    assert code == 0, f"{args} with MPI_Init made to fail: exit {code}\n{err[-3000:]}"
    if args[0] != "--help":
        assert "MPI not started: one process without a launcher" in err, f"{args}: no 'MPI not started' line:\n{err}"
    assert "MPI started" not in err.replace("MPI not started", ""), f"{args}: MPI started:\n{err}"
    return out


def main():
    args = clitest.parse_args()
    scene = os.path.join(args.shared_data, "jasper_ridge", "jasper_ridge.hdr")
    with clitest.tempfile_dir() as d:
        help_text = expect_success_without_mpi(args.cli, ["--help"], d)
        assert "info" in help_text, help_text
        if os.path.exists(scene):
            info = expect_success_without_mpi(args.cli, ["info", scene], d)
            assert "198" in info, info  # Jasper Ridge's bands
        expect_success_without_mpi(args.cli, ["synth", "-o", "s.hdr", "--lines", 16, "--samples", 12, "--bands", 8,
                                              "--classes", 3, "--seed", 1], d)
        expect_success_without_mpi(args.cli, ["ingest", "s.hdr", "-o", "s.h5"], d)
        expect_success_without_mpi(args.cli, ["mnf", "s.h5", "-o", "m.h5", "--components", 3], d)
        assert os.path.getsize(os.path.join(d, "m.h5")) > 0
        expect_success_without_mpi(args.cli, ["knn", "s.h5", "--truth", "s_truth.hdr", "--train-fraction", 0.5, "-k", 3,
                                              "-o", "k.h5"], d)
        expect_success_without_mpi(args.cli, ["sam", "s.hdr", "--library", "s_library.sli", "-o", "c.hdr"], d)

        if args.mpiexec:
            # The control: a launcher makes hyperbatch start MPI, which this environment breaks.
            code, _, err = run(args.cli, ["info", "s.hdr"], d, NO_MPI, [args.mpiexec, "--oversubscribe", "-np", "1"])
            assert code != 0, "under mpirun -np 1 MPI_Init should have failed with no pml component"
            code, _, err = run(args.cli, ["-v", "info", "s.hdr"], d, None, [args.mpiexec, "--oversubscribe", "-np", "2"])
            assert code == 0, err
            assert "MPI started: rank 0 of 2" in err, f"no 'MPI started' line under mpirun:\n{err}"
    print("hyperbatch starts without MPI outside a launcher: ok")


if __name__ == "__main__":
    sys.exit(main())
