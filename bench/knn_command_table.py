"""The rows of docs/PERFORMANCE.md's KNN-command table from the summaries of part
knn_command (bench/device/knn_command.sh): for each command run, its whole time, the
method it ran (what auto chose, from its log, or the one `--select` named), its GPU search's rate, bench_knn's rate for that method on the
same data, PyTorch's time for 10^6 queries of the same shape and the ratios, all from
the same summary. Usage: python3 bench/knn_command_table.py SUMMARY.txt ..."""
import re
import sys

KINDS = ["uniform", "clustered", "spectra"]
COMMAND = re.compile(r"== knn command (\w+) d=(\d+) k=(\d+) hyperbatch --select (\w+) class map only: rc=0 "
                     r"([\d.]+) s in all.*method (\w+), GPU ([\d.]+) s searching")


def parse(path):
    commands, kernels, torch = {}, {}, {}
    kind, section = None, None
    for line in open(path):
        if m := COMMAND.match(line):
            commands[(m[1], int(m[2]), int(m[3]), m[4])] = (float(m[5]), m[6], float(m[7]))
            continue
        if m := re.match(r"== bench_knn on the (\w+) scene", line):
            kind, section = m[1], "bench"
            continue
        if line.startswith("# knn_torch"):
            section = "torch"
            continue
        f = line.split()
        if section == "bench" and len(f) >= 6 and f[0].isdigit() and f[2] in ("fast", "tensor"):
            kernels[(kind, int(f[0]), int(f[1]), f[2])] = float(f[5])
        elif section == "torch" and len(f) >= 5 and f[0].isdigit():
            torch[(int(f[0]), int(f[1]))] = float(f[4])
    return commands, kernels, torch


def main():
    for path in sys.argv[1:]:
        commands, kernels, torch = parse(path)
        for (kind, d, k, _), (whole, method, gpu) in sorted(
                commands.items(), key=lambda c: (KINDS.index(c[0][0]), -c[0][1], c[0][2], c[0][3])):
            rate, kernel, peer = 1e6 / gpu, kernels.get((kind, d, k, method)), torch.get((d, k))
            if kernel is None or peer is None:
                continue
            print(f"| {kind} | {d} | {k} | {method} | {whole:.2f} s | {gpu:.3f} s | {rate / 1e6:.2f} M/s | "
                  f"{kernel / 1e6:.2f} M/s | **{rate / kernel:.2f}x** | {1e6 / peer:.2f} s | {1e6 / peer / whole:.2f}x |")


if __name__ == "__main__":
    main()
