"""Spectral Python's MNF on the CPU, the reference implementation users know.

Runs calc_stats, noise_from_diffs, mnf and reduce on the first --lines lines of a
BIP scene (SPy holds the whole array in memory and is slow), and reports the time
scaled linearly to the full scene, saying so.
"""
import argparse
import json
import time

import numpy as np

if not hasattr(np, "alltrue"):  # SPy 0.22 calls numpy.alltrue, removed in numpy 2
    np.alltrue = np.all
import spectral  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("header")
    ap.add_argument("--lines", type=int, default=512)
    ap.add_argument("--components", type=int, default=20)
    args = ap.parse_args()
    img = spectral.envi.open(args.header)
    lines = min(args.lines, img.nrows)
    t0 = time.perf_counter()
    x = np.asarray(img.read_subregion((0, lines), (0, img.ncols)), dtype=np.float64)
    signal = spectral.calc_stats(x)
    noise = spectral.noise_from_diffs(x)
    result = spectral.mnf(signal, noise)
    z = result.reduce(x, num=args.components)
    t1 = time.perf_counter()
    scale = img.nrows / lines
    print(json.dumps({"peer": "spectral-python", "version": spectral.__version__, "lines_run": lines,
                      "seconds_subset": t1 - t0, "scale": scale, "total_s_scaled": (t1 - t0) * scale,
                      "checksum": float(np.abs(z[:, :, 0]).sum())}))


if __name__ == "__main__":
    main()
