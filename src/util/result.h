#pragma once
// Result<T>: a value or an error message, for failures that the caller handles
// locally (a file that does not parse, a tool that is missing). Kernel outcomes are
// not errors: they are values of kvault::Outcome (engine/outcome.h).
//
//   Result<int> ParsePort(std::string_view s);
//   auto port = ParsePort("80");
//   if (!port) return Error(port.error());
//   use(*port);
//
// Result<T, E>: the same with an error of type E (a struct with a `message` string),
// for callers that must know more of a failure than its message (failure()).
#include <string>
#include <utility>
#include <variant>

namespace kvault {

struct Error {
  std::string message;
};

template <class T, class E = Error>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}         // NOLINT: implicit by design
  Result(E error) : v_(std::move(error)) {}         // NOLINT
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  // REQUIRES: ok()
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  // REQUIRES: !ok()
  const std::string& error() const { return std::get<1>(v_).message; }
  // REQUIRES: !ok()
  const E& failure() const { return std::get<1>(v_); }

 private:
  std::variant<T, E> v_;
};

// Result<void>: success or an error message.
class Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error.message)), ok_(false) {}  // NOLINT
  static Status Ok() { return Status(); }
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const std::string& error() const { return error_; }

 private:
  std::string error_;
  bool ok_ = true;
};

}  // namespace kvault
