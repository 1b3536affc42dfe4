#include "io/gtiff/gtiff_writer.hpp"

#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <vector>

#include "io/atomic_file.hpp"
#include "io/envi_cube.hpp"
#include "io/glt/map_grid.hpp"
#include "io/gtiff/gdal_module.hpp"
#include "mpi/agree.hpp"
#include "mpi/comm.hpp"

namespace hb::io {
namespace {

const char* gdal_type_name(DataType type) {
  switch (type) {
    case DataType::u8: return "Byte";
    case DataType::i16: return "Int16";
    case DataType::u16: return "UInt16";
    case DataType::i32: return "Int32";
    case DataType::u32: return "UInt32";
    case DataType::i64: return "Int64";
    case DataType::u64: return "UInt64";
    case DataType::f32: return "Float32";
    case DataType::f64: return "Float64";
  }
  return "Unknown";
}

bool is_class_map(const CubeInfo& info) {
  return info.meta.file_type == "ENVI Classification" && info.shape.bands == 1 && is_integer(info.type);
}

// The hidden raw file the rows go to before the translation: ".NAME.stage" beside it.
std::string staging_path(const std::string& path) {
  const std::filesystem::path p(path);
  return (p.parent_path() / ("." + p.filename().string() + ".stage")).string();
}

class GtiffWriter final : public CubeWriter {
 public:
  GtiffWriter(std::string path, CubeInfo info, std::unique_ptr<CubeWriter> staging, std::optional<AtomicPath> output,
              const mpi::Comm* parallel)
      : path_(std::move(path)),
        info_(std::move(info)),
        staging_(std::move(staging)),
        output_(std::move(output)),
        parallel_(parallel),
        widen_(staging_->info().type != info_.type),
        staging_header_(envi_output_paths(staging_path(path_)).header) {
    complete_georeference(info_.meta);
    staging_->finish_before_commit([this](const std::string& raw) { return translate(raw); });
  }

  const CubeInfo& info() const override { return info_; }

  Status write_rows(RowRange rows, std::span<const std::byte> data) override {
    if (!widen_) return named_after_output(staging_->write_rows(rows, data));
    // Class maps of 8-bit labels are written as uint16 (the COG's colour-table type).
    std::vector<std::uint16_t> wide(data.size());
    for (std::size_t i = 0; i < data.size(); ++i) wide[i] = static_cast<std::uint8_t>(data[i]);
    return named_after_output(staging_->write_rows(rows, std::as_bytes(std::span(wide))));
  }

  Status reserve(RowRange rows) override { return named_after_output(staging_->reserve(rows)); }
  bool writes_in_step() const override { return staging_->writes_in_step(); }

  Status close() override {
    if (closed_) return {};
    HB_TRY(named_after_output(staging_->close()));  // runs translate() on the rank that commits
    closed_ = true;
    return {};
  }

  Status commit() override {
    HB_TRY(close());
    Status renamed = sidecar_ ? sidecar_->commit() : Status{};
    if (renamed && output_) renamed = output_->commit();
    staging_.reset();  // the staged raw file was never committed: removed here
    return parallel_ != nullptr ? mpi::agree(renamed, *parallel_) : renamed;
  }

 private:
  // Errors of the staged file name the output the user asked for.
  Status named_after_output(Status status) const {
    if (status.ok() || status.error().file != staging_header_) return status;
    return Error{status.error().kind, path_, status.error().field, status.error().message};
  }

  Status translate(const std::string& raw) {
    auto write = gtiff::cog_writer();
    if (!write) return write.error();
    const Metadata& meta = info_.meta;
    const bool classes = is_class_map(info_);
    std::vector<const char*> band_names, class_names;
    for (const auto& name : meta.band_names) band_names.push_back(name.c_str());
    for (const auto& name : meta.class_names) class_names.push_back(name.c_str());
    const int class_count = classes ? meta.classes.value_or(static_cast<int>(meta.class_names.size())) : 0;

    HbCogRequest request{};
    request.raw_path = raw.c_str();
    request.output_path = output_->temporary().c_str();
    request.lines = info_.shape.lines;
    request.samples = info_.shape.samples;
    request.bands = info_.shape.bands;
    request.gdal_type = gdal_type_name(staging_->info().type);
    request.geotransform = meta.geotransform.size() == 6 ? meta.geotransform.data() : nullptr;
    request.spatial_ref = meta.spatial_ref.empty() ? nullptr : meta.spatial_ref.c_str();
    set_nodata(request, classes);
    request.band_names = band_names.size() == static_cast<std::size_t>(info_.shape.bands) ? band_names.data() : nullptr;
    request.wavelengths = meta.wavelength.size() == static_cast<std::size_t>(info_.shape.bands) ? meta.wavelength.data() : nullptr;
    request.wavelength_units = meta.wavelength_units.empty() ? nullptr : meta.wavelength_units.c_str();
    request.classes = class_count;
    request.class_names = class_names.size() == static_cast<std::size_t>(class_count) ? class_names.data() : nullptr;
    request.class_rgb = meta.class_lookup.size() == static_cast<std::size_t>(3 * class_count) ? meta.class_lookup.data() : nullptr;
    char error[1024] = {};
    if (write->write(&request, error, sizeof error) != 0) return io_error(path_, std::string("GeoTIFF: ") + error);
    HB_TRY(keep_sidecar());
    return finish(output_->temporary());
  }

  // What GeoTIFF cannot hold (category names) GDAL keeps in NAME.aux.xml beside it: it
  // goes under its own temporary name and is renamed with the output.
  Status keep_sidecar() {
    const std::string written = output_->temporary() + ".aux.xml";
    std::error_code ec;
    if (!std::filesystem::exists(written, ec)) return {};
    sidecar_.emplace(path_ + ".aux.xml");
    std::filesystem::rename(written, sidecar_->temporary(), ec);
    if (ec) return io_error(path_ + ".aux.xml", "cannot rename GDAL's sidecar: " + ec.message());
    return {};
  }

  void set_nodata(HbCogRequest& request, bool classes) const {
    if (info_.meta.data_ignore_value) {
      request.has_nodata = 1;
      request.nodata = *info_.meta.data_ignore_value;
    } else if (classes) {
      request.has_nodata = 1;
      request.nodata = 0;
    } else if (!is_integer(info_.type)) {
      request.has_nodata = 1;
      request.nodata = std::numeric_limits<double>::quiet_NaN();
    }
  }

  std::string path_;
  CubeInfo info_;
  std::unique_ptr<CubeWriter> staging_;
  std::optional<AtomicPath> output_;
  std::optional<AtomicPath> sidecar_;  // NAME.tif.aux.xml, when GDAL writes one
  const mpi::Comm* parallel_;
  bool widen_;
  std::string staging_header_;
  bool closed_ = false;
};

}  // namespace

Result<std::unique_ptr<CubeWriter>> create_gtiff_cube(const std::string& path, const CubeInfo& info,
                                                      const mpi::Comm* comm) {
  const mpi::Comm* parallel = comm != nullptr && comm->is_parallel() ? comm : nullptr;
  // The module must load before any work is done for an output it cannot write.
  const auto module = gtiff::cog_writer();
  Status loaded = module ? Status{} : Status{module.error()};
  if (parallel != nullptr) loaded = mpi::agree(loaded, *parallel);
  HB_TRY(loaded);
  CubeInfo staged{info.shape, info.type, {}};
  if (is_class_map(info) && bytes_per_sample(info.type) == 1) staged.type = DataType::u16;
  auto staging = create_envi_cube(staging_path(path), staged, Interleave::bip, native_byte_order(), parallel);
  if (!staging) return Error{staging.error().kind, path, staging.error().field, staging.error().message};
  std::optional<AtomicPath> output;
  if (parallel == nullptr || parallel->is_root()) output.emplace(path);
  return std::unique_ptr<CubeWriter>(new GtiffWriter(path, info, std::move(*staging), std::move(output), parallel));
}

}  // namespace hb::io
