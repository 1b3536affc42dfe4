# Device part (sourced by bench/run_device.sh): what caps a node's output writes.
# MNF on two GPUs of one node waited for its component writes (docs/PERFORMANCE.md,
# "Distributed runs"). Three questions, one call:
#  * is the limit the host's page cache or the one shared file (buffered writes hold the
#    file's inode lock)? bench/write_floor.py: 1-8 writers, one file against a file
#    each, pwrite against a shared mapping;
#  * is it this VM's first touch of memory (a fresh machine's pages are backed by the
#    hypervisor when first written)? the same cases again, then with a 40 GB scene cached;
#  * what MNF's transform waits for: 40 GB on one GPU, twice (fresh pages, then pages
#    the first run's output freed).
floor() {  # TAG GiB WRITERS
  python3 bench/write_floor.py "$work" "$2" "$3" | while read -r line; do log "writes ($1): $line"; done
}
floor "first" 4 8
floor "again" 4 8
dist_scene "$work/writes40" 132000 writes
for i in 1 2; do
  sync; t0=$(now)
  timeout 200 "$bin/hyperbatch" -v mnf "$work/writes40.hdr" -o "$work/writes_mnf.hdr" --components 20 --backend cuda \
    > "$out/writes_mnf_$i.log" 2>&1; rc=$?
  log "writes: mnf 40 GB on one GPU, run $i: rc=$rc $(since $t0) s"
  grep -E "pass|committed" "$out/writes_mnf_$i.log" | sed 's/^/    /' | tee -a "$out/summary.txt"
  rm -f "$work"/writes_mnf*
done
floor "40 GB scene cached" 4 4
rm -f "$work"/writes40*
