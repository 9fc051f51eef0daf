#pragma once
// Test-only: reads a golden vector file of tests/golden/ (shared with the Python
// tests, python/tests/test_golden.py), and decodes the numbers they hold. Header-only.
//
//   testing::ForEachGolden("compare.json", "vectors", 10, [](const Json& v) {
//     double x = testing::GoldenNumber(v["x"]);      // also "nan", "inf", "-inf"
//   });
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "util/env.h"
#include "util/env_vars.h"
#include "util/files.h"
#include "util/json.h"

namespace kvault::testing {

// tests/golden/<name>, found through KVAULT_SOURCE_ROOT (ctest sets it) or, without
// it, beside this header's source tree. An empty object (and a test failure) when
// the file is missing or malformed: a golden test never passes by reading nothing.
inline Json LoadGolden(const std::string& name) {
  std::filesystem::path root =
      std::filesystem::path(__FILE__).parent_path().parent_path().parent_path().parent_path();
  if (auto env = KvaultEnv("KVAULT_SOURCE_ROOT"); env && !env->empty()) root = *env;
  const std::string path = (root / "tests" / "golden" / name).string();
  auto text = ReadFile(path);
  if (!text) {
    ADD_FAILURE() << "golden file " << path << ": " << text.error();
    return Json::object();
  }
  Json parsed = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) {
    ADD_FAILURE() << "golden file " << path << " is not a JSON object";
    return Json::object();
  }
  return parsed;
}

// Calls check(entry) for every entry of the array `key` of golden file `name`, under a
// SCOPED_TRACE of the entry's "name"; fails when there are fewer than `at_least`.
template <class Check>
void ForEachGolden(const std::string& name, const char* key, size_t at_least, Check check) {
  const Json golden = LoadGolden(name);
  const Json entries = golden.value(key, Json::array());
  EXPECT_GE(entries.size(), at_least) << name << ": too few " << key;
  for (const Json& entry : entries) {
    SCOPED_TRACE(name + ": " + entry.value("name", std::string("?")));
    check(entry);
  }
}

// A number of a golden file: a JSON number, "nan", "inf" or "-inf"; null is infinity.
inline double GoldenNumber(const Json& v) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (v.is_null() || v == "inf") return kInf;
  if (v == "-inf") return -kInf;
  if (v == "nan") return std::numeric_limits<double>::quiet_NaN();
  return v.get<double>();
}

// Golden numbers match to a relative 1e-12 (infinities and NaN exactly).
inline bool GoldenNear(double expected, double got) {
  if (std::isnan(expected) || std::isnan(got)) return std::isnan(expected) && std::isnan(got);
  if (std::isinf(expected) || std::isinf(got)) return expected == got;
  return got == expected || std::fabs(got - expected) <= 1e-12 * std::fabs(expected);
}

}  // namespace kvault::testing
