// The engine's rounds loop (timed_case.cc) against the golden scripts of
// tests/golden/timing_rounds.json, which the worker's in-process driver
// (timing/rounds.py) is held to as well (python/tests/test_golden.py).
#include <gtest/gtest.h>

#include "check/testing/golden.h"
#include "engine/testing/fake_timing.h"
#include "engine/timed_case.h"
#include "util/files.h"
#include "worker/protocol.h"

namespace kvault {
namespace {

using testing::GoldenNear;
using testing::GoldenNumber;

// The side a fake worker serves: that of its last time_start.
std::string SideOf(const FakeWorker& w) {
  const auto& received = w.received();
  for (auto it = received.rbegin(); it != received.rend(); ++it)
    if (it->request.value("op", std::string()) == "time_start")
      return it->request.value("side", std::string());
  return "";
}

// Sample i of a side's script: its batches in order, within a batch the cold
// samples first (each after a flush), then the warm ones; wall_ms alongside.
Json ScriptedSample(const Json& batches, int per_batch, int index) {
  const Json& batch = batches.at(static_cast<size_t>(index / per_batch));
  const int i = index % per_batch;
  const Json cold = batch.value("cold_ms", Json::array());
  const int n_cold = static_cast<int>(cold.size());
  const double ms = i < n_cold ? GoldenNumber(cold[i]) : GoldenNumber(batch["warm_ms"][i - n_cold]);
  return Json{{"ms", ms}, {"wall_ms", GoldenNumber(batch["wall_ms"][i])}, {"inputs_modified", false}};
}

TEST(TimingRoundsGoldenTest, EveryScriptGivesItsRoundsAndSummaries) {
  testing::ForEachGolden("timing_rounds.json", "vectors", 3, [](const Json& g) {
    auto dir = TempDir::Create();
    ASSERT_TRUE(dir);
    EngineOptions options;
    options.cache_dir = dir->path();
    const Json& rule = g["rule"];
    options.timing.min_samples = rule["min_samples"];
    options.timing.max_samples = rule["max_samples"];
    options.timing.min_ms = rule["min_ms"];
    options.timing.max_ms = rule["max_ms"];
    options.timing.noise_target = rule["noise_target"];
    options.timing.batch = g["batch"];
    options.timing.flush = g["flush"];
    options.timing.clock_slack = 1e9;  // the fakes answer at once, whatever time they report
    const int per_batch = (options.timing.flush ? 2 : 1) * options.timing.batch;
    TaskInfo task;
    task.file = TaskFile{"golden", dir->path() + "/golden.py", "source", "taskhash"};
    task.cases.push_back(CaseInfo{"golden", true, true});
    auto fake = std::make_shared<testing::FakeTiming>();
    std::vector<std::string> order;  // the side of each batch, in call order
    std::map<std::string, int> served;
    DeviceSession session(options, "cpu",
                          [&](const WorkerOptions&) -> Result<std::unique_ptr<WorkerConnection>> {
                            auto w = std::make_unique<FakeWorker>();
                            w->Handle("hello", [](const Json&) {
                              return FakeWorker::Ok(Json{{"protocol", protocol::kVersion}, {"device", Json::object()}});
                            });
                            testing::ScriptTiming(*w, fake);
                            const FakeWorker* self = w.get();
                            w->Handle("time_sample", [&, self](const Json& r) {
                              const std::string side = SideOf(*self);
                              const int index = served[side]++;
                              if (index % per_batch == 0) order.push_back(side);
                              Json reply = ScriptedSample(g["batches"][side], per_batch, index);
                              if (r.contains("out")) reply["out_sha256"] = testing::WriteFloats(r["out"], fake->reference_output);
                              return FakeWorker::Ok(reply);
                            });
                            return std::unique_ptr<WorkerConnection>(std::move(w));
                          });
    TimedCaseRequest req{task, 0, 1000, options, dir->path(), {}};
    req.turn.alone = []() -> Result<TurnStart> { return TurnStart{}; };
    PreparedCase prepared = PrepareCase(session, req);
    ASSERT_FALSE(prepared.failure) << prepared.failure->message;
    TimedCase t = TimeCase(session, req, std::move(prepared));
    ASSERT_FALSE(t.failure) << t.failure->message;
    const Json row = RecordJson(t.record);  // as stored
    const Json& want = g["expected"];
    EXPECT_EQ(order, want["order"].get<std::vector<std::string>>());
    EXPECT_EQ(row["rounds"], want["rounds"]);
    EXPECT_EQ(row["stop"], want["stop"]);
    for (const char* side : {"reference", "candidate"}) {
      for (const auto& [key, value] : want[side].items()) {
        const std::string field = std::string(side) + "_" + key;
        ASSERT_TRUE(row.contains(field)) << field;
        const Json& got = row[field];
        EXPECT_PRED2(GoldenNear, GoldenNumber(value), got.is_null() ? GoldenNumber(got) : got.get<double>())
            << field;
      }
      // Every summary the golden script leaves out is absent from the row too.
      for (const char* key : {"cold_ms", "cold_iqr_ms", "warm_ms", "warm_iqr_ms"})
        EXPECT_EQ(row.contains(std::string(side) + "_" + key), want[side].contains(key))
            << side << " " << key;
    }
  });
}

}  // namespace
}  // namespace kvault
