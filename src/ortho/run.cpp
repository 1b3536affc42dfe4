#include "src/ortho/run.hpp"

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "io/cube.hpp"
#include "io/file_identity.hpp"
#include "io/glt/glt.hpp"
#include "io/hdf5_cube.hpp"
#include "io/hdf5_metadata.hpp"
#include "mpi/agree.hpp"
#include "mpi/decomposition.hpp"
#include "src/base/stopwatch.hpp"
#include "src/ortho/gather.hpp"
#include "src/ortho/grid_output.hpp"

namespace hb::ortho {
namespace {

Status check_files(const OrthoJob& job) {
  io::FilePlan plan;
  plan.read_cube("product", job.product);
  if (io::format_from_path(job.glt) == io::CubeFormat::envi) plan.read_cube("--glt", job.glt);
  else plan.read_file("--glt", job.glt);
  plan.write_cube("-o", job.output);
  return plan.check();
}

// `dataset` of an HDF5 product as a cube, its attributes as its metadata.
Result<std::unique_ptr<io::Cube>> open_dataset(const std::string& path, const std::string& dataset) {
  auto file = io::open_hdf5_file(path, nullptr);
  if (!file) return file.error();
  io::h5::Dataset data(H5Dopen2(file->get(), dataset.c_str(), H5P_DEFAULT));
  if (!data) return bad_input(path, dataset, "no such dataset");
  io::CubeInfo info;
  auto shape = io::read_hdf5_shape(data.get(), path, dataset);
  if (!shape) return shape.error();
  info.shape = *shape;
  auto type = io::read_hdf5_type(data.get(), path, dataset);
  if (!type) return type.error();
  info.type = *type;
  auto meta = io::h5::read_metadata(data.get(), path);
  if (!meta) return meta.error();
  info.meta = std::move(*meta);
  return io::hdf5_dataset_cube(path, dataset, std::move(info), std::move(*file), std::move(data), nullptr);
}

// The product must be the scene the GLT was made for, when the GLT says which.
Status check_source_shape(const io::Glt& glt, const io::CubeShape& product, const std::string& product_path) {
  const auto source = glt.source_shape();
  if (!source) return {};
  if (source->lines != product.lines || source->samples != product.samples)
    return bad_input(product_path, "lines",
                     fmt::format("{} x {} (lines x samples) does not match the {} x {} scene of the GLT {}",
                                 product.lines, product.samples, source->lines, source->samples, glt.path()));
  return {};
}

// Every entry of `rows` (grid rows starting at first_row) inside the product, with both
// indices or neither.
Status check_entries(const io::Glt& glt, const io::GltRows& rows, std::int64_t first_row, const io::CubeShape& product) {
  const std::int64_t samples = glt.grid().samples;
  for (std::size_t p = 0; p < rows.sample.size(); ++p) {
    const std::int64_t s = rows.sample[p], l = rows.line[p];
    const bool sample_ok = s < product.samples && (s >= 0 || l < 0);
    const bool line_ok = l < product.lines && (l >= 0 || s < 0);
    if (sample_ok && line_ok) continue;
    const std::string pixel = fmt::format("grid pixel (line {}, sample {})", first_row + static_cast<std::int64_t>(p) / samples + 1,
                                          static_cast<std::int64_t>(p) % samples + 1);
    if ((s < 0) != (l < 0))
      return bad_input(glt.path(), s < 0 ? glt.sample_field() : glt.line_field(),
                       pixel + " has one index 0 (no data) and the other not");
    return bad_input(glt.path(), sample_ok ? glt.line_field() : glt.sample_field(),
                     fmt::format("{} points at {} {}, outside the product's {} {}", pixel, sample_ok ? "line" : "sample",
                                 (sample_ok ? l : s) + 1, sample_ok ? product.lines : product.samples,
                                 sample_ok ? "lines" : "samples"));
  }
  return {};
}

// The product rows that grid pixels [first, first + pixels) of `glt` point at (empty when none).
RowRange source_rows(const io::GltRows& glt, std::int64_t first, std::int64_t pixels) {
  std::int64_t low = -1, high = -1;
  for (std::int64_t p = first; p < first + pixels; ++p) {
    const std::int64_t l = glt.line[static_cast<std::size_t>(p)];
    if (l < 0) continue;
    low = low < 0 ? l : std::min(low, l);
    high = std::max(high, l);
  }
  return low < 0 ? RowRange{0, 0} : RowRange{low, high + 1};
}

struct Pass {
  const io::Cube& product;
  const io::Glt& glt;
  Gatherer& gatherer;
  io::CubeWriter* writer = nullptr;
  std::vector<std::byte> fill;
  io::GltRows entries;        // this rank's block of grid rows
  std::int64_t block_begin = 0;
  io::Tile source;
  std::vector<std::byte> out;

  std::int64_t source_budget = 0;  // bytes of product rows one gather may hold

  // Gathers grid rows `rows` and writes them in one call (collective for HDF5).
  Status tile(RowRange rows, OrthoResult& result) {
    const std::int64_t samples = glt.grid().samples;
    out.resize(static_cast<std::size_t>(rows.rows() * samples * product.info().bytes_per_pixel()));
    HB_TRY(gather_rows(rows, rows.begin));
    const std::int64_t first = (rows.begin - block_begin) * samples;
    for (std::int64_t p = first; p < first + rows.rows() * samples; ++p)
      (entries.line[static_cast<std::size_t>(p)] < 0 ? result.empty : result.filled)++;
    return writer->write_rows(rows, out);
  }

  // Fills the part of `out` (which starts at grid row out_begin) for grid rows `rows`,
  // halving them while the product rows they point at exceed the budget (grids at an
  // angle to the flight line point at many product rows per grid row).
  Status gather_rows(RowRange rows, std::int64_t out_begin) {
    const auto& info = product.info();
    const std::int64_t samples = glt.grid().samples;
    const std::int64_t first = (rows.begin - block_begin) * samples, pixels = rows.rows() * samples;
    const RowRange from = source_rows(entries, first, pixels);
    if (from.rows() * info.bytes_per_row() > source_budget && rows.rows() > 1) {
      const std::int64_t middle = rows.begin + rows.rows() / 2;
      HB_TRY(gather_rows({rows.begin, middle}, out_begin));
      return gather_rows({middle, rows.end}, out_begin);
    }
    if (!from.empty()) HB_TRY(product.read_tile_into(source, from, 0, gatherer.host_allocator()));
    const GatherTile t{from.empty() ? std::span<const std::byte>{} : std::span<const std::byte>(source.bytes()), from,
                       info.shape.samples, info.bytes_per_pixel(), &entries, first, pixels, fill};
    const auto offset = static_cast<std::size_t>((rows.begin - out_begin) * samples * info.bytes_per_pixel());
    return gatherer.gather(t, std::span<std::byte>(out).subspan(offset, static_cast<std::size_t>(pixels * info.bytes_per_pixel())));
  }
};

}  // namespace

Result<OrthoResult> run(const OrthoJob& job, const ProgressFn& progress) {
  const Stopwatch total;
  HB_TRY(check_files(job));
  const mpi::Comm ranks = job.comm != nullptr ? *job.comm : mpi::Comm::world();
  // Each rank reads the product and the GLT on its own (rows it needs, no collective reads).
  auto product = job.dataset.empty() ? io::open_cube(job.product) : open_dataset(job.product, job.dataset);
  HB_TRY(mpi::agree(product ? Status{} : Status{product.error()}, ranks));
  auto glt = io::open_glt(job.glt);
  HB_TRY(mpi::agree(glt ? Status{} : Status{glt.error()}, ranks));
  const io::CubeInfo& info = (*product)->info();
  HB_TRY(check_source_shape(**glt, info.shape, job.product));
  const io::GltGrid& grid = (*glt)->grid();
  auto gatherer = make_gatherer(job.backend);
  HB_TRY(mpi::agree(gatherer ? Status{} : Status{gatherer.error()}, ranks));

  const io::CubeInfo out_info = grid_output_info(info, grid, job.described_as.empty() ? job.product : job.described_as);
  const std::int64_t tile_rows = job.tile_rows > 0 ? job.tile_rows
                                                   : std::max<std::int64_t>(1, job.tile_budget_bytes / std::max<std::int64_t>(1, out_info.bytes_per_row()));
  const auto tiles = mpi::rank_row_tiles(grid.lines, tile_rows, ranks);
  Pass pass{**product, **glt, **gatherer, nullptr, fill_pixel(out_info), {}, tiles.empty() ? 0 : tiles.front().begin,
            {}, {}, 2 * job.tile_budget_bytes};
  // Every entry of this rank's rows is checked before any output exists.
  Status read = {};
  if (!tiles.empty()) {
    const RowRange block{tiles.front().begin, tiles.back().end};
    read = (*glt)->read_rows(block, pass.entries);
    if (read) read = check_entries(**glt, pass.entries, block.begin, info.shape);
  }
  HB_TRY(mpi::agree(read, ranks));

  io::WriteOptions options;
  options.comm = &ranks;
  auto writer = io::create_cube(job.output, out_info, options);
  HB_TRY(mpi::agree(writer ? Status{} : Status{writer.error()}, ranks));
  if (job.finish) (*writer)->finish_before_commit(job.finish);
  pass.writer = writer->get();
  spdlog::info("ortho: {} x {} grid from {} on {}, {} rows per tile", grid.lines, grid.samples, job.glt,
               (*gatherer)->backend_name(), tile_rows);

  OrthoResult result;
  result.backend = std::string((*gatherer)->backend_name());
  result.lines = grid.lines;
  result.samples = grid.samples;
  const auto counts = ranks.allgather(static_cast<std::int64_t>(tiles.size()));
  const std::int64_t calls = *std::max_element(counts.begin(), counts.end());
  // Every rank makes `calls` writes (empty ones past its own tiles): HDF5 writes are collective.
  for (std::int64_t i = 0; i < calls; ++i) {
    const bool mine = i < static_cast<std::int64_t>(tiles.size());
    const Status done = mine ? pass.tile(tiles[static_cast<std::size_t>(i)], result)
                             : pass.writer->write_rows({0, 0}, {});
    HB_TRY(mpi::agree(done, ranks));
    if (progress && mine) progress(tiles[static_cast<std::size_t>(i)].end, grid.lines);
  }
  HB_TRY((*writer)->commit());
  std::int64_t totals[] = {result.filled, result.empty};
  ranks.allreduce_sum(totals);
  result.filled = totals[0];
  result.empty = totals[1];
  result.outputs = {job.output};
  result.seconds = total.seconds();
  spdlog::info("ortho: {:.3f} s, {} grid pixels filled, {} without a source", result.seconds, result.filled, result.empty);
  return result;
}

Status check_glt(const std::string& glt_path, const io::CubeShape& product_shape, const std::string& product_path,
                 const mpi::Comm& ranks) {
  auto glt = io::open_glt(glt_path);
  HB_TRY(mpi::agree(glt ? Status{} : Status{glt.error()}, ranks));
  HB_TRY(mpi::agree(check_source_shape(**glt, product_shape, product_path), ranks));
  constexpr std::int64_t kRowsPerCheck = 1024;
  Status checked;
  io::GltRows entries;
  for (const RowRange rows : mpi::rank_row_tiles((*glt)->grid().lines, kRowsPerCheck, ranks)) {
    checked = (*glt)->read_rows(rows, entries);
    if (checked) checked = check_entries(**glt, entries, rows.begin, product_shape);
    if (!checked) break;
  }
  return mpi::agree(checked, ranks);
}

}  // namespace hb::ortho
