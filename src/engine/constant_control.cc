#include "engine/constant_control.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kvault {

namespace {
// Elements added between two checks of a span's fit.
constexpr int64_t kCheckEvery = 256;
}  // namespace

bool ConstantControl::Fits(const Span& s) {
  if (!s.seen) return true;  // no element: an empty tensor is always "right"
  const double c = s.lo / 2 + s.hi / 2;
  auto off = [&](double v) { return std::fabs(v - c) - s.rtol * std::fabs(v); };
  if (off(s.lo) > s.atol || off(s.hi) > s.atol) return false;
  return !(s.lo <= 0 && 0 <= s.hi) || std::fabs(c) <= s.atol;
}

void ConstantControl::Add(const TensorFile& reference, const Tolerance& tolerance) {
  ++runs_;
  if (runs_ == 1) spans_.resize(reference.num_tensors());
  if (reference.num_tensors() != spans_.size()) varied_ = true;
  if (varied_) return;
  for (size_t i = 0; i < spans_.size(); ++i) {
    Span& s = spans_[i];
    if (s.wide) continue;
    const TensorInfo& t = reference.tensor(i);
    const ResolvedTolerance tol = ResolveTolerance(tolerance, t.dtype);
    s.rtol = tol.rtol;
    s.atol = tol.atol;
    for (int64_t k = 0; k < t.numel && !s.wide; ++k) {
      const double v = ElementAsDouble(t.dtype, t.data, k);
      if (!std::isfinite(v)) {
        s.wide = true;  // NaN or an infinity: no constant stands for it
        break;
      }
      s.lo = s.seen ? std::min(s.lo, v) : v;
      s.hi = s.seen ? std::max(s.hi, v) : v;
      s.seen = true;
      if (k % kCheckEvery == kCheckEvery - 1 || k == t.numel - 1) s.wide = !Fits(s);
    }
  }
}

bool ConstantControl::Degenerate() const {
  if (runs_ < kMinRuns || unknown_ || varied_ || spans_.empty()) return false;
  return std::none_of(spans_.begin(), spans_.end(), [](const Span& s) { return s.wide; });
}

std::string ConstantControl::Describe() const {
  std::string out;
  for (size_t i = 0; i < spans_.size(); ++i) {
    char line[128];
    std::snprintf(line, sizeof line, "%soutput %zu in [%.6g, %.6g]", i ? "; " : "", i, spans_[i].lo, spans_[i].hi);
    out += line;
  }
  return out;
}

}  // namespace kvault
