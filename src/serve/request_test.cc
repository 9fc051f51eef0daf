#include "serve/request.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace kvault::serve {
namespace {

const char* const kTask =
    "import torch\nimport torch.nn as nn\n\n"
    "class Model(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n";

Json Good() { return {{"task_source", kTask}, {"code", "// kernel\n"}}; }

Json With(Json j, const std::string& field, Json value) {
  j[field] = std::move(value);
  return j;
}

// The 400 message of a request that must be refused; fails the test when it parsed.
std::string Refusal(const Json& body, const RequestDefaults& d = {}) {
  auto r = ParseVerifyRequest(body, d);
  EXPECT_FALSE(r.ok()) << "accepted: " << body.dump().substr(0, 200);
  return r ? "" : r.error();
}

bool Has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// --- the native API -----------------------------------------------------------

TEST(ParseVerifyRequest, EveryFieldRead) {
  Json body = {{"task_source", kTask},
               {"task_name", "relu"},
               {"code", "__global__ void k() {}\n"},
               {"language", "cuda"},
               {"reward", "hip-rl"},
               {"previous_rewards", {0.4, 1.4}},
               {"discount", 0.5},
               {"policy", "any"},
               {"run", "step-7"},
               {"idempotency_key", "sample-1"},
               {"sample", "relu.v2.cu"},
               {"deadline_s", 30},
               {"atol", 1e-3},
               {"rtol", 0}};
  auto r = ParseVerifyRequest(body, {});
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->task_source, kTask);
  EXPECT_EQ(r->task_name, "relu");
  EXPECT_EQ(r->code, "__global__ void k() {}\n");
  EXPECT_EQ(r->completion, "");
  EXPECT_EQ(r->language, "cuda");
  EXPECT_EQ(r->reward, RewardKind::kHipRl);
  EXPECT_EQ(r->previous_rewards, (std::vector<double>{0.4, 1.4}));
  EXPECT_DOUBLE_EQ(r->discount, 0.5);
  EXPECT_EQ(r->policy, "any");
  EXPECT_EQ(r->run, "step-7");
  EXPECT_EQ(r->idempotency_key, "sample-1");
  EXPECT_EQ(r->sample, "relu.v2.cu");
  EXPECT_FALSE(r->suite_task);  // a client's task_name is a label
  ASSERT_TRUE(r->deadline_s);
  EXPECT_DOUBLE_EQ(*r->deadline_s, 30);
  ASSERT_TRUE(r->atol && r->rtol);
  EXPECT_DOUBLE_EQ(*r->atol, 1e-3);
  EXPECT_DOUBLE_EQ(*r->rtol, 0);
}

TEST(ParseVerifyRequest, DefaultsFromTheServer) {
  RequestDefaults d;
  d.run = "rl";
  d.reward = RewardKind::kHipRl;
  d.policy = "task";
  auto r = ParseVerifyRequest(Good(), d);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->task_name, "task");
  EXPECT_EQ(r->sample, "");  // none: the content alone identifies the attempt
  EXPECT_EQ(r->run, "rl");
  EXPECT_EQ(r->reward, RewardKind::kHipRl);
  EXPECT_EQ(r->policy, "task");
  EXPECT_EQ(r->language, "");
  EXPECT_DOUBLE_EQ(r->discount, 0.6);
  EXPECT_TRUE(r->previous_rewards.empty());
  EXPECT_FALSE(r->deadline_s || r->atol || r->rtol);
  EXPECT_EQ(r->idempotency_key, "");
  // An empty run name is no run name.
  auto empty_run = ParseVerifyRequest(With(Good(), "run", ""), d);
  ASSERT_TRUE(empty_run) << empty_run.error();
  EXPECT_EQ(empty_run->run, "rl");
}

TEST(ParseVerifyRequest, NullCountsAsAbsent) {
  Json body = {{"task_source", kTask}, {"code", nullptr}, {"completion", "```cpp\nint x;\n```"},
               {"language", nullptr}, {"deadline_s", nullptr}, {"previous_rewards", nullptr}};
  auto r = ParseVerifyRequest(body, {});
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->code, "");
  EXPECT_EQ(r->completion, "```cpp\nint x;\n```");
  EXPECT_FALSE(r->deadline_s);
}

TEST(ParseVerifyRequest, ExactlyOneOfCodeAndCompletion) {
  Json both = With(Good(), "completion", "```cpp\nint x;\n```");
  EXPECT_TRUE(Has(Refusal(both), "exactly one of 'code' and 'completion'"));
  Json neither = {{"task_source", kTask}};
  EXPECT_TRUE(Has(Refusal(neither), "exactly one of 'code' and 'completion'"));
}

TEST(ParseVerifyRequest, NotAnObject) {
  for (const Json& body : {Json::array({1, 2}), Json("text"), Json(3), Json(nullptr), Json(true)})
    EXPECT_EQ(Refusal(body), "a request must be a JSON object") << body.dump();
}

TEST(ParseVerifyRequest, EachBadFieldIsNamed) {
  struct Case {
    const char* field;
    Json value;
    const char* why;
  };
  const Case cases[] = {
      {"task_source", 5, "must be a string"},
      {"task_source", " \n\t", "is empty"},
      {"task_name", Json::array(), "must be a string"},
      {"code", Json::object(), "must be a string"},
      {"language", "rust", "must be one of hip, cuda, cpp, python, triton, got 'rust'"},
      {"language", 1, "must be a string"},
      {"reward", "ppo", "must be one of paper, hip-rl"},
      {"policy", "none", "must be one of task, any, fused, custom_kernel"},
      {"run", false, "must be a string"},
      {"idempotency_key", 12, "must be a string"},
      {"sample", 3, "must be a string"},
      {"sample", Json::array({"a.cu"}), "must be a string"},
      {"sample", "a\nb.cu", "must not hold control characters"},
      {"sample", std::string("a\0b", 3), "must not hold control characters"},
      {"atol", "1e-3", "must be a number"},
      {"atol", -1, "must be between 0 and 1e+06"},
      {"rtol", 1e7, "must be between 0 and 1e+06"},
      {"deadline_s", 0, "must be between 0.001"},
      {"deadline_s", -5, "must be between 0.001"},
      {"deadline_s", 1e9, "must be between 0.001"},
      {"deadline_s", "10", "must be a number"},
      {"discount", 1.5, "must be between 0 and 1"},
      {"discount", true, "must be a number"},
      {"previous_rewards", 1.0, "must be an array of numbers"},
      {"previous_rewards", Json::array({1.0, "x"}), "must hold finite numbers"},
      {"previous_rewards", Json::array({Json::array()}), "must hold finite numbers"},
  };
  for (const Case& c : cases) {
    const std::string message = Refusal(With(Good(), c.field, c.value));
    EXPECT_EQ(message.rfind(std::string(c.field) + ": ", 0), 0u) << c.field << ": " << message;
    EXPECT_TRUE(Has(message, c.why)) << c.field << "=" << c.value.dump() << ": " << message;
  }
  EXPECT_EQ(Refusal(Json{{"code", "x"}}), "task_source: is required");
}

TEST(ParseVerifyRequest, TheFirstProblemWins) {
  Json body = {{"code", 1}, {"language", "rust"}};  // task_source is read first
  EXPECT_EQ(Refusal(body), "task_source: is required");
}

TEST(ParseVerifyRequest, SizeLimits) {
  const std::string at_limit(kMaxSourceBytes, 'x');
  auto ok = ParseVerifyRequest(With(Good(), "code", at_limit), {});
  ASSERT_TRUE(ok) << ok.error();
  EXPECT_EQ(ok->code.size(), kMaxSourceBytes);

  const std::string message = Refusal(With(Good(), "code", at_limit + "y"));
  EXPECT_TRUE(Has(message, "code: is " + std::to_string(kMaxSourceBytes + 1) + " bytes, over the limit of " +
                               std::to_string(kMaxSourceBytes)))
      << message;
  EXPECT_TRUE(Has(Refusal(With(Good(), "task_source", at_limit + "y")), "task_source: is "));

  // A completion may be larger than a source, up to its own limit.
  Json completion = {{"task_source", kTask}, {"completion", std::string(kMaxCompletionBytes, 'c')}};
  EXPECT_TRUE(ParseVerifyRequest(completion, {}));
  completion["completion"] = std::string(kMaxCompletionBytes + 1, 'c');
  EXPECT_TRUE(Has(Refusal(completion), "completion: is "));

  EXPECT_TRUE(ParseVerifyRequest(With(Good(), "idempotency_key", std::string(kMaxKeyBytes, 'k')), {}));
  EXPECT_TRUE(Has(Refusal(With(Good(), "idempotency_key", std::string(kMaxKeyBytes + 1, 'k'))),
                  "idempotency_key: is 201 bytes, over the limit of 200"));
  EXPECT_TRUE(Has(Refusal(With(Good(), "task_name", std::string(kMaxKeyBytes + 1, 'n'))), "task_name: is "));
  EXPECT_TRUE(ParseVerifyRequest(With(Good(), "sample", std::string(kMaxKeyBytes, 's')), {}));
  EXPECT_TRUE(Has(Refusal(With(Good(), "sample", std::string(kMaxKeyBytes + 1, 's'))),
                  "sample: is 201 bytes, over the limit of 200"));

  Json turns = Json::array();
  for (size_t i = 0; i < kMaxPreviousTurns; ++i) turns.push_back(0.4);
  EXPECT_TRUE(ParseVerifyRequest(With(Good(), "previous_rewards", turns), {}));
  turns.push_back(0.4);
  EXPECT_TRUE(Has(Refusal(With(Good(), "previous_rewards", turns)), "previous_rewards: has more than 64 items"));
}

// --- batches ------------------------------------------------------------------

TEST(ParseBatchRequest, EveryRequestInOrder) {
  Json body = {{"requests", {With(Good(), "task_name", "a"), With(Good(), "task_name", "b")}}};
  auto r = ParseBatchRequest(body, {});
  ASSERT_TRUE(r) << r.error();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].task_name, "a");
  EXPECT_EQ((*r)[1].task_name, "b");
}

TEST(ParseBatchRequest, Refusals) {
  const std::string shape = "the body must be a JSON object with an array 'requests'";
  for (const Json& body : {Json::array(), Json::object(), Json{{"requests", Good()}}, Json{{"requests", "x"}},
                           Json{{"items", Json::array({Good()})}}}) {
    auto r = ParseBatchRequest(body, {});
    ASSERT_FALSE(r) << body.dump();
    EXPECT_EQ(r.error(), shape);
  }
  auto empty = ParseBatchRequest(Json{{"requests", Json::array()}}, {});
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error(), "'requests' is empty");

  Json bad = {{"requests", {Good(), Good(), Good(), With(Good(), "reward", 1)}}};
  auto third = ParseBatchRequest(bad, {});
  ASSERT_FALSE(third);
  EXPECT_EQ(third.error(), "requests[3]: reward: must be a string");
  auto not_object = ParseBatchRequest(Json{{"requests", {Good(), 7}}}, {});
  ASSERT_FALSE(not_object);
  EXPECT_EQ(not_object.error(), "requests[1]: a request must be a JSON object");
}

TEST(ParseBatchRequest, AtMostMaxBatch) {
  Json small = {{"task_source", "x"}, {"code", "y"}};
  Json items = Json::array();
  for (size_t i = 0; i < kMaxBatch; ++i) items.push_back(small);
  auto full = ParseBatchRequest(Json{{"requests", items}}, {});
  ASSERT_TRUE(full) << full.error();
  EXPECT_EQ(full->size(), kMaxBatch);
  items.push_back(small);
  auto over = ParseBatchRequest(Json{{"requests", items}}, {});
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error(), "'requests' has 4097 items, over the limit of 4096");
}

// --- AMD's HIP sandbox --------------------------------------------------------

Json HipGood() {
  return {{"kernel_name", "relu"}, {"hip_code", "#include <hip/hip_runtime.h>\n"}, {"pytorch_module_code", kTask}};
}

TEST(ParseHipRequest, FieldsMapped) {
  Json body = HipGood();
  body["pytorch_functional_code"] = "def f(x): return x\n";
  body["hip_ref_code"] = "// baseline\n";
  body["atol"] = 0.01;
  body["rtol"] = 0.02;
  body["compile_timeout_s"] = 120;
  body["run_timeout_s"] = 30;
  body["reward"] = "hip-rl";
  auto r = ParseHipRequest(body, {});
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->task_name, "relu");
  EXPECT_EQ(r->code, "#include <hip/hip_runtime.h>\n");
  EXPECT_EQ(r->task_source, kTask);
  EXPECT_EQ(r->language, "hip");
  EXPECT_EQ(r->reward, RewardKind::kHipRl);
  EXPECT_DOUBLE_EQ(r->atol.value_or(-1), 0.01);
  EXPECT_DOUBLE_EQ(r->rtol.value_or(-1), 0.02);
  EXPECT_EQ(r->completion, "");

  Json unnamed = HipGood();
  unnamed.erase("kernel_name");
  auto d = ParseHipRequest(unnamed, {});
  ASSERT_TRUE(d) << d.error();
  EXPECT_EQ(d->task_name, "kernel");
}

TEST(ParseHipRequest, Refusals) {
  auto refusal = [](const Json& body) {
    auto r = ParseHipRequest(body, {});
    EXPECT_FALSE(r) << body.dump();
    return r ? std::string() : r.error();
  };
  Json no_code = HipGood();
  no_code.erase("hip_code");
  EXPECT_EQ(refusal(no_code), "hip_code: is required");
  Json no_module = HipGood();
  no_module.erase("pytorch_module_code");
  EXPECT_EQ(refusal(no_module), "pytorch_module_code: is required");
  EXPECT_EQ(refusal(With(HipGood(), "hip_code", " ")), "hip_code: is empty");
  EXPECT_EQ(refusal(With(HipGood(), "kernel_name", 3)), "kernel_name: must be a string");
  EXPECT_TRUE(Has(refusal(With(HipGood(), "compile_timeout_s", "60")), "compile_timeout_s: must be a number"));
  EXPECT_TRUE(Has(refusal(With(HipGood(), "run_timeout_s", -1)), "run_timeout_s: must be between"));
  EXPECT_TRUE(Has(refusal(With(HipGood(), "hip_ref_code", std::string(kMaxSourceBytes + 1, 'x'))),
                  "hip_ref_code: is "));
  EXPECT_TRUE(Has(refusal(With(HipGood(), "pytorch_functional_code", 1)), "pytorch_functional_code: must be a string"));
  EXPECT_TRUE(Has(refusal(With(HipGood(), "atol", "0.1")), "atol: must be a number"));
  EXPECT_EQ(refusal(Json::array()), "a request must be a JSON object");
}

TEST(ParseHipBatch, ListOfRequests) {
  auto r = ParseHipBatch(Json{{"requests", {HipGood(), With(HipGood(), "kernel_name", "b")}}}, {});
  ASSERT_TRUE(r) << r.error();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[1].task_name, "b");
  auto bad = ParseHipBatch(Json{{"requests", {HipGood(), With(HipGood(), "hip_code", nullptr)}}}, {});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error(), "requests[1]: hip_code: is required");
  auto empty = ParseHipBatch(Json{{"requests", Json::array()}}, {});
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error(), "'requests' is empty");
  EXPECT_FALSE(ParseHipBatch(HipGood(), {}));
}

// --- AMD's Triton server ------------------------------------------------------

const std::string kSep(kGeakSeparatorWidth, '#');

TritonSuite Suite() {
  TritonSuite s;
  s.format = GeakFormat::kTritonBenchG;
  s.files.emplace_back("add.py", GeakParts{"def add(x, y):\n    return x + y\n", "result_gold = add(1, 2)\n"});
  s.files.emplace_back("mul.py", GeakParts{"def mul(x, y):\n    return x * y\n", "result_gold = mul(2, 3)\n"});
  return s;
}

Json TritonGood() { return {{"protocol_version", 1}, {"code", "def add(x, y):\n    return y + x\n"}, {"filename", "add.py"}}; }

TEST(ParseTritonRequest, TaskAndCandidateFromTheSuite) {
  const TritonSuite suite = Suite();
  ASSERT_NE(suite.Find("mul.py"), nullptr);
  EXPECT_EQ(suite.Find("mul.py")->tests, "result_gold = mul(2, 3)\n");
  EXPECT_EQ(suite.Find("sub.py"), nullptr);
  EXPECT_EQ(suite.Find("add"), nullptr);

  auto r = ParseTritonRequest(With(TritonGood(), "atol", 0.5), &suite, {});
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->task_name, "add");
  EXPECT_TRUE(r->suite_task);  // the suite's own name, not a label
  EXPECT_EQ(r->language, "triton");
  const GeakParts& add = *suite.Find("add.py");
  EXPECT_EQ(r->task_source, MakeGeakTask(GeakFormat::kTritonBenchG, "add.py", add));
  EXPECT_EQ(r->code, MakeGeakCandidate(GeakFormat::kTritonBenchG, "def add(x, y):\n    return y + x\n", add));
  EXPECT_DOUBLE_EQ(r->atol.value_or(-1), 0.5);

  // A candidate's own tests (below its separator) are never used.
  Json with_tests = With(TritonGood(), "code", "def add(x, y):\n    return y + x\n" + kSep + "\nresult_gold = 0\n");
  auto t = ParseTritonRequest(with_tests, &suite, {});
  ASSERT_TRUE(t) << t.error();
  EXPECT_EQ(t->code, r->code);
}

TEST(ParseRequests, EveryProtocolReadsTheSample) {
  // The field is common to the protocols: a trainer speaking AMD's may name samples too.
  const TritonSuite suite = Suite();
  auto hip = ParseHipRequest(With(HipGood(), "sample", "relu_3.hip"), {});
  ASSERT_TRUE(hip) << hip.error();
  EXPECT_EQ(hip->sample, "relu_3.hip");
  EXPECT_FALSE(hip->suite_task);  // kernel_name is a label
  auto triton = ParseTritonRequest(With(TritonGood(), "sample", "add_1.py"), &suite, {});
  ASSERT_TRUE(triton) << triton.error();
  EXPECT_EQ(triton->sample, "add_1.py");
  auto bad = ParseTritonRequest(With(TritonGood(), "sample", "a\tb"), &suite, {});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error(), "sample: must not hold control characters");
}

TEST(ParseTritonRequest, Refusals) {
  const TritonSuite suite = Suite();
  auto refusal = [&](const Json& body, const TritonSuite* s) {
    auto r = ParseTritonRequest(body, s, {});
    EXPECT_FALSE(r) << body.dump();
    return r ? std::string() : r.error();
  };
  Json no_version = TritonGood();
  no_version.erase("protocol_version");
  EXPECT_EQ(refusal(no_version, &suite), "protocol_version: must be 1");
  EXPECT_EQ(refusal(With(TritonGood(), "protocol_version", 2), &suite), "protocol_version: must be 1");
  EXPECT_EQ(refusal(With(TritonGood(), "protocol_version", "1"), &suite), "protocol_version: must be a number");
  EXPECT_EQ(refusal(With(TritonGood(), "code", 5), &suite), "code: must be a string");
  EXPECT_EQ(refusal(With(TritonGood(), "code", "\n"), &suite), "code: is empty");
  Json no_file = TritonGood();
  no_file.erase("filename");
  EXPECT_EQ(refusal(no_file, &suite), "filename: is required");
  EXPECT_TRUE(Has(refusal(TritonGood(), nullptr), "no Triton suite"));
  EXPECT_EQ(refusal(With(TritonGood(), "filename", "sub.py"), &suite),
            "filename: 'sub.py' is not a file of the server's Triton suite");
  // Only a separator: the implementation is blank.
  EXPECT_TRUE(Has(refusal(With(TritonGood(), "code", kSep + "\nresult_gold = 1\n"), &suite), "code: "));
  EXPECT_TRUE(Has(refusal(With(TritonGood(), "rtol", -1), &suite), "rtol: must be between"));
  EXPECT_EQ(refusal(Json("x"), &suite), "a request must be a JSON object");
}

// --- candidate files and tasks ------------------------------------------------

TEST(CandidateExtension, FromTheLanguageElseGuessedFromTheSource) {
  struct Case {
    const char* language;
    const char* code;
    const char* extension;
  };
  const Case cases[] = {
      // The language decides, whatever the source says.
      {"hip", "anything", ".hip"},
      {"cuda", "anything", ".cu"},
      {"cpp", "class ModelNew:\n  def f(): pass\nimport x\n", ".cpp"},
      {"python", "int main() {}", ".py"},
      {"triton", "__global__", ".py"},
      // No language: guessed.
      {"", "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n", ".py"},
      {"", "import torch\ndef module_fn(x):\n    return x\n", ".py"},
      {"", "#include <hip/hip_runtime.h>\n__global__ void k() {}\n", ".hip"},
      {"", "hipLaunchKernelGGL(k, 1, 1, 0, 0);", ".hip"},
      {"", "#define __HIP_PLATFORM_AMD__\n", ".hip"},
      {"", "__global__ void k(float* x) {}\n", ".cu"},
      {"", "#include <cuda_runtime.h>\n", ".cu"},
      {"", "k<<<1, 1>>>();", ".cu"},
      {"", "#include <torch/extension.h>\nint f() { return 0; }\n", ".cpp"},
      {"", "", ".cpp"},
      // Python's marks without Python around them are not enough.
      {"", "// class ModelNew\n", ".cpp"},
      // Comments and strings say nothing of the language (a C++ answer stays C++).
      {"", "// not a __global__ kernel\n/* #include <hip/hip_runtime.h> */\nint f() { return 0; }\n", ".cpp"},
      {"", "const char* s = \"k<<<1, 1>>>() __global__\";\n", ".cpp"},
  };
  for (const Case& c : cases)
    EXPECT_EQ(CandidateExtension(c.language, c.code), c.extension) << "'" << c.language << "': " << c.code;
}

TEST(EffectiveTaskSource, UnchangedWithoutTolerances) {
  ServeRequest r;
  r.task_source = kTask;
  EXPECT_EQ(EffectiveTaskSource(r), kTask);
}

TEST(EffectiveTaskSource, TolerancesAppendedToKvaultMeta) {
  ServeRequest r;
  r.task_source = "x = 1";  // no final newline
  r.atol = 1e-3;
  const std::string atol_only = EffectiveTaskSource(r);
  EXPECT_EQ(atol_only.rfind("x = 1\n\n", 0), 0u) << atol_only;
  EXPECT_TRUE(Has(atol_only, "KVAULT_META = dict(globals().get('KVAULT_META') or {})\n"));
  EXPECT_TRUE(Has(atol_only, "KVAULT_META['atol'] = 0.001\n"));
  EXPECT_FALSE(Has(atol_only, "rtol"));

  r.task_source = kTask;
  r.atol.reset();
  r.rtol = 0.25;
  const std::string rtol_only = EffectiveTaskSource(r);
  EXPECT_EQ(rtol_only.rfind(kTask, 0), 0u);
  EXPECT_TRUE(Has(rtol_only, "KVAULT_META['rtol'] = 0.25\n"));
  EXPECT_FALSE(Has(rtol_only, "'atol'"));

  r.atol = 0;
  const std::string both = EffectiveTaskSource(r);
  EXPECT_TRUE(Has(both, "KVAULT_META['atol'] = 0\n"));
  EXPECT_LT(both.find("'atol'"), both.find("'rtol'"));
  // Other tolerances are other tasks.
  EXPECT_NE(both, rtol_only);
}

// --- answers ------------------------------------------------------------------

ServeRequest Asked(RewardKind kind = RewardKind::kPaper) {
  ServeRequest r;
  r.task_source = kTask;
  r.code = "x";
  r.reward = kind;
  return r;
}

ServeOutcome Passed(std::optional<double> speedup) {
  ServeOutcome o;
  o.status = "passed";
  o.compiled = o.correct = true;
  o.speedup = speedup;
  if (speedup) {
    o.reference_ms = 1.0;
    o.candidate_ms = 1.0 / *speedup;
  }
  o.message = "all cases match";
  o.policy = "custom_kernel";
  o.task = "relu-abc";
  o.task_hash = "abc";
  o.candidate_hash = "def";
  o.seconds = 3.5;
  return o;
}

ServeOutcome Failed(const std::string& status, bool compiled) {
  ServeOutcome o;
  o.status = status;
  o.compiled = compiled;
  o.message = status + " happened";
  return o;
}

ServeOutcome Errored(const std::string& kind) {
  ServeOutcome o;
  o.error_kind = ErrorKindFromString(kind);
  EXPECT_TRUE(o.error_kind) << kind;
  o.message = kind + ": no verdict";
  if (kind == "task") o.status = "task_error";
  if (kind == "infrastructure") o.status = "infra_error";
  return o;
}

TEST(ResultJson, EveryDocumentedField) {
  ServeOutcome o = Passed(2.0);
  o.from_store = true;
  o.phases = {{"correctness", 1.5}};
  o.cases = Json::array({Json{{"case", "default"}, {"max_abs_error", 0.0}}});
  Json j = ResultJson(Asked(), o, "c-0123");
  for (const char* field : {"id", "status", "compiled", "correct", "speedup", "reference_ms", "candidate_ms",
                            "message", "policy", "reward", "task", "task_hash", "candidate_hash", "from_store",
                            "seconds", "phases", "cases", "speed_rewarded", "diagnostics"})
    EXPECT_TRUE(j.contains(field)) << field;
  EXPECT_EQ(j["id"], "c-0123");
  EXPECT_EQ(j["status"], "passed");
  EXPECT_EQ(j["compiled"], true);
  EXPECT_EQ(j["correct"], true);
  EXPECT_DOUBLE_EQ(j["speedup"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j["reference_ms"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["candidate_ms"].get<double>(), 0.5);
  EXPECT_EQ(j["from_store"], true);
  EXPECT_EQ(j["speed_rewarded"], true);
  EXPECT_EQ(j["task"], "relu-abc");
  EXPECT_EQ(j["phases"]["correctness"], 1.5);
  EXPECT_EQ(j["cases"].size(), 1u);
  EXPECT_FALSE(j.contains("error"));
  // DumpJson never throws on it.
  EXPECT_FALSE(DumpJson(j).empty());
}

TEST(ResultJson, PaperAndHipRlRewards) {
  struct Case {
    ServeOutcome o;
    double paper, hip_rl;
  };
  const Case cases[] = {
      {Failed("compile_error", false), 0.0, 0.0},
      {Failed("mismatch", true), 0.4, 0.0},
      {Failed("crash", true), 0.4, 0.0},
      {Passed(std::nullopt), 1.4, 0.3},
      {Passed(0.5), 1.4, 0.8},
      {Passed(1.0), 1.4, 1.3},
      {Passed(2.0), 1.775, 2.6},
      {Passed(4.0), 2.9, 4.6},
      {Passed(16.0), 2.9, 10.6},
  };
  for (const Case& c : cases) {
    for (RewardKind kind : {RewardKind::kPaper, RewardKind::kHipRl}) {
      Json reward = ResultJson(Asked(kind), c.o, "c")["reward"];
      ASSERT_TRUE(reward.is_object()) << c.o.status;
      EXPECT_EQ(reward["kind"], std::string(ToString(kind)));
      EXPECT_NEAR(reward["paper"].get<double>(), c.paper, 1e-12) << c.o.status << " " << c.o.speedup.value_or(-1);
      EXPECT_NEAR(reward["hip_rl"].get<double>(), c.hip_rl, 1e-12) << c.o.status << " " << c.o.speedup.value_or(-1);
      EXPECT_EQ(reward["value"], kind == RewardKind::kPaper ? reward["paper"] : reward["hip_rl"]);
      EXPECT_FALSE(reward.contains("return"));
    }
  }
}

TEST(ResultJson, NonFiniteSpeedupIsNullWithoutASpeedTerm) {
  for (double s : {std::numeric_limits<double>::infinity(), std::nan("")}) {
    ServeOutcome o = Passed(s);
    Json j = ResultJson(Asked(), o, "c");
    EXPECT_TRUE(j["speedup"].is_null());
    EXPECT_NEAR(j["reward"]["paper"].get<double>(), 1.4, 1e-12);
    EXPECT_NEAR(j["reward"]["hip_rl"].get<double>(), 0.3, 1e-12);
    EXPECT_FALSE(DumpJson(j).empty());
  }
}

TEST(ResultJson, NoSpeedTermWhenTheSpeedupStaysImplausible) {
  ServeOutcome o = Passed(4.0);
  o.speedup_implausible = true;
  Json j = ResultJson(Asked(), o, "c");
  EXPECT_EQ(j["speed_rewarded"], false);
  EXPECT_DOUBLE_EQ(j["speedup"].get<double>(), 4.0);  // kept as measured
  EXPECT_NEAR(j["reward"]["paper"].get<double>(), 1.4, 1e-12);
  EXPECT_NEAR(j["reward"]["hip_rl"].get<double>(), 0.3, 1e-12);
}

TEST(ResultJson, ReturnWithPreviousRewards) {
  ServeRequest r = Asked();
  r.previous_rewards = {0.4, 1.4};
  // docs/reward.md's example: 0.4 + 0.6 * 1.4 + 0.36 * 2.9 = 2.284.
  Json reward = ResultJson(r, Passed(4.0), "c")["reward"];
  EXPECT_NEAR(reward["value"].get<double>(), 2.9, 1e-12);
  EXPECT_NEAR(reward["return"].get<double>(), 2.284, 1e-12);
  r.discount = 0.5;
  EXPECT_NEAR(ResultJson(r, Passed(4.0), "c")["reward"]["return"].get<double>(), 0.4 + 0.7 + 0.25 * 2.9, 1e-12);
  // The return is of the kind asked for.
  r.reward = RewardKind::kHipRl;
  r.discount = 1.0;
  r.previous_rewards = {1.0};
  EXPECT_NEAR(ResultJson(r, Passed(2.0), "c")["reward"]["return"].get<double>(), 3.6, 1e-12);
}

TEST(ResultJson, NoRewardWithoutAVerdict) {
  ServeRequest r = Asked();
  r.previous_rewards = {1.4};
  for (const char* kind : {"infrastructure", "task", "deadline", "cancelled"}) {
    Json j = ResultJson(r, Errored(kind), "c-1");
    EXPECT_TRUE(j["reward"].is_null()) << kind;
    ASSERT_TRUE(j.contains("error")) << kind;
    EXPECT_EQ(j["error"]["kind"], kind);
    EXPECT_EQ(j["error"]["message"], std::string(kind) + ": no verdict");
    const bool retry = std::string(kind) == "infrastructure" || std::string(kind) == "deadline";
    EXPECT_EQ(j["error"]["retry"], retry) << kind;
  }
  // Never ran: no status at all.
  EXPECT_TRUE(ResultJson(r, Errored("deadline"), "c")["status"].is_null());
  EXPECT_EQ(ResultJson(r, Errored("infrastructure"), "c")["status"], "infra_error");
}

TEST(HipResponseJson, SandboxFields) {
  ServeOutcome o = Passed(2.0);
  o.cases = Json::array({Json{{"case", "default"}, {"max_abs_error", 1e-6}, {"max_rel_error", 2e-6},
                              {"mean_abs_error", 1e-7}},
                         Json{{"kind", "phases"}, {"seconds", Json::object()}}, Json("not an object")});
  Json j = HipResponseJson(Asked(RewardKind::kHipRl), o, "relu_kernel");
  EXPECT_EQ(j["kernel_name"], "relu_kernel");
  EXPECT_EQ(j["compile_ok"], true);
  EXPECT_EQ(j["run_ok"], true);
  EXPECT_EQ(j["match_ok"], true);
  EXPECT_DOUBLE_EQ(j["speedup"].get<double>(), 2.0);
  EXPECT_EQ(j["reason"], "all cases match");
  EXPECT_EQ(j["status"], "passed");
  ASSERT_EQ(j["stats"].size(), 1u);
  EXPECT_EQ(j["stats"][0]["case"], "default");
  EXPECT_DOUBLE_EQ(j["stats"][0]["max_abs_diff"].get<double>(), 1e-6);
  EXPECT_DOUBLE_EQ(j["stats"][0]["max_rel_diff"].get<double>(), 2e-6);
  EXPECT_DOUBLE_EQ(j["stats"][0]["mean_abs_diff"].get<double>(), 1e-7);
  EXPECT_DOUBLE_EQ(j["timing"]["reference_ms"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["timing"]["candidate_ms"].get<double>(), 0.5);
  EXPECT_EQ(j["reward"]["kind"], "hip-rl");
  EXPECT_NEAR(j["reward"]["value"].get<double>(), 2.6, 1e-12);
  EXPECT_FALSE(j.contains("error"));
}

TEST(HipResponseJson, RunOkOnlyPastLoading) {
  auto run_ok = [](const std::string& status, bool compiled) {
    return HipResponseJson(Asked(), Failed(status, compiled), "k")["run_ok"].get<bool>();
  };
  EXPECT_TRUE(run_ok("mismatch", true));
  EXPECT_TRUE(run_ok("policy_violation", true));
  EXPECT_FALSE(run_ok("compile_error", false));
  EXPECT_FALSE(run_ok("load_error", true));
  EXPECT_FALSE(run_ok("crash", true));
  EXPECT_FALSE(run_ok("timeout", true));
  EXPECT_FALSE(run_ok("not a status", true));
  Json mismatch = HipResponseJson(Asked(), Failed("mismatch", true), "k");
  EXPECT_EQ(mismatch["match_ok"], false);
  EXPECT_TRUE(mismatch["speedup"].is_null());
  EXPECT_TRUE(mismatch["stats"].is_array());
  Json bad_cases = HipResponseJson(Asked(), [] {
    ServeOutcome o = Failed("mismatch", true);
    o.cases = "not an array";
    return o;
  }(), "k");
  EXPECT_TRUE(bad_cases["stats"].empty());
}

TEST(HipResponseJson, NoRewardWithoutAVerdict) {
  Json j = HipResponseJson(Asked(), Errored("infrastructure"), "k");
  EXPECT_TRUE(j["reward"].is_null());
  EXPECT_EQ(j["error"]["kind"], "infrastructure");
  EXPECT_EQ(j["error"]["retry"], true);
  EXPECT_EQ(j["compile_ok"], false);
  EXPECT_EQ(j["run_ok"], false);
}

TEST(TritonResponseJson, EvaluateFields) {
  Json ok = TritonResponseJson(Passed(2.0));
  EXPECT_EQ(ok["compiled"], true);
  EXPECT_EQ(ok["correct"], true);
  EXPECT_DOUBLE_EQ(ok["speedup"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(ok["latency_ms"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(ok["baseline_latency_ms"].get<double>(), 1.0);
  EXPECT_EQ(ok["feedback"], "all cases match");
  EXPECT_TRUE(ok["error_type"].is_null());
  EXPECT_TRUE(ok.contains("diagnostics"));

  ServeOutcome failed = Failed("compile_error", false);
  failed.diagnostics = "error: expected ';'";
  Json bad = TritonResponseJson(failed);
  EXPECT_EQ(bad["compiled"], false);
  EXPECT_EQ(bad["correct"], false);
  EXPECT_EQ(bad["error_type"], "compile_error");
  EXPECT_EQ(bad["diagnostics"], "error: expected ';'");
  EXPECT_TRUE(bad["speedup"].is_null());
  EXPECT_TRUE(bad["latency_ms"].is_null());
}

}  // namespace
}  // namespace kvault::serve
