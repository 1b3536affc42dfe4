# Device part for KNN (sourced by bench/run_device.sh): bench_knn (every --select
# method, N = 10^5, d in {32, 224}, k in {1, 10, 100, 1024, 4096}, against the SGEMM
# floor measured in the same run), then the peers in the same call: PyTorch on the
# same GPU (cdist + topk) and scikit-learn on the host CPU when it is installed.
# At most 3 minutes (the timeouts add up to 180 s); about 1.5 expected on an H200.
t0=$(now)
# HB_KNN_ARGS adds bench_knn options (e.g. --slab-mb 32,128 to sweep the fast slab).
# shellcheck disable=SC2086
timeout "${HB_KNN_TIMEOUT:-110}" "$bin/bench_knn" ${HB_KNN_ARGS:-} > "$out/knn.txt" 2>&1; rc=$?
cat "$out/knn.txt"; cat "$out/knn.txt" >> "$out/summary.txt"
log "bench_knn: rc=$rc $(since $t0) s"
t0=$(now)
timeout 50 python3 bench/peers/knn_torch.py --budget 1.0 2>&1 | tee -a "$out/summary.txt"
log "knn torch peer: $(since $t0) s"
t0=$(now)
timeout 20 python3 bench/peers/knn_sklearn.py --queries 1000 2>&1 | tee -a "$out/summary.txt"
log "knn sklearn peer: $(since $t0) s"
