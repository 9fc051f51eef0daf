#pragma once
// The worker component's public header: the connection interface and the real,
// process-backed implementation. Tests of other components use worker/fake_worker.h.
#include "worker/connection.h"      // IWYU pragma: export
#include "worker/process_worker.h"  // IWYU pragma: export
