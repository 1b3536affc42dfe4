# Device part (sourced by bench/run_device.sh): `hyperbatch run` end to end on the GPU.
# Four generated 2048 x 677 x 224 int16 flightlines (620 MB each) through MNF (20
# components, CUDA) then a campaign-wide basis, then quicklooks; then a rerun that must
# skip everything. Figures: per-stage seconds and rates from metrics.json.
jobs_dir=$work/jobs; rm -rf "$jobs_dir"; mkdir -p "$jobs_dir"
jobs_file() {  # $1 name, $2 basis
  printf '[job]\nname = "%s"\noutput = "%s"\nbackend = "cuda"\n' "$1" "$jobs_dir/$1"
  for i in 1 2 3 4; do
    printf '[[generate]]\nname = "line%s"\nlines = 2048\nsamples = 677\nbands = 224\nclasses = 8\nseed = %s\nfill_border = 0.1\n' $i $i
  done
  printf '[mnf]\nbasis = "%s"\ncomponents = 20\n[quicklooks]\n[report]\n' "$2"
}
jobs_summary() {  # $1 output folder
  python3 -c "
import json, sys
m = json.load(open('$1/metrics.json'))
print(f\"  ranks {m['ranks']}, gpus {m['gpus']}, wall {m['wall_seconds']:.2f} s\")
for name, s in sorted(m['stages'].items()):
    print(f\"  {name:>10}: {s['seconds']:7.2f} s, {s['read_mb_per_s']:8.1f} MB/s read, {s['pixels_per_s']/1e6:6.2f} Mpixel/s, done {s['done']} skipped {s['skipped']} failed {s['failed']}\")
" | tee -a "$out/summary.txt"
}
for basis in scene campaign; do
  jobs_file "jobs-$basis" "$basis" > "$jobs_dir/$basis.toml"
  t0=$(now)
  timeout 240 "$bin/hyperbatch" run "$jobs_dir/$basis.toml" --no-progress > "$out/jobs_$basis.log" 2>&1; rc=$?
  log "hyperbatch run (4 flightlines, mnf basis=$basis, cuda): rc=$rc $(since $t0) s"
  jobs_summary "$jobs_dir/jobs-$basis"
done
t0=$(now)
"$bin/hyperbatch" run "$jobs_dir/campaign.toml" --no-progress > "$out/jobs_rerun.log" 2>&1; rc=$?
log "rerun of a finished job (everything skipped): rc=$rc $(since $t0) s"
cp "$jobs_dir/jobs-campaign/report.md" "$out/jobs_report.md" 2>/dev/null
rm -rf "$jobs_dir"
