#include "serve/metrics.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace kvault::serve {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool Has(const std::string& text, const std::string& line) {
  for (const std::string& l : Lines(text))
    if (l == line) return true;
  return false;
}

// The metric a sample line is of: its name up to '{' or ' ', less _sum/_count of a summary.
std::string Family(const std::string& sample, const std::set<std::string>& summaries) {
  std::string name = sample.substr(0, sample.find_first_of("{ "));
  for (const char* suffix : {"_sum", "_count"}) {
    const std::string s(suffix);
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0 &&
        summaries.count(name.substr(0, name.size() - s.size())))
      return name.substr(0, name.size() - s.size());
  }
  return name;
}

Metrics::Gauges SomeGauges() {
  Metrics::Gauges g;
  g.queue_depth = 3;
  g.queue_capacity = 4096;
  g.lanes_busy = 2;
  g.lanes_idle = 4;
  g.lanes_ready = 5;
  return g;
}

TEST(Metrics, GaugesAndEmptyCounters) {
  Metrics m;
  const std::string text = m.Render(SomeGauges());
  EXPECT_TRUE(Has(text, "kvault_queue_depth 3"));
  EXPECT_TRUE(Has(text, "kvault_queue_capacity 4096"));
  EXPECT_TRUE(Has(text, "kvault_lanes{state=\"busy\"} 2"));
  EXPECT_TRUE(Has(text, "kvault_lanes{state=\"idle\"} 4"));
  EXPECT_TRUE(Has(text, "kvault_lanes_ready 5"));
  EXPECT_TRUE(Has(text, "kvault_from_store_total 0"));
  EXPECT_TRUE(Has(text, "kvault_store_errors_total 0"));
  // Every family documented in docs/serve.md is announced even before it has samples.
  for (const char* family : {"kvault_queue_depth", "kvault_queue_capacity", "kvault_lanes", "kvault_requests_total",
                             "kvault_verifications_total", "kvault_from_store_total", "kvault_phase_seconds",
                             "kvault_device_busy_seconds_total", "kvault_foreign_language_total"}) {
    EXPECT_NE(text.find(std::string("# HELP ") + family + " "), std::string::npos) << family;
    EXPECT_NE(text.find(std::string("# TYPE ") + family + " "), std::string::npos) << family;
  }
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
}

TEST(Metrics, ExpositionFormat) {
  Metrics m;
  m.CountRequest("POST /v1/verify", 200);
  m.CountRequest("POST /v1/verify", 200);
  m.CountRequest("POST /v1/verify", 400);
  m.CountVerification("passed", 0, Json{{"correctness", 1.5}, {"timing", 2.0}, {"build", 4.0}}, false);
  m.CountVerification("mismatch", 1, Json{{"correctness", 0.5}}, false);
  m.CountVerification("passed", -1, Json(), true);
  m.CountStoreError();
  EXPECT_EQ(m.CountForeignLanguage("cuda"), 1u);
  EXPECT_EQ(m.CountForeignLanguage("hip"), 2u);  // how many so far, every language
  EXPECT_EQ(m.CountForeignLanguage("cuda"), 3u);
  const std::string text = m.Render(SomeGauges());

  // HELP then TYPE before a family's first sample; each family announced once; the
  // types are the exposition format's.
  std::set<std::string> announced, typed, summaries;
  std::string last_help;
  for (const std::string& line : Lines(text)) {
    ASSERT_FALSE(line.empty());
    if (line.rfind("# HELP ", 0) == 0) {
      std::string name = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_TRUE(announced.insert(name).second) << "announced twice: " << name;
      last_help = name;
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream in(line.substr(7));
      std::string name, type;
      in >> name >> type;
      EXPECT_EQ(name, last_help) << "TYPE without its HELP just before: " << line;
      EXPECT_TRUE(type == "gauge" || type == "counter" || type == "summary") << line;
      if (type == "summary") summaries.insert(name);
      typed.insert(name);
      continue;
    }
    EXPECT_NE(line[0], '#') << line;
    const std::string family = Family(line, summaries);
    EXPECT_TRUE(typed.count(family)) << "sample before its TYPE: " << line;
    // name{labels} value: the value parses as a number.
    const std::string value = line.substr(line.rfind(' ') + 1);
    size_t used = 0;
    EXPECT_NO_THROW((void)std::stod(value, &used)) << line;
    EXPECT_EQ(used, value.size()) << line;
  }

  EXPECT_TRUE(Has(text, "kvault_requests_total{endpoint=\"POST /v1/verify\",code=\"200\"} 2"));
  EXPECT_TRUE(Has(text, "kvault_requests_total{endpoint=\"POST /v1/verify\",code=\"400\"} 1"));
  EXPECT_TRUE(Has(text, "kvault_verifications_total{status=\"passed\"} 2"));
  EXPECT_TRUE(Has(text, "kvault_verifications_total{status=\"mismatch\"} 1"));
  EXPECT_TRUE(Has(text, "kvault_from_store_total 1"));
  EXPECT_TRUE(Has(text, "kvault_store_errors_total 1"));
  EXPECT_TRUE(Has(text, "kvault_foreign_language_total{language=\"cuda\"} 2"));
  EXPECT_TRUE(Has(text, "kvault_foreign_language_total{language=\"hip\"} 1"));
  EXPECT_TRUE(Has(text, "kvault_phase_seconds_sum{phase=\"correctness\"} 2"));
  EXPECT_TRUE(Has(text, "kvault_phase_seconds_count{phase=\"correctness\"} 2"));
  EXPECT_TRUE(Has(text, "kvault_phase_seconds_sum{phase=\"build\"} 4"));
  EXPECT_TRUE(Has(text, "kvault_phase_seconds_count{phase=\"timing\"} 1"));
  // Device time: correctness, timing and re-check only, per device; the store's
  // answers ran nowhere.
  EXPECT_TRUE(Has(text, "kvault_device_busy_seconds_total{device=\"0\"} 3.5"));
  EXPECT_TRUE(Has(text, "kvault_device_busy_seconds_total{device=\"1\"} 0.5"));
  EXPECT_EQ(text.find("device=\"-1\""), std::string::npos);
}

TEST(Metrics, LabelValuesEscaped) {
  Metrics m;
  m.CountRequest("a\"b\\c\nd", 404);
  m.CountVerification("we\"ird\n", 0, Json{{"p\\h", 1.0}}, false);
  const std::string text = m.Render({});
  EXPECT_TRUE(Has(text, "kvault_requests_total{endpoint=\"a\\\"b\\\\c\\nd\",code=\"404\"} 1")) << text;
  EXPECT_TRUE(Has(text, "kvault_verifications_total{status=\"we\\\"ird\\n\"} 1")) << text;
  EXPECT_TRUE(Has(text, "kvault_phase_seconds_sum{phase=\"p\\\\h\"} 1")) << text;
  // No raw newline inside a sample: every line is a comment or a whole sample.
  for (const std::string& line : Lines(text))
    EXPECT_TRUE(line[0] == '#' || line.rfind("kvault_", 0) == 0) << line;
}

TEST(Metrics, PhasesThatAreNotNumbersAreSkipped) {
  Metrics m;
  m.CountVerification("passed", 0, Json{{"timing", "fast"}, {"correctness", nullptr}, {"load", 0.25}}, false);
  m.CountVerification("passed", 0, Json::array({1, 2}), false);
  const std::string text = m.Render({});
  EXPECT_EQ(text.find("phase=\"timing\""), std::string::npos);
  EXPECT_EQ(text.find("phase=\"correctness\""), std::string::npos);
  EXPECT_TRUE(Has(text, "kvault_phase_seconds_count{phase=\"load\"} 1"));
  EXPECT_EQ(text.find("kvault_device_busy_seconds_total{"), std::string::npos);
}

TEST(Metrics, DevicePhases) {
  EXPECT_TRUE(IsDevicePhase("correctness"));
  EXPECT_TRUE(IsDevicePhase("timing"));
  EXPECT_TRUE(IsDevicePhase("recheck"));
  EXPECT_FALSE(IsDevicePhase("build"));
  EXPECT_FALSE(IsDevicePhase("load"));
  EXPECT_FALSE(IsDevicePhase("gate_wait"));
  EXPECT_FALSE(IsDevicePhase(""));
}

}  // namespace
}  // namespace kvault::serve
