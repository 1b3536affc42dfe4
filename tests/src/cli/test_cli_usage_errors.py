"""Usage errors exit 2 with one line `hyperbatch: error: ...` that names the option and
what it accepts (part "messages", also under 3 MPI ranks: rank 0 alone prints), and
random option lists never leave {0, 2, 3, 4, 5} or print more than one error line
(part "property": seeded, a few hundred runs on a tiny synthetic scene)."""
import os
import random
import sys
from concurrent.futures import ThreadPoolExecutor

import clitest

COMMANDS = "info, ingest, export, synth, mnf, pca, knn, sam, ortho, run, submit"


def message_cases():
    """(arguments, exit code, words the one line must hold)."""
    knn = ["knn", "s.hdr", "--truth", "s_truth.hdr", "--train-fraction", "0.5", "-o", "o.hdr"]
    yield [], 2, ["no command given", COMMANDS]
    yield ["foo"], 2, ["unknown command 'foo'", COMMANDS]
    yield ["mnf", "s.hdr", "-o", "o.h5", "--components", "0"], 2, ["--components", "must be a positive integer", "0"]
    yield ["mnf", "s.hdr", "-o", "o.h5", "--components", "two"], 2, ["--components", "positive integer", "two"]
    yield ["mnf", "s.hdr", "-o", "o.h5", "--noise", "loud"], 2, ["--noise", "diff, mean3x3, median3x3", "loud"]
    yield ["mnf", "s.hdr", "-o", "o.h5", "--variance", "2"], 2, ["--variance", "from 0 to 1", "2"]
    yield [*knn, "-k", "0"], 2, ["-k", "positive integer", "0"]
    yield [*knn, "-k", "3", "--metric", "manhattan"], 2, ["--metric", "euclidean, cosine", "manhattan"]
    yield [*knn, "-k", "3", "--train-fraction", "1.5"], 2, ["--train-fraction", "from 0 to 1"]
    yield [*knn, "-k", "3", "--seed", "-4"], 2, ["--seed", "integer", "-4"]
    yield [*knn, "-k", "3", "--truth", "missing.hdr"], 2, ["--truth", "missing.hdr"]
    yield [*knn, "-k", "3", "--no-such-option"], 2, ["knn", "--no-such-option"]
    yield ["knn", "s.hdr", "-o", "o.hdr"], 2, ["-k", "required"]
    yield ["sam", "s.hdr", "--library", "s_library.sli", "-o", "o.hdr", "--max-angle", "7"], 2, ["--max-angle", "from 0"]
    yield ["synth", "-o", "x.hdr", "--lines", "-3"], 2, ["--lines", "positive integer", "-3"]
    yield ["synth", "-o", "x.hdr", "--interleave", "bsx"], 2, ["--interleave", "bip, bil, bsq", "bsx"]
    yield ["export", "s.h5", "-o", "x.hdr", "--interleave", "z"], 2, ["--interleave", "bip, bil, bsq"]
    yield ["submit", "job.toml", "--nodes", "0"], 2, ["--nodes", "positive integer"]


def check_messages(cli, d, mpiexec):
    checks = 0
    for args, code, words in message_cases():
        got, _, err = clitest.run(cli, args, d)
        what = "hyperbatch " + " ".join(args)
        assert got == code, f"{what}: exit {got}, expected {code}\n{err}"
        line = clitest.one_error_line(err, what)
        for word in words:
            assert word in line, f"{what}: '{word}' missing from: {line}"
        checks += 1
    for args in (["--help"], ["--version"], ["knn", "--help"], ["mnf", "--help"]):
        got, out, err = clitest.run(cli, args, d)
        assert got == 0 and out and not err, f"{args}: exit {got}\n{err}"
        checks += 1
    if mpiexec:
        args = ["mnf", "s.hdr", "-o", "o.h5", "--components", "0"]
        got, _, err = clitest.run(cli, args, d, mpiexec, ranks=3)
        assert got == 2, f"3 ranks: exit {got}\n{err}"
        clitest.one_error_line(err, "3 ranks, --components 0")
        got, out, err = clitest.run(cli, ["--version"], d, mpiexec, ranks=3)
        assert got == 0 and out.count("hyperbatch") == 1, f"3 ranks --version: exit {got}\n{out}{err}"
        checks += 2
    return checks


# ---- property: random option lists ----

INTS = ["0", "1", "2", "3", "-1", "abc", "1e3", "99999999999999999999", ""]
NUMBERS = ["0", "0.5", "1", "-0.2", "2", "nan", "inf", "x", ""]


def option_pool(d):
    files = [f"{d}/s.hdr", f"{d}/s.img", f"{d}/s_truth.hdr", f"{d}/s_library.sli", f"{d}/s.h5", f"{d}/train.h5",
             f"{d}/stats.h5", f"{d}/missing.hdr", d, "out.hdr", "out.h5", "out", "o.json", ""]
    outputs = ["out.hdr", "out.h5", "out.img", "o2.hdr", f"{d}/s.hdr", f"{d}/s.img", "", "out"]
    choice = lambda *valid: [*valid, "bogus", ""]
    common = {"--tile-rows": INTS, "--backend": choice("auto", "cpu", "cuda")}
    return files, outputs, {
        "info": {"--json": None},
        "ingest": {"-o": outputs},
        "export": {"-o": outputs, "--interleave": choice("bip", "bil", "bsq")},
        "synth": {"-o": outputs, "--lines": INTS, "--samples": INTS, "--bands": INTS, "--classes": INTS,
                  "--seed": INTS, "--interleave": choice("bip", "bsq"), "--fill-border": NUMBERS, "--tile-rows": INTS},
        "mnf": {**common, "-o": outputs, "--components": INTS, "--variance": NUMBERS, "--snr": NUMBERS,
                "--noise": choice("diff", "mean3x3", "median3x3"), "--subset": ["0:4,0:4", "4:2,0:1", "x", ""],
                "--denoise": outputs, "--stats-only": None, "--apply": files},
        "pca": {**common, "-o": outputs, "--components": INTS, "--variance": NUMBERS, "--stats-only": None,
                "--apply": files},
        "knn": {**common, "-o": outputs, "-k": INTS, "--truth": files, "--train": files, "--train-fraction": NUMBERS,
                "--train-per-class": INTS, "--seed": INTS, "--metric": choice("euclidean", "cosine"),
                "--select": choice("auto", "kmin"), "--weights": choice("uniform", "distance"),
                "--features": ["bands", "mnf:2", "mnf:0", "mnf:x", ""], "--apply": files, "--neighbors": None,
                "--report": ["rep", ""], "--export-split": ["split.json", ""], "--save-training": ["t.h5", ""],
                "--dedup": choice("auto", "on", "off"), "--shard-mode": choice("ring", "allgather"),
                "--train-chunk-rows": INTS},
        "sam": {**common, "-o": outputs, "--library": files, "--truth": files, "--train": files,
                "--method": choice("sam", "scm"), "--max-angle": NUMBERS, "--min-correlation": NUMBERS,
                "--rules": outputs, "--save-library": ["lib.h5", ""], "--resample": choice("auto", "linear"),
                "--formulation": choice("auto", "gemm"), "--dedup": choice("auto", "off")},
        "run": {"--shard": ["0/1", "1/1", "x", ""], "--no-progress": None},
    }


def random_arguments(rng, d):
    files, _, pool = option_pool(d)
    if rng.random() < 0.05:
        return [rng.choice(["foo", "--bogus", "-x", ""])]
    command = rng.choice(sorted(pool))
    args = [command]
    if command != "synth" and rng.random() < 0.9:
        args.append(rng.choice(files if command != "run" else [f"{d}/missing.toml", f"{d}/s.hdr", d]))
    options = pool[command]
    for name in rng.sample(sorted(options), k=min(len(options), rng.randint(0, 7))):
        values = options[name]
        args += [name] if values is None else [name, rng.choice(values)]
    if rng.random() < 0.1:
        args.insert(rng.randrange(1, len(args) + 1), rng.choice(["--unknown", "extra", "-q", "-v"]))
    return args


def run_one(cli, d, index, args):
    work = os.path.join(d, "runs", str(index))
    os.makedirs(work)
    code, _, err = clitest.run(cli, args, work, timeout=60)
    what = "hyperbatch " + " ".join(repr(a) if a == "" or " " in a else a for a in args)
    assert code in (0, 2, 3, 4, 5), f"{what}: exit {code}\n{err[-2000:]}"
    errors = [line for line in err.splitlines() if line.startswith("hyperbatch: error")]
    assert len(errors) <= 1, f"{what}: {len(errors)} error lines\n{err}"
    assert code == 0 or len(errors) == 1, f"{what}: exit {code} without an error line\n{err}"
    assert "terminate called" not in err and "Signal" not in err, f"{what}: crashed\n{err}"
    return code


def check_property(cli, d, runs=250, seed=20240611):
    rng = random.Random(seed)
    cases = [random_arguments(rng, d) for _ in range(runs)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        codes = list(pool.map(lambda item: run_one(cli, d, *item), enumerate(cases)))
    print("exit codes:", {c: codes.count(c) for c in sorted(set(codes))})
    return len(codes)


def main():
    args = clitest.parse_args()
    with clitest.tempfile_dir() as d:
        clitest.synth_scene(args.cli, d)
        for setup in (["ingest", "s.hdr", "-o", "s.h5"], ["mnf", "s.hdr", "--stats-only", "-o", "stats.h5"],
                      ["knn", "s.hdr", "--truth", "s_truth.hdr", "--train-fraction", "0.5", "-k", "3", "-o",
                       "seed.h5", "--save-training", "train.h5"]):
            code, _, err = clitest.run(args.cli, ["--quiet", *setup], d)
            assert code == 0, f"{setup}: {err}"
        open(os.path.join(d, "job.toml"), "w").close()
        checks = 0
        if args.part in ("messages", "all"):
            checks += check_messages(args.cli, d, args.mpiexec)
        if args.part in ("property", "all"):
            checks += check_property(args.cli, d)
    print(f"OK: {checks} checks")


if __name__ == "__main__":
    sys.exit(main())
