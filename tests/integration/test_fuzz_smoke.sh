#!/usr/bin/env bash
# A short fuzzing run (docs/fuzzing.md): builds build-fuzz with clang and runs every
# libFuzzer target for 15 s on its seed corpus. Fails on any crash; skips (77) when
# clang or its fuzzer runtime is missing. Built quick (-O0, line tables only:
# KVAULT_FUZZ_QUICK in scripts/fuzz.sh), which halves the build, the bulk of this
# test on a clean checkout; incremental afterwards; plus 15 s per target.
source "$(dirname "$0")/lib.sh"
KVAULT_FUZZ_QUICK=${KVAULT_FUZZ_QUICK:-1} "$KVAULT_SOURCE_ROOT/scripts/fuzz.sh" "${KVAULT_FUZZ_SMOKE_SECONDS:-15}"
