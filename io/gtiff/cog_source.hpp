// The raster the COG driver copies (part of the GDAL module, io/gtiff/cog_module.h).
//
// The staged raw file is mapped into memory and exposed as a VRT whose bands read it
// through GDAL's MEM driver: no copy, and no read call per line as a raw VRT band makes.
// A class map's overviews (one band with a colour table, which the COG driver resamples
// NEAREST) are built here, in memory, at the driver's sizes and as the driver computes
// them (each level from the one above), and listed as the VRT band's overviews: with
// OVERVIEWS=FORCE_USE_EXISTING the driver copies them instead of building them into a
// temporary GeoTIFF, and the COG keeps its bytes. Other rasters, and overviews past
// kMemoryOverviewBytes, are left to the driver.
#pragma once

#include <gdal.h>

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "io/gtiff/cog_module.h"

namespace hb::io::gtiff {

class CogSource {
 public:
  // The source, or nullptr with the reason in `error`.
  static std::unique_ptr<CogSource> open(const HbCogRequest& request, GDALDataType type, std::string& error);
  CogSource(const CogSource&) = delete;
  CogSource& operator=(const CogSource&) = delete;
  ~CogSource();

  GDALDatasetH dataset() const { return vrt_; }
  // Whether the VRT carries overviews for the driver to use as they are.
  bool has_overviews() const { return !levels_.empty(); }

 private:
  CogSource() = default;
  bool map(const char* path, std::string& error);
  bool build_overviews(const HbCogRequest& request, GDALDataType type);

  void* mapped_ = nullptr;
  std::size_t mapped_bytes_ = 0;
  std::vector<std::pair<int, int>> sizes_;  // samples x lines of each overview level
  std::vector<std::vector<unsigned char>> pixels_;
  std::vector<GDALDatasetH> levels_;  // MEM datasets over pixels_
  GDALDatasetH vrt_ = nullptr;
};

}  // namespace hb::io::gtiff
