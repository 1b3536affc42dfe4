// ENVI header (.hdr) parsing and writing. Self-contained (no MPI, HDF5) so that it can
// be fuzzed on its own. Keys are case-insensitive; {...} values may span lines; keys we
// do not interpret are kept in Metadata::extra and written back.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "src/base/error.hpp"
#include "io/metadata.hpp"

namespace hb::io {

struct EnviHeader {
  CubeInfo info;
  std::int64_t header_offset = 0;  // bytes to skip at the start of the data file
  Interleave interleave = Interleave::bsq;
  ByteOrder byte_order = ByteOrder::little;
};

// Parses header text. `file` names the header in error messages. Checks everything
// that can be checked without the data file: required fields, codes, list lengths
// against bands (or samples/lines for classes and spectral libraries), 64-bit overflow
// of lines * samples * bands * bytes + offset.
Result<EnviHeader> parse_envi_header(std::string_view text, const std::string& file);

// Metadata::scaling from the scaling keys kept in meta.extra (`data gain values`,
// `data offset values`, `reflectance scale factor`); parse_envi_header calls it for
// cubes. A list of the wrong length or a zero factor is bad input naming the key.
Status read_envi_scaling(Metadata& meta, std::int64_t bands, const std::string& file);

// Reads and parses a header file (limited to a sane size: headers are text, not data).
Result<EnviHeader> read_envi_header(const std::string& header_path);

// Header text for `header`, every Metadata field and the extra keys included.
std::string format_envi_header(const EnviHeader& header);

// "scene.hdr" <-> data file: given either the header or the data file, finds the
// other one the way ENVI does (NAME.hdr beside NAME, NAME.img, NAME.dat, NAME.raw,
// NAME.sli, NAME.bsq/.bil/.bip, or NAME.EXT.hdr beside NAME.EXT).
struct EnviPaths {
  std::string header;
  std::string data;
};
Result<EnviPaths> resolve_envi_paths(const std::string& path);

// The files the ENVI writer makes for an output name: NAME.hdr -> (NAME.hdr, NAME.img);
// NAME.EXT -> (NAME.hdr, NAME.EXT); NAME -> (NAME.hdr, NAME).
EnviPaths envi_output_paths(const std::string& path);

}  // namespace hb::io
