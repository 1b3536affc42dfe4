"""Writes EMIT granules as the agency publishes them (netCDF4 through python3-netcdf4,
deflate-compressed chunks) for the EMIT tests."""
import numpy as np
import netCDF4

FILL = -9999.0
WKT = ('GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563]],'
       'PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433],AUTHORITY["EPSG","4326"]]')
GEOTRANSFORM = [-118.5, 0.000542232, 0.0, 34.2, 0.0, -0.000542232]
MASK_BANDS = ["Cloud flag", "Cirrus flag", "Water flag", "Spacecraft Flag", "Dilated Cloud Flag",
              "AOD550", "H2O (g cm-2)", "Aggregate Flag"]


def spectra(lines, samples, bands, seed):
    """Smooth positive spectra with some structure, so that MNF and SAM have work to do."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.05, 0.6, size=(4, bands)).astype(np.float32)
    weights = rng.dirichlet(np.ones(4), size=lines * samples).astype(np.float32)
    cube = (weights @ base).reshape(lines, samples, bands)
    return (cube + rng.normal(0, 0.003, cube.shape)).astype(np.float32)


def write_granule(path, variable, data, wavelengths=None, fwhm=None, good=None, mask_bands=None,
                  band_group=True, chunk_rows=8):
    """One granule: the root `variable` (downtrack, crosstrack, bands) and its groups."""
    lines, samples, bands = data.shape
    with netCDF4.Dataset(path, "w", format="NETCDF4") as nc:
        nc.createDimension("downtrack", lines)
        nc.createDimension("crosstrack", samples)
        nc.createDimension("bands", bands)
        var = nc.createVariable(variable, "f4", ("downtrack", "crosstrack", "bands"), zlib=True, complevel=4,
                                chunksizes=(min(chunk_rows, lines), samples, bands), fill_value=FILL)
        var[:] = data
        nc.setncattr("geotransform", np.array(GEOTRANSFORM, dtype=np.float64))
        nc.setncattr("spatial_ref", WKT)
        nc.setncattr("title", f"EMIT test {variable}")
        if band_group:
            sbp = nc.createGroup("sensor_band_parameters")
            sbp.createDimension("bands", len(wavelengths) if wavelengths is not None else
                                len(mask_bands) if mask_bands is not None else bands)
            if wavelengths is not None:
                sbp.createVariable("wavelengths", "f4", ("bands",))[:] = wavelengths
            if fwhm is not None:
                sbp.createVariable("fwhm", "f4", ("bands",))[:] = fwhm
            if good is not None:
                sbp.createDimension("good_bands", len(good))
                sbp.createVariable("good_wavelengths", "f4", ("good_bands",))[:] = good
            if mask_bands is not None:
                names = sbp.createVariable("mask_bands", str, ("bands",))
                for i, name in enumerate(mask_bands):
                    names[i] = name
        loc = nc.createGroup("location")
        loc.createDimension("ortho_y", lines + 2)
        loc.createDimension("ortho_x", samples + 2)
        for name in ("lat", "lon", "elev"):
            loc.createVariable(name, "f8", ("downtrack", "crosstrack"))[:] = np.zeros((lines, samples))
        for name in ("glt_x", "glt_y"):
            loc.createVariable(name, "i4", ("ortho_y", "ortho_x"))[:] = np.zeros((lines + 2, samples + 2), np.int32)


def band_parameters(bands):
    wavelengths = np.linspace(381.0, 2493.0, bands).astype(np.float32)
    fwhm = np.full(bands, 8.5, np.float32)
    good = np.ones(bands, np.float32)
    good[[3, 4, bands - 2]] = 0
    return wavelengths, fwhm, good


def reflectance_granule(path, lines=40, samples=30, bands=25, seed=3):
    """An L2A reflectance granule with fill pixels; returns (data as stored, wavelengths, fwhm, good)."""
    data = spectra(lines, samples, bands, seed)
    data[0, :5, :] = FILL
    data[17, 11, :] = FILL
    wavelengths, fwhm, good = band_parameters(bands)
    write_granule(path, "reflectance", data, wavelengths, fwhm, good)
    return data, wavelengths, fwhm, good


def mask_granule(path, lines, samples, seed=4, flagged=None):
    rng = np.random.default_rng(seed)
    mask = np.zeros((lines, samples, len(MASK_BANDS)), np.float32)
    mask[..., 5] = rng.uniform(0, 0.3, (lines, samples))  # AOD550: a value, not a flag
    for (row, col, band) in flagged or []:
        mask[row, col, band] = 1
    write_granule(path, "mask", mask, mask_bands=MASK_BANDS)
    return mask
