#pragma once
// The operation signature of a PyTorch reference (docs/corpus.md, "Decontamination"):
// what a task computes, independent of its variable names and of the order of its
// independent lines.
//
//   std::optional<OpSignature> s = ReferenceSignature(task_py);
//   s->ops     -> {".sum", "Conv2d(3,16,3)", "relu", "op:+"}  (sorted multiset)
//   s->inputs  -> {"randn(16,3,32,32)"}                        (sorted multiset)
//   s->key     -> SHA-256 hex of both lists and the init inputs
//   s->shape_free_key -> the same with every number spelled "#": equal for a task
//                        resized (batch, dims, channels, init values changed)
//
// ops: every call in Model.forward (or a renamed model's; torch / F / nn functions by their last name,
// tensor methods as ".name", submodules built in __init__ by their constructor and
// arguments) and every arithmetic operator. inputs: the tensor-making calls of
// get_inputs with module-level constants substituted; init: get_init_inputs' values.
// Pure; thread-safe.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvault::corpus {

struct OpSignature {
  std::vector<std::string> ops;
  std::vector<std::string> inputs;
  std::vector<std::string> init;
  std::string key;
  std::string shape_free_key;  // numbers erased: the rank of each input stays, not its size
};

// `text` with every number (a run of digits, with its point and exponent) spelled "#".
std::string EraseNumbers(std::string_view text);

// nullopt when the source has no `class Model` (for a renamed copy: no top-level class
// with a `forward`; the last one is the model) whose `forward` calls anything, or no
// get_inputs.
std::optional<OpSignature> ReferenceSignature(std::string_view python_source);

}  // namespace kvault::corpus
