#pragma once
// KernelVault compile-only shim (see ../../../README.md): the masquerading guards,
// declared with the shapes of the plain HIP guards.
#include <ATen/hip/impl/HIPStreamMasqueradingAsCUDA.h>
#include <c10/hip/HIPGuard.h>

namespace c10 {
namespace hip {

using HIPGuardMasqueradingAsCUDA = HIPGuard;
using OptionalHIPGuardMasqueradingAsCUDA = OptionalHIPGuard;
using HIPStreamGuardMasqueradingAsCUDA = HIPStreamGuard;
using OptionalHIPStreamGuardMasqueradingAsCUDA = OptionalHIPStreamGuard;

}  // namespace hip
}  // namespace c10
