#include "engine/compile_pool.h"

#include "util/child_process.h"

namespace kvault {

CompilePool::CompilePool(int threads, BuildFunction build, PrepareFunction prepare)
    : build_(std::move(build)), prepare_(std::move(prepare)) {
  for (int i = 0; i < std::max(1, threads); ++i) threads_.emplace_back([this] { Work(); });
}

CompilePool::~CompilePool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (const std::string& id : queue_) jobs_.erase(id);  // never started
    queue_.clear();
  }
  queued_.notify_all();
  for (auto& t : threads_) t.join();
  finished_.notify_all();
}

void CompilePool::Submit(const BuildRequest& request, std::chrono::milliseconds timeout, Claim claim) {
  auto job = std::make_shared<Job>();
  job->request = request;
  job->timeout = timeout;
  job->claim = claim;
  Enqueue(BuildRequestIdentity(request), std::move(job), /*ahead=*/false);
}

void CompilePool::Prepare(const BuildRequest& like, std::chrono::milliseconds timeout) {
  if (!prepare_) return;
  auto job = std::make_shared<Job>();
  job->request = like;
  job->timeout = timeout;
  job->prepare = true;
  Enqueue("prepare " + BuildRequestIdentity(like), std::move(job), /*ahead=*/true);
}

void CompilePool::Enqueue(const std::string& id, std::shared_ptr<Job> job, bool ahead) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || jobs_.count(id)) return;
    jobs_[id] = std::move(job);
    if (ahead)
      queue_.push_front(id);
    else
      queue_.push_back(id);
  }
  queued_.notify_one();
}

void CompilePool::Work() {
  for (;;) {
    std::shared_ptr<Job> job;
    std::string id;
    {
      std::unique_lock<std::mutex> lock(mu_);
      queued_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping
      id = queue_.front();
      job = jobs_[id];
      queue_.pop_front();
      job->started = true;
    }
    // A stopping process (an interrupted command) starts nothing more: a queued build
    // ends as an Error for its lane, which the stop drops anyway.
    const bool stopping = ChildProcess::Stopping();
    if (job->prepare) {  // what it makes is found by the builds that need it
      if (!stopping) prepare_(job->request, job->timeout);
      std::lock_guard<std::mutex> lock(mu_);
      jobs_.erase(id);
      continue;
    }
    Result<BuildResult> r = stopping ? Result<BuildResult>(Error{"not built: stopping"})
                                     : build_(job->request, job->timeout);
    {
      std::lock_guard<std::mutex> lock(mu_);
      job->result = std::move(r);
      job->finished = true;
      ++built_;
      if (job->claim == Claim::kNone) jobs_.erase(id);  // a Take waiting for it holds the job
    }
    finished_.notify_all();
  }
}

std::optional<Result<BuildResult>> CompilePool::Take(const BuildRequest& request) {
  const std::string id = BuildRequestIdentity(request);
  std::unique_lock<std::mutex> lock(mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return std::nullopt;
  std::shared_ptr<Job> job = it->second;
  finished_.wait(lock, [&] { return job->finished || (stopping_ && !job->started); });
  if (!job->finished) return std::nullopt;
  jobs_.erase(id);  // taken once: a long-lived pool holds only what is still wanted
  return std::move(job->result);
}

BuildFunction CompilePool::Builder(BuildFunction fallback) {
  return [this, fallback](const BuildRequest& req, std::chrono::milliseconds timeout) -> Result<BuildResult> {
    if (auto r = Take(req)) return std::move(*r);
    return fallback(req, timeout);
  };
}

size_t CompilePool::built() const {
  std::lock_guard<std::mutex> lock(mu_);
  return built_;
}

}  // namespace kvault
