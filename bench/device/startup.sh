# Device part (sourced by bench/run_device.sh): start-up, issue 27's goal 4. `info` (one
# process, no launcher) five times, by this build and the baseline binary when the bundle
# carries one; then process start to the first MNF tile done (the provisional mean's tile,
# logged with -v by each rank before the ranks balance rows) on a 2048-line scene: one
# process with no launcher, and every rank of `mpirun -np G` for G = 1 and every GPU of
# the host, by this build, the baseline and this build narrowed from outside; the
# components must stay the same bytes. Then NCCL between ranks that each see one GPU.
dir=$work/startup; rm -rf "$dir"; mkdir -p "$dir"
"$bin/hyperbatch" -q synth -o "$dir/s.hdr" --lines 2048 --samples 677 --bands 224 --classes 4 --seed 1 > /dev/null
cat "$dir/s.img" > /dev/null
log "startup: persistence mode $(nvidia-smi --query-gpu=persistence_mode --format=csv,noheader | paste -sd,)"
gpus=$(nvidia-smi -L | wc -l)

for cli in hyperbatch hyperbatch_base; do
  [[ -x $bin/$cli ]] || continue
  times=""
  for i in 1 2 3 4 5; do t0=$(now); "$bin/$cli" info "$dir/s.hdr" > /dev/null; times+="$(since "$t0") "; done
  log "startup: $cli info (one process): $times s"
done

# Each log's first tile as seconds from T0 (the launch) / from its process's start (the
# "up N s after the process started" line).
first_tiles() {
  local t0=$1; shift
  python3 - "$t0" "$@" <<'PY'
import datetime, re, sys
t0 = float(sys.argv[1])
stamp = lambda line: datetime.datetime.fromisoformat(line.split()[0]).timestamp()
out = []
for path in sys.argv[2:]:
    start, first = None, None
    for line in open(path):
        if (m := re.search(r" up ([0-9.]+) s after the process started", line)):
            start = stamp(line) - float(m.group(1))
        if "provisional mean" in line:
            first = stamp(line)
            break
    out.append(f"{first - t0:.3f}/{first - start:.3f}" if first and start else "none")
print(" ".join(out))
PY
}
# Narrows a rank to its own GPU (the launcher's local rank), as a comparison.
cat > "$dir/own_gpu.sh" <<'SH'
#!/usr/bin/env bash
export CUDA_VISIBLE_DEVICES=${OMPI_COMM_WORLD_LOCAL_RANK:-0}
exec "$@"
SH
chmod +x "$dir/own_gpu.sh"

# Contenders: this build and the baseline binary (a job of one rank narrows to its GPU,
# several ranks see every GPU), and this build with each rank narrowed from outside, as
# srun --gpu-bind does.
for run in self base outside; do
  cli=hyperbatch; wrap=()
  case $run in
    self) shown="this build";;
    base) cli=hyperbatch_base; shown="baseline"; [[ -x $bin/$cli ]] || continue;;
    outside) wrap=("$dir/own_gpu.sh"); shown="own GPU shown from outside";;
  esac
  for i in 1 2 3; do
    t0=$(now)
    "${wrap[@]}" "$bin/$cli" -v mnf "$dir/s.hdr" -o "$dir/one_$run.h5" --components 10 --backend cuda \
      > "$out/startup_one_${run}_$i.log" 2>&1
    log "startup: no launcher, $shown: first tile (from launch/process start)" \
      "$(first_tiles "$t0" "$out/startup_one_${run}_$i.log") s, whole $(since "$t0") s"
  done
  for ranks in 1 "$gpus"; do
    for i in 1 2; do
      t0=$(now)
      mpirun -np "$ranks" --bind-to none --output-filename "$dir/mpi_out" "${wrap[@]}" "$bin/$cli" -v mnf \
        "$dir/s.hdr" -o "$dir/ranks_${ranks}_$run.h5" --components 10 --backend cuda > /dev/null 2>&1; rc=$?
      # shellcheck disable=SC2046 # one log path per rank
      log "startup: mpirun -np $ranks, $shown: rc=$rc first tiles (from launch/process start)" \
        "$(first_tiles "$t0" $(find "$dir/mpi_out" -name stderr | sort)) s, whole $(since "$t0") s"
      # Every rank's log of the last run, for where its seconds went.
      for f in $(find "$dir/mpi_out" -name stderr | sort); do
        cp "$f" "$out/startup_${run}_np${ranks}_rank$(basename "$(dirname "$f")").log"
      done
      rm -rf "$dir/mpi_out"
    done
  done
done
# NCCL between ranks that each see only their own GPU: the DeviceComm test, and the
# transports NCCL chose (NCCL_DEBUG=INFO).
if [[ -x $bin/test_device_comm ]]; then
  mpirun -np "$gpus" --bind-to none -x NCCL_DEBUG=INFO "$dir/own_gpu.sh" "$bin/test_device_comm" --gtest_brief=1 \
    > "$out/startup_nccl_narrowed.log" 2>&1; rc=$?
  log "startup: test_device_comm, $gpus ranks each shown its own GPU: rc=$rc" \
    "$(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/startup_nccl_narrowed.log" | sort -u | tr '\n' ' ')" \
    "transports: $(grep -oE 'via (P2P/[A-Za-z/]+|SHM[A-Za-z/]*|NET/[A-Za-z0-9/]+)' "$out/startup_nccl_narrowed.log" \
      | sort | uniq -c | tr -s ' ' | paste -sd, )"
fi
# The components as ENVI bytes (export), each against the one process's own.
"$bin/hyperbatch" -q export "$dir/one_self.h5" -o "$dir/ref.hdr" > /dev/null
for f in "$dir"/ranks_*_*.h5 "$dir"/one_outside.h5 "$dir"/one_base.h5; do
  [[ -f $f ]] || continue
  rm -f "$dir"/cmp.*; "$bin/hyperbatch" -q export "$f" -o "$dir/cmp.hdr" > /dev/null
  cmp -s "$dir/ref.img" "$dir/cmp.img" && same=same || same=DIFFERENT
  log "startup: $(basename "$f") components against one process's: $same bytes"
done
rm -rf "$dir"
