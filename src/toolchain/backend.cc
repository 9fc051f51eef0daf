#include "toolchain/backend.h"

#include <string>

namespace kvault {

std::string_view ToString(Backend backend) {
  switch (backend) {
    case Backend::kCpu: return "cpu";
    case Backend::kCuda: return "cuda";
    case Backend::kHip: return "hip";
  }
  return "?";
}

std::string_view ToString(Language language) {
  switch (language) {
    case Language::kCpp: return "cpp";
    case Language::kCuda: return "cuda";
    case Language::kHip: return "hip";
  }
  return "?";
}

Result<Backend> BackendFromString(std::string_view text) {
  for (Backend b : {Backend::kCpu, Backend::kCuda, Backend::kHip})
    if (text == ToString(b)) return b;
  return Error{"unknown backend '" + std::string(text) + "' (expected cpu, cuda or hip)"};
}

Result<Language> LanguageFromString(std::string_view text) {
  for (Language l : {Language::kCpp, Language::kCuda, Language::kHip})
    if (text == ToString(l)) return l;
  return Error{"unknown language '" + std::string(text) + "' (expected cpp, cuda or hip)"};
}

Result<Language> LanguageFromPath(std::string_view path) {
  size_t slash = path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  size_t dot = name.rfind('.');
  std::string_view ext = dot == std::string_view::npos ? "" : name.substr(dot);
  if (ext == ".cpp" || ext == ".cc" || ext == ".cxx") return Language::kCpp;
  if (ext == ".cu") return Language::kCuda;
  if (ext == ".hip") return Language::kHip;
  return Error{"cannot tell the language of '" + std::string(path) +
               "' (expected .cpp, .cc, .cxx, .cu or .hip)"};
}

}  // namespace kvault
