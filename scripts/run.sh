#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# The main job: build luf, run the demo (shootdowns saved on a reclaim
# workload, immediate vs batched vs luf), then replay the bundled strace
# traces of real programs under immediate, batched, luf and oracle policies
# and draw the chart. Extra arguments go to luf-demo.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh run
cmake -S . -B build/run -DCMAKE_BUILD_TYPE=Release -DLUF_BUILD_TESTS=OFF -DLUF_BUILD_BENCH=ON >/dev/null
cmake --build build/run -j"$(nproc)" --target luf-demo luf-replay >/dev/null
build/run/examples/demo/luf-demo "$@"
echo
build/run/bench/replay/luf-replay --png build/run/shootdowns.png bench/traces/*.strace.gz
