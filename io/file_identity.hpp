// Refuses a command whose outputs would overwrite its inputs, or each other, before
// anything is read. Each command lists the files it reads and writes in a FilePlan;
// the plan expands a path to the files it stands for (an ENVI header and its data
// file) and compares them by identity on disk (device and inode), so ./x, ../d/x, a
// symbolic or hard link to an input are caught. Outputs not on disk yet are compared
// with each other by their normalised absolute path.
#pragma once

#include <string>
#include <vector>

#include "src/base/error.hpp"

namespace hb::io {

class FilePlan {
 public:
  // Empty paths (options not given) are ignored by every call.
  // A cube read through open_cube (or an ENVI spectral library): header and data file.
  void read_cube(const std::string& option, const std::string& path);
  // An input that is exactly one file (an HDF5 training or statistics file).
  void read_file(const std::string& option, const std::string& path);
  // A cube written through create_cube: ENVI NAME.hdr and its data file, or one HDF5 file,
  // or a GeoTIFF and GDAL's NAME.aux.xml (whose GDAL module starts loading here).
  void write_cube(const std::string& option, const std::string& path);
  // An output that is exactly one file (JSON, Markdown, HDF5 written directly).
  void write_file(const std::string& option, const std::string& path);

  // A usage error naming the output's option and the input (or the other output)
  // when two planned files are one file on disk.
  Status check() const;

  struct Entry {
    std::string option;  // what names it on the command line: "scene", "-o", "--truth", ...
    std::string given;   // the path as given
    std::string file;    // one file it stands for
  };

 private:
  std::vector<Entry> reads_;
  std::vector<Entry> writes_;
};

}  // namespace hb::io
