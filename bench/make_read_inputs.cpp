// The inputs of bench/read_formats.sh without Python: from an int16 BIP cube (hyperbatch
// synth), the same scene as ENVI float32 (envi.img), as an EMIT radiance granule
// (granule.nc) and as an AVIRIS-Classic delivery (int16 DN + .gain), laid out as the
// Python writers of the tests lay them out (tests/io/archive_products.py and
// emit_granules.py; tests/bench/test_make_read_inputs.py holds the two to the same values).
// Granule chunks are shuffled and deflated here, on every core, with zlib's compress2 at
// level 4: the bytes HDF5's own filters write, without one core compressing gigabytes.
//   bench_make_read_inputs DN.hdr OUTPUT_FOLDER
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <vector>

#include "io/atomic_file.hpp"
#include "io/cube.hpp"
#include "io/envi_cube.hpp"
#include "io/hdf5_attributes.hpp"
#include "io/hdf5_handle.hpp"
#include "io/text_file.hpp"
#include "src/base/parallel_for.hpp"

namespace {

using namespace hb;
using Bytes = std::vector<std::byte>;

constexpr const char* kFlightline = "f080611t01p00r07";  // archive_products.FLIGHTLINE
constexpr hsize_t kChunkRows = 16;
constexpr int kDeflateLevel = 4;
constexpr float kFill = -9999.0f;
constexpr const char* kWkt =
    "GEOGCS[\"WGS 84\",DATUM[\"WGS_1984\",SPHEROID[\"WGS 84\",6378137,298.257223563]],"
    "PRIMEM[\"Greenwich\",0],UNIT[\"degree\",0.0174532925199433],AUTHORITY[\"EPSG\",\"4326\"]]";
constexpr double kGeotransform[6] = {-118.5, 0.000542232, 0.0, 34.2, 0.0, -0.000542232};

// archive_products.classic_factors: 300 for the first half, 600 then 1200 from 3/4 on.
std::vector<double> classic_factors(std::int64_t bands) {
  std::vector<double> factors(static_cast<std::size_t>(bands), 300.0);
  for (auto b = bands / 2; b < bands; ++b) factors[static_cast<std::size_t>(b)] = b >= 3 * bands / 4 ? 1200.0 : 600.0;
  return factors;
}

// emit_granules.band_parameters: numpy's linspace (i * step + start, the end exact) in float32.
struct BandParameters {
  std::vector<float> wavelengths, fwhm, good;
};
BandParameters band_parameters(std::int64_t bands) {
  BandParameters p;
  const double step = bands > 1 ? (2493.0 - 381.0) / static_cast<double>(bands - 1) : 0.0;
  for (std::int64_t b = 0; b < bands; ++b)
    p.wavelengths.push_back(
        static_cast<float>(b == bands - 1 && bands > 1 ? 2493.0 : static_cast<double>(b) * step + 381.0));
  p.fwhm.assign(static_cast<std::size_t>(bands), 8.5f);
  p.good.assign(static_cast<std::size_t>(bands), 1.0f);
  for (const auto b : {std::int64_t{3}, std::int64_t{4}, bands - 2})
    if (b >= 0 && b < bands) p.good[static_cast<std::size_t>(b)] = 0.0f;
  return p;
}

// HDF5's shuffle filter: byte k of element i goes to k * n + i.
void shuffle(const std::byte* in, std::byte* out, std::size_t elements, std::size_t size) {
  for (std::size_t i = 0; i < elements; ++i)
    for (std::size_t k = 0; k < size; ++k) out[k * elements + i] = in[i * size + k];
}

// One chunk as HDF5's shuffle + deflate pipeline stores it.
Bytes stored_chunk(const float* values, std::size_t count) {
  Bytes shuffled(count * sizeof(float));
  shuffle(reinterpret_cast<const std::byte*>(values), shuffled.data(), count, sizeof(float));
  uLongf size = compressBound(static_cast<uLong>(shuffled.size()));
  Bytes out(size);
  if (compress2(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(shuffled.data()),
                static_cast<uLong>(shuffled.size()), kDeflateLevel) != Z_OK)
    return {};
  out.resize(size);
  return out;
}

class Granule {
 public:
  Granule(const std::string& path, const io::CubeShape& s) : final_(path), file_(create_temporary()) {
    const hsize_t lines = static_cast<hsize_t>(s.lines), samples = static_cast<hsize_t>(s.samples),
                  bands = static_cast<hsize_t>(s.bands);
    chunk_ = {std::min(kChunkRows, lines), samples, bands};
    io::h5::PropertyList dcpl(H5Pcreate(H5P_DATASET_CREATE));
    H5Pset_chunk(dcpl.get(), 3, chunk_.data());
    H5Pset_shuffle(dcpl.get());
    H5Pset_deflate(dcpl.get(), kDeflateLevel);
    H5Pset_fill_value(dcpl.get(), H5T_NATIVE_FLOAT, &kFill);
    radiance_ = dataset(file_.get(), "radiance", H5T_IEEE_F32LE, {lines, samples, bands}, dcpl.get());
    io::h5::Dataspace one(H5Screate_simple(1, std::array<hsize_t, 1>{1}.data(), nullptr));
    io::h5::Attribute fill(
        H5Acreate2(radiance_.get(), "_FillValue", H5T_IEEE_F32LE, one.get(), H5P_DEFAULT, H5P_DEFAULT));
    ok_ = fill && H5Awrite(fill.get(), H5T_NATIVE_FLOAT, &kFill) >= 0;
    const io::h5::Attributes root(file_.get(), path, "/");
    ok_ = ok_ && root.put("geotransform", std::span<const double>(kGeotransform)).ok() &&
          text(file_.get(), "spatial_ref", kWkt) && text(file_.get(), "title", "EMIT test radiance");
    write_band_parameters(band_parameters(s.bands));
    write_location(lines, samples);
  }

  hsize_t chunk_rows() const { return chunk_[0]; }
  bool ok() const { return ok_ && radiance_.valid(); }

  // Rows [row, row + n) of physical values, n a multiple of the chunk rows except at the end.
  void write_rows(hsize_t row, const float* values, hsize_t rows) {
    const std::size_t per_chunk = chunk_[0] * chunk_[1] * chunk_[2];
    const auto chunks = static_cast<std::int64_t>((rows + chunk_[0] - 1) / chunk_[0]);
    std::vector<Bytes> stored(static_cast<std::size_t>(chunks));
    parallel_for(chunks, 1, [&](std::int64_t begin, std::int64_t end) {
      std::vector<float> padded(per_chunk);
      for (auto c = begin; c < end; ++c) {  // the edge chunk padded with the fill value, as HDF5 does
        const std::size_t from = static_cast<std::size_t>(c) * per_chunk;
        const std::size_t have = std::min(per_chunk, static_cast<std::size_t>(rows * chunk_[1] * chunk_[2]) - from);
        std::fill(std::copy(values + from, values + from + have, padded.begin()), padded.end(), kFill);
        stored[static_cast<std::size_t>(c)] = stored_chunk(padded.data(), per_chunk);
      }
    });
    for (std::size_t c = 0; c < stored.size(); ++c) {
      const std::array<hsize_t, 3> at{row + c * chunk_[0], 0, 0};
      ok_ = ok_ && !stored[c].empty() &&
            H5Dwrite_chunk(radiance_.get(), H5P_DEFAULT, 0, at.data(), stored[c].size(), stored[c].data()) >= 0;
    }
  }

  Status commit() {
    if (!ok() || !radiance_.reset() || !file_.reset())
      return io_error(final_.final_path(), io::h5::hdf5_error_detail());
    return final_.commit();
  }

 private:
  hid_t create_temporary() const {
    io::h5::silence_hdf5_errors();
    return H5Fcreate(final_.temporary().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  }

  static io::h5::Dataset dataset(hid_t where, const char* name, hid_t type, std::vector<hsize_t> dims,
                                 hid_t dcpl = H5P_DEFAULT) {
    io::h5::Dataspace space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr));
    return io::h5::Dataset(H5Dcreate2(where, name, type, space.get(), H5P_DEFAULT, dcpl, H5P_DEFAULT));
  }

  // netCDF's text attributes: fixed-length, null-terminated ASCII, scalar.
  static bool text(hid_t where, const char* name, const std::string& value) {
    io::h5::Datatype type(H5Tcopy(H5T_C_S1));
    H5Tset_size(type.get(), value.size());
    io::h5::Dataspace scalar(H5Screate(H5S_SCALAR));
    io::h5::Attribute attr(H5Acreate2(where, name, type.get(), scalar.get(), H5P_DEFAULT, H5P_DEFAULT));
    return attr && H5Awrite(attr.get(), type.get(), value.data()) >= 0;
  }

  void write_band_parameters(const BandParameters& p) {
    const hid_t group = H5Gcreate2(file_.get(), "sensor_band_parameters", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    for (const auto& [name, values] : {std::pair{"wavelengths", &p.wavelengths}, std::pair{"fwhm", &p.fwhm},
                                       std::pair{"good_wavelengths", &p.good}}) {
      auto set = dataset(group, name, H5T_IEEE_F32LE, {values->size()});
      ok_ = ok_ && set && H5Dwrite(set.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values->data()) >= 0;
    }
    ok_ = ok_ && group >= 0 && H5Gclose(group) >= 0;
  }

  // The geolocation arrays, zeros as the Python writer stores them (here: unwritten,
  // read back as HDF5's fill value 0); the reader only lists them.
  void write_location(hsize_t lines, hsize_t samples) {
    const hid_t group = H5Gcreate2(file_.get(), "location", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    for (const char* name : {"lat", "lon", "elev"}) ok_ = ok_ && dataset(group, name, H5T_IEEE_F64LE, {lines, samples});
    for (const char* name : {"glt_x", "glt_y"})
      ok_ = ok_ && dataset(group, name, H5T_STD_I32LE, {lines + 2, samples + 2});
    ok_ = ok_ && group >= 0 && H5Gclose(group) >= 0;
  }

  io::AtomicPath final_;
  io::h5::File file_;
  io::h5::Dataset radiance_;
  std::array<hsize_t, 3> chunk_{};
  bool ok_ = true;
};

Status write_gain(const std::string& path, const std::vector<double>& factors) {
  std::string text;
  char line[64];
  for (std::size_t b = 0; b < factors.size(); ++b) {
    std::snprintf(line, sizeof line, "%10.3f %4d\n", factors[b], static_cast<int>(b + 1));
    text += line;
  }
  return io::write_text_file(path, text);
}

Status make_inputs(const std::string& dn_path, const std::string& folder) {
  auto dn = io::open_stored_cube(dn_path);
  if (!dn) return dn.error();
  const io::CubeShape shape = (*dn)->info().shape;
  if ((*dn)->info().type != DataType::i16) return bad_input(dn_path, "data type", "expected int16 DN");
  io::CubeInfo physical{shape, DataType::f32, {}}, classic{shape, DataType::i16, {}};
  auto envi = io::create_envi_cube(folder + "/envi.img", physical, Interleave::bip, ByteOrder::little);
  if (!envi) return envi.error();
  const std::string image = folder + "/" + kFlightline + "rdn_c_sc01_ort_img";
  auto delivery = io::create_envi_cube(image, classic, Interleave::bip, ByteOrder::little);
  if (!delivery) return delivery.error();
  Granule granule(folder + "/granule.nc", shape);
  const auto factors = classic_factors(shape.bands);

  const auto pixels_per_row = static_cast<std::size_t>(shape.samples);
  const auto bands = static_cast<std::size_t>(shape.bands);
  const auto step = static_cast<std::int64_t>(granule.chunk_rows()) * std::max(1, std::min(host_threads(), 32));
  std::vector<std::int16_t> raw(static_cast<std::size_t>(std::min(step, shape.lines)) * pixels_per_row * bands);
  std::vector<float> values(raw.size());
  for (std::int64_t r0 = 0; r0 < shape.lines; r0 += step) {
    const RowRange rows{r0, std::min(shape.lines, r0 + step)};
    const std::size_t count = static_cast<std::size_t>(rows.rows()) * pixels_per_row * bands;
    HB_TRY((*dn)->read_rows(rows, std::as_writable_bytes(std::span(raw.data(), count))));
    parallel_for(static_cast<std::int64_t>(count / bands), 4096, [&](std::int64_t begin, std::int64_t end) {
      for (auto i = static_cast<std::size_t>(begin) * bands; i < static_cast<std::size_t>(end) * bands; ++i)
        values[i] = static_cast<float>(static_cast<double>(raw[i]) / factors[i % bands]);
    });
    HB_TRY((*envi)->write_rows(rows, std::as_bytes(std::span(values.data(), count))));
    HB_TRY((*delivery)->write_rows(rows, std::as_bytes(std::span(raw.data(), count))));
    granule.write_rows(static_cast<hsize_t>(r0), values.data(), static_cast<hsize_t>(rows.rows()));
  }
  HB_TRY(write_gain(folder + "/" + kFlightline + "rdn_c.gain", factors));
  HB_TRY((*envi)->commit());
  HB_TRY((*delivery)->commit());
  return granule.commit();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: bench_make_read_inputs DN.hdr OUTPUT_FOLDER\n");
    return 2;
  }
  const Status made = make_inputs(argv[1], argv[2]);
  if (!made) {
    std::fprintf(stderr, "%s\n", made.error().line().c_str());
    return made.error().exit_code();
  }
  return 0;
}
