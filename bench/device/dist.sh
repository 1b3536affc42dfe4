# Device part for issues 5 and 9 (distributed runs), for hosts of 2, 4 or 8 GPUs; it
# runs at every power-of-two GPU count the host has:
#  * the MPI gtests at 2, 4, 8 ranks (NCCL on that many GPUs; each rank on its own GPU);
#  * scenes of 10, 20, 40 (and on 8 GPUs 80) GB: each at 1, 2, 4, 8 GPUs up to its
#    size in tens of GB, so strong scaling runs along a scene and weak scaling (10 GB a
#    GPU) along the diagonal; 40 GB always runs at 1, 2 and 4 where the GPUs exist;
#  * with 2 or 4 GPUs, KNN and MNF (to tmpfs) on an 80 GB scene at each GPU count;
#  * determinism against 1 GPU: MNF components (ENVI bytes) and eigenvalues, KNN class maps;
#  * the write floor (dd into the page cache and to disk);
#  * per-rank time split (I/O, compute, communication) from the -v logs;
#  * allreduce and ring send/recv time against message size (bench_allreduce,
#    bench_sendrecv: NCCL and MPI tables).
# Sourced by bench/run_device.sh ($bin, $out, $work, log/now/since). About 9 minutes on
# two GPUs (the 80 GB scene about 3 of them), 11 on four; the largest scene and its
# outputs on disk at once (81 GB). Two calls keep each under the device's 10 minutes:
# HB_DIST_SCENES="1 2 4" HB_DIST_80=0 (gtests, 10-40 GB), then HB_DIST_SCENES= and
# HB_DIST_80=1 with HB_DEVICE_TESTS=0 (80 GB, collectives).
if ! command -v mpirun > /dev/null; then
  log "dist: no mpirun on this host: part skipped"
else
gpus=$(nvidia-smi -L | wc -l)
# --bind-to none: Open MPI binds each rank to one core when np <= 2, which would leave
# the host passes (reading, widening, packing) one core per rank on a 32-core host.
# One node needs shared memory only: ob1 over vader instead of UCX, whose start-up
# takes about 0.2 s of every process's launch (processes up in 0.15-0.21 s instead of
# 0.37-0.40 s on an H100 host; docs/PERFORMANCE.md, "Scaling model").
mpi="mpirun --oversubscribe --bind-to none --allow-run-as-root -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE"
mpi+=" --mca pml ob1 --mca btl self,vader --mca osc ^ucx"
# The MPI gtests under 2, 4, 8 ranks (run_device.sh runs them as one process): NCCL on that many GPUs.
for p in 2 4 8; do
  [[ $p -le $gpus && -n ${HB_DIST_SCENES-x} ]] || continue
  for t in test_device_comm test_rank_gpu test_decomposition test_hdf5_parallel; do
    timeout 120 $mpi -np $p "$bin/$t" --gtest_brief=1 > "$out/dist_$t.log" 2>&1; rc=$?
    log "dist: mpirun -np $p $t: rc=$rc $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/dist_$t.log" | tr '\n' ' ')"
  done
done
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
  # Each run starts with no dirty pages of the one before (the scene just made, the last
  # run's outputs): its own writes are timed, not the disk's flushing of someone else's.
  sync
  local t0; t0=$(now)
  timeout 200 $mpi -np "$ranks" "$bin/hyperbatch" -v "$@" > "$out/dist_$name.log" 2>&1; local rc=$?
  local took; took=$(since $t0)
  # In the processes: the last rank's "done" (seconds after its process started), that
  # is the whole command less mpirun's launch of the ranks and their exit.
  local inside
  inside=$(grep -oE "done [0-9.]+ s after the process started" "$out/dist_$name.log" | awk '{print $2}' \
    | sort -g | tail -1)
  log "dist $name ($ranks ranks): rc=$rc $took s, ${inside:-?} s in the processes"
  # The whole -v log: its timestamps show the serial parts (start-up, basis, commit).
  grep -vE "ETA|^\s*$|k-selection|^(wrote|report|select|overall|  )" "$out/dist_$name.log" | sed 's/^/    /' \
    | tee -a "$out/summary.txt"
}

# MNF and KNN on one scene at each GPU count in $counts; determinism against 1 GPU.
same_as_one_gpu() {  # WHAT FILE1 FILEP P
  if cmp -s "$2" "$3"; then log "dist: $1 1 vs $4 GPUs: identical bytes"; else log "dist: $1 1 vs $4 GPUs: DIFFER"; fi
}
eigen_diff() {  # SCENE P
  python3 - "$work/out_mnf_1.stats.h5" "$work/out_mnf_$2.stats.h5" "$1" "$2" <<'PY' 2>&1 | tee -a "$out/summary.txt"
import sys
try:
    import h5py, numpy as np
except ImportError:
    print("== dist: eigenvalue check skipped (no h5py)"); sys.exit(0)
a, b = (h5py.File(p)["mnf/eigenvalues"][()] for p in sys.argv[1:3])
print(f"== dist: {sys.argv[3]} MNF eigenvalues 1 vs {sys.argv[4]} GPUs: max relative difference {np.max(np.abs(a - b) / np.abs(a)):.3g}")
PY
}
scaling() {  # SCENE COUNT...
  local scene=$1 ranks; shift
  for ranks in "$@"; do
    dist_run "mnf_${scene}_$ranks" $ranks mnf "$work/$scene.hdr" -o "$work/out_mnf_$ranks.hdr" --components 20 --backend cuda
    [[ $ranks == 1 ]] && continue
    same_as_one_gpu "$scene MNF components" "$work/out_mnf_1.img" "$work/out_mnf_$ranks.img" $ranks
    eigen_diff $scene $ranks
  done
  for ranks in "$@"; do
    dist_run "knn_${scene}_$ranks" $ranks knn "$work/$scene.hdr" --truth "$work/${scene}_truth.hdr" --train-per-class 200 \
      -k 5 -o "$work/out_knn_$ranks.hdr" --shard-mode ring
    [[ $ranks == 1 ]] && continue
    same_as_one_gpu "$scene KNN class maps" "$work/out_knn_1.img" "$work/out_knn_$ranks.img" $ranks
  done
  rm -f "$work"/out_mnf_*  # the class maps stay for knn_auto
}
# KNN with the shard mode chosen for the training set (allgather for these 1600 rows),
# against the one-GPU class map the ring runs left: knn_auto SCENE COUNT...
knn_auto() {
  local scene=$1 ranks; shift
  for ranks in "$@"; do
    [[ $ranks == 1 ]] && continue
    dist_run "knn_auto_${scene}_$ranks" $ranks knn "$work/$scene.hdr" --truth "$work/${scene}_truth.hdr" \
      --train-per-class 200 -k 5 -o "$work/out_knn_auto_$ranks.hdr"
    same_as_one_gpu "$scene KNN class maps (automatic shard mode)" "$work/out_knn_1.img" "$work/out_knn_auto_$ranks.img" $ranks
  done
}
# MNF with its components written to memory (tmpfs): MNF on storage that outruns this
# VM's disk, whose fsync'd 1.6 GB/s caps the runs on disk: mnf_tmpfs SCENE COUNT...
mnf_tmpfs() {
  local scene=$1 ranks; shift
  [[ -d /dev/shm ]] || return 0
  for ranks in "$@"; do
    dist_run "mnf_${scene}_tmpfs_$ranks" $ranks mnf "$work/$scene.hdr" -o "/dev/shm/out_mnf_$ranks.hdr" \
      --components 20 --backend cuda
    [[ $ranks == 1 ]] || same_as_one_gpu "$scene MNF components (tmpfs)" /dev/shm/out_mnf_1.img "/dev/shm/out_mnf_$ranks.img" $ranks
  done
  rm -f /dev/shm/out_mnf_*
}
# A scene of 10 m GB runs on 1, 2, 4, 8 GPUs up to m (and the host's GPUs): strong
# scaling along each scene, weak scaling (10 GB a GPU) along the diagonal.
# Scenes (dist_scene: 677 samples x 224 bands int16, 10 % fill border) are made when
# their turn comes and removed after it.
for m in ${HB_DIST_SCENES-1 2 4 8}; do
  [[ $m -le 4 || $m -le $gpus ]] || continue
  counts=(); for p in 1 2 4 8; do [[ $p -le $m && $p -le $gpus ]] && counts+=($p); done
  dist_scene "$work/dist$((10 * m))" $((33000 * m)) dist
  scaling dist$((10 * m)) "${counts[@]}"
  if [[ $m == 4 ]]; then
    mnf_tmpfs dist40 "${counts[@]}"
    knn_auto dist40 "${counts[@]}"  # against the one-GPU class map scaling left
  fi
  rm -f "$work"/out_* "$work/dist$((10 * m))".* "$work/dist$((10 * m))"_*
done

# An 80 GB scene where the loop above made none (fewer than 8 GPUs): the fixed seconds
# (launch, draw, commit) weigh half what they do at 40 GB. KNN (ring, then automatic)
# and MNF to tmpfs (its 14 GB of components would meet the disk's floor), only where
# the disk holds the scene, its truth and 0.6 GB of class maps.
if [[ ${HB_DIST_80:-1} == 1 ]] && (( gpus >= 2 && gpus < 8 )) && (( $(df --output=avail -BG "$work" | tail -1 | tr -dc 0-9) >= 90 )); then
  dist_scene "$work/dist80" 264000 dist
  counts=(); for p in 1 2 4; do [[ $p -le $gpus ]] && counts+=($p); done
  for ranks in "${counts[@]}"; do
    dist_run "knn_dist80_$ranks" $ranks knn "$work/dist80.hdr" --truth "$work/dist80_truth.hdr" --train-per-class 200 \
      -k 5 -o "$work/out_knn_$ranks.hdr" --shard-mode ring
    [[ $ranks == 1 ]] || same_as_one_gpu "dist80 KNN class maps" "$work/out_knn_1.img" "$work/out_knn_$ranks.img" $ranks
  done
  knn_auto dist80 "${counts[@]}"
  mnf_tmpfs dist80 "${counts[@]}"
  rm -f "$work"/out_* "$work"/dist80.* "$work"/dist80_*
fi

# Collectives against message size at every GPU count above one.
for p in 2 4 8; do
  [[ $p -le $gpus ]] || continue
  for c in allreduce sendrecv; do
    timeout 90 $mpi -np $p "$bin/bench_$c" $((256 << 20)) 2>&1 | tee "$out/dist_${c}_$p.txt" | tee -a "$out/summary.txt"
  done
done
rm -f "$work"/dist*
fi
