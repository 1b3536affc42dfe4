#!/usr/bin/python3
"""Independent ENVI reader for the C++ tests, built on Spectral Python.

  envi_oracle.py dump HDR...          -> JSON {hdr: {"shape": [l, s, b], "values": [...]}}
                                         values in canonical order (line, sample, band)
  envi_oracle.py compare ORIG COPY    -> exit 0 when Spectral Python reads the same
                                         array and metadata from both headers
"""
import json
import sys

import numpy as np
import spectral.io.envi as envi


def load(hdr):
    image = envi.open(hdr)
    if isinstance(image, envi.SpectralLibrary):
        # Spectral Python moves a library's lists out of its metadata.
        meta = dict(image.metadata)
        meta.update({"_names": image.names, "_centers": image.bands.centers, "_fwhm": image.bands.bandwidths,
                     "_units": image.bands.band_unit})
        return image.spectra[:, :, np.newaxis], meta
    return np.asarray(image.load(dtype=image.dtype)), image.metadata


def dump(headers):
    out = {}
    for hdr in headers:
        array, _ = load(hdr)
        out[hdr] = {"shape": list(array.shape), "values": array.astype(np.float64).ravel().tolist()}
    json.dump(out, sys.stdout)


def compare(original, copy):
    a, meta_a = load(original)
    b, meta_b = load(copy)
    problems = []
    # Byte order may differ on purpose; the sample type and the values may not.
    if a.shape != b.shape or a.dtype.str[1:] != b.dtype.str[1:] or not np.array_equal(a, b):
        problems.append(f"arrays differ: {a.shape} {a.dtype} vs {b.shape} {b.dtype}")
    for key in ("wavelength", "fwhm", "bbl", "band names", "spectra names", "class names", "class lookup",
                "wavelength units", "classes", "file type", "description", "_names", "_centers", "_fwhm",
                "_units"):
        if meta_a.get(key) != meta_b.get(key):
            problems.append(f"metadata '{key}' differs: {str(meta_a.get(key))[:80]} vs {str(meta_b.get(key))[:80]}")
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    if sys.argv[1] == "dump":
        dump(sys.argv[2:])
        sys.exit(0)
    sys.exit(compare(sys.argv[2], sys.argv[3]))
