#include <gtest/gtest.h>

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
  p.pid_namespace = p.network_namespace = p.mount_namespace = false;
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
    // process_group, 7 namespace and mount layers (fresh_proc only when on), capabilities,
    // syscall_filter, private_dir, scrubbed_environment and 6 rlimits.
    EXPECT_EQ(plan->layers.size(), mode == SandboxMode::kOff ? 17u : 18u) << ToString(mode);
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
               plan->policy.mount_namespace);
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
