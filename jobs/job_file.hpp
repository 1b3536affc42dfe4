// A job file (TOML) as data: the collection of scenes, the output folder and the steps
// with their parameters. Parsing checks everything a run would trip over later, and
// every error names the key and its line in the file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/error.hpp"
#include "src/synth/synth.hpp"

namespace hb::jobs {

// Where a value came from in the job file, for errors found after parsing.
struct Origin {
  std::string key;  // dotted: "collection.globs"
  std::int64_t line = 0;
};

// A path or pattern of a list in the job file, resolved, with its line.
struct ListedPath {
  std::string path;
  Origin origin;
};

// A scene the run makes itself ([[generate]]): a synthetic scene, its truth beside it.
struct GenerateSpec {
  std::string name;
  synth::SynthOptions options;
};

// One scene of the collection after globs are expanded. `name` is unique in the job
// and names the scene's output folder.
struct SceneSpec {
  std::string name;
  std::string path;   // ENVI header or HDF5 cube; for generated scenes, where it will be
  std::string truth;  // class raster for knn; empty = none
  std::optional<GenerateSpec> generate;
  std::string glt;    // geometric look-up table for [ortho]; empty = none
  Origin origin;  // the key its name comes from (given, or derived from a file name)
};

struct IngestStep {
  bool enabled = false;
};

struct MnfStep {
  bool enabled = false;
  bool campaign = false;  // one basis from all scenes' statistics, applied to each scene
  std::int64_t components = 10;
  std::string noise = "diff";
  std::string resample_to;  // campaign: every scene read on this scene's bands ("" = scenes must share bands)
};

struct KnnStep {
  bool enabled = false;
  int k = 5;
  std::optional<double> train_fraction;
  std::optional<std::int64_t> train_per_class;
  std::string train_file;      // HDF5 training file instead of a draw from the truth
  std::uint64_t seed = 1;
  std::string features = "bands";  // "bands" or "mnf" (the mnf step's components)
  std::string weights = "uniform";
  std::string metric = "euclidean";
};

// Spectral angle mapping against a library (src/sam/run.hpp), resampled to each scene.
struct SamStep {
  bool enabled = false;
  std::string library;
  double max_angle = 0.1;  // radians; pixels farther from every spectrum stay unclassified
};

struct QuicklookStep {
  bool enabled = false;
  double low_percent = 2.0;
  double high_percent = 98.0;
};

// Every product of the scene (MNF components, KNN and SAM class maps) put on the map
// grid of the scene's GLT (src/ortho/run.hpp) as PRODUCT_map.FORMAT.
struct OrthoStep {
  bool enabled = false;
  std::string format = "tif";  // tif | h5 | hdr
};

struct JobSpec {
  std::string file;    // the job file, as given
  std::string name;
  std::string output;  // absolute or relative to the job file's folder, resolved
  std::string backend = "auto";
  std::string units = "physical";  // scenes with a scaling: physical values or stored numbers (io/units.hpp)
  std::vector<ListedPath> scene_paths;  // explicit, resolved
  std::vector<ListedPath> globs;        // resolved patterns
  std::string truth_pattern;             // "{dir}/{stem}_truth.hdr"; empty = none
  std::string glt_pattern;               // [ortho] glt: "{dir}/{stem}_glt.hdr"; empty = none
  std::vector<SceneSpec> explicit_scenes;  // from [[collection.scene]] tables
  std::vector<GenerateSpec> generate;
  std::int64_t large_scene_bytes = 0;  // 0 = off; see jobs/README.md (scheduling)
  IngestStep ingest;
  MnfStep mnf;
  KnnStep knn;
  SamStep sam;
  OrthoStep ortho;
  QuicklookStep quicklooks;
  bool report = true;
};

// Reads and validates `path`. Errors are bad_input(path, "table.key", "line N: ...").
Result<JobSpec> load_job_file(const std::string& path);

// The same from the file's text; `path` names it in errors and anchors relative paths.
Result<JobSpec> parse_job_text(std::string_view text, const std::string& path);

// The scenes of the job, in a stable order: [[collection.scene]] tables, `scenes`,
// glob matches (sorted; never under the output folder), then generated scenes. Names
// must be unique and safe (is_safe_scene_name).
Result<std::vector<SceneSpec>> resolve_collection(const JobSpec& job);

// A scene name becomes a folder and file names under the output folder, so it must be
// one path component of a portable alphabet: letters, digits, '-', '_', '.', not
// starting with '.' (no "..", no hidden files, no temporaries' names), at most 128 bytes.
bool is_safe_scene_name(std::string_view name);

// True when `path` is the folder `folder` or lies under it, by file identity where both
// exist (symlinks and bind mounts see through), else by canonical path.
bool is_inside_folder(const std::string& path, const std::string& folder);

// Bytes a [[generate]] scene writes: the int16 cube plus the uint8 truth (headers and
// library are a few KiB, allowed for). Parsing guarantees it fits in 64 bits.
std::int64_t generated_scene_bytes(const GenerateSpec& g);
std::int64_t generated_disk_bytes(const GenerateSpec& g);

}  // namespace hb::jobs
