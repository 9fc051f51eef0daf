# `kvault cache stats` and `kvault cache clean` on a fresh cache folder: a build is a
# miss then a hit, a damaged entry is found and rebuilt, clean removes what it is
# asked to, and bad flags or a bad KVAULT_CACHE_MAX_GB are misuse (exit 2).
# Builds use a fake compiler script, so this needs PyTorch only for the worker.
source "$(dirname "$0")/lib.sh"
need_torch
export KVAULT_CACHE_DIR="$TMP/cache" KVAULT_PCH=0
cat > "$TMP/fakecc" <<'SH'
#!/bin/sh
[ "$1" = "--version" ] && { echo "fakecc (cache test) 1.0"; exit 0; }
out=""; prev=""
for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done
[ -n "$out" ] || exit 1
echo "fake object" > "$out"
SH
chmod +x "$TMP/fakecc"
export KVAULT_CXX="$TMP/fakecc"
cp "$KVAULT_SOURCE_ROOT/examples/cpu/relu.cpp" "$TMP/relu.cpp"
task="$KVAULT_SOURCE_ROOT/examples/suite/relu.py"
build() {  # leaves the build's cache_hit (True/False) in $TMP/hit
  "$KVAULT" verify --task "$task" --candidate "$TMP/relu.cpp" --backend cpu --compile-only --json > "$TMP/v.json" ||
    fail "verify exited $?: $(cat "$TMP/v.json")"
  json_get "$TMP/v.json" "j['status']" | grep -x compiled >/dev/null || fail "not compiled: $(cat "$TMP/v.json")"
  json_get "$TMP/v.json" "j['build']['cache_hit']" > "$TMP/hit"
}
stat_of() { "$KVAULT" cache stats --json > "$TMP/s.json" || fail "cache stats exited $?"; json_get "$TMP/s.json" "$1"; }

build; [ "$(cat "$TMP/hit")" = "False" ] || fail "first build was a hit"
build; [ "$(cat "$TMP/hit")" = "True" ] || fail "second build was not a hit"
[ "$(stat_of "j['kinds']['build']['entries']")" = 1 ] || fail "entries: $(cat "$TMP/s.json")"
[ "$(stat_of "j['kinds']['build']['hits']")" = 1 ] || fail "hits: $(cat "$TMP/s.json")"
[ "$(stat_of "j['kinds']['build']['stores']")" = 1 ] || fail "stores: $(cat "$TMP/s.json")"
[ "$(stat_of "j['location']")" = "$KVAULT_CACHE_DIR" ] || fail "location: $(cat "$TMP/s.json")"
"$KVAULT" cache stats | grep '^build ' >/dev/null || fail "no build row in the table"

# Damage the stored object: the next build detects it, rebuilds, and counts it.
obj=$(find "$KVAULT_CACHE_DIR/build" -name 'kv_*.o' | head -1)
[ -n "$obj" ] || fail "no stored object"
printf 'XXXXXXXXXXX\n' > "$obj"
build; [ "$(cat "$TMP/hit")" = "False" ] || fail "a damaged entry was used"
[ "$(stat_of "j['kinds']['build']['corrupt']")" = 1 ] || fail "corrupt: $(cat "$TMP/s.json")"
[ "$(cat "$(find "$KVAULT_CACHE_DIR/build" -name 'kv_*.o' | head -1)")" = "fake object" ] || fail "not rebuilt"

# Misuse.
"$KVAULT" cache clean > /dev/null 2>&1; [ $? = 2 ] || fail "clean without a mode is not misuse"
"$KVAULT" cache clean --all --to-size 1 > /dev/null 2>&1; [ $? = 2 ] || fail "two modes are not misuse"
"$KVAULT" cache clean --all --kind bogus > /dev/null 2>&1; [ $? = 2 ] || fail "--kind bogus is not misuse"
"$KVAULT" cache clean --to-size lots > "$TMP/err" 2>&1; [ $? = 2 ] || fail "--to-size lots is not misuse"
grep -q "lots" "$TMP/err" || fail "unclear message: $(cat "$TMP/err")"
KVAULT_CACHE_MAX_GB=-3 "$KVAULT" cache stats > "$TMP/err" 2>&1; [ $? = 2 ] || fail "a negative bound is not misuse"
grep -q KVAULT_CACHE_MAX_GB "$TMP/err" || fail "unclear message: $(cat "$TMP/err")"

# Cleaning: by age keeps the fresh entry, by kind leaves other kinds, to size 0 empties.
# Any clean also sweeps a killed process's staging folder once it is hours old.
mkdir -p "$KVAULT_CACHE_DIR/build/tmp/stage-killed"
echo "half an artefact" > "$KVAULT_CACHE_DIR/build/tmp/stage-killed/part"
touch -d "8 hours ago" "$KVAULT_CACHE_DIR/build/tmp/stage-killed/part" "$KVAULT_CACHE_DIR/build/tmp/stage-killed"
"$KVAULT" cache clean --older-than 1 --json > "$TMP/c.json" || fail "clean --older-than exited $?"
[ "$(json_get "$TMP/c.json" "j['removed']")" = 0 ] || fail "a fresh entry was removed: $(cat "$TMP/c.json")"
[ "$(json_get "$TMP/c.json" "j['stale_removed']")" = 1 ] || fail "stale staging not swept: $(cat "$TMP/c.json")"
[ ! -e "$KVAULT_CACHE_DIR/build/tmp/stage-killed" ] || fail "the stale staging folder is still there"
"$KVAULT" cache clean --all --kind refs --json > "$TMP/c.json" || fail "clean --kind refs exited $?"
[ "$(json_get "$TMP/c.json" "j['kept']")" = 0 ] || fail "--kind refs counted other kinds: $(cat "$TMP/c.json")"
[ "$(stat_of "j['kinds']['build']['entries']")" = 1 ] || fail "--kind refs removed a build entry"
"$KVAULT" cache clean --to-size 0 --kind build --json > "$TMP/c.json" || fail "clean --to-size exited $?"
[ "$(json_get "$TMP/c.json" "j['removed']")" = 1 ] || fail "to-size 0 removed: $(cat "$TMP/c.json")"
[ "$(stat_of "j['entries']")" = 0 ] || fail "entries left: $(cat "$TMP/s.json")"
build; [ "$(cat "$TMP/hit")" = "False" ] || fail "a cleaned entry was still a hit"
echo "PASS"
