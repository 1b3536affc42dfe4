# Device part: where `mpirun`'s own seconds go (L of the scaling models in
# docs/PERFORMANCE.md). For 1 rank and every GPU of the host, three runs each: `true`
# (launch and teardown alone), `sh -c date` (launch to each process's start, and its
# exit to mpirun's), the CUDA process floor (bench_process_floor 0: a context made and
# released) and `hyperbatch -v info` (MPI's start in each rank: the "up" line), each
# with the archive part's options and with the variants in HB_LAUNCH_VARIANTS. Then one
# verbose launch with each line stamped, for where mpirun's own time goes.
dir=$work/launch; rm -rf "$dir"; mkdir -p "$dir"
gpus=$(nvidia-smi -L | wc -l)
"$bin/hyperbatch" -q synth -o "$dir/s.hdr" --lines 256 --samples 677 --bands 224 --classes 4 --seed 1 > /dev/null
log "launch: $(command -v mpirun) $(mpirun --version 2>&1 | head -1); hwloc $(command -v lstopo-no-graphics || echo absent)"
base="mpirun --oversubscribe --bind-to none --allow-run-as-root -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE"
base+=" --mca pml ob1 --mca btl self,vader --mca osc ^ucx"
# NAME=ENV|OPTIONS, separated by ';'; ENV is exported to mpirun and passed to every rank.
variants=${HB_LAUNCH_VARIANTS:-"archive=|;no_gpu_plugins=HWLOC_COMPONENTS=-opencl,-cuda,-nvml,-rsmi,-levelzero,-gl|;\
no_pci=HWLOC_COMPONENTS=-pci|"}
stamp_starts() {  # T0 LOG: seconds from T0 to the first and last process start
  python3 - "$1" "$2" <<'PY'
import sys
t0 = float(sys.argv[1]); s = sorted(float(x) for x in open(sys.argv[2]) if x.strip())
print(f"{s[0] - t0:.3f}-{s[-1] - t0:.3f}" if s else "none")
PY
}
ups() {  # LOG...: each rank's "up N s after the process started"
  grep -ohE ' up [0-9.]+ s after' "$@" | awk '{printf "%s ", $2}'
}
IFS=';' read -ra variant_list <<< "$variants"
for variant in "${variant_list[@]}"; do
  name=${variant%%=*}; rest=${variant#*=}; env_part=${rest%%|*}; opts=${rest#*|}
  envs=(); pass=()
  [[ -n $env_part ]] && { envs=("$env_part"); pass=(-x "${env_part%%=*}"); }
  for ranks in 1 "$gpus"; do
    run=(env "${envs[@]}" $base "${pass[@]}" $opts -np "$ranks")
    t_true=""; t_date=""; t_cuda=""; t_info=""; up=""
    for i in 1 2 3; do
      t0=$(now); "${run[@]}" true > /dev/null 2>&1; rc_true=$?; t_true+="$(since "$t0") "
      t0=$(now); "${run[@]}" sh -c 'date +%s.%N' > "$dir/starts" 2>/dev/null; t_date+="$(since "$t0")"
      t_date+="($(stamp_starts "$t0" "$dir/starts")) "
      t0=$(now); "${run[@]}" "$bin/bench_process_floor" 0 > /dev/null 2>&1; t_cuda+="$(since "$t0") "
      t0=$(now); "${run[@]}" --output-filename "$dir/info_out" "$bin/hyperbatch" -v info "$dir/s.hdr" > /dev/null 2>&1
      rc_info=$?; t_info+="$(since "$t0") "
      up+="[$(ups $(find "$dir/info_out" -name stderr))] "; rm -rf "$dir/info_out"
    done
    log "launch: $name, $ranks rank(s): true rc=$rc_true $t_true s; date (first-last process start) $t_date s;" \
      "CUDA floor $t_cuda s; info rc=$rc_info $t_info s, up $up s"
  done
done
# Where mpirun's own time goes: one verbose launch of `true` on every GPU, each line
# stamped with the seconds since the launch.
t0=$(now)
$base -np "$gpus" --mca plm_base_verbose 5 --mca odls_base_verbose 5 --mca ras_base_verbose 5 \
  --mca state_base_verbose 5 --mca ess_base_verbose 5 true 2>&1 | python3 -c "
import sys, time
t0 = float(sys.argv[1])
for line in iter(sys.stdin.readline, ''): print(f'{time.time() - t0:7.3f} {line.rstrip()}')" "$t0" > "$out/launch_verbose.log"
log "launch: verbose launch of $gpus ranks, $(wc -l < "$out/launch_verbose.log") lines, in launch_verbose.log:" \
  "$(awk '{print $1}' "$out/launch_verbose.log" | sed -n '1p;$p' | paste -sd- ) s"
rm -rf "$dir"
