#pragma once
// Runs a callable when the scope ends, on every way out.
//
//   ScopeExit close([&] { ReleaseHandoff(call); });
#include <utility>

namespace kvault {

template <class F>
class ScopeExit {
 public:
  explicit ScopeExit(F f) : f_(std::move(f)) {}
  ~ScopeExit() { f_(); }
  ScopeExit(const ScopeExit&) = delete;
  ScopeExit& operator=(const ScopeExit&) = delete;

 private:
  F f_;
};

}  // namespace kvault
