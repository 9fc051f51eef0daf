#include "sandbox/policy.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>

#include "util/env.h"
#include "util/env_vars.h"

namespace kvault {
namespace {

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kCompileDataDefaultCap = 16ull << 30;

Result<uint64_t> EnvMegabytes(EnvName name, uint64_t fallback) {
  auto v = KvaultEnv(name);
  if (!v || v->empty()) return fallback;
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  if (ec != std::errc() || end != v->data() + v->size() || n > (1ull << 40))
    return Error{std::string(name.view()) + " must be a whole number, not '" + *v + "'"};
  return n;
}

uint64_t PhysicalMemoryBytes() {
  long pages = ::sysconf(_SC_PHYS_PAGES), size = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(size) : 0;
}

bool Allowed(std::string_view name, const std::vector<std::string>& allow) {
  for (const auto& a : allow) {
    if (!a.empty() && a.back() == '*') {
      if (name.starts_with(std::string_view(a).substr(0, a.size() - 1))) return true;
    } else if (name == a) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::string_view ToString(SandboxMode m) {
  switch (m) {
    case SandboxMode::kOff: return "off";
    case SandboxMode::kAuto: return "auto";
    case SandboxMode::kStrict: return "strict";
  }
  return "off";
}

std::optional<SandboxMode> ParseSandboxMode(std::string_view s) {
  if (s == "off") return SandboxMode::kOff;
  if (s == "auto") return SandboxMode::kAuto;
  if (s == "strict") return SandboxMode::kStrict;
  return std::nullopt;
}

std::vector<std::string> DefaultEnvAllowList() {
  return {"PATH", "LANG", "LANGUAGE", "LC_*", "TZ", "TERM",
          "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
          "CUDA_HOME", "CUDA_PATH", "ROCM_PATH", "ROCM_HOME", "HIP_PATH", "HIP_PLATFORM",
          "LD_LIBRARY_PATH", "NVIDIA_*", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
          "KVAULT_WORKER_FDS", "KVAULT_PYTHON", "KVAULT_SOURCE_ROOT"};
}

Result<SandboxPolicy> PolicyFromEnvironment(bool cpu_backend) {
  SandboxPolicy p;
  p.mode = SandboxMode::kAuto;
  if (auto m = KvaultEnv("KVAULT_SANDBOX"); m && !m->empty()) {
    auto parsed = ParseSandboxMode(*m);
    if (!parsed) return Error{"KVAULT_SANDBOX must be off, auto or strict, not '" + *m + "'"};
    p.mode = *parsed;
  }
  auto mem = EnvMegabytes("KVAULT_SANDBOX_MEMORY_MB", PhysicalMemoryBytes() / 2 / kMiB);
  if (!mem) return Error{mem.error()};
  auto file = EnvMegabytes("KVAULT_SANDBOX_FILE_MB", 16384);
  if (!file) return Error{file.error()};
  auto cpu = EnvMegabytes("KVAULT_SANDBOX_CPU_S", 7200);
  if (!cpu) return Error{cpu.error()};
  auto tmp = EnvMegabytes("KVAULT_SANDBOX_SCRATCH_MB", 1024);
  if (!tmp) return Error{tmp.error()};
  if (*tmp == 0) return Error{"KVAULT_SANDBOX_SCRATCH_MB must be at least 1"};
  p.private_scratch_bytes = *tmp * kMiB;
  p.limits.address_space_bytes = cpu_backend ? *mem * kMiB : 0;
  // A compile's heap: `#include "/dev/zero"` made cc1plus grow by a GB a second until
  // the host ran out. An honest one takes 1-3 GB (PyTorch's headers under g++).
  const bool mem_given = KvaultEnv("KVAULT_SANDBOX_MEMORY_MB").value_or("") != "";
  p.compile_data_bytes = mem_given ? *mem * kMiB : std::min(*mem * kMiB, kCompileDataDefaultCap);
  p.limits.file_size_bytes = *file * kMiB;
  p.limits.cpu_seconds = *cpu;
  p.limits.open_files = 4096;
  p.limits.processes = 4096;
  p.env_allow = DefaultEnvAllowList();
  return p;
}

std::vector<std::string> ScrubEnvironment(const std::vector<std::string>& env,
                                          const SandboxPolicy& policy) {
  std::vector<std::string> out;
  for (const auto& e : env) {
    auto eq = e.find('=');
    if (eq == std::string::npos) continue;
    std::string_view name(e.data(), eq);
    bool overridden = false;
    for (const auto& [n, v] : policy.env_set) overridden |= (n == name);
    if (overridden) continue;
    if (!policy.scrub_environment || Allowed(name, policy.env_allow)) out.push_back(e);
  }
  for (const auto& [n, v] : policy.env_set) out.push_back(n + "=" + v);
  return out;
}

Json PolicyToJson(const SandboxPolicy& p) {
  Json env_set = Json::array();
  for (const auto& [n, v] : p.env_set) env_set.push_back(Json::array({n, v}));
  return Json{{"mode", std::string(ToString(p.mode))},
              {"pid_namespace", p.pid_namespace},
              {"network_namespace", p.network_namespace},
              {"mount_namespace", p.mount_namespace},
              {"ipc_namespace", p.ipc_namespace},
              {"limits", Json{{"cpu_seconds", p.limits.cpu_seconds},
                              {"address_space_bytes", p.limits.address_space_bytes},
                              {"file_size_bytes", p.limits.file_size_bytes},
                              {"open_files", p.limits.open_files},
                              {"processes", p.limits.processes},
                              {"data_bytes", p.limits.data_bytes},
                              {"no_core_dumps", p.limits.no_core_dumps}}},
              {"hidden", p.hidden},
              {"visible", p.visible},
              {"private_scratch_bytes", p.private_scratch_bytes},
              {"writable", p.writable},
              {"private_dir", p.private_dir},
              {"scrub_environment", p.scrub_environment},
              {"env_allow", p.env_allow},
              {"env_set", env_set},
              {"keep_capabilities", p.keep_capabilities}};
}

Result<SandboxPolicy> PolicyFromJson(const Json& j) {
  try {
    SandboxPolicy p;
    auto mode = ParseSandboxMode(j.at("mode").get<std::string>());
    if (!mode) return Error{"sandbox plan: unknown mode"};
    p.mode = *mode;
    p.pid_namespace = j.at("pid_namespace").get<bool>();
    p.network_namespace = j.at("network_namespace").get<bool>();
    p.mount_namespace = j.at("mount_namespace").get<bool>();
    const Json& l = j.at("limits");
    p.limits.cpu_seconds = l.at("cpu_seconds").get<uint64_t>();
    p.limits.address_space_bytes = l.at("address_space_bytes").get<uint64_t>();
    p.limits.file_size_bytes = l.at("file_size_bytes").get<uint64_t>();
    p.limits.open_files = l.at("open_files").get<uint64_t>();
    p.limits.processes = l.at("processes").get<uint64_t>();
    p.limits.no_core_dumps = l.at("no_core_dumps").get<bool>();
    p.limits.data_bytes = l.value("data_bytes", uint64_t{0});  // optional: older plans set none
    p.hidden = j.at("hidden").get<std::vector<std::string>>();
    p.writable = j.at("writable").get<std::vector<std::string>>();
    p.private_dir = j.at("private_dir").get<std::string>();
    p.scrub_environment = j.at("scrub_environment").get<bool>();
    p.env_allow = j.at("env_allow").get<std::vector<std::string>>();
    for (const Json& kv : j.at("env_set"))
      p.env_set.emplace_back(kv.at(0).get<std::string>(), kv.at(1).get<std::string>());
    // Optional: plans written before the field existed drop every capability.
    if (auto it = j.find("keep_capabilities"); it != j.end()) p.keep_capabilities = it->get<bool>();
    // Optional too: older plans have no IPC namespace, nothing visible under a hidden
    // folder and the host's /dev/shm.
    p.ipc_namespace = j.value("ipc_namespace", false);
    if (auto it = j.find("visible"); it != j.end()) p.visible = it->get<std::vector<std::string>>();
    p.private_scratch_bytes = j.value("private_scratch_bytes", uint64_t{0});
    return p;
  } catch (const std::exception& e) {
    return Error{std::string("sandbox plan is malformed: ") + e.what()};
  }
}

}  // namespace kvault
