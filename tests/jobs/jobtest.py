"""Helpers for the job tests: job files, runs, PNG checks and tree comparison."""
import json
import os
import struct
import subprocess
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))
from hbtest import SKIP, Checks, parse_args, skip, workdir  # noqa: E402,F401

EXIT_SCENES_FAILED = 6


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def run_job(cli, job, *extra, expect=0):
    proc = subprocess.run([cli, "run", job, "--no-progress", *extra], capture_output=True, text=True)
    if proc.returncode != expect:
        raise AssertionError(f"hyperbatch run {job}: exit {proc.returncode}, expected {expect}\n"
                             f"stdout: {proc.stdout}\nstderr: {proc.stderr[-4000:]}")
    return proc


def manifest(out):
    with open(os.path.join(out, "manifest.json")) as f:
        entries = json.load(f)["entries"]
    return {(e["scene"], e["step"]): e for e in entries}


def metrics(out, name="metrics.json"):
    with open(os.path.join(out, name)) as f:
        return json.load(f)


def png_pixels(path):
    """Decodes an 8-bit RGB PNG fully (chunks, CRCs, zlib, the five row filters);
    returns its pixels as a height x width x 3 uint8 array."""
    import numpy as np
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert zlib.crc32(kind + body) == crc, f"{path}: bad CRC in {kind}"
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert (depth, colour) == (8, 2), f"{path}: not 8-bit RGB"
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = 3 * width
    assert len(raw) == height * (1 + stride), f"{path}: {len(raw)} bytes of pixels for {width}x{height}"
    rows = np.frombuffer(raw, np.uint8).reshape(height, 1 + stride)
    out = np.zeros((height, stride), np.int32)
    for y in range(height):
        kind, line = rows[y, 0], rows[y, 1:].astype(np.int32)
        up = out[y - 1] if y > 0 else np.zeros(stride, np.int32)
        assert kind <= 4, f"{path}: bad filter byte {kind} in row {y}"
        if kind in (0, 2):
            out[y] = (line + (up if kind == 2 else 0)) & 255
            continue
        for x in range(stride):  # Sub, Average, Paeth: each byte needs the one 3 to its left
            a = out[y, x - 3] if x >= 3 else 0
            b, c = up[x], (up[x - 3] if x >= 3 else 0)
            if kind == 1:
                pred = a
            elif kind == 3:
                pred = (a + b) // 2
            else:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            out[y, x] = (line[x] + pred) & 255
    return out.astype(np.uint8).reshape(height, width, 3)


def png_size(path):
    """(width, height) of an 8-bit RGB PNG, decoded fully."""
    pixels = png_pixels(path)
    return pixels.shape[1], pixels.shape[0]


def data_files(out):
    """Every file a run's outputs are made of (relative path -> bytes): not the manifest,
    metrics, logs or the submitted script, which record when and how it ran."""
    files = {}
    for sub in ("scenes", "generated", "campaign"):
        root = os.path.join(out, sub)
        for folder, _, names in os.walk(root):
            for name in names:
                path = os.path.join(folder, name)
                with open(path, "rb") as f:
                    files[os.path.relpath(path, out)] = f.read()
    with open(os.path.join(out, "report.md"), "rb") as f:
        files["report.md"] = f.read()
    return files
