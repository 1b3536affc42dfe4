#!/usr/bin/env bash
# Reading archive products against ENVI: the same cube as an EMIT granule (netCDF4,
# deflate-chunked, as EMIT ships it), as an AVIRIS-Classic delivery (int16 DN + .gain,
# read in physical units) and as ENVI float32. Each is read in full by `ingest` into a
# float32 HDF5 cube (the same bytes written for every format), best of 3; the ratios to
# ENVI are the figures the target (at most 1.2) is about. Runs on a CPU host too.
#   bench/read_formats.sh HYPERBATCH [LINES]     (default 2048 lines x 677 samples x 224 bands)
# HB_MAKE_READ_INPUTS=PATH of bench_make_read_inputs makes the inputs without Python, as
# the device part bench/device/read_formats.sh does (the same values: tests/bench).
set -euo pipefail
cli=$(realpath "${1:?usage: bench/read_formats.sh HYPERBATCH [LINES]}")
tool=${HB_MAKE_READ_INPUTS:+$(realpath "$HB_MAKE_READ_INPUTS")}
lines=${2:-2048}
here=$(cd "$(dirname "$0")/.." && pwd)
work=${HB_BENCH_WORK:-/tmp/hb-read-formats}
rm -rf "$work" && mkdir -p "$work" && cd "$work"
trap 'rm -rf "$work"' EXIT

"$cli" -q synth -o dn.hdr --lines "$lines" --samples 677 --bands 224 --classes 6 --seed 1 >/dev/null
if [[ -n $tool ]]; then
  "$tool" dn.hdr .
else
  PYTHONPATH="$here/tests/io" /usr/bin/python3 - <<'PY'
import os
import numpy as np
import spectral.io.envi as envi
import archive_products as ap
import emit_granules as emit

dn = np.asarray(envi.open("dn.hdr").load(dtype=np.int16, scale=False))
factors = ap.classic_factors(dn.shape[2])
physical = (dn.astype(np.float64) / factors).astype(np.float32)
ap.write_envi("envi.img", physical)                          # the ENVI reference: float32 BIP
ap.write_envi(ap.IMAGE, dn)                                  # AVIRIS-Classic: int16 DN + .gain
with open(ap.FLIGHTLINE + "rdn_c.gain", "w") as f:
    for b, factor in enumerate(factors):
        f.write(f"{factor:10.3f} {b + 1:4d}\n")
wl, fwhm, good = emit.band_parameters(dn.shape[2])
emit.write_granule("granule.nc", "radiance", physical, wl, fwhm, good, chunk_rows=16)
PY
fi

best() {  # best of 3 wall-clock seconds of: hyperbatch ingest ARGS
  local best=""
  for _ in 1 2 3; do
    rm -f out.h5
    local t0 t1; t0=$(date +%s.%N)
    "$cli" -q ingest "$@" -o out.h5 >/dev/null
    t1=$(date +%s.%N)
    best=$(python3 -c "t=$t1-$t0; b='$best'; print(t if not b else min(t, float(b)))")
  done
  echo "$best"
}
envi=$(best envi.hdr)
granule=$(best granule.nc)
classic=$(best f080611t01p00r07rdn_c_sc01_ort_img --units physical)
printf 'cube %s x 677 x 224: ENVI float32 %.3f s, EMIT granule %.3f s (%.2fx), AVIRIS-Classic + .gain %.3f s (%.2fx)\n' \
  "$lines" "$envi" "$granule" "$(python3 -c "print($granule/$envi)")" "$classic" "$(python3 -c "print($classic/$envi)")"
