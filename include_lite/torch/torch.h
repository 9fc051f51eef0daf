#pragma once
// The lite extension build's stand-in for PyTorch's <torch/torch.h>, which in an
// extension build (TORCH_API_INCLUDE_EXTENSION_H, defined by every build) includes
// <torch/extension.h>, whose stand-in is kvault_lite/api.h. A source that undefines the
// macro gets PyTorch's C++ frontend without the binding: the full build.
#ifndef TORCH_API_INCLUDE_EXTENSION_H
#error "kvault lite extension build: <torch/torch.h> without TORCH_API_INCLUDE_EXTENSION_H (the full build is used)"
#endif
#include "kvault_lite/api.h"
