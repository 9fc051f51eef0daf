// `kvault serve`: the reward service (docs/serve.md).
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "engine/worker_sandbox.h"
#include "geak/geak_import.h"
#include "serve/http_server.h"
#include "serve/service.h"
#include "util/child_process.h"
#include "util/files.h"
#include "util/env_vars.h"
#include "util/strings.h"

namespace kvault::cli {
namespace {

// How long running verifications may go on after SIGTERM or SIGINT before they are
// ended (their workers killed, nothing recorded).
constexpr std::chrono::seconds kStopGrace{10};

int Misuse(const std::string& why) {
  std::cerr << "kvault serve: " << why << "\n";
  return kExitMisuse;
}

Result<std::vector<int>> ParseDevices(const std::string& text) {
  std::vector<int> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    int d = -1;
    try {
      size_t used = 0;
      d = std::stoi(item, &used);
      if (used != item.size()) d = -1;
    } catch (...) {
    }
    if (d < 0 || d > 1023) return Error{"--devices: '" + item + "' is not a device index"};
    for (int seen : out)
      if (seen == d) return Error{"--devices: device " + item + " is listed twice"};
    out.push_back(d);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

Result<std::string> ReadToken(const std::string& token_file) {
  if (token_file.empty()) {
    return KvaultEnv("KVAULT_SERVE_TOKEN").value_or("");
  }
  auto text = ReadFile(token_file);
  if (!text) return Error{"--token-file: " + text.error()};
  std::string t = *text;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
  if (t.empty()) return Error{"--token-file: " + token_file + " is empty"};
  return t;
}

// Every *.py of a GEAK folder, split at its separator; files that cannot be split are
// reported and left out.
Result<serve::TritonSuite> LoadTritonSuite(const std::string& dir, const std::string& format) {
  serve::TritonSuite suite;
  auto f = GeakFormatFromString(format);
  if (!f) return Error{"--triton-format: unknown format '" + format + "'"};
  suite.format = *f;
  std::error_code ec;
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.is_regular_file()) names.push_back(entry.path().filename().string());
  if (ec) return Error{"--triton-suite: cannot read " + dir + ": " + ec.message()};
  for (const std::string& name : names) {
    if (name.size() < 4 || name.substr(name.size() - 3) != ".py" || name[0] == '_') continue;
    auto text = ReadFile(dir + "/" + name);
    if (!text) return Error{"--triton-suite: " + text.error()};
    auto parts = SplitGeakFile(*text);
    if (!parts) {
      std::cerr << "kvault serve: --triton-suite: " << name << " left out: " << parts.error() << "\n";
      continue;
    }
    suite.files.emplace_back(name, std::move(*parts));
  }
  std::sort(suite.files.begin(), suite.files.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  if (suite.files.empty()) return Error{"--triton-suite: no GEAK file in " + dir};
  return suite;
}

}  // namespace

int RunServe(const ServeFlags& flags) {
  auto devices = ParseDevices(flags.devices);
  if (!devices) return Misuse(devices.error());
  auto token = ReadToken(flags.token_file);
  if (!token) return Misuse(token.error());
  if (token->empty() && !serve::IsLoopback(flags.host))
    return Misuse("--host " + flags.host + " is reachable from other machines: give a token (--token-file or "
                  "$KVAULT_SERVE_TOKEN)");
  std::optional<serve::TritonSuite> triton;
  if (!flags.triton_suite.empty()) {
    auto suite = LoadTritonSuite(flags.triton_suite, flags.triton_format);
    if (!suite) return Misuse(suite.error());
    triton = std::move(*suite);
  }
  int options_exit = kExitOk;
  auto options = MakeOptions(flags.common, false, &options_exit);
  if (!options) return options_exit;
  const std::string db = ResolveDbPath(flags.db);
  HideStoreFromWorkers(*options, db);
  auto store = Store::Open(db);
  if (!store) {
    std::cerr << "kvault serve: " << store.error() << "\n";
    return kExitInfra;
  }

  // Signals are taken by one thread (below); every other thread, started after
  // this, has them blocked. Workers start with an empty mask (util/child_process.h).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  serve::ServiceSettings settings;
  settings.options = *options;
  settings.devices = *devices;
  settings.lanes_per_device = flags.lanes_per_device > 0 ? flags.lanes_per_device
                              : options->backend == Backend::kCpu ? 1 : 6;
  settings.queue_capacity = flags.queue;
  settings.compile_jobs = flags.compile_jobs;
  settings.work_dir = flags.work_dir.empty() ? db + ".serve" : flags.work_dir;
  // The socket first: a port in use fails before the lanes' workers start.
  serve::HttpSettings http;
  http.host = flags.host;
  http.port = flags.port;
  http.token = *token;
  http.max_body_bytes = static_cast<size_t>(flags.max_request_mb) << 20;
  http.defaults.run = flags.run;
  http.defaults.reward = options->reward;
  http.defaults.policy = options->policy;
  http.triton = std::move(triton);
  serve::HttpServer server(http);
  auto port = server.Bind();
  if (!port) {
    std::cerr << "kvault serve: " << port.error() << "\n";
    return kExitInfra;
  }
  std::cerr << "kvault serve: starting " << settings.lanes_per_device * devices->size() << " lane(s) on backend "
            << ToString(options->backend) << "\n";
  auto service = serve::VerificationService::Start(settings, **store);
  if (!service) {
    std::cerr << "kvault serve: " << service.error() << "\n";
    return kExitInfra;
  }
  if (!(*service)->Available())
    std::cerr << "kvault serve: warning: the first lane's workers did not start; /v1/health answers 503 until "
                 "one does\n";
  // The first signal: no new work, queued candidates dropped, running verifications
  // get kStopGrace to finish (and are recorded). Then, or at a second signal, the rest
  // end at once: every child's process group is killed and their results dropped.
  std::atomic<bool> done{false};
  std::thread stopper([&] {
    const timespec tick{0, 50 * 1000 * 1000};
    auto next_signal = [&](std::chrono::steady_clock::time_point until) {
      while (!done && std::chrono::steady_clock::now() < until) {
        const int sig = sigtimedwait(&stop_signals, nullptr, &tick);
        if (sig > 0) return sig;
      }
      return 0;
    };
    const int sig = next_signal(std::chrono::steady_clock::time_point::max());
    if (done) return;
    std::cerr << "kvault serve: stopping (" << (sig == SIGINT ? "SIGINT" : "SIGTERM") << "): running verifications get "
              << kStopGrace.count() << " s to finish and are recorded, queued ones are not verified; a second "
              << "signal ends them at once\n";
    (*service)->Stop();
    server.Stop();
    next_signal(std::chrono::steady_clock::now() + kStopGrace);
    if (done) return;
    std::cerr << "kvault serve: ending the running verifications (not recorded; submit them again)\n";
    (*service)->Abort();
    ChildProcess::StopAll();  // no build or worker starts from here on, none is called failed
    while (!done) {
      ChildProcess::KillAllGroups();  // and those a lane started meanwhile
      next_signal(std::chrono::steady_clock::now() + std::chrono::milliseconds(50));
    }
  });
  const std::string host = flags.host.find(':') != std::string::npos ? "[" + flags.host + "]" : flags.host;
  Json ready = {{"listening", "http://" + host + ":" + std::to_string(*port)},
                {"lanes", (*service)->Health()["lanes"]},
                {"devices", *devices},
                {"backend", std::string(ToString(options->backend))},
                {"db", db}};
  std::cout << ready.dump() << std::endl;
  server.Listen(**service);
  // Listen returns after Stop (a signal) or when the socket fails. The lanes end
  // (within the grace, or killed by the stopper) while the service still exists.
  (*service)->Stop();
  (*service)->Join();
  done = true;
  stopper.join();
  service->reset();
  return kExitOk;
}

}  // namespace kvault::cli
