#include "util/env_vars.h"

#include "kvault/build_config.h"
#include "util/env.h"

namespace kvault {
namespace {

std::string_view ReaderText(EnvReader r) {
  switch (r) {
    case EnvReader::kEngine: return "engine";
    case EnvReader::kWorker: return "worker";
    case EnvReader::kEngineSets: return "set by the engine";
    case EnvReader::kClient: return "Python package";
  }
  return "?";
}

}  // namespace

std::optional<std::string> KvaultEnv(EnvName name) { return GetEnv(std::string(name.view())); }

std::string SourceRoot() {
  if (auto root = KvaultEnv("KVAULT_SOURCE_ROOT"); root && !root->empty()) return *root;
  return KVAULT_DEFAULT_SOURCE_ROOT;
}

std::string EnvironmentDoc() {
  std::string out =
      "# Environment variables\n\n"
      "Every `KVAULT_*` variable KernelVault reads, made from the table in\n"
      "`src/util/env_vars.h` (the engine reads them only through it; a test fails when\n"
      "this page, or code under `src/` or `python/`, differs from it; Python reads them\n"
      "from `os.environ`, and `python/tests/test_environment_table.py` fails naming any\n"
      "it reads that the table lacks). Read by: `engine`,\n"
      "the `kvault` binary; `worker`, the worker processes it starts; `Python package`,\n"
      "`python/kernelvault` (the client, trainer adapters and Ray cluster); `set by the\n"
      "engine`, for the processes it starts, never by hand. An empty value counts as\n"
      "unset unless the meaning says otherwise.\n\n"
      "| variable | read by | default | meaning |\n"
      "|---|---|---|---|\n";
  for (const EnvVar& v : kEnvVars) {
    out += "| `";
    out += v.name;
    out += "` | ";
    out += ReaderText(v.reader);
    out += " | ";
    out += v.default_value;
    out += " | ";
    out += v.meaning;
    out += " |\n";
  }
  return out;
}

}  // namespace kvault
