"""SAM written plainly in PyTorch: the peer `hyperbatch sam` is measured against.

Reads an ENVI BIP scene in row chunks (numpy memmap), sends each chunk to the GPU as
stored, widens it to float64 there (the precision hyperbatch scores in), takes the dot
products with the unit library spectra in one matmul, and keeps the best match and its
angle; ignored pixels (the data ignore value) stay 0. Writes the uint16 class map to a
raw file. Prints one JSON line with seconds and pixels/s. Written the way a competent
PyTorch user would, without hyperbatch's overlap of reading, copying and compute.
  --make-library N OUT.sli: instead, write an ENVI spectral library of N spectra drawn
  from the scene's pixels (2 % noise), with the scene's band centres.
"""
import argparse
import json
import re
import time

import numpy as np
import torch

DTYPES = {1: np.uint8, 2: np.int16, 4: np.float32, 5: np.float64, 12: np.uint16}


def read_header(path):
    text = open(path).read()
    meta = {"text": text}
    for key in ("samples", "lines", "bands", "data type", "header offset"):
        m = re.search(rf"^\s*{key}\s*=\s*(\d+)", text, re.M | re.I)
        if m:
            meta[key] = int(m.group(1))
    m = re.search(r"^\s*data ignore value\s*=\s*([-+0-9.eE]+)", text, re.M | re.I)
    meta["ignore"] = float(m.group(1)) if m else None
    assert re.search(r"interleave\s*=\s*bip", text, re.I), "peer reads BIP scenes only"
    return meta


def open_scene(header):
    meta = read_header(header)
    shape = (meta["lines"], meta["samples"], meta["bands"])
    data = np.memmap(header[:-4] + ".img", dtype=DTYPES[meta["data type"]], mode="r",
                     offset=meta.get("header offset", 0), shape=shape)
    return meta, data


def make_library(header, count, out):
    meta, data = open_scene(header)
    rng = np.random.default_rng(count)
    spectra = []
    while len(spectra) < count:
        px = data[rng.integers(meta["lines"]), rng.integers(meta["samples"])].astype(np.float64)
        if meta["ignore"] is not None and (px == meta["ignore"]).any() or not px.any():
            continue
        spectra.append(px * (1 + 0.02 * rng.standard_normal(px.shape)))
    np.asarray(spectra, dtype=np.float32).tofile(out)
    wavelength = re.search(r"^\s*wavelength\s*=\s*\{[^}]*\}", meta["text"], re.M | re.I)
    units = re.search(r"^\s*wavelength units\s*=.*$", meta["text"], re.M | re.I)
    with open(out[:-4] + ".hdr", "w") as f:
        f.write(f"ENVI\nsamples = {meta['bands']}\nlines = {count}\nbands = 1\nheader offset = 0\n"
                "file type = ENVI Spectral Library\ndata type = 4\ninterleave = bsq\nbyte order = 0\n")
        if wavelength:
            f.write(wavelength.group(0) + "\n" + (units.group(0) + "\n" if units else ""))
        f.write("spectra names = {" + ", ".join(f"s{i}" for i in range(count)) + "}\n")


def load_library(path):
    text = open(path[:-4] + ".hdr").read()
    lines = int(re.search(r"lines\s*=\s*(\d+)", text).group(1))
    samples = int(re.search(r"samples\s*=\s*(\d+)", text).group(1))
    return np.fromfile(path, dtype=np.float32).reshape(lines, samples).astype(np.float64)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("header")
    ap.add_argument("--library")
    ap.add_argument("--output")
    ap.add_argument("--chunk-rows", type=int, default=1024)
    ap.add_argument("--make-library", nargs=2, metavar=("N", "OUT"))
    args = ap.parse_args()
    if args.make_library:
        make_library(args.header, int(args.make_library[0]), args.make_library[1])
        return
    meta, data = open_scene(args.header)
    lines, samples, bands = meta["lines"], meta["samples"], meta["bands"]
    dev = torch.device("cuda")
    lib = torch.from_numpy(load_library(args.library)).to(dev)
    unit = lib / lib.norm(dim=1, keepdim=True)
    out = np.memmap(args.output, dtype=np.uint16, mode="w+", shape=(lines, samples))
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    compute = 0.0
    for r0 in range(0, lines, args.chunk_rows):
        r1 = min(lines, r0 + args.chunk_rows)
        raw = torch.from_numpy(np.ascontiguousarray(data[r0:r1])).to(dev)
        c0 = time.perf_counter()
        x = raw.reshape(-1, bands).to(torch.float64)
        valid = torch.isfinite(x).all(dim=1)
        if meta["ignore"] is not None:
            valid &= ~(x == meta["ignore"]).any(dim=1)
        norm = x.norm(dim=1)
        cos = (x @ unit.T) / norm.unsqueeze(1)
        best_cos, best = cos.max(dim=1)
        angle = torch.acos(best_cos.clamp(-1, 1))  # what --rules-less hyperbatch writes as the score
        labels = torch.where(valid & (norm > 0), best + 1, 0).to(torch.int32)
        result = labels.cpu().numpy().astype(np.uint16)
        del angle
        compute += time.perf_counter() - c0
        out[r0:r1] = result.reshape(r1 - r0, samples)
    out.flush()
    torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    print(json.dumps({"peer": "pytorch", "spectra": int(lib.shape[0]), "seconds": round(seconds, 3),
                      "gpu_and_copy_back_seconds": round(compute, 3),
                      "pixels_per_s": round(lines * samples / seconds, 1)}))


if __name__ == "__main__":
    main()
