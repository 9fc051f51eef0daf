#pragma once
// What a compiler needs to know about the worker's PyTorch to build an extension
// against it. It comes from the `build` object of the worker's `hello` response
// (docs/worker-protocol.md), so the engine never imports torch itself.
//
//   auto info = TorchBuildInfo::FromHelloResponse(hello);   // or FromHello(hello["build"])
//   if (!info) return Error{info.error()};
#include <string>
#include <vector>

#include "util/json.h"
#include "util/result.h"

namespace kvault {

struct TorchBuildInfo {
  std::vector<std::string> include_paths;  // torch/include, torch/csrc/api/include, ...
  std::vector<std::string> library_paths;  // where libc10.so, libtorch*.so live
  std::vector<std::string> libraries;      // e.g. c10 torch torch_cpu torch_python
  bool cxx11_abi = true;                   // -D_GLIBCXX_USE_CXX11_ABI=1 or 0
  std::string cxx_standard = "c++17";      // -std= of extension builds: PyTorch's own choice
  std::string python_include;              // directory holding Python.h
  std::string ext_suffix;                  // e.g. ".cpython-312-x86_64-linux-gnu.so"
  std::string torch_version;               // e.g. "2.11.0+cu130"; part of the cache key

  // Reads a hello response's `build` object. Required: include_paths (non-empty
  // array of strings), library_paths and libraries (arrays of strings),
  // python_include (string). Optional: cxx11_abi (Default: true), cxx_standard
  // ("c++" and two digits; Default: "c++17"), ext_suffix (Default: ""), torch_version
  // (Default: ""). Error names the bad field.
  static Result<TorchBuildInfo> FromHello(const Json& build);

  // Reads a whole hello response: its `build` object, with torch_version taken from
  // the response's `torch` field when `build` has none.
  static Result<TorchBuildInfo> FromHelloResponse(const Json& hello);
};

}  // namespace kvault
