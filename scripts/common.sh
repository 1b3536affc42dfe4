# Shared by scripts/*: where things are and which preset this machine builds.
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=${HB_JOBS:-$(nproc)}
# The CUDA preset when nvcc is there (the binary still runs on CPU-only machines).
if [[ -z "${HB_PRESET:-}" ]]; then
  if command -v nvcc >/dev/null 2>&1 || [[ -x /usr/local/cuda/bin/nvcc ]]; then HB_PRESET=cuda; else HB_PRESET=cpu; fi
fi
export PATH="$PATH:/usr/local/cuda/bin"
# Open MPI refuses root unless told; tests and demos start real ranks.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
build_preset() {  # build_preset PRESET [TARGET...]
  local preset=$1; shift
  cmake --preset "$preset" >/dev/null
  cmake --build "$repo/build/$preset" -j "$jobs" ${1:+--target "$@"}
}
