//! hhg-group: fixed-radius search with Jung and Choi's group spatial hashing, on hhg-core's columns, kernels and counting sort.
