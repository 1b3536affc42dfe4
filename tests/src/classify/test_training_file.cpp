// HDF5 training files: written and read back, streamed by rows, and refused with the
// file and dataset named when they are inconsistent with themselves or the scene.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "src/classify/training_file.hpp"

namespace hb::knn {
namespace {

class TrainingFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("hb-knn-train-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

TEST_F(TrainingFileTest, RoundTripKeepsEverything) {
  std::vector<float> features(7 * 3);
  for (std::size_t i = 0; i < features.size(); ++i) features[i] = static_cast<float>(i) * 0.5f - 3.0f;
  const std::vector<std::uint16_t> labels{1, 2, 2, 3, 1, 700, 3};
  const std::vector<std::int64_t> pixels{5, 9, 11, 40, 41, 90, 1000};
  const std::vector<double> wavelength{450.5, 550.25, 2200.0};
  const classify::ClassTable classes{{"Unclassified", "Tree", "Water", "Road"},
                                     {0, 0, 0, 0, 255, 0, 0, 0, 255, 128, 128, 128}};
  ASSERT_TRUE(classify::write_training_file(path("t.h5"), {features, 3, labels, pixels, wavelength, &classes}).ok());
  EXPECT_FALSE(std::filesystem::exists(path(".t.h5.tmp." + std::to_string(::getpid()))));

  auto read = classify::read_training_file(path("t.h5"));
  ASSERT_TRUE(read.ok()) << read.error().line();
  EXPECT_EQ(read->labels, labels);
  EXPECT_EQ(read->wavelength, wavelength);
  EXPECT_EQ(read->classes.names, classes.names);
  EXPECT_EQ(read->classes.lookup, classes.lookup);
  EXPECT_EQ(read->class_count(), 701);
  ASSERT_EQ(read->features->count(), 7);
  ASSERT_EQ(read->features->dims(), 3);
  std::vector<float> rows(3 * 3);
  ASSERT_TRUE(read->features->read(2, 3, rows.data()).ok());  // rows 2..4 only
  EXPECT_EQ(rows, std::vector<float>(features.begin() + 6, features.begin() + 15));
}

TEST_F(TrainingFileTest, ALabelZeroIsRefusedNamingTheDataset) {
  const std::vector<float> features(2 * 2, 1.0f);
  const std::vector<std::uint16_t> labels{1, 0};
  ASSERT_TRUE(classify::write_training_file(path("zero.h5"), {features, 2, labels, {}, {}, nullptr}).ok());
  auto read = classify::read_training_file(path("zero.h5"));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().kind, ErrorKind::bad_input);
  EXPECT_EQ(read.error().file, path("zero.h5"));
  EXPECT_EQ(read.error().field, "/train/labels");
}

TEST_F(TrainingFileTest, MissingOrForeignFilesAreClearErrors) {
  auto missing = classify::read_training_file(path("nope.h5"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::io);
  std::ofstream(path("text.h5")) << "not hdf5";
  EXPECT_FALSE(classify::read_training_file(path("text.h5")).ok());
}

TEST_F(TrainingFileTest, FeaturesMustMatchTheScene) {
  const std::vector<float> features(4 * 3, 2.0f);
  const std::vector<std::uint16_t> labels{1, 1, 2, 2};
  const std::vector<double> wavelength{400, 500, 600};
  ASSERT_TRUE(classify::write_training_file(path("w.h5"), {features, 3, labels, {}, wavelength, nullptr}).ok());
  auto set = classify::read_training_file(path("w.h5"));
  ASSERT_TRUE(set.ok());

  classify::BandSelection two_bands{{0, 1}, {}, "", 2};
  const auto dims = classify::check_compatible(*set, two_bands, "scene.hdr");
  ASSERT_FALSE(dims.ok());
  EXPECT_EQ(dims.error().field, "features");
  EXPECT_NE(dims.error().message.find("scene.hdr"), std::string::npos);

  classify::BandSelection shifted{{0, 1, 2}, {400, 510, 600}, "Nanometers", 3};
  const auto wl = classify::check_compatible(*set, shifted, "scene.hdr");
  ASSERT_FALSE(wl.ok());
  EXPECT_EQ(wl.error().field, "wavelength");

  classify::BandSelection unknown{{0, 1, 2}, {}, "", 3};  // the scene records no wavelengths: only counts are checked
  EXPECT_TRUE(classify::check_compatible(*set, unknown, "scene.hdr").ok());
  classify::BandSelection same{{0, 1, 2}, {400, 500, 600}, "Nanometers", 3};
  EXPECT_TRUE(classify::check_compatible(*set, same, "scene.hdr").ok());
}

}  // namespace
}  // namespace hb::knn
