#!/usr/bin/env bash
# Sets everything up, verifies the example suite's CPU candidates (correct and wrong
# ones) on the CPU backend and prints the per-task table, then scores the run and
# writes the HTML report to build/report.html.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh"
source "$root/scripts/env.sh"
cd "$root"
build/kvault eval --suite examples/suite --candidates examples/cpu --backend cpu \
  --jobs "$(nproc)" --run-timeout 20 --run demo "$@"
build/kvault score --suite examples/suite --run demo
build/kvault report --suite examples/suite --run demo -o build/report.html
