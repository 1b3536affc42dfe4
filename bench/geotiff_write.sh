#!/usr/bin/env bash
# GeoTIFF against ENVI (issue 30's target: writing a class map as a Cloud-Optimized
# GeoTIFF at most 1.5x writing it as ENVI), on the host it runs on (needs GDAL).
# The class map has the 5 GB flightline's shape: 16384 x 677, uint16, ENVI
# Classification with a colour table (a KNN class map of a synthetic scene of that
# shape). `hyperbatch ortho` with an identity GLT (the grid is the scene) writes it, so
# both runs read and gather the same and differ only in the output format. Each format
# REPS times, alternating; medians of wall and CPU (user + system) seconds. With
# BASELINE=OTHER_HYPERBATCH (its libhb_gdal.so beside it), that build's COG write joins
# the loop, and its COG must be the same bytes.
# Then the COG encoder alone (gdal_translate of the ENVI map, GDAL building the
# overviews through its temporary file) and what the levers left would save: no
# overviews, DEFLATE (for readers without ZSTD) instead of ZSTD, 8-bit samples instead of 16.
# Usage: [BASELINE=...] bench/geotiff_write.sh [HYPERBATCH] [WORK_DIR] [REPS]
set -uo pipefail
hb=${1:-build/ci/src/hyperbatch}
work=${2:-/tmp/hb-geotiff-bench}; mkdir -p "$work"
reps=${3:-7}
py=${HB_PYTHON:-/usr/bin/python3}
lines=16384 samples=677

if [[ ! -f $work/classes.img ]]; then
  "$hb" -q synth -o "$work/scene.hdr" --lines $lines --samples $samples --bands 4 --classes 8 --seed 1 >/dev/null || exit 1
  "$hb" -q knn "$work/scene.hdr" --truth "$work/scene_truth.hdr" --train-per-class 100 -k 5 --backend cpu \
    -o "$work/classes.hdr" >/dev/null || exit 1
fi
"$py" - "$work/identity_glt" $lines $samples <<'PY'
import sys, numpy as np
base, lines, samples = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
glt = np.empty((lines, samples, 2), np.int32)
glt[..., 0] = np.arange(1, samples + 1, dtype=np.int32)[None, :]
glt[..., 1] = np.arange(1, lines + 1, dtype=np.int32)[:, None]
glt.tofile(base + ".img")
open(base + ".hdr", "w").write(f"ENVI\nsamples = {samples}\nlines = {lines}\nbands = 2\nheader offset = 0\n"
  "data type = 3\ninterleave = bip\nbyte order = 0\n"
  "map info = {UTM, 1, 1, 500000, 4200000, 5, 5, 11, North, WGS-84, units=Meters}\n")
PY

# One write with hyperbatch HB: prints "wall cpu" seconds (wall to the millisecond from
# the shell's clock, CPU from time(1)).
write_once() {  # HB OUT
  local bin=$1 out=$2 start end
  rm -f "$work/$out" "$work/$out.aux.xml"; [[ $out == *.hdr ]] && rm -f "$work/${out%.hdr}.img"; sync
  start=$EPOCHREALTIME
  /usr/bin/time -f "%U %S" -o "$work/time" \
    "$bin" -q ortho "$work/classes.hdr" --glt "$work/identity_glt.hdr" -o "$work/$out" >/dev/null || exit 1
  end=$EPOCHREALTIME
  awk -v wall="$("$py" -c "print($end - $start)")" '{printf "%.3f %.3f\n", wall, $1 + $2}' "$work/time"
}
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
baseline=${BASELINE:-}

: > "$work/envi.txt"; : > "$work/cog.txt"; : > "$work/baseline.txt"
for ((r = 0; r < reps; r++)); do
  write_once "$hb" map.hdr >> "$work/envi.txt"
  write_once "$hb" map.tif >> "$work/cog.txt"
  [[ -n $baseline ]] && write_once "$baseline" map_baseline.tif >> "$work/baseline.txt"
done

row() {  # LABEL FILE
  local wall cpu; wall=$(cut -d' ' -f1 "$2" | median); cpu=$(cut -d' ' -f2 "$2" | median)
  printf '%-44s %8s %8s %10s\n' "$1" "$wall" "$cpu" "$("$py" -c "print(f'{$wall / $envi_wall:.2f}x')")"
}
envi_wall=$(cut -d' ' -f1 "$work/envi.txt" | median)
echo "host: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(gdalinfo --version | cut -d, -f1)"
echo "class map $lines x $samples uint16 ($(stat -c %s "$work/map.img") bytes as ENVI, $(stat -c %s "$work/map.tif") as COG), $reps runs each, medians"
printf '%-44s %8s %8s %10s\n' "write" "wall s" "cpu s" "wall/ENVI"
row "ENVI (.hdr + .img)" "$work/envi.txt"
row "COG (.tif)" "$work/cog.txt"
if [[ -n $baseline ]]; then
  row "COG (.tif), baseline build" "$work/baseline.txt"
  cmp -s "$work/map.tif" "$work/map_baseline.tif" && same="identical" || same="DIFFERENT"
  echo "COG bytes of this build and the baseline: $same"
fi

# The encoder alone: prints "wall cpu bytes" medians of REPS translations.
encode() {  # [ENV=VALUE...] -- [CREATION OPTIONS...]
  local envs=() cos=(); while [[ $1 != -- ]]; do envs+=("$1"); shift; done; shift
  : > "$work/enc.txt"
  for ((r = 0; r < reps; r++)); do
    rm -f "$work/enc.tif"
    env "${envs[@]}" /usr/bin/time -f "%e %U %S" -o "$work/time" gdal_translate -q -of COG -co NUM_THREADS=ALL_CPUS \
      "$@" "$work/map.img" "$work/enc.tif" || exit 1
    awk '{printf "%.3f %.3f\n", $1, $2 + $3}' "$work/time" >> "$work/enc.txt"
  done
  echo "$(cut -d' ' -f1 "$work/enc.txt" | median) $(cut -d' ' -f2 "$work/enc.txt" | median) $(stat -c %s "$work/enc.tif")"
}
write_once "$hb" map.hdr > /dev/null
zstd=(-co COMPRESS=ZSTD -co LEVEL=1 -co PREDICTOR=NO)
printf '\n%-52s %8s %8s %10s\n' "gdal_translate -of COG of the ENVI map" "wall s" "cpu s" "bytes"
printf '%-52s %8s %8s %10s\n' "ZSTD 1, the driver's temporary overviews (ZSTD 1)" $(encode ZSTD_LEVEL_OVERVIEW=1 -- "${zstd[@]}")
printf '%-52s %8s %8s %10s\n' "no overviews" $(encode ZSTD_LEVEL_OVERVIEW=1 -- "${zstd[@]}" -co OVERVIEWS=NONE)
printf '%-52s %8s %8s %10s\n' "DEFLATE 1 instead of ZSTD 1" $(encode ZSTD_LEVEL_OVERVIEW=1 -- -co COMPRESS=DEFLATE -co LEVEL=1)
printf '%-52s %8s %8s %10s\n' "8-bit samples (-ot Byte) instead of 16" $(encode ZSTD_LEVEL_OVERVIEW=1 -- "${zstd[@]}" -ot Byte)
