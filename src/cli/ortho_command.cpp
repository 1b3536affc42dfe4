// hyperbatch ortho: put a product in sensor geometry onto the map grid of a GLT.
#include <fmt/core.h>

#include "mpi/comm.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/progress.hpp"
#include "src/cli/validators.hpp"
#include "src/ortho/run.hpp"

namespace hb::cli {

Registered register_ortho(CLI::App& root) {
  auto job = std::make_shared<ortho::OrthoJob>();
  auto backend = std::make_shared<std::string>("auto");
  auto* app = root.add_subcommand("ortho", "Orthorectify a product onto the map grid of a GLT (EMIT granule or ENVI GLT)");
  app->add_option("product", job->product, "Product in sensor geometry (ENVI or HDF5 cube: scene, MNF, class map, scores)")
      ->required();
  app->add_option("--glt", job->glt, "EMIT granule (.nc) with location/glt_x, glt_y, or an ENVI GLT (*_glt, *_ort_glt)")
      ->required()
      ->check(accepts::existing_file());
  app->add_option("-o,--output", job->output, "Output on the grid: ENVI header, .h5, or .tif (Cloud-Optimized GeoTIFF)")
      ->required();
  app->add_option("--backend", *backend, "Where the gather runs")->check(accepts::one_of({"auto", "cpu", "cuda"}));
  app->add_option("--tile-rows", job->tile_rows, "Grid rows per tile (0 = from a memory budget)")
      ->check(accepts::non_negative_integer());
  return {app, [job, backend]() -> Status {
            job->backend = *backend_kind_from_name(*backend);
            ProgressReporter progress("ortho", "rows", true);
            auto result = ortho::run(*job, [&](std::int64_t done, std::int64_t total) { progress.update(done, total); });
            if (!result) return result.error();
            progress.finish();
            if (mpi::Comm::world().is_root()) {
              for (const auto& path : result->outputs) fmt::print("wrote   {}\n", path);
              fmt::print("grid    {} x {} ({} filled, {} no-data) on {}, {:.3f} s\n", result->lines, result->samples,
                         result->filled, result->empty, result->backend, result->seconds);
            }
            return {};
          },
          Ranks::every};
}

}  // namespace hb::cli
