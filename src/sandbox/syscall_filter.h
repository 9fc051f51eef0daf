#pragma once
// A seccomp filter that keeps sandboxed programs from making user namespaces
// (docs/sandbox.md, "syscall_filter"). Without it a candidate, though left without
// capabilities, can unshare a user namespace of its own and hold every capability
// there: the mounts it sees are locked and gain it nothing, but it reaches far more
// of the kernel's code (mount, network and namespace paths) than a worker needs.
//
//   if (auto e = InstallUserNamespaceFilter(); !e.empty()) -> not installed, e says why
//
// What the filter refuses, for the calling thread and everything it starts later:
//  - unshare() and clone() with CLONE_NEWUSER: EPERM;
//  - clone3(): ENOSYS (its flags sit in memory a filter cannot read); the C library
//    falls back to clone(), which the filter can check;
//  - every call through another system-call ABI (i386 or x32 on x86-64): EPERM, so
//    the checks above cannot be sidestepped.
// Everything else is allowed. Sets no_new_privs first (the kernel requires it of a
// process without CAP_SYS_ADMIN). Linux on x86-64 and AArch64; elsewhere it returns
// an error and installs nothing.
#include <string>

namespace kvault {

std::string InstallUserNamespaceFilter();

}  // namespace kvault
