#!/usr/bin/env bash
# run.sh: installs hhg into a prefix with `cargo xtask install`, then configures, builds and runs
# the CMake example against it (find_package and pkg-config). CI runs it after the tests.
#
# Usage: run.sh [--profile NAME] [--no-build] (default `release`, built; CI passes
# `--profile test --no-build` to install the libraries its `cargo test` built).
# The prefix and the build directory are under target/cmake-example/.
set -euo pipefail

profile=release
no_build=()
while [ $# -gt 0 ]; do
    case "$1" in
        --profile) profile="${2:?--profile needs a name}"; shift 2 ;;
        --no-build) no_build=(--no-build); shift ;;
        *) echo "usage: $0 [--profile NAME] [--no-build]" >&2; exit 2 ;;
    esac
done

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
out="${CARGO_TARGET_DIR:-$root/target}/cmake-example"
case "$out" in /*) ;; *) out="$root/$out" ;; esac
rm -rf "$out"

cd "$root"
cargo xtask install --prefix "$out/prefix" --profile "$profile" "${no_build[@]}"
export PKG_CONFIG_PATH="$out/prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
cmake -S "$here" -B "$out/build" -DCMAKE_PREFIX_PATH="$out/prefix" -DCMAKE_BUILD_TYPE=Release
cmake --build "$out/build" -j 2
ctest --test-dir "$out/build" --output-on-failure
