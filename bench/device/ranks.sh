# Device part: correctness on every GPU count of the host (not timed): the MPI gtests
# under 2 (4, 8) ranks, then KNN (ring and automatic, MNF features, the split files)
# and MNF on a 4096-line flightline (1.2 GB) at each count, compared byte for byte with
# one GPU. Sourced by bench/run_device.sh ($bin, $out, $work, log/now/since).
gpus=$(nvidia-smi -L | wc -l)
mpi="mpirun --oversubscribe --bind-to none --allow-run-as-root -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE"
mpi+=" --mca pml ob1 --mca btl self,vader --mca osc ^ucx"
for p in 2 4 8; do
  [[ $p -le $gpus ]] || continue
  for t in test_device_comm test_rank_gpu test_decomposition test_hdf5_parallel; do
    [[ -x $bin/$t ]] || continue
    timeout 120 $mpi -np $p "$bin/$t" --gtest_brief=1 > "$out/ranks_$t.log" 2>&1; rc=$?
    log "ranks: mpirun -np $p $t: rc=$rc $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/ranks_$t.log" | tr '\n' ' ')"
  done
done
rdir=$work/ranks; mkdir -p "$rdir"
"$bin/hyperbatch" -q synth -o "$rdir/s.hdr" --lines 4096 --samples 677 --bands 224 --classes 8 --seed 3 \
  --fill-border 0.1 > /dev/null
runs() {  # P: every command of the check on P GPUs, outputs in $rdir/P/
  local p=$1 o=$rdir/$1; mkdir -p "$o"
  local h="timeout 120 $mpi -np $p $bin/hyperbatch -q"
  $h knn "$rdir/s.hdr" --truth "$rdir/s_truth.hdr" --train-per-class 200 -k 5 -o "$o/ring.hdr" --shard-mode ring \
    --backend cuda > /dev/null 2>&1 || log "ranks: knn ring on $p GPUs failed"
  $h knn "$rdir/s.hdr" --truth "$rdir/s_truth.hdr" --train-fraction 0.02 -k 7 -o "$o/auto.hdr" --backend cuda \
    --save-training "$o/train.h5" --export-split "$o/split.json" > /dev/null 2>&1 || log "ranks: knn auto on $p GPUs failed"
  $h knn "$rdir/s.hdr" --truth "$rdir/s_truth.hdr" --train-per-class 100 -k 5 --features mnf:8 -o "$o/mnf_features.hdr" \
    --backend cuda > /dev/null 2>&1 || log "ranks: knn mnf:8 on $p GPUs failed"
  $h knn "$rdir/s.hdr" --train "$rdir/1/train.h5" -k 1024 -o "$o/k1024.hdr" --backend cuda > /dev/null 2>&1 \
    || log "ranks: knn k=1024 on $p GPUs failed"
  $h mnf "$rdir/s.hdr" -o "$o/mnf.hdr" --components 10 --noise mean3x3 --backend cuda > /dev/null 2>&1 \
    || log "ranks: mnf on $p GPUs failed"
}
runs 1
for p in 2 4 8; do
  [[ $p -le $gpus ]] || continue
  runs $p
  for f in ring.img ring_confidence.img auto.img auto_confidence.img train.h5 split.json mnf_features.img k1024.img \
           k1024_confidence.img mnf.img; do
    cmp -s "$rdir/1/$f" "$rdir/$p/$f" && same=same || same=DIFFERS
    log "ranks: $f on $p GPUs against 1: $same"
  done
done
# The class maps on the GPU against the CPU backend (one process).
"$bin/hyperbatch" -q knn "$rdir/s.hdr" --truth "$rdir/s_truth.hdr" --train-per-class 200 -k 5 -o "$rdir/cpu.hdr" \
  --backend cpu > /dev/null 2>&1
cmp -s "$rdir/cpu.img" "$rdir/1/ring.img" && same=same || same=DIFFERS
log "ranks: knn class map, GPU against CPU: $same"
rm -rf "$rdir"
