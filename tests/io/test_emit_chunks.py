"""EMIT granules read alone inflate their deflated chunks on every core
(io/emit/chunk_reader.hpp): every chunk shape (chunks that split samples and bands,
partial edge chunks), with and without shuffle, and filters it does not handle
(fletcher32: the library reads) give h5py's values; row ranges that do not end on a
chunk boundary give the bytes 3 ranks' collective reads give; a chunk that does not
inflate is exit 3 naming the granule and the variable, nothing written."""
import os

import numpy as np

import clitest
import emit_granules as emit
import hbtest

args = clitest.parse_args()
try:
    import h5py
    import netCDF4
except ImportError as e:
    hbtest.skip(f"oracle missing: {e} (apt-get install python3-netcdf4 python3-h5py)")
checks = hbtest.Checks()
cli = clitest.checked_runner(args, checks)

LINES, SAMPLES, BANDS = 37, 23, 19


def granule(folder, name, data, chunks, written=None, **filters):
    """A radiance granule whose variable has the given chunk shape and filters; only
    its first `written` lines stored when given (the chunks past them never written)."""
    wl, fwhm, good = emit.band_parameters(BANDS)
    path = os.path.join(folder, name)
    with netCDF4.Dataset(path, "w", format="NETCDF4") as nc:
        for dim, size in zip(("downtrack", "crosstrack", "bands"), data.shape):
            nc.createDimension(dim, size)
        var = nc.createVariable("radiance", data.dtype.str[1:], ("downtrack", "crosstrack", "bands"),
                                chunksizes=chunks, fill_value=emit.FILL, **filters)
        var[:written] = data[:written]
        sbp = nc.createGroup("sensor_band_parameters")
        sbp.createDimension("bands", BANDS)
        sbp.createVariable("wavelengths", "f4", ("bands",))[:] = wl
        sbp.createVariable("fwhm", "f4", ("bands",))[:] = fwhm
    return name


def as_int16(data):
    """The values in hundredths, fill kept: a 2-byte variable for the generic unshuffle."""
    return np.where(data == emit.FILL, emit.FILL, np.round(data * 100)).astype(np.int16)


def ingested(folder, name, ranks=1):
    out = name + f".{ranks}.h5"
    cli(folder, "ingest", name, "-o", out, ranks=ranks)
    with h5py.File(os.path.join(folder, out), "r") as f:
        return f["cube"][...]


def corrupt_first_chunk(path):
    """Overwrites the middle of the first stored chunk: zlib refuses it."""
    with h5py.File(path, "r") as f:
        info = f["radiance"].id.get_chunk_info(0)
    with open(path, "r+b") as f:
        f.seek(info.byte_offset + info.size // 2)
        f.write(b"\xff" * min(64, info.size // 2))


with hbtest.workdir() as tmp:
    data = emit.spectra(LINES, SAMPLES, BANDS, 11)
    data[3, 4, :] = emit.FILL
    cases = {
        "rows.nc": dict(chunks=(8, SAMPLES, BANDS), zlib=True, complevel=4),             # as EMIT ships it
        "split.nc": dict(chunks=(5, 7, 6), zlib=True, complevel=1),                      # partial chunks everywhere
        "noshuffle.nc": dict(chunks=(6, 10, BANDS), zlib=True, shuffle=False),
        "fletcher.nc": dict(chunks=(8, SAMPLES, BANDS), zlib=True, fletcher32=True),     # the library reads
        "int16.nc": dict(chunks=(5, 7, 6), zlib=True, values=as_int16(data)),           # 2-byte shuffle
    }
    for name, spec in cases.items():
        chunks = spec.pop("chunks")
        values = spec.pop("values", data)
        granule(tmp, name, values, chunks, **spec)
        checks.true(np.array_equal(ingested(tmp, name), values), f"{name}: ingest equals the written values")
    # Row ranges across chunk boundaries (tiles of 7 rows over chunks of 5, and over
    # chunks of 8 whole rows, which consecutive ranges decode ahead): the bytes of 3
    # ranks' collective library reads.
    for stem in ("split", "rows"):
        for ranks in (1, 3):
            cli(tmp, "mnf", f"{stem}.nc", "-o", f"{stem}_mnf_{ranks}.h5", "--components", 4, "--backend", "cpu",
                "--tile-rows", 7, ranks=ranks)
        with h5py.File(os.path.join(tmp, f"{stem}_mnf_1.h5")) as a, \
                h5py.File(os.path.join(tmp, f"{stem}_mnf_3.h5")) as b:
            checks.true(np.array_equal(a["cube"][...], b["cube"][...], equal_nan=True),
                        f"{stem}: threaded chunk reads (1 rank) and collective reads (3 ranks) give the same components")

    # Chunks never written read as the fill value: the library's reads, not the threaded ones.
    granule(tmp, "partial.nc", data, (8, SAMPLES, BANDS), written=16, zlib=True)
    expected = data.copy()
    expected[16:] = emit.FILL
    checks.true(np.array_equal(ingested(tmp, "partial.nc"), expected), "chunks never written read as the fill value")

    bad = granule(tmp, "bad.nc", data, (8, SAMPLES, BANDS), zlib=True)
    corrupt_first_chunk(os.path.join(tmp, bad))
    before = sorted(os.listdir(tmp))
    _, err = cli(tmp, "ingest", bad, "-o", "bad.h5", expect=3)
    line = clitest.one_error_line(err, "corrupt chunk")
    checks.true("bad.nc" in line and "'/radiance'" in line, f"corrupt chunk names the granule and variable: {line}")
    checks.equal(sorted(os.listdir(tmp)), before, "corrupt chunk: nothing written")
checks.done("test_emit_chunks")
