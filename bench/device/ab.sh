# Device part: a baseline build against this one, alternating on the same scene in one
# call. Machines of one kind differ by up to a third from call to call (the host's
# memory and page cache above all), so a change to a host pass is only ever judged
# within a call. The baseline is bin/hyperbatch_base, bundled by
# `HB_BASE=path/to/hyperbatch bench/make_bundle` from a build of the commit to compare
# with; without it the part is skipped. KNN on the 40 GB dist scene (as dist.sh), each
# binary twice: base, new, base, new; the -v logs keep each run's stage split.
# Sourced by bench/run_device.sh ($bin, $out, $work, log/now/since, dist_scene).
if [[ ! -x $bin/hyperbatch_base ]]; then
  log "ab: no bin/hyperbatch_base in the bundle: part skipped"
else
ab_scene=$work/ab40
dist_scene "$ab_scene" 132000 ab
for round in 1 2; do
  for which in base new; do
    exe=$bin/hyperbatch; [[ $which == base ]] && exe=$bin/hyperbatch_base
    sync
    t0=$(now)
    timeout 200 "$exe" -v knn "$ab_scene.hdr" --truth "${ab_scene}_truth.hdr" --train-per-class 200 -k 5 \
      -o "$work/ab_knn_$which.hdr" --backend cuda > "$out/ab_knn_${which}_$round.log" 2>&1; rc=$?
    log "ab knn 40 GB $which (round $round): rc=$rc $(since $t0) s"
    grep -E "knn classification|knn query tiles|GPU time" "$out/ab_knn_${which}_$round.log" | sed 's/^/    /' \
      | tee -a "$out/summary.txt"
  done
  if cmp -s "$work/ab_knn_base.img" "$work/ab_knn_new.img"; then log "ab: class maps identical bytes"
  else log "ab: class maps DIFFER"; fi
done
rm -f "$ab_scene".* "${ab_scene}"_* "$work"/ab_knn_*
fi
