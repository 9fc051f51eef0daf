#pragma once
// SampleComparisons: the outputs of a timing turn's samples compared behind the rounds
// (docs/timing.md, "Outputs compared behind the rounds"). Comparing a round's files
// took most of a turn's time with the device to itself (20 ms a sample of a 4 MiB
// output on the H200 host, against 5 ms for the sample); the comparison needs no
// device, so it runs on threads of its own while the next round samples, and what is
// left after the rounds runs once the device is shared again.
//
// A candidate's file is read here, later than its sample's reply, so its bytes must be
// those its worker wrote: the worker's digest of them (`out_sha256`, taken from memory
// as it wrote the file) is checked first; a file that a process of the candidate
// changed after the reply is `altered`, never compared. The reference's file of a
// sample is mapped once and shared by every member that compares with it.
//
//   SampleComparisons cmp(tolerance, SampleComparisons::ThreadsFor(Backend::kCuda));
//   cmp.Add({.side = 1, .round = 0, .index = 3, .reference = ref, .candidate = path,
//            .most_bytes = 1 << 24, .sha256 = digest});
//   for (const auto& done : cmp.Collect(/*wait=*/false)) ...  // finished so far
//   for (const auto& done : cmp.Collect(/*wait=*/true)) ...   // every job ended
// Thread-safe; the destructor drops the jobs not started (removing their files) and
// waits for the others.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "check/compare.h"
#include "check/tensor_file.h"
#include "engine/options.h"
#include "util/result.h"

namespace kvault {

class SampleComparisons {
 public:
  struct Job {
    int side = 0;   // the turn's side of the candidate (1, 2, ...)
    int round = 0;
    int index = 0;  // the sample within its round
    std::shared_ptr<const TensorFile> reference;  // shared by the members of the sample
    std::string candidate;  // the candidate's output file: read (a plain file only), then removed
    uint64_t most_bytes = 0;  // larger is not the reference's output: not read
    std::string sha256;       // what its worker said it wrote there (hex), checked first
  };
  struct Done {
    int side = 0, round = 0, index = 0;
    // The bytes are not what the worker wrote: changed after it wrote them (not compared).
    bool altered = false;
    // The comparison, or why the candidate's file is unreadable or not a tensor file (its
    // doing: candidate code runs in the worker that wrote it).
    Result<CompareReport> report = CompareReport{};
  };

  // Comparison threads for a turn on `backend`: on a GPU a quarter of the host's cores,
  // 1 to 4; on the CPU one (the rounds wait for each round's comparisons there, so that
  // nothing runs beside the samples).
  static int ThreadsFor(Backend backend);

  SampleComparisons(Tolerance tolerance, int threads);
  ~SampleComparisons();
  SampleComparisons(const SampleComparisons&) = delete;
  SampleComparisons& operator=(const SampleComparisons&) = delete;

  void Add(Job job);
  // The jobs finished since the last call, in (side, round, index) order; with `wait`,
  // after every job added has finished.
  std::vector<Done> Collect(bool wait);

 private:
  Done Check(Job job) const;  // one job: the digest, then the comparison
  void Work();

  const Tolerance tolerance_;
  const int threads_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::deque<Job> queue_;
  std::vector<Done> done_;
  int running_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace kvault
