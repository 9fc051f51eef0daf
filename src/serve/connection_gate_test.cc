#include "serve/connection_gate.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace kvault::serve {
namespace {

using namespace std::chrono_literals;

// An httplib server on a free loopback port behind a gate, marking its requests as
// kvault serve does (read once the head is, or for a POST once the body is), with
// one route that answers at once and two that wait as a verification does.
class GatedServer {
 public:
  explicit GatedServer(GateSettings settings) : gate_(settings) {
    server_.new_task_queue = [this] { return gate_.NewQueue(); };
    server_.set_read_timeout(60);  // each read's own bound: longer than any deadline here
    server_.set_pre_routing_handler([](const httplib::Request& q, httplib::Response&) {
      if (q.method == "POST")
        ConnectionGate::HeadRead();
      else
        ConnectionGate::Handling();
      return httplib::Server::HandlerResponse::Unhandled;
    });
    server_.set_logger([](const httplib::Request&, const httplib::Response&) { ConnectionGate::Reading(); });
    server_.Get("/ok", [](const httplib::Request&, httplib::Response& r) { r.set_content("ok", "text/plain"); });
    server_.Post("/ok", [](const httplib::Request&, httplib::Response& r) {
      ConnectionGate::Handling();
      r.set_content("ok", "text/plain");
    });
    server_.Get("/wait", [](const httplib::Request&, httplib::Response& r) {
      std::this_thread::sleep_for(1500ms);  // a verification: not reading, no deadline
      r.set_content("done", "text/plain");
    });
    server_.Get("/long", [](const httplib::Request&, httplib::Response& r) {
      std::this_thread::sleep_for(3s);
      r.set_content("done", "text/plain");
    });
    int listening = -1;
    server_.set_socket_options([&listening](socket_t sock) { listening = sock; });
    port_ = server_.bind_to_any_port("127.0.0.1");
    ::listen(listening, SOMAXCONN);  // cpp-httplib's backlog of 5 would delay connections by seconds
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(5ms);
  }
  ~GatedServer() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  ConnectionGate& gate() { return gate_; }

 private:
  ConnectionGate gate_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

int Connect(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

void Send(int fd, const std::string& s) { (void)::send(fd, s.data(), s.size(), MSG_NOSIGNAL); }

// Everything the server sends until it closes (or `limit` passes); "" on timeout.
std::string ReadUntilClosed(int fd, std::chrono::milliseconds limit, bool* closed) {
  std::string out;
  const auto until = std::chrono::steady_clock::now() + limit;
  *closed = false;
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      *closed = true;
      break;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

TEST(ConnectionGate, ClosesARequestStillReadingPastItsDeadline) {
  GatedServer s({.max_connections = 8, .read_deadline = 1000ms});
  const int fd = Connect(s.port());
  ASSERT_GE(fd, 0);
  // A byte every 200 ms: each read is quick, the request never ends.
  const auto start = std::chrono::steady_clock::now();
  bool closed = false;
  for (int i = 0; i < 30 && !closed; ++i) {
    Send(fd, i == 0 ? "GET /ok HTTP/1.1\r\n" : "X");
    ReadUntilClosed(fd, 200ms, &closed);
  }
  const double s_taken = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(closed);
  EXPECT_LT(s_taken, 3.0);
  EXPECT_EQ(s.gate().cut_off(), 1u);
  ::close(fd);
}

// cpp-httplib bounds a header line, not their number, and keeps them all: 5 million
// lines held 480 MB of the server. A head past max_head_bytes closes the connection;
// one under it, and a body of any size the server takes, are served.
TEST(ConnectionGate, AHeadPastItsBoundIsClosedAndABodyDoesNotCount) {
  GatedServer s({.max_connections = 8, .read_deadline = 30000ms, .max_head_bytes = 16 << 10});
  std::string lines;
  for (int i = 0; i < 1000; ++i) lines += "X-A: b\r\n";  // 8 KB
  auto ask = [&](const std::string& request) {
    const int fd = Connect(s.port());
    Send(fd, request);
    bool closed = false;
    const std::string answer = ReadUntilClosed(fd, 5s, &closed);
    ::close(fd);
    return answer;
  };
  EXPECT_NE(ask("GET /ok HTTP/1.1\r\nHost: x\r\n" + lines + "Connection: close\r\n\r\n").find("200 OK"),
            std::string::npos);
  EXPECT_EQ(s.gate().cut_off(), 0u);
  const std::string many = lines + lines + lines;  // 24 KB
  EXPECT_EQ(ask("GET /ok HTTP/1.1\r\nHost: x\r\n" + many + "Connection: close\r\n\r\n").find("200 OK"),
            std::string::npos);
  EXPECT_EQ(s.gate().cut_off(), 1u);
  const std::string body(100 << 10, 'b');
  EXPECT_NE(ask("POST /ok HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body.size()) +
                "\r\nConnection: close\r\n\r\n" + body).find("200 OK"), std::string::npos);
  EXPECT_EQ(s.gate().cut_off(), 1u);
}

TEST(ConnectionGate, AWaitingHandlerIsNotCutOff) {
  GatedServer s({.max_connections = 8, .read_deadline = 500ms, .head_deadline = 500ms});
  const int fd = Connect(s.port());
  ASSERT_GE(fd, 0);
  Send(fd, "GET /wait HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  bool closed = false;
  const std::string answer = ReadUntilClosed(fd, 10s, &closed);
  EXPECT_NE(answer.find("200 OK"), std::string::npos) << answer;
  EXPECT_NE(answer.find("done"), std::string::npos);
  EXPECT_EQ(s.gate().cut_off(), 0u);
  ::close(fd);
}

TEST(ConnectionGate, SlowClientsDoNotDelayOthersAndTheExcessIsRefused) {
  // No slow one is closed for room here (evict_grace): beyond the bound, 503.
  GatedServer s({.max_connections = 40, .read_deadline = 30000ms, .head_deadline = 30000ms,
                 .evict_grace = 30000ms});
  std::vector<int> slow;
  for (int i = 0; i < 39; ++i) {
    const int fd = Connect(s.port());
    ASSERT_GE(fd, 0);
    Send(fd, "GET /ok HTTP/1.1\r\n");  // and nothing more
    slow.push_back(fd);
  }
  while (s.gate().open() < 39) std::this_thread::sleep_for(5ms);
  // The 40th is served at once beside 39 slow ones.
  const auto start = std::chrono::steady_clock::now();
  int fd = Connect(s.port());
  Send(fd, "GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  bool closed = false;
  std::string answer = ReadUntilClosed(fd, 5s, &closed);
  EXPECT_NE(answer.find("200 OK"), std::string::npos) << answer;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  ::close(fd);
  // Its thread ends a moment after the answer: until then, it still counts.
  while (s.gate().open() > 39) std::this_thread::sleep_for(5ms);
  // With 40 open, the 41st is refused with 503 and closed without being read.
  const int held = Connect(s.port());
  Send(held, "GET /ok HTTP/1.1\r\n");
  while (s.gate().open() < 40) std::this_thread::sleep_for(5ms);
  fd = Connect(s.port());
  answer = ReadUntilClosed(fd, 5s, &closed);
  EXPECT_TRUE(closed);
  EXPECT_NE(answer.find("503"), std::string::npos) << answer;
  EXPECT_NE(answer.find("Retry-After"), std::string::npos);
  EXPECT_EQ(s.gate().refused(), 1u);
  ::close(fd);
  ::close(held);
  for (int f : slow) ::close(f);
}

// A head or a body that trickles (a byte every 200 ms: each read is quick) is closed
// at its own deadline, long before read_deadline.
TEST(ConnectionGate, AHeadOrABodyThatTricklesIsClosedAtItsDeadline) {
  GatedServer s({.max_connections = 8, .read_deadline = 30000ms, .head_deadline = 1000ms});
  auto trickle = [&](const std::string& first) {
    const int fd = Connect(s.port());
    const auto start = std::chrono::steady_clock::now();
    bool closed = false;
    for (int i = 0; i < 40 && !closed; ++i) {
      Send(fd, i == 0 ? first : "X");
      ReadUntilClosed(fd, 200ms, &closed);
    }
    ::close(fd);
    EXPECT_TRUE(closed) << first;
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  EXPECT_LT(trickle("GET /ok HTTP/1.1\r\n"), 3.0);
  EXPECT_EQ(s.gate().cut_off(), 1u);
  // 64 KiB/s is owed after the head: 1 s plus a 15 µs per byte sent.
  EXPECT_LT(trickle("POST /ok HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"), 3.0);
  EXPECT_EQ(s.gate().cut_off(), 2u);
}

// Twice the bound of slow clients (a partial head, then a byte now and then): a
// request sent at once is still served at once, each new connection closing the
// slowest head; a request being handled (its head read, waiting as a verification
// does) is never closed to make room, though it is the oldest connection.
TEST(ConnectionGate, SlowHeadsMakeRoomForAnHonestRequestButNotAWaitingOne) {
  constexpr int kBound = 16;
  GatedServer s({.max_connections = kBound, .read_deadline = 30000ms, .head_deadline = 30000ms,
                 .evict_grace = 300ms});
  const int waiting = Connect(s.port());
  Send(waiting, "GET /long HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  while (s.gate().open() < 1) std::this_thread::sleep_for(5ms);
  std::vector<int> slow;
  for (int i = 0; i < 2 * kBound; ++i) {
    const int fd = Connect(s.port());
    ASSERT_GE(fd, 0);
    Send(fd, "GET /ok HTTP/1.1\r\n");
    slow.push_back(fd);
    std::this_thread::sleep_for(30ms);
  }
  std::this_thread::sleep_for(350ms);  // the newest slow heads are past evict_grace too
  for (int f : slow) Send(f, "X");     // trickling, not idle
  const auto start = std::chrono::steady_clock::now();
  const int fd = Connect(s.port());
  Send(fd, "GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  bool closed = false;
  const std::string answer = ReadUntilClosed(fd, 5s, &closed);
  EXPECT_NE(answer.find("200 OK"), std::string::npos) << answer;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  EXPECT_GE(s.gate().evicted(), static_cast<size_t>(kBound));
  ::close(fd);
  const std::string waited = ReadUntilClosed(waiting, 10s, &closed);
  EXPECT_NE(waited.find("done"), std::string::npos) << waited;
  ::close(waiting);
  for (int f : slow) ::close(f);
}

TEST(ConnectionGate, ClosingReadingConnectionsSparesAWaitingOne) {
  GatedServer s({.max_connections = 8, .read_deadline = 30000ms});
  const int half = Connect(s.port());
  Send(half, "GET /ok HTTP/1.1\r\n");
  const int waiting = Connect(s.port());
  Send(waiting, "GET /wait HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  while (s.gate().open() < 2) std::this_thread::sleep_for(5ms);
  std::this_thread::sleep_for(200ms);  // the waiting one is in its handler
  s.gate().CloseReading();
  bool closed = false;
  ReadUntilClosed(half, 1s, &closed);
  EXPECT_TRUE(closed);
  const std::string answer = ReadUntilClosed(waiting, 10s, &closed);
  EXPECT_NE(answer.find("done"), std::string::npos) << answer;
  ::close(half);
  ::close(waiting);
}

}  // namespace
}  // namespace kvault::serve
