"""`--resample-to SCENE`: a campaign basis over scenes of different sensors reads every
scene on one scene's bands (the resampling rules of io/resample.hpp, shared with SAM
libraries). The campaign statistics must equal numpy's over the scenes resampled by the
same rules (Gaussian with the target's FWHM, or np.interp when the target has none);
without the option the mix is refused (exit 3 naming the scenes and `wavelength`);
the same bytes on 1 and 3 ranks, and through a job's `[mnf] resample_to`."""
import os

import h5py
import numpy as np

import archive_products as ap
import clitest
import hbtest

args = clitest.parse_args()
checks = hbtest.Checks()
cli = clitest.checked_runner(args, checks)

LINES, SAMPLES = 14, 11
FWHM_TO_SIGMA = 2.3548200450309493


def scene(folder, name, centres, seed, fwhm=None, bbl=None):
    rng = np.random.default_rng(seed)
    # Smooth spectra (a few broad features) plus noise: resampling changes the values.
    base = np.sin(np.outer(rng.uniform(0.5, 2, LINES * SAMPLES), centres / 400.0)) * 200
    cube = (1000 + base + rng.normal(0, 20, size=base.shape)).reshape(LINES, SAMPLES, len(centres))
    extra = "wavelength units = Nanometers\nwavelength = {" + ", ".join(f"{c:.4f}" for c in centres) + "}\n"
    if fwhm is not None:
        extra += "fwhm = {" + ", ".join(f"{w:.4f}" for w in fwhm) + "}\n"
    if bbl is not None:
        extra += "bbl = {" + ", ".join(str(b) for b in bbl) + "}\n"
    ap.write_envi(os.path.join(folder, name + ".img"), cube.astype(np.float32), extra)
    return name + ".hdr", cube.astype(np.float32)


def trapezoid_widths(nm):
    n = len(nm)
    lo = np.concatenate([[nm[0]], nm[:-2], [nm[-2]]])
    hi = np.concatenate([[nm[1]], nm[2:], [nm[-1]]])
    span = np.full(n, 2.0)
    span[0] = span[-1] = 1.0
    return (hi - lo) / span


def gaussian_resample(cube, source_nm, target_nm, fwhm):
    """The target band = sum g(l_j) r_j dl_j / sum g(l_j) dl_j, g cut at 3 sigma."""
    dl = trapezoid_widths(source_nm)
    weights = np.zeros((len(source_nm), len(target_nm)))
    for b, (c, w) in enumerate(zip(target_nm, fwhm)):
        z = (source_nm - c) / (w / FWHM_TO_SIGMA)
        g = np.where(np.abs(z) <= 3, np.exp(-0.5 * z * z) * dl, 0.0)
        weights[:, b] = g / g.sum()
    return (cube.astype(np.float64) @ weights).astype(np.float32)


def linear_resample(cube, source_nm, target_nm):
    flat = cube.reshape(-1, cube.shape[-1]).astype(np.float64)
    out = np.stack([np.interp(target_nm, source_nm, p) for p in flat])
    return out.astype(np.float32).reshape(cube.shape[:-1] + (len(target_nm),))


def campaign_stats(path):
    with h5py.File(path) as f:
        return f["mnf/mean"][...], f["mnf/data_covariance"][...], f["mnf/eigenvalues"][...]


def numpy_stats(cubes):
    pixels = np.concatenate([c.reshape(-1, c.shape[-1]).astype(np.float64) for c in cubes])
    return pixels.mean(axis=0), np.cov(pixels.T)


def close(got, want, what):
    err = np.max(np.abs(got - want)) / np.max(np.abs(want))
    checks.true(err < 1e-9, f"{what} (rel. error {err:.1e})")


def refused(folder, argv, names, field, what, ranks=1, code=3):
    before = sorted(os.listdir(folder))
    _, err = cli(folder, *argv, expect=code, ranks=ranks)
    line = err.strip().splitlines()[0] if err.strip() else ""
    checks.true(all(n in line for n in names) and field in line, f"{what}: names {names}, {field}: {line}")
    checks.equal(sorted(os.listdir(folder)), before, f"{what}: nothing written")


with hbtest.workdir() as tmp:
    target_nm = np.linspace(450.0, 2350.0, 9)
    fwhm = np.full(9, 120.0)
    a, cube_a = scene(tmp, "a", target_nm, 1, fwhm)            # the target sensor (has FWHM)
    p, _ = scene(tmp, "p", target_nm, 3)                          # the same centres, no FWHM
    source_nm = np.linspace(380.0, 2420.0, 41)
    c, cube_c = scene(tmp, "c", source_nm, 2)                     # another sensor, finer bands
    wide, _ = scene(tmp, "wide", np.linspace(300.0, 2500.0, 9), 4)  # beyond c's range

    # Without the option the mix is refused, on 1 and 3 ranks.
    for ranks in (1, 3):
        refused(tmp, ["mnf", "--stats-only", a, c, "-o", f"ac_{ranks}.h5", "--backend", "cpu"], ["a.hdr", "c.hdr"],
                "'wavelength'", f"two sensors without --resample-to ({ranks} ranks)", ranks)

    # Gaussian (the target has FWHM): numpy's statistics over a and c resampled.
    results = {}
    for ranks in (1, 3):
        out = f"gauss_{ranks}.h5"
        cli(tmp, "mnf", "--stats-only", a, c, "-o", out, "--backend", "cpu", "--resample-to", a, ranks=ranks)
        results[ranks] = campaign_stats(os.path.join(tmp, out))
    want_mean, want_cov = numpy_stats([cube_a, gaussian_resample(cube_c, source_nm, target_nm, fwhm)])
    close(results[1][0], want_mean, "gaussian resampling: campaign mean equals numpy's")
    close(results[1][1], want_cov, "gaussian resampling: campaign covariance equals numpy's")
    for i, what in enumerate(("mean", "covariance", "eigenvalues")):
        checks.true(np.array_equal(results[1][i], results[3][i]), f"gaussian resampling: {what} the same on 1 and 3 ranks")

    # Linear (the target has no FWHM): np.interp.
    cli(tmp, "mnf", "--stats-only", p, c, "-o", "linear.h5", "--backend", "cpu", "--resample-to", p)
    with open(os.path.join(tmp, "p.img"), "rb") as f:
        cube_p = np.frombuffer(f.read(), dtype="<f4").reshape(LINES, SAMPLES, 9)
    want_mean, want_cov = numpy_stats([cube_p, linear_resample(cube_c, source_nm, target_nm)])
    got_mean, got_cov, _ = campaign_stats(os.path.join(tmp, "linear.h5"))
    close(got_mean, want_mean, "linear resampling: campaign mean equals numpy's")
    close(got_cov, want_cov, "linear resampling: campaign covariance equals numpy's")

    # The basis applied to another sensor's scene, read on the target's bands: the
    # components are (resampled pixel - mean) x transform, on 1 and 3 ranks.
    components = {}
    for ranks in (1, 3):
        out = f"c_components_{ranks}.h5"
        cli(tmp, "mnf", c, "--apply", "gauss_1.h5", "-o", out, "--backend", "cpu", "--resample-to", a, ranks=ranks)
        with h5py.File(os.path.join(tmp, out)) as f:
            components[ranks] = f["cube"][...]
    with h5py.File(os.path.join(tmp, "gauss_1.h5")) as f:
        transform, mean = f["mnf/transform"][...], f["mnf/mean"][...]
    resampled = gaussian_resample(cube_c, source_nm, target_nm, fwhm).astype(np.float64)
    want = ((resampled.reshape(-1, 9) - mean) @ transform).reshape(LINES, SAMPLES, -1)
    got = components[1].astype(np.float64)
    err = np.max(np.abs(got - want)) / np.max(np.abs(want))
    checks.true(err < 1e-5, f"--apply --resample-to: components equal numpy's (rel. error {err:.1e})")
    checks.true(np.array_equal(components[1], components[3]), "--apply --resample-to: the same bytes on 1 and 3 ranks")

    # A target the scenes do not cover; the option outside a campaign or --apply.
    refused(tmp, ["mnf", "--stats-only", wide, c, "-o", "wide.h5", "--backend", "cpu", "--resample-to", wide],
            ["c.hdr", "wide.hdr"], "'wavelength'", "a target beyond a scene's bands")
    refused(tmp, ["mnf", a, "-o", "single.h5", "--backend", "cpu", "--resample-to", a], ["--resample-to"], "",
            "--resample-to without a campaign", code=2)

    # A job's campaign basis with `resample_to`: the same statistics as the command's.
    cli(tmp, "run", ap.campaign_job_file(tmp, [a, c], "resampled.toml", f'resample_to = "{a}"\n'))
    job_stats = campaign_stats(os.path.join(tmp, "out", "campaign", "mnf_basis.h5"))
    close(job_stats[0], results[1][0], "job resample_to: campaign mean equals the command's")
    close(job_stats[1], results[1][1], "job resample_to: campaign covariance equals the command's")
checks.done("test_resample_to")
