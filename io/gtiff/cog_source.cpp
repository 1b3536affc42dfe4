#include "io/gtiff/cog_source.hpp"

#include <cpl_conv.h>
#include <cpl_string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace hb::io::gtiff {
namespace {

// Past this many bytes of overviews the driver's temporary file holds them instead.
constexpr long long kMemoryOverviewBytes = 256LL << 20;
// The COG driver's default block size, also its threshold for overviews.
constexpr int kCogBlock = 512;

// The levels the COG driver makes: halved (rounded down) until one block holds the level.
std::vector<std::pair<int, int>> cog_overview_sizes(int samples, int lines) {
  std::vector<std::pair<int, int>> sizes;
  while (samples > kCogBlock || lines > kCogBlock) {
    samples = samples / 2 > 0 ? samples / 2 : 1;
    lines = lines / 2 > 0 ? lines / 2 : 1;
    sizes.emplace_back(samples, lines);
  }
  return sizes;
}

// Whether the overviews are built here: a class map (the driver resamples a band with a
// colour table NEAREST) whose overviews fit the memory budget.
bool overviews_in_memory(const HbCogRequest& r, GDALDataType type, const std::vector<std::pair<int, int>>& sizes) {
  if (r.bands != 1 || r.classes <= 0 || r.class_rgb == nullptr || sizes.empty()) return false;
  long long bytes = 0;
  for (const auto& [x, y] : sizes) bytes += static_cast<long long>(x) * y * GDALGetDataTypeSizeBytes(type);
  return bytes <= kMemoryOverviewBytes;
}

// A MEM dataset over pixel-interleaved samples at `data`, as GDAL opens it by name.
std::string mem_name(const void* data, long long samples, long long lines, long long bands, GDALDataType type) {
  const long long sample = GDALGetDataTypeSizeBytes(type);
  return CPLSPrintf("MEM:::DATAPOINTER=%p,PIXELS=%lld,LINES=%lld,BANDS=%lld,DATATYPE=%s,PIXELOFFSET=%lld,"
                    "LINEOFFSET=%lld,BANDOFFSET=%lld",
                    data, samples, lines, bands, GDALGetDataTypeName(type), sample * bands, sample * bands * samples,
                    sample);
}

std::string xml_text(const std::string& text) {
  char* escaped = CPLEscapeString(text.c_str(), -1, CPLES_XML);
  std::string result(escaped);
  CPLFree(escaped);
  return result;
}

std::string source_xml(const std::string& name, long long band) {
  return "<SourceFilename relativeToVRT=\"0\">" + xml_text(name) + "</SourceFilename>" +
         CPLSPrintf("<SourceBand>%lld</SourceBand>", band);
}

}  // namespace

std::unique_ptr<CogSource> CogSource::open(const HbCogRequest& r, GDALDataType type, std::string& error) {
  std::unique_ptr<CogSource> source(new CogSource());
  if (!source->map(r.raw_path, error)) return nullptr;
  const long long need = r.lines * r.samples * r.bands * GDALGetDataTypeSizeBytes(type);
  if (static_cast<long long>(source->mapped_bytes_) < need) {
    error = std::string("the staged file ") + r.raw_path + " is shorter than the raster";
    return nullptr;
  }
  if (!source->build_overviews(r, type)) {
    error = "cannot compute the overviews";
    return nullptr;
  }
  const std::string base = mem_name(source->mapped_, r.samples, r.lines, r.bands, type);
  std::string xml = CPLSPrintf("<VRTDataset rasterXSize=\"%lld\" rasterYSize=\"%lld\">", static_cast<long long>(r.samples),
                               static_cast<long long>(r.lines));
  for (long long b = 1; b <= r.bands; ++b) {
    xml += CPLSPrintf("<VRTRasterBand dataType=\"%s\" band=\"%lld\">", GDALGetDataTypeName(type), b);
    xml += "<SimpleSource>" + source_xml(base, b) + "</SimpleSource>";
    for (std::size_t level = 0; level < source->levels_.size(); ++level) {
      const auto& [x, y] = source->sizes_[level];
      xml += "<Overview>" + source_xml(mem_name(source->pixels_[level].data(), x, y, 1, type), 1) + "</Overview>";
    }
    xml += "</VRTRasterBand>";
  }
  source->vrt_ = GDALOpen((xml + "</VRTDataset>").c_str(), GA_ReadOnly);
  if (source->vrt_ == nullptr) {
    error = "cannot create the staging VRT";
    return nullptr;
  }
  return source;
}

CogSource::~CogSource() {
  if (vrt_ != nullptr) GDALClose(vrt_);
  for (GDALDatasetH level : levels_) GDALClose(level);
  if (mapped_ != nullptr) munmap(mapped_, mapped_bytes_);
}

// Private and writable: GDAL's MEM driver may assume it can write; the file never changes.
bool CogSource::map(const char* path, std::string& error) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0) {
    error = std::string("cannot read the staged file ") + path + ": " + std::strerror(errno);
    if (fd >= 0) close(fd);
    return false;
  }
  mapped_bytes_ = static_cast<std::size_t>(st.st_size);
  void* mapped = mmap(nullptr, mapped_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  close(fd);
  if (mapped == MAP_FAILED) {
    error = std::string("cannot map the staged file ") + path + ": " + std::strerror(errno);
    return false;
  }
  mapped_ = mapped;
  return true;
}

// NEAREST, each level from the one above it (the first from the full raster): how the
// driver computes its temporary overviews, so the COG's overviews keep their pixels.
bool CogSource::build_overviews(const HbCogRequest& r, GDALDataType type) {
  const auto sizes = cog_overview_sizes(static_cast<int>(r.samples), static_cast<int>(r.lines));
  if (!overviews_in_memory(r, type, sizes)) return true;
  sizes_ = sizes;
  GDALDatasetH base = GDALOpen(mem_name(mapped_, r.samples, r.lines, 1, type).c_str(), GA_ReadOnly);
  if (base == nullptr) return false;
  GDALRasterBandH above = GDALGetRasterBand(base, 1);
  bool ok = true;
  for (const auto& [x, y] : sizes_) {
    auto& pixels = pixels_.emplace_back(static_cast<std::size_t>(x) * y * GDALGetDataTypeSizeBytes(type));
    GDALDatasetH level = GDALCreate(GDALGetDriverByName("MEM"), "", x, y, 0, type, nullptr);
    if (level == nullptr) { ok = false; break; }
    levels_.push_back(level);
    CPLStringList options;
    options.SetNameValue("DATAPOINTER", CPLSPrintf("%p", static_cast<void*>(pixels.data())));
    GDALRasterBandH band = nullptr;
    ok = GDALAddBand(level, type, options.List()) == CE_None && (band = GDALGetRasterBand(level, 1)) != nullptr &&
         GDALRegenerateOverviews(above, 1, &band, "NEAREST", nullptr, nullptr) == CE_None;
    if (!ok) break;
    above = band;
  }
  GDALClose(base);
  return ok;
}

}  // namespace hb::io::gtiff
