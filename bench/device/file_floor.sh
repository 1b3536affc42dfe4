# Device part: bench_file_to_device (bench/file_to_device.cu) at one GPU and at every GPU
# of the host at once, one process a GPU, each moving its own 5 GB flightline from the
# page cache: what the host's copy into pinned buffers costs a rank, and whether DMA
# straight from the page cache (pinned in place) scales where the copy does not. The
# flightlines are the archive part's. Sourced by bench/run_device.sh ($bin, $out, $work,
# log/now/since, archive_flightlines).
gpus=$(nvidia-smi -L | wc -l)
archive_flightlines "$gpus"
for i in $(seq 1 "$gpus"); do printf -v name 'line%02d' "$i"; cat "$dir/$name.img" > /dev/null; done
# HB_FILE_FLOOR_RUNS: "METHOD CHUNK_MB THREADS [PIECE_KB]" (threads: pread's readers a
# chunk, or the early and cached methods' threads; PIECE_KB: their pieces).
runs=${HB_FILE_FLOOR_RUNS:-"pread 64 1|pread 64 8|register 64 1|register 16 1|pageable 64 1"}
IFS='|' read -ra run_list <<< "$runs"
for run in "${run_list[@]}"; do
  read -r method chunk threads piece <<< "$run"
  for p in 1 "$gpus"; do
    # Every process starts its move at the same moment, after CUDA's start.
    start=$(python3 -c "import time; print(time.time() + 3)")
    for g in $(seq 0 $((p - 1))); do
      printf -v name 'line%02d' $((g + 1))
      CUDA_VISIBLE_DEVICES=$g "$bin/bench_file_to_device" "$dir/$name.img" --method "$method" --chunk-mb "$chunk" \
        --threads "${threads:-1}" --piece-kb "${piece:-256}" --start-at "$start" > "$work/file_floor_$g.txt" 2>&1 &
    done
    wait
    for g in $(seq 0 $((p - 1))); do log "file to device, $p GPUs at once, GPU $g: $(cat "$work/file_floor_$g.txt")"; done
  done
done
