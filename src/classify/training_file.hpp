// HDF5 training files, a format of their own (not a cube):
//   /train/features     [n, bands] float32   feature rows
//   /train/labels       [n] uint16           class ids, 1..65535 (0 is "unlabelled": refused)
//   /train/class_names  [classes] strings    optional; index = class id, 0 = "Unclassified"
//   /train/class_lookup [classes, 3] int     optional r, g, b per class
//   /train/wavelength   [bands] float64      optional band centres, checked against the scene
//   /train/pixels       [n] int64            optional scene pixel of each row (written by
//                                            `knn --save-training`, ignored on reading)
// Features stay in the file and stream through the search chunk by chunk.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/classify/training.hpp"

namespace hb::classify {

Result<TrainingSet> read_training_file(const std::string& path);

struct TrainingFileContents {
  std::span<const float> features;  // [labels.size(), dims]
  std::int64_t dims = 0;
  std::span<const std::uint16_t> labels;
  std::span<const std::int64_t> pixels;  // may be empty
  std::span<const double> wavelength;    // may be empty
  const ClassTable* classes = nullptr;   // may be null
};

// Written under a temporary name and renamed: the file is complete or absent.
Status write_training_file(const std::string& path, const TrainingFileContents& contents);

}  // namespace hb::classify
