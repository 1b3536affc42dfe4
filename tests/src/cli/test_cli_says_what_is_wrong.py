"""Errors say what is wrong: an .img that is a directory is 'not a regular file'; a
one-line scene's MNF says why it has no noise residuals (exit 3, naming the scene);
a constant band that leaves too few components is a data problem (exit 3, naming the
scene), while asking for more components than bands stays a usage error (exit 2)."""
import os
import sys

import numpy as np

import clitest


def write_envi(path_stem, cube):
    lines, samples, bands = cube.shape
    cube.astype("<f4").tofile(path_stem + ".img")
    with open(path_stem + ".hdr", "w") as f:
        f.write(f"ENVI\nsamples = {samples}\nlines = {lines}\nbands = {bands}\nheader offset = 0\n"
                "file type = ENVI Standard\ndata type = 4\ninterleave = bip\nbyte order = 0\n")


def expect(cli, d, args, code, words):
    got, _, err = clitest.run(cli, ["--quiet", *args], d)  # the statistics pass logs its progress
    what = "hyperbatch " + " ".join(args)
    assert got == code, f"{what}: exit {got}, expected {code}\n{err}"
    # the dropped direction's warning may precede the one error line
    line = clitest.one_error_line("\n".join(l for l in err.splitlines() if " warning " not in l), what)
    for word in words:
        assert word in line, f"{what}: '{word}' missing from: {line}"


def main():
    args = clitest.parse_args()
    with clitest.tempfile_dir() as d:
        clitest.synth_scene(args.cli, d)
        with open(os.path.join(d, "s.hdr")) as f:
            header = f.read()
        with open(os.path.join(d, "folder.hdr"), "w") as f:
            f.write(header)
        os.mkdir(os.path.join(d, "folder.img"))
        expect(args.cli, d, ["info", "folder.hdr"], 4, ["folder.img", "not a regular file"])

        clitest.synth_scene(args.cli, d, name="one", lines=1)
        expect(args.cli, d, ["mnf", "one.hdr", "-o", "m.h5"], 3, ["one.hdr", "noise", "no noise residuals", "one line"])

        rng = np.random.default_rng(7)
        cube = rng.normal(100.0, 5.0, size=(16, 16, 4))
        cube[:, :, 3] = 42.0  # no variance, no noise: its direction is dropped
        write_envi(os.path.join(d, "flat"), cube)
        expect(args.cli, d, ["mnf", "flat.hdr", "-o", "m.h5", "--components", "4"], 3,
               ["flat.hdr", "--components", "the data leave"])
        expect(args.cli, d, ["mnf", "flat.hdr", "-o", "m.h5", "--components", "5"], 2, ["--components"])
        assert not os.path.exists(os.path.join(d, "m.h5")), "output left behind"
    print("OK: 5 checks")


if __name__ == "__main__":
    sys.exit(main())
