#include "worker/protocol.h"

#include <gtest/gtest.h>

#include <regex>

#include "util/env.h"
#include "util/files.h"

namespace kvault {
namespace {

using namespace protocol;

// The version the Python worker reports must be the engine's: both are read from
// their sources, so a change on one side only fails here.
TEST(ProtocolTest, WorkerAndDocSpeakTheEngineVersion) {
  auto root = GetEnv("KVAULT_SOURCE_ROOT");
  if (!root) GTEST_SKIP() << "KVAULT_SOURCE_ROOT is not set (ctest sets it)";
  auto init = ReadFile(*root + "/python/kvault_worker/__init__.py");
  ASSERT_TRUE(init) << init.error();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(*init, m, std::regex(R"(\nPROTOCOL_VERSION = (\d+)\n)")));
  EXPECT_EQ(std::stoi(m[1]), kVersion);
  auto doc = ReadFile(*root + "/docs/worker-protocol.md");
  ASSERT_TRUE(doc) << doc.error();
  EXPECT_EQ(doc->rfind("# Worker protocol (version " + std::to_string(kVersion) + ")\n", 0), 0u);
}

TEST(ProtocolTest, HelloOfTheSameVersionPasses) {
  EXPECT_TRUE(CheckHello(Json{{"ok", true}, {"protocol", kVersion}}));
}

TEST(ProtocolTest, HelloOfAnotherVersionNamesBoth) {
  Status st = CheckHello(Json{{"ok", true}, {"protocol", kVersion + 1}});
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().find("version " + std::to_string(kVersion + 1)), std::string::npos) << st.error();
  EXPECT_NE(st.error().find("engine version " + std::to_string(kVersion)), std::string::npos) << st.error();
}

TEST(ProtocolTest, HelloWithoutAVersionFails) {
  EXPECT_FALSE(CheckHello(Json{{"ok", true}}));
  EXPECT_FALSE(CheckHello(Json{{"ok", true}, {"protocol", "1"}}));  // a string is not a version
  EXPECT_FALSE(CheckHello(Json{{"ok", true}, {"protocol", 1.5}}));
  EXPECT_FALSE(CheckHello(Json(nullptr)));
  EXPECT_FALSE(CheckHello(Json::array()));
}

TEST(ProtocolTest, RequestsSpellTheDocumentedLines) {
  EXPECT_EQ(HelloRequest({"cuda", 1, false}).ToJson(),
            Json::parse(R"({"op":"hello","backend":"cuda","device_index":1,"environment":false})"));
  EXPECT_EQ(HelloRequest({"cpu", 0, true, "k"}).ToJson()["held_out_key"], "k");
  EXPECT_EQ((DescribeRequest{"/t.py"}.ToJson()), Json::parse(R"({"op":"describe","task":"/t.py"})"));
  ReferenceRequest ref{.task = "/t.py", .case_index = 2, .seed = 3, .out = "/r.kvt"};
  EXPECT_EQ(ref.ToJson(), Json::parse(R"({"op":"reference","task":"/t.py","case":2,"seed":3,
                                          "distribution":"task","out":"/r.kvt"})"));
  ref.handoff = Json{{"socket", "/s"}};
  EXPECT_EQ(ref.ToJson()["handoff"], (Json{{"socket", "/s"}}));
  EXPECT_EQ((LoadRequest{"/t.py", "native", "/m.so", ""}.ToJson()),
            Json::parse(R"({"op":"load","task":"/t.py","candidate":{"format":"native","path":"/m.so"}})"));
  EXPECT_EQ((LoadRequest{"/t.py", "extension", "/m.so", "kv_1"}.ToJson())["candidate"]["module"], "kv_1");
  EXPECT_EQ((LoadRequest{"/t.py", "native", "/m.so", "", "/m.cu", "custom_kernel"}.ToJson()),
            Json::parse(R"({"op":"load","task":"/t.py","policy":"custom_kernel",
                            "candidate":{"format":"native","path":"/m.so","source":"/m.cu"}})"));
  EXPECT_EQ((RecordInlineRequest{"/c.py", "/t.py"}.ToJson()),
            Json::parse(R"({"op":"record_inline","candidate":{"format":"kernelbench","path":"/c.py"},
                            "task":"/t.py"})"));
  EXPECT_FALSE((RecordInlineRequest{"/c.py"}.ToJson()).contains("task"));
  RunRequest run{.case_index = 1, .seed = 2, .distribution = "signed", .out = "/o.kvt"};
  EXPECT_EQ(run.ToJson(), Json::parse(R"({"op":"run","case":1,"seed":2,"distribution":"signed",
                                          "out":"/o.kvt"})"));
  run.repeat_out = "/p.kvt";
  run.defer_writes = true;
  run.output_layout = Json{{"tensors", Json::array()}};
  Json full = run.ToJson();
  EXPECT_EQ(full["repeat_out"], "/p.kvt");
  EXPECT_EQ(full["defer_writes"], true);
  EXPECT_TRUE(full["output_layout"].is_object());
  EXPECT_EQ(WriteOutputsRequest{}.ToJson(), Json::parse(R"({"op":"write_outputs"})"));
}

TEST(ProtocolTest, TimingAndHandoffRequests) {
  TimeStartRequest start{.side = kSideReference,
                         .task = "/t.py",
                         .case_index = 1,
                         .seed = 1000,
                         .flush = false,
                         .graph_below_ms = 0.5};
  EXPECT_EQ(start.ToJson(), Json::parse(R"({"op":"time_start","side":"reference","task":"/t.py","case":1,
                                            "seed":1000,"flush":false,"graph_below_ms":0.5})"));
  start.fresh = true;
  EXPECT_EQ(start.ToJson()["fresh"], true);
  EXPECT_EQ(TimeWarmupRequest{10}.ToJson(), Json::parse(R"({"op":"time_warmup","warmup_ms":10})"));
  EXPECT_EQ(TimeGraphRequest{}.ToJson(), Json::parse(R"({"op":"time_graph"})"));
  EXPECT_EQ(TimeGraphRequest{50}.ToJson(), Json::parse(R"({"op":"time_graph","calls":50})"));
  EXPECT_EQ(TimeFlushRequest{}.ToJson(), Json::parse(R"({"op":"time_flush"})"));
  EXPECT_EQ((TimeSampleRequest{kTimerClock, 77}.ToJson()),
            Json::parse(R"({"op":"time_sample","method":"monotonic_clock","seed":77})"));
  EXPECT_EQ((TimeSampleRequest{kTimerGraph, 77, 3, "/s.kvt"}.ToJson()),
            Json::parse(R"({"op":"time_sample","method":"cuda_graph","seed":77,"call":3,"out":"/s.kvt"})"));
  EXPECT_EQ(TimeFinishRequest{}.ToJson(), Json::parse(R"({"op":"time_finish"})"));
  EXPECT_EQ((TimeFinishRequest{.out = "/o.kvt", .keep = true}.ToJson()),
            Json::parse(R"({"op":"time_finish","out":"/o.kvt","keep":true})"));
  EXPECT_EQ((HandoffCompareRequest{Json::array(), "/r.kvt", "/c.kvt"}.ToJson()),
            Json::parse(R"({"op":"handoff_compare","tolerances":[],"out_reference":"/r.kvt",
                            "out_candidate":"/c.kvt"})"));
  EXPECT_EQ(HandoffReleaseRequest{}.ToJson(), Json::parse(R"({"op":"handoff_release"})"));
  EXPECT_EQ(HandoffReleaseRequest{"/r.kvt"}.ToJson(),
            Json::parse(R"({"op":"handoff_release","out":"/r.kvt"})"));
}

}  // namespace
}  // namespace kvault
