#!/usr/bin/env bash
# Every fuzz target (docs/fuzzing.md, "Seed replay") on its seed corpus and 3000
# deterministic mutations of it, built with the ordinary build (no clang, no
# sanitizers): a crash or an uncaught exception fails. The coverage-guided run under
# ASan and UBSan is integration.test_fuzz_smoke.
source "$(dirname "$0")/lib.sh"
bin=$(dirname "$KVAULT")/fuzz
n=0
for src in "$KVAULT_SOURCE_ROOT"/fuzz/fuzz_*.cc; do
  t=$(basename "$src" .cc)
  [ -x "$bin/${t}_replay" ] || fail "$bin/${t}_replay not built (cmake --build build --target kvault_fuzzers)"
  (cd "$TMP" && "$bin/${t}_replay" --mutations "${KVAULT_FUZZ_REPLAY_MUTATIONS:-3000}" \
     "$KVAULT_SOURCE_ROOT/fuzz/corpus/$t") > "$TMP/$t.log" 2>&1 ||
    { tail -n 20 "$TMP/$t.log"; fail "$t crashed or failed on a replayed input (kept: $TMP/crash-replay)"; }
  n=$((n+1))
done
[ "$n" -ge 8 ] || fail "only $n fuzz targets found"
echo "ok: $n fuzz targets replayed their seeds and mutations"
