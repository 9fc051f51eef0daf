// RunBatch's stall reports, with scripted workers.
#include "engine/batch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "engine/device_gate.h"
#include "util/files.h"
#include "worker/fake_worker.h"
#include "worker/protocol.h"

namespace kvault {
namespace {

// Workers that describe a task of one case and refuse to load any candidate.
WorkerFactory LoadRefusingWorkers() {
  return [](const WorkerOptions&) -> Result<std::unique_ptr<WorkerConnection>> {
    auto w = std::make_unique<FakeWorker>();
    w->Handle("hello", [](const Json&) {
      return FakeWorker::Ok(Json{{"protocol", protocol::kVersion}, {"torch", "t"}, {"python", "p"},
                                 {"device", {{"name", "cpu"}, {"arch", "x86_64"}}}, {"build", Json::object()}});
    });
    w->Handle("describe", [](const Json&) {
      return FakeWorker::Ok(Json{{"task", {{"name", "relu"}, {"has_twin", false}, {"num_parameters", 0},
                                           {"cases", {{{"name", "default"}, {"correctness", true}, {"performance", true}}}},
                                           {"meta", {{"policy", "custom_kernel"}}}}}});
    });
    w->Handle("load", [](const Json&) {
      WorkerReply reply;
      reply.response = Json{{"ok", false}, {"kind", "load_error"}, {"message", "no"}};
      return reply;
    });
    w->Handle("unload", [](const Json&) { return FakeWorker::Ok(); });
    return std::unique_ptr<WorkerConnection>(std::move(w));
  };
}

TEST(RunBatch, AStalledLaneIsReportedWithItsStageAndWhatItWaitsFor) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir);
  const std::string task_path = dir->path() + "/relu.py", candidate_path = dir->path() + "/s1.py";
  ASSERT_TRUE(WriteFileAtomic(task_path, "class Model: ...\n"));
  ASSERT_TRUE(WriteFileAtomic(candidate_path, "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n"));
  EngineOptions options;
  options.cache_dir = dir->path();
  options.backend = Backend::kCpu;
  options.policy = "custom_kernel";
  options.device_index = 7;  // a gate of its own in this process: "cpu-7"
  auto store = Store::Open(":memory:");
  ASSERT_TRUE(store) << store.error();

  // Another lane's timing holds the device: the task's description waits for it.
  auto gate = DeviceGate::For("cpu-7");
  DeviceGate::Hold timing = gate->Exclude(std::chrono::milliseconds(0));
  std::mutex timing_mu;  // the report and the backstop may both end it
  auto end_timing = [&] {
    std::lock_guard<std::mutex> lock(timing_mu);
    timing.Release();
  };
  // Without reports the batch would wait for ever: the device is freed after 20 s anyway.
  std::atomic<bool> reported{false};
  std::thread backstop([&] {
    for (int i = 0; i < 400 && !reported; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    end_timing();
  });
  EvalSettings settings;
  settings.stall_report = std::chrono::milliseconds(50);
  settings.factory = LoadRefusingWorkers();
  std::vector<std::string> stalls;
  size_t done = 0;
  auto records = RunBatch({{.task = {"relu", task_path, "class Model: ...\n", "taskhash"},
                            .candidate_path = candidate_path, .sample = ""}},
                          options, settings, **store, [&](const EvalProgress& p) {
                            if (p.last) {
                              done = p.done;
                              return;
                            }
                            EXPECT_GE(p.stalled_s, 0.05);
                            EXPECT_EQ(p.done, 0u);
                            // On a loaded machine the first reports may still find the
                            // lane starting, before its description reached the gate.
                            for (const std::string& line : p.stalled)
                              if (line.find("for the device gate") != std::string::npos) stalls.push_back(line);
                            if (stalls.size() >= 2) {  // reported again while none ended
                              reported = true;
                              end_timing();
                            }
                          });
  backstop.join();
  ASSERT_TRUE(records) << records.error();
  EXPECT_EQ(done, 1u);
  EXPECT_EQ((*records)[0].status, "load_error") << "the attempt went on once the device was free";
  ASSERT_GE(stalls.size(), 2u);
  EXPECT_NE(stalls[0].find("lane 0: relu <- s1.py: describe for "), std::string::npos) << stalls[0];
  EXPECT_NE(stalls[0].find("for the device gate (shared"), std::string::npos) << stalls[0];
}

// A batch of `jobs` relu candidates on `lanes` lanes of scripted workers.
struct SmallBatch {
  std::unique_ptr<TempDir> dir;
  std::vector<EvalJob> jobs;
  EngineOptions options;
  std::unique_ptr<Store> store;

  explicit SmallBatch(int jobs_count) {
    auto made = TempDir::Create();
    dir = std::make_unique<TempDir>(std::move(*made));
    const std::string task_path = dir->path() + "/relu.py";
    EXPECT_TRUE(WriteFileAtomic(task_path, "class Model: ...\n"));
    for (int i = 0; i < jobs_count; ++i) {
      const std::string path = dir->path() + "/s" + std::to_string(i) + ".py";
      EXPECT_TRUE(WriteFileAtomic(path, "import torch\nclass ModelNew(torch.nn.Module):\n    pass  # " +
                                            std::to_string(i) + "\n"));
      jobs.push_back({.task = {"relu", task_path, "class Model: ...\n", "taskhash"}, .candidate_path = path,
                      .sample = ""});
    }
    options.cache_dir = dir->path();
    options.backend = Backend::kCpu;
    options.policy = "custom_kernel";
    options.device_index = 8;
    auto opened = Store::Open(":memory:");
    EXPECT_TRUE(opened);
    store = std::move(*opened);
  }
};

TEST(RunBatch, EveryLanesWorkersStartAtOnce) {
  SmallBatch batch(3);
  std::mutex mu;
  std::vector<std::chrono::steady_clock::time_point> hellos;
  const WorkerFactory refusing = LoadRefusingWorkers();
  EvalSettings settings;
  settings.jobs = 3;
  settings.factory = [&](const WorkerOptions& o) -> Result<std::unique_ptr<WorkerConnection>> {
    auto made = refusing(o);
    auto* w = static_cast<FakeWorker*>(made->get());
    w->Handle("hello", [&](const Json&) {
      {
        std::lock_guard<std::mutex> lock(mu);
        hellos.push_back(std::chrono::steady_clock::now());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(800));  // PyTorch's import
      return FakeWorker::Ok(Json{{"protocol", protocol::kVersion}, {"torch", "t"}, {"python", "p"},
                                 {"device", {{"name", "cpu"}, {"arch", "x86_64"}}}, {"build", Json::object()}});
    });
    return made;
  };
  auto records = RunBatch(batch.jobs, batch.options, settings, *batch.store, nullptr);
  ASSERT_TRUE(records) << records.error();
  for (const AttemptRecord& r : *records) EXPECT_EQ(r.status, "load_error");
  ASSERT_GE(hellos.size(), 3u);
  std::sort(hellos.begin(), hellos.end());
  // One lane after another, the third lane's first worker would greet 1600 ms after
  // the first lane's; at once, within a loaded host's thread start (450 ms seen with
  // a build and a test run on 2 cores).
  EXPECT_LT(hellos[2] - hellos[0], std::chrono::milliseconds(700));
}

TEST(RunBatch, NoWorkerStartingIsOneFailureOfTheBatch) {
  SmallBatch batch(3);
  EvalSettings settings;
  settings.jobs = 3;
  settings.factory = [](const WorkerOptions&) -> Result<std::unique_ptr<WorkerConnection>> {
    return Error{"no python here"};
  };
  auto records = RunBatch(batch.jobs, batch.options, settings, *batch.store, nullptr);
  ASSERT_FALSE(records);
  EXPECT_NE(records.error().find("no worker could start on backend cpu"), std::string::npos) << records.error();
  EXPECT_NE(records.error().find("no python here"), std::string::npos) << records.error();
}

}  // namespace
}  // namespace kvault
