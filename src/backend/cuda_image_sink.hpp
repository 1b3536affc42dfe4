// Where a job's next scene is loaded ahead on a GPU run (io/file_image.hpp): that GPU's
// memory. Each reader thread reads 1 MiB (io::kImageStoreBytes) into one of four small
// pinned buffers of its own and copies it to the image on a stream of its own straight
// after the read, while it is still in the core's cache; the buffer is read into again
// once that copy is done. The image's memory is kept for the next scene's load when it
// is let go.
#pragma once

#include <memory>

#include "io/file_image.hpp"

namespace hb::cuda {

// Refuses images over a quarter of the GPU's free memory: a scene's statistics pass keeps
// its tiles there as well, and the steps beside the load need theirs.
std::shared_ptr<io::ImageSink> make_image_sink(int device);

}  // namespace hb::cuda
