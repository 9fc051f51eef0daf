#include "check/aliasing.h"

#include <algorithm>

namespace kvault {
namespace {
constexpr size_t kMaxAliases = 4096;  // far beyond any output tree the worker captures
}  // namespace

Result<std::vector<OutputAlias>> OutputAliases(const Json& reply) {
  if (!reply.is_object() || !reply.contains("output_aliases")) return std::vector<OutputAlias>();
  const Json& list = reply["output_aliases"];
  if (!list.is_array()) return Error{"output_aliases is not an array"};
  if (list.size() > kMaxAliases)
    return Error{"output_aliases lists " + std::to_string(list.size()) + " entries"};
  std::vector<OutputAlias> aliases;
  for (const Json& entry : list) {
    if (!entry.is_object() || !entry.contains("output") || !entry["output"].is_string() ||
        !entry.contains("input") || !entry["input"].is_number_integer() || entry["input"].get<int64_t>() < 0)
      return Error{"malformed output_aliases entry " + DumpJson(entry).substr(0, 200)};
    aliases.push_back({entry["output"].get<std::string>(), entry["input"].get<int64_t>()});
  }
  return aliases;
}

std::string ForbiddenAliasing(const std::vector<OutputAlias>& candidate,
                              const std::vector<OutputAlias>& reference) {
  for (const OutputAlias& a : candidate) {
    const bool allowed = std::any_of(reference.begin(), reference.end(),
                                     [&](const OutputAlias& r) { return r.output == a.output; });
    if (allowed) continue;
    return a.output.substr(0, 200) + " shares memory with input " + std::to_string(a.input) +
           ": an output that is a view of an input (transpose, slice, view, as_strided) is not a "
           "computed result, and the reference's " +
           a.output.substr(0, 200) + " aliases no input";
  }
  return "";
}

}  // namespace kvault
