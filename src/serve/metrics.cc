#include "serve/metrics.h"

#include <cstdio>
#include <optional>
#include <sstream>

#include "engine/verification_records.h"

namespace kvault::serve {
namespace {

// A label value in the exposition format: backslash, quote and newline escaped.
std::string Label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\', out += c;
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string Num(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

void Header(std::ostringstream& o, const char* name, const char* type, const char* help) {
  o << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
}

}  // namespace

bool IsDevicePhase(const std::string& phase) {
  const std::optional<Phase> p = PhaseFromString(phase);
  return p && kvault::IsDevicePhase(*p);
}

void Metrics::CountRequest(const std::string& endpoint, int code) {
  std::lock_guard<std::mutex> lock(mu_);
  ++requests_[{endpoint, code}];
}

void Metrics::CountVerification(const std::string& status, int device, const Json& phases, bool from_store) {
  std::lock_guard<std::mutex> lock(mu_);
  ++verifications_[status];
  if (from_store) {
    ++from_store_;
    return;
  }
  if (!phases.is_object()) return;
  for (const auto& [name, seconds] : phases.items()) {
    if (!seconds.is_number()) continue;
    auto& [sum, count] = phases_[name];
    sum += seconds.get<double>();
    ++count;
    if (IsDevicePhase(name)) device_busy_[device] += seconds.get<double>();
  }
}

void Metrics::CountStoreError() {
  std::lock_guard<std::mutex> lock(mu_);
  ++store_errors_;
}

uint64_t Metrics::CountForeignLanguage(const std::string& language) {
  std::lock_guard<std::mutex> lock(mu_);
  ++foreign_language_[language];
  uint64_t all = 0;
  for (const auto& [name, n] : foreign_language_) all += n;
  return all;
}

std::string Metrics::Render(const Gauges& g) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::ostringstream o;
  Header(o, "kvault_queue_depth", "gauge", "Candidates waiting for a lane.");
  o << "kvault_queue_depth " << g.queue_depth << '\n';
  Header(o, "kvault_queue_capacity", "gauge", "Most candidates the queue takes.");
  o << "kvault_queue_capacity " << g.queue_capacity << '\n';
  Header(o, "kvault_lanes", "gauge", "Verification lanes by state.");
  o << "kvault_lanes{state=\"busy\"} " << g.lanes_busy << '\n'
    << "kvault_lanes{state=\"idle\"} " << g.lanes_idle << '\n';
  Header(o, "kvault_lanes_ready", "gauge", "Lanes whose workers answered hello.");
  o << "kvault_lanes_ready " << g.lanes_ready << '\n';
  Header(o, "kvault_requests_total", "counter", "HTTP requests by endpoint and status code.");
  for (const auto& [k, n] : requests_)
    o << "kvault_requests_total{endpoint=\"" << Label(k.first) << "\",code=\"" << k.second << "\"} " << n << '\n';
  Header(o, "kvault_verifications_total", "counter", "Finished candidates by outcome status.");
  for (const auto& [status, n] : verifications_)
    o << "kvault_verifications_total{status=\"" << Label(status) << "\"} " << n << '\n';
  Header(o, "kvault_from_store_total", "counter", "Candidates answered from the store.");
  o << "kvault_from_store_total " << from_store_ << '\n';
  Header(o, "kvault_store_errors_total", "counter", "Results that could not be written to the store.");
  o << "kvault_store_errors_total " << store_errors_ << '\n';
  Header(o, "kvault_foreign_language_total", "counter",
         "Answers whose code is in a language this backend cannot build (each its own compile_error), by language.");
  for (const auto& [language, n] : foreign_language_)
    o << "kvault_foreign_language_total{language=\"" << Label(language) << "\"} " << n << '\n';
  Header(o, "kvault_phase_seconds", "summary", "Wall seconds of each verification phase.");
  for (const auto& [phase, sc] : phases_) {
    o << "kvault_phase_seconds_sum{phase=\"" << Label(phase) << "\"} " << Num(sc.first) << '\n';
    o << "kvault_phase_seconds_count{phase=\"" << Label(phase) << "\"} " << sc.second << '\n';
  }
  Header(o, "kvault_device_busy_seconds_total", "counter",
         "Seconds of correctness, timing and re-check phases run on each device.");
  for (const auto& [device, s] : device_busy_)
    o << "kvault_device_busy_seconds_total{device=\"" << device << "\"} " << Num(s) << '\n';
  return o.str();
}

}  // namespace kvault::serve
