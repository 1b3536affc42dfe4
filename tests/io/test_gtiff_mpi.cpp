// GeoTIFF outputs and the two HDF5 libraries in one process, under mpirun at 1-3 ranks.
// Each rank writes its rows of a collective HDF5 cube, of a class map and of a float
// cube as Cloud-Optimized GeoTIFFs (which loads GDAL, with its serial HDF5, through the
// dlopen boundary of io/gtiff/gdal_module.hpp); GDAL's own HDF5 driver then opens the
// collective file inside this process, and collective HDF5 I/O goes on afterwards.
// gdalinfo (a separate process) checks the grid, CRS, colour table, no-data and COG layout.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <numeric>

#include "io/cube.hpp"
#include "io/gtiff/gdal_module.hpp"
#include "mpi/comm.hpp"
#include "mpi/decomposition.hpp"

namespace hb::io {
namespace {

class SharedScratch {
 public:
  explicit SharedScratch(const mpi::Comm& comm) : comm_(comm) {
    std::string name;
    if (comm.is_root()) {
      std::string pattern = (std::filesystem::temp_directory_path() / "hb_gtiff_XXXXXX").string();
      name = ::mkdtemp(pattern.data());
    }
    path_ = comm.broadcast(name);
  }
  ~SharedScratch() {
    comm_.barrier();
    if (comm_.is_root()) std::filesystem::remove_all(path_);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(path_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  const mpi::Comm& comm_;
  std::filesystem::path path_;
};

const std::vector<double> kGeotransform{500000, 30, 0, 4100000, 0, -30};
constexpr const char* kUtm11 = "EPSG:32611";

nlohmann::json gdalinfo(const std::string& path) {
  const std::string command = "gdalinfo -json '" + path + "' 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  std::string text;
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) text.append(buffer, n);
  ::pclose(pipe);
  return nlohmann::json::parse(text, nullptr, false);
}

// Writes `values` (the whole cube) through create_cube, each rank its even share of rows,
// every rank making the same number of write calls.
template <class T>
Status write_by_ranks(const std::string& path, const CubeInfo& info, const std::vector<T>& values, const mpi::Comm& comm) {
  WriteOptions options;
  options.comm = &comm;
  auto writer = create_cube(path, info, options);
  if (!writer) return writer.error();
  const RowRange mine = mpi::even_rows(info.shape.lines, comm);
  const auto row = static_cast<std::size_t>(info.shape.samples * info.shape.bands);
  const std::span<const T> rows(values.data() + static_cast<std::size_t>(mine.begin) * row,
                                static_cast<std::size_t>(mine.rows()) * row);
  HB_TRY((*writer)->write_rows(mine, std::as_bytes(rows)));
  return (*writer)->commit();
}

class GtiffMpi : public ::testing::Test {
 protected:
  mpi::Comm world_ = mpi::Comm::world();
  SharedScratch scratch_{world_};
};

CubeInfo class_map_info() {
  CubeInfo info{{37, 23, 1}, DataType::u8, {}};
  info.meta.file_type = "ENVI Classification";
  info.meta.classes = 3;
  info.meta.class_names = {"Unclassified", "Tree", "Water"};
  info.meta.class_lookup = {0, 0, 0, 0, 160, 0, 0, 0, 255};
  info.meta.geotransform = kGeotransform;
  info.meta.spatial_ref = kUtm11;
  return info;
}

TEST_F(GtiffMpi, CollectiveHdf5AndCogInOneProcess) {
  CubeInfo cube{{41, 19, 5}, DataType::f32, {}};
  cube.meta.band_names = {"a", "b", "c", "d", "e"};
  cube.meta.geotransform = kGeotransform;
  cube.meta.spatial_ref = kUtm11;
  std::vector<float> values(static_cast<std::size_t>(cube.total_bytes() / 4));
  std::iota(values.begin(), values.end(), 0.0f);
  values[7] = std::numeric_limits<float>::quiet_NaN();
  ASSERT_TRUE(write_by_ranks(scratch_.file("before.h5"), cube, values, world_).ok());

  const CubeInfo classes = class_map_info();
  std::vector<std::uint8_t> labels(static_cast<std::size_t>(classes.shape.pixels()));
  for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<std::uint8_t>(i % 3);
  auto written = write_by_ranks(scratch_.file("classes.tif"), classes, labels, world_);
  ASSERT_TRUE(written.ok()) << written.error().message;
  written = write_by_ranks(scratch_.file("cube.tif"), cube, values, world_);
  ASSERT_TRUE(written.ok()) << written.error().message;

  // GDAL's HDF5 driver (serial HDF5) reads the collective file in this process...
  auto module = gtiff::cog_writer();
  ASSERT_TRUE(module.ok());
  char described[256] = {};
  ASSERT_EQ(module->describe(scratch_.file("before.h5").c_str(), described, sizeof described), 0) << described;
  const std::string driver = std::string(described).substr(0, std::string(described).find(' '));
  EXPECT_TRUE(driver.starts_with("HDF5") || driver == "netCDF") << described;  // both read through the serial HDF5
  // ...and collective HDF5 I/O through the MPI library goes on.
  auto reopened = open_cube(scratch_.file("before.h5"), &world_);
  ASSERT_TRUE(reopened.ok());
  std::vector<float> back(values.size());
  ASSERT_TRUE((*reopened)->read_rows({0, cube.shape.lines}, std::as_writable_bytes(std::span(back))).ok());
  EXPECT_EQ(0, std::memcmp(back.data(), values.data(), values.size() * sizeof(float)));
  ASSERT_TRUE(write_by_ranks(scratch_.file("after.h5"), cube, values, world_).ok());
  world_.barrier();

  if (world_.is_root()) {
    std::ifstream maps("/proc/self/maps");
    const std::string mapped((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
    EXPECT_NE(mapped.find("libhdf5_openmpi"), std::string::npos);
    EXPECT_NE(mapped.find("libhdf5_serial"), std::string::npos) << "GDAL's HDF5 was not loaded";
    EXPECT_EQ(scratch_.names(), (std::vector<std::string>{"after.h5", "before.h5", "classes.tif", "classes.tif.aux.xml", "cube.tif"}))
        << "staging files left behind (the class names go in GDAL's sidecar)";

    const auto c = gdalinfo(scratch_.file("classes.tif"));
    ASSERT_FALSE(c.is_discarded());
    EXPECT_EQ(c["geoTransform"].get<std::vector<double>>(), kGeotransform);
    EXPECT_NE(c["coordinateSystem"]["wkt"].get<std::string>().find("UTM zone 11N"), std::string::npos);
    EXPECT_EQ(c["metadata"]["IMAGE_STRUCTURE"]["LAYOUT"], "COG");
    const auto& band = c["bands"][0];
    EXPECT_EQ(band["type"], "UInt16");
    EXPECT_EQ(band["noDataValue"], 0);
    EXPECT_EQ(band["colorTable"]["entries"][1], (std::vector<int>{0, 160, 0, 255}));

    const auto f = gdalinfo(scratch_.file("cube.tif"));
    ASSERT_FALSE(f.is_discarded());
    EXPECT_EQ(f["bands"].size(), 5u);
    EXPECT_EQ(f["bands"][2]["description"], "c");
    EXPECT_EQ(f["bands"][0]["noDataValue"], "NaN");
    EXPECT_EQ(f["bands"][0]["type"], "Float32");
    EXPECT_EQ(f["metadata"]["IMAGE_STRUCTURE"]["LAYOUT"], "COG");
  }
}

TEST_F(GtiffMpi, GeoTiffIsWrittenOnlyNotRead) {
  auto opened = open_cube(scratch_.file("x.tif"));
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.error().kind, ErrorKind::bad_input);
}

}  // namespace
}  // namespace hb::io
