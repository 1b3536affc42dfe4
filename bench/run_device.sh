#!/usr/bin/env bash
# The one device call: unpack the bundle (bench/make_bundle), run every gtest binary
# (the GPU tests run here; CI has no GPU), then each benchmark part bench/device/PART.sh
# named in HB_DEVICE_PARTS (unset: all of them, in file-name order; empty: none). Each part is
# sourced with $bin, $out, $work and the helpers log/now/since; its figures go to
# $out/summary.txt, which is what docs/PERFORMANCE.md quotes.
#   HB_DEVICE_TESTS=0 skips the gtests; HB_DEVICE_TESTS=PATTERN runs the matching ones
#   (HB_DEVICE_SKIP=PATTERN: but not these; default the CPU-only real-data test).
set -uo pipefail
out=${OUT:-$PWD/bench-out}; mkdir -p "$out"
work=${HB_BENCH_WORK:-/tmp/hb-bench}; mkdir -p "$work"
tar -C .dev -xJf .dev/bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
# The tests look for the real data where CI keeps it (../shared/data beside the clone).
mkdir -p "$(dirname "$PWD")/shared" && ln -sfn "$PWD/.dev/data" "$(dirname "$PWD")/shared/data"
bin=$PWD/.dev/bin
log() { echo "== $*" | tee -a "$out/summary.txt"; }
now() { date +%s.%N; }
since() { python3 -c "print(round($(now) - $1, 3))"; }
# The 5 GB synthetic AVIRIS flightline (677 x 16384 x 224 int16) the issues benchmark
# on, made once per call: sets $scene.
ensure_flightline() {
  scene=$work/flightline.hdr
  [[ -f ${scene%.hdr}.img ]] && return
  local t0; t0=$(now)
  "$bin/hyperbatch" -q synth -o "$scene" --lines 16384 --samples 677 --bands 224 --classes 8 --seed 1 \
    --fill-border 0.1 >/dev/null
  log "synth 5 GB flightline: $(since $t0) s"
}

# The scenes of the scaling parts: PATH.hdr of LINES x 677 x 224 int16 (10 % fill
# border, seed 5; 33000 lines a 10 GB) and its truth, made and timed: dist_scene PATH LINES TAG.
dist_scene() {
  local t0; t0=$(now)
  "$bin/hyperbatch" -q synth -o "$1.hdr" --lines "$2" --samples 677 --bands 224 --classes 8 --seed 5 \
    --fill-border 0.1 > /dev/null
  log "$3: synth $(basename "$1") ($2 lines): $(since $t0) s"
}

# The archive's flightlines (the flightline's shape, seeds 1..N) as
# $work/archive/line01..lineNN.hdr, made once per call: sets $dir. archive_flightlines N.
archive_flightlines() {
  dir=$work/archive; mkdir -p "$dir"
  local i name
  # Made eight at a time: one synth is one writer, and a host of many cores writes 32 of
  # them in a fraction of the device call that way.
  for i in $(seq 1 "$1"); do
    printf -v name 'line%02d' "$i"
    [[ -f $dir/$name.img ]] || echo "$i $dir/$name.hdr"
  done | xargs -r -P 8 -L 1 sh -c '"$0" -q synth -o "$2" --lines 16384 --samples 677 --bands 224 \
      --classes 8 --seed "$1" --fill-border 0.1 > /dev/null' "$bin/hyperbatch"
}

log "machine: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | paste -sd';') / $(nproc) cores"
tests=${HB_DEVICE_TESTS:-.}
# Not here: the real-data ENVI test wants every scene of ../shared/data and Spectral
# Python (the bundle carries two scenes); it runs in CI.
skip=${HB_DEVICE_SKIP:-^test_envi_real_data$}
if [[ $tests != 0 ]]; then
  for t in "$bin"/test_*; do
    name=$(basename "$t"); [[ $name =~ $tests && ! $name =~ $skip ]] || continue
    timeout 300 "$t" --gtest_brief=1 > "$out/$name.log" 2>&1; rc=$?
    log "$name: rc=$rc $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/$name.log" | tr '\n' ' ')"
    # Only a few files come back from the device: a failure's messages go into the summary.
    [[ $rc == 0 ]] || grep -E -A6 'Failure|error:|Expected|Which is|FAILED' "$out/$name.log" | head -60 | tee -a "$out/summary.txt"
  done
fi
for part in ${HB_DEVICE_PARTS-$(ls bench/device | sed 's/\.sh$//')}; do
  log "part $part"
  # shellcheck source=/dev/null
  source "bench/device/$part.sh"
done
