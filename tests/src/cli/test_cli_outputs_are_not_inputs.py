"""Every command refuses, with exit 2 and one line naming the output option and the
input, an output that is one of its inputs: named directly, through ./ or .., through a
symbolic link, as the .img beside an input .hdr, or as a derived file (ENVI sibling,
OUT_report, statistics sidecar). It also refuses two outputs that are one file. The
inputs keep their bytes and modification times and nothing is written. One case runs
under 3 MPI ranks."""
import os
import shutil
import sys

import clitest

KNN = ["knn", "s.hdr", "--truth", "s_truth.hdr", "--train-fraction", 0.5, "-k", 3]


def prepare(cli, d):
    clitest.synth_scene(cli, d)
    for args in (["ingest", "s.hdr", "-o", "s.h5"],
                 ["mnf", "s.hdr", "--stats-only", "-o", "stats.h5"],
                 [*KNN, "-o", "seed.h5", "--save-training", "train.h5"]):
        code, _, err = clitest.run(cli, ["--quiet", *args], d)
        assert code == 0, f"{args}: {err}"
    os.remove(os.path.join(d, "seed.h5"))
    # Inputs named like derived outputs: a truth raster that is o_confidence / OUT_report,
    # a library that is o_score, statistics that are p.stats.h5.
    for stem, data in (("o_confidence", "o_confidence.img"), ("q_report", "q_report.json"),
                       ("n_neighbors_index", "n_neighbors_index.img")):
        shutil.copy(os.path.join(d, "s_truth.hdr"), os.path.join(d, stem + ".hdr"))
        shutil.copy(os.path.join(d, "s_truth.img"), os.path.join(d, data))
    shutil.copy(os.path.join(d, "s_library.hdr"), os.path.join(d, "o_score.hdr"))
    shutil.copy(os.path.join(d, "s_library.sli"), os.path.join(d, "o_score.sli"))
    shutil.copy(os.path.join(d, "stats.h5"), os.path.join(d, "p.stats.h5"))
    os.symlink("s.hdr", os.path.join(d, "alias.hdr"))
    os.symlink("s.h5", os.path.join(d, "alias_h5.hdr"))
    os.symlink("s.img", os.path.join(d, "alias_img.h5"))
    os.symlink(".", os.path.join(d, "here"))


def cases():
    """(command line, output option named in the error, input named in the error)."""
    ways_to_name_the_scene = ["s.hdr", "s.img", "./s.hdr", "../data/s.img", "alias.hdr", "here/s.hdr", "s"]
    for out in ways_to_name_the_scene:
        yield [*KNN, "-o", out], "'-o'", "s."
        yield ["mnf", "s.hdr", "-o", out], "'-o'", "s."
        yield ["pca", "s.hdr", "-o", out], "'-o'", "s."
        yield ["sam", "s.hdr", "--library", "s_library.sli", "-o", out], "'-o'", "s."
        yield ["mnf", "s.hdr", "-o", "o.h5", "--denoise", out], "'--denoise'", "s."
        yield ["sam", "s.hdr", "--library", "s_library.sli", "-o", "o.hdr", "--rules", out], "'--rules'", "s."
    # the truth raster, the training file, the library, statistics
    yield [*KNN, "-o", "./s_truth.img"], "'-o'", "s_truth"
    yield ["knn", "s.hdr", "--train", "train.h5", "-k", 3, "-o", "train.h5"], "'-o'", "train.h5"
    yield ["knn", "s.hdr", "--train", "train.h5", "-k", 3, "-o", "o.h5", "--save-training", "../data/train.h5"], \
        "'--save-training'", "train.h5"
    yield [*KNN, "-o", "o.h5", "--export-split", "s_truth.img"], "'--export-split'", "s_truth"
    yield [*KNN, "--features", "mnf:2", "--apply", "stats.h5", "-o", "stats.h5"], "'-o'", "stats.h5"
    yield ["sam", "s.hdr", "--library", "s_library.sli", "-o", "s_library.hdr"], "'-o'", "s_library"
    yield ["sam", "s.hdr", "--library", "s_library.hdr", "-o", "o.h5", "--save-library", "s_library.sli"], \
        "'--save-library'", "s_library"
    yield ["sam", "s.hdr", "--truth", "s_truth.hdr", "-o", "s_truth.img"], "'-o'", "s_truth"
    yield ["sam", "s.hdr", "--train", "train.h5", "-o", "o.h5", "--save-library", "train.h5"], \
        "'--save-library'", "train.h5"
    yield ["mnf", "s.hdr", "--apply", "stats.h5", "-o", "./stats.h5"], "'-o'", "stats.h5"
    yield ["mnf", "s.h5", "--stats-only", "-o", "here/s.h5"], "'--stats-only'", "s.h5"
    yield ["mnf", "s.hdr", "s.h5", "--stats-only", "-o", "s.h5"], "'--stats-only'", "s.h5"
    yield ["ingest", "s.hdr", "-o", "alias_img.h5"], "'-o'", "s.img"
    yield ["export", "s.h5", "-o", "alias_h5.hdr"], "'-o'", "s.h5"
    # derived names: ENVI siblings, the default report, the statistics sidecar
    yield ["knn", "s.hdr", "--truth", "o_confidence.hdr", "--train-fraction", 0.5, "-k", 3, "-o", "o.hdr"], \
        "'-o'", "o_confidence"
    yield ["knn", "s.hdr", "--truth", "n_neighbors_index.hdr", "--train-fraction", 0.5, "-k", 3, "-o", "n.hdr",
           "--neighbors"], "'--neighbors'", "n_neighbors_index"
    yield ["knn", "s.hdr", "--truth", "q_report.json", "--train-fraction", 0.5, "-k", 3, "-o", "q.hdr"], \
        "'-o'", "q_report"
    yield ["knn", "s.hdr", "--truth", "q_report.json", "--train-fraction", 0.5, "-k", 3, "-o", "r.h5",
           "--report", "q_report"], "'--report'", "q_report"
    yield ["sam", "s.hdr", "--library", "o_score.sli", "-o", "o.hdr"], "'-o'", "o_score"
    yield ["mnf", "s.hdr", "--apply", "p.stats.h5", "-o", "p.hdr"], "'-o'", "p.stats.h5"


def two_outputs_one_file():
    yield ["mnf", "s.hdr", "-o", "o.hdr", "--denoise", "./o.img"], "'--denoise'", "o.hdr"
    yield [*KNN, "-o", "o.h5", "--export-split", "x.json", "--report", "x"], "'--export-split'", "x.json"
    yield ["sam", "s.hdr", "--library", "s_library.sli", "-o", "o.hdr", "--rules", "o.img"], "'--rules'", "o.hdr"
    yield ["sam", "s.hdr", "--library", "s_library.sli", "-o", "o.h5", "--save-library", "o.h5"], \
        "'--save-library'", "o.h5"


def check_refused(cli, d, args, option, named, mpiexec="", ranks=1):
    before = clitest.snapshot(d)
    code, out, err = clitest.run(cli, args, d, mpiexec, ranks)
    what = f"{'mpirun -np %d ' % ranks if ranks > 1 else ''}hyperbatch {' '.join(map(str, args))}"
    assert code == 2, f"{what}: exit {code}, expected 2\n{err}"
    line = clitest.one_error_line(err, what)
    assert option in line, f"{what}: the line does not name {option}: {line}"
    assert named in line, f"{what}: the line does not name {named}: {line}"
    assert clitest.snapshot(d) == before, f"{what}: files changed or appeared"


def main():
    args = clitest.parse_args()
    with clitest.tempfile_dir() as root:
        d = os.path.join(root, "data")
        os.mkdir(d)
        prepare(args.cli, d)
        checks = 0
        for command, option, named in [*cases(), *two_outputs_one_file()]:
            check_refused(args.cli, d, list(map(str, command)), option, named)
            checks += 1
        if args.mpiexec:
            check_refused(args.cli, d, list(map(str, [*KNN, "-o", "s.img"])), "'-o'", "s.", args.mpiexec, 3)
            checks += 1
    print(f"OK: {checks} refusals")


if __name__ == "__main__":
    sys.exit(main())
