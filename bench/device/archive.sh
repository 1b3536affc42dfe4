# Device part: the archive workload of docs/PERFORMANCE.md ("Archive throughput"):
# `hyperbatch run` over HB_ARCHIVE_SCENES flightlines of 5 GB (677 x 16384 x 224 int16,
# default 8 = 40 GB), steps mnf (scene basis, 10 components) and knn (k 5, 200 per
# class, MNF features), at 1 GPU and at every power of two up to the host's GPUs (or the
# counts in HB_ARCHIVE_GPUS, 1 first), for this build and for the baseline binary
# (hyperbatch_base) when the bundle carries one. HB_ARCHIVE_LAUNCH="plain hwloc" also
# runs each binary under an mpirun whose hardware discovery skips I/O devices
# (HWLOC_COMPONENTS=$HB_ARCHIVE_HWLOC): part launch measures what that saves.
# Beside it the floors: the host reading every scene once in parallel from the page
# cache, and the start-up of one-process commands. Sourced by bench/run_device.sh
# ($bin, $out, $work, log/now/since, archive_flightlines).
gpus=$(nvidia-smi -L | wc -l)
n=${HB_ARCHIVE_SCENES:-8}
mpi="mpirun --oversubscribe --bind-to none --allow-run-as-root -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE"
mpi+=" --mca pml ob1 --mca btl self,vader --mca osc ^ucx"

t0=$(now)
archive_flightlines "$n"
bytes=$(du -cb "$dir"/line??.img | tail -1 | cut -f1)
gb=$(python3 -c "print(round($bytes / 1e9, 2))")
# A host whose disk holds fewer (one H200's 64 GiB holds 8 of 16) runs the ones made.
made=$(ls "$dir"/line??.img | wc -l)
(( made < n )) && log "archive: only $made of the $n flightlines asked for fit on this host's disk"
log "archive: $made flightlines, $gb GB, made in $(since $t0) s"

# The read floor: every scene read once, all at once, from the page cache.
t0=$(now)
for f in "$dir"/line??.img; do cat "$f" > /dev/null & done; wait
t0=$(now)
for f in "$dir"/line??.img; do cat "$f" > /dev/null & done; wait
floor=$(since $t0)
log "archive: read floor (page cache, $n readers at once): $floor s, $(python3 -c "print(round($gb / $floor, 2))") GB/s"

job_file() {  # OUTPUT
  printf '[job]\nname = "archive"\noutput = "%s"\nbackend = "cuda"\n[collection]\nglobs = ["%s/line??.hdr"]\n' "$1" "$dir"
  printf 'truth = "{dir}/{stem}_truth.hdr"\n[mnf]\nbasis = "scene"\ncomponents = 10\n'
  printf '[knn]\nk = 5\ntrain_per_class = 200\nfeatures = "mnf"\n'
}
# HB_ARCHIVE_ROUNDS rounds (default 1), the binaries' order reversed every other round:
# one run each is within the host's run-to-run variation (docs/PERFORMANCE.md).
keep_tag=""; [[ ${HB_ARCHIVE_KEEP_HASHES:-0} == 1 ]] && keep_tag=" (input hashes remembered)"
clis=()
for cli in ${HB_ARCHIVE_BINARIES:-hyperbatch hyperbatch_base}; do
  [[ -x $bin/$cli ]] || continue
  for launch in ${HB_ARCHIVE_LAUNCH:-plain}; do
    if [[ $launch == plain ]]; then clis+=("$cli"); else clis+=("$cli+$launch"); fi
  done
done
hwloc=${HB_ARCHIVE_HWLOC:--pci,-opencl,-cuda,-nvml,-rsmi,-levelzero,-gl}
declare -A one
# References are this part's own: an earlier part stopped during its clean-up can have left
# a partial one behind, against which every output would differ.
rm -rf "$dir"/scenes_*
for round in $(seq 1 "${HB_ARCHIVE_ROUNDS:-1}"); do
  order=("${clis[@]}")
  (( round % 2 == 0 )) && mapfile -t order < <(printf '%s\n' "${clis[@]}" | tac)
  for cli in "${order[@]}"; do
    for p in ${HB_ARCHIVE_GPUS:-1 2 4 8}; do
      [[ $p -le $gpus ]] || continue
      rm -rf "$dir/out"
      job_file "$dir/out" > "$dir/job.toml"
      # HB_ARCHIVE_KEEP_HASHES=1: the inputs' hashes remembered from this binary's first
      # run (of this part or an earlier one in the call), so no run reads a scene only to
      # hash it: what the hash costs beside the steps.
      keep=$dir/hashes_$cli
      [[ ${HB_ARCHIVE_KEEP_HASHES:-0} == 1 && -d $keep ]] && mkdir -p "$dir/out" && cp -r "$keep" "$dir/out/input-hashes"
      sync
      run_log=$out/archive_${cli}${keep_tag:+_kept}_$p.log
      [[ $round -gt 1 ]] && run_log=${run_log%.log}_round$round.log
      t0=$(now)
      launcher=(env); [[ $cli == *+hwloc ]] && launcher=(env HWLOC_COMPONENTS="$hwloc")
      timeout 280 "${launcher[@]}" $mpi -np "$p" "$bin/${cli%+*}" -v run "$dir/job.toml" --no-progress \
        > "$run_log" 2>&1; rc=$?
      took=$(since $t0)
      [[ -d $keep ]] || cp -r "$dir/out/input-hashes" "$keep"
      [[ $p == 1 ]] && one[$cli]=$took
      eff=$(python3 -c "print(round(100 * ${one[$cli]} / ($p * $took), 1))")
      per_gpu=$(python3 -c "print(round($gb / $took / $p, 2))")
      log "archive: round $round, $cli run${keep_tag:-}, $p GPUs: rc=$rc $took s, $per_gpu GB/s a GPU, E = $eff %"
      grep -E "scene .* (done|failed)|knn rank 0: rows|classification pass|statistics|transform" "$run_log" \
        | head -12 | sed 's/^/    /' | tee -a "$out/summary.txt"
      # Where each rank's seconds went: L outside the logs, CUDA's start, MNF and KNN steps.
      python3 bench/rank_timeline.py "$run_log" --wall "$took" | sed 's/^/    /' | tee -a "$out/summary.txt"
      # Every run's outputs against this binary's first 1-GPU run, and that one against
      # the first binary's: the same bytes at any GPU count and from either build.
      reference=$dir/scenes_${cli}_1
      if [[ ! -d $reference ]]; then
        cp -r "$dir/out/scenes" "$reference" 2>/dev/null
        reference=$dir/scenes_${clis[0]}_1
        [[ $cli == "${clis[0]}" ]] && continue
      fi
      differ=$(cd "$dir/out/scenes" && find . -name '*.img' -o -name '*.h5' | while read -r f; do
        cmp -s "$f" "$reference/$f" || echo "$f"; done | wc -l)
      log "archive: round $round, $cli outputs at $p GPUs against ${reference##*/scenes_}: $differ files differ"
    done
  done
done
rm -rf "$dir/out" "$dir"/scenes_*
