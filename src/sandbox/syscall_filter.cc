#include "sandbox/syscall_filter.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

namespace kvault {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kNativeArch = AUDIT_ARCH_X86_64;
constexpr bool kHasX32 = true;
#elif defined(__aarch64__)
constexpr uint32_t kNativeArch = AUDIT_ARCH_AARCH64;
constexpr bool kHasX32 = false;
#else
constexpr uint32_t kNativeArch = 0;
constexpr bool kHasX32 = false;
#endif

#ifdef SYS_clone3
constexpr uint32_t kClone3 = SYS_clone3;
#else
constexpr uint32_t kClone3 = 435;  // the same number on every architecture
#endif
constexpr uint32_t kX32Bit = 0x40000000;

constexpr uint32_t Errno(int e) { return SECCOMP_RET_ERRNO | (static_cast<uint32_t>(e) & SECCOMP_RET_DATA); }

}  // namespace

std::string InstallUserNamespaceFilter() {
  if (kNativeArch == 0) return "no system-call filter for this architecture";
  // The flags argument is the low word of args[0] on these little-endian machines;
  // CLONE_NEWUSER (0x10000000) lies in it.
  const uint32_t args0_low = offsetof(seccomp_data, args[0]);
  sock_filter program[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kNativeArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, Errno(EPERM)),  // another ABI
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, kHasX32 ? kX32Bit : 0xffffffffu, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, Errno(EPERM)),  // x32 numbers
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kClone3, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, Errno(ENOSYS)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(SYS_unshare), 1, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(SYS_clone), 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, args0_low),
      BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWUSER, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, Errno(EPERM)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog fprog{static_cast<unsigned short>(sizeof program / sizeof program[0]), program};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return std::string("set no_new_privs: ") + std::strerror(errno);
  if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) != 0)
    return std::string("install the seccomp filter: ") + std::strerror(errno);
  return "";
}

}  // namespace kvault
