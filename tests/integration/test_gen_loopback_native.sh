# `kvault gen --format native --lang cpp` end to end against the loopback replay server
# on the CPU backend, answers from examples/native/cpu: correct; wrong then correct;
# two code blocks then correct. Candidates are native sources (.cpp with
# kvault_forward), verified as format native. Also: format/lang combinations no
# pipeline can verify are refused before any call. tests/gpu/gen_loopback_gpu.sh runs it
# with GEN_LANG=cuda, GEN_EXAMPLES=examples/native/cuda, GEN_BACKEND=cuda.
source "$(dirname "$0")/lib.sh"
need_torch
source "$(dirname "$0")/gen_format_lib.sh"

misuse() {  # expected-text flags...
  local want=$1; shift
  "$KVAULT" gen --model m --backend cpu --db "$TMP/misuse.db" --suite "$KVAULT_SOURCE_ROOT/examples/suite" \
    --endpoint http://127.0.0.1:9/v1 "$@" > /dev/null 2> "$TMP/misuse.txt"
  local rc=$?
  [ $rc = 2 ] && grep -q -- "$want" "$TMP/misuse.txt" || { cat "$TMP/misuse.txt"; fail "gen $* exited $rc without '$want'"; }
}
misuse "--lang cpp, cuda or hip" --format native --lang python
misuse "torch2kernel only" --format native --lang cpp --mode modu2func
misuse "drop --format extension" --lang triton --format extension
misuse "torch2kernel only" --lang triton --mode kernel2kernel --baseline "$TMP"
misuse "no prompts for --format fancy" --format fancy --lang cpp

lang=${GEN_LANG:-cpp}
case "$lang" in cuda) ext=.cu ;; hip) ext=.hip ;; *) ext=.cpp ;; esac
gen_format_run native "${GEN_EXAMPLES:-$KVAULT_SOURCE_ROOT/examples/native/cpu}" "$ext" broken,correct,two_blocks \
  native "$lang" "$KVAULT_SOURCE_ROOT/prompts/v1/formats/native-$lang.md" 60 -- --format native --lang "$lang"
echo ok
