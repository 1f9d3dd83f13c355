#!/usr/bin/env bash
# Configures and builds slurmfleet with warnings as errors.
#   scripts/build.sh [--sanitize] [TARGET...]   (default: everything)
# Build directory: build/ (or build-asan/ with --sanitize, AddressSanitizer + UBSan).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir="$top/build"; sanitize=OFF
if [ "${1:-}" = --sanitize ]; then dir="$top/build-asan"; sanitize=ON; shift; fi
targets=(); for t in "$@"; do targets+=(--target "$t"); done
generator=(); command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$top" -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSLURMFLEET_WERROR=ON -DSLURMFLEET_SANITIZE="$sanitize" > "$dir.configure.log" 2>&1 \
  || { cat "$dir.configure.log"; exit 1; }
cmake --build "$dir" -j "$(nproc)" "${targets[@]}"
