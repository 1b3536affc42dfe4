#include "jobs/job_file.hpp"

#include <glob.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "jobs/toml_reader.hpp"
#include "src/mnf/noise_estimators.hpp"

namespace hb::jobs {
namespace fs = std::filesystem;
namespace {

// Relative paths in a job file are relative to the job file's folder.
std::string resolve(const std::string& job_file, const std::string& path) {
  if (path.empty() || fs::path(path).is_absolute()) return path;
  return (fs::absolute(job_file).parent_path() / path).lexically_normal().string();
}

const toml::table* sub_table(const toml::table& root, const char* key) { return root.get_as<toml::table>(key); }

Status read_job_table(const toml::table& root, JobSpec& job) {
  const toml::table* t = sub_table(root, "job");
  if (t == nullptr) return bad_input(job.file, "job", "line 1: a [job] table with name and output is required");
  TomlReader r(*t, job.file, "job");
  HB_TRY(r.string("name", job.name));
  HB_TRY(r.string("output", job.output));
  HB_TRY(r.choice("backend", job.backend, {"auto", "cpu", "cuda"}));
  HB_TRY(r.choice("units", job.units, {"physical", "raw"}));
  std::int64_t large_mb = 0;
  HB_TRY(r.integer("large_scene_mb", large_mb, 0, std::int64_t{1} << 30));
  job.large_scene_bytes = large_mb << 20;
  if (job.name.empty()) return r.error("name", "a job needs a name");
  if (job.output.empty()) return r.error("output", "a job needs an output folder");
  job.output = resolve(job.file, job.output);
  return r.finish();
}

Origin origin_of(const TomlReader& r, const toml::table& t, const char* key) {
  const toml::node* n = t.get(key);
  return {r.dotted(key), static_cast<std::int64_t>((n != nullptr ? n->source() : t.source()).begin.line)};
}

Status check_scene_name(const std::string& file, const std::string& name, const Origin& at) {
  if (is_safe_scene_name(name)) return {};
  const bool derived = !at.key.ends_with(".name");
  return bad_input(file, at.key, line_of(at.line) + ": '" + name + "' cannot name a scene: a name is one path component "
                   "of letters, digits, '-', '_' and '.', not starting with '.'" +
                   (derived ? " (it comes from the file name: give the scene a name in [[collection.scene]])" : ""));
}

// A job's outputs must never become its inputs (a rerun would take its own products as scenes).
Status check_outside_output(const JobSpec& job, const std::string& path, const Origin& at) {
  if (!is_inside_folder(path, job.output)) return {};
  return bad_input(job.file, at.key, line_of(at.line) + ": '" + path + "' is inside the output folder '" + job.output +
                   "': a job's outputs cannot be its inputs");
}

Status read_scene_tables(const toml::node& node, TomlReader& parent, JobSpec& job) {
  const toml::array* list = node.as_array();
  if (list == nullptr) return parent.error("scene", "must be an array of tables ([[collection.scene]])");
  for (const auto& item : *list) {
    const toml::table* t = item.as_table();
    if (t == nullptr) return parent.error_at(item, "scene", "every entry must be a table");
    TomlReader r(*t, job.file, "collection.scene");
    SceneSpec scene;
    HB_TRY(r.string("path", scene.path));
    HB_TRY(r.string("truth", scene.truth));
    HB_TRY(r.string("glt", scene.glt));
    HB_TRY(r.string("name", scene.name));
    if (scene.path.empty()) return parent.error_at(item, "scene.path", "each [[collection.scene]] needs a path");
    scene.path = resolve(job.file, scene.path);
    scene.truth = resolve(job.file, scene.truth);
    scene.glt = resolve(job.file, scene.glt);
    HB_TRY(check_outside_output(job, scene.path, origin_of(r, *t, "path")));
    scene.origin = origin_of(r, *t, scene.name.empty() ? "path" : "name");
    if (!scene.name.empty()) HB_TRY(check_scene_name(job.file, scene.name, scene.origin));
    HB_TRY(r.finish());
    job.explicit_scenes.push_back(std::move(scene));
  }
  return {};
}

Status read_paths(TomlReader& r, const char* key, const JobSpec& job, std::vector<ListedPath>& out) {
  std::vector<std::string> paths;
  std::vector<std::int64_t> lines;
  HB_TRY(r.strings(key, paths, &lines));
  for (std::size_t i = 0; i < paths.size(); ++i) out.push_back({resolve(job.file, paths[i]), {r.dotted(key), lines[i]}});
  return {};
}

Status read_collection(const toml::table& root, JobSpec& job) {
  const toml::table* t = sub_table(root, "collection");
  if (t == nullptr) return {};
  TomlReader r(*t, job.file, "collection");
  HB_TRY(read_paths(r, "scenes", job, job.scene_paths));
  HB_TRY(read_paths(r, "globs", job, job.globs));
  HB_TRY(r.string("truth", job.truth_pattern));
  if (const toml::node* scenes = r.node("scene")) HB_TRY(read_scene_tables(*scenes, r, job));
  for (const auto& p : job.scene_paths) HB_TRY(check_outside_output(job, p.path, p.origin));
  return r.finish();
}

// Like an ENVI header's lines * samples * bands * bytes: every byte count of the scene
// must fit in 64 bits, or sizes wrap and the generator grows memory until killed.
std::optional<std::int64_t> checked_disk_bytes(const synth::SynthOptions& o) {
  constexpr std::int64_t kHeadersAndLibrary = 64 << 10;
  std::int64_t pixels = 0, cube = 0, library = 0, total = 0;
  if (__builtin_mul_overflow(o.lines, o.samples, &pixels) || __builtin_mul_overflow(pixels, o.bands, &cube) ||
      __builtin_mul_overflow(cube, std::int64_t{2}, &cube) || __builtin_add_overflow(cube, pixels, &total) ||
      __builtin_mul_overflow(std::int64_t{o.classes} * 8, o.bands, &library) ||
      __builtin_add_overflow(total, library + kHeadersAndLibrary, &total))
    return std::nullopt;
  return total;
}

Status read_generate(const toml::table& root, JobSpec& job) {
  const toml::node* node = root.get("generate");
  if (node == nullptr) return {};
  const toml::array* list = node->as_array();
  if (list == nullptr) return bad_input(job.file, "generate", line_of(node->source()) + ": use [[generate]] tables");
  for (const auto& item : *list) {
    const toml::table* t = item.as_table();
    if (t == nullptr) return bad_input(job.file, "generate", line_of(item.source()) + ": every entry must be a table");
    TomlReader r(*t, job.file, "generate");
    GenerateSpec g;
    auto& o = g.options;
    o.lines = 128;
    o.samples = 128;
    o.bands = 224;
    std::int64_t classes = o.classes;
    std::int64_t seed = 1;
    HB_TRY(r.string("name", g.name));
    HB_TRY(r.integer("lines", o.lines, 1, std::int64_t{1} << 31));
    HB_TRY(r.integer("samples", o.samples, 1, std::int64_t{1} << 20));
    HB_TRY(r.integer("bands", o.bands, 1, 4096));
    HB_TRY(r.integer("classes", classes, 1, 255));
    HB_TRY(r.integer("seed", seed, 0, std::int64_t{1} << 62));
    HB_TRY(r.number("fill_border", o.fill_border, 0.0, 0.95));
    if (g.name.empty()) return r.error("name", "each [[generate]] needs a name");
    HB_TRY(check_scene_name(job.file, g.name, origin_of(r, *t, "name")));
    o.classes = static_cast<int>(classes);
    o.seed = static_cast<std::uint64_t>(seed);
    if (!checked_disk_bytes(o))
      return r.error_at(*t, "lines * samples * bands", "the scene's size in bytes overflows 64 bits");
    HB_TRY(r.finish());
    job.generate.push_back(std::move(g));
  }
  return {};
}

Status read_mnf(const toml::table& root, JobSpec& job) {
  const toml::table* t = sub_table(root, "mnf");
  if (t == nullptr) return {};
  TomlReader r(*t, job.file, "mnf");
  job.mnf.enabled = true;
  std::string basis = "scene";
  HB_TRY(r.choice("basis", basis, {"scene", "campaign"}));
  job.mnf.campaign = basis == "campaign";
  HB_TRY(r.integer("components", job.mnf.components, 1, 4096));
  HB_TRY(r.choice("noise", job.mnf.noise, mnf::noise_estimator_names()));
  HB_TRY(r.string("resample_to", job.mnf.resample_to));
  if (!job.mnf.resample_to.empty() && !job.mnf.campaign)
    return r.error_at(*t, "resample_to", "belongs to basis = \"campaign\"");
  job.mnf.resample_to = resolve(job.file, job.mnf.resample_to);
  return r.finish();
}

Status read_knn(const toml::table& root, JobSpec& job) {
  const toml::table* t = sub_table(root, "knn");
  if (t == nullptr) return {};
  TomlReader r(*t, job.file, "knn");
  auto& knn = job.knn;
  knn.enabled = true;
  std::int64_t k = knn.k;
  std::int64_t seed = 1;
  HB_TRY(r.integer("k", k, 1, 1 << 20));
  knn.k = static_cast<int>(k);
  if (r.has("train_fraction")) {
    double f = 0;
    HB_TRY(r.number("train_fraction", f, 1e-9, 1.0));
    knn.train_fraction = f;
  }
  if (r.has("train_per_class")) {
    std::int64_t n = 0;
    HB_TRY(r.integer("train_per_class", n, 1, std::int64_t{1} << 40));
    knn.train_per_class = n;
  }
  HB_TRY(r.string("train", knn.train_file));
  knn.train_file = resolve(job.file, knn.train_file);
  HB_TRY(r.integer("seed", seed, 0, std::int64_t{1} << 62));
  knn.seed = static_cast<std::uint64_t>(seed);
  HB_TRY(r.choice("features", knn.features, {"bands", "mnf"}));
  HB_TRY(r.choice("weights", knn.weights, {"uniform", "distance"}));
  HB_TRY(r.choice("metric", knn.metric, {"euclidean", "cosine"}));
  const int sources = (knn.train_fraction ? 1 : 0) + (knn.train_per_class ? 1 : 0) + (knn.train_file.empty() ? 0 : 1);
  if (sources != 1) return r.error("k", "give exactly one of train_fraction, train_per_class, train");
  if (knn.features == "mnf" && !job.mnf.enabled) return r.error("features", "'mnf' needs an [mnf] step");
  if (knn.features == "mnf" && !knn.train_file.empty())
    return r.error("features", "a training file holds band spectra: use features = \"bands\" with train");
  return r.finish();
}

Status read_sam(const toml::table& root, JobSpec& job) {
  const toml::table* t = sub_table(root, "sam");
  if (t == nullptr) return {};
  TomlReader r(*t, job.file, "sam");
  job.sam.enabled = true;
  HB_TRY(r.string("library", job.sam.library));
  HB_TRY(r.number("max_angle", job.sam.max_angle, 0.0, 3.15));
  if (job.sam.library.empty()) return r.error("library", "sam needs a spectral library");
  job.sam.library = resolve(job.file, job.sam.library);
  return r.finish();
}

Status read_ortho(const toml::table& root, JobSpec& job) {
  const toml::table* t = sub_table(root, "ortho");
  if (t == nullptr) return {};
  TomlReader r(*t, job.file, "ortho");
  job.ortho.enabled = true;
  HB_TRY(r.string("glt", job.glt_pattern));
  HB_TRY(r.string("format", job.ortho.format));
  if (job.ortho.format != "tif" && job.ortho.format != "h5" && job.ortho.format != "hdr")
    return r.error("format", "must be tif, h5 or hdr");
  if (!job.mnf.enabled && !job.knn.enabled && !job.sam.enabled)
    return r.error("glt", "ortho puts the mnf, knn or sam outputs on the map: add one of them");
  return r.finish();
}

Status read_quicklooks(const toml::table& root, JobSpec& job) {
  const toml::table* t = sub_table(root, "quicklooks");
  if (t == nullptr) return {};
  TomlReader r(*t, job.file, "quicklooks");
  job.quicklooks.enabled = true;
  HB_TRY(r.number("low_percent", job.quicklooks.low_percent, 0.0, 100.0));
  HB_TRY(r.number("high_percent", job.quicklooks.high_percent, 0.0, 100.0));
  if (job.quicklooks.low_percent >= job.quicklooks.high_percent)
    return r.error("high_percent", "must be above low_percent");
  return r.finish();
}

Status check_tables(const toml::table& root, const JobSpec& job) {
  static const std::vector<std::string> known{"job", "collection", "generate", "ingest", "mnf",
                                              "knn", "sam",        "quicklooks", "report", "ortho"};
  for (const auto& [key, value] : root) {
    const std::string name(key.str());
    if (std::find(known.begin(), known.end(), name) == known.end())
      return bad_input(job.file, toml_key(name), line_of(value.source()) + ": unknown table (misspelt?)");
  }
  for (const char* flag : {"ingest", "report"}) {
    const toml::table* t = sub_table(root, flag);
    if (t != nullptr) HB_TRY(TomlReader(*t, job.file, flag).finish());  // no parameters yet
  }
  return {};
}

}  // namespace

Result<JobSpec> parse_job_text(std::string_view text, const std::string& path) {
  JobSpec job;
  job.file = path;
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    return bad_input(path, "toml", line_of(e.source()) + ": " + std::string(e.description()));
  }
  HB_TRY(check_tables(root, job));
  HB_TRY(read_job_table(root, job));
  HB_TRY(read_collection(root, job));
  HB_TRY(read_generate(root, job));
  job.ingest.enabled = root.contains("ingest");
  job.report = root.contains("report");
  HB_TRY(read_mnf(root, job));
  HB_TRY(read_knn(root, job));
  HB_TRY(read_sam(root, job));
  HB_TRY(read_ortho(root, job));
  HB_TRY(read_quicklooks(root, job));
  if (job.quicklooks.enabled && !job.mnf.enabled && !job.knn.enabled)
    return bad_input(path, "quicklooks", "line 1: quicklooks draw the mnf or knn outputs: add [mnf] or [knn]");
  return job;
}

Result<JobSpec> load_job_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error(path, "cannot open the job file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return io_error(path, "cannot read the job file");
  return parse_job_text(text.str(), path);
}

bool is_safe_scene_name(std::string_view name) {
  if (name.empty() || name.size() > 128 || name.front() == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
  });
}

bool is_inside_folder(const std::string& path, const std::string& folder) {
  std::error_code ec;
  fs::path outer = fs::weakly_canonical(folder, ec);
  if (ec) return false;
  if (outer.filename().empty()) outer = outer.parent_path();  // "out/" names "out"
  const fs::path inner = fs::weakly_canonical(path, ec);
  if (ec) return false;
  const auto [mismatch, ignored] = std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end());
  if (mismatch == outer.end()) return true;
  if (!fs::is_directory(outer, ec)) return false;
  for (fs::path p = inner; !p.empty(); p = p.parent_path()) {  // bind mounts: same folder, other path
    if (fs::equivalent(p, outer, ec)) return true;
    if (p == p.root_path()) break;
  }
  return false;
}

std::int64_t generated_scene_bytes(const GenerateSpec& g) { return g.options.lines * g.options.samples * g.options.bands * 2; }

std::int64_t generated_disk_bytes(const GenerateSpec& g) {
  return checked_disk_bytes(g.options).value_or(std::numeric_limits<std::int64_t>::max());
}

namespace {

// A scene's stem: its file name less the extension, and less ".tar" for a delivery
// archive (f080611t01p00r07.tar.gz -> f080611t01p00r07).
std::string scene_stem(const fs::path& p) {
  std::string stem = p.stem().string();
  if (stem.ends_with(".tar")) stem.resize(stem.size() - 4);
  return stem;
}

std::string expand_pattern(const std::string& pattern, const std::string& scene) {
  const fs::path p(scene);
  std::string out = pattern;
  const std::map<std::string, std::string> words{{"{dir}", p.parent_path().string()}, {"{stem}", scene_stem(p)}};
  for (const auto& [word, value] : words)
    for (auto at = out.find(word); at != std::string::npos; at = out.find(word, at + value.size()))
      out.replace(at, word.size(), value);
  return out;
}

std::vector<std::string> glob_matches(const std::string& pattern) {
  glob_t found{};
  std::vector<std::string> out;
  if (::glob(pattern.c_str(), 0, nullptr, &found) == 0)
    for (std::size_t i = 0; i < found.gl_pathc; ++i) out.emplace_back(found.gl_pathv[i]);
  ::globfree(&found);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

Result<std::vector<SceneSpec>> resolve_collection(const JobSpec& job) {
  std::vector<SceneSpec> scenes = job.explicit_scenes;
  auto add = [&](const std::string& path, const Origin& origin) {
    SceneSpec s;
    s.path = path;
    s.origin = origin;
    scenes.push_back(std::move(s));
  };
  for (const auto& p : job.scene_paths) add(p.path, p.origin);
  for (const auto& g : job.globs) {
    int added = 0;
    for (const auto& m : glob_matches(g.path))
      if (!is_inside_folder(m, job.output)) add(m, g.origin), ++added;
    if (added == 0)
      return bad_input(job.file, g.origin.key, line_of(g.origin.line) + ": '" + g.path +
                                                   "' matches no file outside the output folder");
  }
  for (auto& s : scenes) {
    if (s.name.empty()) s.name = scene_stem(s.path);
    HB_TRY(check_scene_name(job.file, s.name, s.origin));
    if (s.truth.empty() && !job.truth_pattern.empty()) s.truth = expand_pattern(job.truth_pattern, s.path);
    if (s.glt.empty() && !job.glt_pattern.empty()) s.glt = resolve(job.file, expand_pattern(job.glt_pattern, s.path));
  }
  for (const auto& g : job.generate) {
    SceneSpec s;
    s.name = g.name;
    s.path = (fs::path(job.output) / "generated" / (g.name + ".hdr")).string();
    s.truth = (fs::path(job.output) / "generated" / (g.name + "_truth.hdr")).string();
    s.generate = g;
    scenes.push_back(std::move(s));
  }
  std::map<std::string, std::string> seen;
  for (const auto& s : scenes) {
    auto [at, inserted] = seen.emplace(s.name, s.path);
    if (!inserted)
      return bad_input(job.file, "collection", "two scenes are named '" + s.name + "' (" + at->second + ", " + s.path +
                                                   "): give one a name in [[collection.scene]]");
  }
  if (scenes.empty()) return bad_input(job.file, "collection", "the job names no scene");
  return scenes;
}

}  // namespace hb::jobs
