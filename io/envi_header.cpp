// Interprets the entries of an ENVI header and checks what can be checked without the
// data file. Every failure names the header file and the key at fault.
#include "io/envi_header.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "io/envi_header_lex.hpp"

namespace hb::io {
namespace {

using envi::Entry;

// Offsets beyond this are a corrupt header, not a real file layout.
constexpr std::int64_t kMaxHeaderOffset = std::int64_t{1} << 40;
// Per-band values (scaling, wavelengths, the statistics' band x band matrices) are held
// in memory: a header claiming more bands than any sensor has is refused before one is
// made (a scale factor alone would otherwise ask for a vector of that many gains).
constexpr std::int64_t kMaxBands = std::int64_t{1} << 20;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string quoted(std::string_view s) {
  constexpr std::size_t kShown = 40;
  return "'" + std::string(s.substr(0, kShown)) + (s.size() > kShown ? "...'" : "'");
}

class FieldReader {
 public:
  // The last entry for a key wins, as in GDAL.
  FieldReader(const std::vector<Entry>& entries, const std::string& file) : file_(file) {
    for (const auto& entry : entries)
      if (envi::is_known_key(entry.key)) known_[entry.key] = &entry;
  }

  const Entry* find(std::string_view key) const {
    const auto it = known_.find(key);
    return it == known_.end() ? nullptr : it->second;
  }

  Result<std::int64_t> integer(std::string_view key, std::optional<std::int64_t> fallback) const {
    const Entry* entry = find(key);
    if (!entry) {
      if (fallback) return *fallback;
      return fail(key, "required field is missing");
    }
    std::int64_t value = 0;
    if (entry->braced || !envi::parse_int(entry->value, value))
      return fail(key, "expected an integer, found " + quoted(entry->value));
    return value;
  }

  Result<std::optional<double>> real(std::string_view key) const {
    const Entry* entry = find(key);
    if (!entry) return std::optional<double>{};
    double value = 0;
    if (entry->braced || !envi::parse_double(entry->value, value))
      return fail(key, "expected a number, found " + quoted(entry->value));
    return std::optional<double>{value};
  }

  std::string text(std::string_view key, std::string fallback = {}) const {
    const Entry* entry = find(key);
    return entry ? std::string(entry->value) : fallback;
  }

  // A name such as the file type: a {...} value spanning lines becomes one line.
  std::string name(std::string_view key) const {
    std::string out = text(key);
    std::replace_if(out.begin(), out.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
    return out;
  }

  Result<std::vector<double>> reals(std::string_view key) const {
    std::vector<double> values;
    const Entry* entry = find(key);
    if (!entry) return values;
    const auto items = envi::split_list(*entry);
    values.reserve(items.size());
    for (std::size_t i = 0; i < items.size(); ++i) {
      double value = 0;
      if (!envi::parse_double(items[i], value) || !std::isfinite(value))
        return fail(key, "item " + std::to_string(i + 1) + " is not a finite number: " + quoted(items[i]));
      values.push_back(value);
    }
    return values;
  }

  // Integer items in [lo, hi]; ENVI writes some of them as "1.0".
  Result<std::vector<int>> ints(std::string_view key, int lo, int hi) const {
    auto values = reals(key);
    if (!values) return values.error();
    std::vector<int> out;
    out.reserve(values->size());
    for (std::size_t i = 0; i < values->size(); ++i) {
      const double v = (*values)[i];
      if (v != std::floor(v) || v < lo || v > hi)
        return fail(key, "item " + std::to_string(i + 1) + " must be an integer from " + std::to_string(lo) +
                             " to " + std::to_string(hi));
      out.push_back(static_cast<int>(v));
    }
    return out;
  }

  std::vector<std::string> strings(std::string_view key) const {
    std::vector<std::string> out;
    if (const Entry* entry = find(key))
      for (auto item : envi::split_list(*entry)) out.emplace_back(item);
    return out;
  }

  Error fail(std::string_view key, std::string message) const {
    return bad_input(file_, std::string(key), std::move(message));
  }

 private:
  std::unordered_map<std::string_view, const Entry*> known_;
  const std::string& file_;
};

Result<std::int64_t> dimension(const FieldReader& fields, std::string_view key) {
  auto value = fields.integer(key, std::nullopt);
  if (value && *value < 1) return fields.fail(key, "must be at least 1, found " + std::to_string(*value));
  return value;
}

Result<DataType> data_type(const FieldReader& fields) {
  auto code = fields.integer("data type", std::nullopt);
  if (!code) return code.error();
  if (*code == 6 || *code == 9)
    return fields.fail("data type", "complex data (code " + std::to_string(*code) + ") is not supported");
  if (auto type = data_type_from_envi_code(static_cast<long>(*code))) return *type;
  return fields.fail("data type", "unknown data type code " + std::to_string(*code) +
                                      " (supported: 1, 2, 3, 4, 5, 12, 13, 14, 15)");
}

Status read_layout(const FieldReader& fields, EnviHeader& header) {
  auto& shape = header.info.shape;
  auto samples = dimension(fields, "samples");
  if (!samples) return samples.error();
  auto lines = dimension(fields, "lines");
  if (!lines) return lines.error();
  auto bands = dimension(fields, "bands");
  if (!bands) return bands.error();
  if (*bands > kMaxBands)
    return fields.fail("bands", std::to_string(*bands) + " bands is implausibly many (limit " + std::to_string(kMaxBands) + ")");
  shape = {*lines, *samples, *bands};
  auto type = data_type(fields);
  if (!type) return type.error();
  header.info.type = *type;

  auto offset = fields.integer("header offset", 0);
  if (!offset) return offset.error();
  if (*offset < 0) return fields.fail("header offset", "must not be negative, found " + std::to_string(*offset));
  if (*offset > kMaxHeaderOffset)
    return fields.fail("header offset", std::to_string(*offset) + " bytes is implausibly large (limit 1 TiB)");
  header.header_offset = *offset;

  auto interleave = interleave_from_name(fields.text("interleave", "bsq"));
  if (!interleave)
    return fields.fail("interleave", "unknown interleave " + quoted(fields.text("interleave")) + " (bsq, bil or bip)");
  header.interleave = *interleave;

  auto order = fields.integer("byte order", 0);
  if (!order) return order.error();
  if (*order != 0 && *order != 1)
    return fields.fail("byte order", "must be 0 (little endian) or 1 (big endian), found " + std::to_string(*order));
  header.byte_order = static_cast<ByteOrder>(*order);

  std::int64_t total = 0;
  if (__builtin_mul_overflow(shape.lines, shape.samples, &total) ||
      __builtin_mul_overflow(total, shape.bands, &total) ||
      __builtin_mul_overflow(total, static_cast<std::int64_t>(bytes_per_sample(*type)), &total) ||
      __builtin_add_overflow(total, header.header_offset, &total))
    return fields.fail("lines * samples * bands", "the data size overflows 64 bits");
  return {};
}

Status check_length(const FieldReader& fields, std::string_view key, std::size_t actual, std::int64_t expected,
                    std::string_view against) {
  if (actual == 0 || static_cast<std::int64_t>(actual) == expected) return {};
  return fields.fail(key, "has " + std::to_string(actual) + " items but " + std::string(against) + " = " +
                              std::to_string(expected));
}

Status read_spectral(const FieldReader& fields, EnviHeader& header) {
  auto& meta = header.info.meta;
  const auto& shape = header.info.shape;
  // In a spectral library each line is a spectrum and the samples are its channels.
  const bool library = lower(meta.file_type) == "envi spectral library";
  const std::int64_t channels = library ? shape.samples : shape.bands;
  const std::string_view channel_key = library ? "samples" : "bands";

  auto wavelength = fields.reals("wavelength");
  if (!wavelength) return wavelength.error();
  meta.wavelength = std::move(*wavelength);
  HB_TRY(check_length(fields, "wavelength", meta.wavelength.size(), channels, channel_key));
  auto fwhm = fields.reals("fwhm");
  if (!fwhm) return fwhm.error();
  meta.fwhm = std::move(*fwhm);
  HB_TRY(check_length(fields, "fwhm", meta.fwhm.size(), channels, channel_key));
  auto bbl = fields.ints("bbl", 0, 1);
  if (!bbl) return bbl.error();
  meta.bbl = std::move(*bbl);
  HB_TRY(check_length(fields, "bbl", meta.bbl.size(), channels, channel_key));
  meta.band_names = fields.strings("band names");
  HB_TRY(check_length(fields, "band names", meta.band_names.size(), shape.bands, "bands"));
  meta.spectra_names = fields.strings("spectra names");
  HB_TRY(check_length(fields, "spectra names", meta.spectra_names.size(), shape.lines, "lines"));
  meta.wavelength_units = fields.name("wavelength units");
  auto ignore = fields.real("data ignore value");
  if (!ignore) return ignore.error();
  meta.data_ignore_value = *ignore;
  return {};
}

Status read_classes(const FieldReader& fields, Metadata& meta) {
  if (fields.find("classes")) {
    auto classes = fields.integer("classes", std::nullopt);
    if (!classes) return classes.error();
    if (*classes < 0 || *classes > std::numeric_limits<int>::max() / 3)
      return fields.fail("classes", "must be a non-negative integer, found " + std::to_string(*classes));
    meta.classes = static_cast<int>(*classes);
  }
  meta.class_names = fields.strings("class names");
  auto lookup = fields.ints("class lookup", 0, 255);
  if (!lookup) return lookup.error();
  meta.class_lookup = std::move(*lookup);
  if (!meta.classes && (!meta.class_names.empty() || !meta.class_lookup.empty()))
    return fields.fail(meta.class_names.empty() ? "class lookup" : "class names", "given without 'classes'");
  const std::int64_t n = meta.classes.value_or(0);
  HB_TRY(check_length(fields, "class names", meta.class_names.size(), n, "classes"));
  HB_TRY(check_length(fields, "class lookup", meta.class_lookup.size(), 3 * n, "3 x classes"));
  return {};
}

void keep_unknown(const std::vector<Entry>& entries, Metadata& meta) {
  std::unordered_map<std::string_view, std::size_t> index;  // key -> position in meta.extra
  index.reserve(entries.size());
  for (const auto& entry : entries) {
    if (envi::is_known_key(entry.key)) continue;
    std::string raw = entry.braced ? "{" + std::string(entry.value) + "}" : std::string(entry.value);
    const auto [at, added] = index.try_emplace(entry.key, meta.extra.size());
    if (added)
      meta.extra.emplace_back(entry.key, std::move(raw));
    else
      meta.extra[at->second].second = std::move(raw);  // the last one wins, as for known keys
  }
}

}  // namespace

Result<EnviHeader> parse_envi_header(std::string_view text, const std::string& file) {
  auto entries = envi::lex(text, file);
  if (!entries) return entries.error();
  const FieldReader fields(*entries, file);
  EnviHeader header;
  auto& meta = header.info.meta;
  HB_TRY(read_layout(fields, header));
  if (auto file_type = fields.name("file type"); !file_type.empty()) meta.file_type = std::move(file_type);
  meta.description = fields.text("description");
  meta.map_info = fields.text("map info");
  meta.coordinate_system_string = fields.text("coordinate system string");
  HB_TRY(read_spectral(fields, header));
  HB_TRY(read_classes(fields, meta));
  keep_unknown(*entries, meta);
  if (lower(meta.file_type) != "envi spectral library") HB_TRY(read_envi_scaling(meta, header.info.shape.bands, file));
  meta.envi_interleave = header.interleave;
  meta.envi_byte_order = header.byte_order;
  return header;
}

Result<EnviHeader> read_envi_header(const std::string& header_path) {
  const int fd = ::open(header_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error(header_path, std::string("cannot open header: ") + std::strerror(errno));
  struct stat st {};
  std::string text;
  std::string failure;
  if (::fstat(fd, &st) != 0) {
    failure = std::string("cannot stat header: ") + std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    failure = "cannot read header: not a regular file";
  } else if (static_cast<std::uint64_t>(st.st_size) > envi::kMaxHeaderBytes) {
    ::close(fd);
    return bad_input(header_path, "ENVI", "header is " + std::to_string(st.st_size) +
                                              " bytes, more than the 16 MiB a text header can plausibly be");
  } else {
    // One byte more than stat says: a file that grew under us then fails the size check.
    text.resize(static_cast<std::size_t>(st.st_size) + 1);
    std::size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
      if (n == 0) break;
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        failure = std::string("cannot read header: ") + std::strerror(errno);
        break;
      }
      got += static_cast<std::size_t>(n);
    }
    text.resize(got);
    if (got > envi::kMaxHeaderBytes) failure = "header grew past 16 MiB while being read";
  }
  ::close(fd);
  if (!failure.empty()) return io_error(header_path, failure);
  return parse_envi_header(text, header_path);
}

}  // namespace hb::io
