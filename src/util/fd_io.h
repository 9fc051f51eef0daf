#pragma once
// Non-blocking descriptor I/O shared by RunCommand and the worker client.
// Thread-safe (operates on the descriptors it is given only).
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string_view>

namespace kvault {

// A poll(2) timeout for `d`: whole milliseconds rounded up (so a wait never ends
// early), clamped to [0, 2^30].
int PollMillis(std::chrono::steady_clock::duration d);

// Sets O_NONBLOCK. Returns false on failure.
bool SetNonBlocking(int fd);

enum class ReadState {
  kOpen,  // nothing more to read right now (or the budget was used up)
  kEof,   // the other side closed (or a hard read error)
};

// Reads what is available without blocking, up to `budget` bytes, handing each chunk
// to `sink`. REQUIRES: fd is non-blocking.
ReadState ReadAvailable(int fd, const std::function<void(std::string_view)>& sink,
                        size_t budget = 4 << 20);

// write(2) that can never raise SIGPIPE, whatever this process's SIGPIPE disposition:
// a write to a pipe whose reader is gone fails with EPIPE instead. Returns what
// write(2) returns; errno as write(2) set it.
ssize_t WriteNoSigpipe(int fd, const void* data, size_t size);

}  // namespace kvault
