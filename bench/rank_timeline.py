#!/usr/bin/python3
"""Where each rank's seconds go in a `hyperbatch -v run` log (the archive part):

    bench/rank_timeline.py RUN.log [RUN.log ...] [--wall SECONDS]

For each log, one line for the ranks' common span (first line of any rank to the last)
and, with --wall (the launcher's whole time), L: the seconds outside every rank's log
(launch, MPI start before the first line, exit). Then one aligned row per rank: its MPI
start (the "up" line), how long after its first line it began its first scene (CUDA's
start), its scenes, the seconds of its MNF and KNN steps and a scene's mean of each, the
seconds of its other steps (each step from its "SCENE: STEP" line to the rank's next such
line or its last line), and its idle tail (the last rank's end less its own).
"""
import argparse
import re
from datetime import datetime

LINE = re.compile(r"^(\S+T\S+) \w+ (?:\[rank (\d+)/\d+\] )?(.*)$")
STEP = re.compile(r"(\S+): (generate|ingest|mnf|knn|sam|ortho|quicklooks)$")
UP = re.compile(r"up ([0-9.]+) s after the process started")


def ranks_of(path):
    ranks = {}
    with open(path, errors="replace") as log:
        for line in log:
            match = LINE.match(line.rstrip("\n"))
            if not match:
                continue
            when = datetime.fromisoformat(match[1]).timestamp()
            rank = ranks.setdefault(int(match[2] or 0), {"first": when, "last": when, "steps": [], "up": None})
            rank["last"] = when
            text = match[3]
            if step := STEP.match(text):
                rank["steps"].append((when, step[2], step[1]))
            elif up := UP.search(text):
                rank["up"] = float(up[1])
    return ranks


def report(path, wall):
    ranks = ranks_of(path)
    if not ranks:
        print(f"{path}: no log lines")
        return
    start = min(r["first"] for r in ranks.values())
    end = max(r["last"] for r in ranks.values())
    outside = f", L = {wall - (end - start):.2f} s of {wall:.2f} s" if wall else ""
    print(f"{path}: the ranks' span {end - start:.2f} s{outside}")
    print(f"  {'rank':>4} {'up':>6} {'first scene':>11} {'scenes':>6} {'mnf':>7} {'a scene':>7} "
          f"{'knn':>7} {'a scene':>7} {'other':>7} {'idle tail':>9}")
    for number, rank in sorted(ranks.items()):
        events = rank["steps"] + [(rank["last"], "end", None)]
        seconds = {"mnf": 0.0, "knn": 0.0, "other": 0.0}
        for (begin, kind, _), (until, _, _) in zip(events, events[1:]):
            seconds[kind if kind in seconds else "other"] += until - begin
        scenes = len({scene for _, _, scene in rank["steps"]})
        first = rank["steps"][0][0] - rank["first"] if rank["steps"] else float("nan")
        up = f"{rank['up']:.2f}" if rank["up"] is not None else "-"
        per = max(scenes, 1)
        print(f"  {number:>4} {up:>6} {first:>11.2f} {scenes:>6} {seconds['mnf']:>7.2f} {seconds['mnf'] / per:>7.3f} "
              f"{seconds['knn']:>7.2f} {seconds['knn'] / per:>7.3f} {seconds['other']:>7.2f} "
              f"{end - rank['last']:>9.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("logs", nargs="+")
    parser.add_argument("--wall", type=float, default=None, help="the launcher's whole seconds (one log)")
    args = parser.parse_args()
    for path in args.logs:
        report(path, args.wall)


if __name__ == "__main__":
    main()
