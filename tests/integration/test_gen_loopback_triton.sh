# `kvault gen --lang triton` end to end against the loopback replay server on the CPU
# backend (Triton's interpreter), answers from examples/triton: wrong then correct;
# correct; garbage (a reply that is not JSON) then correct; two code blocks then
# correct. Candidates are .py Triton files verified as format triton, and every system
# prompt carries the Triton contract and the hardware description.
source "$(dirname "$0")/lib.sh"
need_torch
"$KVAULT_PYTHON" -c "import triton" >/dev/null 2>&1 ||
  skip "no triton for the worker (KVAULT_PYTHON=$KVAULT_PYTHON); scripts/setup.sh installs it into .venv"
source "$(dirname "$0")/gen_format_lib.sh"

gen_format_run triton "$KVAULT_SOURCE_ROOT/examples/triton" .py broken,correct,garbage,two_blocks \
  triton triton "$KVAULT_SOURCE_ROOT/prompts/v1/formats/triton-python.md" 120 -- --lang triton
echo ok
