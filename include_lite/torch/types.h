#pragma once
// The lite extension build's stand-in for PyTorch's <torch/types.h> (kvault_lite/api.h).
#include "kvault_lite/api.h"
