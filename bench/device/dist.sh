# Device part for issue 5 (distributed runs), for the nvidia-h200-x2 kind (2 GPUs):
#  * determinism 1 vs 2 GPUs: MNF components (ENVI bytes) and eigenvalues, KNN class maps;
#  * strong scaling 1 -> 2 GPUs, MNF and KNN, on 10 and 40 GB synthetic scenes;
#  * weak scaling: 1 GPU on 10 (20) GB against 2 GPUs on 20 (40) GB;
#  * the write floor (dd into the page cache and to disk);
#  * per-rank time split (I/O, compute, communication) from the -v logs;
#  * allreduce time against message size (bench_allreduce, NCCL and MPI tables).
# Sourced by bench/run_device.sh ($bin, $out, $work, log/now/since). About 5 minutes; 90 GB of disk.
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
# Synthetic scenes of 10, 20 and 40 GB (677 samples x 224 bands int16, 10 % fill border).
synth_scene() {  # NAME LINES
  local t0; t0=$(now)
  "$bin/hyperbatch" -q synth -o "$work/$1.hdr" --lines "$2" --samples 677 --bands 224 --classes 8 --seed 5 \
    --fill-border 0.1 > /dev/null
  log "dist: synth $1 ($2 lines): $(since $t0) s ($gpus GPUs)"
}
synth_scene dist10 33000; synth_scene dist20 66000; synth_scene dist40 132000

# The write floor of this host's disk and page cache: what an output of that size costs.
t0=$(now); dd if=/dev/zero of="$work/dd.bin" bs=8M count=256 status=none; log "dist: dd 2 GiB into the page cache: $(since $t0) s"
t0=$(now); dd if=/dev/zero of="$work/dd.bin" bs=8M count=256 conv=fsync status=none; log "dist: dd 2 GiB to disk (fsync): $(since $t0) s"
# Two writers at once, into two files and into one file: is the page-cache write rate a
# limit of the host or of one file (each buffered write holds the file's inode lock)?
t0=$(now)
dd if=/dev/zero of="$work/dd.bin" bs=8M count=128 status=none & dd if=/dev/zero of="$work/dd2.bin" bs=8M count=128 status=none & wait
log "dist: dd 2 x 1 GiB by two writers into two files: $(since $t0) s"
rm -f "$work/dd.bin" "$work/dd2.bin"
t0=$(now)
dd if=/dev/zero of="$work/dd.bin" bs=8M count=128 conv=notrunc status=none &
dd if=/dev/zero of="$work/dd.bin" bs=8M count=128 seek=128 conv=notrunc status=none & wait
log "dist: dd 2 x 1 GiB by two writers into one file: $(since $t0) s"
rm -f "$work/dd.bin"

# run NAME RANKS ARGS...: one timed distributed run, its -v log kept.
dist_run() {
  local name=$1 ranks=$2; shift 2
  local t0; t0=$(now)
  timeout 200 $mpi -np "$ranks" "$bin/hyperbatch" -v "$@" > "$out/dist_$name.log" 2>&1; local rc=$?
  log "dist $name ($ranks ranks): rc=$rc $(since $t0) s"
  # The whole -v log: its timestamps show the serial parts (start-up, basis, commit).
  grep -vE "ETA|^\s*$|select probe|^(wrote|report|select|overall|  )" "$out/dist_$name.log" | sed 's/^/    /' \
    | tee -a "$out/summary.txt"
}

# MNF and KNN on one scene at 1 and 2 GPUs; determinism checked between the two.
scaling() {  # SCENE
  local scene=$1
  for ranks in 1 2; do
    [[ $ranks -le $gpus ]] || continue
    dist_run "mnf_${scene}_$ranks" $ranks mnf "$work/$scene.hdr" -o "$work/out_mnf_$ranks.hdr" --components 20 --backend cuda
  done
  if cmp -s "$work/out_mnf_1.img" "$work/out_mnf_2.img"; then log "dist: $scene MNF components 1 vs 2 GPUs: identical bytes"
  else log "dist: $scene MNF components 1 vs 2 GPUs: DIFFER"; fi
  python3 - "$work/out_mnf_1.stats.h5" "$work/out_mnf_2.stats.h5" "$scene" <<'PY' 2>&1 | tee -a "$out/summary.txt"
import sys
try:
    import h5py, numpy as np
except ImportError:
    print("== dist: eigenvalue check skipped (no h5py)"); sys.exit(0)
a, b = (h5py.File(p)["mnf/eigenvalues"][()] for p in sys.argv[1:3])
print(f"== dist: {sys.argv[3]} MNF eigenvalues 1 vs 2 GPUs: max relative difference {np.max(np.abs(a - b) / np.abs(a)):.3g}")
PY
  for ranks in 1 2; do
    [[ $ranks -le $gpus ]] || continue
    dist_run "knn_${scene}_$ranks" $ranks knn "$work/$scene.hdr" --truth "$work/${scene}_truth.hdr" --train-per-class 200 \
      -k 5 -o "$work/out_knn_$ranks.hdr" --shard-mode ring
  done
  if cmp -s "$work/out_knn_1.img" "$work/out_knn_2.img"; then log "dist: $scene KNN class maps 1 vs 2 GPUs: identical bytes"
  else log "dist: $scene KNN class maps 1 vs 2 GPUs: DIFFER"; fi
  rm -f "$work"/out_*
}
# Strong scaling at 10 and 40 GB; weak scaling from 1 GPU on 10 (20) GB to 2 GPUs on 20 (40) GB.
for scene in dist10 dist20 dist40; do scaling $scene; done

[[ $gpus -ge 2 ]] && timeout 60 $mpi -np 2 "$bin/bench_allreduce" $((256 << 20)) 2>&1 | tee "$out/dist_allreduce.txt" \
  | tee -a "$out/summary.txt"
rm -f "$work"/dist_* "$work"/dist10* "$work"/dist20* "$work"/dist40*
fi
