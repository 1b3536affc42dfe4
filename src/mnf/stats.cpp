#include "src/mnf/stats.hpp"

#include <algorithm>
#include <charconv>

namespace hb::mnf {

PixelRules pixel_rules(const io::CubeInfo& info) {
  PixelRules rules;
  for (std::int64_t b = 0; b < info.shape.bands; ++b)
    if (info.meta.band_is_good(b)) rules.bands.push_back(b);
  rules.ignore_value = info.meta.data_ignore_value;
  return rules;
}

std::vector<std::int64_t> excluded_bands(const io::CubeInfo& info) {
  std::vector<std::int64_t> bad;
  for (std::int64_t b = 0; b < info.shape.bands; ++b)
    if (!info.meta.band_is_good(b)) bad.push_back(b);
  return bad;
}

namespace {

Result<std::optional<std::int64_t>> parse_bound(std::string_view text) {
  if (text.empty()) return std::optional<std::int64_t>{};
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value < 0)
    return Error{ErrorKind::usage, {}, "--subset", "'" + std::string(text) + "' is not a row or column index"};
  return std::optional<std::int64_t>{value};
}

}  // namespace

Result<Window> parse_window(std::string_view text) {
  const auto comma = text.find(',');
  const auto bad = Error{ErrorKind::usage, {}, "--subset", "expected r0:r1,c0:c1, got '" + std::string(text) + "'"};
  if (comma == std::string_view::npos) return bad;
  std::optional<std::int64_t> bounds[4];
  const std::string_view parts[2] = {text.substr(0, comma), text.substr(comma + 1)};
  for (int p = 0; p < 2; ++p) {
    const auto colon = parts[p].find(':');
    if (colon == std::string_view::npos) return bad;
    auto lo = parse_bound(parts[p].substr(0, colon));
    auto hi = parse_bound(parts[p].substr(colon + 1));
    if (!lo) return lo.error();
    if (!hi) return hi.error();
    if (*lo && *hi && **hi <= **lo) return Error{ErrorKind::usage, {}, "--subset", "empty range in '" + std::string(text) + "'"};
    bounds[2 * p] = *lo;
    bounds[2 * p + 1] = *hi;
  }
  return Window{bounds[0], bounds[1], bounds[2], bounds[3]};
}

Moments Moments::zero(std::vector<double> shift) {
  Moments m;
  const auto n = shift.size();
  m.shift = std::move(shift);
  m.sum.assign(n, 0.0);
  m.cross.assign(n * n, 0.0);
  return m;
}

Status merge(Moments& into, const Moments& part) {
  if (into.shift != part.shift)
    return Error{ErrorKind::internal, {}, {}, "merging moments accumulated about different shifts"};
  into.count += part.count;
  for (std::size_t i = 0; i < into.sum.size(); ++i) into.sum[i] += part.sum[i];
  for (std::size_t i = 0; i < into.cross.size(); ++i) into.cross[i] += part.cross[i];
  return {};
}

std::vector<double> pack(const Moments& m) {
  std::vector<double> buffer;
  buffer.reserve(1 + m.sum.size() + m.cross.size());
  buffer.push_back(static_cast<double>(m.count));
  buffer.insert(buffer.end(), m.sum.begin(), m.sum.end());
  buffer.insert(buffer.end(), m.cross.begin(), m.cross.end());
  return buffer;
}

void unpack(std::span<const double> buffer, Moments& m) {
  m.count = static_cast<std::int64_t>(buffer[0]);
  std::copy_n(buffer.begin() + 1, m.sum.size(), m.sum.begin());
  std::copy_n(buffer.begin() + 1 + static_cast<std::ptrdiff_t>(m.sum.size()), m.cross.size(), m.cross.begin());
}

Result<MeanCovariance> covariance(const Moments& moments, double covariance_scale) {
  if (moments.count < 2)
    return Error{ErrorKind::bad_input, {}, {},
                 "statistics need at least 2 valid pixels, got " + std::to_string(moments.count)};
  const std::int64_t n = moments.bands();
  const auto count = static_cast<double>(moments.count);
  MeanCovariance out{moments.count, std::vector<double>(static_cast<std::size_t>(n)), linalg::Matrix(n, n)};
  std::vector<double> centred_mean(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    centred_mean[static_cast<std::size_t>(i)] = moments.sum[static_cast<std::size_t>(i)] / count;
    out.mean[static_cast<std::size_t>(i)] = moments.shift[static_cast<std::size_t>(i)] + centred_mean[static_cast<std::size_t>(i)];
  }
  // Σ (x-m)(x-m)ᵀ = Σ (x-s)(x-s)ᵀ - n (m-s)(m-s)ᵀ, with m - s small by construction.
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = i; j < n; ++j) {
      const double scatter = moments.cross[static_cast<std::size_t>(i * n + j)] -
                             count * centred_mean[static_cast<std::size_t>(i)] * centred_mean[static_cast<std::size_t>(j)];
      out.covariance(i, j) = covariance_scale * scatter / (count - 1.0);
    }
  linalg::symmetrize_from_upper(out.covariance);
  return out;
}

}  // namespace hb::mnf
