# Device part (sourced by bench/run_device.sh): issue 29's read target, "reading an EMIT
# granule (compressed) and an AVIRIS-Classic scene costs at most 1.2x reading the same
# cube as ENVI", on a host with many cores (docs/PERFORMANCE.md, "Reading archive
# products"; bench/read_formats.sh is the same on a CPU host). The inputs come from
# bench_make_read_inputs (the device host has no netCDF4/h5py): HB_READ_LINES x 677 x 224
# (default 16384, the 5 GB flightline). Each is read in full by `ingest` into a float32
# HDF5 cube from a warm page cache, best of HB_READ_REPEATS (3), by this build and by the baseline binary
# (hyperbatch_base) when the bundle carries one (HB_READ_BINARIES names others).
lines=${HB_READ_LINES:-16384}
dir=$work/read_formats; rm -rf "$dir"; mkdir -p "$dir"
t0=$(now)
"$bin/hyperbatch" -q synth -o "$dir/dn.hdr" --lines "$lines" --samples 677 --bands 224 --classes 6 --seed 1 > /dev/null
"$bin/bench_make_read_inputs" "$dir/dn.hdr" "$dir" > "$out/read_inputs.log" 2>&1; rc=$?
rm -f "$dir"/dn.*
log "read formats: inputs of $lines lines made: rc=$rc $(since "$t0") s; $(cd "$dir" && du -h --apparent-size \
  envi.img granule.nc f080611t01p00r07rdn_c_sc01_ort_img | awk '{printf "%s %s  ", $2, $1}')"
cat "$dir"/* > /dev/null  # the page cache holds every input

read_best() {  # CLI TAG ARGS...: best of HB_READ_REPEATS (3) wall-clock seconds of `CLI ingest ARGS`
  local cli=$1 tag=$2 best="" t0 took rc; shift 2
  for _ in $(seq "${HB_READ_REPEATS:-3}"); do
    rm -f "$dir/out.h5"
    t0=$(now)
    "$bin/$cli" -q ingest "$@" -o "$dir/out.h5" > "$out/read_$tag.log" 2>&1; rc=$?
    took=$(since "$t0")
    if [[ $rc != 0 ]]; then
      log "read formats: $cli $tag ingest failed (rc=$rc): $(tail -1 "$out/read_$tag.log")" >&2
      took=nan
    fi
    best=$(python3 -c "print(min(float('$took'), float('${best:-inf}')))")
  done
  echo "$best"
}
# This build, and the baseline binary (hyperbatch_base) when the bundle carries one.
for cli in ${HB_READ_BINARIES:-hyperbatch hyperbatch_base}; do
  [[ -x $bin/$cli ]] || continue
  envi=$(read_best "$cli" envi "$dir/envi.hdr")
  granule=$(read_best "$cli" emit "$dir/granule.nc")
  classic=$(read_best "$cli" classic "$dir/f080611t01p00r07rdn_c_sc01_ort_img" --units physical)
  ratio() { python3 -c "print(round($1 / $envi, 2))"; }
  log "read formats: $cli, $lines x 677 x 224, $(nproc) threads: ENVI float32 $envi s, EMIT granule $granule s" \
    "($(ratio "$granule")x), AVIRIS-Classic + .gain $classic s ($(ratio "$classic")x); target at most 1.2x"
done
# Where this build's time goes (-v): reading against writing, and the EMIT reader's waits.
for input in envi.hdr granule.nc "f080611t01p00r07rdn_c_sc01_ort_img --units physical"; do
  rm -f "$dir/out.h5"
  # shellcheck disable=SC2086 # the input's options split on purpose
  "$bin/hyperbatch" -v ingest "$dir"/$input -o "$dir/out.h5" 2>&1 | grep -E "copied in steps|reads waited" |
    cut -d' ' -f3- | sed "s|^|read formats: ${input%% *}: |" | while read -r line; do log "$line"; done
done
rm -rf "$dir"
