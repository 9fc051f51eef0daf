#!/usr/bin/env bash
# A short coverage-guided fuzzing run (docs/fuzzing.md): builds build-fuzz-quick with
# clang and runs every libFuzzer target for 15 s on its seed corpus under ASan and
# UBSan. Fails on any crash; skips (77) when clang or its fuzzer runtime is missing.
# The separate instrumented build takes most of CI's two cores for about ten minutes,
# so CI runs it only with KVAULT_FUZZ_SMOKE=1; integration.test_fuzz_seeds replays
# the seeds and their mutations in the ordinary build on every run.
source "$(dirname "$0")/lib.sh"
[ "${KVAULT_FUZZ_SMOKE:-0}" = 1 ] ||
  skip "the instrumented fuzzing build runs with KVAULT_FUZZ_SMOKE=1 (or scripts/fuzz.sh); test_fuzz_seeds replays the seeds"
KVAULT_FUZZ_QUICK=${KVAULT_FUZZ_QUICK:-1} "$KVAULT_SOURCE_ROOT/scripts/fuzz.sh" "${KVAULT_FUZZ_SMOKE_SECONDS:-15}"
