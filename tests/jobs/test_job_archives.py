"""A job over delivery archives (.tar.gz, one AVIRIS-Classic flightline each): the runner
unpacks the image, header and calibration files into $TMPDIR, runs the steps on them
(the .gain scaling travels into the ingested cube) and removes them; a truncated archive
stops the run with exit 3 before anything is written. On 1 and 3 ranks."""
import argparse
import os
import subprocess
import sys
import tarfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "io"))
import archive_products as ap  # noqa: E402
import hbtest  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--cli", required=True)
parser.add_argument("--shared-data", required=True)
parser.add_argument("--mpiexec", default="")
args = parser.parse_args()
try:
    import h5py
except ImportError as e:
    hbtest.skip(f"oracle missing: {e}")
checks = hbtest.Checks()


def delivery(folder, name, seed):
    """A flightline folder as shipped, packed into NAME.tar.gz; returns (DN, factors)."""
    source = os.path.join(folder, "src_" + name)
    os.makedirs(source)
    dn, _, factors, _, _ = ap.aviris_classic(source, seed=seed)
    ap.write_envi(os.path.join(source, ap.FLIGHTLINE + "rdn_c_sc01_ort_glt"), np.ones((24, 20, 2), np.int16))
    archive = os.path.join(folder, name + ".tar.gz")
    with tarfile.open(archive, "w:gz") as tar:
        for member in sorted(os.listdir(source)):
            if member.startswith("truth"):
                continue
            tar.add(os.path.join(source, member), arcname=f"{name}/{member}")
    return archive, dn, factors


def run(job, ranks, scratch, expect):
    command = [args.cli, "run", job, "--no-progress"]
    env = dict(os.environ, TMPDIR=scratch, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    if ranks > 1:
        command = [args.mpiexec, "-q", "--oversubscribe", "-np", str(ranks), *command]
    proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    checks.equal(proc.returncode, expect, f"run {job} on {ranks} ranks: {proc.stderr[-3000:]}")
    return proc


def files_under(folder):
    return [os.path.join(r, n) for r, _, names in os.walk(folder) for n in names]


def write_job(folder, scenes, output):
    listed = ", ".join(f'"{s}"' for s in scenes)
    path = os.path.join(folder, output + ".toml")
    with open(path, "w") as f:
        f.write(f'[job]\nname = "deliveries"\noutput = "{output}"\nbackend = "cpu"\n\n'
                f'[collection]\nscenes = [{listed}]\n\n[ingest]\n\n[mnf]\ncomponents = 3\n')
    return path


with hbtest.workdir() as tmp:
    a, dn_a, factors = delivery(tmp, "f080611t01p00r07", 5)
    b, dn_b, _ = delivery(tmp, "f080612t01p00r08", 6)
    for ranks in (1, 3):
        scratch = os.path.join(tmp, f"scratch_{ranks}")
        os.makedirs(scratch)
        out = f"out_{ranks}"
        run(write_job(tmp, [a, b], out), ranks, scratch, 0)
        for name, dn in (("f080611t01p00r07", dn_a), ("f080612t01p00r08", dn_b)):
            with h5py.File(os.path.join(tmp, out, "scenes", name, name + ".h5"), "r") as f:
                checks.true(np.array_equal(f["cube"][...], dn), f"{name}: ingested DN ({ranks} ranks)")
                checks.true(np.allclose(f["cube"].attrs["scaling_gain"], 1.0 / factors),
                            f"{name}: the .gain scaling travels ({ranks} ranks)")
            checks.true(os.path.exists(os.path.join(tmp, out, "scenes", name, name + "_mnf.h5"))
                        or any(p.endswith(".h5") and "mnf" in p for p in files_under(os.path.join(tmp, out, "scenes", name))),
                        f"{name}: MNF ran on the unpacked scene ({ranks} ranks)")
        checks.equal(files_under(scratch), [], f"scratch emptied after the run ({ranks} ranks)")

    # A truncated archive: exit 3 naming it, nothing written.
    with open(b, "rb") as f:
        data = f.read()
    broken = os.path.join(tmp, "f080613t01p00r09.tar.gz")
    with open(broken, "wb") as f:
        f.write(data[:len(data) // 2])
    before = sorted(os.listdir(tmp))
    proc = run(write_job(tmp, [a, broken], "out_broken"), 1, os.path.join(tmp, "scratch_1"), 3)
    lines = proc.stderr.strip().splitlines()
    checks.equal(len(lines), 1, f"one error line: {proc.stderr}")
    checks.true("f080613t01p00r09.tar.gz" in lines[0], f"names the archive: {lines[0]}")
    checks.true("out_broken" not in os.listdir(tmp), "no output folder")
    checks.equal(sorted(p for p in os.listdir(tmp) if p != "out_broken.toml"),
                 sorted(p for p in before if p != "out_broken.toml"), "nothing else written")
checks.done("test_job_archives")
