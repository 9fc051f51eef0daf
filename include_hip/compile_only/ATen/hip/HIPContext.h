#pragma once
// KernelVault compile-only shim (see ../../README.md).
#include <ATen/Context.h>
#include <ATen/hip/HIPContextLight.h>
