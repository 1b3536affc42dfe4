#include "io/aviris/aviris_parsers.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

namespace hb::io::aviris {
namespace {

constexpr std::int64_t kMaxBands = 1 << 20;  // far beyond any spectrometer

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// The whitespace-separated numbers of one line; nullopt when one is not a finite number.
std::optional<std::vector<double>> numbers_of(std::string_view line) {
  std::vector<double> values;
  std::size_t at = 0;
  while (at < line.size()) {
    while (at < line.size() && blank(line[at])) ++at;
    if (at == line.size()) break;
    std::size_t end = at;
    while (end < line.size() && !blank(line[end])) ++end;
    double value = 0;
    const char* first = line.data() + at;
    const char* last = line.data() + end;
    if (*first == '+') ++first;
    const auto [stop, ec] = std::from_chars(first, last, value);
    if (ec != std::errc{} || stop != last || !std::isfinite(value)) return std::nullopt;
    values.push_back(value);
    at = end;
  }
  return values;
}

// Calls row(values, line_number) for each non-blank line of `columns` numbers whose
// last column is a channel 1..bands seen once; checks every channel is there.
template <class Row>
Status for_each_channel(std::string_view text, std::int64_t bands, std::size_t columns, const std::string& file,
                        Row row) {
  if (bands < 1 || bands > kMaxBands) return bad_input(file, "bands", "out of range");
  std::vector<bool> seen(static_cast<std::size_t>(bands), false);
  std::int64_t line_number = 0, channels = 0;
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    ++line_number;
    const std::string field = "line " + std::to_string(line_number);
    auto values = numbers_of(line);
    if (!values) return bad_input(file, field, "expected numbers");
    if (values->empty()) continue;
    if (values->size() != columns)
      return bad_input(file, field, "expected " + std::to_string(columns) + " columns, found " +
                                        std::to_string(values->size()));
    const double channel = values->back();
    if (channel != std::floor(channel) || channel < 1 || channel > static_cast<double>(bands))
      return bad_input(file, field, "channel must be an integer from 1 to bands = " + std::to_string(bands));
    const auto index = static_cast<std::size_t>(channel) - 1;
    if (seen[index]) return bad_input(file, field, "channel " + std::to_string(index + 1) + " given twice");
    seen[index] = true;
    ++channels;
    HB_TRY(row(*values, index, field));
  }
  if (channels != bands)
    return bad_input(file, "channels", "has " + std::to_string(channels) + " channels but the image has bands = " +
                                           std::to_string(bands));
  return {};
}

}  // namespace

Result<std::vector<double>> parse_gain(std::string_view text, std::int64_t bands, const std::string& file) {
  std::vector<double> factors(static_cast<std::size_t>(std::clamp<std::int64_t>(bands, 0, kMaxBands)));
  HB_TRY(for_each_channel(text, bands, 2, file,
                          [&](const std::vector<double>& values, std::size_t channel, const std::string& field) -> Status {
                            if (values[0] == 0) return bad_input(file, field, "a factor of 0 cannot divide");
                            factors[channel] = values[0];
                            return {};
                          }));
  return factors;
}

Result<SpectralCalibration> parse_spc(std::string_view text, std::int64_t bands, const std::string& file) {
  SpectralCalibration calibration;
  const auto count = static_cast<std::size_t>(std::clamp<std::int64_t>(bands, 0, kMaxBands));
  calibration.centre_nm.resize(count);
  calibration.fwhm_nm.resize(count);
  HB_TRY(for_each_channel(text, bands, 5, file,
                          [&](const std::vector<double>& values, std::size_t channel, const std::string& field) -> Status {
                            if (values[0] <= 0 || values[1] < 0)
                              return bad_input(file, field, "centre must be positive and FWHM non-negative");
                            calibration.centre_nm[channel] = values[0];
                            calibration.fwhm_nm[channel] = values[1];
                            return {};
                          }));
  return calibration;
}

}  // namespace hb::io::aviris
