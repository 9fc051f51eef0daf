#include "serve/service.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "agent/feedback.h"
#include "engine/candidate_build.h"
#include "engine/plausibility_recheck.h"
#include "llm/answer.h"
#include "util/files.h"
#include "util/sha256.h"

namespace kvault::serve {

struct VerificationService::Lane {
  LanePool::Lane& lane;          // the pool's: its verifier, device, readiness
  std::atomic<bool> busy{false};
  std::string last_task;         // task hash of its last job (affinity)
  explicit Lane(LanePool::Lane& l) : lane(l) {}
};

namespace {

// How far a lane looks down the queue for a job of the task it has warm.
constexpr size_t kAffinityWindow = 256;
// How long an unready lane waits before asking its workers' hello again.
constexpr auto kHelloRetry = std::chrono::seconds(5);

// The language ExtractCode expects a completion's fence to name.
std::string FenceLanguage(const std::string& language) {
  return language == "triton" ? "python" : language;
}

// Why a recorded outcome holds no reward; unset when it does.
std::optional<ErrorKind> NoRewardKind(const std::string& status) {
  auto s = OutcomeStatusFromString(status);
  if (s == OutcomeStatus::kTaskError) return ErrorKind::kTask;
  if (s == OutcomeStatus::kInfraError) return ErrorKind::kInfrastructure;
  // The engine cannot run it here (a native candidate's arguments beyond its ABI):
  // nothing was judged, so no reward, as verify and eval give none.
  if (s == OutcomeStatus::kUnsupported) return ErrorKind::kUnsupported;
  return std::nullopt;
}

ServeOutcome OutcomeFromRecord(const AttemptRecord& r, bool from_store) {
  ServeOutcome o;
  o.status = r.status;
  o.compiled = r.compiled;
  o.correct = r.correct;
  o.speedup = r.speedup;
  o.reference_ms = r.reference_ms;
  o.candidate_ms = r.candidate_ms;
  const StoredCases stored = ReadCases(r.cases);
  o.speedup_implausible = StillImplausible(stored.records);
  o.message = r.message;
  o.diagnostics = r.diagnostics;
  o.policy = r.policy;
  o.task = r.task;
  o.task_hash = r.task_hash;
  o.candidate_hash = r.candidate_hash;
  o.from_store = from_store;
  o.seconds = r.seconds;
  o.cases = r.cases;
  if (stored.phases) o.phases = stored.phases->ToJson();
  o.error_kind = NoRewardKind(r.status);
  if (!o.error_kind) o.feedback = agent::FormatFeedback(r, agent::FeedbackLimits{});
  o.foreign_language = ForeignLanguageOf(r.environment);
  return o;
}

// Whether a request may share a known job: one still queued or running, or one that
// ended with the candidate's outcome. A job that ended without one (infrastructure,
// deadline, cancelled, task) is done again for a new request.
// REQUIRES: the service's mutex held.
bool Reusable(const Job& job) {
  return job.state != Job::State::kDone || !job.outcome.error_kind;
}

ServeOutcome Ended(ErrorKind kind, const std::string& message) {
  ServeOutcome o;
  o.error_kind = kind;
  o.message = message;
  return o;
}

}  // namespace

std::string ServeTaskName(const std::string& label, const std::string& task_hash) {
  std::string out;
  for (char c : label.substr(0, 64))
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.') ? c : '_';
  if (out.empty() || out[0] == '.' || out[0] == '_') out = "t" + out;
  return out + "-" + task_hash.substr(0, 12);
}

std::string RecordedTaskName(const ServeRequest& r, const std::string& task_hash) {
  if (r.suite_task && !r.atol && !r.rtol && !r.task_name.empty()) return r.task_name;
  return ServeTaskName(r.task_name, task_hash);
}

VerificationService::VerificationService(ServiceSettings settings, Store& store) : settings_(std::move(settings)) {
  EngineOptions options = settings_.options;
  // Task code comes from clients: never run in a worker that times another task.
  options.reference_workers = ReferenceWorkers::kPerTask;
  pool_ = std::make_unique<LanePool>(
      options, store, LanePool::Settings{.devices = settings_.devices, .lanes_per_device = settings_.lanes_per_device});
  for (size_t i = 0; i < pool_->size(); ++i) lanes_.push_back(std::make_unique<Lane>(pool_->lane(i)));
}

Result<std::unique_ptr<VerificationService>> VerificationService::Start(ServiceSettings settings, Store& store) {
  if (settings.devices.empty()) return Error{"no device given"};
  if (settings.lanes_per_device < 1) return Error{"lanes per device must be at least 1"};
  // Workers are given absolute paths only: `--db rewards.db` makes a relative folder.
  std::error_code ec;
  settings.work_dir = std::filesystem::absolute(settings.work_dir, ec).lexically_normal().string();
  if (ec) return Error{"cannot resolve the work folder: " + ec.message()};
  for (const char* sub : {"tasks", "candidates"})
    if (auto st = EnsureDir(settings.work_dir + "/" + sub); !st)
      return Error{"cannot make the work folder: " + st.error()};
  std::unique_ptr<VerificationService> s(new VerificationService(std::move(settings), store));
  // The first lane's hello decides the arch recorded and the build requests of the pool;
  // the toolchain's one-time entries are made while the server waits for its first request.
  (void)s->pool_->Start(s->pool_->lane(0));
  if (s->settings_.options.backend != Backend::kCpu)
    s->pool_->StartAheadBuilds(s->settings_.compile_jobs, {}, LanePool::Ahead::kOpen);
  for (auto& lane : s->lanes_) s->threads_.emplace_back([svc = s.get(), l = lane.get()] { svc->RunLane(*l); });
  return s;
}

VerificationService::~VerificationService() {
  Stop();
  Join();
}

void VerificationService::Stop() {
  std::deque<std::shared_ptr<Job>> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    dropped.swap(queue_);
    for (auto& job : dropped) {
      job->state = Job::State::kDone;
      job->outcome = Ended(ErrorKind::kInfrastructure,
                           "the server stopped before verifying this candidate; submit it again");
      job->finished_at = Clock::now();
    }
    ++generation_;
  }
  work_.notify_all();
  changed_.notify_all();
}

void VerificationService::Join() {
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

void VerificationService::Abort() {
  aborting_ = true;
  Stop();
}

// --- submitting ---------------------------------------------------------------

std::optional<ServeOutcome> VerificationService::FromStore(const Job& job) {
  if (!job.candidate || !job.unsupported.empty()) return std::nullopt;
  // The lane pool's reuse rule, by content. Under `task` a record answers once a lane
  // of this server has described the task (its own policy known); until then the
  // request goes to a lane, which looks again.
  const Result<Candidate> candidate = *job.candidate;
  auto stored = pool_->Stored({.run = job.run, .task = job.task, .candidate = candidate,
                               .candidate_path = job.candidate->path, .sample = job.sample, .policy = job.policy});
  // A sample's row under another task name (the same bytes, another label): the lane
  // records it again under this name (LanePool::Attempt), so that the run holds it.
  if (!stored || (!job.sample.empty() && stored->task != job.task.name)) return std::nullopt;
  return OutcomeFromRecord(*stored, /*from_store=*/true);
}

std::shared_ptr<Job> VerificationService::Prepare(const ServeRequest& r) {
  auto job = std::make_shared<Job>();
  const std::string task_source = EffectiveTaskSource(r);
  job->task.hash = Sha256Hex(task_source);
  job->task.source = task_source;
  job->task.name = RecordedTaskName(r, job->task.hash);
  // Named by the content: tasks of one name and other bytes never share a file.
  job->task.path = settings_.work_dir + "/tasks/" + ServeTaskName(r.task_name, job->task.hash) + ".py";
  job->run = r.run;
  job->policy = r.policy;
  job->sample = r.sample;
  if (r.deadline_s)
    job->deadline = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(*r.deadline_s * 1000));

  std::string code = r.code;
  std::string parse_failure;
  if (!r.completion.empty()) {
    llm::ExtractOptions opts;
    opts.expected_language = FenceLanguage(r.language);
    auto extracted = llm::ExtractCode(r.completion, opts);
    if (extracted) code = extracted->code;
    else parse_failure = "no code in the completion: " + extracted.error();
  }
  const std::string candidate_hash =
      parse_failure.empty() ? Sha256Hex(code) : "unparsable:" + Sha256Hex(r.completion);
  // The extension decides the candidate's language (with the content): part of the key.
  const std::string extension = parse_failure.empty() ? CandidateExtension(r.language, code) : "";
  const std::string backend(ToString(settings_.options.backend));
  job->key = r.run + "\n" + job->task.hash + "\n" + candidate_hash + "\n" + extension + "\n" +
             FenceLanguage(r.language) + "\n" + backend + "\n" + r.policy;
  if (!r.sample.empty()) job->key += "\n" + r.sample;  // the policy holds no newline
  job->id = "c-" + Sha256Hex(job->key).substr(0, 24);
  if (parse_failure.empty()) {
    // Named by the job, not the content: two jobs of one source (other runs or
    // policies) never remove each other's file.
    auto c = CandidateFromSource(settings_.work_dir + "/candidates/" + job->id + extension, code);
    if (c) job->candidate = std::move(*c);
    else parse_failure = c.error();
  }
  // What the client declared (`language`, a protocol's field such as hip_code) and
  // this backend cannot run is the server's configuration: refused (Submit), never a
  // reward of 0. What the code turns out to be, where nothing was declared, is the
  // answer's own: a verdict of its own (below), never a refusal that would take the
  // other candidates of its batch with it (docs/threat-model.md, section 8).
  job->language = job->candidate ? job->candidate->language
                                 : (!r.language.empty() ? r.language : ExtensionLanguage(extension));
  const Backend backend_kind = settings_.options.backend;
  if (!r.language.empty())
    job->unsupported = job->candidate ? BackendMismatch(*job->candidate, backend_kind)
                                      : BackendMismatch(r.language, backend_kind);
  if (!parse_failure.empty()) {
    // The candidate's outcome, known without a lane: recorded and answered at once.
    job->state = Job::State::kDone;
    job->outcome.status = std::string(ToString(OutcomeStatus::kParseError));
    job->outcome.message = parse_failure;
    job->outcome.feedback = agent::FormatNoCode(parse_failure, agent::FeedbackLimits{});
  } else if (job->unsupported.empty() && !BackendMismatch(*job->candidate, backend_kind).empty()) {
    const std::string why = ForeignLanguageVerdict(job->language, backend_kind,
                                                   "seen in its code; the request names no language");
    job->state = Job::State::kDone;
    job->outcome.status = std::string(ToString(OutcomeStatus::kCompileError));
    job->outcome.message = why;
    job->outcome.foreign_language = job->language;
    AttemptRecord verdict;
    verdict.status = job->outcome.status;
    verdict.message = why;
    job->outcome.feedback = agent::FormatFeedback(verdict, agent::FeedbackLimits{});
  }
  if (job->state == Job::State::kDone) {
    job->outcome.task = job->task.name;
    job->outcome.task_hash = job->task.hash;
    job->outcome.candidate_hash = candidate_hash;
    job->outcome.policy = r.policy;
  }
  return job;
}

VerificationService::SubmitResult VerificationService::Submit(const std::vector<ServeRequest>& requests) {
  if (!Available())
    return SubmitError{Refusal::kUnavailable, "no verification lane is ready (its workers did not start; see /v1/health)", 10};
  // Everything that needs no lock: hashing, extraction, the store.
  std::vector<std::shared_ptr<Job>> prepared;
  prepared.reserve(requests.size());
  for (const ServeRequest& r : requests) prepared.push_back(Prepare(r));
  for (size_t i = 0; i < prepared.size(); ++i)
    if (!prepared[i]->unsupported.empty())
      return SubmitError{Refusal::kUnsupported,
                         (requests.size() > 1 ? "requests[" + std::to_string(i) + "]: " : std::string()) +
                             "this server (backend " + std::string(ToString(settings_.options.backend)) + ") cannot run a " +
                             prepared[i]->language + " candidate: " + prepared[i]->unsupported,
                         0};
  std::vector<std::optional<ServeOutcome>> stored(requests.size());
  for (size_t i = 0; i < prepared.size(); ++i)
    if (prepared[i]->state == Job::State::kQueued) stored[i] = FromStore(*prepared[i]);

  Submitted out{std::vector<std::shared_ptr<Job>>(requests.size()), std::vector<bool>(requests.size(), false)};
  std::vector<std::shared_ptr<Job>> to_queue, to_build;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return SubmitError{Refusal::kStopping, "the server is stopping", 5};
    ForgetOldJobs();
    std::map<std::string, std::shared_ptr<Job>> batch_new;  // identical requests within this batch
    size_t new_jobs = 0;
    for (size_t i = 0; i < prepared.size(); ++i) {
      const auto& job = prepared[i];
      const std::string& ikey = requests[i].idempotency_key;
      if (!ikey.empty()) {
        auto it = idempotency_.find(ikey);
        if (it != idempotency_.end() && it->second != job->key)
          return SubmitError{Refusal::kConflict,
                             "idempotency key '" + ikey + "' was used before for a different request", 0};
      }
      auto known = jobs_.find(job->key);
      if ((known != jobs_.end() && Reusable(*known->second)) || batch_new.count(job->key)) continue;
      if (!stored[i] && job->state == Job::State::kQueued) ++new_jobs;
      batch_new[job->key] = job;
    }
    if (queue_.size() + new_jobs > settings_.queue_capacity) {
      return SubmitError{Refusal::kOverloaded,
                         "the queue holds " + std::to_string(queue_.size()) + " of " +
                             std::to_string(settings_.queue_capacity) + " candidates; " +
                             std::to_string(new_jobs) + " more do not fit",
                         std::max<int>(1, static_cast<int>(queue_.size() / std::max<size_t>(1, lanes_.size())))};
    }
    for (size_t i = 0; i < prepared.size(); ++i) {
      std::shared_ptr<Job> job = prepared[i];
      auto known = jobs_.find(job->key);
      if (known != jobs_.end() && Reusable(*known->second)) {
        job = known->second;
        // A request without a deadline keeps the job as long as it takes.
        if (!prepared[i]->deadline) job->deadline.reset();
        else if (job->deadline) job->deadline = std::max(*job->deadline, *prepared[i]->deadline);
      } else {
        jobs_[job->key] = job;
        if (stored[i]) {
          job->state = Job::State::kDone;
          job->outcome = std::move(*stored[i]);
          job->finished_at = Clock::now();
          metrics_.CountVerification(job->outcome.status, -1, Json(), true);
        } else if (job->state == Job::State::kDone) {
          job->finished_at = Clock::now();
          to_build.push_back(job);  // recorded below (a parse_error)
        } else {
          queue_.push_back(job);
          to_queue.push_back(job);
        }
      }
      ++job->owners;
      if (!requests[i].idempotency_key.empty()) idempotency_[requests[i].idempotency_key] = job->key;
      out.shared[i] = job != prepared[i];
      out.jobs[i] = job;
    }
  }
  // Parse errors are outcomes of the candidate: recorded like any other.
  for (const auto& job : to_build) {
    AttemptRecord rec;
    rec.run = job->run;
    rec.task = job->task.name;
    rec.task_hash = job->task.hash;
    rec.candidate_hash = job->outcome.candidate_hash;
    rec.status = job->outcome.status;
    rec.reward = 0.0;
    rec.message = job->outcome.message;
    rec.policy = job->outcome.policy;
    rec.sample = job->sample;
    if (job->candidate) {
      rec.format = std::string(ToString(job->candidate->format));
      rec.language = job->candidate->language;
      rec.backend = std::string(ToString(settings_.options.backend));
    }
    if (!job->outcome.foreign_language.empty())
      rec.environment["build"] = Json{{kForeignLanguageKey, job->outcome.foreign_language}};
    if (!pool_->Record(rec)) metrics_.CountStoreError();
    metrics_.CountVerification(job->outcome.status, -1, Json(), false);
    NoteForeignLanguage(job->outcome);
  }
  // The files the workers read, and compiled candidates' builds started on every core.
  for (const auto& job : to_queue) {
    if (!FileExists(job->task.path)) (void)WriteFileAtomic(job->task.path, job->task.source);
    (void)WriteFileAtomic(job->candidate->path, job->candidate->source);
    pool_->BuildAhead(*job->candidate, job->task.path);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& job : to_queue) job->staged = true;
    if (!to_build.empty()) ++generation_;
  }
  if (!to_queue.empty()) work_.notify_all();
  if (!to_build.empty()) changed_.notify_all();
  return out;
}

void VerificationService::ForgetOldJobs() {
  const auto now = Clock::now();
  // Every key naming a job about to be forgotten (a job may have several).
  for (auto it = idempotency_.begin(); it != idempotency_.end();) {
    auto job = jobs_.find(it->second);
    const bool old = job == jobs_.end() || (job->second->state == Job::State::kDone &&
                                            now - job->second->finished_at > settings_.keep_finished);
    it = old ? idempotency_.erase(it) : std::next(it);
  }
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    const Job& j = *it->second;
    if (j.state == Job::State::kDone && now - j.finished_at > settings_.keep_finished) {
      it = jobs_.erase(it);
    } else {
      ++it;
    }
  }
}

// --- waiting ------------------------------------------------------------------

std::optional<ServeOutcome> VerificationService::Wait(const Job& job, std::optional<Clock::time_point> until) {
  std::unique_lock<std::mutex> lock(mu_);
  auto done = [&] { return job.state == Job::State::kDone; };
  if (until) {
    if (!changed_.wait_until(lock, *until, done)) return std::nullopt;
  } else {
    changed_.wait(lock, done);
  }
  return job.outcome;
}

uint64_t VerificationService::Generation() const {
  std::lock_guard<std::mutex> lock(mu_);
  return generation_;
}

uint64_t VerificationService::WaitForChange(uint64_t seen, Clock::time_point until) {
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait_until(lock, until, [&] { return generation_ != seen; });
  return generation_;
}

std::pair<Job::State, ServeOutcome> VerificationService::Peek(const Job& job) const {
  std::lock_guard<std::mutex> lock(mu_);
  return {job.state, job.state == Job::State::kDone ? job.outcome : ServeOutcome{}};
}

size_t VerificationService::Cancel(const std::vector<std::shared_ptr<Job>>& jobs) {
  size_t n = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& job : jobs) {
      if (job->state != Job::State::kQueued) continue;
      if (--job->owners > 0) continue;
      auto it = std::find(queue_.begin(), queue_.end(), job);
      if (it != queue_.end()) queue_.erase(it);
      job->state = Job::State::kDone;
      job->outcome = Ended(ErrorKind::kCancelled, "cancelled before it was verified");
      job->finished_at = Clock::now();
      ++n;
    }
    if (n) ++generation_;
  }
  if (n) changed_.notify_all();
  return n;
}

// --- lanes --------------------------------------------------------------------

void VerificationService::RunLane(Lane& lane) {
  for (;;) {
    if (!lane.lane.ready) {
      if (auto hello = pool_->Start(lane.lane); !hello) {
        std::fprintf(stderr, "kvault serve: lane %d (device %d) cannot start its workers: %s\n", lane.lane.index,
                     lane.lane.device, hello.error().c_str());
        std::unique_lock<std::mutex> lock(mu_);
        if (work_.wait_for(lock, kHelloRetry, [&] { return stopping_; })) return;
        continue;
      }
    }
    std::shared_ptr<Job> job = NextJob(lane);
    if (!job) return;
    lane.busy = true;
    Verify(lane, *job);
    lane.busy = false;
  }
}

std::shared_ptr<Job> VerificationService::NextJob(Lane& lane) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    // Only staged jobs: Submit queues a job before writing its files and queueing
    // its build, so that a batch enters the queue whole or not at all.
    auto first_staged = [&] {
      return std::find_if(queue_.begin(), queue_.end(), [](const auto& j) { return j->staged; });
    };
    work_.wait(lock, [&] { return stopping_ || first_staged() != queue_.end(); });
    if (stopping_) return nullptr;
    // A job of the task this lane has warm (its reference side kept), else the oldest.
    auto pick = first_staged();
    const size_t window = std::min(queue_.size(), kAffinityWindow);
    for (size_t i = 0; i < window; ++i)
      if (queue_[i]->staged && queue_[i]->task.hash == lane.last_task) {
        pick = queue_.begin() + static_cast<std::ptrdiff_t>(i);
        break;
      }
    std::shared_ptr<Job> job = *pick;
    queue_.erase(pick);
    if (job->deadline && Clock::now() > *job->deadline) {
      job->state = Job::State::kDone;
      job->outcome = Ended(ErrorKind::kDeadline, "its deadline passed before a lane was free");
      job->finished_at = Clock::now();
      ++generation_;
      changed_.notify_all();
      continue;
    }
    job->state = Job::State::kRunning;
    lane.last_task = job->task.hash;
    return job;
  }
}

void VerificationService::Verify(Lane& lane, Job& job) {
  const Result<Candidate> candidate = *job.candidate;
  // Nothing is recorded once the server aborts: its workers may have been killed under it.
  LaneAttempt a = pool_->Attempt(lane.lane,
                                 {.run = job.run, .task = job.task, .candidate = candidate,
                                  .candidate_path = job.candidate->path, .sample = job.sample,
                                  .policy = job.policy},
                                 [this] { return !aborting_; });
  std::error_code ec;
  std::filesystem::remove(job.candidate->path, ec);
  if (a.dropped) {
    Finish(job, Ended(ErrorKind::kInfrastructure,
                      "the server stopped while verifying this candidate; submit it again"));
    return;
  }
  if (!a.store_error.empty()) {
    std::fprintf(stderr, "kvault serve: cannot record %s: %s\n", job.id.c_str(), a.store_error.c_str());
    metrics_.CountStoreError();
  }
  ServeOutcome o = OutcomeFromRecord(a.record, a.from_store);
  const Json phases =
      a.verification && a.verification->phases ? a.verification->phases->ToJson() : Json::object();
  if (a.verification) o.phases = phases;
  metrics_.CountVerification(o.status, lane.lane.device, phases, a.from_store);
  NoteForeignLanguage(o);
  Finish(job, std::move(o));
}

void VerificationService::NoteForeignLanguage(const ServeOutcome& o) {
  if (o.foreign_language.empty()) return;
  const uint64_t count = metrics_.CountForeignLanguage(o.foreign_language);
  // Once a minute at most: a trainer whose prompts ask for a language this backend
  // cannot build sees every answer fail; the operator sees why (docs/serve.md).
  const auto now = Clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  if (foreign_warned_ && now - *foreign_warned_ < std::chrono::minutes(1)) return;
  foreign_warned_ = now;
  std::fprintf(stderr,
               "kvault serve: warning: %llu answer(s) so far were %s code, which the %s backend cannot build: each "
               "is its own compile_error (reward 0). If the prompts ask for that language, serve on a backend "
               "that builds it, or declare `language` (docs/serve.md, \"Answers in another language\")\n",
               static_cast<unsigned long long>(count), o.foreign_language.c_str(),
               std::string(ToString(settings_.options.backend)).c_str());
}

void VerificationService::Finish(Job& job, ServeOutcome outcome) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    job.outcome = std::move(outcome);
    job.state = Job::State::kDone;
    job.finished_at = Clock::now();
    ++generation_;
  }
  changed_.notify_all();
}

// --- health -------------------------------------------------------------------

bool VerificationService::Available() const {
  for (const auto& lane : lanes_)
    if (lane->lane.ready) return true;
  return false;
}

Json VerificationService::Health() const {
  int ready = 0;
  for (const auto& lane : lanes_) ready += lane->lane.ready ? 1 : 0;
  size_t depth;
  bool stopping;
  {
    std::lock_guard<std::mutex> lock(mu_);
    depth = queue_.size();
    stopping = stopping_;
  }
  return {{"status", stopping ? "stopping" : ready > 0 ? "ok" : "unavailable"},
          {"backend", std::string(ToString(settings_.options.backend))},
          {"arch", pool_->arch()},
          {"lanes", lanes_.size()},
          {"lanes_ready", ready},
          {"devices", settings_.devices},
          {"queue_depth", depth},
          {"queue_capacity", settings_.queue_capacity}};
}

std::string VerificationService::MetricsText() const {
  Metrics::Gauges g;
  {
    std::lock_guard<std::mutex> lock(mu_);
    g.queue_depth = queue_.size();
  }
  g.queue_capacity = settings_.queue_capacity;
  for (const auto& lane : lanes_) {
    (lane->busy ? g.lanes_busy : g.lanes_idle)++;
    g.lanes_ready += lane->lane.ready ? 1 : 0;
  }
  return metrics_.Render(g);
}

}  // namespace kvault::serve
