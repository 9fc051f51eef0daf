#pragma once
// Every KVAULT_* environment variable that KernelVault reads: the engine (`kvault`),
// the worker it starts (python/kvault_worker) and the Python package
// (python/kernelvault). docs/environment.md is made from this table
// (env_vars_test.cc fails when the two differ, and when code under src/ or python/
// names a KVAULT_ variable the table lacks).
//
// The engine reads its variables only through KvaultEnv, whose argument must be a
// name of this table: a misspelt or unlisted name does not compile.
//
//   if (auto v = KvaultEnv("KVAULT_PYTHON"); v && !v->empty()) python = *v;
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace kvault {

// Who reads a variable. kEngineSets: the engine sets it for the processes it starts;
// nobody sets it by hand.
enum class EnvReader { kEngine, kWorker, kEngineSets, kClient };

struct EnvVar {
  std::string_view name;
  EnvReader reader;
  std::string_view default_value;  // as the docs say it
  std::string_view meaning;        // one line; docs/*.md named where the details are
};

// Sorted by name.
inline constexpr EnvVar kEnvVars[] = {
    {"KVAULT_API_KEY", EnvReader::kEngine, "unset",
     "`kvault gen`'s key for its LLM endpoint when `--api-key-env` names none (then `OPENAI_API_KEY`)"},
    {"KVAULT_BIN", EnvReader::kClient, "the checkout's `build/kvault`, else `kvault` on `PATH`",
     "the `kvault` binary a Ray node runs (docs/cluster.md)"},
    {"KVAULT_CACHE_DIR", EnvReader::kEngine, "`$XDG_CACHE_HOME/kvault`, else `~/.cache/kvault`",
     "compile cache, reference outputs, scratch (docs/cache.md)"},
    {"KVAULT_CACHE_MAX_GB", EnvReader::kEngine, "`20`",
     "bound of the cache folder, least recently used entries evicted past it; a number >= 0 "
     "(`0.5`), anything else is misuse (exit 2)"},
    {"KVAULT_CXX", EnvReader::kEngine, "`g++` on `PATH`", "the C++ compiler of CPU builds (docs/toolchains.md)"},
    {"KVAULT_DB", EnvReader::kEngine, "`./kvault.db`",
     "the store when `--db` is not given; also the Ray driver's (docs/store.md)"},
    {"KVAULT_DEVICE_COMPARE_MIN_BYTES", EnvReader::kEngine, "`16777216`",
     "cases whose tensor inputs reach this many bytes compare outputs on the device; `0` every case, "
     "negative never; not a whole number: every worker start fails saying so (docs/device-compare.md)"},
    {"KVAULT_GROUP_TURNS", EnvReader::kEngine, "`on`",
     "`off`: every candidate is timed in a turn of its own (docs/timing.md, \"Group turns\"); another "
     "value: every worker start fails saying so"},
    {"KVAULT_HELD_OUT_KEY", EnvReader::kEngine, "128 random bits drawn per process",
     "the secret the larger held-out case's sizes are drawn from; set it only to check a verdict again "
     "at the same sizes, and keep it from candidates (docs/adversarial.md, \"Hard-coded shapes\")"},
    {"KVAULT_HIPCC", EnvReader::kEngine, "`hipcc` on `PATH`", "the HIP compiler (docs/toolchains.md)"},
    {"KVAULT_LITE_EXT", EnvReader::kEngine, "`1`",
     "`0`: extension builds skip the lite extension build (docs/toolchains.md, \"The lite extension build\")"},
    {"KVAULT_NVCC", EnvReader::kEngine, "`nvcc` on `PATH`", "the CUDA compiler (docs/toolchains.md)"},
    {"KVAULT_PCH", EnvReader::kEngine, "`1`",
     "`0`: g++ extension builds without the precompiled PyTorch header (docs/toolchains.md)"},
    {"KVAULT_PYTHON", EnvReader::kEngine, "`python3` (a Ray node: the checkout's `.venv/bin/python`)",
     "the interpreter of the worker processes; must import torch"},
    {"KVAULT_RETRIES", EnvReader::kClient, "`6`",
     "further HTTP tries of the trainer adapters' shared client (docs/rl.md)"},
    {"KVAULT_SANDBOX", EnvReader::kEngine, "`auto`",
     "worker sandbox: `off`, `auto` (every layer the host offers) or `strict` (docs/sandbox.md)"},
    {"KVAULT_SANDBOX_CPU_S", EnvReader::kEngine, "`7200`", "CPU seconds per worker process, a backstop behind the engine's timeouts (docs/sandbox.md)"},
    {"KVAULT_SANDBOX_FILE_MB", EnvReader::kEngine, "`16384`",
     "largest file a worker may write, MiB (docs/sandbox.md)"},
    {"KVAULT_SANDBOX_HIDE", EnvReader::kEngine, "unset",
     "more folders, `:`-separated, candidate workers must not see (docs/sandbox.md)"},
    {"KVAULT_SANDBOX_MEMORY_MB", EnvReader::kEngine, "half the physical memory",
     "address-space limit of a CPU-backend worker and heap limit of a compile of candidate code (unset: at most 16 GiB), MiB, `0` none (docs/sandbox.md)"},
    {"KVAULT_SANDBOX_SCRATCH_BYTES", EnvReader::kEngineSets, "`0`",
     "the size of each worker's private `/dev/shm`, for the zygote's forks (from `KVAULT_SANDBOX_SCRATCH_MB`)"},
    {"KVAULT_SANDBOX_SCRATCH_MB", EnvReader::kEngine, "`1024`",
     "size of each worker's own `/dev/shm`, holding its `HOME` and `TMPDIR`, MiB, at least 1 (docs/sandbox.md)"},
    {"KVAULT_SERVE_TOKEN", EnvReader::kEngine, "unset",
     "`kvault serve`'s bearer token when `--token-file` names none; also the cluster front's (docs/serve.md)"},
    {"KVAULT_SERVE_TOKEN_FILE", EnvReader::kClient, "unset",
     "the cluster front's `--token-file` default (docs/cluster.md)"},
    {"KVAULT_SOURCE_ROOT", EnvReader::kEngine, "the source tree the binary was built from",
     "folder holding `python/`, `include/`, `include_hip/`, `include_lite/` and `prompts/`"},
    {"KVAULT_TIMEOUT_S", EnvReader::kClient, "`1800`",
     "seconds the trainer adapters' shared client waits for a result (docs/rl.md)"},
    {"KVAULT_TOKEN", EnvReader::kClient, "unset", "the bearer token the Python client sends (docs/rl.md)"},
    {"KVAULT_URL", EnvReader::kClient, "`http://127.0.0.1:8470`", "the server the Python client calls (docs/rl.md)"},
    {"KVAULT_WORKER_FDS", EnvReader::kEngineSets, "`3,4`",
     "the worker's protocol fds, read and write (docs/worker-protocol.md)"},
    {"KVAULT_WORKER_PROFILE", EnvReader::kWorker, "unset",
     "a folder: every worker request is profiled into it, with `KVAULT_SANDBOX=off` "
     "(docs/worker-protocol.md, \"Profiling a worker\")"},
    {"KVAULT_ZYGOTE", EnvReader::kEngine, "`on`",
     "`off`: every candidate worker starts from scratch, not forked from a pre-imported zygote "
     "(docs/worker-protocol.md, \"Zygote\"); another value: every worker start fails saying so"},
    {"KVAULT_ZYGOTE_DROP_CAPS", EnvReader::kEngineSets, "unset",
     "`1`: the zygote's forks drop every capability (docs/worker-protocol.md, \"Zygote\")"},
    {"KVAULT_ZYGOTE_ENTRY", EnvReader::kWorker, "`kvault_worker.protocol:main`",
     "the function a zygote's fork runs; set only by tests, which replace the worker with it"},
    {"KVAULT_ZYGOTE_FD", EnvReader::kEngineSets, "`3`", "the zygote's socket with the engine"},
};

// The entry of `name`; nullptr when the table has none.
constexpr const EnvVar* FindEnvVar(std::string_view name) {
  for (const EnvVar& v : kEnvVars)
    if (v.name == name) return &v;
  return nullptr;
}

// A name of kEnvVars, checked while compiling: constructing one from any other
// string is not a constant expression, so the call does not compile.
class EnvName {
 public:
  consteval EnvName(const char* name) : name_(name) {  // NOLINT: implicit by design
    if (FindEnvVar(name_) == nullptr) throw "not a KVAULT_ variable of util/env_vars.h";
  }
  std::string_view view() const { return name_; }

 private:
  std::string_view name_;
};

// The variable's value, nullopt when unset ("" when set empty), as GetEnv.
std::optional<std::string> KvaultEnv(EnvName name);

// $KVAULT_SOURCE_ROOT when set and not empty, else the source tree the binary was
// built from.
std::string SourceRoot();

// docs/environment.md, made from kEnvVars.
std::string EnvironmentDoc();

}  // namespace kvault
