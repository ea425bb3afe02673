//! hhg-xor: fixed-radius search with XOR-of-primes cell hashing, multilevel hashing and Pouchol's hierarchical hashing, on hhg-core's columns, kernels and counting sort.
