#!/usr/bin/python3
"""Tables and plots of a dist part's figures (bench/device/dist.sh).

usage: bench/device/plot_dist.py SUMMARY.txt OUTDIR

Reads the "== dist mnf_dist40_4 (4 ranks): rc=0 7.243 s" lines of the device call's
summary and writes OUTDIR/dist.csv (command, scene GB, GPUs, seconds, strong-scaling
speedup and efficiency against 1 GPU on the same scene, weak-scaling efficiency against
1 GPU on 10 GB a GPU), OUTDIR/strong.png and OUTDIR/weak.png.
"""
import csv
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

LINE = re.compile(r"^== dist (mnf|knn)_dist(\d+)(_tmpfs)?_(\d+) \((\d+) ranks\): rc=(\d+) ([0-9.]+) s")


def read(summary):
    runs = {}
    for line in open(summary):
        m = LINE.match(line)
        if not m or m.group(6) != "0":
            continue
        command = m.group(1) + (" (tmpfs)" if m.group(3) else "")
        runs[(command, int(m.group(2)), int(m.group(4)))] = float(m.group(7))
    return runs


def rows(runs):
    out = []
    for (command, gb, gpus), seconds in sorted(runs.items()):
        one = runs.get((command, gb, 1))
        weak_base = runs.get((command, 10, 1))
        strong = one / seconds if one else None
        weak = weak_base / seconds if weak_base and gb == 10 * gpus else None
        out.append({"command": command, "scene_gb": gb, "gpus": gpus, "seconds": seconds,
                    "speedup": round(strong, 3) if strong else "",
                    "strong_efficiency": round(strong / gpus, 3) if strong else "",
                    "weak_efficiency": round(weak, 3) if weak else ""})
    return out


def plot(table, key, title, path):
    fig, ax = plt.subplots(figsize=(6, 4))
    series = {}
    for r in table:
        if r[key] == "":
            continue
        label = r["command"].upper() + ("" if key == "weak_efficiency" else f" {r['scene_gb']} GB")
        series.setdefault(label, []).append((r["gpus"], r[key]))
    for label, points in sorted(series.items()):
        points.sort()
        ax.plot([p[0] for p in points], [100 * p[1] for p in points], marker="o", label=label)
    ax.set_xscale("log", base=2)
    gpus = sorted({r["gpus"] for r in table})
    ax.set_xticks(gpus, [str(g) for g in gpus])
    ax.set_xlabel("GPUs (one host)")
    ax.set_ylabel("efficiency (%)")
    ax.set_ylim(0, 110)
    ax.axhline(100, color="grey", linewidth=0.5)
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(fig)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    table = rows(read(sys.argv[1]))
    if not table:
        sys.exit(f"{sys.argv[1]}: no '== dist ...' run lines")
    os.makedirs(sys.argv[2], exist_ok=True)
    with open(os.path.join(sys.argv[2], "dist.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(table[0]))
        writer.writeheader()
        writer.writerows(table)
    plot(table, "strong_efficiency", "Strong scaling: t(1) / (P t(P))", os.path.join(sys.argv[2], "strong.png"))
    plot(table, "weak_efficiency", "Weak scaling, 10 GB a GPU: t(1, 10 GB) / t(P, 10P GB)",
         os.path.join(sys.argv[2], "weak.png"))


if __name__ == "__main__":
    main()
