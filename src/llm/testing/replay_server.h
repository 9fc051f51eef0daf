#pragma once
// Test-only: runs tests/support/openai_replay_server.py (docs/llm-servers.md) as a
// child process on a free loopback port, with a given script, and reads its request
// log. Header-only. Used by one thread at a time.
//
//   auto server = ReplayServer::Start(R"({"rules": [], "default": {"content": "hi"}})");
//   if (!server) GTEST_SKIP() << server.error();   // e.g. no python3
//   settings.endpoint = server->url();
//   std::vector<Json> log = server->Log();
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "util/child_process.h"
#include "util/env_vars.h"
#include "util/files.h"
#include "util/json.h"
#include "util/json_parse.h"

namespace kvault::llm::testing {

class ReplayServer {
 public:
  // Error when python3 or the script is missing, or the server printed no port
  // within 10 s.
  static Result<ReplayServer> Start(const std::string& script_json) {
    std::string root = SourceRoot();
    std::string program = root + "/tests/support/openai_replay_server.py";
    if (!FileExists(program)) return Error{"replay server not found at " + program};
    auto dir = TempDir::Create("", "kvault-replay");
    if (!dir) return Error{dir.error()};
    std::string script = dir->Join("script.json"), log = dir->Join("log.jsonl");
    if (Status s = WriteFileAtomic(script, script_json); !s) return Error{s.error()};
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return Error{"pipe failed"};
    UniqueFd out_r(fds[0]), out_w(fds[1]);
    ChildProcess::Spec spec;
    spec.argv = {"python3", program, "--script", script, "--log", log, "--port", "0"};
    spec.fds = {{1, out_w.get()}};
    auto child = ChildProcess::Spawn(spec);
    if (!child) return Error{"cannot start python3: " + child.error()};
    out_w.reset();
    std::string line;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (line.find('\n') == std::string::npos) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd p{out_r.get(), POLLIN, 0};
      if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) {
        return Error{"replay server printed no port within 10 s"};
      }
      char buf[256];
      ssize_t n = read(out_r.get(), buf, sizeof buf);
      if (n <= 0) return Error{"replay server exited before printing its port: " + line};
      line.append(buf, static_cast<size_t>(n));
    }
    if (!line.starts_with("PORT ")) return Error{"replay server printed '" + line + "', not PORT <n>"};
    int port = std::stoi(line.substr(5));
    return ReplayServer(std::move(*dir), std::move(*child), port, log);
  }

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // Every line of the request log so far, parsed; lines with "done" included.
  std::vector<Json> Log() const {
    std::vector<Json> out;
    std::ifstream in(log_);
    for (std::string line; std::getline(in, line);) {
      if (auto j = ParseJson(line)) out.push_back(std::move(*j));
    }
    return out;
  }
  // The log's request lines only (those without "done").
  std::vector<Json> Requests() const {
    std::vector<Json> out;
    for (auto& j : Log()) {
      if (!j.contains("done")) out.push_back(j);
    }
    return out;
  }

 private:
  ReplayServer(TempDir dir, ChildProcess child, int port, std::string log)
      : dir_(std::move(dir)), child_(std::move(child)), port_(port), log_(std::move(log)) {}
  TempDir dir_;
  ChildProcess child_;  // killed (process group) and reaped on destruction
  int port_;
  std::string log_;
};

}  // namespace kvault::llm::testing
