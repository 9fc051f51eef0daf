# `kvault gen --mode modu2func --lang python` end to end against the loopback replay
# server on the CPU backend: the model answers with functional twins of the example
# tasks (examples/functional: relu, vector_add, linear_relu with parameters). Paths:
# wrong then correct; correct; two code blocks then correct. Each twin is verified as
# a KernelBench candidate (`class ModelNew(Model): pass` appended) against the task.
source "$(dirname "$0")/lib.sh"
need_torch
source "$(dirname "$0")/gen_format_lib.sh"
gen_format_run modu2func "$KVAULT_SOURCE_ROOT/examples/functional" .py broken,correct,two_blocks \
  kernelbench python "$KVAULT_SOURCE_ROOT/prompts/v1/formats/functional-python.md" 60 -- --mode modu2func --lang python
echo ok
