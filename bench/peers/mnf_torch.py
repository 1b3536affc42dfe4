"""The same MNF written plainly in PyTorch, the peer hyperbatch is measured against.

Reads an ENVI BIP int16/float scene in row chunks (numpy memmap), computes the data
and noise (lower-right differences, halved) statistics in float64 on the GPU,
eigendecomposes with torch.linalg.eigh, and writes m float32 components to a raw
file. Prints one JSON line with per-stage seconds. Written the way a competent
PyTorch user would, without hyperbatch's overlap of reading, copying and compute.
"""
import argparse
import json
import time

import numpy as np
import torch


def read_header(path):
    meta = {}
    text = open(path).read()
    for key in ("samples", "lines", "bands", "data type", "header offset"):
        for line in text.splitlines():
            if line.lower().split("=")[0].strip() == key:
                meta[key] = int(line.split("=")[1])
    assert "interleave = bip" in text.lower(), "peer reads BIP scenes only"
    return meta


DTYPES = {1: np.uint8, 2: np.int16, 4: np.float32, 5: np.float64, 12: np.uint16}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("header")
    ap.add_argument("--output", required=True)
    ap.add_argument("--components", type=int, default=20)
    ap.add_argument("--chunk-rows", type=int, default=1024)
    args = ap.parse_args()
    meta = read_header(args.header)
    lines, samples, bands = meta["lines"], meta["samples"], meta["bands"]
    data = np.memmap(args.header[:-4] + ".img", dtype=DTYPES[meta["data type"]], mode="r",
                     offset=meta.get("header offset", 0), shape=(lines, samples, bands))
    dev = torch.device("cuda")
    torch.cuda.synchronize()
    t0 = time.perf_counter()

    n = 0
    s = torch.zeros(bands, dtype=torch.float64, device=dev)
    xx = torch.zeros(bands, bands, dtype=torch.float64, device=dev)
    nn = 0
    ns = torch.zeros_like(s)
    nxx = torch.zeros_like(xx)
    shift = None
    for r0 in range(0, lines, args.chunk_rows):
        r1 = min(lines, r0 + args.chunk_rows + 1)  # one extra row for the differences
        x = torch.from_numpy(np.ascontiguousarray(data[r0:r1])).to(dev).to(torch.float64)
        own = x[: min(args.chunk_rows, lines - r0)]
        flat = own.reshape(-1, bands)
        if shift is None:
            shift = flat.mean(0)
        c = flat - shift
        n += c.shape[0]
        s += c.sum(0)
        xx += c.T @ c
        d = (x[:-1, :-1, :] - x[1:, 1:, :]).reshape(-1, bands)
        nn += d.shape[0]
        ns += d.sum(0)
        nxx += d.T @ d
    mean = shift + s / n
    cov = (xx - torch.outer(s, s) / n) / (n - 1)
    ncov = (nxx - torch.outer(ns, ns) / nn) / (nn - 1) / 2
    torch.cuda.synchronize()
    t1 = time.perf_counter()

    dn, un = torch.linalg.eigh(ncov)
    p = un / torch.sqrt(dn)
    lam, v = torch.linalg.eigh(p.T @ cov @ p)
    order = torch.argsort(lam, descending=True)
    lam, v = lam[order], v[:, order]
    t = (p @ v)[:, : args.components].to(torch.float32)
    mean32 = mean.to(torch.float32)
    torch.cuda.synchronize()
    t2 = time.perf_counter()

    with open(args.output, "wb") as out:
        for r0 in range(0, lines, args.chunk_rows):
            r1 = min(lines, r0 + args.chunk_rows)
            x = torch.from_numpy(np.ascontiguousarray(data[r0:r1])).to(dev).to(torch.float32)
            z = (x.reshape(-1, bands) - mean32) @ t
            out.write(z.cpu().numpy().tobytes())
    torch.cuda.synchronize()
    t3 = time.perf_counter()
    print(json.dumps({"peer": "pytorch", "torch": torch.__version__, "statistics_s": t1 - t0,
                      "eig_s": t2 - t1, "transform_s": t3 - t2, "total_s": t3 - t0,
                      "eigenvalues_head": lam[:5].tolist()}))


if __name__ == "__main__":
    main()
