#include "src/mnf/noise_estimators.hpp"

#include <array>

namespace hb::mnf {
namespace {

namespace km = kernels::mnf;

constexpr auto kEstimators = [] {
  std::array<NoiseEstimatorInfo, km::NoiseEstimators::size> table{};
  km::for_each_estimator([&]<class E>(E, NoiseEstimator id) {
    constexpr auto reach = km::reach_of<E>();
    table[static_cast<std::size_t>(id)] = {id, E::name, {reach.above, reach.below}, E::covariance_scale,
                                           E::description};
  });
  return table;
}();

const NoiseEstimatorInfo& info(NoiseEstimator estimator) {
  const auto i = static_cast<std::size_t>(estimator);
  return i < kEstimators.size() ? kEstimators[i] : kEstimators.front();
}

}  // namespace

std::span<const NoiseEstimatorInfo> noise_estimators() { return kEstimators; }

std::vector<std::string> noise_estimator_names() {
  std::vector<std::string> names;
  for (const auto& e : kEstimators) names.emplace_back(e.name);
  return names;
}

std::optional<NoiseEstimator> noise_estimator_from_name(std::string_view name) {
  for (const auto& e : kEstimators)
    if (e.name == name) return e.estimator;
  return std::nullopt;
}

std::string_view noise_estimator_name(NoiseEstimator estimator) { return info(estimator).name; }
double noise_covariance_scale(NoiseEstimator estimator) { return info(estimator).covariance_scale; }
Halo noise_halo(NoiseEstimator estimator) { return info(estimator).halo; }

}  // namespace hb::mnf
