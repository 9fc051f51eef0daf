#pragma once
// The engine's held-out key: the secret the worker draws the sizes of a task's larger
// held-out case from (python/kvault_worker/held_out.py; docs/adversarial.md,
// "Hard-coded shapes"). Sent to every worker with `hello`. A candidate sees the task
// file but not the key, so it cannot know the sizes it will be checked at.
//
//   HelloRequest{backend, index, first, HeldOutKey()}
//
// Thread-safe.
#include <string>

namespace kvault {

// The name of the larger held-out case (held_out.py's HELD_OUT_LARGER): the one case
// whose inputs depend on the key.
inline constexpr char kHeldOutLargerCase[] = "held_out_larger";

// KVAULT_HELD_OUT_KEY when set and not empty (to check a verdict again at the same
// sizes), else 128 bits from the operating system's random source, drawn once per
// process: every verification of this process meets the same sizes for a task, another
// process other ones.
const std::string& HeldOutKey();

}  // namespace kvault
