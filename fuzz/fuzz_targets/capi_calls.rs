//! libFuzzer target: the C API on an arbitrary sequence of calls and arguments, checked against a model (the body is `hhg_fuzz::targets::capi_calls`).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hhg_fuzz::targets::capi_calls(data));
