#include "src/knn/training_chunks.hpp"

namespace hb::knn {
namespace {

// One rank's whole training set, chunk by chunk (read from its source when not cached).
class PreparedChunks final : public TrainingChunks {
 public:
  explicit PreparedChunks(const PreparedTraining& prepared) : prepared_(prepared) {}
  int steps() const override { return static_cast<int>(prepared_.chunk_count()); }
  Result<TrainingChunk> at(int step) override { return prepared_.chunk(step); }
  std::string_view mode_name() const override { return prepared_.cached() ? "in memory" : "streamed"; }

 private:
  const PreparedTraining& prepared_;
};

}  // namespace

std::unique_ptr<TrainingChunks> prepared_chunks(const PreparedTraining& prepared) {
  return std::make_unique<PreparedChunks>(prepared);
}

}  // namespace hb::knn
