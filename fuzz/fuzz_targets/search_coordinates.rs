//! libFuzzer target: the search on arbitrary bytes as coordinates, radius and periodic box, against brute force (the body is `hhg_fuzz::targets::search_coordinates`).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hhg_fuzz::targets::search_coordinates(data));
