// SAM / SCM on the CPU: scores against the float64 definitions on the real Jasper Ridge
// scene, the ignore rules, thresholds, tile-size independence of the whole run, the
// resampling rules, library errors, and scoring each distinct spectrum once (--dedup). The Spectral Python / numpy oracles on real
// libraries are in tests/src/sam/test_sam_spy.py; CPU = GPU in tests/src/sam/test_sam_cuda.cpp.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "mpi/comm.hpp"
#include "src/sam/resample.hpp"
#include "src/sam/run.hpp"
#include "src/synth/synth.hpp"
#include "tests/src/sam/sam_test_support.hpp"
#include "tests/support/scratch_dir.hpp"

namespace hb::sam {
namespace {

using hb::test::file_bytes;
using test::jasper;

const mpi::Runtime runtime(nullptr, nullptr);  // sam::run uses the world communicator

void expect_matches_definition(Method method, std::int64_t count) {
  const auto tile = test::jasper_tile();
  const auto endmembers = test::jasper_endmembers();
  const auto spectra = test::mixed_library(endmembers, count, 7);
  const std::int64_t dims = endmembers.channels;
  auto scorer = make_cpu_sam_scorer();
  const auto out = test::score_with(*scorer, method, spectra, dims, tile, test::all_bands(dims));
  const auto raw = tile.as<std::int16_t>();
  std::vector<double> x(static_cast<std::size_t>(dims));
  int near_ties = 0;
  for (std::int64_t p = 0; p < tile.pixels(); p += 3) {
    for (std::int64_t f = 0; f < dims; ++f) x[static_cast<std::size_t>(f)] = raw[static_cast<std::size_t>(p * dims + f)];
    double best = 0;
    std::int64_t best_j = -1;
    for (std::int64_t j = 0; j < count; ++j) {
      const double want = test::reference_score(method, x.data(), spectra.data() + j * dims, dims);
      ASSERT_NEAR(out.scores[static_cast<std::size_t>(p * count + j)], want, 1e-6) << "pixel " << p << " ref " << j;
      const bool better = method == Method::sam ? want < best : want > best;
      if (best_j < 0 || better) best = want, best_j = j;
    }
    const auto got = out.best[static_cast<std::size_t>(p)];
    if (got != best_j) {
      ++near_ties;  // only legitimate when the two scores agree to rounding
      EXPECT_NEAR(test::reference_score(method, x.data(), spectra.data() + got * dims, dims), best, 1e-12);
    }
    EXPECT_FLOAT_EQ(out.best_score[static_cast<std::size_t>(p)], static_cast<float>(best));
  }
  EXPECT_LE(near_ties, 2);
}

TEST(SamCpu, AnglesMatchTheDefinitionOnJasperRidge) {
  HB_REQUIRE_JASPER();
  expect_matches_definition(Method::sam, 40);
}

TEST(SamCpu, CorrelationsMatchPearsonOnJasperRidge) {
  HB_REQUIRE_JASPER();
  expect_matches_definition(Method::scm, 40);
}

TEST(SamCpu, IgnoredAndDegeneratePixelsAreUnclassified) {
  constexpr std::int64_t kBands = 5, kSamples = 4;
  io::Tile tile(DataType::f32, kSamples, kBands, {0, 1}, {0, 1});
  auto v = tile.as<float>();
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 1.0f + static_cast<float>(i % 7);
  v[1 * kBands + 2] = -9999.0f;                                 // ignore value
  v[2 * kBands + 4] = std::numeric_limits<float>::quiet_NaN();  // non-finite
  for (std::int64_t b = 0; b < kBands; ++b) v[static_cast<std::size_t>(3 * kBands + b)] = 2.0f;  // SCM: no variance
  const std::vector<double> refs{1, 2, 3, 4, 5, 5, 4, 3, 2, 1};
  auto scorer = make_cpu_sam_scorer();
  for (const auto method : {Method::sam, Method::scm}) {
    const auto out = test::score_with(*scorer, method, refs, kBands, tile, test::all_bands(kBands, -9999.0));
    EXPECT_GE(out.best[0], 0);
    EXPECT_EQ(out.best[1], -1);
    EXPECT_EQ(out.best[2], -1);
    EXPECT_EQ(out.best[3], method == Method::scm ? -1 : 0);  // a flat pixel has an angle, not a correlation
    EXPECT_TRUE(std::isnan(out.best_score[1]) && std::isnan(out.scores[2 * 2 + 1]));
  }
}

TEST(SamRun, OutputsDoNotDependOnTileSize) {
  HB_REQUIRE_JASPER();
  const hb::test::ScratchDir dir("hb_sam_tiles");
  std::vector<std::vector<char>> maps, rules;
  for (const std::int64_t rows : {1, 7, 100}) {
    SamJob job;
    job.scene = jasper("jasper_ridge.hdr");
    job.library = jasper("jasper_ridge_endmembers_gt.hdr");
    job.output = dir.file("map" + std::to_string(rows) + ".hdr");
    job.rules = dir.file("rules" + std::to_string(rows) + ".hdr");
    job.backend = BackendKind::cpu;
    job.tile_rows = rows;
    auto result = run(job);
    ASSERT_TRUE(result.ok()) << result.error().line();
    EXPECT_EQ(result->classified, 10000);
    EXPECT_EQ(result->tile_rows, rows);
    maps.push_back(file_bytes(dir.file("map" + std::to_string(rows) + ".img")));
    rules.push_back(file_bytes(dir.file("rules" + std::to_string(rows) + ".img")));
  }
  EXPECT_EQ(maps[0].size(), 10000u * 2);
  EXPECT_EQ(rules[0].size(), 10000u * 4 * 4);
  EXPECT_EQ(maps[0], maps[1]);
  EXPECT_EQ(maps[0], maps[2]);
  EXPECT_EQ(rules[0], rules[1]);
  EXPECT_EQ(rules[0], rules[2]);
}

// A synthetic scene with a 40 % fill border whose header does not declare the fill as
// no data: the border pixels are exact duplicates, scored once with dedup on or auto.
TEST(SamRun, DedupScoresEachDistinctSpectrumOnceWithTheSameOutputs) {
  const hb::test::ScratchDir dir("hb_sam_dedup");
  synth::SynthOptions options;
  options.lines = 60;
  options.samples = 50;
  options.bands = 40;
  options.classes = 4;
  options.seed = 3;
  options.fill_border = 0.4;
  auto scene = synth::write_synthetic_scene(dir.file("scene.hdr"), options);
  ASSERT_TRUE(scene.ok()) << scene.error().line();
  {  // drop "data ignore value": the fill becomes ordinary (duplicate) pixels
    std::ifstream in(scene->scene);
    std::string header, line;
    while (std::getline(in, line))
      if (line.rfind("data ignore value", 0) != 0) header += line + "\n";
    in.close();
    std::ofstream(scene->scene) << header;
  }
  std::vector<std::vector<char>> maps, rules;
  std::vector<std::int64_t> duplicates;
  for (const auto mode : {dedup::Mode::off, dedup::Mode::on, dedup::Mode::automatic}) {
    const std::string tag = std::string(dedup::mode_name(mode));
    SamJob job;
    job.scene = scene->scene;
    job.library = scene->library;
    job.output = dir.file("map_" + tag + ".hdr");
    job.rules = dir.file("rules_" + tag + ".hdr");
    job.backend = BackendKind::cpu;
    job.tile_rows = 16;
    job.dedup = mode;
    auto result = run(job);
    ASSERT_TRUE(result.ok()) << result.error().line();
    EXPECT_EQ(result->classified + result->below_threshold + result->ignored, 60 * 50);
    duplicates.push_back(result->duplicates);
    maps.push_back(file_bytes(dir.file("map_" + tag + ".img")));
    rules.push_back(file_bytes(dir.file("rules_" + tag + ".img")));
  }
  EXPECT_EQ(duplicates[0], 0);
  EXPECT_GT(duplicates[1], 60 * 50 / 4) << "the fill border is a third of the pixels or more";
  EXPECT_EQ(duplicates[2], duplicates[1]) << "auto keeps dedup on while it pays";
  EXPECT_EQ(maps[0], maps[1]);
  EXPECT_EQ(maps[0], maps[2]);
  EXPECT_EQ(rules[0], rules[1]);
  EXPECT_EQ(rules[0], rules[2]);
}

TEST(SamRun, ThresholdLeavesWorseMatchesUnclassified) {
  HB_REQUIRE_JASPER();
  const hb::test::ScratchDir dir("hb_sam_threshold");
  SamJob job;
  job.scene = jasper("jasper_ridge.hdr");
  job.library = jasper("jasper_ridge_endmembers_gt.hdr");
  job.output = dir.file("all.hdr");
  job.backend = BackendKind::cpu;
  ASSERT_TRUE(run(job).ok());
  auto score_cube = io::open_cube(dir.file("all_score.hdr"));
  auto map_cube = io::open_cube(dir.file("all.hdr"));
  ASSERT_TRUE(score_cube.ok() && map_cube.ok());
  auto scores = (*score_cube)->read_tile({0, 100});
  auto all = (*map_cube)->read_tile({0, 100});
  std::vector<float> sorted(scores->as<float>().begin(), scores->as<float>().end());
  std::sort(sorted.begin(), sorted.end());
  job.max_angle = sorted[sorted.size() / 2];
  job.output = dir.file("half.hdr");
  auto result = run(job);
  ASSERT_TRUE(result.ok());
  auto half = (*io::open_cube(dir.file("half.hdr")))->read_tile({0, 100});
  std::int64_t kept = 0;
  for (std::size_t p = 0; p < 10000; ++p) {
    const bool pass = scores->as<float>()[p] <= *job.max_angle;
    kept += pass;
    EXPECT_EQ(half->as<std::uint16_t>()[p], pass ? all->as<std::uint16_t>()[p] : 0) << p;
  }
  EXPECT_EQ(result->classified, kept);
  EXPECT_EQ(result->below_threshold, 10000 - kept);
  job.min_correlation = 0.5;
  EXPECT_EQ(run(job).error().kind, ErrorKind::usage);  // --min-correlation is for scm
}

// A library sampled every 10 nm from 400 to 2500 nm (in micrometres), values linear in
// wavelength, so that both resamplings are exact away from the edges and gaps.
SpectralLibrary linear_library() {
  SpectralLibrary lib;
  lib.source = "linear.sli";
  lib.names = {"a", "b"};
  for (double nm = 400; nm <= 2500; nm += 10) lib.wavelength.push_back(nm / 1000.0);
  lib.wavelength_units = "Micrometers";
  lib.channels = static_cast<std::int64_t>(lib.wavelength.size());
  for (int s = 0; s < 2; ++s)
    for (const double um : lib.wavelength) lib.spectra.push_back(1.0 + (s + 1) * um);
  lib.gap.assign(static_cast<std::size_t>(lib.channels), 0);
  lib.gap[60] = 1;  // 1000 nm
  return lib;
}

io::CubeInfo scene_at(const std::vector<double>& nm, bool with_fwhm) {
  io::CubeInfo info;
  info.shape = {1, 1, static_cast<std::int64_t>(nm.size())};
  info.meta.wavelength = nm;
  info.meta.wavelength_units = "Nanometers";
  if (with_fwhm) info.meta.fwhm.assign(nm.size(), 9.0);
  return info;
}

TEST(SamResample, LinearAndGaussianAreExactOnLinearSpectraAndSkipGapsAndEdges) {
  const std::vector<double> centres{350, 402.5, 995, 1003, 1505, 2495, 2600};
  for (const bool gaussian : {false, true}) {
    auto r = resample_to_scene(linear_library(), scene_at(centres, gaussian), "scene.hdr");
    ASSERT_TRUE(r.ok()) << r.error().line();
    EXPECT_EQ(r->method, gaussian ? "gaussian" : "linear");
    // 350 and 2600 lie outside; 995 and 1003 next to (within one FWHM of) the 1000 nm gap.
    const std::vector<std::int64_t> compared{1, 4, 5};
    EXPECT_EQ(r->bands, compared);
    for (std::int64_t s = 0; s < 2; ++s)
      for (std::int64_t f = 0; f < r->dims(); ++f) {
        const double nm = centres[static_cast<std::size_t>(r->bands[static_cast<std::size_t>(f)])];
        const double want = 1.0 + static_cast<double>(s + 1) * nm / 1000.0;
        // Exact where the channels sit symmetrically around the centre; the Gaussian at
        // 402.5 nm is cut by the library's first channel.
        const double tolerance = gaussian && nm < 420 ? 2e-3 : 1e-12;
        EXPECT_NEAR(r->spectra[static_cast<std::size_t>(s * r->dims() + f)], want, tolerance) << nm;
      }
    EXPECT_EQ(band_list(r->excluded), "1, 3-4, 7");
  }
}

TEST(SamResample, MatchedCentresTakeChannelsAsTheyAre) {
  auto r = resample_to_scene(linear_library(), scene_at({400, 1500, 2000.004}, true), "scene.hdr");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->method, "matched");
  EXPECT_DOUBLE_EQ(r->spectra[1], 1.0 + 1.5);
}

TEST(SamResample, ErrorsNameTheFileAndField) {
  auto none = resample_to_scene(linear_library(), scene_at({100, 200}, false), "scene.hdr");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().kind, ErrorKind::bad_input);
  EXPECT_EQ(none.error().field, "wavelength");
  EXPECT_NE(none.error().line().find("linear.sli"), std::string::npos);
  io::CubeInfo bare;
  bare.shape = {1, 1, 7};
  auto unpaired = resample_to_scene(linear_library(), bare, "scene.hdr");
  ASSERT_FALSE(unpaired.ok());
  EXPECT_EQ(unpaired.error().field, "wavelength");
  auto zero = linear_library();
  std::fill(zero.spectra.begin(), zero.spectra.begin() + zero.channels, 0.0);
  auto flat = resample_to_scene(zero, scene_at({500, 600}, false), "scene.hdr");
  ASSERT_FALSE(flat.ok());
  EXPECT_EQ(flat.error().field, "spectra");
  const std::vector<double> constant(4, 3.0);
  auto scm = prepare_references(Method::scm, constant, 4, {"flat"}, "lib.sli");
  ASSERT_FALSE(scm.ok());
  EXPECT_NE(scm.error().line().find("'flat'"), std::string::npos);
}

TEST(SamLibrary, ReadsTheUsgsLibraryAndRefusesScenes) {
  const std::string usgs = std::string(HB_SHARED_DATA) + "/usgs_library/usgs_1995_aviris224.sli";
  if (!std::filesystem::exists(usgs)) GTEST_SKIP() << "real data absent: " << usgs;
  auto lib = read_library(usgs);
  ASSERT_TRUE(lib.ok()) << lib.error().line();
  EXPECT_EQ(lib->count(), 498);
  EXPECT_EQ(lib->channels, 224);
  EXPECT_EQ(lib->names.size(), 498u);
  EXPECT_EQ(to_nanometres(lib->wavelength, lib->wavelength_units).front(), 383.15);
  if (!test::have_jasper()) return;
  auto scene = read_library(jasper("jasper_ridge.hdr"));
  ASSERT_FALSE(scene.ok());
  EXPECT_EQ(scene.error().field, "file type");
}

TEST(SamLibrary, Hdf5LibraryRoundTrips) {
  const hb::test::ScratchDir dir("hb_sam_lib");
  auto lib = linear_library();
  lib.gap.assign(lib.gap.size(), 0);
  ASSERT_TRUE(write_library(dir.file("lib.h5"), lib).ok());
  auto back = read_library(dir.file("lib.h5"));
  ASSERT_TRUE(back.ok()) << back.error().line();
  EXPECT_EQ(back->names, lib.names);
  EXPECT_EQ(back->spectra, lib.spectra);
  EXPECT_EQ(back->wavelength, lib.wavelength);
  EXPECT_EQ(back->wavelength_units, "Micrometers");
  auto missing = read_library(jasper("jasper_ridge_endmembers_gt.hdr") + ".h5");
  EXPECT_FALSE(missing.ok());
}

}  // namespace
}  // namespace hb::sam
