#pragma once
// Backends (where a candidate runs) and source languages (what it is written in).
//
//   auto b = BackendFromString("cuda");        // Backend::kCuda
//   auto l = LanguageFromPath("/x/relu.hip");  // Language::kHip
//   std::string(ToString(*b))                  // "cuda"
#include <string_view>

#include "util/result.h"

namespace kvault {

// The PyTorch device kind a candidate runs on. kHip means a ROCm build of PyTorch on
// an AMD GPU; HIP sources on NVIDIA run on kCuda.
enum class Backend { kCpu, kCuda, kHip };

// The language of an extension-format source: .cpp/.cc/.cxx, .cu, .hip.
enum class Language { kCpp, kCuda, kHip };

// "cpu", "cuda", "hip".
std::string_view ToString(Backend backend);
// "cpp", "cuda", "hip".
std::string_view ToString(Language language);

// Inverse of ToString; Error names the bad value and the accepted ones.
Result<Backend> BackendFromString(std::string_view text);
Result<Language> LanguageFromString(std::string_view text);
// By file extension (case-sensitive): .cpp .cc .cxx -> kCpp, .cu -> kCuda, .hip -> kHip.
Result<Language> LanguageFromPath(std::string_view path);

}  // namespace kvault
