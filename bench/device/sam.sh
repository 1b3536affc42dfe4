# Device part (sourced by bench/run_device.sh): SAM scoring per library size (direct
# kernel vs DGEMM, bench_sam), then `hyperbatch sam` end to end on the 5 GB 677 x 16384
# x 224 int16 flightline with 10, 100 and 1000 library spectra (drawn from the scene),
# each formulation, against the PyTorch peer on the same GPU. About 2 minutes.
"$bin/bench_sam" | tee "$out/sam_kernels.txt"
ensure_flightline
cat "${scene%.hdr}.img" > /dev/null  # page cache warm for every contender alike
for n in 10 100 1000; do
  python3 bench/peers/sam_torch.py "$scene" --make-library $n "$work/sam_lib_$n.sli"
  for formulation in direct gemm; do
    t0=$(now)
    timeout 100 "$bin/hyperbatch" -v sam "$scene" --library "$work/sam_lib_$n.sli" -o "$work/sam_$n.hdr" \
      --backend cuda --formulation $formulation > "$out/sam_${n}_$formulation.log" 2>&1; rc=$?
    log "hyperbatch sam, $n spectra, $formulation: rc=$rc $(since $t0) s"
    grep -E "sam pass|pixels/s|scored" "$out/sam_${n}_$formulation.log" | tee -a "$out/summary.txt"
  done
  cp "${work}/sam_$n.img" "$work/sam_ours.raw" 2>/dev/null
  t0=$(now)
  timeout 100 python3 bench/peers/sam_torch.py "$scene" --library "$work/sam_lib_$n.sli" --output "$work/sam_torch.raw" \
    2>/dev/null | tee -a "$out/summary.txt"
  log "pytorch peer, $n spectra, whole process: $(since $t0) s; same class map: $(cmp -s "$work/sam_ours.raw" "$work/sam_torch.raw" && echo yes || echo no)"
  rm -f "$work"/sam_"$n".* "$work/sam_torch.raw" "$work/sam_ours.raw"
done
