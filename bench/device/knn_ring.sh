# Device part: where KNN's time goes across ranks, for hosts of several GPUs. On a 20 GB
# synthetic scene, at 1, 2 and 4 GPUs (as many as the host has):
#  * the host: GPU/CPU topology, and pinned host-to-device bandwidth with 1, 2 and 4
#    GPUs copying at once (bench_floors on each GPU together);
#  * a small training set (1600 rows) round the ring and allgathered, and a ten times
#    larger one round the ring: the ring's per-step cost against the shard size;
#  * each run's -v log: per-rank reading / searching / shards / voting / writing and the
#    GPU's own time of the search (event spans), so host and GPU time can be told apart.
# Sourced by bench/run_device.sh ($bin, $out, $work, log/now/since). About 3 minutes on 4 GPUs.
if ! command -v mpirun > /dev/null; then
  log "knn_ring: no mpirun on this host: part skipped"
else
gpus=$(nvidia-smi -L | wc -l)
mpi="mpirun --oversubscribe --bind-to none --allow-run-as-root -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE"
nvidia-smi topo -m > "$out/knn_ring_topology.txt" 2>&1
lscpu | grep -E '^(Model name|Socket|NUMA node)' >> "$out/knn_ring_topology.txt"
sed 's/^/    /' "$out/knn_ring_topology.txt" | tee -a "$out/summary.txt"

# Pinned host-to-device bandwidth, one GPU alone and several copying at once.
for p in 1 2 4; do
  [[ $p -le $gpus ]] || continue
  for g in $(seq 0 $((p - 1))); do CUDA_VISIBLE_DEVICES=$g "$bin/bench_floors" > "$out/knn_ring_floors_${p}_$g.txt" & done
  wait
  log "knn_ring: pinned host-to-device with $p GPUs at once (GB/s each): $(grep -h 'host-to-device' \
    "$out"/knn_ring_floors_${p}_*.txt | awk '{print $(NF-1)}' | paste -sd' ')"
done

scene=$work/ring20
dist_scene "$scene" 66000 knn_ring
ring_run() {  # NAME RANKS PER_CLASS MODE
  local t0; t0=$(now)
  timeout 200 $mpi -np "$2" "$bin/hyperbatch" -v knn "$scene.hdr" --truth "${scene}_truth.hdr" --train-per-class "$3" \
    -k 5 -o "$work/ring_$1.hdr" --shard-mode "$4" > "$out/knn_ring_$1.log" 2>&1; local rc=$?
  log "knn_ring $1 ($2 ranks, $3 a class, $4): rc=$rc $(since $t0) s"
  grep -E "rank [0-9]+: rows|knn classification|knn search on GPU|k-selection on the GPU|training rows" "$out/knn_ring_$1.log" \
    | sed 's/^/    /' | tee -a "$out/summary.txt"
  [[ $2 == 1 ]] && return
  if cmp -s "$work/ring_$1.img" "$work/ring_$5.img"; then log "knn_ring $1: class map identical to $5"
  else log "knn_ring $1: class map DIFFERS from $5"; fi
}
for per_class in 200 2000; do
  ring_run "${per_class}_1" 1 $per_class auto
  for p in 2 4; do
    [[ $p -le $gpus ]] || continue
    ring_run "${per_class}_ring_$p" $p $per_class ring "${per_class}_1"
  done
  [[ 4 -le $gpus ]] && ring_run "${per_class}_allgather_4" 4 $per_class allgather "${per_class}_1"
done
rm -f "$scene".* "${scene}"_* "$work"/ring_*
fi
