//! libFuzzer target: the point-file readers (raw f32, .xyz, .ply) on arbitrary bytes (the body is `hhg_fuzz::targets::point_files`).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hhg_fuzz::targets::point_files(data));
