"""Scenes combined into one MNF basis (mnf --stats-only A B ..., a job's campaign basis)
must share band centres (within 0.01 nm) and units: otherwise exit 3 naming the scenes
and `wavelength` (or `units`), nothing written; on 1 and 3 ranks."""
import os

import numpy as np

import archive_products as ap
import clitest
import hbtest

args = clitest.parse_args()
checks = hbtest.Checks()

cli = clitest.checked_runner(args, checks)


def scene(folder, name, centres, seed, extra=""):
    rng = np.random.default_rng(seed)
    cube = rng.normal(1000, 100, size=(12, 10, len(centres))).astype(np.float32)
    wl = "wavelength units = Nanometers\nwavelength = {" + ", ".join(f"{c:.4f}" for c in centres) + "}\n"
    ap.write_envi(os.path.join(folder, name + ".img"), cube, wl + extra)
    return name + ".hdr"


def refused(folder, argv, names, field, what, ranks=1):
    before = sorted(os.listdir(folder))
    _, err = cli(folder, *argv, expect=3, ranks=ranks)
    line = clitest.one_error_line(err, what) if ranks == 1 else err.strip().splitlines()[0]
    checks.true(all(n in line for n in names) and f"'{field}'" in line, f"{what}: names {names}, {field}: {line}")
    checks.equal(sorted(os.listdir(folder)), before, f"{what}: nothing written")


with hbtest.workdir() as tmp:
    centres = np.linspace(400.0, 2400.0, 8)
    a = scene(tmp, "a", centres, 1)
    b = scene(tmp, "b", centres + 0.004, 2)   # within 0.01 nm: the same bands
    c = scene(tmp, "c", centres + 0.5, 3)     # half a nanometre off: another sensor's bands
    d = scene(tmp, "d", centres, 4, "data gain values = {" + ", ".join(["0.5"] * 8) + "}\n")
    for ranks in (1, 3):
        cli(tmp, "mnf", "--stats-only", a, b, "-o", f"ab_{ranks}.h5", "--backend", "cpu", ranks=ranks)
        refused(tmp, ["mnf", "--stats-only", a, b, c, "-o", "abc.h5", "--backend", "cpu"], ["a.hdr", "c.hdr"],
                "wavelength", f"band centres 0.5 nm apart ({ranks} ranks)", ranks)
    refused(tmp, ["mnf", "--stats-only", a, d, "-o", "ad.h5", "--backend", "cpu"], ["a.hdr", "d.hdr"], "units",
            "a scaled scene and an unscaled one")
    cli(tmp, "mnf", "--stats-only", a, d, "-o", "ad_raw.h5", "--backend", "cpu", "--units", "raw", expect=3)
    job = ap.campaign_job_file(tmp, [a, c])
    refused(tmp, ["run", job], ["a.hdr", "c.hdr"], "wavelength", "a job's campaign basis")
checks.done("test_campaign_bands")
