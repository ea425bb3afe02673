#!/usr/bin/env bash
# run.sh: builds the hhg C library and runs the C and C++ examples against include/hhg.h,
# each linked against the static and the shared library (the test tests/c_examples.rs).
#
# Usage: run.sh [--release]. `cargo test --workspace` runs the same test, so CI needs no
# separate step. CC and CXX choose the compilers (cc and c++ by default).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$(dirname "$here")"

case "${1:-}" in
    "") exec cargo test -p hhg-capi --locked --test suite c_examples:: ;;
    --release) exec cargo test -p hhg-capi --locked --release --test suite c_examples:: ;;
    *) echo "usage: $0 [--release]" >&2; exit 2 ;;
esac
