// The GDAL module: turns a staged raw raster into a Cloud-Optimized GeoTIFF through
// GDAL's COG driver. Only the module links GDAL (io/gtiff/cog_module.h says why).
//
// The staged file is exposed to GDAL as an in-memory VRT (io/gtiff/cog_source.hpp: no
// copy, a class map's overviews ready-made); the georeference, no-data, band
// descriptions and class table are set on the VRT, and the COG driver copies it, tiling
// it as it does. Overviews the driver builds itself go through its temporary GeoTIFF,
// which is written at ZSTD level 1 instead of GTiff's default 9 (same COG bytes, less CPU).
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

#include "io/gtiff/cog_source.hpp"

namespace {

int fail(char* error, int size, const std::string& what) {
  const char* gdal = CPLGetLastErrorMsg();
  std::snprintf(error, static_cast<std::size_t>(size), "%s%s%s", what.c_str(), gdal && *gdal ? ": " : "",
                gdal ? gdal : "");
  return 1;
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
  // ZSTD level 1: every reader the outputs are for (GDAL 2.3 and later, so QGIS and
  // rasterio/rioxarray) reads it; it encodes in about 60 % of DEFLATE level 1's time
  // and makes files about 10 % smaller (docs/PERFORMANCE.md, "GeoTIFF against ENVI").
  options.SetNameValue("COMPRESS", "ZSTD");
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
  std::string why;
  const auto source = hb::io::gtiff::CogSource::open(r, type, why);
  if (source == nullptr) return fail(error, error_size, why);
  GDALDatasetH vrt = source->dataset();
  if (!set_georeference(vrt, r) || !set_bands(vrt, r) || !set_classes(vrt, r))
    return fail(error, error_size, "cannot describe the raster to GDAL");
  const CPLStringList options = cog_options(r, source->has_overviews());
  const ThreadConfig fast_overview_staging("ZSTD_LEVEL_OVERVIEW", "1");
  // The options are fixed and tested: GDAL's check parses the COG and GTiff drivers'
  // option lists (XML) on every copy, about 5 ms.
  const ThreadConfig known_options("GDAL_VALIDATE_CREATION_OPTIONS", "NO");
  GDALDatasetH cog = GDALCreateCopy(cog_driver, r.output_path, vrt, FALSE, options.List(), nullptr, nullptr);
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
