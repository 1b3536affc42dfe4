#!/usr/bin/env bash
# One device session for MNF: GPU tests, the floors, the kernel benchmark, and the
# end-to-end run on a 677 x 16384 x 224 int16 flightline against PyTorch (same GPU)
# and Spectral Python (CPU, subset, scaled). Expects a bundle made by bench/make_bundle
# at .dev/bundle.tar.xz; writes logs and JSON under $OUT (or ./bench-out).
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

log "machine: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader) / $(nproc) cores"
for t in test_median9 test_mnf_moments test_mnf_products test_mnf_backends test_mnf_pipeline; do
  "$bin/$t" --gtest_brief=1 > "$out/$t.log" 2>&1; rc=$?
  log "$t: rc=$rc $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/$t.log" | tr '\n' ' ')"
done
# HB_BENCH_QUICK=1: the end-to-end comparison alone (floors and kernels already taken).
quick=${HB_BENCH_QUICK:-0}
if [[ $quick != 1 ]]; then
  "$bin/bench_floors" | tee "$out/floors.txt"
  "$bin/bench_mnf_kernels" > "$out/mnf_kernels.txt" 2>&1; cat "$out/mnf_kernels.txt"
fi

scene=$work/flightline.hdr
t0=$(now)
"$bin/hyperbatch" -q synth -o "$scene" --lines 16384 --samples 677 --bands 224 --classes 8 --seed 1 --fill-border 0.1 >/dev/null
log "synth 5 GB: $(since $t0) s"
cat "${scene%.hdr}.img" > /dev/null  # page cache warm for every contender alike
t0=$(now); cat "${scene%.hdr}.img" > /dev/null; log "read input: $(since $t0) s"
t0=$(now); head -c $((16384 * 677 * 20 * 4)) /dev/zero > "$work/write_floor.bin"; log "write 20-component output: $(since $t0) s"
rm -f "$work/write_floor.bin"
backends="cuda cpu"; [[ $quick == 1 ]] && backends=cuda
for backend in $backends; do
  t0=$(now)
  timeout 240 "$bin/hyperbatch" -v mnf "$scene" -o "$work/mnf_$backend.h5" --components 20 --backend $backend \
    > "$out/mnf_$backend.log" 2>&1; rc=$?
  log "hyperbatch mnf --backend $backend: rc=$rc $(since $t0) s"; grep -E "pass|eigen|staged" "$out/mnf_$backend.log" | tee -a "$out/summary.txt"
  rm -f "$work/mnf_$backend.h5"
done
t0=$(now)
python3 bench/peers/mnf_torch.py "$scene" --output "$work/torch.raw" --components 20 2>/dev/null | tee -a "$out/summary.txt"
log "pytorch peer, whole process: $(since $t0) s"
rm -f "$work/torch.raw"
[[ $quick == 1 ]] || PYTHONPATH=$PWD/.dev/py timeout 200 python3 bench/peers/mnf_spy.py "$scene" --lines 512 | tee -a "$out/summary.txt"
