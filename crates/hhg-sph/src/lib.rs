//! hhg-sph: a weakly compressible SPH dam break on hhg-core's neighbour search.
