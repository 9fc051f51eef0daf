#pragma once
// KernelVault's light <torch/extension.h> for the fast extension build
// (docs/toolchains.md, "Fast extension builds"). Put first on the include path of a
// candidate's compile, it stands in for PyTorch's header: the same ATen, c10 and
// torch:: tensor declarations (<torch/types.h>), without the C++ frontend (nn, optim,
// data, serialize, jit), pybind11 or Python's C API, whose code g++ otherwise
// instantiates and optimises again in every translation unit. PYBIND11_MODULE
// records the module's functions for binding.cc, compiled once and linked in.
//
// A source this header does not compile is built with PyTorch's own. One it compiles
// could in principle mean something else with PyTorch's (an overload only the full
// header declares), which is why the build uses this header only when asked
// (KVAULT_FAST_EXT=1) until it checks the source's names against the full header's.
#include <torch/types.h>

#include <kvault_ext/module.h>

#define KVAULT_EXT_CAT2(a, b) a##b
#define KVAULT_EXT_CAT(a, b) KVAULT_EXT_CAT2(a, b)
#define KVAULT_EXT_STR2(x) #x
#define KVAULT_EXT_STR(x) KVAULT_EXT_STR2(x)

#define PYBIND11_MODULE(name, variable)                                                     \
  static void KVAULT_EXT_CAT(kvault_ext_body_, name)(::kvault_ext::Module&);               \
  extern "C" __attribute__((visibility("default"))) ::kvault_ext::PyObjectPtr KVAULT_EXT_CAT( \
      PyInit_, name)() {                                                                    \
    return ::kvault_ext::InitModule(KVAULT_EXT_STR(name), &KVAULT_EXT_CAT(kvault_ext_body_, name)); \
  }                                                                                         \
  void KVAULT_EXT_CAT(kvault_ext_body_, name)(::kvault_ext::Module & (variable))
