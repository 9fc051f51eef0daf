#pragma once
// Counters of `kvault serve`, rendered in Prometheus' text exposition format
// (docs/serve.md, "Metrics"). Thread-safe.
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "util/json.h"

namespace kvault::serve {

class Metrics {
 public:
  void CountRequest(const std::string& endpoint, int code);
  // One finished verification: its status, where it ran, its phases (seconds by name)
  // and whether the store answered it.
  void CountVerification(const std::string& status, int device, const Json& phases, bool from_store);
  void CountStoreError();
  // One answer whose code is in a language the backend cannot build (its compile_error);
  // returns how many so far.
  uint64_t CountForeignLanguage(const std::string& language);

  // Gauges are the caller's (queue depth, lanes); counters come from here.
  struct Gauges {
    size_t queue_depth = 0, queue_capacity = 0;
    int lanes_busy = 0, lanes_idle = 0, lanes_ready = 0;
  };
  std::string Render(const Gauges& gauges) const;

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  std::map<std::string, uint64_t> verifications_;
  uint64_t from_store_ = 0, store_errors_ = 0;
  std::map<std::string, uint64_t> foreign_language_;  // by language
  std::map<std::string, std::pair<double, uint64_t>> phases_;  // sum, count
  std::map<int, double> device_busy_;
};

// The phases that keep a device busy (docs/serve.md): their seconds add up to
// kvault_device_busy_seconds_total.
bool IsDevicePhase(const std::string& phase);

}  // namespace kvault::serve
