#include "src/sam/scorer.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/core.h>

#ifdef HB_HAVE_CUDA
#include "src/sam/cuda_scorer.hpp"
#endif

namespace hb::sam {

std::optional<Method> method_from_name(std::string_view name) {
  if (name == "sam") return Method::sam;
  if (name == "scm") return Method::scm;
  return std::nullopt;
}

std::string_view method_name(Method method) { return method == Method::sam ? "sam" : "scm"; }

std::optional<Formulation> formulation_from_name(std::string_view name) {
  if (name == "auto") return Formulation::automatic;
  if (name == "direct") return Formulation::direct;
  if (name == "gemm") return Formulation::gemm;
  return std::nullopt;
}

std::string_view formulation_name(Formulation formulation) {
  switch (formulation) {
    case Formulation::direct: return "direct";
    case Formulation::gemm: return "gemm";
    default: return "auto";
  }
}

Result<References> prepare_references(Method method, const std::vector<double>& spectra, std::int64_t dims,
                                      const std::vector<std::string>& names, const std::string& source) {
  References refs;
  refs.method = method;
  refs.dims = dims;
  refs.count = dims > 0 ? static_cast<std::int64_t>(spectra.size()) / dims : 0;
  refs.unit = spectra;
  for (std::int64_t j = 0; j < refs.count; ++j) {
    double* u = refs.unit.data() + j * dims;
    if (method == Method::scm) {
      double mean = 0;
      for (std::int64_t f = 0; f < dims; ++f) mean += u[f];
      mean /= static_cast<double>(dims);
      for (std::int64_t f = 0; f < dims; ++f) u[f] -= mean;
    }
    double norm = 0;
    for (std::int64_t f = 0; f < dims; ++f) norm += u[f] * u[f];
    norm = std::sqrt(norm);
    if (!(norm > 0))
      return bad_input(source, "spectra",
                       fmt::format("'{}' has {} on the compared bands", names.at(static_cast<std::size_t>(j)),
                                   method == Method::sam ? "zero norm" : "zero variance (no correlation is defined)"));
    for (std::int64_t f = 0; f < dims; ++f) u[f] /= norm;
  }
  return refs;
}

double reported_score(Method method, double similarity) {
  return method == Method::sam ? std::acos(std::clamp(similarity, -1.0, 1.0)) : similarity;
}

std::int64_t direct_formulation_limit(std::int64_t dims) {
  // Measured on the H200 with bench_sam (kernels/sam/README.md): the direct kernel ties
  // DGEMM only at a handful of spectra held in constant memory (both wait on the PCIe
  // copy of the tile); from 10 spectra on DGEMM is faster, 8x at 1000.
  constexpr std::int64_t kDirectSpectra = 4;
  (void)dims;
  return kDirectSpectra;
}

Result<std::unique_ptr<SamScorer>> make_sam_scorer(BackendKind kind, Formulation formulation, int device) {
  if (kind == BackendKind::cpu) return make_cpu_sam_scorer();
#ifdef HB_HAVE_CUDA
  if (kind == BackendKind::cuda || cuda_device_count() > 0) return make_cuda_sam_scorer(formulation, device);
#else
  (void)formulation;
  (void)device;
  if (kind == BackendKind::cuda)
    return Error{ErrorKind::usage, {}, "--backend", "this build has no CUDA backend (configure with HB_CUDA=ON)"};
#endif
  return make_cpu_sam_scorer();
}

}  // namespace hb::sam
