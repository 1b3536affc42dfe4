# Device part (sourced by bench/run_device.sh): the hash tables (kernels/hash, src/hash)
# and duplicate-spectrum elimination (src/dedup). About 2-3 minutes:
#  1. the GPU contract tests under compute-sanitizer memcheck and racecheck, small sizes
#     (HB_HASH_TEST_SMALL=1); the full-size GPU tests ran with every test_* before;
#  2. bench_hash_static (build + find at load 0.8, 10^6..10^8 keys) and bench_hash_mixed
#     (mixes [20,20,60], [40,40,20]), each against the CPU tables on all host cores;
#  3. knn with --dedup off / on on a synthetic scene with a 40 % fill border, as written
#     (the border is declared no-data, so it is not classified) and with the header's
#     ignore value dropped (the border is classified: 40 % duplicates).
cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
if [[ -z $cs ]]; then
  log "hash: compute-sanitizer NOT FOUND on this host: the GPU hash tests did NOT run under memcheck/racecheck"
else
  for tool in memcheck racecheck; do
    for t in "$bin"/test_hash_* "$bin"/test_dedup; do
      name=$(basename "$t")
      t0=$(now)
      HB_HASH_TEST_SMALL=1 timeout 120 "$cs" --tool $tool --error-exitcode 9 "$t" --gtest_filter='*gpu*:*Gpu*' \
        > "$out/sanitizer_${tool}_$name.log" 2>&1; rc=$?
      log "hash sanitizer $tool $name: rc=$rc $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitizer_${tool}_$name.log" | tail -1 | sed 's/=========//') $(grep -cE '^\[       OK' "$out/sanitizer_${tool}_$name.log") ok, $(since $t0) s"
    done
  done
fi

for b in static mixed; do
  t0=$(now)
  timeout 150 "$bin/bench_hash_$b" > "$out/hash_$b.txt" 2>&1; rc=$?
  log "bench_hash_$b: rc=$rc $(since $t0) s"
  cat "$out/hash_$b.txt" | tee -a "$out/summary.txt"
done

# Dedup in knn: 1024 x 677 x 224 int16 with a 40 % fill border.
dscene=$work/hash_border.hdr
if [[ ! -f ${dscene%.hdr}.img ]]; then
  "$bin/hyperbatch" -q synth -o "$dscene" --lines 1024 --samples 677 --bands 224 --classes 8 --seed 3 \
    --fill-border 0.4 --json > "$work/hash_border.json"
fi
dtruth=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['truth'])" "$work/hash_border.json")
# The same bytes with no declared ignore value: the border becomes 40 % identical spectra.
grep -vi '^data ignore value' "$dscene" > "$work/hash_border_noignore.hdr"
ln -sfn "${dscene%.hdr}.img" "$work/hash_border_noignore.img"
for variant in hash_border hash_border_noignore; do
  for mode in off on auto; do
    t0=$(now)
    timeout 120 "$bin/hyperbatch" -v knn "$work/$variant.hdr" --truth "$dtruth" --train-per-class 100 -k 5 \
      --dedup $mode -o "$work/${variant}_$mode.hdr" > "$out/knn_${variant}_$mode.log" 2>&1; rc=$?
    log "knn $variant --dedup $mode: rc=$rc $(since $t0) s; $(grep -oE 'dedup [a-z]+: .*' "$out/knn_${variant}_$mode.log" | head -1)"
  done
  for mode in on auto; do
    same=identical
    for product in "" _confidence; do
      cmp -s "$work/${variant}_off$product.img" "$work/${variant}_$mode$product.img" || same=DIFFERENT
    done
    log "knn $variant class map and confidence --dedup $mode vs off: $same"
  done
done
rm -f "$work"/hash_border_{off,on,auto}* "$work"/hash_border_noignore*
