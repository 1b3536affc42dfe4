#include "src/mnf/run.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <optional>

#include "io/cube.hpp"
#include "io/file_identity.hpp"
#include "mpi/agree.hpp"
#include "mpi/decomposition.hpp"
#include "src/backend/rank_backend.hpp"
#include "src/mnf/run_campaign.hpp"
#include "src/mnf/stats_file.hpp"
#include "src/mnf/tile_ops.hpp"
#include "src/base/stopwatch.hpp"

namespace hb::mnf {
namespace {

struct Prepared {
  PixelRules rules;
  Basis basis;
  StatsRecord record;  // transform filled once the selection is known
  std::optional<Decomposition> blocks;  // from the statistics pass; probed again with --apply
  std::int64_t kept_tile_rows = 0;      // > 0: the device kept the statistics pass's tiles
};

// Every file the run reads and writes; write_outputs and run_campaign name the outputs.
io::FilePlan file_plan(const RunOptions& o) {
  io::FilePlan plan;
  plan.read_cube("scene", o.scene);
  for (const auto& scene : o.more_scenes) plan.read_cube("scene", scene);
  plan.read_file("--apply", o.apply_stats);
  if (o.stats_only) {
    plan.write_file("--stats-only", o.output);
    return plan;
  }
  plan.write_cube("-o", o.output);
  if (io::format_from_path(o.output) == io::CubeFormat::envi) plan.write_file("-o", sidecar_stats_path(o.output));
  plan.write_cube("--denoise", o.denoise_output);
  return plan;
}

Status check_options(const RunOptions& o) {
  HB_TRY(file_plan(o).check());
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

// The basis and record of gathered statistics (one scene's, or a campaign's).
Result<Prepared> from_statistics(Result<SceneStatistics> stats, const std::string& source, std::int64_t scene_bands,
                                 TileOps& ops, const RunOptions& o, const mpi::Comm& comm) {
  if (!stats) return stats.error();
  auto cov = covariances(*stats, o.pipeline.method);
  HB_TRY(mpi::agree(cov ? Status{} : Status{Error{cov.error().kind, source, cov.error().field, cov.error().message}},
                    comm));
  BasisOptions basis_options = o.basis;  // cuSOLVER on the CUDA backend, LAPACK on the CPU
  basis_options.eigen = [&ops](const linalg::Matrix& a) { return ops.symmetric_eigen(a); };
  auto basis = build_basis(*cov, stats->rules, o.pipeline.method, basis_options, comm);
  if (!basis) return Error{basis.error().kind, source, basis.error().field, basis.error().message};
  Prepared p{stats->rules, std::move(*basis), {}, stats->blocks, stats->kept_tile_rows};
  auto& r = p.record;
  r.method = o.pipeline.method;
  r.estimator = stats->estimator;
  r.scene_bands = scene_bands;
  r.bands = stats->rules.bands;
  r.excluded_bands = stats->excluded_bands;
  r.mean = cov->data.mean;
  r.data_covariance = cov->data.covariance;
  r.noise_covariance = cov->noise.covariance;
  r.data_pixels = stats->data.count;
  r.noise_pixels = stats->noise.count;
  r.excluded_pixels = stats->excluded_pixels();
  r.source_file = source;
  return p;
}

// A transform follows unless only statistics are asked for: the device may keep the
// scene's tiles for it.
Result<Prepared> from_scene(const io::Cube& cube, TileOps& ops, const RunOptions& o, const mpi::Comm& comm) {
  PipelineOptions options = with_device_budget(o.pipeline, ops.device());
  options.keep_tiles = !o.stats_only;
  return from_statistics(gather_statistics(cube, ops, comm, options), cube.path(), cube.info().shape.bands, ops, o,
                         comm);
}

// Selects the components and completes the record; returns how many are kept.
Result<std::int64_t> select_into_record(Prepared& p, const Backend& backend, const Selection& selection) {
  p.record.backend = std::string(backend.name());
  auto m = select_components(p.basis, selection);
  if (!m && m.error().kind == ErrorKind::bad_input)  // a data problem: name the scene it comes from
    return Error{m.error().kind, p.record.source_file, m.error().field, m.error().message};
  if (!m) return m.error();
  p.record.eigenvalues = p.basis.eigenvalues;
  p.record.transform = linalg::first_columns(p.basis.forward, *m);
  return m;
}

// Rank 0 writes the statistics file; every rank learns whether it worked.
Status write_stats_on_root(const std::string& path, const StatsRecord& record, const mpi::Comm& comm) {
  Status written;
  if (comm.is_root()) written = write_stats_file(path, record);
  return mpi::agree(written, comm);
}

// --stats-only over several scenes: one basis for the collection (run_campaign.hpp).
Status run_campaign(const RunOptions& o, const mpi::Comm& comm) {
  if (!o.stats_only)
    return Error{ErrorKind::usage, {}, "scene", "several scenes need --stats-only (one basis for the collection)"};
  std::vector<std::string> scenes{o.scene};
  scenes.insert(scenes.end(), o.more_scenes.begin(), o.more_scenes.end());
  auto backend = make_rank_backend(o.backend, comm);
  if (!backend) return backend.error();
  const auto ops = make_tile_ops(std::move(*backend));
  auto first = io::open_cube(o.scene);  // the band count the record names
  HB_TRY(mpi::agree(first ? Status{} : Status{first.error()}, comm));
  std::string sources = o.scene;
  for (const auto& s : o.more_scenes) sources += ";" + s;
  auto prepared = from_statistics(campaign_statistics(scenes, *ops, with_device_budget(o.pipeline, ops->device()), comm),
                                  sources, (*first)->info().shape.bands, *ops, o, comm);
  if (!prepared) return prepared.error();
  auto m = select_into_record(*prepared, ops->device(), o.selection);
  if (!m) return m.error();
  HB_TRY(write_stats_on_root(o.output, prepared->record, comm));
  spdlog::info("wrote statistics of {} scenes {} ({} components selected)", scenes.size(), o.output, *m);
  return {};
}

Result<Prepared> from_stats_file(const io::Cube& cube, const RunOptions& o, const mpi::Comm& comm) {
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
  Prepared p{pixel_rules(cube.info()), {}, std::move(*record), std::nullopt};
  p.rules.bands = p.record.bands;  // the basis rows decide the bands read
  const MeanCovariance data{p.record.data_pixels, p.record.mean, p.record.data_covariance};
  auto basis = basis_from_root(
      [&] {
        return p.record.method == Method::mnf ? mnf_basis(data, p.record.noise_covariance, p.record.bands, o.basis)
                                              : pca_basis(data, p.record.bands);
      },
      comm);
  if (!basis) return Error{basis.error().kind, o.apply_stats, basis.error().field, basis.error().message};
  for (const auto& warning : basis->warnings) spdlog::warn("{}", warning);
  p.basis = std::move(*basis);
  return p;
}

io::CubeInfo components_info(const io::Cube& cube, Method method, std::int64_t m) {
  const auto& scene = cube.info();
  io::CubeInfo info;
  info.shape = {scene.shape.lines, scene.shape.samples, m};
  info.type = DataType::f32;
  info.meta.description = std::string(method == Method::mnf ? "MNF" : "PCA") + " components of " + cube.path();
  for (std::int64_t j = 0; j < m; ++j)
    info.meta.band_names.push_back((method == Method::mnf ? "MNF " : "PC ") + std::to_string(j + 1));
  info.meta.map_info = scene.meta.map_info;
  info.meta.coordinate_system_string = scene.meta.coordinate_system_string;
  info.meta.source_file = scene.meta.source_file.empty() ? cube.path() : scene.meta.source_file;
  return info;
}

// An output file whose space this rank reserves (its even share of the rows) on a
// thread while other work goes on: with --components N the components' file is made
// before the statistics pass, and its reservation runs behind it.
struct ReservedOutput {
  std::unique_ptr<io::CubeWriter> writer;
  std::future<Status> reserved;  // destroyed (waited for) before the writer it uses
};

Result<ReservedOutput> create_reserved(const std::string& path, const io::CubeInfo& info, const mpi::Comm& comm) {
  io::WriteOptions write;
  write.comm = &comm;
  auto writer = io::create_cube(path, info, write);
  if (!writer) return writer.error();
  const RowRange share = mpi::even_rows(info.shape.lines, comm);
  ReservedOutput out{std::move(*writer), {}};
  out.reserved = std::async(std::launch::async, [writer = out.writer.get(), share, path] {
    const Stopwatch clock;
    Status reserved = writer->reserve(share);
    spdlog::debug("{}: space of rows [{}, {}) reserved in {:.3f} s", path, share.begin, share.end, clock.seconds());
    return reserved;
  });
  return out;
}

// The reservation's outcome, agreed by every rank before the first write.
Status wait_reserved(ReservedOutput& output, const mpi::Comm& comm) {
  const Stopwatch clock;
  Status reserved = output.reserved.get();
  HB_TRY(mpi::agree(reserved, comm));
  spdlog::info("output space reserved: {:.3f} s waited for it", clock.seconds());
  return {};
}

Status write_outputs(const io::Cube& cube, TileOps& ops, const RunOptions& o, const Prepared& p, std::int64_t m,
                     std::optional<ReservedOutput> early, const mpi::Comm& comm) {
  const std::int64_t rows = tile_rows_for(cube.info(), with_device_budget(o.pipeline, ops.device()), cube.info().shape.bands);
  const Decomposition* blocks = p.blocks ? &*p.blocks : nullptr;
  const bool kept = p.kept_tile_rows > 0;
  {
    if (!early) {  // made before the statistics only for --components N, which m then is
      auto made = create_reserved(o.output, components_info(cube, p.record.method, m), comm);
      if (!made) return made.error();
      early = std::move(*made);
    }
    HB_TRY(wait_reserved(*early, comm));
    auto& writer = *early->writer;
    HB_TRY(write_components(cube, ops, p.rules, reduction_map(p.basis, m), writer, kept ? p.kept_tile_rows : rows,
                            comm, blocks, kept));
    ops.drop_kept();
    // No components without their statistics: they are written before the components
    // appear under their final name, and a failure leaves any earlier output as it was.
    writer.finish_before_commit([&](const std::string& temporary) {
      return io::format_from_path(o.output) == io::CubeFormat::hdf5
                 ? add_stats_group(temporary, o.output, p.record)
                 : write_stats_file(sidecar_stats_path(o.output), p.record);
    });
    const auto start = std::chrono::steady_clock::now();
    HB_TRY(writer.commit());
    spdlog::info("components committed (flushed to disk, renamed): {:.3f} s",
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  spdlog::info("wrote {} ({} components)", o.output, m);
  if (o.denoise_output.empty()) return {};
  io::CubeInfo info = cube.info();
  info.type = DataType::f32;
  auto denoised = create_reserved(o.denoise_output, info, comm);
  if (!denoised) return denoised.error();
  HB_TRY(wait_reserved(*denoised, comm));
  auto& writer = *denoised->writer;
  HB_TRY(write_denoised(cube, ops, p.rules, denoise_map(p.basis, m), writer, rows, comm, blocks));
  HB_TRY(writer.commit());
  spdlog::info("wrote {} (denoised with {} components)", o.denoise_output, m);
  return {};
}

}  // namespace

std::string sidecar_stats_path(const std::string& output) {
  return std::filesystem::path(output).replace_extension(".stats.h5").string();
}

Status run(const RunOptions& o, const mpi::Comm& comm) {
  HB_TRY(check_options(o));
  if (!o.more_scenes.empty()) return run_campaign(o, comm);
  auto cube = io::open_cube(o.scene, &comm);
  if (!cube) return cube.error();
  auto backend = make_rank_backend(o.backend, comm);
  if (!backend) return backend.error();
  const auto ops = make_tile_ops(std::move(*backend));
  spdlog::info("{} of {} on {} ({})", method_name(o.pipeline.method), o.scene, ops->device().name(),
               ops->device().device_description());
  // A fixed component count sizes the output before the statistics: its file is made
  // now, and this rank's share of its space is reserved while the statistics pass runs.
  std::optional<ReservedOutput> early;
  const auto fixed = o.selection.components;
  if (fixed && !o.stats_only && *fixed >= 1 && *fixed <= (*cube)->info().shape.bands) {
    auto made = create_reserved(o.output, components_info(**cube, o.pipeline.method, *fixed), comm);
    if (!made) return made.error();
    early = std::move(*made);
  }
  auto prepared = o.apply_stats.empty() ? from_scene(**cube, *ops, o, comm) : from_stats_file(**cube, o, comm);
  if (!prepared) return prepared.error();
  auto m = select_into_record(*prepared, ops->device(), o.selection);
  if (!m) return m.error();
  if (o.stats_only) {
    HB_TRY(write_stats_on_root(o.output, prepared->record, comm));
    spdlog::info("wrote statistics {} ({} of {} components selected)", o.output, *m, prepared->basis.components());
    return {};
  }
  return write_outputs(**cube, *ops, o, *prepared, *m, std::move(early), comm);
}

}  // namespace hb::mnf
