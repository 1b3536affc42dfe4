#include "src/sam/library.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/core.h>

#include "io/atomic_file.hpp"
#include "io/hdf5_handle.hpp"
#include "src/classify/class_raster.hpp"
#include "src/classify/hdf5_datasets.hpp"
#include "src/classify/scene_pass.hpp"

namespace hb::sam {
namespace {

// The USGS libraries mark missing values with -1.23e34.
constexpr double kDeletedValue = -1e30;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Channels any spectrum cannot use become gaps for all: every spectrum must be
// resampled onto the same scene bands.
void mark_value_gaps(SpectralLibrary& lib) {
  lib.gap.resize(static_cast<std::size_t>(lib.channels), 0);
  for (std::int64_t i = 0; i < lib.count(); ++i)
    for (std::int64_t c = 0; c < lib.channels; ++c) {
      const double v = lib.spectra[static_cast<std::size_t>(i * lib.channels + c)];
      if (!std::isfinite(v) || v <= kDeletedValue) lib.gap[static_cast<std::size_t>(c)] = 1;
    }
}

Result<SpectralLibrary> read_envi_library(const std::string& path) {
  auto cube = io::open_cube(path);
  if (!cube) return cube.error();
  const auto& info = (*cube)->info();
  const std::string& header = (*cube)->path();
  if (lower(info.meta.file_type) != "envi spectral library")
    return bad_input(header, "file type", fmt::format("expected 'ENVI Spectral Library', found '{}'", info.meta.file_type));
  if (info.shape.bands != 1) return bad_input(header, "bands", "a spectral library has exactly one band");
  SpectralLibrary lib;
  lib.source = path;
  lib.channels = info.shape.samples;
  std::vector<std::byte> raw(static_cast<std::size_t>(info.total_bytes()));
  HB_TRY((*cube)->read_rows({0, info.shape.lines}, raw));
  lib.spectra.resize(static_cast<std::size_t>(info.shape.pixels()));
  visit_data_type(info.type, [&](auto zero) {
    const auto* values = reinterpret_cast<const decltype(zero)*>(raw.data());
    for (std::size_t i = 0; i < lib.spectra.size(); ++i) lib.spectra[i] = static_cast<double>(values[i]);
  });
  lib.names = info.meta.spectra_names;
  lib.wavelength = info.meta.wavelength;
  lib.wavelength_units = info.meta.wavelength_units;
  mark_value_gaps(lib);
  for (std::size_t c = 0; c < info.meta.bbl.size(); ++c)
    if (info.meta.bbl[c] == 0) lib.gap[c] = 1;
  return lib;
}

Result<SpectralLibrary> read_hdf5_library(const std::string& path) {
  using namespace classify::hdf5_datasets;  // NOLINT: Handle, QuietHdf5, read_all, ...
  QuietHdf5 quiet;
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.ok()) return io_error(path, "cannot open as an HDF5 spectral library");
  if (!exists(file.get(), "/library"))
    return bad_input(path, "/library", "missing: an HDF5 library holds /library/spectra [n, channels]");
  auto spectra_set = open_dataset(file.get(), path, "/library/spectra");
  if (!spectra_set) return spectra_set.error();
  auto shape = extent(spectra_set->get(), path, "/library/spectra");
  if (!shape) return shape.error();
  if (shape->size() != 2 || (*shape)[0] == 0 || (*shape)[1] == 0)
    return bad_input(path, "/library/spectra", "must be a non-empty [spectra, channels] array");
  auto spectra = read_all<double>(file.get(), path, "/library/spectra", H5T_NATIVE_DOUBLE, H5T_FLOAT);
  if (!spectra) return spectra.error();
  SpectralLibrary lib;
  lib.source = path;
  lib.channels = static_cast<std::int64_t>((*shape)[1]);
  lib.spectra = std::move(*spectra);
  const auto n = (*shape)[0];
  const auto channels = (*shape)[1];
  if (exists(file.get(), "/library/names")) {
    auto names = read_strings(file.get(), path, "/library/names");
    if (!names) return names.error();
    if (names->size() != n) return bad_input(path, "/library/names", fmt::format("{} names for {} spectra", names->size(), n));
    lib.names = std::move(*names);
  }
  if (exists(file.get(), "/library/wavelengths")) {
    auto w = read_all<double>(file.get(), path, "/library/wavelengths", H5T_NATIVE_DOUBLE, H5T_FLOAT);
    if (!w) return w.error();
    if (w->size() != channels)
      return bad_input(path, "/library/wavelengths", fmt::format("{} wavelengths for {} channels", w->size(), channels));
    lib.wavelength = std::move(*w);
  }
  if (exists(file.get(), "/library/wavelength_units")) {
    auto units = read_strings(file.get(), path, "/library/wavelength_units");
    if (!units) return units.error();
    if (!units->empty()) lib.wavelength_units = units->front();
  }
  mark_value_gaps(lib);
  if (exists(file.get(), "/library/bbl")) {
    auto bbl = read_all<int>(file.get(), path, "/library/bbl", H5T_NATIVE_INT, H5T_INTEGER);
    if (!bbl) return bbl.error();
    if (bbl->size() != channels) return bad_input(path, "/library/bbl", fmt::format("{} flags for {} channels", bbl->size(), channels));
    for (std::size_t c = 0; c < channels; ++c)
      if ((*bbl)[c] == 0) lib.gap[c] = 1;
  }
  return lib;
}

// Per-class FP64 sums of feature rows -> means; every class 1..max must have rows.
class ClassMeans {
 public:
  explicit ClassMeans(std::int64_t dims) : dims_(dims) {}
  void add(std::uint16_t label, const float* row) {
    if (label == 0) return;
    if (label > counts_.size()) {
      counts_.resize(label, 0);
      sums_.resize(static_cast<std::size_t>(label) * static_cast<std::size_t>(dims_), 0.0);
    }
    const std::size_t base = static_cast<std::size_t>(label - 1) * static_cast<std::size_t>(dims_);
    for (std::int64_t f = 0; f < dims_; ++f) sums_[base + static_cast<std::size_t>(f)] += row[f];
    ++counts_[label - 1];
  }
  Result<std::vector<double>> means(const std::string& file, const std::string& field) const {
    if (counts_.empty()) return bad_input(file, field, "no labelled pixel with usable data");
    std::vector<double> out = sums_;
    for (std::size_t k = 0; k < counts_.size(); ++k) {
      if (counts_[k] == 0)
        return bad_input(file, field, fmt::format("class {} has no usable pixel: its mean spectrum is undefined", k + 1));
      for (std::int64_t f = 0; f < dims_; ++f) out[k * static_cast<std::size_t>(dims_) + static_cast<std::size_t>(f)] /= static_cast<double>(counts_[k]);
    }
    return out;
  }
  std::size_t classes() const { return counts_.size(); }

 private:
  std::int64_t dims_;
  std::vector<std::int64_t> counts_;
  std::vector<double> sums_;
};

SpectralLibrary on_scene_bands(const classify::BandSelection& selection, std::string source, std::vector<double> means,
                               const classify::ClassTable& classes, std::size_t count) {
  SpectralLibrary lib;
  lib.source = std::move(source);
  lib.channels = selection.dims();
  lib.spectra = std::move(means);
  lib.wavelength = selection.wavelength;
  lib.wavelength_units = selection.wavelength_units;
  lib.gap.assign(static_cast<std::size_t>(lib.channels), 0);
  lib.scene_bands = selection.bands;
  for (std::size_t k = 1; k <= count; ++k)
    lib.names.push_back(k < classes.names.size() && !classes.names[k].empty() ? classes.names[k] : fmt::format("Class {}", k));
  if (classes.lookup.size() >= 3 * (count + 1))
    lib.lookup.assign(classes.lookup.begin() + 3, classes.lookup.begin() + 3 * static_cast<std::ptrdiff_t>(count + 1));
  return lib;
}

}  // namespace

Result<SpectralLibrary> read_library(const std::string& path) {
  auto lib = io::format_from_path(path) == io::CubeFormat::hdf5 ? read_hdf5_library(path) : read_envi_library(path);
  if (!lib) return lib.error();
  if (lib->names.empty())
    for (std::int64_t i = 0; i < lib->count(); ++i) lib->names.push_back(fmt::format("Spectrum {}", i + 1));
  return lib;
}

Result<SpectralLibrary> class_means_from_truth(const io::Cube& scene, const io::Cube& truth, std::int64_t tile_rows) {
  auto ids = classify::read_class_raster(truth, scene.info().shape);
  if (!ids) return ids.error();
  const auto selection = classify::select_good_bands(scene.info());
  if (selection.dims() == 0) return bad_input(scene.path(), "bbl", "every band is marked bad");
  ClassMeans sums(selection.dims());
  const Status pass =
      classify::for_each_feature_tile(scene, selection, tile_rows, [&](classify::FeatureTile& t) -> Status {
        for (std::int64_t p = 0; p < t.pixels; ++p)
          if (t.valid[static_cast<std::size_t>(p)])
            sums.add((*ids)[static_cast<std::size_t>(t.first_pixel + p)], t.features.data() + p * selection.dims());
        return {};
      });
  if (!pass) return pass.error();
  auto means = sums.means(truth.path(), "data");
  if (!means) return means.error();
  const auto& meta = truth.info().meta;
  return on_scene_bands(selection, truth.path(), std::move(*means), {meta.class_names, meta.class_lookup}, sums.classes());
}

Result<SpectralLibrary> class_means_from_training(const classify::TrainingSet& training,
                                                  const classify::BandSelection& scene, const std::string& scene_path,
                                                  const std::string& train_path) {
  HB_TRY(classify::check_compatible(training, scene, scene_path));
  const std::int64_t dims = training.features->dims();
  ClassMeans sums(dims);
  constexpr std::int64_t kChunk = 4096;
  std::vector<float> rows;
  for (std::int64_t first = 0; first < training.count(); first += kChunk) {
    const std::int64_t n = std::min(kChunk, training.count() - first);
    rows.resize(static_cast<std::size_t>(n * dims));
    HB_TRY(training.features->read(first, n, rows.data()));
    for (std::int64_t r = 0; r < n; ++r) sums.add(training.labels[static_cast<std::size_t>(first + r)], rows.data() + r * dims);
  }
  auto means = sums.means(train_path, "/train/labels");
  if (!means) return means.error();
  return on_scene_bands(scene, train_path, std::move(*means), training.classes, sums.classes());
}

Status write_library(const std::string& path, const SpectralLibrary& library) {
  using namespace classify::hdf5_datasets;  // NOLINT
  QuietHdf5 quiet;
  io::AtomicPath out(path);
  {
    Handle file(H5Fcreate(out.temporary().c_str(), H5F_ACC_TRUNC, io::h5::untimed(H5P_FILE_CREATE).get(), H5P_DEFAULT),
                H5Fclose);
    if (!file.ok()) return io_error(path, "cannot create the HDF5 library");
    Handle group(H5Gcreate2(file.get(), "library", H5P_DEFAULT, io::h5::untimed(H5P_GROUP_CREATE).get(), H5P_DEFAULT),
                 H5Gclose);
    const std::array<hsize_t, 2> dims{static_cast<hsize_t>(library.count()), static_cast<hsize_t>(library.channels)};
    HB_TRY(write_dataset(group.get(), path, "spectra", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, dims, library.spectra.data()));
    HB_TRY(write_strings(group.get(), path, "names", library.names));
    if (!library.wavelength.empty()) {
      const std::array<hsize_t, 1> channels{library.wavelength.size()};
      HB_TRY(write_dataset(group.get(), path, "wavelengths", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, channels,
                           library.wavelength.data()));
      HB_TRY(write_strings(group.get(), path, "wavelength_units", {library.wavelength_units}));
    }
  }
  return out.commit();
}

}  // namespace hb::sam
