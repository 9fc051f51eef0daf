#include "check/compare.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "check/elementwise.h"

namespace kvault {
namespace {

constexpr double kDefaultFloatTolerance = 1e-4;  // float64, float32, Python float
constexpr double kDefaultHalfTolerance = 1e-2;   // float16, bfloat16

// Shortest text that reads back as the same value; integral values get ".0" so they
// read as floats ("1.0", "1.5", "1e-05", "nan", "inf").
template <class F>
std::string FloatText(F v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, end);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

// An element's value in the precision of its dtype.
std::string ValueText(DType dtype, const std::byte* data, int64_t i) {
  double v = ElementAsDouble(dtype, data, i);
  switch (dtype) {
    case DType::kFloat64: return FloatText(v);
    case DType::kFloat32:
    case DType::kFloat16:
    case DType::kBFloat16: return FloatText(static_cast<float>(v));
    case DType::kInt64: return std::to_string(LoadUnaligned<int64_t>(data + 8 * i));
    case DType::kBool: return v != 0 ? "True" : "False";
    default: return std::to_string(static_cast<int64_t>(v));
  }
}

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string IndexText(const std::vector<int64_t>& index) {
  std::string s = "[";
  for (size_t i = 0; i < index.size(); ++i) s += (i ? ", " : "") + std::to_string(index[i]);
  return s + "]";
}

std::vector<int64_t> Unflatten(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 0) break;
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

std::string Quoted(const std::string& s) {
  return "'" + (s.size() > 80 ? s.substr(0, 77) + "..." : s) + "'";
}

std::string KeysText(std::vector<std::string> keys) {
  std::sort(keys.begin(), keys.end());
  std::string s = "[";
  for (size_t i = 0; i < keys.size(); ++i) s += (i ? ", " : "") + Quoted(keys[i]);
  return s + "]";
}

// Python float node value (numbers or "nan"/"inf"/"-inf"; validated by TensorFile).
double FloatValue(const Json& v) {
  if (v.is_number()) return v.get<double>();
  if (v == "nan") return std::numeric_limits<double>::quiet_NaN();
  return v == "inf" ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
}

std::string KindOf(const Json& node) {
  std::string kind = node["kind"].get<std::string>();
  return kind == "tuple" ? "list" : kind;  // interchangeable sequences
}

class Comparer {
 public:
  Comparer(const TensorFile& ref, const TensorFile& cand, const Tolerance& tol)
      : ref_(ref), cand_(cand), tol_(tol) {}

  CompareReport Run() {
    Node(ref_.tree(), cand_.tree(), "output");
    report_.match = problem_.empty();
    if (report_.match) {
      report_.message = MatchSummary(report_.compared, report_.max_abs_error, report_.max_rel_error);
    } else {
      report_.message = problem_;
      if (first_tensor_mismatched_ > 0 && report_.mismatched > first_tensor_mismatched_) {
        report_.message += "; " + std::to_string(report_.mismatched - first_tensor_mismatched_) +
                           " more elements differ in other outputs";
      }
    }
    return report_;
  }

 private:
  // Records the first problem; returns false so callers can `return Problem(...)`.
  bool Problem(std::string message) {
    if (problem_.empty()) problem_ = std::move(message);
    return false;
  }

  // Compares two nodes; false stops the walk (structural problem).
  bool Node(const Json& r, const Json& c, const std::string& path) {
    const std::string rk = KindOf(r), ck = KindOf(c);
    if (rk == "unsupported") {
      return Problem(path + ": the reference holds an unsupported value (" + r["type"].get<std::string>() + ")");
    }
    if (ck == "unsupported") {
      return Problem(path + ": the candidate returned an unsupported value (" + c["type"].get<std::string>() + ")");
    }
    if (rk != ck) return Problem(path + ": kind " + c["kind"].get<std::string>() + " != reference " + r["kind"].get<std::string>());
    if (rk == "tensor") return Tensor(r["index"].get<size_t>(), c["index"].get<size_t>(), path);
    if (rk == "list") return Sequence(r["items"], c["items"], path);
    if (rk == "dict") return Dict(r, c, path);
    const Json& rv = r.contains("value") ? r["value"] : r;
    const Json& cv = c.contains("value") ? c["value"] : c;
    if (rk == "float") {
      double a = FloatValue(rv), b = FloatValue(cv);
      ElementRule rule{tol_.rtol.value_or(kDefaultFloatTolerance), tol_.atol.value_or(kDefaultFloatTolerance),
                       tol_.nan_policy == Tolerance::NanPolicy::kForbid};
      if (!FloatsMatch(a, b, rule)) {
        return Problem(path + ": float " + FloatText(b) + " != reference " + FloatText(a) + " (rtol=" +
                       Number(rule.rtol) + " atol=" + Number(rule.atol) + ")");
      }
      return true;
    }
    if (rk == "none" || rv == cv) return true;
    if (rk == "str") return Problem(path + ": str " + Quoted(cv.get<std::string>()) + " != reference " + Quoted(rv.get<std::string>()));
    return Problem(path + ": " + rk + " " + cv.dump() + " != reference " + rv.dump());
  }

  bool Sequence(const Json& r, const Json& c, const std::string& path) {
    if (r.size() != c.size()) {
      return Problem(path + ": " + std::to_string(c.size()) + " items != reference " + std::to_string(r.size()) + " items");
    }
    for (size_t i = 0; i < r.size(); ++i) {
      if (!Node(r[i], c[i], path + "[" + std::to_string(i) + "]")) return false;
    }
    return true;
  }

  bool Dict(const Json& r, const Json& c, const std::string& path) {
    auto rkeys = r["keys"].get<std::vector<std::string>>();
    auto ckeys = c["keys"].get<std::vector<std::string>>();
    std::map<std::string, size_t> rpos, cpos;
    for (size_t i = 0; i < rkeys.size(); ++i) rpos.emplace(rkeys[i], i);
    for (size_t i = 0; i < ckeys.size(); ++i) cpos.emplace(ckeys[i], i);
    const bool unique = rpos.size() == rkeys.size() && cpos.size() == ckeys.size();
    if (!unique) {
      // str(key) collided (e.g. 1 and "1"): only the same keys in the same order compare.
      if (rkeys != ckeys) return Problem(path + ": keys " + KeysText(ckeys) + " != reference " + KeysText(rkeys));
      for (size_t i = 0; i < rkeys.size(); ++i) {
        if (!Node(r["items"][i], c["items"][i], path + "['" + rkeys[i] + "']")) return false;
      }
      return true;
    }
    if (rpos.size() != cpos.size() ||
        !std::equal(rpos.begin(), rpos.end(), cpos.begin(), [](auto& a, auto& b) { return a.first == b.first; })) {
      return Problem(path + ": keys " + KeysText(ckeys) + " != reference " + KeysText(rkeys));
    }
    for (size_t i = 0; i < rkeys.size(); ++i) {  // in the reference's order
      if (!Node(r["items"][i], c["items"][cpos[rkeys[i]]], path + "['" + rkeys[i] + "']")) return false;
    }
    return true;
  }

  bool Tensor(size_t ri, size_t ci, const std::string& path) {
    const TensorInfo& r = ref_.tensor(ri);
    const TensorInfo& c = cand_.tensor(ci);
    if (r.dtype != c.dtype) {
      return Problem(path + ": dtype " + std::string(DTypeName(c.dtype)) + " != reference " +
                     std::string(DTypeName(r.dtype)));
    }
    if (r.shape != c.shape) return Problem(path + ": shape " + IndexText(c.shape) + " != reference " + IndexText(r.shape));
    ResolvedTolerance t = ResolveTolerance(tol_, r.dtype);
    if (tol_.atol_by_rms && IsFloatingPoint(r.dtype)) t.atol *= std::max(1.0, FiniteRms(r));
    ElementRule rule{t.rtol, t.atol, tol_.nan_policy == Tolerance::NanPolicy::kForbid};
    ElementStats s = CompareElements(r.dtype, r.data, c.data, r.numel, rule);
    report_.compared += s.compared;
    report_.mismatched += s.mismatched;
    report_.max_abs_error = std::max(report_.max_abs_error, s.max_abs);
    report_.max_rel_error = std::max(report_.max_rel_error, s.max_rel);
    if (s.worst >= 0 && WorseThanCurrent(s)) {
      worst_mismatched_ = s.worst_mismatched;
      worst_abs_ = s.worst_abs;
      report_.worst_path = path;
      report_.worst_index = Unflatten(s.worst, r.shape);
    }
    if (s.mismatched > 0 && problem_.empty()) {
      first_tensor_mismatched_ = s.mismatched;
      Problem(ValuesMessage(path, r, c, s, t));
    }
    return true;  // value mismatches do not stop the walk: totals cover every tensor
  }

  static double FiniteRms(const TensorInfo& t) {
    double sum = 0;
    int64_t n = 0;
    for (int64_t i = 0; i < t.numel; ++i) {
      const double x = ElementAsDouble(t.dtype, t.data, i);
      if (!std::isfinite(x)) continue;
      sum += x * x;
      ++n;
    }
    return n > 0 ? std::sqrt(sum / static_cast<double>(n)) : 0.0;
  }

  bool WorseThanCurrent(const ElementStats& s) const {
    if (report_.worst_path.empty()) return true;
    if (s.worst_mismatched != worst_mismatched_) return s.worst_mismatched;
    return s.worst_abs > worst_abs_;
  }

  std::string ValuesMessage(const std::string& path, const TensorInfo& r, const TensorInfo& c,
                            const ElementStats& s, const ResolvedTolerance& t) const {
    std::string m = path + ": " + std::to_string(s.mismatched) + " of " + std::to_string(s.compared) + " elements differ";
    bool floating = IsFloatingPoint(r.dtype);
    m += floating ? " beyond rtol=" + Number(t.rtol) + " atol=" + Number(t.atol)
                  : " (exact match required for " + std::string(DTypeName(r.dtype)) + ")";
    double got = ElementAsDouble(c.dtype, c.data, s.worst);
    double expected = ElementAsDouble(r.dtype, r.data, s.worst);
    m += "; worst at " + IndexText(Unflatten(s.worst, r.shape)) + ": got " + ValueText(c.dtype, c.data, s.worst) +
         ", expected " + ValueText(r.dtype, r.data, s.worst);
    if (std::isfinite(got) && std::isfinite(expected)) {
      m += " (abs err " + Number(s.worst_abs);
      if (expected != 0) m += ", rel err " + Number(s.worst_abs / std::fabs(expected));
      m += ")";
    } else {
      m += tol_.nan_policy == Tolerance::NanPolicy::kForbid ? " (nan_policy=forbid)" : " (nan_policy=match)";
    }
    return m;
  }

  const TensorFile& ref_;
  const TensorFile& cand_;
  const Tolerance& tol_;
  CompareReport report_;
  std::string problem_;
  int64_t first_tensor_mismatched_ = 0;
  bool worst_mismatched_ = false;
  double worst_abs_ = 0;
};

}  // namespace

ResolvedTolerance ResolveTolerance(const Tolerance& tolerance, DType dtype) {
  if (!IsFloatingPoint(dtype)) return {0, 0};
  double d = (dtype == DType::kFloat16 || dtype == DType::kBFloat16) ? kDefaultHalfTolerance : kDefaultFloatTolerance;
  return {tolerance.rtol.value_or(d), tolerance.atol.value_or(d)};
}

std::string MatchSummary(int64_t compared, double max_abs_error, double max_rel_error) {
  return std::to_string(compared) + " elements match (max abs err " + Number(max_abs_error) + ", max rel err " +
         Number(max_rel_error) + ")";
}

CompareReport Compare(const TensorFile& reference, const TensorFile& candidate, const Tolerance& tolerance) {
  return Comparer(reference, candidate, tolerance).Run();
}

}  // namespace kvault
