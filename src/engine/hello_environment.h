#pragma once
// HelloEnvironment: the part of a worker's hello answer that is the machine's, not the
// worker's: the build environment ("build": include and library paths, ABI) and the
// backend probe ("available_backends", "unavailable_reasons"). A worker gathers it in
// about a second of imports and subprocesses (torch.utils.cpp_extension); the lanes of
// one process share one machine and one Python, so one worker is asked for it and the
// other lanes' first workers are greeted without it (HelloRequest::environment false),
// their answers completed from the one that has it. Starting N lanes then gathers it
// once, not N times, beside N workers importing PyTorch at once; the hellos are still
// sent at once.
//
//   auto shared = std::make_shared<HelloEnvironment>();   // one per pool
//   if (shared->Claim()) { /* ask with environment */ shared->Publish(answer); or shared->Release(); }
//   else { /* ask without */ if (auto known = shared->Await()) HelloEnvironment::Complete(answer, *known);
//          else { /* the claim is now this caller's: ask with environment, Publish or Release */ } }
//
// Thread-safe.
#include <condition_variable>
#include <mutex>
#include <optional>

#include "util/json.h"

namespace kvault {

class HelloEnvironment {
 public:
  // Whether the caller is to ask for the environment (then Publish or Release): true for
  // the first to come, while none is published.
  bool Claim();
  // For one that did not claim: the environment once the claimant published it; nullopt
  // when the claimant got no answer, the claim then the caller's (it asks in its place).
  std::optional<Json> Await();
  // The claimant's answer: its environment fields are every later session's.
  void Publish(const Json& hello);
  // The claimant got no answer (its worker failed): the next waiter asks.
  void Release();

  // Adds to `hello` (an answer without the environment) the fields of `environment`.
  static void Complete(Json& hello, const Json& environment);

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  bool claimed_ = false;
  std::optional<Json> environment_;
};

}  // namespace kvault
