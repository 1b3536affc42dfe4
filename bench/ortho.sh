#!/usr/bin/env bash
# ortho at scale, on the host it runs on (GPU host or workstation):
#  1. `ortho` of the 5 GB synthetic flightline (16384 x 677 x 224 int16) onto a north-up
#     grid 2 degrees off its track, on the CPU and (when there is one) the GPU, against
#     the floors measured in the same run: reading the product (cat) and writing the
#     result's bytes (dd, fdatasync).
#  2. The flightline's class map onto the same grid as ENVI and as a Cloud-Optimized
#     GeoTIFF (target: the GeoTIFF within 1.5x the ENVI time). Needs GDAL on the host.
# Usage: bench/ortho.sh [HYPERBATCH] [WORK_DIR]     (prints a summary; WORK_DIR needs ~25 GB)
#   HB_ORTHO_LINES / HB_ORTHO_BANDS shrink the flightline (default 16384 lines, 224 bands).
set -uo pipefail
hb=${1:-build/cuda/src/hyperbatch}
work=${2:-/tmp/hb-ortho-bench}; mkdir -p "$work"
py=${HB_PYTHON:-/usr/bin/python3}
now() { date +%s.%N; }
since() { "$py" -c "print(round($(now) - $1, 3))"; }
lines=${HB_ORTHO_LINES:-16384}; bands=${HB_ORTHO_BANDS:-224}
scene=$work/flightline.hdr
if [[ ! -f $work/flightline.img ]]; then
  "$hb" -q synth -o "$scene" --lines "$lines" --samples 677 --bands "$bands" --classes 8 --seed 1 --fill-border 0.1 >/dev/null
fi
# The GLT: each grid pixel's centre rotated back into the scene; outside = 0 (no data).
"$py" - "$work/flightline_glt" "$lines" <<'PY'
import sys, numpy as np
lines, samples, angle = int(sys.argv[2]), 677, np.deg2rad(2.0)
c, s = np.cos(angle), np.sin(angle)
gl, gs = int(lines * c + samples * s) + 1, int(samples * c + lines * s) + 1
y, x = np.mgrid[0:gl, 0:gs].astype(np.float32) + 0.5
x -= lines * s  # the scene's first line starts at the top right of the grid
line = np.floor(y * c - x * s).astype(np.int32); sample = np.floor(x * c + y * s).astype(np.int32)
ok = (line >= 0) & (line < lines) & (sample >= 0) & (sample < samples)
glt = np.zeros((gl, gs, 2), np.int32); glt[..., 0][ok] = sample[ok] + 1; glt[..., 1][ok] = line[ok] + 1
glt.tofile(sys.argv[1] + ".img")
open(sys.argv[1] + ".hdr", "w").write(f"ENVI\nsamples = {gs}\nlines = {gl}\nbands = 2\nheader offset = 0\n"
  "data type = 3\ninterleave = bip\nbyte order = 0\nmap info = {UTM, 1, 1, 500000, 4200000, 5, 5, 11, North, WGS-84, units=Meters}\n")
PY
glt=$work/flightline_glt.hdr
out_bytes=$("$py" -c "import re;h=open('$glt').read();g=lambda k:int(re.search(k+r' = (\d+)',h).group(1));print(g('lines')*g('samples')*$bands*2)")
sync; t0=$(now); cat "$work/flightline.img" > /dev/null; echo "read floor   (cat, $((lines * 677 * bands * 2 / 1000000)) MB product):  $(since $t0) s"
t0=$(now); dd if=/dev/zero of="$work/floor.img" bs=64M count=$((out_bytes / 67108864 + 1)) conv=fdatasync status=none
echo "write floor  (dd, $((out_bytes / 1000000)) MB result):       $(since $t0) s"; rm -f "$work/floor.img"
for backend in cpu cuda; do
  rm -f "$work"/map_$backend.*; sync; t0=$(now)
  if "$hb" -q ortho "$scene" --glt "$glt" -o "$work/map_$backend.hdr" --backend $backend > /dev/null 2>"$work/err"; then
    echo "ortho --backend $backend (ENVI out):        $(since $t0) s"
  else echo "ortho --backend $backend: $(head -1 "$work/err")"; fi
done
cmp -s "$work/map_cpu.img" "$work/map_cuda.img" && echo "cpu and cuda outputs: identical bytes"
rm -f "$work"/map_*
for ext in hdr tif; do
  rm -f "$work/classes_map.$ext"; sync; t0=$(now)
  if "$hb" -q ortho "$work/flightline_truth.hdr" --glt "$glt" -o "$work/classes_map.$ext" > /dev/null 2>"$work/err"; then
    echo "class map onto the grid as .$ext:            $(since $t0) s"
  else echo "class map as .$ext: $(head -1 "$work/err")"; fi
done
