"""Physical units made on the device: a GPU reads a scaled int16 scene's stored numbers
and makes them physical itself (io::device_source, kernels::physical_to_f32, the KNN
query gather). Its products must be the bytes it writes for the same scene converted to
float32 physical values on the host first (`ingest --units physical`): MNF components,
PCA, KNN class maps, at several tile sizes and rank counts (3 ranks where the host has
the GPUs). On the CPU the same commands
check the host's conversion against itself. Standard library only, so that the GPU host
runs it as it is."""
import os

import clitest
import hbtest

args = clitest.parse_args()
BACKEND = clitest.backend_or_skip(args, hbtest.skip)
checks = hbtest.Checks()
cli = clitest.checked_runner(args, checks)


def data_bytes(folder, header):
    with open(os.path.join(folder, header[:-4] + ".img"), "rb") as f:
        return f.read()


def same_products(folder, make, what):
    """`make(scene, out)` on the scaled scene and on its physical float32 twin."""
    make("scene.hdr", "scaled.hdr")
    make("physical.h5", "physical_twin.hdr")
    checks.true(data_bytes(folder, "scaled.hdr") == data_bytes(folder, "physical_twin.hdr"),
                f"{what}: scaled int16 gives the bytes of its float32 physical twin ({BACKEND})")


with hbtest.workdir() as folder:
    cli(folder, "synth", "-o", "scene.hdr", "--lines", "96", "--samples", "40", "--bands", "48", "--classes", "5",
        "--fill-border", "0.15", "--seed", "7")
    with open(os.path.join(folder, "scene.hdr")) as f:
        header = f.read().lower()
    checks.true("reflectance scale factor" in header and "data type = 2" in header,
                "the synthetic scene is scaled int16")
    cli(folder, "ingest", "scene.hdr", "-o", "physical.h5", "--units", "physical")
    for ranks in sorted({1, clitest.most_ranks(BACKEND, 3)}):
        for tile_rows in (7, 0):
            tiles = ["--tile-rows", str(tile_rows)] if tile_rows else []
            label = f"ranks {ranks}, tile rows {tile_rows or 'default'}"
            same_products(folder, lambda scene, out: cli(
                folder, "mnf", scene, "-o", out, "--components", "6", "--backend", BACKEND, *tiles, ranks=ranks),
                f"mnf, {label}")
            same_products(folder, lambda scene, out: cli(
                folder, "pca", scene, "-o", out, "--components", "4", "--backend", BACKEND, *tiles, ranks=ranks),
                f"pca, {label}")
            same_products(folder, lambda scene, out: cli(
                folder, "knn", scene, "--truth", "scene_truth.hdr", "--train-per-class", "20", "-k", "3",
                "--seed", "5", "-o", out, "--backend", BACKEND, *tiles, ranks=ranks),
                f"knn, {label}")

checks.done("units_on_device")
