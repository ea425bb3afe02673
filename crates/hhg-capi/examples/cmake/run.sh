#!/usr/bin/env bash
# run.sh: installs hhg into a prefix with `cargo xtask install`, then configures, builds and runs
# the CMake example against it (find_package and pkg-config). CI runs it after the tests.
#
# Usage: run.sh [--profile NAME] (default `release`; CI passes `dev` to reuse the test build).
# The prefix and the build directory are under target/cmake-example/.
set -euo pipefail

profile=release
case "${1:-}" in
    "") ;;
    --profile) profile="${2:?--profile needs a name}" ;;
    *) echo "usage: $0 [--profile NAME]" >&2; exit 2 ;;
esac

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
out="${CARGO_TARGET_DIR:-$root/target}/cmake-example"
case "$out" in /*) ;; *) out="$root/$out" ;; esac
rm -rf "$out"

cd "$root"
cargo xtask install --prefix "$out/prefix" --profile "$profile"
export PKG_CONFIG_PATH="$out/prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
cmake -S "$here" -B "$out/build" -DCMAKE_PREFIX_PATH="$out/prefix" -DCMAKE_BUILD_TYPE=Release
cmake --build "$out/build" -j 2
ctest --test-dir "$out/build" --output-on-failure
