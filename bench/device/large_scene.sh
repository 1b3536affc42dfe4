# Device part: one large scene on 1, 2, 4 and 8 GPUs, those the host has (the node-scale
# issue's goal 2 and the 8-GPU run): HB_LARGE_LINES lines of 677 x 224 int16 (default
# 528000, 160 GB), KNN with the ring and with the automatic shard mode (k 5, 200 a
# class), and full MNF (statistics, transform, 10 components to tmpfs); the read floor
# (the scene read by 32 readers at once from the page cache) beside them. Each output at
# P GPUs is compared with 1 GPU's. HB_LARGE_RUNS picks among knn_ring, knn_auto and mnf
# (default all three). Sourced by bench/run_device.sh ($bin, $out, $work, log/now/since,
# dist_scene).
gpus=$(nvidia-smi -L | wc -l)
lines=${HB_LARGE_LINES:-528000}
big=$work/large
dist_scene "$big" "$lines" large
bytes=$(stat -c %s "$big.img")
gb=$(python3 -c "print(round($bytes / 1e9, 1))")
mpi="mpirun --oversubscribe --bind-to none --allow-run-as-root -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE"
mpi+=" --mca pml ob1 --mca btl self,vader --mca osc ^ucx"
piece=$(( bytes / 32 / 1048576 + 1 ))
t0=$(now)
for i in $(seq 0 31); do dd if="$big.img" of=/dev/null bs=1M skip=$(( i * piece )) count=$piece status=none & done; wait
floor=$(since $t0)
log "large: $gb GB scene; read floor (32 readers, page cache) $floor s, $(python3 -c "print(round($gb / $floor, 1))") GB/s"
large_run() {  # NAME P OUTPUT ARGS...
  local name=$1 p=$2 output=$3; shift 3
  rm -f "$output" "${output%.*}".*
  sync
  local t0; t0=$(now)
  timeout 240 $mpi -np "$p" "$bin/hyperbatch" -v "$@" -o "$output" > "$out/large_${name}_$p.log" 2>&1; local rc=$?
  local took; took=$(since $t0)
  [[ $p == 1 ]] && declare -g "one_$name=$took"
  local first="one_$name"
  log "large $name, $p GPUs: rc=$rc $took s, E = $(python3 -c "print(round(100 * ${!first} / ($p * $took), 1))") %," \
    "$(python3 -c "print(round($gb / $took / $p, 2))") GB/s a GPU"
  grep -E "statistics pass:|transform pass:|classification pass|rank 0: rows|done .* after" "$out/large_${name}_$p.log" \
    | head -6 | sed 's/^/    /' | tee -a "$out/summary.txt"
  if [[ $p == 1 ]]; then cp "${output%.*}.img" "$work/large_${name}_1.img"
  elif cmp -s "${output%.*}.img" "$work/large_${name}_1.img"; then log "large $name: $p GPUs give 1 GPU's bytes"
  else log "large $name: $p GPUs DIFFER from 1 GPU"; fi
}
runs=${HB_LARGE_RUNS:-knn_ring knn_auto mnf}
for p in 1 2 4 8; do
  [[ $p -le $gpus ]] || continue
  for mode in ring auto; do
    [[ " $runs " == *" knn_$mode "* ]] || continue
    large_run "knn_$mode" $p "$work/large_knn.hdr" knn "$big.hdr" --truth "${big}_truth.hdr" --train-per-class 200 -k 5 \
      --shard-mode $mode --backend cuda
  done
  [[ " $runs " == *" mnf "* ]] && large_run mnf $p /dev/shm/large_mnf.hdr mnf "$big.hdr" --components 10 --backend cuda
done
rm -f "$big".* "${big}_"* "$work"/large_*.img /dev/shm/large_mnf.*
