#include "engine/lane_activity.h"

#include <cmath>

namespace kvault {
namespace {

double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::string Seconds(double s) { return std::to_string(static_cast<long long>(std::floor(s))) + "s"; }

}  // namespace

void LaneActivity::Waiting::End() {
  if (!activity_) return;
  std::lock_guard<std::mutex> lock(activity_->mu_);
  activity_->waiting_on_.clear();
  activity_ = nullptr;
}

void LaneActivity::Begin(std::string attempt) {
  std::lock_guard<std::mutex> lock(mu_);
  busy_ = true;
  attempt_ = std::move(attempt);
  phase_.reset();
  waiting_on_.clear();
  begun_ = entered_ = Clock::now();
}

void LaneActivity::Enter(Phase phase) {
  std::lock_guard<std::mutex> lock(mu_);
  phase_ = phase;
  entered_ = Clock::now();
}

LaneActivity::Waiting LaneActivity::Wait(std::string on) {
  std::lock_guard<std::mutex> lock(mu_);
  waiting_on_ = std::move(on);
  wait_began_ = Clock::now();
  return Waiting(this);
}

void LaneActivity::End() {
  std::lock_guard<std::mutex> lock(mu_);
  busy_ = false;
  attempt_.clear();
  phase_.reset();
  waiting_on_.clear();
}

LaneActivity::Now LaneActivity::Read() const {
  std::lock_guard<std::mutex> lock(mu_);
  Now now;
  now.busy = busy_;
  if (!busy_) return now;
  now.attempt = attempt_;
  now.phase = phase_;
  now.attempt_s = Since(begun_);
  now.phase_s = Since(entered_);
  now.waiting_on = waiting_on_;
  if (!waiting_on_.empty()) now.wait_s = Since(wait_began_);
  return now;
}

std::string Describe(const LaneActivity::Now& now) {
  if (!now.busy) return "idle";
  std::string line = now.attempt + ": ";
  if (now.phase)
    line += std::string(ToString(*now.phase)) + " for " + Seconds(now.phase_s) + " (attempt " +
            Seconds(now.attempt_s) + ")";
  else
    line += "starting for " + Seconds(now.attempt_s) + " (store lookup, task description or worker start)";
  if (!now.waiting_on.empty()) line += ", waiting " + Seconds(now.wait_s) + " for " + now.waiting_on;
  return line;
}

}  // namespace kvault
