#include "src/sam/run.hpp"

#include <spdlog/spdlog.h>

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "io/tile_reader.hpp"
#include "mpi/agree.hpp"
#include "mpi/decomposition.hpp"
#include "src/base/stopwatch.hpp"
#include "src/base/tile_budget.hpp"
#include "src/classify/training_file.hpp"
#include "src/sam/library.hpp"
#include "src/sam/outputs.hpp"
#include "src/sam/unique_pixels.hpp"

namespace hb::sam {
namespace {

// Every file the job reads and writes, outputs named next to the code that names them.
io::FilePlan file_plan(const SamJob& job) {
  io::FilePlan plan;
  plan.read_cube("scene", job.scene);
  plan.read_cube("--library", job.library);
  plan.read_cube("--truth", job.truth);
  plan.read_file("--train", job.train_file);
  plan_sam_outputs(plan, job.output, job.rules);
  plan.write_file("--save-library", job.save_library);
  return plan;
}

Status check_job(const SamJob& job) {
  HB_TRY(file_plan(job).check());
  const int sources = !job.library.empty() + !job.truth.empty() + !job.train_file.empty();
  if (sources != 1)
    return Error{ErrorKind::usage, {}, "--library", "give exactly one of --library, --truth or --train"};
  if (job.max_angle && job.method != Method::sam)
    return Error{ErrorKind::usage, {}, "--max-angle", "--max-angle applies to --method sam"};
  if (job.min_correlation && job.method != Method::scm)
    return Error{ErrorKind::usage, {}, "--min-correlation", "--min-correlation applies to --method scm"};
  if (job.output.empty()) return Error{ErrorKind::usage, {}, "--output", "an output path is required"};
  return {};
}

Result<SpectralLibrary> load_library(const SamJob& job, const io::Cube& scene, std::int64_t tile_rows) {
  if (!job.library.empty()) return read_library(job.library);
  if (!job.truth.empty()) {
    auto truth = io::open_cube(job.truth);
    if (!truth) return truth.error();
    return class_means_from_truth(scene, **truth, tile_rows);
  }
  auto training = classify::read_training_file(job.train_file);
  if (!training) return training.error();
  return class_means_from_training(*training, classify::select_good_bands(scene.info()), job.scene, job.train_file);
}

std::int64_t job_tile_rows(const SamJob& job, const io::CubeInfo& info, std::int64_t dims, std::int64_t count) {
  if (job.tile_rows > 0) return std::min(job.tile_rows, std::max<std::int64_t>(1, info.shape.lines));
  const std::int64_t per_pixel = info.bytes_per_pixel() + 8 * dims + 4 + 4 + 2 + (job.rules.empty() ? 0 : 4 * count);
  return tile_rows_for(per_pixel * info.shape.samples, job.tile_budget_bytes, info.shape.lines);
}

bool passes(const SamJob& job, float score) {
  if (job.max_angle) return score <= *job.max_angle;
  if (job.min_correlation) return score >= *job.min_correlation;
  return true;
}

Result<ResampledLibrary> library_on_scene(const SamJob& job, const io::Cube& scene, std::int64_t tile_rows) {
  const Stopwatch clock;
  auto library = load_library(job, scene, tile_rows);
  if (!library) return library.error();
  auto resampled = resample_to_scene(*library, scene.info(), job.scene, job.resampling);
  if (!resampled) return resampled.error();
  spdlog::info("library: {} spectra from {}, {} on {} scene bands ({:.3f} s)", resampled->count(), library->source,
               resampled->method, resampled->dims(), clock.seconds());
  if (!resampled->excluded.empty())
    spdlog::warn("{}: the library does not cover scene bands {}: they are not compared", library->source,
                 band_list(resampled->excluded));
  if (!job.save_library.empty()) {
    SpectralLibrary saved;
    saved.names = resampled->names;
    saved.channels = resampled->dims();
    saved.spectra = resampled->spectra;
    saved.wavelength = resampled->wavelength_nm;
    saved.wavelength_units = "Nanometers";
    HB_TRY(write_library(job.save_library, saved));
  }
  return resampled;
}

// What a run holds once the scene, its library and the scorer are ready.
struct Scene {
  std::unique_ptr<io::Cube> cube;
  ResampledLibrary library;
  std::unique_ptr<SamScorer> scorer;
  SamResult result;

  static Result<Scene> open(const SamJob& job, const mpi::Comm& ranks) {
    Scene sc;
    auto cube = io::open_cube(job.scene);
    if (!cube) return cube.error();
    sc.cube = std::move(*cube);
    const auto& info = sc.cube->info();
    SamJob on_this_rank = job;
    if (!ranks.is_root()) on_this_rank.save_library.clear();  // one writer per file
    auto library = library_on_scene(on_this_rank, *sc.cube, job_tile_rows(job, info, info.shape.bands, 0));
    if (!library) return library.error();
    sc.library = std::move(*library);
    auto refs = prepare_references(job.method, sc.library.spectra, sc.library.dims(), sc.library.names,
                                   job.library.empty() ? (job.truth.empty() ? job.train_file : job.truth) : job.library);
    if (!refs) return refs.error();
    auto scorer = make_sam_scorer(job.backend, job.formulation);
    if (!scorer) return scorer.error();
    sc.scorer = std::move(*scorer);
    HB_TRY(sc.scorer->set_references(*refs));
    SamResult& r = sc.result;
    r.backend = std::string(sc.scorer->backend_name());
    r.formulation = sc.scorer->formulation();
    r.resampling = sc.library.method;
    r.references = sc.library.count();
    r.bands = sc.library.dims();
    r.excluded_bands = sc.library.excluded;
    r.tile_rows = job_tile_rows(job, info, sc.library.dims(), sc.library.count());
    return sc;
  }
};

// Class ids from the scores: 0 for ignored pixels and those past the threshold.
void label_pixels(const SamJob& job, const TileScores& scores, std::vector<std::uint16_t>& labels, SamResult& result) {
  labels.assign(scores.best.size(), 0);
  for (std::size_t p = 0; p < labels.size(); ++p) {
    if (scores.best[p] < 0) {
      ++result.ignored;
    } else if (!passes(job, scores.best_score[p])) {
      ++result.below_threshold;
    } else {
      labels[p] = static_cast<std::uint16_t>(scores.best[p] + 1);
      ++result.classified;
    }
  }
}

}  // namespace

Result<SamResult> run(const SamJob& job, const ProgressFn& progress) {
  const Stopwatch total;
  HB_TRY(check_job(job));
  const mpi::Comm ranks = job.comm != nullptr ? *job.comm : mpi::Comm::world();
  auto setup = Scene::open(job, ranks);
  HB_TRY(mpi::agree(setup ? Status{} : Status{setup.error()}, ranks));  // no rank waits for one that failed
  Scene& sc = *setup;
  const auto& info = sc.cube->info();
  SamResult& result = sc.result;
  auto created = SamOutputs::create(job.output, job.rules, info, job.scene, sc.library, job.method, &ranks);
  HB_TRY(mpi::agree(created ? Status{} : Status{created.error()}, ranks));
  auto outputs = std::move(*created);
  spdlog::info("sam: {} on {} ({}), {} rows per tile", method_name(job.method), result.backend, result.formulation,
               result.tile_rows);

  const auto tiles = mpi::rank_row_tiles(info.shape.lines, result.tile_rows, ranks);
  const auto counts = ranks.allgather(static_cast<std::int64_t>(tiles.size()));
  const std::int64_t calls = *std::max_element(counts.begin(), counts.end());
  io::TileReader reader(*sc.cube, tiles, 0, sc.scorer->host_allocator());
  const PixelBands bands{sc.library.bands, info.meta.data_ignore_value};
  dedup::AutoRule dedup_rule(job.dedup);
  TileScores scores, unique_scores;
  std::vector<std::uint16_t> labels;
  double input_wait = 0, compute = 0, writing = 0;
  // Every rank makes `calls` rounds (empty ones past its own tiles), agreeing on failure
  // before and after each write.
  for (std::int64_t i = 0; i < calls; ++i) {
    const io::Tile* tile = nullptr;
    Status local;
    if (i < static_cast<std::int64_t>(tiles.size())) {
      const Stopwatch wait;
      auto next = reader.next();
      input_wait += wait.seconds();
      if (next) tile = *next;
      else local = next.error();
    }
    const Stopwatch work;
    if (local.ok() && tile != nullptr) {
      const io::Tile& raw = *tile;
      if (raw.pixels() > 1 && dedup_rule.use_for_next_tile()) {
        auto dup = find_duplicate_pixels(raw, job.backend);
        local = dup ? Status{} : Status{dup.error()};
        if (dup) {
          dedup_rule.observe(*dup);
          result.duplicates += dup->rows() - dup->uniques();
          ++result.deduped_tiles;
          local = sc.scorer->score(unique_pixel_tile(raw, *dup), bands, outputs.wants_rules(), unique_scores);
          if (local) scatter_scores(unique_scores, *dup, sc.library.count(), scores);
        }
      } else {
        local = sc.scorer->score(raw, bands, outputs.wants_rules(), scores);
      }
      if (local) label_pixels(job, scores, labels, result);
    }
    compute += work.seconds();
    HB_TRY(mpi::agree(local, ranks));
    const Stopwatch write;
    // ENVI rows are written without the other ranks: a failed write is agreed here.
    HB_TRY(mpi::agree(tile != nullptr ? outputs.write(tile->core(), labels, scores)
                                      : outputs.write({}, {}, TileScores{}),
                      ranks));
    writing += write.seconds();
    if (progress && tile != nullptr) progress(tile->core().end, info.shape.lines);
  }
  const Stopwatch commit;
  HB_TRY(outputs.commit());
  writing += commit.seconds();
  std::int64_t totals[] = {result.classified, result.below_threshold, result.ignored, result.duplicates};
  ranks.allreduce_sum(totals);
  result.classified = totals[0];
  result.below_threshold = totals[1];
  result.ignored = totals[2];
  result.duplicates = totals[3];
  result.outputs = outputs.paths();
  result.seconds = total.seconds();
  spdlog::info("sam pass: rank {} of {}: {:.3f} s waiting for input, {:.3f} s scoring, {:.3f} s writing", ranks.rank(),
               ranks.size(), input_wait, compute, writing);
  spdlog::info("sam: dedup {}: {} of {} pixels were duplicates ({:.1f} %)", dedup::mode_name(job.dedup),
               result.duplicates, info.shape.pixels(),
               100.0 * static_cast<double>(result.duplicates) / static_cast<double>(std::max<std::int64_t>(info.shape.pixels(), 1)));
  spdlog::info("sam: {:.3f} s, {:.1f} MB/s, {:.3g} pixels/s", result.seconds,
               static_cast<double>(info.total_bytes()) / 1e6 / std::max(result.seconds, 1e-9),
               static_cast<double>(info.shape.pixels()) / std::max(result.seconds, 1e-9));
  return result;
}

}  // namespace hb::sam
