#include "engine/worker_sandbox.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "sandbox/launch.h"
#include "sandbox/policy.h"

namespace kvault {
namespace {

namespace fs = std::filesystem;

class WorkerSandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = TempDir::Create("", "worker-sandbox-test");
    ASSERT_TRUE(d) << d.error();
    dir_.emplace(std::move(*d));
    root_ = dir_->path();
    for (const char* v : {"HOME", "XDG_CACHE_HOME", "KVAULT_SANDBOX_HIDE"}) {
      if (const char* old = ::getenv(v)) saved_[v] = old;
      ::unsetenv(v);
    }
  }
  void TearDown() override {
    for (const char* v : {"HOME", "XDG_CACHE_HOME", "KVAULT_SANDBOX_HIDE"}) ::unsetenv(v);
    for (const auto& [k, v] : saved_) ::setenv(k.c_str(), v.c_str(), 1);
  }
  void Mkdirs(const std::string& rel) { fs::create_directories(root_ + "/" + rel); }

  // A launcher whose probe reports every layer available (`all`) or none.
  std::string Launcher(bool all) {
    const std::string path = root_ + (all ? "/launcher-all" : "/launcher-none");
    std::ofstream f(path);
    f << "#!/bin/sh\n";
    if (all) {
      f << "printf '{";
      bool first = true;
      for (const char* l : kProbedLayers) {
        f << (first ? "" : ",") << "\"" << l << "\":\"\"";
        first = false;
      }
      f << "}\\n'\n";
    } else {
      f << "exit 3\n";
    }
    f.close();
    ::chmod(path.c_str(), 0755);
    return path;
  }

  // The plan the helper would get, and the environment the engine sets.
  std::pair<SandboxPolicy, std::map<std::string, std::string>> Plan(bool candidate, bool all_layers,
                                                                    const std::string& lane_dir = "",
                                                                    const std::vector<std::string>& hidden = {}) {
    EngineOptions o;
    o.cache_dir = root_ + "/cache";
    o.lane_dir = lane_dir;
    o.sandbox.hidden = hidden;
    o.sandbox.mode = SandboxMode::kAuto;
    o.sandbox.private_scratch_bytes = 16 << 20;
    o.sandbox_launcher = Launcher(all_layers);
    auto cmd = SandboxWorkerCommand(o, candidate, true, {"python3", "-m", "w"}, {{"PYTHONPATH", "/p"}});
    EXPECT_TRUE(cmd) << cmd.error();
    if (!cmd) return {};
    EXPECT_EQ(cmd->argv.at(1), "sandbox-exec");
    auto policy = PolicyFromJson(Json::parse(cmd->argv.at(2)));
    EXPECT_TRUE(policy) << policy.error();
    std::map<std::string, std::string> env(cmd->env_set.begin(), cmd->env_set.end());
    for (const auto& [k, v] : policy->env_set) EXPECT_EQ(env[k], v) << k;  // helper and plan agree
    private_dirs_.push_back(std::move(*cmd->private_dir));
    return {*policy, env};
  }

  std::optional<TempDir> dir_;
  std::string root_;
  std::map<std::string, std::string> saved_;
  std::vector<TempDir> private_dirs_;
};

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST_F(WorkerSandboxTest, OtherCachesAreFoundBesideAndWhereTheDefaultIs) {
  Mkdirs("cache/refs");
  Mkdirs("cache/build");
  Mkdirs("other/refs");
  Mkdirs("other/tmp");
  Mkdirs("refs-only/refs");    // no build/ or tmp/: not a cache
  Mkdirs("plain");
  Mkdirs("home/.cache/kvault");
  Mkdirs("extra");
  ::setenv("HOME", (root_ + "/home").c_str(), 1);
  ::setenv("KVAULT_SANDBOX_HIDE", (root_ + "/extra:" + root_ + "/missing::" + root_ + "/cache").c_str(), 1);
  auto found = OtherCacheFolders(root_ + "/cache");
  // Caches of other runs in the host's /tmp may be found too: only ours are checked.
  for (const char* yes : {"/extra", "/home/.cache/kvault", "/other"}) EXPECT_TRUE(Has(found, root_ + yes)) << yes;
  for (const char* no : {"/cache", "/refs-only", "/plain", "/missing", "/home"})
    EXPECT_FALSE(Has(found, root_ + no)) << no;

  // The default location is this cache: not hidden from its own workers.
  ::setenv("XDG_CACHE_HOME", root_.c_str(), 1);
  Mkdirs("kvault/refs");
  found = OtherCacheFolders(root_ + "/kvault");
  EXPECT_FALSE(Has(found, root_ + "/kvault"));
  EXPECT_TRUE(Has(found, root_ + "/cache"));  // beside it, with refs/ and build/
}

TEST_F(WorkerSandboxTest, CandidateSeesOnlyCompiledCandidatesAndItsOwnFolder) {
  Mkdirs("other/refs");
  Mkdirs("other/build");
  auto [p, env] = Plan(/*candidate=*/true, /*all_layers=*/true);
  const std::string cache = root_ + "/cache";
  EXPECT_TRUE(Has(p.hidden, cache));
  EXPECT_TRUE(Has(p.hidden, root_ + "/other"));
  EXPECT_EQ(p.visible, (std::vector<std::string>{cache + "/build"}));
  EXPECT_TRUE(p.writable.empty());  // its own folder and its own /dev/shm only
  EXPECT_EQ(p.private_dir.rfind(cache + "/tmp/worker-", 0), 0u) << p.private_dir;
  EXPECT_EQ(p.private_scratch_bytes, 16u << 20);
  EXPECT_TRUE(p.ipc_namespace);
  // HOME, TMPDIR and both build caches in its own /dev/shm; nothing shared.
  EXPECT_EQ(env["HOME"], "/dev/shm/home");
  EXPECT_EQ(env["TMPDIR"], "/dev/shm/tmp");
  EXPECT_EQ(env["TORCH_EXTENSIONS_DIR"], "/dev/shm/tmp/torch_extensions");
  EXPECT_EQ(env["TRITON_CACHE_DIR"], "/dev/shm/tmp/triton");
  EXPECT_EQ(env["KVAULT_SANDBOX_SCRATCH_BYTES"], std::to_string(16 << 20));
  EXPECT_EQ(env["PYTHONSAFEPATH"], "1");
}

TEST_F(WorkerSandboxTest, CredentialsOfTheEnginesHomeAreHiddenFromEveryWorker) {
  ::setenv("HOME", (root_ + "/home").c_str(), 1);
  const auto creds = CredentialPaths();
  EXPECT_TRUE(Has(creds, root_ + "/home/.ssh"));
  EXPECT_TRUE(Has(creds, root_ + "/home/.netrc"));
  auto [p, env] = Plan(/*candidate=*/true, /*all_layers=*/true);
  for (const auto& c : creds) EXPECT_TRUE(Has(p.hidden, c)) << c;
  // A client's task_source runs in the reference worker (kvault serve).
  auto [r, renv] = Plan(/*candidate=*/false, /*all_layers=*/true);
  for (const auto& c : creds) EXPECT_TRUE(Has(r.hidden, c)) << c;
  ::unsetenv("HOME");
  EXPECT_TRUE(CredentialPaths().empty());
}

TEST_F(WorkerSandboxTest, WithoutPrivateMountsEverythingStaysInTheWorkersFolder) {
  auto [p, env] = Plan(/*candidate=*/true, /*all_layers=*/false);
  EXPECT_EQ(p.private_scratch_bytes, 0u);
  EXPECT_FALSE(p.private_dir.empty());
  EXPECT_EQ(env["HOME"], p.private_dir);
  EXPECT_EQ(env["TORCH_EXTENSIONS_DIR"], p.private_dir + "/torch_extensions");
  EXPECT_EQ(env["TRITON_CACHE_DIR"], p.private_dir + "/triton");
  EXPECT_EQ(env["KVAULT_SANDBOX_SCRATCH_BYTES"], "0");
}

// A client's task code (kvault serve) runs in its lane's reference worker: it writes its
// lane's folder and refs/, never the cache's tmp/ where other lanes' scratch is.
TEST_F(WorkerSandboxTest, AReferenceWorkerWritesOnlyItsLanesFolder) {
  const std::string cache = root_ + "/cache";
  const std::string lane = cache + "/tmp/verify-lane-a";
  auto [r, renv] = Plan(/*candidate=*/false, /*all_layers=*/true, lane);
  EXPECT_TRUE(Has(r.writable, lane));
  EXPECT_TRUE(Has(r.writable, cache + "/refs"));
  EXPECT_FALSE(Has(r.writable, cache + "/tmp"));
  EXPECT_EQ(r.private_dir.rfind(lane + "/worker-", 0), 0u) << r.private_dir;
  auto [c, cenv] = Plan(/*candidate=*/true, /*all_layers=*/true, lane);
  EXPECT_EQ(c.private_dir.rfind(lane + "/worker-", 0), 0u) << c.private_dir;  // where its reference offers
  EXPECT_TRUE(c.writable.empty());
}

// A compile of candidate code: no address-space limit (compilers reserve freely), a
// heap limit (`#include "/dev/zero"` grew cc1plus without bound) and a bounded file size
// (what it writes stays in the cache), in the plan.
TEST_F(WorkerSandboxTest, ACompileGetsHeapAndFileLimitsButNoAddressSpaceLimit) {
  EngineOptions o;
  o.cache_dir = root_ + "/cache";
  o.sandbox.mode = SandboxMode::kAuto;
  o.sandbox.limits.address_space_bytes = 4ull << 30;
  o.sandbox.limits.file_size_bytes = 16ull << 30;
  o.sandbox.compile_data_bytes = 3ull << 30;
  o.sandbox_launcher = Launcher(true);
  Mkdirs("scratch");
  Mkdirs("staged");
  auto argv = SandboxBuildCommand(o, root_ + "/src/a.cpp", {"g++", "-c", "a.cpp"},
                                  {root_ + "/scratch", root_ + "/staged"});
  ASSERT_TRUE(argv) << argv.error();
  ASSERT_EQ(argv->at(1), "sandbox-exec");
  auto policy = PolicyFromJson(Json::parse(argv->at(2)));
  ASSERT_TRUE(policy) << policy.error();
  EXPECT_EQ(policy->limits.data_bytes, 3ull << 30);
  EXPECT_EQ(policy->limits.address_space_bytes, 0u);
  // What it writes is kept in the cache: at most 512 MiB a file, less if workers get less.
  EXPECT_EQ(policy->limits.file_size_bytes, 512ull << 20);
  o.sandbox.limits.file_size_bytes = 64ull << 20;
  argv = SandboxBuildCommand(o, root_ + "/src/a.cpp", {"g++"}, {root_ + "/scratch", root_ + "/staged"});
  ASSERT_TRUE(argv) << argv.error();
  EXPECT_EQ(PolicyFromJson(Json::parse(argv->at(2)))->limits.file_size_bytes, 64ull << 20);
  // Workers get no heap limit (CUDA maps what it writes privately).
  auto [w, env] = Plan(/*candidate=*/true, /*all_layers=*/true);
  EXPECT_EQ(w.limits.data_bytes, 0u);
}

// Task code of a client (kvault serve) or an import (corpus verify): of the cache only
// refs/ and its lane's folder; the store, other caches and other lanes' folders hidden
// (a client's task read the server's ~/.aws and other clients' kernels in the store).
TEST_F(WorkerSandboxTest, ReferenceSeesOfTheCacheOnlyRefsAndItsLane) {
  Mkdirs("other/refs");
  Mkdirs("other/build");
  const std::string cache = root_ + "/cache";
  const std::string lane = cache + "/tmp/verify-lane-a";
  EngineOptions with_store;
  HideStoreFromWorkers(with_store, root_ + "/kv.db");
  auto [p, env] = Plan(/*candidate=*/false, /*all_layers=*/true, lane, with_store.sandbox.hidden);
  EXPECT_TRUE(Has(p.hidden, cache));
  EXPECT_TRUE(Has(p.hidden, root_ + "/other"));
  EXPECT_TRUE(Has(p.hidden, root_ + "/kv.db"));
  EXPECT_TRUE(Has(p.hidden, root_ + "/kv.db-wal"));
  EXPECT_EQ(p.visible, (std::vector<std::string>{lane, cache + "/refs"}));
  EXPECT_TRUE(Has(p.writable, lane));
  EXPECT_TRUE(Has(p.writable, cache + "/refs"));
  EXPECT_FALSE(Has(p.writable, "/dev/shm"));
  EXPECT_EQ(p.private_scratch_bytes, 16u << 20);
  EXPECT_EQ(env["HOME"], "/dev/shm/home");
}

}  // namespace
}  // namespace kvault
