# Device part: `hyperbatch knn` as a user runs it, against its kernels (bench_knn) and
# PyTorch in the same call (docs/PERFORMANCE.md, "The KNN command"): for each kind of
# data in HB_KNN_COMMAND_DATA (default uniform) and d in HB_KNN_COMMAND_DIMS (default
# 224), a scene of 10^6 pixels x d bands and a training file of up to 10^5 rows and 16
# classes drawn from a second such scene: uniform (float32 in [0, 1)), clustered (16
# centres, float32) or spectra (`hyperbatch synth` scenes: int16 library mixtures); k in
# HB_KNN_COMMAND_K (default 10 1024), class map only (votes on the GPU) and, for k in
# HB_KNN_COMMAND_LISTS (default 10 1024), with --neighbors; the baseline binary beside
# this build when the bundle carries one (or the binaries named in
# HB_KNN_COMMAND_BINARIES, the bundle's HB_EXTRA_BINARIES), each with every `--select` of
# HB_KNN_COMMAND_SELECT (default auto); then bench_knn (fast and tensor, one of which
# auto runs) on the same scene and training file, prepared as the command prepares them.
# Last, PyTorch on the same shapes (uniform data: its time does not depend on the
# values). Sourced by bench/run_device.sh ($bin, $out, $work, log/now/since).
kdir=$work/knn_command
ks=${HB_KNN_COMMAND_K:-10 1024}
dims_list=${HB_KNN_COMMAND_DIMS:-224}
# The scene ($kdir/scene.hdr) and training file ($kdir/train.h5) of KIND with D bands.
knn_command_inputs() {
  local kind=$1 d=$2
  if [[ $kind == spectra ]]; then
    "$bin/hyperbatch" -q synth -o "$kdir/scene.hdr" --lines 1000 --samples 1000 --bands "$d" --classes 16 --seed 1 \
      > /dev/null
    "$bin/hyperbatch" -q synth -o "$kdir/train_scene.hdr" --lines 1000 --samples 1000 --bands "$d" --classes 16 \
      --seed 2 > /dev/null
    mv "$kdir/train_scene_truth.hdr" "$kdir/train_truth.hdr"; mv "$kdir/train_scene_truth.img" "$kdir/train_truth.img"
  else
    python3 - "$kdir" "$d" "$kind" <<'PY'
import sys, numpy as np
out, d, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(7)
def envi(path, lines, samples, bands, code):
    open(path + ".hdr", "w").write(
        f"ENVI\nsamples = {samples}\nlines = {lines}\nbands = {bands}\nheader offset = 0\n"
        f"file type = ENVI Standard\ndata type = {code}\ninterleave = bip\nbyte order = 0\n")
centres = rng.random((16, d), dtype=np.float32)
def rows(n, labels):
    if kind == "uniform":
        return rng.random((n, d), dtype=np.float32)
    return centres[labels - 1] + np.float32(0.05) * rng.standard_normal((n, d), dtype=np.float32)
rows(1000 * 1000, rng.integers(1, 17, 1000 * 1000)).tofile(out + "/scene.img")
envi(out + "/scene", 1000, 1000, d, 4)
labels = (np.arange(100000) % 16 + 1).astype(np.uint8)
rows(100000, labels).tofile(out + "/train_scene.img")
envi(out + "/train_scene", 1000, 100, d, 4)
labels.tofile(out + "/train_truth.img")
envi(out + "/train_truth", 1000, 100, 1, 1)
PY
  fi
  "$bin/hyperbatch" -q knn "$kdir/train_scene.hdr" --truth "$kdir/train_truth.hdr" --train-per-class 6250 -k 1 \
    -o "$kdir/train_map.hdr" --save-training "$kdir/train.h5" --backend cuda > /dev/null 2>&1
}
klist=$(echo $ks | tr ' ' ','); dlist=$(echo $dims_list | tr ' ' ',')
# The floor under every command: a process that starts a CUDA context and exits, and
# what host memory the GPU reads adds, by how it is made (bench/process_floor.cu).
for mb in 0 256 1024; do
  for how in pinned register huge pageable; do
    [[ $mb == 0 && $how != pinned ]] && continue
    times=""
    for i in 1 2 3; do t0=$(now); inside=$("$bin/bench_process_floor" $mb $how); times+="$(since "$t0") "; done
    log "knn command: CUDA process floor, $mb MB $how: $times s (last: $inside)"
  done
done
for kind in ${HB_KNN_COMMAND_DATA:-uniform}; do
for d in $dims_list; do
rm -rf "$kdir"; mkdir -p "$kdir"
knn_command_inputs "$kind" "$d"; rc=$?
log "knn command: $kind scene 10^6 x $d, training file $(python3 -c "import h5py; print(h5py.File('$kdir/train.h5')['train/features'].shape[0])" 2>/dev/null || echo '?') rows: rc=$rc"
for k in $ks; do
  for cli in ${HB_KNN_COMMAND_BINARIES:-hyperbatch hyperbatch_base}; do
    [[ -x $bin/$cli ]] || continue
    lists=""; [[ " ${HB_KNN_COMMAND_LISTS-10 1024} " == *" $k "* ]] && lists="--neighbors"
    for select in ${HB_KNN_COMMAND_SELECT:-auto}; do
      for neighbors in "" $lists; do
        rm -f "$kdir/out.h5"
        log_file=$out/knn_command_${cli}_${kind}_d${d}_k$k${neighbors:+_lists}_$select.log
        t0=$(now)
        timeout 120 "$bin/$cli" -v knn "$kdir/scene.hdr" --train "$kdir/train.h5" -k "$k" -o "$kdir/out.h5" \
          --backend cuda --select "$select" $neighbors > "$log_file" 2>&1; rc=$?
        took=$(since $t0)
        pass=$(grep -oE "classification pass [0-9.]+ s" "$log_file" | head -1)
        pick=$(grep -oE "k-selection (by timed probe )?on the GPU: [a-z]+" "$log_file" | head -1 | awk '{print $NF}')
        gpu=$(grep -E "knn search on GPU" "$log_file" | grep -oE "[0-9.]+ s searching" | head -1)
        log "knn command $kind d=$d k=$k $cli --select $select ${neighbors:-class map only}: rc=$rc $took s in all," \
          "$pass, method ${pick:-$select}, GPU ${gpu:-?}"
        [[ -z $neighbors ]] && cp "$kdir/out.h5" "$kdir/out_${cli}_${k}_$select.h5" 2>/dev/null
      done
    done
  done
  for select in ${HB_KNN_COMMAND_SELECT:-auto}; do
    [[ $select != auto && -f $kdir/out_hyperbatch_${k}_$select.h5 && -f $kdir/out_hyperbatch_${k}_auto.h5 ]] || continue
    same=$(python3 - "$kdir/out_hyperbatch_${k}_$select.h5" "$kdir/out_hyperbatch_${k}_auto.h5" <<'PY' 2>&1
import sys, h5py, numpy as np
a, b = (h5py.File(f, "r") for f in sys.argv[1:])
names = []
a.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
print("identical" if all(n in b and np.array_equal(a[n][()], b[n][()]) for n in names) else "DIFFER")
PY
)
    log "knn command $kind d=$d k=$k: --select $select class map against auto's: $same"
  done
  if [[ -f $kdir/out_hyperbatch_base_${k}_auto.h5 ]]; then
    cmp -s "$kdir/out_hyperbatch_${k}_auto.h5" "$kdir/out_hyperbatch_base_${k}_auto.h5" && same=identical || same=DIFFER
    log "knn command $kind d=$d k=$k: class map file against the baseline: $same"
  fi
done
log "bench_knn on the $kind scene and training file, d = $d:"
# A budget that reaches every query (up to the cap on lists brought home at large k):
# rows of a real scene differ in cost (close pairs are recomputed), so a rate from the
# first half would not be the command's.
timeout 300 "$bin/bench_knn" --scene "$kdir/scene.hdr" --training "$kdir/train.h5" --k "$klist" \
  --select fast,tensor --budget 2 2>&1 | grep -v "^\[" | tee -a "$out/summary.txt"
done
done
rm -rf "$kdir"
timeout 100 python3 bench/peers/knn_torch.py --dims "$dlist" --k "$klist" --budget 1.0 2>&1 | tee -a "$out/summary.txt"
