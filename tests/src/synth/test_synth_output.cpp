// What write_synthetic_scene hands to the writers: header metadata, tiling and progress
// (checked through an in-memory writer), option validation, and the files themselves.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "io/cube.hpp"
#include "src/synth/outputs.hpp"

namespace hb::synth {
namespace {

SynthOptions options(std::int64_t lines = 30, std::int64_t samples = 20, std::int64_t bands = 224) {
  SynthOptions o;
  o.lines = lines;
  o.samples = samples;
  o.bands = bands;
  o.classes = 4;
  o.fill_border = 0.1;
  return o;
}

TEST(SynthOutput, SceneHeaderDescribesAnAvirisReflectanceProduct) {
  SynthOptions o = options();
  o.interleave = Interleave::bil;
  const SceneModel model(o);
  const io::CubeInfo info = scene_info(model);
  EXPECT_EQ(info.shape, (io::CubeShape{30, 20, 224}));
  EXPECT_EQ(info.type, DataType::i16);
  EXPECT_EQ(info.meta.file_type, "ENVI Standard");
  EXPECT_EQ(info.meta.wavelength_units, "Nanometers");
  ASSERT_EQ(info.meta.wavelength.size(), 224u);
  ASSERT_EQ(info.meta.fwhm.size(), 224u);
  ASSERT_EQ(info.meta.band_names.size(), 224u);
  EXPECT_EQ(info.meta.band_names[0], "Band 1 (365.9 nm)");
  ASSERT_TRUE(info.meta.data_ignore_value.has_value());
  EXPECT_EQ(*info.meta.data_ignore_value, -9999.0);
  EXPECT_EQ(info.meta.envi_interleave, Interleave::bil);
  EXPECT_EQ(info.meta.envi_byte_order, ByteOrder::little);
  EXPECT_NE(info.meta.description.find("seed 1"), std::string::npos);
}

TEST(SynthOutput, TruthIsAnEnviClassificationWithUnclassifiedFirst) {
  const SceneModel model(options());
  const io::CubeInfo info = truth_info(model);
  EXPECT_EQ(info.shape, (io::CubeShape{30, 20, 1}));
  EXPECT_EQ(info.type, DataType::u8);
  EXPECT_EQ(info.meta.file_type, "ENVI Classification");
  EXPECT_EQ(info.meta.classes, 5);
  ASSERT_EQ(info.meta.class_names.size(), 5u);
  EXPECT_EQ(info.meta.class_names[0], "Unclassified");
  EXPECT_EQ(info.meta.class_names[1], "Green vegetation");
  ASSERT_EQ(info.meta.class_lookup.size(), 15u);
  EXPECT_EQ(info.meta.class_lookup[0] + info.meta.class_lookup[1] + info.meta.class_lookup[2], 0);
}

TEST(SynthOutput, LibraryIsOneSpectrumPerLine) {
  const SceneModel model(options());
  const io::CubeInfo info = library_info(model);
  EXPECT_EQ(info.shape, (io::CubeShape{4, 224, 1}));
  EXPECT_EQ(info.type, DataType::f32);
  EXPECT_EQ(info.meta.file_type, "ENVI Spectral Library");
  EXPECT_EQ(info.meta.wavelength.size(), 224u);
  ASSERT_EQ(info.meta.spectra_names.size(), 4u);
  EXPECT_EQ(info.meta.spectra_names[2], "Water");
}

TEST(SynthOutput, TruthAndLibraryGoBesideTheSceneWhateverItIsCalled) {
  const OutputPaths from_header = output_paths("out/scene.hdr");
  EXPECT_EQ(from_header.scene_target, "out/scene.hdr");
  EXPECT_EQ(from_header.scene, "out/scene.hdr");
  EXPECT_EQ(from_header.truth, "out/scene_truth.hdr");
  EXPECT_EQ(from_header.library_data, "out/scene_library.sli");
  EXPECT_EQ(from_header.library, "out/scene_library.hdr");
  const OutputPaths from_data = output_paths("out/scene.IMG");
  EXPECT_EQ(from_data.scene_target, "out/scene.IMG");
  EXPECT_EQ(from_data.scene, "out/scene.hdr");
  EXPECT_EQ(from_data.truth, "out/scene_truth.hdr");
  const OutputPaths bare = output_paths("out/scene");
  EXPECT_EQ(bare.scene_target, "out/scene.hdr");
  EXPECT_EQ(bare.library, "out/scene_library.hdr");
  const OutputPaths dotted = output_paths("out/run.v2");
  EXPECT_EQ(dotted.scene, "out/run.v2.hdr");
  const OutputPaths hdf5 = output_paths("out/scene.h5");
  EXPECT_EQ(hdf5.scene_target, "out/scene.h5");
  EXPECT_EQ(hdf5.scene, "out/scene.h5");
  EXPECT_EQ(hdf5.truth, "out/scene_truth.hdr");
}

// An in-memory writer: records what the streaming loop hands over.
class MemoryWriter final : public io::CubeWriter {
 public:
  explicit MemoryWriter(io::CubeInfo info) : info_(std::move(info)) {}
  const io::CubeInfo& info() const override { return info_; }
  Status write_rows(RowRange rows, std::span<const std::byte> data) override {
    EXPECT_EQ(static_cast<std::int64_t>(data.size()), rows.rows() * info_.bytes_per_row());
    ranges.push_back(rows);
    bytes.insert(bytes.end(), data.begin(), data.end());
    return {};
  }
  Status commit() override { return Error{ErrorKind::internal, {}, {}, "the loop must not commit"}; }

  std::vector<RowRange> ranges;
  std::vector<std::byte> bytes;

 private:
  io::CubeInfo info_;
};

TEST(SynthOutput, StreamingWritesEveryRowOnceInOrderAndReportsProgress) {
  SynthOptions o = options(23, 11, 17);
  o.tile_rows = 5;
  o.threads = 2;
  const SceneModel model(o);
  MemoryWriter scene(scene_info(model));
  MemoryWriter truth(truth_info(model));
  std::vector<std::int64_t> reported;
  ASSERT_TRUE(stream_scene(model, scene, truth, [&](std::int64_t done, std::int64_t total) {
                EXPECT_EQ(total, 23);
                reported.push_back(done);
              }).ok());
  EXPECT_EQ(reported, (std::vector<std::int64_t>{5, 10, 15, 20, 23}));
  ASSERT_EQ(scene.ranges.size(), 5u);
  EXPECT_EQ(scene.ranges.back(), (RowRange{20, 23}));
  EXPECT_EQ(truth.ranges, scene.ranges);

  std::vector<std::int16_t> pixels(23 * 11 * 17);
  std::vector<std::uint8_t> classes(23 * 11);
  generate_rows(model, {0, 23}, pixels, classes);
  ASSERT_EQ(scene.bytes.size(), pixels.size() * sizeof(std::int16_t));
  EXPECT_EQ(std::memcmp(scene.bytes.data(), pixels.data(), scene.bytes.size()), 0);
  ASSERT_EQ(truth.bytes.size(), classes.size());
  EXPECT_EQ(std::memcmp(truth.bytes.data(), classes.data(), classes.size()), 0);
}

TEST(SynthOutput, TileRowsComeFromTheMemoryBudget) {
  const SceneModel model(options(1000, 677, 224));
  const std::int64_t row_bytes = 677 * (224 * 2 + 1);
  EXPECT_EQ(tile_rows_for_budget(model, kTileBudgetBytes), kTileBudgetBytes / row_bytes);
  EXPECT_EQ(tile_rows_for_budget(model, 1), 1);
  EXPECT_EQ(tile_rows_for_budget(model, 1ll << 40), 1000);
}

class SynthFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("hb_synth_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  bool empty() const { return std::filesystem::is_empty(dir_); }

  std::filesystem::path dir_;
};

TEST_F(SynthFiles, BadOptionsNameTheFieldAndWriteNothing) {
  struct Case {
    const char* field;
    void (*spoil)(SynthOptions&);
  };
  const Case cases[] = {
      {"lines", [](SynthOptions& o) { o.lines = 0; }},
      {"samples", [](SynthOptions& o) { o.samples = -3; }},
      {"bands", [](SynthOptions& o) { o.bands = 0; }},
      {"classes", [](SynthOptions& o) { o.classes = 256; }},
      {"fill_border", [](SynthOptions& o) { o.fill_border = 1.0; }},
      {"tile_rows", [](SynthOptions& o) { o.tile_rows = -1; }},
      {"threads", [](SynthOptions& o) { o.threads = -2; }},
  };
  for (const Case& c : cases) {
    SynthOptions o = options();
    c.spoil(o);
    const auto written = write_synthetic_scene(path("scene.hdr"), o);
    ASSERT_FALSE(written.ok()) << c.field;
    EXPECT_EQ(written.error().field, c.field);
    EXPECT_EQ(written.error().file, path("scene.hdr"));
    EXPECT_TRUE(empty()) << c.field;
  }
}

// Needs the project's ENVI writer and reader; skipped while they are not available.
TEST_F(SynthFiles, WrittenSceneReadsBackAsGenerated) {
  SynthOptions o = options(19, 13, 24);
  o.interleave = Interleave::bsq;
  o.tile_rows = 4;
  const auto written = write_synthetic_scene(path("scene.hdr"), o);
  if (!written.ok() && written.error().message == "not implemented")
    GTEST_SKIP() << "ENVI writer not available: " << written.error().line();
  ASSERT_TRUE(written.ok()) << written.error().line();
  EXPECT_EQ(written->scene, path("scene.hdr"));
  EXPECT_EQ(written->truth, path("scene_truth.hdr"));
  EXPECT_EQ(written->library, path("scene_library.hdr"));
  EXPECT_TRUE(std::filesystem::exists(path("scene.img")));
  EXPECT_TRUE(std::filesystem::exists(path("scene_truth.img")));
  EXPECT_TRUE(std::filesystem::exists(path("scene_library.sli")));

  const SceneModel model(o);
  std::vector<std::int16_t> pixels(19 * 13 * 24);
  std::vector<std::uint8_t> classes(19 * 13);
  generate_rows(model, {0, 19}, pixels, classes);
  auto scene = io::open_cube(written->scene);
  if (!scene.ok() && scene.error().message == "not implemented") GTEST_SKIP() << "ENVI reader not available";
  ASSERT_TRUE(scene.ok()) << scene.error().line();
  EXPECT_EQ((*scene)->info().shape, (io::CubeShape{19, 13, 24}));
  std::vector<std::int16_t> read(pixels.size());
  ASSERT_TRUE((*scene)->read_rows({0, 19}, std::as_writable_bytes(std::span(read))).ok());
  EXPECT_EQ(read, pixels);

  auto truth = io::open_cube(written->truth);
  ASSERT_TRUE(truth.ok()) << truth.error().line();
  EXPECT_EQ((*truth)->info().meta.file_type, "ENVI Classification");
  std::vector<std::uint8_t> read_truth(classes.size());
  ASSERT_TRUE((*truth)->read_rows({0, 19}, std::as_writable_bytes(std::span(read_truth))).ok());
  EXPECT_EQ(read_truth, classes);

  auto library = io::open_cube(written->library);
  ASSERT_TRUE(library.ok()) << library.error().line();
  const auto expected = material_library(model);
  std::vector<float> spectra(expected.size());
  ASSERT_TRUE((*library)->read_rows({0, 4}, std::as_writable_bytes(std::span(spectra))).ok());
  EXPECT_EQ(spectra, expected);
}

}  // namespace
}  // namespace hb::synth
