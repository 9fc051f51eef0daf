#include <iostream>

#include "cli/commands.h"
#include "engine/backend_probe.h"
#include "engine/engine_env.h"
#include "engine/worker_sandbox.h"
#include "kvault/build_config.h"
#include "toolchain/tools.h"

namespace kvault::cli {

int RunDoctor(bool json) {
  EngineOptions o;
  ApplyEnvironment(o);
  Json report{{"engine_version", KVAULT_VERSION}, {"python", o.python},
              {"source_root", o.source_root}, {"cache_dir", o.cache_dir}};
  Json tools = Json::array();
  for (const ToolInfo& t : DiscoverTools())
    tools.push_back(Json{{"name", t.name}, {"path", t.path}, {"version", t.version},
                         {"found", t.found}, {"note", t.note}});
  report["toolchains"] = tools;
  // Other clangs and the AMD targets only they know (docs/toolchains.md, "gfx942 and gfx950").
  Json clangs = Json::array();
  for (const ToolInfo& t : DiscoverOtherClangs())
    clangs.push_back(Json{{"name", t.name}, {"path", t.path}, {"version", t.version}, {"found", t.found},
                          {"offload_arches", t.offload_arches}, {"note", t.note}});
  report["other_clangs"] = clangs;
  // The sandbox of a candidate worker on the CPU backend (docs/sandbox.md).
  auto sandbox = SandboxWorkerCommand(o, /*candidate=*/true, /*cpu_backend=*/true, {o.python}, {});
  report["sandbox"] = Json{{"mode", std::string(ToString(o.sandbox.mode))},
                           {"layers", sandbox ? sandbox->layers : Json::array()},
                           {"error", sandbox ? std::string() : sandbox.error()}};
  auto probe = ProbeBackends(o);
  Json backends = Json::object();
  std::string chosen = "none";
  if (probe) {
    report["worker"] = probe->hello;
    for (const std::string b : {"cpu", "cuda", "hip"}) {
      bool usable = false;
      for (const auto& a : probe->available) usable |= (a == b);
      std::string why;
      const Json& reasons = probe->hello.value("unavailable_reasons", Json::object());
      if (!usable) why = reasons.value(b, std::string("not reported usable by the worker"));
      backends[b] = Json{{"usable", usable}, {"reason", why}};
    }
    chosen = std::string(ToString(ChooseBackend(*probe)));
  } else {
    report["worker_error"] = probe.error();
    for (const std::string b : {"cpu", "cuda", "hip"})
      backends[b] = Json{{"usable", false}, {"reason", "no worker: " + probe.error()}};
  }
  report["backends"] = backends;
  report["auto_backend"] = chosen;
  if (json) {
    std::cout << report.dump(2) << std::endl;
    return probe ? kExitOk : kExitInfra;
  }
  std::cout << "kvault " << KVAULT_VERSION << "\n";
  std::cout << "worker python: " << o.python << "  (set KVAULT_PYTHON to change)\n";
  std::cout << "source root:   " << o.source_root << "\ncache:         " << o.cache_dir << "\n\n";
  std::cout << "toolchains:\n";
  for (const Json& t : tools)
    std::cout << "  " << (t["found"].get<bool>() ? "[ok]      " : "[missing] ") << t["name"].get<std::string>()
              << "  " << t["version"].get<std::string>() << "  " << t["path"].get<std::string>()
              << (t["note"].get<std::string>().empty() ? "" : "\n              " + t["note"].get<std::string>())
              << "\n";
  for (const Json& t : clangs)
    std::cout << "  [other]   " << t["name"].get<std::string>() << "  " << t["version"].get<std::string>() << "  "
              << t["path"].get<std::string>() << "\n              " << t["note"].get<std::string>() << "\n";
  if (probe) {
    std::cout << "\nworker: python " << probe->hello.value("python", std::string("?")) << ", torch "
              << probe->hello.value("torch", std::string("?")) << "\n";
  } else {
    std::cout << "\nworker: cannot start: " << probe.error() << "\n";
  }
  std::cout << "\nbackends:\n";
  for (const auto& [b, info] : backends.items())
    std::cout << "  " << (info["usable"].get<bool>() ? "[usable]   " : "[unusable] ") << b
              << (info["usable"].get<bool>() ? "" : "  -- " + info["reason"].get<std::string>()) << "\n";
  std::cout << "\nauto backend: " << chosen << "\n";
  std::cout << "\nsandbox (KVAULT_SANDBOX=" << ToString(o.sandbox.mode) << "), candidate worker:\n";
  if (!sandbox) std::cout << "  cannot sandbox workers: " << sandbox.error() << "\n";
  for (const Json& l : report["sandbox"]["layers"])
    std::cout << "  [" << l["state"].get<std::string>() << "] " << l["layer"].get<std::string>()
              << "  -- " << l["detail"].get<std::string>() << "\n";
  return probe ? kExitOk : kExitInfra;
}

}  // namespace kvault::cli
