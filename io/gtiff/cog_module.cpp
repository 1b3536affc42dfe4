// The GDAL module: turns a staged raw raster into a Cloud-Optimized GeoTIFF through
// GDAL's COG driver. Only this file links GDAL (io/gtiff/cog_module.h says why).
//
// The raw file is exposed to GDAL as an in-memory VRT of raw bands (no copy); the
// georeference, no-data, band descriptions and class table are set on the VRT, and the
// COG driver copies it, tiling it as it does. Overviews of a class map (one band with a
// colour table, which the driver resamples NEAREST) are built here in memory, at the
// sizes and with the resampling the driver would use, and handed to it as the VRT's
// overviews (OVERVIEWS=FORCE_USE_EXISTING): the driver then skips its temporary overview
// GeoTIFF and the COG keeps its bytes (docs/PERFORMANCE.md, "GeoTIFF against ENVI").
// Other rasters, and overviews past kMemoryOverviewBytes, go through that temporary,
// written at ZSTD level 1 instead of GTiff's default 9 (same COG bytes, less CPU).
#include "io/gtiff/cog_module.h"

#include <cpl_conv.h>
#include <cpl_error.h>
#include <cpl_string.h>
#include <gdal.h>
#include <gdal_frmts.h>
#include <ogr_srs_api.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace {

int fail(char* error, int size, const std::string& what) {
  const char* gdal = CPLGetLastErrorMsg();
  std::snprintf(error, static_cast<std::size_t>(size), "%s%s%s", what.c_str(), gdal && *gdal ? ": " : "",
                gdal ? gdal : "");
  return 1;
}

// Overviews built here, in memory: one buffer and one MEM dataset over it per level.
struct MemoryOverviews {
  std::vector<std::pair<int, int>> sizes;  // samples x lines of each level
  std::vector<std::vector<unsigned char>> pixels;
  std::vector<GDALDatasetH> levels;
  MemoryOverviews() = default;
  MemoryOverviews(const MemoryOverviews&) = delete;
  MemoryOverviews& operator=(const MemoryOverviews&) = delete;
  ~MemoryOverviews() {
    for (GDALDatasetH level : levels) GDALClose(level);
  }
};

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

std::string mem_name(const void* data, int samples, int lines, GDALDataType type) {
  return CPLSPrintf("MEM:::DATAPOINTER=%p,PIXELS=%d,LINES=%d,BANDS=1,DATATYPE=%s", data, samples, lines,
                    GDALGetDataTypeName(type));
}

bool allocate_levels(MemoryOverviews& overviews, GDALDataType type) {
  GDALDriverH mem = GDALGetDriverByName("MEM");
  for (const auto& [x, y] : overviews.sizes) {
    auto& pixels = overviews.pixels.emplace_back(static_cast<std::size_t>(x) * y * GDALGetDataTypeSizeBytes(type));
    GDALDatasetH level = GDALCreate(mem, "", x, y, 0, type, nullptr);
    if (level == nullptr) return false;
    overviews.levels.push_back(level);
    CPLStringList options;
    options.SetNameValue("DATAPOINTER", CPLSPrintf("%p", static_cast<void*>(pixels.data())));
    if (GDALAddBand(level, type, options.List()) != CE_None) return false;
  }
  return true;
}

// NEAREST, each level from the one above it (the first from the full raster): how the
// driver computes its temporary overviews, so the COG's overviews keep their pixels.
bool compute_levels(MemoryOverviews& overviews, GDALDatasetH vrt) {
  GDALRasterBandH above = GDALGetRasterBand(vrt, 1);
  for (GDALDatasetH level : overviews.levels) {
    GDALRasterBandH band = GDALGetRasterBand(level, 1);
    if (GDALRegenerateOverviews(above, 1, &band, "NEAREST", nullptr, nullptr) != CE_None) return false;
    above = band;
  }
  return true;
}

std::string xml_text(const std::string& text) {
  char* escaped = CPLEscapeString(text.c_str(), -1, CPLES_XML);
  std::string result(escaped);
  CPLFree(escaped);
  return result;
}

// The staging VRT: one raw band per band of the BIP file; the in-memory overviews of a
// single band listed as its overviews.
std::string vrt_xml(const HbCogRequest& r, GDALDataType type, const MemoryOverviews& overviews) {
  const long long sample = GDALGetDataTypeSizeBytes(type);
  std::string xml = CPLSPrintf("<VRTDataset rasterXSize=\"%lld\" rasterYSize=\"%lld\">", static_cast<long long>(r.samples),
                               static_cast<long long>(r.lines));
  for (long long b = 0; b < r.bands; ++b) {
    xml += CPLSPrintf("<VRTRasterBand dataType=\"%s\" band=\"%lld\" subClass=\"VRTRawRasterBand\">",
                      GDALGetDataTypeName(type), b + 1);
    xml += "<SourceFilename relativeToVRT=\"0\">" + xml_text(r.raw_path) + "</SourceFilename>";
    xml += CPLSPrintf("<ImageOffset>%lld</ImageOffset><PixelOffset>%lld</PixelOffset><LineOffset>%lld</LineOffset>",
                      b * sample, sample * r.bands, sample * r.bands * r.samples);
    xml += CPLSPrintf("<ByteOrder>%s</ByteOrder>", CPL_IS_LSB ? "LSB" : "MSB");
    for (std::size_t level = 0; level < overviews.sizes.size(); ++level) {
      const auto& [x, y] = overviews.sizes[level];
      xml += "<Overview><SourceFilename relativeToVRT=\"0\">" +
             xml_text(mem_name(overviews.pixels[level].data(), x, y, type)) +
             "</SourceFilename><SourceBand>1</SourceBand></Overview>";
    }
    xml += "</VRTRasterBand>";
  }
  return xml + "</VRTDataset>";
}

bool set_georeference(GDALDatasetH vrt, const HbCogRequest& r) {
  if (r.geotransform != nullptr) {
    double gt[6];
    std::memcpy(gt, r.geotransform, sizeof gt);
    if (GDALSetGeoTransform(vrt, gt) != CE_None) return false;
  }
  if (r.spatial_ref == nullptr || *r.spatial_ref == '\0') return true;
  OGRSpatialReferenceH srs = OSRNewSpatialReference(nullptr);
  OSRSetAxisMappingStrategy(srs, OAMS_TRADITIONAL_GIS_ORDER);
  bool ok = OSRSetFromUserInput(srs, r.spatial_ref) == OGRERR_NONE;
  if (ok) ok = GDALSetSpatialRef(vrt, srs) == CE_None;
  OSRDestroySpatialReference(srs);
  return ok;
}

bool set_bands(GDALDatasetH vrt, const HbCogRequest& r) {
  for (int b = 0; b < static_cast<int>(r.bands); ++b) {
    GDALRasterBandH band = GDALGetRasterBand(vrt, b + 1);
    if (r.has_nodata && GDALSetRasterNoDataValue(band, r.nodata) != CE_None) return false;
    if (r.band_names != nullptr) GDALSetDescription(band, r.band_names[b]);
    if (r.wavelengths != nullptr) {
      GDALSetMetadataItem(band, "wavelength", CPLSPrintf("%.17g", r.wavelengths[b]), nullptr);
      if (r.wavelength_units != nullptr) GDALSetMetadataItem(band, "wavelength_units", r.wavelength_units, nullptr);
    }
  }
  return true;
}

bool set_classes(GDALDatasetH vrt, const HbCogRequest& r) {
  if (r.classes <= 0) return true;
  GDALRasterBandH band = GDALGetRasterBand(vrt, 1);
  if (r.class_names != nullptr) {
    CPLStringList names;
    for (int c = 0; c < r.classes; ++c) names.AddString(r.class_names[c]);
    if (GDALSetRasterCategoryNames(band, names.List()) != CE_None) return false;
  }
  if (r.class_rgb == nullptr) return true;
  GDALColorTableH table = GDALCreateColorTable(GPI_RGB);
  for (int c = 0; c < r.classes; ++c) {
    const GDALColorEntry entry{static_cast<short>(r.class_rgb[3 * c]), static_cast<short>(r.class_rgb[3 * c + 1]),
                               static_cast<short>(r.class_rgb[3 * c + 2]), 255};
    GDALSetColorEntry(table, c, &entry);
  }
  const bool ok = GDALSetRasterColorTable(band, table) == CE_None;
  GDALDestroyColorTable(table);
  return ok;
}

// Sets a GDAL configuration option for this thread while it lives, unless the user set it.
class ThreadConfig {
 public:
  ThreadConfig(const char* key, const char* value) : key_(key) {
    if (CPLGetConfigOption(key, nullptr) != nullptr) return;
    CPLSetThreadLocalConfigOption(key, value);
    set_ = true;
  }
  ThreadConfig(const ThreadConfig&) = delete;
  ThreadConfig& operator=(const ThreadConfig&) = delete;
  ~ThreadConfig() {
    if (set_) CPLSetThreadLocalConfigOption(key_, nullptr);
  }

 private:
  const char* key_;
  bool set_ = false;
};

// The drivers a write needs, without scanning for GDAL's plugins as GDALAllRegister does.
void register_write_drivers() {
  GDALRegister_VRT();
  GDALRegister_MEM();
  GDALRegister_GTiff();
  GDALRegister_COG();
}

CPLStringList cog_options(const HbCogRequest& r, bool overviews_given) {
  CPLStringList options;
  options.SetNameValue("COMPRESS", "DEFLATE");
  options.SetNameValue("LEVEL", "1");
  options.SetNameValue("PREDICTOR", "NO");
  options.SetNameValue("BIGTIFF", "IF_SAFER");
  options.SetNameValue("NUM_THREADS", r.threads > 0 ? std::to_string(r.threads).c_str() : "ALL_CPUS");
  if (overviews_given) options.SetNameValue("OVERVIEWS", "FORCE_USE_EXISTING");
  return options;
}

}  // namespace

extern "C" int hb_cog_abi(void) { return HB_COG_ABI_VERSION; }

extern "C" int hb_cog_write(const HbCogRequest* request, char* error, int error_size) {
  const HbCogRequest& r = *request;
  register_write_drivers();
  CPLErrorReset();
  const GDALDataType type = GDALGetDataTypeByName(r.gdal_type);
  if (type == GDT_Unknown) return fail(error, error_size, std::string("no GDAL type ") + r.gdal_type);
  GDALDriverH cog_driver = GDALGetDriverByName("COG");
  if (cog_driver == nullptr || GDALGetDriverByName("VRT") == nullptr || GDALGetDriverByName("MEM") == nullptr)
    return fail(error, error_size, "GDAL lacks the VRT, MEM or COG driver");
  MemoryOverviews overviews;
  const auto sizes = cog_overview_sizes(static_cast<int>(r.samples), static_cast<int>(r.lines));
  if (overviews_in_memory(r, type, sizes)) {
    overviews.sizes = sizes;
    if (!allocate_levels(overviews, type)) return fail(error, error_size, "cannot allocate the overviews");
  }
  GDALDatasetH vrt = GDALOpen(vrt_xml(r, type, overviews).c_str(), GA_ReadOnly);
  if (vrt == nullptr) return fail(error, error_size, "cannot create the staging VRT");
  bool ok = set_georeference(vrt, r) && set_bands(vrt, r) && set_classes(vrt, r);
  if (!ok) {
    GDALClose(vrt);
    return fail(error, error_size, "cannot describe the raster to GDAL");
  }
  if (!overviews.levels.empty() && !compute_levels(overviews, vrt)) {
    GDALClose(vrt);
    return fail(error, error_size, "cannot compute the overviews");
  }
  const CPLStringList options = cog_options(r, !overviews.levels.empty());
  const ThreadConfig fast_overview_staging("ZSTD_LEVEL_OVERVIEW", "1");
  GDALDatasetH cog = GDALCreateCopy(cog_driver, r.output_path, vrt, FALSE, options.List(), nullptr, nullptr);
  GDALClose(vrt);
  if (cog == nullptr) return fail(error, error_size, "the COG driver failed");
  GDALClose(cog);
  if (CPLGetLastErrorType() >= CE_Failure) return fail(error, error_size, "the COG driver failed");
  return 0;
}

extern "C" int hb_gdal_describe(const char* path, char* out, int out_size) {
  GDALAllRegister();
  CPLErrorReset();
  GDALDatasetH ds = GDALOpen(path, GA_ReadOnly);
  if (ds == nullptr) return fail(out, out_size, std::string("GDAL cannot open ") + path);
  std::snprintf(out, static_cast<std::size_t>(out_size), "%s %dx%dx%d", GDALGetDriverShortName(GDALGetDatasetDriver(ds)),
                GDALGetRasterXSize(ds), GDALGetRasterYSize(ds), GDALGetRasterCount(ds));
  GDALClose(ds);
  return 0;
}
