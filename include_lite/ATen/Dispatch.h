#pragma once
// The lite extension build's stand-in for PyTorch's <ATen/Dispatch.h> (kvault_lite/api.h
// holds the AT_DISPATCH_* macros).
#include "kvault_lite/api.h"
