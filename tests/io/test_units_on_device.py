"""Physical units made on the device: a GPU reads a scaled int16 scene's stored numbers
and makes them physical itself (io::device_source, kernels::physical_to_f32, the KNN
query gather). Its products must be the bytes it writes for the same scene converted to
float32 physical values on the host first (`ingest --units physical`): MNF components,
PCA, KNN class maps, at several tile sizes and rank counts (3 ranks where the host has
the GPUs). On the CPU the same commands
check the host's conversion against itself. A float32 copy of the stored numbers under
the same header, whose physical view a GPU reads as float32 physical values (its
validity judged on them, as on the host), gives the same KNN class maps. Standard
library only, so that the GPU host runs it as it is."""
import array
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


def float32_stored_twin(folder, header, twin):
    """`twin`: the stored int16 numbers of `header` as float32, under the same header."""
    with open(os.path.join(folder, header)) as f:
        text = f.read()
    checks.true("data type = 2" in text, f"{header} is int16")
    stored = array.array("h")
    stored.frombytes(data_bytes(folder, header))
    if "byte order = 1" in text.lower():
        stored.byteswap()
    widened = array.array("f", stored)
    with open(os.path.join(folder, twin[:-4] + ".img"), "wb") as f:
        f.write(widened.tobytes())
    with open(os.path.join(folder, twin), "w") as f:
        f.write(text.replace("data type = 2", "data type = 4").replace("byte order = 1", "byte order = 0"))


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
    float32_stored_twin(folder, "scene.hdr", "scene_f32.hdr")
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
            knn = lambda scene, out: cli(
                folder, "knn", scene, "--truth", "scene_truth.hdr", "--train-per-class", "20", "-k", "3",
                "--seed", "5", "-o", out, "--backend", BACKEND, *tiles, ranks=ranks)
            knn("scene.hdr", "scaled_int16.hdr")
            knn("scene_f32.hdr", "scaled_f32.hdr")
            checks.true(data_bytes(folder, "scaled_int16.hdr") == data_bytes(folder, "scaled_f32.hdr"),
                        f"knn, {label}: float32 stored numbers give the int16 scene's class map ({BACKEND})")

checks.done("units_on_device")
