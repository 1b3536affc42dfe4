#include "jobs/steps.hpp"

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "io/convert.hpp"
#include "io/cube.hpp"
#include "io/resample_view.hpp"
#include "jobs/quicklook.hpp"
#include "jobs/schedule.hpp"
#include "src/knn/report.hpp"
#include "src/knn/run.hpp"
#include "src/mnf/run.hpp"
#include "src/ortho/run.hpp"
#include "src/sam/run.hpp"
#include "src/synth/synth.hpp"

namespace hb::jobs {
namespace fs = std::filesystem;

std::string SceneContext::file(const std::string& name) const { return (fs::path(scene_dir) / name).string(); }

std::string SceneContext::cube() const { return job.ingest.enabled ? file(scene.name + ".h5") : scene.path; }

std::int64_t output_bytes(const std::string& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  const std::int64_t own = ec ? 0 : static_cast<std::int64_t>(size);
  return fs::path(path).extension() == ".hdr" ? own + scene_bytes(path) : own;
}

namespace {

std::int64_t pixels_of(const std::string& cube_path) {
  auto cube = io::open_cube(cube_path);
  return cube ? (*cube)->info().shape.pixels() : 0;
}

Result<StepOutcome> run_generate(const SceneContext& c) {
  std::error_code ec;
  fs::create_directories(fs::path(c.scene.path).parent_path(), ec);
  auto options = c.scene.generate->options;
  // Ranks share a node's cores: the sbatch templates give each OMP_NUM_THREADS. The bytes
  // do not depend on the thread count.
  if (const char* threads = std::getenv("OMP_NUM_THREADS")) options.threads = std::max(1, std::atoi(threads));
  auto written = synth::write_synthetic_scene(c.scene.path, options, [&](std::int64_t done, std::int64_t total) {
    if (c.progress) c.progress(static_cast<double>(done) / static_cast<double>(std::max<std::int64_t>(total, 1)));
  });
  if (!written) return written.error();
  StepOutcome out;
  out.outputs = {written->scene, written->truth, written->library};
  out.pixels = options.lines * options.samples;
  return out;
}

Result<StepOutcome> run_ingest(const SceneContext& c) {
  io::ConvertOptions convert;
  convert.input = c.scene.path;
  convert.output = c.cube();
  HB_TRY(io::convert(convert, io::CubeFormat::hdf5));
  StepOutcome out;
  out.outputs = {convert.output};
  out.bytes_read = scene_bytes(c.scene.path);
  out.pixels = pixels_of(convert.output);
  return out;
}

Result<StepOutcome> run_mnf(const SceneContext& c) {
  mnf::RunOptions o;
  o.scene = c.cube();
  o.output = c.file("mnf.h5");
  o.pipeline.estimator = *mnf::noise_estimator_from_name(c.job.mnf.noise);
  o.selection.components = c.job.mnf.components;
  o.backend = *backend_kind_from_name(c.job.backend);
  if (c.job.mnf.campaign) o.apply_stats = c.campaign_stats;
  // The campaign basis lives on the target's bands: each scene is read resampled to them.
  if (!c.job.mnf.resample_to.empty()) io::set_scene_band_target(o.scene, c.job.mnf.resample_to);
  HB_TRY(mnf::run(o, c.comm()));
  StepOutcome out;
  out.outputs = {o.output};
  // Statistics and transform passes read the scene twice; applying a basis once.
  out.bytes_read = scene_bytes(o.scene) * (c.job.mnf.campaign ? 1 : 2);
  out.pixels = pixels_of(o.output);
  out.summary = {{"components", c.job.mnf.components}, {"basis", c.job.mnf.campaign ? "campaign" : "scene"}};
  return out;
}

Result<knn::KnnJob> knn_job(const SceneContext& c) {
  const auto& s = c.job.knn;
  knn::KnnJob job;
  job.scene = c.cube();
  job.truth = c.scene.truth;
  job.train_file = s.train_file;
  job.output = c.file("classes.hdr");
  job.report = c.file(".knn-report");  // carries timings: the manifest keeps the accuracy instead
  job.split.fraction = s.train_fraction;
  job.split.per_class = s.train_per_class;
  job.split.seed = s.seed;
  job.classify.k = s.k;
  job.classify.metric = *knn::metric_from_name(s.metric);
  job.classify.weights = *knn::weights_from_name(s.weights);
  job.classify.backend = *backend_kind_from_name(c.job.backend);
  if (s.features == "mnf" && c.comm().is_parallel()) {
    job.scene = c.file("mnf.h5");  // across ranks: the components cube, all of its bands
  } else if (s.features == "mnf") {
    job.features = {classify::FeatureSpec::Kind::mnf, static_cast<int>(c.job.mnf.components)};
    job.features_scene = c.file("mnf.h5");
  }
  if (job.truth.empty() && job.train_file.empty())
    return bad_input(c.job.file, "collection.truth", "scene " + c.scene.name + " has no truth raster for knn");
  return job;
}

Result<StepOutcome> run_knn(const SceneContext& c) {
  auto job = knn_job(c);
  if (!job) return job.error();
  const auto ranks = c.comm();
  job->comm = &ranks;
  auto result = knn::run_knn_job(*job, [&](std::int64_t done, std::int64_t total) {
    if (c.progress) c.progress(static_cast<double>(done) / static_cast<double>(std::max<std::int64_t>(total, 1)));
  });
  if (!result) return result.error();
  if (result->report_paths) {
    std::error_code ignored;
    fs::remove(result->report_paths->json, ignored);
    fs::remove(result->report_paths->markdown, ignored);
  }
  StepOutcome out;
  out.outputs = result->report.outputs;
  out.bytes_read = scene_bytes(job->features_scene.empty() ? job->scene : job->features_scene);
  out.pixels = result->report.stats.classified + result->report.stats.ignored;
  auto summary = knn::report_json(result->report);
  summary.erase("seconds");  // the manifest and report stay the same run after run
  summary.erase("outputs");
  out.summary = summary;
  return out;
}

Result<StepOutcome> run_sam(const SceneContext& c) {
  sam::SamJob job;
  job.scene = c.cube();
  job.library = c.job.sam.library;
  job.output = c.file("sam_classes.hdr");
  job.max_angle = c.job.sam.max_angle;
  job.backend = *backend_kind_from_name(c.job.backend);
  const auto ranks = c.comm();
  job.comm = &ranks;
  auto result = sam::run(job, [&](std::int64_t done, std::int64_t total) {
    if (c.progress) c.progress(static_cast<double>(done) / static_cast<double>(std::max<std::int64_t>(total, 1)));
  });
  if (!result) return result.error();
  StepOutcome out;
  out.outputs = result->outputs;
  out.bytes_read = scene_bytes(job.scene);
  out.pixels = result->classified + result->below_threshold + result->ignored;
  out.summary = {{"references", result->references},     {"bands", result->bands},
                 {"classified", result->classified},     {"below_threshold", result->below_threshold},
                 {"ignored", result->ignored},           {"resampling", result->resampling}};
  return out;
}

// The products of the scene's earlier steps, by file name in the scene folder.
std::vector<std::string> mapped_products(const JobSpec& job) {
  std::vector<std::string> products;
  if (job.mnf.enabled) products.push_back("mnf.h5");
  if (job.knn.enabled) products.push_back("classes.hdr");
  if (job.sam.enabled) products.push_back("sam_classes.hdr");
  return products;
}

// "classes.hdr" -> "classes_map.tif": the product on the grid of the scene's GLT.
std::string map_name(const std::string& product, const std::string& format) {
  return fs::path(product).stem().string() + "_map." + format;
}

Result<StepOutcome> run_ortho(const SceneContext& c) {
  if (c.scene.glt.empty())
    return bad_input(c.job.file, "ortho.glt", "scene " + c.scene.name + " has no GLT to put its products on a map");
  StepOutcome out;
  const auto ranks = c.comm();
  for (const auto& product : mapped_products(c.job)) {
    ortho::OrthoJob job;
    job.product = c.file(product);
    job.glt = c.scene.glt;
    job.output = c.file(map_name(product, c.job.ortho.format));
    job.backend = *backend_kind_from_name(c.job.backend);
    job.comm = &ranks;
    auto result = ortho::run(job);
    if (!result) return result.error();
    out.outputs.push_back(job.output);
    out.bytes_read += output_bytes(job.product);
    out.pixels += result->filled + result->empty;
    out.summary[product] = {{"filled", result->filled}, {"empty", result->empty}};
  }
  return out;
}

Result<StepOutcome> run_quicklooks(const SceneContext& c) {
  StepOutcome out;
  const auto& q = c.job.quicklooks;
  if (c.job.mnf.enabled) {
    const std::string png = c.file("mnf_rgb.png");
    HB_TRY(mnf_quicklook(c.file("mnf.h5"), png, q.low_percent, q.high_percent));
    out.outputs.push_back(png);
    if (fs::exists(geotiff_quicklook_path(png))) out.outputs.push_back(geotiff_quicklook_path(png));
    out.bytes_read += output_bytes(c.file("mnf.h5"));
  }
  if (c.job.knn.enabled) {
    const std::string png = c.file("classes.png");
    auto legend = class_quicklook(c.file("classes.hdr"), png);
    if (!legend) return legend.error();
    out.outputs.push_back(png);
    if (fs::exists(geotiff_quicklook_path(png))) out.outputs.push_back(geotiff_quicklook_path(png));
    out.bytes_read += output_bytes(c.file("classes.hdr"));
    out.summary["legend_width"] = *legend;
  }
  return out;
}

std::string no_parameters(const JobSpec&) { return {}; }
std::vector<std::string> no_inputs(const SceneContext&) { return {}; }

}  // namespace

const std::vector<Step>& scene_steps() {
  static const std::vector<Step> steps{
      {"generate", [](const JobSpec&, const SceneSpec& s) { return s.generate.has_value(); },
       no_parameters, no_inputs, run_generate},
      {"ingest", [](const JobSpec& j, const SceneSpec&) { return j.ingest.enabled; }, no_parameters, no_inputs,
       run_ingest},
      {"mnf", [](const JobSpec& j, const SceneSpec&) { return j.mnf.enabled; },
       [](const JobSpec& j) { return fmt::format("{} {} {}", j.mnf.campaign, j.mnf.components, j.mnf.noise); },
       [](const SceneContext& c) { return std::vector<std::string>{c.campaign_stats}; }, run_mnf, true, true},
      {"knn", [](const JobSpec& j, const SceneSpec&) { return j.knn.enabled; },
       [](const JobSpec& j) {
         const auto& k = j.knn;
         return fmt::format("{} {} {} {} {} {} {} {}", k.k, k.train_fraction.value_or(-1), k.train_per_class.value_or(-1),
                            k.seed, k.features, k.weights, k.metric, j.mnf.components);
       },
       [](const SceneContext& c) { return std::vector<std::string>{c.scene.truth, c.job.knn.train_file}; }, run_knn,
       true, true},
      {"sam", [](const JobSpec& j, const SceneSpec&) { return j.sam.enabled; },
       [](const JobSpec& j) { return fmt::format("{}", j.sam.max_angle); },
       [](const SceneContext& c) { return std::vector<std::string>{c.job.sam.library}; }, run_sam, true, true},
      {"ortho", [](const JobSpec& j, const SceneSpec&) { return j.ortho.enabled; },
       [](const JobSpec& j) { return j.ortho.format; },
       [](const SceneContext& c) { return std::vector<std::string>{c.scene.glt}; }, run_ortho, true, true},
      {"quicklooks", [](const JobSpec& j, const SceneSpec&) { return j.quicklooks.enabled; },
       [](const JobSpec& j) { return fmt::format("{} {}", j.quicklooks.low_percent, j.quicklooks.high_percent); },
       no_inputs, run_quicklooks},
  };
  return steps;
}

}  // namespace hb::jobs
