#include "src/backend/cpu_backend.hpp"

#include "src/backend/cpu_mnf.hpp"

#include "src/base/parallel_for.hpp"

#include <fstream>
#include <string>

namespace hb {
namespace {

constexpr std::int64_t kWidenChunk = std::int64_t{1} << 20;  // samples per thread, at least

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  return "CPU";
}

class CpuBackend final : public Backend {
 public:
  BackendKind kind() const override { return BackendKind::cpu; }
  std::string_view name() const override { return "cpu"; }
  std::string device_description() const override { return cpu_model(); }

  Status convert_to_f32(const io::Tile& tile, std::span<float> out) override {
    visit_data_type(tile.type(), [&](auto zero) {
      using T = decltype(zero);
      const auto in = tile.as<T>();
      parallel_for(static_cast<std::int64_t>(in.size()), kWidenChunk, [&](std::int64_t begin, std::int64_t end) {
        for (auto i = begin; i < end; ++i) out[static_cast<std::size_t>(i)] = static_cast<float>(in[static_cast<std::size_t>(i)]);
      });
    });
    return {};
  }

  Status accumulate_moments(const io::Tile& tile, const mnf::PixelRules& rules, mnf::Moments& data) override {
    return cpu::accumulate_moments(tile, rules, data);
  }
  Status accumulate_noise_moments(const io::Tile& tile, const mnf::PixelRules& rules, const mnf::NoiseConfig& config,
                                  mnf::Moments& noise) override {
    return cpu::accumulate_noise_moments(tile, rules, config, noise);
  }
  Status transform(const io::Tile& tile, const mnf::PixelRules& rules, const mnf::LinearMap& map,
                   std::span<float> out) override {
    return cpu::transform(tile, rules, map, out);
  }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace hb
