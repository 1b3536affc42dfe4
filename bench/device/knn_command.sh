# Device part: `hyperbatch knn` as a user runs it, against its kernels (bench_knn) and
# PyTorch in the same call (docs/PERFORMANCE.md, "The KNN command"): for d in
# HB_KNN_COMMAND_DIMS (default 224), a scene of 10^6 pixels x d bands float32 BIP
# (uniform random in [0, 1)) and a training file of 10^5 rows and 16 classes drawn from a
# second such scene; k in HB_KNN_COMMAND_K (default 10 1024), class map only (votes on
# the GPU) and, for k in HB_KNN_COMMAND_LISTS (default 10 1024), with --neighbors; the
# baseline binary beside this build when the bundle carries one. Then bench_knn (fast,
# tensor and the probe's pick) and PyTorch on the same shapes. Sourced by
# bench/run_device.sh ($bin, $out, $work, log/now/since).
kdir=$work/knn_command
ks=${HB_KNN_COMMAND_K:-10 1024}
dims_list=${HB_KNN_COMMAND_DIMS:-224}
for d in $dims_list; do
rm -rf "$kdir"; mkdir -p "$kdir"
python3 - "$kdir" "$d" <<'PY'
import sys, numpy as np
out, d = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(7)
def envi(path, lines, samples, bands, code):
    open(path + ".hdr", "w").write(
        f"ENVI\nsamples = {samples}\nlines = {lines}\nbands = {bands}\nheader offset = 0\n"
        f"file type = ENVI Standard\ndata type = {code}\ninterleave = bip\nbyte order = 0\n")
rng.random((1000 * 1000 * d,), dtype=np.float32).tofile(out + "/scene.img")
envi(out + "/scene", 1000, 1000, d, 4)
rng.random((1000 * 100 * d,), dtype=np.float32).tofile(out + "/train_scene.img")
envi(out + "/train_scene", 1000, 100, d, 4)
(np.arange(100000) % 16 + 1).astype(np.uint8).tofile(out + "/train_truth.img")
envi(out + "/train_truth", 1000, 100, 1, 1)
PY
"$bin/hyperbatch" -q knn "$kdir/train_scene.hdr" --truth "$kdir/train_truth.hdr" --train-per-class 6250 -k 1 \
  -o "$kdir/train_map.hdr" --save-training "$kdir/train.h5" --backend cuda > /dev/null 2>&1
log "knn command: scene 10^6 x $d float32, training file of $(python3 -c "print(6250 * 16)") rows: rc=$?"
for k in $ks; do
  for cli in hyperbatch hyperbatch_base; do
    [[ -x $bin/$cli ]] || continue
    lists=""; [[ " ${HB_KNN_COMMAND_LISTS-10 1024} " == *" $k "* ]] && lists="--neighbors"
    for neighbors in "" $lists; do
      rm -f "$kdir/out.h5"
      log_file=$out/knn_command_${cli}_d${d}_k$k${neighbors:+_lists}.log
      t0=$(now)
      timeout 120 "$bin/$cli" -v knn "$kdir/scene.hdr" --train "$kdir/train.h5" -k "$k" -o "$kdir/out.h5" \
        --backend cuda $neighbors > "$log_file" 2>&1; rc=$?
      took=$(since $t0)
      pass=$(grep -oE "classification pass [0-9.]+ s" "$log_file" | head -1)
      pick=$(grep -oE "k-selection by timed probe on the GPU: [a-z]+" "$log_file" | head -1 | awk '{print $NF}')
      gpu=$(grep -E "knn search on GPU" "$log_file" | grep -oE "[0-9.]+ s searching" | head -1)
      log "knn command d=$d k=$k $cli ${neighbors:-class map only}: rc=$rc $took s in all, $pass," \
        "method ${pick:-fast}, GPU ${gpu:-?}"
      [[ -z $neighbors ]] && cp "$kdir/out.h5" "$kdir/out_${cli}_$k.h5" 2>/dev/null
    done
  done
  if [[ -f $kdir/out_hyperbatch_base_$k.h5 ]]; then
    cmp -s "$kdir/out_hyperbatch_$k.h5" "$kdir/out_hyperbatch_base_$k.h5" && same=identical || same=DIFFER
    log "knn command d=$d k=$k: class map file against the baseline: $same"
  fi
done
done
rm -rf "$kdir"
klist=$(echo $ks | tr ' ' ','); dlist=$(echo $dims_list | tr ' ' ',')
timeout 200 "$bin/bench_knn" --dims "$dlist" --k "$klist" --select fast,tensor,auto --budget 0.5 \
  2>&1 | grep -v "^\[" | tee -a "$out/summary.txt"
timeout 100 python3 bench/peers/knn_torch.py --dims "$dlist" --k "$klist" --budget 1.0 2>&1 | tee -a "$out/summary.txt"
