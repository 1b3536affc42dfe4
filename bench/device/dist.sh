# Device part for issue 5 (distributed runs), for the nvidia-h200-x2 kind (2 GPUs):
#  * determinism 1 vs 2 GPUs: MNF components (ENVI bytes) and eigenvalues, KNN class maps;
#  * strong scaling 1 -> 2 GPUs, MNF and KNN, on a 10 GB synthetic scene;
#  * weak scaling: 1 GPU on 5 GB against 2 GPUs on 10 GB;
#  * per-rank time split (I/O, compute, communication) from the -v logs;
#  * allreduce time against message size (bench_allreduce, NCCL and MPI tables).
# Sourced by bench/run_device.sh ($bin, $out, $work, log/now/since). About 4 minutes.
if ! command -v mpirun > /dev/null; then
  log "dist: no mpirun on this host: part skipped"
else
gpus=$(nvidia-smi -L | wc -l)
# --bind-to none: Open MPI binds each rank to one core when np <= 2, which would leave
# the host passes (reading, widening, packing) one core per rank on a 32-core host.
mpi="mpirun --oversubscribe --bind-to none --allow-run-as-root -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE"
# The MPI gtests under 2 ranks (run_device.sh runs them as one process): NCCL on two GPUs.
for t in test_device_comm test_decomposition test_hdf5_parallel; do
  timeout 120 $mpi -np 2 "$bin/$t" --gtest_brief=1 > "$out/dist_$t.log" 2>&1; rc=$?
  log "dist: mpirun -np 2 $t: rc=$rc $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/dist_$t.log" | tr '\n' ' ')"
done
ensure_flightline; half=$scene  # the shared 5 GB flightline (16384 lines) for weak scaling
big=$work/dist10.hdr
t0=$(now)
"$bin/hyperbatch" -q synth -o "$big" --lines 33000 --samples 677 --bands 224 --classes 8 --seed 5 --fill-border 0.1 > /dev/null
log "dist: synth 10 GB scene: $(since $t0) s ($gpus GPUs)"

# run NAME RANKS ARGS...: one timed distributed run, its -v log kept, per-rank split grepped.
dist_run() {
  local name=$1 ranks=$2; shift 2
  local t0; t0=$(now)
  timeout 200 $mpi -np "$ranks" "$bin/hyperbatch" -v "$@" > "$out/dist_$name.log" 2>&1; local rc=$?
  log "dist $name ($ranks ranks): rc=$rc $(since $t0) s"
  # The whole -v log: its timestamps show the serial parts (start-up, basis, commit).
  grep -vE "ETA|^\s*$" "$out/dist_$name.log" | sed 's/^/    /' | tee -a "$out/summary.txt"
}

for ranks in 1 2; do
  [[ $ranks -le $gpus ]] || continue
  dist_run mnf_10g_$ranks $ranks mnf "$big" -o "$work/dist_mnf_$ranks.hdr" --components 20 --backend cuda
done
[[ $gpus -ge 2 ]] && dist_run mnf_5g_1 1 mnf "$half" -o "$work/dist_mnf_half.hdr" --components 20 --backend cuda
if cmp -s "$work/dist_mnf_1.img" "$work/dist_mnf_2.img"; then log "dist: MNF components 1 vs 2 GPUs: identical bytes"
else log "dist: MNF components 1 vs 2 GPUs: DIFFER"; fi
python3 - "$work/dist_mnf_1.stats.h5" "$work/dist_mnf_2.stats.h5" <<'PY' 2>&1 | tee -a "$out/summary.txt"
import sys
try:
    import h5py, numpy as np
except ImportError:
    print("== dist: eigenvalue check skipped (no h5py)"); sys.exit(0)
a, b = (h5py.File(p)["mnf/eigenvalues"][()] for p in sys.argv[1:3])
print(f"== dist: MNF eigenvalues 1 vs 2 GPUs: max relative difference {np.max(np.abs(a - b) / np.abs(a)):.3g}")
PY

truth=${big%.hdr}_truth.hdr
for ranks in 1 2; do
  [[ $ranks -le $gpus ]] || continue
  dist_run knn_10g_$ranks $ranks knn "$big" --truth "$truth" --train-per-class 200 -k 5 -o "$work/dist_knn_$ranks.hdr" \
    --shard-mode ring
done
[[ $gpus -ge 2 ]] && dist_run knn_5g_1 1 knn "$half" --truth "${half%.hdr}_truth.hdr" --train-per-class 200 -k 5 \
  -o "$work/dist_knn_half.hdr"
if cmp -s "$work/dist_knn_1.img" "$work/dist_knn_2.img"; then log "dist: KNN class maps 1 vs 2 GPUs: identical bytes"
else log "dist: KNN class maps 1 vs 2 GPUs: DIFFER"; fi

[[ $gpus -ge 2 ]] && timeout 60 $mpi -np 2 "$bin/bench_allreduce" $((256 << 20)) 2>&1 | tee "$out/dist_allreduce.txt" \
  | tee -a "$out/summary.txt"
rm -f "$work"/dist_* "$work"/dist10*
fi
