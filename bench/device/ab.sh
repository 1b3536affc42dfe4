# Device part: a baseline build against this one, alternating on the same scene in one
# call. Machines of one kind differ by up to a third from call to call (the host's
# memory and page cache above all), so a change to a host pass is only ever judged
# within a call. The baseline is bin/hyperbatch_base, bundled by
# `HB_BASE=path/to/hyperbatch bench/make_bundle` from a build of the commit to compare
# with; without it the part is skipped. On the 40 GB dist scene (as dist.sh), each
# binary twice: base, new, base, new; the -v logs keep each run's stage split.
# HB_AB names the commands compared: knn (the default), mnf (to disk and to tmpfs), or both.
# Sourced by bench/run_device.sh ($bin, $out, $work, log/now/since, dist_scene).
if [[ ! -x $bin/hyperbatch_base ]]; then
  log "ab: no bin/hyperbatch_base in the bundle: part skipped"
else
ab_scene=$work/ab40
dist_scene "$ab_scene" 132000 ab
ab_exe() { if [[ $1 == base ]]; then echo "$bin/hyperbatch_base"; else echo "$bin/hyperbatch"; fi; }
for round in 1 2; do
  [[ ${HB_AB:-knn} =~ knn|both ]] || break
  for which in base new; do
    exe=$(ab_exe $which)
    sync
    t0=$(now)
    timeout 200 "$exe" -v knn "$ab_scene.hdr" --truth "${ab_scene}_truth.hdr" --train-per-class 200 -k 5 \
      -o "$work/ab_knn_$which.hdr" --backend cuda > "$out/ab_knn_${which}_$round.log" 2>&1; rc=$?
    log "ab knn 40 GB $which (round $round): rc=$rc $(since $t0) s"
    grep -E "knn: (truth|split|outputs)|set-up|knn classification|knn query tiles|GPU time|done" "$out/ab_knn_${which}_$round.log" | sed 's/^/    /' \
      | tee -a "$out/summary.txt"
  done
  if cmp -s "$work/ab_knn_base.img" "$work/ab_knn_new.img"; then log "ab: class maps identical bytes"
  else log "ab: class maps DIFFER"; fi
done
for round in 1 2; do
  [[ ${HB_AB:-knn} =~ mnf|both ]] || break
  for where in "$work" /dev/shm; do
    for which in base new; do
      sync
      t0=$(now)
      timeout 200 "$(ab_exe $which)" -v mnf "$ab_scene.hdr" -o "$where/ab_mnf_$which.hdr" --components 20 \
        --backend cuda > "$out/ab_mnf_${which}_${where##*/}_$round.log" 2>&1; rc=$?
      log "ab mnf 40 GB to $where, $which (round $round): rc=$rc $(since $t0) s"
      grep -E "pass|reserved|committed|provisional|eigendecomposition|done" "$out/ab_mnf_${which}_${where##*/}_$round.log" | sed 's/^/    /' | tee -a "$out/summary.txt"
    done
    if cmp -s "$where/ab_mnf_base.img" "$where/ab_mnf_new.img"; then log "ab: components identical bytes"
    else log "ab: components DIFFER"; fi
    rm -f "$where"/ab_mnf_*
  done
done
rm -f "$ab_scene".* "${ab_scene}"_* "$work"/ab_knn_*
fi
