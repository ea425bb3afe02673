#!/usr/bin/env bash
# run.sh: builds the hhg C library, compiles example.c and example.cpp against include/hhg.h,
# links each against the static and the shared library, runs all four, and fails if any fails.
#
# Usage: run.sh [--release]. The library is found in cargo's target directory (as cargo
# metadata reports it: CARGO_TARGET_DIR when set, otherwise the workspace's target/).
# CC and CXX choose the compilers (gcc and g++ by default).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
crate="$(dirname "$here")"
cd "$crate"

profile=debug
cargo_profile=()
case "${1:-}" in
    "") ;;
    --release) profile=release; cargo_profile=(--release) ;;
    *) echo "usage: $0 [--release]" >&2; exit 2 ;;
esac

echo "== cargo build -p hhg-capi ${cargo_profile[*]:-}"
cargo build -p hhg-capi --locked "${cargo_profile[@]}"

target_dir="$(cargo metadata --format-version 1 --no-deps --locked \
    | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
if [[ -z "$target_dir" ]]; then
    echo "run.sh: cargo metadata reported no target directory" >&2
    exit 1
fi
lib="$target_dir/$profile"
out="$target_dir/hhg-capi-examples/$profile"
mkdir -p "$out"

cc="${CC:-gcc}"
cxx="${CXX:-g++}"
warnings=(-Wall -Wextra -Wpedantic -Werror)
include=(-I "$crate/include")
static_lib=("$lib/libhhg.a" -lpthread -ldl -lm)
shared_lib=(-L "$lib" -lhhg "-Wl,-rpath,$lib" -lm)

echo "== compile and link with $cc and $cxx"
"$cc" -std=c11 -O1 "${warnings[@]}" "${include[@]}" "$here/example.c" "${static_lib[@]}" \
    -o "$out/example_c_static"
"$cc" -std=c11 -O1 "${warnings[@]}" "${include[@]}" "$here/example.c" "${shared_lib[@]}" \
    -o "$out/example_c_shared"
"$cxx" -std=c++17 -O1 "${warnings[@]}" "${include[@]}" "$here/example.cpp" "${static_lib[@]}" \
    -o "$out/example_cpp_static"
"$cxx" -std=c++17 -O1 "${warnings[@]}" "${include[@]}" "$here/example.cpp" "${shared_lib[@]}" \
    -o "$out/example_cpp_shared"

failed=0
for example in example_c_static example_c_shared example_cpp_static example_cpp_shared; do
    echo "== $example"
    if ! "$out/$example"; then
        echo "run.sh: $example FAILED" >&2
        failed=$((failed + 1))
    fi
done
echo "examples: $((4 - failed)) passed, $failed failed"
exit $((failed > 0))
