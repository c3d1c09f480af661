#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# The main job: build luf and run the demo (shootdowns saved on a reclaim
# workload, immediate vs batched vs luf). Extra arguments go to luf-demo.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh run
cmake -S . -B build/run -DCMAKE_BUILD_TYPE=Release -DLUF_BUILD_TESTS=OFF -DLUF_BUILD_BENCH=OFF >/dev/null
cmake --build build/run -j"$(nproc)" --target luf-demo >/dev/null
build/run/examples/demo/luf-demo "$@"
