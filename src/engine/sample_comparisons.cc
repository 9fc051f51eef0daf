#include "engine/sample_comparisons.h"

#include <algorithm>
#include <filesystem>
#include <tuple>

#include "util/files.h"
#include "util/sha256.h"

namespace kvault {

int SampleComparisons::ThreadsFor(Backend backend) {
  if (backend == Backend::kCpu) return 1;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::clamp(cores / 4, 1, 4);
}

SampleComparisons::SampleComparisons(Tolerance tolerance, int threads)
    : tolerance_(std::move(tolerance)), threads_(std::max(1, threads)) {}

SampleComparisons::~SampleComparisons() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    std::error_code ignored;  // a turn that ended early: what is not compared yet is not needed
    for (const Job& job : queue_) std::filesystem::remove(job.candidate, ignored);
    queue_.clear();
  }
  changed_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void SampleComparisons::Add(Job job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(job));
    // Threads start with the first jobs that find every one busy.
    if (static_cast<int>(workers_.size()) < threads_ && running_ + queue_.size() > workers_.size())
      workers_.emplace_back([this] { Work(); });
  }
  changed_.notify_all();
}

SampleComparisons::Done SampleComparisons::Check(Job job) const {
  Done done{job.side, job.round, job.index};
  auto bytes = ReadRegularFile(job.candidate, job.most_bytes);
  std::error_code ignored;
  std::filesystem::remove(job.candidate, ignored);
  if (!bytes) {
    done.report = Error{bytes.error()};
    return done;
  }
  done.altered = Sha256Hex(*bytes) != job.sha256;
  if (done.altered) return done;
  auto candidate = TensorFile::FromBytes(std::move(*bytes), "the candidate's output of a timed sample");
  if (!candidate)
    done.report = Error{candidate.error()};
  else
    done.report = Compare(*job.reference, *candidate, tolerance_);
  return done;
}

void SampleComparisons::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left
    Job job = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    lock.unlock();
    Done done = Check(std::move(job));
    lock.lock();
    --running_;
    done_.push_back(std::move(done));
    changed_.notify_all();
  }
}

std::vector<SampleComparisons::Done> SampleComparisons::Collect(bool wait) {
  std::unique_lock<std::mutex> lock(mu_);
  if (wait) changed_.wait(lock, [this] { return queue_.empty() && running_ == 0; });
  std::vector<Done> out = std::move(done_);
  done_.clear();
  lock.unlock();
  std::sort(out.begin(), out.end(), [](const Done& a, const Done& b) {
    return std::tie(a.side, a.round, a.index) < std::tie(b.side, b.round, b.index);
  });
  return out;
}

}  // namespace kvault
