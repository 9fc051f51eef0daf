#include "serve/connection_gate.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "serve/error_kind.h"

namespace kvault::serve {
void CountHeadCutOff();  // a connection closed for its head's size, in cut_off()
void NoteRead(bool head_ended, size_t body_bytes);  // progress of the connection's request
}  // namespace kvault::serve

namespace {
// The socket this thread accepted last (-1: none since the queue took the last one).
thread_local int last_accepted = -1;

// The head (request line and headers) a gated connection's thread is reading: its
// bytes so far and the last bytes read, to find its end ("\r\n\r\n") across reads.
struct HeadRead {
  size_t bytes = 0;
  size_t limit = 0;  // 0: not a gated connection's thread
  bool done = false;
  std::string tail;
};
thread_local HeadRead head;

// What one read brought: whether the head is still within its limit, whether it
// ended in this read, and the bytes after its end (the body; they do not count).
struct Counted {
  bool within = true;
  bool head_ended = false;
  size_t body = 0;
};

Counted CountHead(const char* data, size_t n) {
  Counted c;
  if (head.limit == 0) return c;
  if (head.done) {
    c.body = n;
    return c;
  }
  std::string seen = head.tail + std::string(data, n);
  size_t end = seen.find("\r\n\r\n");
  size_t end_len = 4;
  if (const size_t lf = seen.find("\n\n"); lf != std::string::npos && (end == std::string::npos || lf < end)) {
    end = lf;
    end_len = 2;
  }
  if (end != std::string::npos) {
    head.done = true;
    c.head_ended = true;
    const size_t used = std::min(n, end + end_len - std::min(head.tail.size(), end + end_len));
    head.bytes += used;
    c.body = n - used;
  } else {
    head.bytes += n;
    head.tail = seen.substr(seen.size() - std::min<size_t>(seen.size(), 3));
  }
  c.within = head.bytes <= head.limit;
  return c;
}
}  // namespace

// The C library's accept calls, noting the socket for ConnectionGate's queue (its
// enqueue runs on the thread that accepted, right after the call). Same behaviour
// otherwise: the system call itself.
extern "C" int accept4(int fd, struct sockaddr* addr, socklen_t* len, int flags) {
  const int sock = static_cast<int>(::syscall(SYS_accept4, fd, addr, len, flags));
  if (sock >= 0) last_accepted = sock;
  return sock;
}

extern "C" int accept(int fd, struct sockaddr* addr, socklen_t* len) { return accept4(fd, addr, len, 0); }

// The C library's recv (cpp-httplib reads requests with it), counting the head a gated
// connection's thread reads: past GateSettings::max_head_bytes the read fails as a reset
// connection, which cpp-httplib closes. 5 million header lines (40 MB sent in 12 s)
// held 480 MB of the server's memory before (cpp-httplib bounds a line, not their
// number). Same behaviour otherwise: the system call itself.
extern "C" ssize_t recv(int fd, void* buf, size_t len, int flags) {
  const ssize_t n = ::syscall(SYS_recvfrom, fd, buf, len, flags, nullptr, nullptr);
  if (n <= 0 || (flags & MSG_PEEK)) return n;
  const Counted c = CountHead(static_cast<const char*>(buf), static_cast<size_t>(n));
  if (!c.within) {
    kvault::serve::CountHeadCutOff();  // before the client can see the connection end
    ::shutdown(fd, SHUT_RDWR);
    errno = ECONNRESET;
    return -1;
  }
  if (c.head_ended || c.body > 0) kvault::serve::NoteRead(c.head_ended, c.body);
  return n;
}

namespace kvault::serve {

using Clock = std::chrono::steady_clock;

struct ConnectionGate::State {
  struct Conn {
    int guard = -1;  // a duplicate of the socket: its number cannot be reused while kept
    bool reading = true;
    bool cut = false;
    bool head_done = false;     // the request's head is read (its body may be reading)
    uint64_t body_bytes = 0;    // of the request's body, read so far
    Clock::time_point deadline;  // read_deadline: the request's head and body in all
    Clock::time_point since;     // the request began (head), or its head ended (body)
  };

  // When `c`, still reading, falls behind given `slack`: a head `slack` after it
  // began, a body `slack` plus a second per min_body_rate bytes after its head ended.
  Clock::time_point BehindAt(const Conn& c, std::chrono::milliseconds slack) const {
    auto at = c.since + slack;
    if (c.head_done)
      at += std::chrono::microseconds(c.body_bytes * 1000000 / std::max<size_t>(1, settings.min_body_rate));
    return at;
  }

  GateSettings settings;
  mutable std::mutex mu;
  std::condition_variable changed;
  std::map<uint64_t, Conn> conns;
  uint64_t next_id = 1;
  size_t running = 0;  // connection threads not yet finished
  size_t closing = 0;  // of them, shut down (their slots are free again)
  size_t refused = 0, cut_off = 0, evicted = 0;
  bool stopping = false;
  bool warned = false;
  std::vector<std::thread> threads;
  std::vector<std::thread::id> finished;  // to join
  std::thread watchdog;

  explicit State(GateSettings s) : settings(s) {}

  void Watch() {
    std::unique_lock<std::mutex> lock(mu);
    while (!stopping) {
      changed.wait_for(lock, std::chrono::milliseconds(200));
      CutReading(Clock::now());
    }
  }

  // Shuts a reading connection down: its thread's read ends, cpp-httplib closes it.
  // REQUIRES: mu held.
  void Cut(Conn& c) {
    ::shutdown(c.guard, SHUT_RDWR);
    c.cut = true;
    ++closing;
    ++cut_off;
  }

  // Shuts down each connection reading past one of its deadlines at `now` (all of
  // them at Clock::time_point::max()). REQUIRES: mu held.
  void CutReading(Clock::time_point now) {
    for (auto& [id, c] : conns) {
      if (!c.reading || c.cut || c.guard < 0) continue;
      if (now < c.deadline && now < BehindAt(c, settings.head_deadline)) continue;
      Cut(c);
    }
  }

  // Shuts down the reading connection furthest behind at `now`, if one is behind
  // by evict_grace; false if none is. REQUIRES: mu held.
  bool EvictSlowest(Clock::time_point now) {
    Conn* slowest = nullptr;
    Clock::time_point slowest_at;
    for (auto& [id, c] : conns) {
      if (!c.reading || c.cut || c.guard < 0) continue;
      const auto at = BehindAt(c, settings.evict_grace);
      if (at <= now && (!slowest || at < slowest_at)) {
        slowest = &c;
        slowest_at = at;
      }
    }
    if (!slowest) return false;
    Cut(*slowest);
    ++evicted;
    return true;
  }

  // Joins the threads that finished. REQUIRES: mu not held.
  void Reap() {
    std::vector<std::thread> done;
    {
      std::lock_guard<std::mutex> lock(mu);
      for (auto it = threads.begin(); it != threads.end();) {
        if (std::find(finished.begin(), finished.end(), it->get_id()) != finished.end()) {
          done.push_back(std::move(*it));
          it = threads.erase(it);
        } else {
          ++it;
        }
      }
      finished.clear();
    }
    for (auto& t : done) t.join();
  }
};

namespace {

// The connection the calling thread serves (set while a connection's task runs).
thread_local ConnectionGate::State* current_state = nullptr;
thread_local uint64_t current_id = 0;

// Answers a connection beyond the bound: 503 with Retry-After, without reading it.
void Refuse(int sock, int retry_after_s) {
  const std::string body = "{\"error\":{\"kind\":\"" + std::string(ToString(ErrorKind::kOverloaded)) +
                           "\",\"message\":\"the server has too many connections open; retry later\"}}\n";
  const std::string answer = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: " +
                             std::to_string(retry_after_s) + "\r\nConnection: close\r\nContent-Length: " +
                             std::to_string(body.size()) + "\r\n\r\n" + body;
  (void)::send(sock, answer.data(), answer.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  ::shutdown(sock, SHUT_RDWR);
}

class GateQueue : public httplib::TaskQueue {
 public:
  explicit GateQueue(std::shared_ptr<ConnectionGate::State> state) : state_(std::move(state)) {}

  void enqueue(std::function<void()> fn) override {
    auto& s = *state_;
    const int sock = last_accepted;
    last_accepted = -1;
    s.Reap();
    std::unique_lock<std::mutex> lock(s.mu);
    if (s.stopping) {  // not after shutdown(): served here, as it comes
      lock.unlock();
      fn();
      return;
    }
    if (sock < 0 && !s.warned) {
      s.warned = true;
      std::fprintf(stderr, "kvault serve: cannot see the sockets of connections; reads have no total deadline\n");
    }
    // Connections shut down but not yet finished hold a thread a moment longer, not a
    // slot: a quarter more than the bound may run at once (a flood of new connections
    // closes old ones faster than their threads end).
    const size_t closing_room = std::max<size_t>(1, s.settings.max_connections / 4);
    if (s.running >= s.settings.max_connections + closing_room ||
        (s.running - s.closing >= s.settings.max_connections && !s.EvictSlowest(Clock::now()))) {
      ++s.refused;
      lock.unlock();
      if (sock >= 0) Refuse(sock, s.settings.retry_after_s);
      fn();  // reads nothing (shut down) and closes the socket
      return;
    }
    ConnectionGate::State::Conn c;
    c.guard = sock >= 0 ? ::fcntl(sock, F_DUPFD_CLOEXEC, 0) : -1;
    c.since = Clock::now();
    c.deadline = c.since + s.settings.read_deadline;
    const uint64_t id = s.next_id++;
    s.conns.emplace(id, c);
    ++s.running;
    s.threads.emplace_back([state = state_, id, limit = s.settings.max_head_bytes, fn = std::move(fn)] {
      current_state = state.get();
      current_id = id;
      head = HeadRead{};
      head.limit = limit;
      fn();
      head.limit = 0;
      current_state = nullptr;
      std::lock_guard<std::mutex> lock(state->mu);
      auto it = state->conns.find(id);
      if (it != state->conns.end()) {
        if (it->second.guard >= 0) ::close(it->second.guard);
        if (it->second.cut) --state->closing;
        state->conns.erase(it);
      }
      --state->running;
      state->finished.push_back(std::this_thread::get_id());
      state->changed.notify_all();
    });
  }

  void shutdown() override {
    auto& s = *state_;
    {
      std::unique_lock<std::mutex> lock(s.mu);
      s.changed.wait(lock, [&] { return s.running == 0; });
    }
    s.Reap();
  }

 private:
  std::shared_ptr<ConnectionGate::State> state_;
};

void Mark(bool reading) {
  ConnectionGate::State* s = current_state;
  if (!s) return;
  std::lock_guard<std::mutex> lock(s->mu);
  auto it = s->conns.find(current_id);
  if (it == s->conns.end()) return;
  it->second.reading = reading;
  if (reading) {
    it->second.since = Clock::now();
    it->second.deadline = it->second.since + s->settings.read_deadline;
    it->second.head_done = false;
    it->second.body_bytes = 0;
  }
  // The next request's head is counted anew; a request being handled has read its own.
  const size_t limit = head.limit;
  head = HeadRead{};
  head.limit = limit;
  head.done = !reading;
}

}  // namespace

void NoteRead(bool head_ended, size_t body_bytes) {
  ConnectionGate::State* s = current_state;
  if (!s) return;
  std::lock_guard<std::mutex> lock(s->mu);
  auto it = s->conns.find(current_id);
  if (it == s->conns.end()) return;
  auto& c = it->second;
  if (head_ended && !c.head_done) {
    c.head_done = true;
    c.since = Clock::now();
    c.body_bytes = 0;
  }
  c.body_bytes += body_bytes;
}

void CountHeadCutOff() {
  ConnectionGate::State* s = current_state;
  if (!s) return;
  std::lock_guard<std::mutex> lock(s->mu);
  ++s->cut_off;
}

ConnectionGate::ConnectionGate(GateSettings settings) : state_(std::make_shared<State>(settings)) {
  state_->watchdog = std::thread([s = state_.get()] { s->Watch(); });
}

ConnectionGate::~ConnectionGate() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stopping = true;
  }
  state_->changed.notify_all();
  state_->watchdog.join();
  state_->Reap();
  for (auto& t : state_->threads) t.join();
}

httplib::TaskQueue* ConnectionGate::NewQueue() { return new GateQueue(state_); }

void ConnectionGate::CloseReading() {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->CutReading(Clock::time_point::max());
}

void ConnectionGate::Handling() { Mark(false); }
void ConnectionGate::Reading() { Mark(true); }

void ConnectionGate::HeadRead() {
  if (head.limit == 0 || head.done) return;
  head.done = true;
  NoteRead(true, 0);
}

size_t ConnectionGate::open() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->running;
}

size_t ConnectionGate::refused() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->refused;
}

size_t ConnectionGate::cut_off() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->cut_off;
}

size_t ConnectionGate::evicted() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->evicted;
}

}  // namespace kvault::serve
