#include "src/cli/ortho_after.hpp"

#include <hdf5.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <system_error>

#include "io/atomic_file.hpp"
#include "io/cube.hpp"
#include "io/envi_header.hpp"
#include "io/file_identity.hpp"
#include "io/hdf5_handle.hpp"
#include "io/hdf5_metadata.hpp"
#include "mpi/agree.hpp"
#include "src/classify/products.hpp"
#include "src/cli/validators.hpp"
#include "src/mnf/run.hpp"
#include "src/mnf/stats_file.hpp"
#include "src/ortho/run.hpp"

namespace hb::cli {
namespace {

bool is_hdf5(const std::string& path) { return io::format_from_path(path) == io::CubeFormat::hdf5; }

std::string hidden(const std::string& final_path, const std::string& tag, const mpi::Comm& comm) {
  return comm.broadcast(io::temporary_path(final_path, tag));
}

// What the command writes for `final_path`: HDF5 for an .h5 (the file it writes without
// --ortho, products and metadata alike), else ENVI (GeoTIFF is written only).
std::string staged(const std::string& final_path, const mpi::Comm& comm) {
  return hidden(final_path, is_hdf5(final_path) ? "ortho.h5" : "ortho.hdr", comm);
}

// The hidden names, the same on every rank (rank 0's process id is in them).
struct Staging {
  std::string product;                 // what the command writes for -o
  std::vector<std::string> auxiliary;  // ENVI: its siblings (OUT_confidence, ...); HDF5: inside `product`
  std::vector<std::string> gridded;    // .h5: each auxiliary on the grid, before its copy into OUT.h5
  std::vector<std::string> more;       // what the command writes for OrthoOutputs::more
  std::string statistics;              // ENVI/.tif: the mnf/pca statistics beside `product`; .h5: inside

  // Every file that may exist, for removal.
  std::vector<std::string> files() const {
    std::vector<std::string> all;
    const auto cube = [&](const std::string& path) {
      if (is_hdf5(path)) return all.push_back(path);
      const auto pair = io::envi_output_paths(path);
      all.insert(all.end(), {pair.header, pair.data});
    };
    cube(product);
    for (const auto& path : auxiliary) cube(path);
    for (const auto& path : more) cube(path);
    all.insert(all.end(), gridded.begin(), gridded.end());
    if (!statistics.empty()) all.push_back(statistics);
    return all;
  }
};

Staging stage(const OrthoOutputs& o, const mpi::Comm& comm) {
  Staging s;
  s.product = staged(o.output, comm);
  for (const auto& a : o.auxiliary) {
    if (is_hdf5(o.output)) s.gridded.push_back(hidden(o.output, "ortho" + a.suffix + ".h5", comm));
    else s.auxiliary.push_back(classify::sibling_path(s.product, a.suffix));
  }
  for (const auto& named : o.more) s.more.push_back(staged(named.second, comm));
  if (o.statistics && !is_hdf5(o.output)) s.statistics = mnf::sidecar_stats_path(s.product);
  return s;
}

// Removes the temporaries when it goes, on every way out, once every rank is past them.
class TemporaryFiles {
 public:
  TemporaryFiles(std::vector<std::string> files, const mpi::Comm& comm) : files_(std::move(files)), comm_(comm) {
    if (comm_.is_root())
      for (const auto& file : files_) io::track_temporary(file);
  }
  TemporaryFiles(const TemporaryFiles&) = delete;
  TemporaryFiles& operator=(const TemporaryFiles&) = delete;
  ~TemporaryFiles() {
    comm_.barrier();
    if (!comm_.is_root()) return;
    for (const auto& file : files_) {
      std::error_code ignored;
      std::filesystem::remove(file, ignored);
      io::untrack_temporary(file);
    }
  }

 private:
  std::vector<std::string> files_;
  const mpi::Comm& comm_;
};

// The final files against every input, the GLT included, and against each other.
Status check_plan(const OrthoOutputs& o) {
  io::FilePlan plan;
  plan.read_cube("scene", o.scene);
  for (const auto& [option, path] : o.reads) plan.read_cube(option, path);
  if (io::format_from_path(o.glt) == io::CubeFormat::envi) plan.read_cube("--ortho", o.glt);
  else plan.read_file("--ortho", o.glt);
  plan.write_cube("-o", o.output);
  if (!is_hdf5(o.output)) {
    for (const auto& a : o.auxiliary) plan.write_cube("-o", classify::sibling_path(o.output, a.suffix));
    if (o.statistics) plan.write_file("-o", mnf::sidecar_stats_path(o.output));
  }
  for (const auto& [option, path] : o.more) plan.write_cube(option, path);
  for (const auto& [option, path] : o.kept) plan.write_file(option, path);
  return plan.check();
}

// The GLT must fit the scene (its products share the scene's lines and samples).
Status check_glt_fits_scene(const OrthoOutputs& o, const mpi::Comm& comm) {
  auto scene = io::open_cube(o.scene);
  HB_TRY(mpi::agree(scene ? Status{} : Status{scene.error()}, comm));
  return ortho::check_glt(o.glt, (*scene)->info().shape, o.scene, comm);
}

// Copies /cube of each gridded auxiliary product into the main output's temporary. The
// attributes are written anew: HDF5 1.10's H5Ocopy crashes copying dense attribute
// storage (a product on a grid has more attributes than fit compact storage).
Status copy_auxiliary(const OrthoOutputs& o, const Staging& s, const std::string& temporary) {
  const io::h5::File target(H5Fopen(temporary.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
  if (!target) return io_error(o.output, "cannot reopen to add the other products: " + io::h5::hdf5_error_detail());
  const io::h5::PropertyList links(H5Pcreate(H5P_LINK_CREATE));
  H5Pset_create_intermediate_group(links.get(), 1);
  const io::h5::PropertyList no_attributes(H5Pcreate(H5P_OBJECT_COPY));
  H5Pset_copy_object(no_attributes.get(), H5O_COPY_WITHOUT_ATTR_FLAG);
  for (std::size_t i = 0; i < s.gridded.size(); ++i) {
    const std::string& name = o.auxiliary[i].dataset;
    const io::h5::File source(H5Fopen(s.gridded[i].c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
    const io::h5::Dataset cube(source ? H5Dopen2(source.get(), "/cube", H5P_DEFAULT) : H5I_INVALID_HID);
    if (!cube) return io_error(s.gridded[i], "cannot reopen /cube: " + io::h5::hdf5_error_detail());
    auto meta = io::h5::read_metadata(cube.get(), s.gridded[i]);
    if (!meta) return meta.error();
    if (H5Ocopy(source.get(), "/cube", target.get(), name.c_str(), no_attributes.get(), links.get()) < 0)
      return io_error(o.output, "cannot copy /" + name + ": " + io::h5::hdf5_error_detail());
    const io::h5::Dataset copied(H5Dopen2(target.get(), name.c_str(), H5P_DEFAULT));
    if (!copied) return io_error(o.output, "cannot reopen /" + name + ": " + io::h5::hdf5_error_detail());
    HB_TRY(io::h5::write_metadata(copied.get(), *meta, o.output));
  }
  return {};
}

// What appears with the main output: the auxiliary products of an .h5, the statistics.
Status finish_main_output(const OrthoOutputs& o, const Staging& s, const std::string& temporary) {
  if (is_hdf5(o.output)) HB_TRY(copy_auxiliary(o, s, temporary));
  if (!o.statistics) return {};
  if (is_hdf5(o.output)) {
    auto record = mnf::read_stats_file(s.product);
    if (!record) return record.error();
    return mnf::add_stats_group(temporary, o.output, *record);
  }
  std::error_code ec;
  std::filesystem::rename(s.statistics, mnf::sidecar_stats_path(o.output), ec);
  if (ec) return io_error(mnf::sidecar_stats_path(o.output), "cannot move the statistics into place: " + ec.message());
  return {};
}

struct GridStep {
  std::string product;
  std::string dataset;  // of an HDF5 product, "" = /cube
  std::string output;
  std::string named;    // what the output's description names
};

Status grid(const OrthoOutputs& o, const GridStep& step, const mpi::Comm& comm, io::CubeWriter::Finisher finish = {}) {
  ortho::OrthoJob job;
  job.product = step.product;
  job.dataset = step.dataset;
  job.glt = o.glt;
  job.output = step.output;
  job.backend = o.backend;
  job.comm = &comm;
  job.described_as = step.named;
  job.finish = std::move(finish);
  auto result = ortho::run(job);
  return result ? Status{} : Status{result.error()};
}

}  // namespace

Result<std::vector<std::string>> run_onto_grid(const OrthoOutputs& o, const ProductStep& product,
                                               const mpi::Comm& comm) {
  HB_TRY(check_plan(o));
  HB_TRY(check_glt_fits_scene(o, comm));
  const Staging s = stage(o, comm);
  const TemporaryFiles temporaries(s.files(), comm);
  HB_TRY(product({s.product, s.more}));
  spdlog::info("ortho: putting the products onto the grid of {}", o.glt);

  std::vector<std::string> written;
  for (std::size_t i = 0; i < o.more.size(); ++i) {
    const std::string& path = o.more[i].second;
    HB_TRY(grid(o, {s.more[i], "", path, path}, comm));
    written.push_back(path);
  }
  for (std::size_t i = 0; i < o.auxiliary.size(); ++i) {
    if (is_hdf5(o.output)) {
      HB_TRY(grid(o, {s.product, o.auxiliary[i].dataset, s.gridded[i], o.output}, comm));
      continue;
    }
    const std::string path = classify::sibling_path(o.output, o.auxiliary[i].suffix);
    HB_TRY(grid(o, {s.auxiliary[i], "", path, path}, comm));
    written.push_back(path);
  }
  HB_TRY(grid(o, {s.product, "", o.output, o.output}, comm,
              [&](const std::string& temporary) { return finish_main_output(o, s, temporary); }));
  written.insert(written.begin(), o.output);
  return written;
}

CLI::Option* add_ortho_option(CLI::App& app, std::string& glt) {
  return app.add_option("--ortho", glt,
                        "Write the raster products onto the map grid of this GLT (EMIT granule or ENVI GLT)")
      ->check(accepts::existing_file());
}

}  // namespace hb::cli
