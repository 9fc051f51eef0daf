#!/usr/bin/env bash
# Sets everything up, verifies the example suite's CPU candidates (correct and wrong
# ones) on the CPU backend and prints the per-task table, then scores the run and
# writes the HTML report to build/report.html.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh"
source "$root/scripts/env.sh"
cd "$root"
db=${KVAULT_DB:-kvault.db}  # the store all three commands use
build/kvault eval --suite examples/suite --candidates examples/cpu --backend cpu \
  --jobs "$(nproc)" --run-timeout 20 --run demo --db "$db" "$@"
build/kvault score --suite examples/suite --run demo --db "$db"
build/kvault report --suite examples/suite --run demo --db "$db" -o build/report.html
echo "demo: report written to $root/build/report.html"
