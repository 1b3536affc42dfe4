#include "src/mnf/run.hpp"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "io/cube.hpp"
#include "src/mnf/stats_file.hpp"

namespace hb::mnf {
namespace {

struct Prepared {
  PixelRules rules;
  Basis basis;
  StatsRecord record;  // transform filled once the selection is known
};

Status check_options(const RunOptions& o) {
  const Method method = o.pipeline.method;
  if (o.stats_only && io::format_from_path(o.output) != io::CubeFormat::hdf5)
    return Error{ErrorKind::usage, o.output, "-o", "--stats-only writes HDF5: name the output NAME.h5"};
  if (o.stats_only && !o.apply_stats.empty())
    return Error{ErrorKind::usage, {}, "--apply", "--apply and --stats-only exclude each other"};
  if (method == Method::pca && !o.pipeline.noise_window.empty())
    return Error{ErrorKind::usage, {}, "--subset", "--subset restricts the noise statistics of MNF only"};
  if (method == Method::pca && !o.denoise_output.empty())
    return Error{ErrorKind::usage, {}, "--denoise", "--denoise is an MNF option"};
  return {};
}

Result<Prepared> from_scene(const io::Cube& cube, Backend& backend, const RunOptions& o, const mpi::Comm& comm) {
  auto stats = gather_statistics(cube, backend, comm, with_device_budget(o.pipeline, backend));
  if (!stats) return stats.error();
  auto cov = covariances(*stats, o.pipeline.method);
  if (!cov) return Error{cov.error().kind, cube.path(), cov.error().field, cov.error().message};
  BasisOptions basis_options = o.basis;
  basis_options.eigen = [&backend](const linalg::Matrix& a) { return backend.symmetric_eigen(a); };
  auto basis = build_basis(*cov, stats->rules, o.pipeline.method, basis_options);
  if (!basis) return Error{basis.error().kind, cube.path(), basis.error().field, basis.error().message};
  Prepared p{stats->rules, std::move(*basis), {}};
  auto& r = p.record;
  r.method = o.pipeline.method;
  r.estimator = stats->estimator;
  r.scene_bands = cube.info().shape.bands;
  r.bands = stats->rules.bands;
  r.excluded_bands = stats->excluded_bands;
  r.mean = cov->data.mean;
  r.data_covariance = cov->data.covariance;
  r.noise_covariance = cov->noise.covariance;
  r.data_pixels = stats->data.count;
  r.noise_pixels = stats->noise.count;
  r.excluded_pixels = stats->excluded_pixels();
  r.source_file = cube.path();
  return p;
}

Result<Prepared> from_stats_file(const io::Cube& cube, const RunOptions& o) {
  auto record = read_stats_file(o.apply_stats);
  if (!record) return record.error();
  if (record->method != o.pipeline.method)
    return bad_input(o.apply_stats, "/" + std::string(method_name(record->method)),
                     "holds " + std::string(method_name(record->method)) + " statistics, not " +
                         std::string(method_name(o.pipeline.method)));
  if (record->scene_bands != cube.info().shape.bands)
    return bad_input(o.apply_stats, "scene_bands",
                     "statistics of a " + std::to_string(record->scene_bands) + "-band scene cannot apply to " +
                         cube.path() + " (" + std::to_string(cube.info().shape.bands) + " bands)");
  Prepared p{pixel_rules(cube.info()), {}, std::move(*record)};
  p.rules.bands = p.record.bands;  // the basis rows decide the bands read
  const MeanCovariance data{p.record.data_pixels, p.record.mean, p.record.data_covariance};
  auto basis = p.record.method == Method::mnf
                   ? mnf_basis(data, p.record.noise_covariance, p.record.bands, o.basis)
                   : pca_basis(data, p.record.bands);
  if (!basis) return Error{basis.error().kind, o.apply_stats, basis.error().field, basis.error().message};
  for (const auto& warning : basis->warnings) spdlog::warn("{}", warning);
  p.basis = std::move(*basis);
  return p;
}

io::CubeInfo components_info(const io::Cube& cube, Method method, std::int64_t m) {
  const auto& scene = cube.info();
  io::CubeInfo info;
  info.shape = {scene.shape.lines, scene.shape.samples, m};
  info.type = io::DataType::f32;
  info.meta.description = std::string(method == Method::mnf ? "MNF" : "PCA") + " components of " + cube.path();
  for (std::int64_t j = 0; j < m; ++j)
    info.meta.band_names.push_back((method == Method::mnf ? "MNF " : "PC ") + std::to_string(j + 1));
  info.meta.map_info = scene.meta.map_info;
  info.meta.coordinate_system_string = scene.meta.coordinate_system_string;
  info.meta.source_file = scene.meta.source_file.empty() ? cube.path() : scene.meta.source_file;
  return info;
}

Status write_outputs(const io::Cube& cube, Backend& backend, const RunOptions& o, const Prepared& p, std::int64_t m,
                     const mpi::Comm& comm) {
  const std::int64_t rows = tile_rows_for(cube.info(), with_device_budget(o.pipeline, backend), cube.info().shape.bands);
  io::WriteOptions write;
  write.comm = &comm;
  {
    auto writer = io::create_cube(o.output, components_info(cube, p.record.method, m), write);
    if (!writer) return writer.error();
    HB_TRY(write_components(cube, backend, p.rules, reduction_map(p.basis, m), **writer, rows, comm));
    HB_TRY((*writer)->commit());
  }
  if (comm.is_root()) {
    const bool hdf5 = io::format_from_path(o.output) == io::CubeFormat::hdf5;
    const Status stats = hdf5 ? add_stats_group(o.output, p.record) : write_stats_file(sidecar_stats_path(o.output), p.record);
    if (!stats.ok()) {
      std::error_code ignored;
      std::filesystem::remove(o.output, ignored);  // no components without their statistics
      return stats;
    }
  }
  spdlog::info("wrote {} ({} components)", o.output, m);
  if (o.denoise_output.empty()) return {};
  io::CubeInfo info = cube.info();
  info.type = io::DataType::f32;
  auto writer = io::create_cube(o.denoise_output, info, write);
  if (!writer) return writer.error();
  HB_TRY(write_denoised(cube, backend, p.rules, denoise_map(p.basis, m), **writer, rows, comm));
  HB_TRY((*writer)->commit());
  spdlog::info("wrote {} (denoised with {} components)", o.denoise_output, m);
  return {};
}

}  // namespace

std::string sidecar_stats_path(const std::string& output) {
  return std::filesystem::path(output).replace_extension(".stats.h5").string();
}

Status run(const RunOptions& o, const mpi::Comm& comm) {
  HB_TRY(check_options(o));
  auto cube = io::open_cube(o.scene, &comm);
  if (!cube) return cube.error();
  auto backend = make_backend(o.backend);
  if (!backend) return backend.error();
  spdlog::info("{} of {} on {} ({})", method_name(o.pipeline.method), o.scene, (*backend)->name(),
               (*backend)->device_description());
  auto prepared = o.apply_stats.empty() ? from_scene(**cube, **backend, o, comm) : from_stats_file(**cube, o);
  if (!prepared) return prepared.error();
  prepared->record.backend = std::string((*backend)->name());
  auto m = select_components(prepared->basis, o.selection);
  if (!m) return m.error();
  prepared->record.eigenvalues = prepared->basis.eigenvalues;
  prepared->record.transform = linalg::first_columns(prepared->basis.forward, *m);
  if (o.stats_only) {
    if (comm.is_root()) HB_TRY(write_stats_file(o.output, prepared->record));
    spdlog::info("wrote statistics {} ({} of {} components selected)", o.output, *m, prepared->basis.components());
    return {};
  }
  return write_outputs(**cube, **backend, o, *prepared, *m, comm);
}

}  // namespace hb::mnf
