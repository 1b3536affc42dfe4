#include "src/sam/run.hpp"

#include <spdlog/spdlog.h>

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "io/tile_reader.hpp"
#include "src/knn/training_file.hpp"
#include "src/sam/library.hpp"
#include "src/sam/outputs.hpp"
#include "src/sam/unique_pixels.hpp"

namespace hb::sam {
namespace {

class Stopwatch {
 public:
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

Status check_job(const SamJob& job) {
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
  auto training = knn::read_training_file(job.train_file);
  if (!training) return training.error();
  return class_means_from_training(*training, knn::select_good_bands(scene.info()), job.scene, job.train_file);
}

std::int64_t tile_rows_for(const SamJob& job, const io::CubeInfo& info, std::int64_t dims, std::int64_t count) {
  if (job.tile_rows > 0) return std::min(job.tile_rows, std::max<std::int64_t>(1, info.shape.lines));
  const std::int64_t per_pixel = info.bytes_per_pixel() + 8 * dims + 4 + 4 + 2 + (job.rules.empty() ? 0 : 4 * count);
  const std::int64_t per_row = std::max<std::int64_t>(1, per_pixel * info.shape.samples);
  return std::clamp<std::int64_t>(job.memory_bytes / per_row, 1, std::max<std::int64_t>(1, info.shape.lines));
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

}  // namespace

Result<SamResult> run(const SamJob& job, const ProgressFn& progress) {
  const Stopwatch total;
  HB_TRY(check_job(job));
  auto cube = io::open_cube(job.scene);
  if (!cube) return cube.error();
  const io::Cube& scene = **cube;
  const auto& info = scene.info();
  auto library = library_on_scene(job, scene, tile_rows_for(job, info, info.shape.bands, 0));
  if (!library) return library.error();
  auto refs = prepare_references(job.method, library->spectra, library->dims(), library->names,
                                 job.library.empty() ? (job.truth.empty() ? job.train_file : job.truth) : job.library);
  if (!refs) return refs.error();
  auto scorer = make_sam_scorer(job.backend, job.formulation);
  if (!scorer) return scorer.error();
  HB_TRY((*scorer)->set_references(*refs));

  SamResult result;
  result.backend = std::string((*scorer)->backend_name());
  result.formulation = (*scorer)->formulation();
  result.resampling = library->method;
  result.references = library->count();
  result.bands = library->dims();
  result.excluded_bands = library->excluded;
  result.tile_rows = tile_rows_for(job, info, library->dims(), library->count());
  auto outputs = SamOutputs::create(job.output, job.rules, info, job.scene, *library, job.method);
  if (!outputs) return outputs.error();
  spdlog::info("sam: {} on {} ({}), {} rows per tile", method_name(job.method), result.backend, result.formulation,
               result.tile_rows);

  std::vector<io::RowRange> tiles;
  for (std::int64_t r = 0; r < info.shape.lines; r += result.tile_rows)
    tiles.push_back({r, std::min(info.shape.lines, r + result.tile_rows)});
  io::TileReader reader(scene, tiles, 0, (*scorer)->host_allocator());
  const PixelBands bands{library->bands, info.meta.data_ignore_value};
  dedup::AutoRule dedup_rule(job.dedup);
  TileScores scores, unique_scores;
  std::vector<std::uint16_t> labels;
  double input_wait = 0, compute = 0, writing = 0;
  while (true) {
    const Stopwatch wait;
    auto tile = reader.next();
    input_wait += wait.seconds();
    if (!tile) return tile.error();
    if (!*tile) break;
    const Stopwatch work;
    const io::Tile& raw = **tile;
    if (raw.pixels() > 1 && dedup_rule.use_for_next_tile()) {
      auto dup = find_duplicate_pixels(raw, job.backend);
      if (!dup) return dup.error();
      dedup_rule.observe(*dup);
      result.duplicates += dup->rows() - dup->uniques();
      ++result.deduped_tiles;
      HB_TRY((*scorer)->score(unique_pixel_tile(raw, *dup), bands, outputs->wants_rules(), unique_scores));
      scatter_scores(unique_scores, *dup, library->count(), scores);
    } else {
      HB_TRY((*scorer)->score(raw, bands, outputs->wants_rules(), scores));
    }
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
    compute += work.seconds();
    const Stopwatch write;
    HB_TRY(outputs->write((*tile)->core(), labels, scores));
    writing += write.seconds();
    if (progress) progress((*tile)->core().end, info.shape.lines);
  }
  const Stopwatch commit;
  HB_TRY(outputs->commit());
  writing += commit.seconds();
  result.outputs = outputs->paths();
  result.seconds = total.seconds();
  spdlog::info("sam pass: {:.3f} s waiting for input, {:.3f} s scoring, {:.3f} s writing", input_wait, compute, writing);
  spdlog::info("sam: dedup {}: ran on {} of {} tiles, {} of {} pixels were duplicates ({:.1f} %)",
               dedup::mode_name(job.dedup), result.deduped_tiles, tiles.size(), result.duplicates,
               info.shape.pixels(), 100.0 * static_cast<double>(result.duplicates) /
                                        static_cast<double>(std::max<std::int64_t>(info.shape.pixels(), 1)));
  spdlog::info("sam: {:.3f} s, {:.1f} MB/s, {:.3g} pixels/s", result.seconds,
               static_cast<double>(info.total_bytes()) / 1e6 / std::max(result.seconds, 1e-9),
               static_cast<double>(info.shape.pixels()) / std::max(result.seconds, 1e-9));
  return result;
}

}  // namespace hb::sam
