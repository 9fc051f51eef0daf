#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, docs/fuzzing.md) into build-fuzz with clang
# and runs each for SECONDS (default 20) on a temporary copy of its seed corpus.
#
#   scripts/fuzz.sh [SECONDS]
#
# Exit status: 0 when no target crashed; 1 when one did (the crashing inputs' paths
# are printed); 77 with "SKIP: <reason>" when clang or its fuzzer runtime is missing.
# Environment: KVAULT_FUZZ_BUILD_DIR (default <repo>/build-fuzz), KVAULT_FUZZ_JOBS
# (build parallelism, default 2), KVAULT_FUZZ_TARGETS (space-separated subset),
# KVAULT_FUZZ_QUICK=1 (built at -O0 with line tables only, in build-fuzz-quick by
# default: about half the build's time, slower runs; the CI smoke test's choice).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-20}
if [ "${KVAULT_FUZZ_QUICK:-0}" = 1 ]; then
  build=${KVAULT_FUZZ_BUILD_DIR:-$root/build-fuzz-quick}
  build_type=(-DCMAKE_BUILD_TYPE=None "-DCMAKE_CXX_FLAGS=-O0 -gline-tables-only" "-DCMAKE_C_FLAGS=-O0 -gline-tables-only")
else
  build=${KVAULT_FUZZ_BUILD_DIR:-$root/build-fuzz}
  build_type=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
fi
jobs=${KVAULT_FUZZ_JOBS:-2}

skip() { echo "SKIP: $*"; exit 77; }
command -v clang >/dev/null && command -v clang++ >/dev/null || skip "clang/clang++ not installed (apt-get install clang)"
command -v cmake >/dev/null || skip "cmake not installed"
command -v ninja >/dev/null || skip "ninja not installed"

work=$(mktemp -d "${TMPDIR:-/tmp}/kvault-fuzz.XXXXXX")
keep_work=0
trap '[ "$keep_work" = 1 ] || rm -rf "$work"' EXIT

# The fuzzer runtime (libclang-rt-*-dev on Debian) is separate from clang itself.
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' >"$work/probe.cc"
clang++ -fsanitize=fuzzer,address,undefined "$work/probe.cc" -o "$work/probe" >"$work/probe.log" 2>&1 ||
  skip "clang++ cannot link -fsanitize=fuzzer,address,undefined (apt-get install libclang-rt-14-dev): $(head -c 300 "$work/probe.log")"

echo "fuzz: building $build (clang, ASan + UBSan + libFuzzer)"
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja "${build_type[@]}" \
  -DKVAULT_FUZZ=ON -DKVAULT_BUILD_TESTS=OFF >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; echo "fuzz: configure failed"; exit 1; }
cmake --build "$build" -j "$jobs" --target kvault_fuzzers >"$work/build.log" 2>&1 ||
  { tail -n 60 "$work/build.log"; echo "fuzz: build failed"; exit 1; }

# Longest input per target: a store seed is a whole database file.
max_len_of() { case "$1" in fuzz_store) echo 65536 ;; *) echo 16384 ;; esac; }

targets=${KVAULT_FUZZ_TARGETS:-$(cd "$root/fuzz" && ls fuzz_*.cc | sed 's/\.cc$//')}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=()
for t in $targets; do
  corpus="$work/corpus/$t" artifacts="$work/artifacts/$t"
  mkdir -p "$corpus" "$artifacts"
  [ -d "$root/fuzz/corpus/$t" ] && cp "$root/fuzz/corpus/$t/." "$corpus/" -r
  log="$work/$t.log"
  (cd "$artifacts" && "$build/fuzz/$t" -max_total_time="$seconds" -max_len="$(max_len_of "$t")" \
    -rss_limit_mb=2048 -timeout=10 -error_exitcode=1 -timeout_exitcode=1 \
    -artifact_prefix="$artifacts/" -print_final_stats=1 "$corpus" >"$log" 2>&1)
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  found=$(find "$artifacts" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | sort)
  if [ "$rc" -ne 0 ] || [ -n "$found" ]; then
    keep_work=1
    failed+=("$t")
    echo "fuzz: $t FAILED (exit $rc, ${execs:-?} runs); log: $log"
    grep -E 'ERROR|SUMMARY|what\(\)|runtime error' "$log" | head -n 8
    for f in $found; do echo "fuzz: crashing input: $f"; done
  else
    echo "fuzz: $t ok (${execs:-?} runs in ${seconds}s, corpus $(ls "$corpus" | wc -l) inputs)"
  fi
done

if ((${#failed[@]})); then
  echo "fuzz: FAILED: ${failed[*]} (inputs and logs kept under $work)"
  exit 1
fi
echo "fuzz: all targets ok"
