/* The C boundary between hyperbatch and the GDAL module (libhb_gdal.so).
 *
 * GDAL (Debian) links the serial HDF5 library and hyperbatch the MPI one; both export
 * the same H5* symbols. The module is the only code that links GDAL, and hyperbatch
 * loads it with dlopen(RTLD_LOCAL | RTLD_DEEPBIND) (io/gtiff/gdal_module.cpp): GDAL and
 * its HDF5/netCDF libraries then bind to each other, never to the MPI HDF5 of the
 * process, and nothing of theirs is visible to hyperbatch. Only plain C types cross. */
#ifndef HB_IO_GTIFF_COG_MODULE_H
#define HB_IO_GTIFF_COG_MODULE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HB_COG_ABI_VERSION 1
#define HB_COG_EXPORT __attribute__((visibility("default")))

/* A raster held in a raw file, pixel-interleaved (BIP), native byte order. */
typedef struct HbCogRequest {
  const char* raw_path;        /* the staged samples */
  const char* output_path;     /* the Cloud-Optimized GeoTIFF to create */
  int64_t lines, samples, bands;
  const char* gdal_type;       /* GDAL's name of the sample type: Byte, UInt16, Float32, ... */
  const double* geotransform;  /* 6 values, or NULL */
  const char* spatial_ref;     /* WKT (or anything OSR understands), or NULL */
  int has_nodata;
  double nodata;
  const char* const* band_names;     /* bands entries, or NULL */
  const double* wavelengths;         /* bands entries, or NULL */
  const char* wavelength_units;      /* or NULL */
  int classes;                       /* > 0: a class map (one band) with these categories */
  const char* const* class_names;    /* classes entries, or NULL */
  const int32_t* class_rgb;          /* classes r,g,b triples, or NULL */
  int threads;                       /* compression threads, 0 = all CPUs */
} HbCogRequest;

/* Writes the COG; returns 0, or non-zero with a message in `error` (NUL-terminated). */
typedef int (*HbCogWriteFn)(const HbCogRequest* request, char* error, int error_size);
HB_COG_EXPORT int hb_cog_write(const HbCogRequest* request, char* error, int error_size);

/* Opens `path` with GDAL and writes "DRIVER SAMPLESxLINESxBANDS" into `out`; returns 0,
 * or non-zero with GDAL's message. Lets tests see GDAL's own HDF5 driver (the serial
 * library) work in a process that also holds the MPI HDF5. */
typedef int (*HbGdalDescribeFn)(const char* path, char* out, int out_size);
HB_COG_EXPORT int hb_gdal_describe(const char* path, char* out, int out_size);

/* The module's ABI version, HB_COG_ABI_VERSION when it matches this header. */
typedef int (*HbCogAbiFn)(void);
HB_COG_EXPORT int hb_cog_abi(void);

#ifdef __cplusplus
}
#endif

#endif
