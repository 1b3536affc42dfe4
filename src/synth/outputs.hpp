// What write_synthetic_scene writes: the headers' metadata for the scene, its class
// truth and its material library, and the streaming loop over row tiles.
#pragma once

#include <cstdint>
#include <string>

#include "io/cube.hpp"
#include "src/synth/model.hpp"

namespace hb::synth {

struct OutputPaths {
  std::string scene_target;  // what create_cube is given for the scene
  std::string scene;         // the scene's header (or HDF5 file)
  std::string truth;         // NAME_truth.hdr
  std::string library_data;  // NAME_library.sli: the ENVI suffix for library data
  std::string library;       // NAME_library.hdr
};

// NAME.hdr, NAME.img (or another ENVI data suffix), NAME.h5 or plain NAME: truth and
// library go beside the scene.
OutputPaths output_paths(const std::string& out);

io::CubeInfo scene_info(const SceneModel& model);
io::CubeInfo truth_info(const SceneModel& model);    // ENVI Classification, uint8
io::CubeInfo library_info(const SceneModel& model);  // ENVI Spectral Library, float32

// Rows per tile so that a tile of scene and truth fits in `tile_budget_bytes` (at least 1).
std::int64_t tile_rows_for_budget(const SceneModel& model, std::int64_t tile_budget_bytes);

inline constexpr std::int64_t kTileBudgetBytes = 64ll << 20;

// Generates the scene tile by tile into the two writers (no commit) and reports progress
// after each tile. Tile rows and threads come from model.options (0 = automatic).
Status stream_scene(const SceneModel& model, io::CubeWriter& scene, io::CubeWriter& truth, const Progress& progress);

}  // namespace hb::synth
