#!/usr/bin/python3
"""Spectral Python reference for the MNF/PCA tests.

Usage: mnf_oracle.py CUBE.f64 LINES SAMPLES BANDS COMPONENTS OUT.json
CUBE.f64 holds float64 BIP values [lines, samples, bands] in native byte order.
Writes SPy's statistics, eigenvalues, reduced components and denoised cube as JSON.
Exits 77 when numpy or SPy cannot be imported (the C++ test then skips).
"""
import json
import sys

try:
    import numpy as np
    import spectral
    from spectral.algorithms.algorithms import calc_stats, mnf, noise_from_diffs, principal_components
except ImportError as error:  # pragma: no cover
    print(f"numpy/spectral are not available: {error}", file=sys.stderr)
    sys.exit(77)


def main():
    path, lines, samples, bands, components, out = sys.argv[1:7]
    lines, samples, bands, components = int(lines), int(samples), int(bands), int(components)
    cube = np.fromfile(path, dtype=np.float64).reshape(lines, samples, bands)

    signal = calc_stats(cube)
    noise = noise_from_diffs(cube)
    result = mnf(signal, noise)
    pcs = principal_components(cube)

    reduced = result.reduce(cube, num=components)
    denoised = result.denoise(cube, num=components)
    pca_reduced = pcs.reduce(num=components).transform(cube)

    report = {
        "spectral_version": spectral.__version__,
        "mean": signal.mean.tolist(),
        "data_covariance": signal.cov.ravel().tolist(),
        "noise_covariance": noise.cov.ravel().tolist(),
        "mnf_eigenvalues": np.real(result.napc.eigenvalues).tolist(),
        "pca_eigenvalues": np.real(pcs.eigenvalues).tolist(),
        "mnf_components": np.real(reduced).ravel().tolist(),
        "pca_components": np.real(pca_reduced).ravel().tolist(),
        "mnf_denoised": np.real(denoised).ravel().tolist(),
        "mnf_num_with_snr_2": int(result.num_with_snr(2)),
    }
    with open(out, "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main()
