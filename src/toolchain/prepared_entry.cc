#include "toolchain/prepared_entry.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "util/child_process.h"
#include "util/files.h"
#include "util/json.h"
#include "util/strings.h"
#include "util/subprocess.h"

namespace kvault {
namespace {

constexpr size_t kMaxDiagnostics = 16 * 1024;
constexpr char kFailedName[] = "failed.json";

bool Complete(const CacheEntry& e, const std::vector<std::string>& outputs) {
  for (const std::string& name : outputs)
    if (!FileExists(e.Path(name))) return false;
  return true;
}

}  // namespace

Result<CacheEntry> EnsurePreparedEntry(const PreparedEntry& spec, const std::string& cache_root,
                                       std::chrono::milliseconds timeout) {
  const std::string hex = spec.key.Hex();
  auto limits = CacheLimits::FromEnv();
  if (!limits) return Error{limits.error()};
  Cache cache(cache_root, "pch", *limits);
  auto settled = [&](CountLookup count) -> std::optional<Result<CacheEntry>> {
    auto entry = cache.Lookup(hex, count);
    if (!entry) return std::nullopt;
    if (Complete(*entry, spec.outputs)) return Result<CacheEntry>(*entry);
    return Result<CacheEntry>(Error{spec.what + " failed before: see " + entry->Path(kFailedName)});
  };
  if (auto done = settled(CountLookup::kYes)) return *done;
  auto lock = cache.Lock(hex, timeout);
  if (!lock) return Error{spec.what + " lock: " + lock.error()};
  if (auto done = settled(CountLookup::kNo)) return *done;

  // A stopping process (an interrupted command) starts no preparation, and one its
  // stop killed is neither announced as failed nor kept.
  const auto stopped = [&] { return Error{"preparing " + spec.what + ": stopped"}; };
  if (ChildProcess::Stopping()) return stopped();
  auto staged = cache.Stage();
  if (!staged) return Error{staged.error()};
  auto commands = spec.commands(staged->path());
  if (!commands) return Error{commands.error()};
  std::fprintf(stderr, "kvault: preparing %s once per toolchain and flag set (%s, under %s/pch/)\n",
               spec.what.c_str(), spec.announce.c_str(), cache_root.c_str());
  Json meta{{"key_fields", spec.key.Describe()}};
  // A compiler's verdict is kept (failed.json, not retried); a signal (e.g. out of
  // memory) may pass and is not.
  auto failed = [&](const std::string& why, bool final) -> Error {
    std::fprintf(stderr, "kvault: preparing %s failed (%s); candidates build without it\n", spec.what.c_str(),
                 why.c_str());
    if (final) {
      meta["failure"] = why;
      for (const std::string& name : spec.outputs) (void)::unlink(staged->Join(name).c_str());
      if (Status s = WriteFileAtomic(staged->Join(kFailedName), meta.dump(2) + "\n"); !s) return Error{s.error()};
      if (auto stored = cache.Commit(hex, std::move(*staged), meta); !stored)
        return Error{"compile cache: " + stored.error()};
    }
    return Error{"preparing " + spec.what + " failed: " + why};
  };
  Json steps = Json::array();
  std::string tool = "the compiler";
  double seconds = 0;
  for (const CompileCommand& cmd : *commands) {
    CommandSpec run_spec;
    run_spec.argv = cmd.argv;
    run_spec.cwd = staged->path();
    auto run = RunCommand(run_spec, timeout);
    if (!cmd.argv.empty()) tool = std::filesystem::path(cmd.argv[0]).filename().string();
    if ((!run || run->exit_code != 0) && ChildProcess::Stopping()) return stopped();
    if (!run) return Error{tool + " could not be started: " + run.error()};
    seconds += run->seconds;
    steps.push_back(Json{{"command", ShellQuote(cmd.argv)}, {"seconds", run->seconds},
                         {"diagnostics", Truncate(run->output, kMaxDiagnostics)}});
    meta["steps"] = steps;
    if (run->timed_out) return failed(tool + " ran past the timeout", false);
    if (run->exit_code != 0)
      return failed(tool + " " + DescribeTermination(run->exit_code, run->term_signal), run->term_signal == 0);
  }
  for (const std::string& name : spec.outputs)
    if (!FileExists(staged->Join(name))) return failed(tool + " exited 0 without writing " + name, true);
  if (Status s = WriteFileAtomic(staged->Join("build.json"), meta.dump(2) + "\n"); !s) return Error{s.error()};
  auto stored = cache.Commit(hex, std::move(*staged), meta);
  if (!stored) return Error{"compile cache: " + stored.error()};
  if (!Complete(*stored, spec.outputs))  // a concurrent writer recorded a failure
    return Error{spec.what + " failed before: see " + stored->Path(kFailedName)};
  double mb = 0;
  for (const std::string& name : spec.outputs) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(stored->Path(name), ec);
    if (!ec) mb += static_cast<double>(size) / 1e6;
  }
  std::fprintf(stderr, "kvault: %s ready: %.0f MB in %.0f s (%s)\n", spec.what.c_str(), mb, seconds,
               stored->dir.c_str());
  return *stored;
}

}  // namespace kvault
