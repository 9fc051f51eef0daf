#pragma once
// Small string helpers with no dependencies. All functions are pure and thread-safe.
//
//   Split("a,b,,c", ',')           -> {"a", "b", "", "c"}
//   Join({"a", "b"}, ", ")         -> "a, b"
//   Truncate(big_log, 64 * 1024)   -> first 32 KiB + "\n[... N bytes omitted ...]\n" + last 32 KiB
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvault {

// Removes leading and trailing ASCII whitespace (space, \t, \n, \r, \f, \v). The result
// views `s`.
std::string_view Trim(std::string_view s);

// Splits on every `sep`; empty fields are kept. Split("", ',') -> {""}.
std::vector<std::string> Split(std::string_view s, char sep);

std::string Join(const std::vector<std::string>& parts, std::string_view sep);

inline bool StartsWith(std::string_view s, std::string_view prefix) { return s.starts_with(prefix); }
inline bool EndsWith(std::string_view s, std::string_view suffix) { return s.ends_with(suffix); }

// std::regex matches by recursion, a few hundred bytes of stack a character of a
// match: a run of 100,000 characters overflows an 8 MiB stack and ends the process
// (every lane of a run, a whole `kvault serve`). Text a candidate or a model controls
// is matched only where no line and no run of whitespace (which may span lines) is
// longer than this.
inline constexpr size_t kMostRegexChars = 4096;
bool FitsRegex(std::string_view text);

// The marker Truncate places where bytes were dropped: "\n[... N bytes omitted ...]\n".
std::string OmittedMarker(size_t omitted);

// Returns `s` unchanged if s.size() <= max. Otherwise keeps about max/2 bytes from the
// head and about max/2 from the tail, joined by OmittedMarker(dropped). Cut points move
// (by at most 3 bytes) so that no UTF-8 sequence is split; the kept bytes never exceed
// `max` (the marker comes on top). Input bytes need not be valid UTF-8.
std::string Truncate(std::string s, size_t max);

// Accumulates a byte stream of any length in bounded memory, keeping the first
// limit/2 and the last limit - limit/2 bytes; Take() renders them like Truncate would
// have rendered the whole stream. Not thread-safe.
class HeadTailBuffer {
 public:
  explicit HeadTailBuffer(size_t limit) : head_cap_(limit / 2), tail_cap_(limit - limit / 2) {}
  void Append(std::string_view data);
  // Everything appended since the last Take(), bounded as described; then empties.
  std::string Take();
  // Bytes appended since the last Take(), kept or not.
  size_t total() const { return total_; }

 private:
  size_t head_cap_, tail_cap_;
  std::string head_, tail_;  // tail_ may hold up to 2 * tail_cap_ bytes between trims
  size_t total_ = 0;
};

// Human-readable duration for messages: "250 ms", "30 s", "1.5 s".
std::string FormatDuration(std::chrono::milliseconds d);

// Human-readable size in binary units for messages: "512 B", "300 MiB" (whole MiB,
// rounded down), "8 GiB" (a whole number of GiB), "72.4 GiB".
std::string FormatBytes(uint64_t bytes);

// Order of names with numbers in them, as people number things: runs of digits
// compare as numbers ("sample_2" < "sample_10", "iter9_0" < "iter10_0"), the rest
// byte by byte; equal numbers with more leading zeros go last. A strict weak order.
bool NaturalLess(std::string_view a, std::string_view b);

}  // namespace kvault
