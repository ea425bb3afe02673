//! Header test: `include/hhg.h` is exactly what cbindgen generates from the crate now, so a stale checked-in header fails CI.

use std::path::Path;

/// The environment variable that makes this test rewrite the header instead of checking it.
const BLESS: &str = "HHG_BLESS";

/// Generates the header from the crate's sources and `cbindgen.toml`.
fn generate(crate_dir: &Path) -> String {
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .unwrap_or_else(|error| panic!("cbindgen.toml does not parse: {error}"));
    let bindings = cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .unwrap_or_else(|error| panic!("cbindgen failed on the crate: {error}"));
    let mut header = Vec::new();
    bindings.write(&mut header);
    String::from_utf8(header).expect("cbindgen writes UTF-8")
}

/// The first line where `a` and `b` differ (1-based), with both versions of it.
fn first_difference(a: &str, b: &str) -> String {
    let (mut a_lines, mut b_lines) = (a.lines(), b.lines());
    for line in 1.. {
        match (a_lines.next(), b_lines.next()) {
            (Some(x), Some(y)) if x == y => continue,
            (None, None) => break,
            (x, y) => {
                return format!(
                    "line {line}:\n  checked in: {}\n  generated:  {}",
                    x.unwrap_or("<end of file>"),
                    y.unwrap_or("<end of file>")
                );
            }
        }
    }
    "only line endings differ".to_string()
}

#[test]
fn checked_in_header_is_up_to_date() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = crate_dir.join("include").join("hhg.h");
    let generated = generate(crate_dir);
    if std::env::var_os(BLESS).is_some_and(|value| value == "1") {
        std::fs::write(&path, &generated)
            .unwrap_or_else(|error| panic!("cannot write {}: {error}", path.display()));
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "crates/hhg-capi/include/hhg.h is stale: regenerate it with \
         `{BLESS}=1 cargo test -p hhg-capi --test suite header` and commit it.\n\
         First difference from what cbindgen generates now, at {}",
        first_difference(&checked_in, &generated)
    );
}
