#include "toolchain/torch_build_info.h"

#include <regex>

namespace kvault {
namespace {

Status ReadStrings(const Json& build, const char* key, bool required_non_empty,
                   std::vector<std::string>* out) {
  auto it = build.find(key);
  if (it == build.end() || !it->is_array())
    return Error{std::string("build.") + key + " is missing or not an array"};
  for (const Json& v : *it) {
    if (!v.is_string()) return Error{std::string("build.") + key + " holds a non-string"};
    out->push_back(v.get<std::string>());
  }
  if (required_non_empty && out->empty()) return Error{std::string("build.") + key + " is empty"};
  return Status::Ok();
}

Status ReadString(const Json& build, const char* key, bool required, std::string* out) {
  auto it = build.find(key);
  if (it == build.end() || it->is_null()) {
    if (required) return Error{std::string("build.") + key + " is missing"};
    return Status::Ok();
  }
  if (!it->is_string()) return Error{std::string("build.") + key + " is not a string"};
  *out = it->get<std::string>();
  return Status::Ok();
}

}  // namespace

Result<TorchBuildInfo> TorchBuildInfo::FromHello(const Json& build) {
  if (!build.is_object()) return Error{"build is not a JSON object"};
  TorchBuildInfo info;
  for (Status s : {ReadStrings(build, "include_paths", true, &info.include_paths),
                   ReadStrings(build, "library_paths", false, &info.library_paths),
                   ReadStrings(build, "libraries", false, &info.libraries),
                   ReadString(build, "python_include", true, &info.python_include),
                   ReadString(build, "ext_suffix", false, &info.ext_suffix),
                   ReadString(build, "cxx_standard", false, &info.cxx_standard),
                   ReadString(build, "torch_version", false, &info.torch_version)}) {
    if (!s) return Error{s.error()};
  }
  static const std::regex standard("c\\+\\+[0-9]{2}");
  if (!std::regex_match(info.cxx_standard, standard))
    return Error{"build.cxx_standard is not of the form c++17: " + info.cxx_standard};
  if (auto it = build.find("cxx11_abi"); it != build.end() && !it->is_null()) {
    if (!it->is_boolean()) return Error{"build.cxx11_abi is not a boolean"};
    info.cxx11_abi = it->get<bool>();
  }
  return info;
}

Result<TorchBuildInfo> TorchBuildInfo::FromHelloResponse(const Json& hello) {
  if (!hello.is_object() || !hello.contains("build")) return Error{"hello response has no build object"};
  auto info = FromHello(hello["build"]);
  if (!info) return info;
  if (info->torch_version.empty()) {
    if (auto it = hello.find("torch"); it != hello.end() && it->is_string())
      info->torch_version = it->get<std::string>();
  }
  return info;
}

}  // namespace kvault
