#include <gtest/gtest.h>
#include <stdlib.h>

#include <set>

#include "sandbox/launch.h"
#include "sandbox/policy.h"

namespace kvault {
namespace {

HostCapabilities AllAvailable() {
  HostCapabilities h;
  for (const char* l : kProbedLayers) h.layers[l] = "";
  return h;
}

std::string StateOf(const SandboxPlan& plan, const std::string& layer) {
  for (const Json& row : plan.layers)
    if (row["layer"] == layer) return row["state"].get<std::string>();
  return "missing";
}

std::string DetailOf(const SandboxPlan& plan, const std::string& layer) {
  for (const Json& row : plan.layers)
    if (row["layer"] == layer) return row["detail"].get<std::string>();
  return "missing";
}

SandboxPolicy AutoPolicy() {
  SandboxPolicy p;
  p.mode = SandboxMode::kAuto;
  p.hidden = {"/cache/refs"};
  p.limits.processes = 100;
  return p;
}

TEST(SandboxMode, ParsesTheThreeModesOnly) {
  EXPECT_EQ(ParseSandboxMode("off"), SandboxMode::kOff);
  EXPECT_EQ(ParseSandboxMode("strict"), SandboxMode::kStrict);
  EXPECT_FALSE(ParseSandboxMode("on").has_value());
}

TEST(ScrubEnvironment, KeepsAllowListAndPrefixesAndOverrides) {
  SandboxPolicy p;
  p.env_allow = {"PATH", "LC_*"};
  p.env_set = {{"HOME", "/private"}};
  auto env = ScrubEnvironment({"PATH=/bin", "LC_ALL=C", "AWS_SECRET=x", "HOME=/root", "PATHX=1"}, p);
  EXPECT_EQ(env, (std::vector<std::string>{"PATH=/bin", "LC_ALL=C", "HOME=/private"}));
}

TEST(ScrubEnvironment, OffKeepsEverything) {
  SandboxPolicy p;
  p.scrub_environment = false;
  auto env = ScrubEnvironment({"AWS_SECRET=x"}, p);
  EXPECT_EQ(env, (std::vector<std::string>{"AWS_SECRET=x"}));
}

TEST(PolicyJson, RoundTrips) {
  SandboxPolicy p = AutoPolicy();
  p.env_set = {{"A", "b"}};
  p.limits.address_space_bytes = 123;
  auto back = PolicyFromJson(PolicyToJson(p));
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(PolicyToJson(*back), PolicyToJson(p));
  EXPECT_FALSE(PolicyFromJson(Json{{"mode", "auto"}}));
}

TEST(PolicyJson, KeepCapabilitiesRoundTripsAndDefaultsToDropping) {
  SandboxPolicy p = AutoPolicy();
  for (bool keep : {false, true}) {
    p.keep_capabilities = keep;
    Json j = PolicyToJson(p);
    EXPECT_EQ(j.at("keep_capabilities"), keep);
    auto back = PolicyFromJson(j);
    ASSERT_TRUE(back) << back.error();
    EXPECT_EQ(back->keep_capabilities, keep);
  }
  // A plan written before the field existed still parses, and drops every capability.
  Json old = PolicyToJson(p);
  old.erase("keep_capabilities");
  auto back = PolicyFromJson(old);
  ASSERT_TRUE(back) << back.error();
  EXPECT_FALSE(back->keep_capabilities);
  // Present but not a boolean: malformed, not silently false.
  old["keep_capabilities"] = "yes";
  EXPECT_FALSE(PolicyFromJson(old));
}

TEST(PolicyJson, NewerFieldsRoundTripAndOlderPlansGoWithout) {
  SandboxPolicy p = AutoPolicy();
  p.hidden = {"/cache"};
  p.visible = {"/cache/build"};
  p.private_scratch_bytes = 64 << 20;
  auto back = PolicyFromJson(PolicyToJson(p));
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back->visible, p.visible);
  EXPECT_EQ(back->private_scratch_bytes, p.private_scratch_bytes);
  EXPECT_TRUE(back->ipc_namespace);
  // A plan from before these fields: no IPC namespace, nothing kept, the host's /dev/shm.
  Json old = PolicyToJson(p);
  for (const char* f : {"ipc_namespace", "visible", "private_scratch_bytes"}) old.erase(f);
  back = PolicyFromJson(old);
  ASSERT_TRUE(back) << back.error();
  EXPECT_FALSE(back->ipc_namespace);
  EXPECT_TRUE(back->visible.empty());
  EXPECT_EQ(back->private_scratch_bytes, 0u);
  old["private_scratch_bytes"] = "1G";
  EXPECT_FALSE(PolicyFromJson(old));
}

TEST(PolicyJson, HeapLimitRoundTripsAndOlderPlansSetNone) {
  SandboxPolicy p = AutoPolicy();
  p.limits.data_bytes = 3ull << 30;
  auto back = PolicyFromJson(PolicyToJson(p));
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back->limits.data_bytes, 3ull << 30);
  Json old = PolicyToJson(p);
  old["limits"].erase("data_bytes");
  back = PolicyFromJson(old);
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back->limits.data_bytes, 0u);
}

// A compile's heap: KVAULT_SANDBOX_MEMORY_MB when given, else half the memory and at
// most 16 GiB; 0 sets none.
TEST(PolicyFromEnvironment, CompileHeapLimitFollowsTheMemoryLimit) {
  ::unsetenv("KVAULT_SANDBOX_MEMORY_MB");
  auto p = PolicyFromEnvironment(false);
  ASSERT_TRUE(p) << p.error();
  EXPECT_GT(p->compile_data_bytes, 0u);
  EXPECT_LE(p->compile_data_bytes, 16ull << 30);
  EXPECT_EQ(p->limits.data_bytes, 0u);  // workers: none
  ::setenv("KVAULT_SANDBOX_MEMORY_MB", "65536", 1);
  p = PolicyFromEnvironment(false);
  ASSERT_TRUE(p) << p.error();
  EXPECT_EQ(p->compile_data_bytes, 64ull << 30);
  ::setenv("KVAULT_SANDBOX_MEMORY_MB", "0", 1);
  p = PolicyFromEnvironment(true);
  ASSERT_TRUE(p) << p.error();
  EXPECT_EQ(p->compile_data_bytes, 0u);
  ::unsetenv("KVAULT_SANDBOX_MEMORY_MB");
}

TEST(PolicyFromEnvironment, PrivateScratchSizeDefaultsAndMustBePositive) {
  ::unsetenv("KVAULT_SANDBOX_SCRATCH_MB");
  auto p = PolicyFromEnvironment(true);
  ASSERT_TRUE(p) << p.error();
  EXPECT_EQ(p->private_scratch_bytes, 1024ull << 20);
  EXPECT_TRUE(p->ipc_namespace);
  ::setenv("KVAULT_SANDBOX_SCRATCH_MB", "64", 1);
  p = PolicyFromEnvironment(true);
  ASSERT_TRUE(p) << p.error();
  EXPECT_EQ(p->private_scratch_bytes, 64ull << 20);
  for (const char* bad : {"0", "lots", "-1"}) {
    ::setenv("KVAULT_SANDBOX_SCRATCH_MB", bad, 1);
    auto e = PolicyFromEnvironment(true);
    ASSERT_FALSE(e) << bad;
    EXPECT_NE(e.error().find("KVAULT_SANDBOX_SCRATCH_MB"), std::string::npos);
  }
  ::unsetenv("KVAULT_SANDBOX_SCRATCH_MB");
}

TEST(PlanSandbox, PrivateScratchNeedsTheMountNamespace) {
  SandboxPolicy p = AutoPolicy();
  p.private_scratch_bytes = 8 << 20;
  auto plan = PlanSandbox(p, AllAvailable(), false);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_EQ(StateOf(*plan, "private_scratch"), "applied");
  EXPECT_NE(DetailOf(*plan, "private_scratch").find("8 MiB"), std::string::npos);
  EXPECT_EQ(PolicyFromJson(Json::parse(SandboxedArgv("/bin/kvault", *plan, {"w"})[2]))->private_scratch_bytes,
            8u << 20);

  HostCapabilities h = AllAvailable();
  h.layers["mount_namespace"] = "unshare: Operation not permitted";
  plan = PlanSandbox(p, h, false);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_EQ(StateOf(*plan, "private_scratch"), "unavailable");
  EXPECT_EQ(plan->policy.private_scratch_bytes, 0u);  // the helper mounts nothing
  EXPECT_TRUE(plan->policy.visible.empty());

  p.private_scratch_bytes = 0;
  plan = PlanSandbox(p, AllAvailable(), false);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_EQ(StateOf(*plan, "private_scratch"), "off");
}

TEST(PlanSandbox, DetailsNameWhatStaysWritableAndWhatIsKept) {
  SandboxPolicy p = AutoPolicy();
  p.hidden = {"/cache"};
  p.visible = {"/cache/build"};
  p.private_dir = "/cache/tmp/worker-1";
  p.private_scratch_bytes = 1 << 20;
  auto plan = PlanSandbox(p, AllAvailable(), false);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_EQ(DetailOf(*plan, "read_only_root"), "everything read-only but: the private directory, its own /dev/shm");
  EXPECT_EQ(DetailOf(*plan, "hidden_paths"), "emptied: /cache (kept: /cache/build)");
  EXPECT_EQ(DetailOf(*plan, "private_dir"), "working directory /cache/tmp/worker-1");
  p.private_scratch_bytes = 0;
  p.private_dir.clear();
  plan = PlanSandbox(p, AllAvailable(), false);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_EQ(DetailOf(*plan, "read_only_root"), "everything read-only");
}

TEST(PlanSandbox, IpcNamespaceIsPlannedLikeTheOthers) {
  auto plan = PlanSandbox(AutoPolicy(), AllAvailable(), false);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_EQ(StateOf(*plan, "ipc_namespace"), "applied");
  EXPECT_TRUE(plan->policy.ipc_namespace);

  HostCapabilities h = AllAvailable();
  h.layers["ipc_namespace"] = "unshare(CLONE_NEWIPC): Operation not permitted";
  plan = PlanSandbox(AutoPolicy(), h, false);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_EQ(StateOf(*plan, "ipc_namespace"), "unavailable");
  EXPECT_FALSE(PolicyFromJson(Json::parse(SandboxedArgv("/bin/kvault", *plan, {"w"})[2]))->ipc_namespace);
  SandboxPolicy strict = AutoPolicy();
  strict.mode = SandboxMode::kStrict;
  auto refused = PlanSandbox(strict, h, false);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().find("ipc_namespace"), std::string::npos);
}

TEST(PlanSandbox, CapabilitiesAreDroppedUnlessKept) {
  SandboxPolicy p = AutoPolicy();
  auto plan = PlanSandbox(p, AllAvailable(), false);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_EQ(StateOf(*plan, "capabilities"), "applied");
  EXPECT_NE(DetailOf(*plan, "capabilities").find("every capability dropped"), std::string::npos);
  EXPECT_FALSE(plan->policy.keep_capabilities);

  p.keep_capabilities = true;
  plan = PlanSandbox(p, AllAvailable(), false);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_EQ(StateOf(*plan, "capabilities"), "applied");
  EXPECT_NE(DetailOf(*plan, "capabilities").find("drops every capability in each child"),
            std::string::npos);
  EXPECT_TRUE(PolicyFromJson(Json::parse(SandboxedArgv("/bin/kvault", *plan, {"w"})[2]))->keep_capabilities);
}

TEST(PlanSandbox, CapabilitiesNeedTheUserNamespace) {
  HostCapabilities h = AllAvailable();
  h.layers["user_namespace"] = "unshare: Operation not permitted";
  auto plan = PlanSandbox(AutoPolicy(), h, false);
  ASSERT_TRUE(plan);
  EXPECT_EQ(StateOf(*plan, "capabilities"), "unavailable");

  SandboxPolicy p = AutoPolicy();
  p.pid_namespace = p.network_namespace = p.mount_namespace = p.ipc_namespace = false;
  plan = PlanSandbox(p, AllAvailable(), false);
  ASSERT_TRUE(plan);
  EXPECT_EQ(StateOf(*plan, "capabilities"), "off");

  p.mode = SandboxMode::kOff;
  plan = PlanSandbox(p, AllAvailable(), false);
  ASSERT_TRUE(plan);
  EXPECT_EQ(StateOf(*plan, "capabilities"), "off");
}

TEST(PlanSandbox, EveryLayerIsReportedOnce) {
  for (SandboxMode mode : {SandboxMode::kOff, SandboxMode::kAuto}) {
    SandboxPolicy p = AutoPolicy();
    p.mode = mode;
    auto plan = PlanSandbox(p, AllAvailable(), false);
    ASSERT_TRUE(plan);
    std::set<std::string> names;
    for (const Json& row : plan->layers) names.insert(row["layer"].get<std::string>());
    EXPECT_EQ(names.size(), plan->layers.size()) << ToString(mode);
    // process_group, 9 namespace and mount layers (fresh_proc only when on), capabilities,
    // syscall_filter, private_dir, scrubbed_environment and 6 rlimits.
    EXPECT_EQ(plan->layers.size(), mode == SandboxMode::kOff ? 19u : 20u) << ToString(mode);
  }
}

TEST(PlanSandbox, SyscallFilterGoesWithTheUserNamespace) {
  auto plan = PlanSandbox(AutoPolicy(), AllAvailable(), false);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_EQ(StateOf(*plan, "syscall_filter"), "applied");
  EXPECT_TRUE(Json::parse(SandboxedArgv("/bin/kvault", *plan, {"w"})[2])["syscall_filter"].get<bool>());

  HostCapabilities no_seccomp = AllAvailable();
  no_seccomp.layers["syscall_filter"] = "install the seccomp filter: Invalid argument";
  plan = PlanSandbox(AutoPolicy(), no_seccomp, false);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_EQ(StateOf(*plan, "syscall_filter"), "unavailable");
  EXPECT_FALSE(Json::parse(SandboxedArgv("/bin/kvault", *plan, {"w"})[2])["syscall_filter"].get<bool>());
  SandboxPolicy strict = AutoPolicy();
  strict.mode = SandboxMode::kStrict;
  EXPECT_FALSE(PlanSandbox(strict, no_seccomp, false));

  HostCapabilities no_userns = AllAvailable();
  no_userns.layers["user_namespace"] = "unshare: Operation not permitted";
  plan = PlanSandbox(AutoPolicy(), no_userns, false);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_EQ(StateOf(*plan, "syscall_filter"), "unavailable");
}

TEST(PlanSandbox, AutoAppliesWhatTheHostHas) {
  auto plan = PlanSandbox(AutoPolicy(), AllAvailable(), /*running_as_root=*/false);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_TRUE(plan->policy.pid_namespace && plan->policy.mount_namespace);
  EXPECT_EQ(StateOf(*plan, "hidden_paths"), "applied");
  EXPECT_EQ(StateOf(*plan, "rlimit_nproc"), "applied");
  EXPECT_TRUE(plan->fresh_proc);
}

TEST(PlanSandbox, AutoReportsMissingLayersAndDropsThem) {
  HostCapabilities h = AllAvailable();
  h.layers["user_namespace"] = "unshare: Operation not permitted";
  auto plan = PlanSandbox(AutoPolicy(), h, false);
  ASSERT_TRUE(plan);
  EXPECT_FALSE(plan->policy.pid_namespace || plan->policy.network_namespace ||
               plan->policy.mount_namespace || plan->policy.ipc_namespace);
  EXPECT_TRUE(plan->policy.hidden.empty());
  EXPECT_EQ(StateOf(*plan, "network_namespace"), "unavailable");
  EXPECT_EQ(StateOf(*plan, "scrubbed_environment"), "applied");
}

TEST(PlanSandbox, StrictRefusesAMissingLayer) {
  SandboxPolicy p = AutoPolicy();
  p.mode = SandboxMode::kStrict;
  HostCapabilities h = AllAvailable();
  h.layers["read_only_root"] = "mount_setattr: Function not implemented";
  auto plan = PlanSandbox(p, h, false);
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().find("read_only_root"), std::string::npos);
  EXPECT_TRUE(PlanSandbox(p, AllAvailable(), false));
}

TEST(PlanSandbox, NprocIsReportedUnenforcedForRoot) {
  auto plan = PlanSandbox(AutoPolicy(), AllAvailable(), /*running_as_root=*/true);
  ASSERT_TRUE(plan);
  EXPECT_EQ(StateOf(*plan, "rlimit_nproc"), "unavailable");
}

TEST(PlanSandbox, OffLeavesTheCommandAlone) {
  SandboxPolicy p = AutoPolicy();
  p.mode = SandboxMode::kOff;
  auto plan = PlanSandbox(p, AllAvailable(), false);
  ASSERT_TRUE(plan);
  EXPECT_EQ(StateOf(*plan, "pid_namespace"), "off");
  EXPECT_EQ(SandboxedArgv("/bin/kvault", *plan, {"python3", "-m", "w"}),
            (std::vector<std::string>{"python3", "-m", "w"}));
}

TEST(SandboxedArgv, WrapsTheCommandWithThePlan) {
  auto plan = PlanSandbox(AutoPolicy(), AllAvailable(), false);
  ASSERT_TRUE(plan);
  auto argv = SandboxedArgv("/bin/kvault", *plan, {"python3", "-m", "w"});
  ASSERT_EQ(argv.size(), 7u);
  EXPECT_EQ(argv[1], "sandbox-exec");
  EXPECT_EQ(argv[3], "--");
  EXPECT_EQ(argv[4], "python3");
  auto back = PolicyFromJson(Json::parse(argv[2]));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->hidden, (std::vector<std::string>{"/cache/refs"}));
}

}  // namespace
}  // namespace kvault
