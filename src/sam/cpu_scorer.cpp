// SAM / SCM on the host: pixels widened to FP64 in blocks, one DGEMM against the
// prepared references, then the best match per pixel.
#include <cblas.h>

#include <cmath>
#include <limits>

#include "src/sam/scorer.hpp"

namespace hb::sam {
namespace {

constexpr std::int64_t kBlockPixels = 1024;

class CpuScorer final : public SamScorer {
 public:
  std::string_view backend_name() const override { return "cpu"; }
  std::string formulation() const override { return "cpu dgemm"; }
  Status set_references(const References& references) override {
    refs_ = references;
    return {};
  }

  Status score(const io::Tile& tile, const PixelBands& bands, bool all_scores, TileScores& out) override {
    const std::int64_t pixels = tile.core().rows() * tile.samples();
    const std::int64_t first = tile.offset(tile.core().begin, 0) / tile.bands();
    constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
    out.best.assign(static_cast<std::size_t>(pixels), -1);
    out.best_score.assign(static_cast<std::size_t>(pixels), kNaN);
    out.scores.assign(all_scores ? static_cast<std::size_t>(pixels * refs_.count) : 0, kNaN);
    for (std::int64_t p0 = 0; p0 < pixels; p0 += kBlockPixels) {
      const std::int64_t n = std::min(kBlockPixels, pixels - p0);
      widen(tile, bands, first + p0, n);
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(n), static_cast<int>(refs_.count),
                  static_cast<int>(refs_.dims), 1.0, x_.data(), static_cast<int>(refs_.dims), refs_.unit.data(),
                  static_cast<int>(refs_.dims), 0.0, dots_.data(), static_cast<int>(refs_.count));
      select(p0, n, all_scores, out);
    }
    return {};
  }

 private:
  // Pixels [first, first + n) of the tile's held pixels -> x_ (compared bands, FP64) and norm_.
  void widen(const io::Tile& tile, const PixelBands& bands, std::int64_t first, std::int64_t n) {
    const std::int64_t dims = refs_.dims;
    x_.resize(static_cast<std::size_t>(n * dims));
    norm_.resize(static_cast<std::size_t>(n));
    dots_.resize(static_cast<std::size_t>(n * refs_.count));
    const bool has_ignore = bands.ignore_value.has_value();
    const float ignore = static_cast<float>(bands.ignore_value.value_or(0.0));
    visit_data_type(tile.type(), [&](auto zero) {
      using T = decltype(zero);
      const T* values = tile.as<T>().data();
      for (std::int64_t p = 0; p < n; ++p) {
        const T* in = values + (first + p) * tile.bands();
        double* x = x_.data() + p * dims;
        double sum = 0, squares = 0;
        bool ok = true;
        for (std::int64_t f = 0; f < dims; ++f) {
          const double v = static_cast<double>(in[bands.bands[static_cast<std::size_t>(f)]]);
          const auto narrow = static_cast<float>(v);
          ok = ok && std::isfinite(narrow) && !(has_ignore && narrow == ignore);
          x[f] = v;
          sum += v;
          squares += v * v;
        }
        const double n2 = refs_.method == Method::sam ? squares : squares - sum * sum / static_cast<double>(dims);
        norm_[static_cast<std::size_t>(p)] = ok && n2 > 0 ? std::sqrt(n2) : 0.0;
        if (!ok) std::fill(x, x + dims, 0.0);  // no NaN into the GEMM
      }
    });
  }

  void select(std::int64_t p0, std::int64_t n, bool all_scores, TileScores& out) const {
    for (std::int64_t p = 0; p < n; ++p) {
      const double norm = norm_[static_cast<std::size_t>(p)];
      if (norm == 0) continue;
      const double* dots = dots_.data() + p * refs_.count;
      std::int64_t best = 0;
      for (std::int64_t j = 1; j < refs_.count; ++j)
        if (dots[j] > dots[best]) best = j;
      const auto pixel = static_cast<std::size_t>(p0 + p);
      out.best[pixel] = static_cast<std::int32_t>(best);
      out.best_score[pixel] = static_cast<float>(reported_score(refs_.method, dots[best] / norm));
      if (!all_scores) continue;
      float* scores = out.scores.data() + pixel * static_cast<std::size_t>(refs_.count);
      for (std::int64_t j = 0; j < refs_.count; ++j) scores[j] = static_cast<float>(reported_score(refs_.method, dots[j] / norm));
    }
  }

  References refs_;
  std::vector<double> x_, norm_, dots_;
};

}  // namespace

std::unique_ptr<SamScorer> make_cpu_sam_scorer() { return std::make_unique<CpuScorer>(); }

}  // namespace hb::sam
