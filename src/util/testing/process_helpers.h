#pragma once
// Test-only helpers for checking that processes were cleaned up. Header-only.
#include <signal.h>
#include <sys/types.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace kvault::testing {

// True when `pid` no longer runs: it does not exist, or it is a zombie (dead, waiting
// for a parent that is not us to reap it). Waits up to `patience` for that to happen.
inline bool ProcessGone(pid_t pid, std::chrono::milliseconds patience = std::chrono::seconds(3)) {
  auto deadline = std::chrono::steady_clock::now() + patience;
  while (true) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (std::getline(stat, line)) {
      size_t paren = line.rfind(')');
      if (paren != std::string::npos && paren + 2 < line.size()) {
        char state = line[paren + 2];
        if (state == 'Z' || state == 'X') return true;
      }
    }
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// True once no live process has `comm` (/proc/PID/comm, at most 15 characters) as
// its name, within `patience`.
inline bool NoProcessNamed(const std::string& comm,
                           std::chrono::milliseconds patience = std::chrono::seconds(3)) {
  auto deadline = std::chrono::steady_clock::now() + patience;
  while (true) {
    bool found = false;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
      const std::string pid = entry.path().filename().string();
      if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream in(entry.path() / "comm");
      std::string name;
      if (std::getline(in, name) && name == comm && !ProcessGone(std::stoi(pid), std::chrono::milliseconds(0))) {
        found = true;
        break;
      }
    }
    if (!found) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Reads a pid that a test program wrote into `path`, waiting up to 5 s for it.
inline pid_t ReadPidFile(const std::string& path) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(path);
    long pid = 0;
    if (in >> pid && pid > 0) return static_cast<pid_t>(pid);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

}  // namespace kvault::testing
