#include "util/strings.h"

#include <algorithm>
#include <cstdio>

namespace kvault {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

bool IsUtf8Continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Drops a UTF-8 sequence cut short at the end of `s` (at most 3 bytes).
void DropIncompleteUtf8Suffix(std::string& s) {
  for (size_t back = 1; back <= 3 && back <= s.size(); ++back) {
    auto c = static_cast<unsigned char>(s[s.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation: keep looking for the lead byte
    size_t need = (c >= 0xF0) ? 4 : (c >= 0xE0) ? 3 : (c >= 0xC0) ? 2 : 1;
    if (need > back) s.resize(s.size() - back);
    return;
  }
}

// Number of continuation bytes (at most 3) at the start of `s`.
size_t LeadingContinuations(std::string_view s) {
  size_t n = 0;
  while (n < 3 && n < s.size() && IsUtf8Continuation(s[n])) ++n;
  return n;
}

}  // namespace

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.emplace_back(s.substr(start));
      return out;
    }
    out.emplace_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::string OmittedMarker(size_t omitted) {
  return "\n[... " + std::to_string(omitted) + " bytes omitted ...]\n";
}

bool FitsRegex(std::string_view text) {
  size_t line = 0, space = 0;
  for (char c : text) {
    line = c == '\n' ? 0 : line + 1;
    space = IsSpace(c) ? space + 1 : 0;
    if (line > kMostRegexChars || space > kMostRegexChars) return false;
  }
  return true;
}

std::string Truncate(std::string s, size_t max) {
  if (s.size() <= max) return s;
  HeadTailBuffer buf(max);
  buf.Append(s);
  return buf.Take();
}

void HeadTailBuffer::Append(std::string_view data) {
  total_ += data.size();
  size_t to_head = std::min(data.size(), head_cap_ - head_.size());
  head_.append(data.substr(0, to_head));
  data.remove_prefix(to_head);
  if (data.empty()) return;
  if (data.size() >= tail_cap_) {
    tail_.assign(data.substr(data.size() - tail_cap_));
    return;
  }
  tail_.append(data);
  if (tail_.size() > 2 * tail_cap_) tail_.erase(0, tail_.size() - tail_cap_);
}

std::string HeadTailBuffer::Take() {
  if (tail_.size() > tail_cap_) tail_.erase(0, tail_.size() - tail_cap_);
  std::string out = std::move(head_);
  size_t dropped = total_ - out.size() - tail_.size();
  if (dropped > 0) {
    // Never show half a UTF-8 sequence on either side of the marker.
    size_t head_kept = out.size();
    DropIncompleteUtf8Suffix(out);
    size_t skip = LeadingContinuations(tail_);
    out += OmittedMarker(dropped + (head_kept - out.size()) + skip);
    out.append(tail_, skip, std::string::npos);
  } else {
    out += tail_;
  }
  head_.clear();
  tail_.clear();
  total_ = 0;
  return out;
}

std::string FormatDuration(std::chrono::milliseconds d) {
  long long ms = d.count();
  if (ms < 1000) return std::to_string(ms) + " ms";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%lld.%03lld", ms / 1000, ms % 1000);
  std::string out = buf;
  while (out.back() == '0') out.pop_back();  // there is a non-zero digit after the '.'
  return out + " s";
}

std::string FormatBytes(uint64_t bytes) {
  constexpr uint64_t kMiB = uint64_t{1} << 20, kGiB = uint64_t{1} << 30;
  if (bytes < kMiB) return std::to_string(bytes) + " B";
  if (bytes < kGiB) return std::to_string(bytes / kMiB) + " MiB";
  if (bytes % kGiB == 0) return std::to_string(bytes / kGiB) + " GiB";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / static_cast<double>(kGiB));
  return buf;
}

bool NaturalLess(std::string_view a, std::string_view b) {
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  size_t i = 0, j = 0;
  int zeros = 0;  // leading zeros of a than of b, in the first tie of equal numbers
  while (i < a.size() && j < b.size()) {
    if (!digit(a[i]) || !digit(b[j])) {
      if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
      ++i, ++j;
      continue;
    }
    size_t za = i, zb = j;
    while (za < a.size() && a[za] == '0') ++za;
    while (zb < b.size() && b[zb] == '0') ++zb;
    size_t ea = za, eb = zb;
    while (ea < a.size() && digit(a[ea])) ++ea;
    while (eb < b.size() && digit(b[eb])) ++eb;
    if (ea - za != eb - zb) return ea - za < eb - zb;  // fewer significant digits: smaller
    if (int c = a.substr(za, ea - za).compare(b.substr(zb, eb - zb)); c != 0) return c < 0;
    if (zeros == 0) zeros = static_cast<int>(za - i) - static_cast<int>(zb - j);
    i = ea, j = eb;
  }
  if (a.size() - i != b.size() - j) return a.size() - i < b.size() - j;
  return zeros < 0;
}

}  // namespace kvault
