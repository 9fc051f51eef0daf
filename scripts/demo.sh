#!/usr/bin/env bash
# Sets everything up, then verifies the example suite's CPU candidates (correct and
# wrong ones) on the CPU backend and prints the per-task table.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh"
source "$root/scripts/env.sh"
cd "$root"
exec build/kvault eval --suite examples/suite --candidates examples/cpu --backend cpu \
  --jobs "$(nproc)" --run-timeout 20 --run demo "$@"
