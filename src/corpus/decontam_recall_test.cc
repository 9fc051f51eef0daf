// Recall of decontamination on planted copies of benchmark tasks, and its false
// positives on unrelated tasks (docs/corpus.md, "Decontamination", "Measured recall").
//
// The suite: eight KernelBench-style tasks written for this test. Each is planted
// six ways, as a record's reference would arrive from a dataset built on the
// benchmark: resized (every module-level size and constant changed), renamed
// (constants, parameters and local variables renamed), reordered (independent
// lines and keyword arguments in another order), class_renamed (`Model` called
// otherwise), moved (the definitions in reverse order, the constants last) and all
// of these at once. Unrelated: eight tasks of other
// operations in the same style. With KVAULT_KERNELBENCH naming a KernelBench
// checkout's KernelBench/ folder, the same is measured on its level1-3 tasks (not in
// CI: the benchmark is not part of this repository).
#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <regex>
#include <set>

#include "corpus/decontam.h"
#include "corpus/op_signature.h"
#include "util/env.h"
#include "util/strings.h"

namespace kvault::corpus {
namespace {

constexpr const char* kHead = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n";

// A KernelBench-style task: module-level constants, class Model, get_inputs and
// get_init_inputs. Lines within a field are separated by "\n", without indent.
struct TaskSpec {
  const char* name;
  const char* constants;
  const char* init_params;  // after self
  const char* init_body;    // after super().__init__()
  const char* forward_params;
  const char* forward_body;
  const char* inputs_body;  // get_inputs' body
  const char* init_inputs;  // get_init_inputs' list
};

// The lines of `text` (a last "\n" ends the last line, it does not start another).
std::vector<std::string> Lines(const std::string& text) {
  if (text.empty()) return {};
  std::vector<std::string> lines = Split(text, '\n');
  if (text.ends_with('\n')) lines.pop_back();
  return lines;
}

std::string Indented(const std::string& lines, const std::string& indent) {
  std::string out;
  for (const std::string& l : Lines(lines)) out += indent + l + "\n";
  return out;
}

std::string TaskFile(const TaskSpec& t) {
  const std::string params = *t.init_params ? std::string(", ") + t.init_params : "";
  return std::string(kHead) + t.constants + "\n\n\nclass Model(nn.Module):\n    def __init__(self" + params +
         "):\n        super().__init__()\n" + Indented(t.init_body, "        ") + "\n    def forward(self, " +
         t.forward_params + "):\n" + Indented(t.forward_body, "        ") + "\n\ndef get_inputs():\n" +
         Indented(t.inputs_body, "    ") + "\n\ndef get_init_inputs():\n    return [" + t.init_inputs + "]\n";
}

const TaskSpec kSuite[] = {
    {"relu", "batch_size = 16\ndim = 16384",
     "", "",
     "x", "return torch.relu(x)",
     "x = torch.randn(batch_size, dim)\nreturn [x]", ""},
    {"softmax", "batch_size = 16\nfeatures = 4096",
     "", "",
     "x", "return torch.softmax(x, dim=1)",
     "x = torch.randn(batch_size, features)\nreturn [x]", ""},
    {"matmul", "M = 1024\nK = 4096\nN = 2048",
     "", "",
     "A, B", "return torch.matmul(A, B)",
     "A = torch.randn(M, K)\nB = torch.randn(K, N)\nreturn [A, B]", ""},
    {"conv_relu_bias", "batch_size = 128\nin_channels = 3\nout_channels = 16\nheight, width = 32, 32\nkernel_size = 3\nbias_shape = (out_channels, 1, 1)",
     "in_channels, out_channels, kernel_size, bias_shape", "self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=kernel_size, padding=1)\nself.bias = nn.Parameter(torch.randn(bias_shape))",
     "x", "x = self.conv(x)\nx = torch.relu(x)\nx = x + self.bias\nreturn x",
     "return [torch.randn(batch_size, in_channels, height, width)]", "in_channels, out_channels, kernel_size, bias_shape"},
    {"layernorm", "batch_size = 32\nfeatures = 1024\neps = 1e-5",
     "features, eps", "self.ln = nn.LayerNorm(features, eps=eps, elementwise_affine=True)",
     "x", "return self.ln(x)",
     "x = torch.randn(batch_size, features)\nreturn [x]", "features, eps"},
    {"sum_reduce", "batch_size = 16\ndim1 = 256\ndim2 = 256\nreduce_dim = 1",
     "dim", "self.dim = dim",
     "x", "return torch.sum(x, dim=self.dim, keepdim=True)",
     "x = torch.randn(batch_size, dim1, dim2)\nreturn [x]", "reduce_dim"},
    {"gemm_scale_sigmoid", "batch_size = 128\nin_features = 1024\nout_features = 512\nscale_factor = 2.0",
     "in_features, out_features, scale_factor", "self.linear = nn.Linear(in_features, out_features)\nself.scale_factor = scale_factor",
     "x", "y = self.linear(x)\ny = y * self.scale_factor\nreturn torch.sigmoid(y)",
     "return [torch.randn(batch_size, in_features)]", "in_features, out_features, scale_factor"},
    {"mse_loss", "batch_size = 128\ninput_shape = (4096,)",
     "", "",
     "predictions, targets", "diff = predictions - targets\nreturn torch.mean(diff * diff)",
     "predictions = torch.randn(batch_size, *input_shape)\ntargets = torch.randn(batch_size, *input_shape)\nreturn [predictions, targets]", ""},
};

const TaskSpec kUnrelated[] = {
    {"tanh", "batch_size = 16\ndim = 16384",
     "", "",
     "x", "return torch.tanh(x)",
     "x = torch.randn(batch_size, dim)\nreturn [x]", ""},
    {"cumsum", "batch_size = 128\nlength = 4000",
     "dim", "self.dim = dim",
     "x", "return torch.cumsum(x, dim=self.dim)",
     "return [torch.randn(batch_size, length)]", "1"},
    {"argmax", "batch_size = 16\ndim1 = 256\ndim2 = 256",
     "dim", "self.dim = dim",
     "x", "return torch.argmax(x, dim=self.dim)",
     "x = torch.randn(batch_size, dim1, dim2)\nreturn [x]", "1"},
    {"maxpool", "batch_size = 16\nchannels = 32\nheight = width = 128",
     "kernel_size, stride", "self.pool = nn.MaxPool2d(kernel_size=kernel_size, stride=stride)",
     "x", "return self.pool(x)",
     "return [torch.randn(batch_size, channels, height, width)]", "2, 2"},
    {"cross_entropy", "batch_size = 4096\nnum_classes = 10",
     "", "",
     "predictions, targets", "return F.cross_entropy(predictions, targets)",
     "return [torch.randn(batch_size, num_classes), torch.randint(0, num_classes, (batch_size,))]", ""},
    {"gemm_gelu", "batch_size = 128\nin_features = 1024\nout_features = 512",
     "in_features, out_features", "self.linear = nn.Linear(in_features, out_features)",
     "x", "x = self.linear(x)\nreturn F.gelu(x)",
     "return [torch.randn(batch_size, in_features)]", "in_features, out_features"},
    {"bmm", "batch_size = 128\nm, k, n = 128, 256, 512",
     "", "",
     "A, B", "return torch.bmm(A, B)",
     "return [torch.randn(batch_size, m, k), torch.randn(batch_size, k, n)]", ""},
    {"l2_norm", "batch_size = 16\ndim = 16384",
     "", "",
     "x", "return x / torch.norm(x, p=2, dim=1, keepdim=True)",
     "return [torch.randn(batch_size, dim)]", ""},
};

// Module-level lines that assign literals: `name = 16`, `a, b = 32, 32`, `shape = (4096,)`.
const std::regex kConstantLine(R"(^([A-Za-z_]\w*(\s*,\s*[A-Za-z_]\w*)*)\s*=\s*([-+0-9.eE(), ]+)$)");

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// Every number on module-level constant lines changed (integers doubled plus one,
// floats given another digit): the task resized.
std::string Resized(const std::string& source) {
  std::vector<std::string> lines = Lines(source);
  const std::regex number(R"(\b\d+(\.\d+)?([eE][-+]?\d+)?\b)");
  for (std::string& l : lines) {
    if (!std::regex_match(l, kConstantLine)) continue;
    const size_t eq = l.find('=');
    std::string rhs = l.substr(eq + 1), out;
    auto begin = std::sregex_iterator(rhs.begin(), rhs.end(), number);
    size_t last = 0;
    for (auto it = begin; it != std::sregex_iterator(); ++it) {
      out += rhs.substr(last, it->position() - last);
      const std::string n = it->str();
      out += n.find_first_of(".eE") == std::string::npos ? std::to_string(std::stoll(n) * 2 + 1) : n + "7";
      last = it->position() + it->length();
    }
    l = l.substr(0, eq + 1) + out + rhs.substr(last);
  }
  return Join(lines);
}

// Every whole word `from` renamed `to`, except a member (`torch.norm` for a local
// `norm`) and a call's keyword argument (`f(from=1)`: the callee's parameter, which a
// renamed copy keeps).
std::string RenameWord(const std::string& source, const std::string& from, const std::string& to) {
  std::string out;
  int depth = 0;
  auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t k = 0; k < source.size();) {
    const char c = source[k];
    if (c == '(' || c == '[') ++depth;
    if ((c == ')' || c == ']') && depth > 0) --depth;
    const bool starts = source.compare(k, from.size(), from) == 0 &&
                        (k == 0 || (!word_char(source[k - 1]) && source[k - 1] != '.')) &&  // not torch.norm
                        (k + from.size() >= source.size() || !word_char(source[k + from.size()]));
    if (!starts) {
      out += c;
      ++k;
      continue;
    }
    size_t after = source.find_first_not_of(' ', k + from.size());
    const size_t line = source.rfind('\n', k) == std::string::npos ? 0 : source.rfind('\n', k) + 1;
    const bool in_def = source.compare(source.find_first_not_of(' ', line), 4, "def ") == 0;  // a default
    const bool keyword = depth > 0 && !in_def && after != std::string::npos && source[after] == '=' &&
                         (after + 1 >= source.size() || source[after + 1] != '=');
    out += keyword ? from : to;
    k += from.size();
  }
  return out;
}

// Module-level constants, the parameters of __init__ and forward and their local
// variables renamed (a call's keyword arguments keep their names).
std::string Renamed(const std::string& source) {
  std::set<std::string> names;
  const std::regex word(R"([A-Za-z_]\w*)");
  for (const std::string& l : Lines(source)) {
    std::smatch m;
    if (std::regex_match(l, m, kConstantLine)) {
      const std::string lhs = m[1];
      for (auto it = std::sregex_iterator(lhs.begin(), lhs.end(), word); it != std::sregex_iterator(); ++it)
        names.insert(it->str());
    }
    static const std::regex def(R"(^\s+def (__init__|forward)\(self,?\s*(.*)\):)");
    if (std::regex_search(l, m, def)) {
      const std::string params = m[2];
      for (auto it = std::sregex_iterator(params.begin(), params.end(), word); it != std::sregex_iterator(); ++it)
        names.insert(it->str());
    }
    static const std::regex local(R"(^\s+([A-Za-z_]\w*) = )");
    if (std::regex_search(l, m, local) && m[1] != "self") names.insert(m[1]);
  }
  for (const char* keep : {"torch", "nn", "F", "self", "x", "dim", "eps", "int", "float", "bool", "str", "tuple",
                           "list", "None", "True", "False", "Tensor"})
    names.erase(keep);
  names.insert("x");  // the usual input name
  std::string out = source;
  for (const std::string& n : names) out = RenameWord(out, n, "renamed_" + n);
  return out;
}

// Module-level constant lines, __init__'s self assignments and get_inputs' statements
// in reverse order; keyword arguments of calls reversed.
std::string Reordered(const std::string& source) {
  std::vector<std::string> lines = Lines(source);
  auto reverse_runs = [&](auto is_member) {
    for (size_t i = 0; i < lines.size();) {
      size_t j = i;
      while (j < lines.size() && is_member(lines[j])) ++j;
      if (j > i + 1) std::reverse(lines.begin() + i, lines.begin() + j);
      i = j == i ? i + 1 : j;
    }
  };
  reverse_runs([](const std::string& l) { return std::regex_match(l, kConstantLine) && l.find('(') == std::string::npos; });
  reverse_runs([](const std::string& l) { return l.starts_with("        self.") && l.find(" = ") != std::string::npos; });
  reverse_runs([](const std::string& l) {
    return l.starts_with("    ") && !l.starts_with("     ") && l.find(" = torch.") != std::string::npos;
  });
  const std::regex two_keywords(R"((\w+=[\w.]+), (\w+=[\w.]+)\))");
  for (std::string& l : lines) l = std::regex_replace(l, two_keywords, "$2, $1)");
  return Join(lines);
}

// The model class renamed (`class Model` and `super(Model, self)`): a dataset that
// calls the network by its own name.
std::string ClassRenamed(const std::string& source) {
  return std::regex_replace(source, std::regex(R"(\bModel\b)"), "ReferenceNet");
}

// The definitions moved: the imports first, then the functions and classes in reverse
// order (get_init_inputs, get_inputs, the model), the module-level constants last.
std::string Moved(const std::string& source) {
  std::vector<std::string> imports, constants;
  std::vector<std::vector<std::string>> blocks;
  for (const std::string& l : Lines(source)) {
    const bool top = !l.empty() && l[0] != ' ';
    if (top && (l.starts_with("import ") || l.starts_with("from "))) imports.push_back(l);
    else if (top && std::regex_match(l, kConstantLine)) constants.push_back(l);
    else if (top) blocks.push_back({l});
    else if (!blocks.empty() && !l.empty()) blocks.back().push_back(l);
  }
  std::string out = Join(imports);
  for (auto b = blocks.rbegin(); b != blocks.rend(); ++b) out += "\n\n" + Join(*b);
  return out + "\n\n" + Join(constants);
}

// Every rewrite at once: resized, renamed, reordered, moved, the class renamed.
std::string AllAtOnce(const std::string& source) {
  return ClassRenamed(Moved(Reordered(Renamed(Resized(source)))));
}

struct Measure {
  int planted = 0, found = 0;
  int unrelated = 0, flagged = 0;
  std::map<std::string, std::pair<int, int>> by_kind;  // kind -> found, planted
};

void Plant(const SuiteIndex& index, const std::vector<BenchmarkTask>& suite, Measure& m) {
  for (size_t t = 0; t < suite.size(); ++t) {
    if (suite[t].language != "python") continue;
    for (auto [kind, text] : {std::pair{"resized", Resized(suite[t].source)},
                              std::pair{"renamed", Renamed(suite[t].source)},
                              std::pair{"reordered", Reordered(suite[t].source)},
                              std::pair{"class_renamed", ClassRenamed(suite[t].source)},
                              std::pair{"moved", Moved(suite[t].source)},
                              std::pair{"all_at_once", AllAtOnce(suite[t].source)}}) {
      // A record of the planted task: a kernel of no relation, the task as its reference.
      DecontamItem item{"planted", "__global__ void k(float* a) { a[0] = 1; }\n", "cuda", text};
      bool hit = false;
      for (const ContaminationHit& h : index.Check(item)) hit |= h.task == t;
      ++m.planted;
      ++m.by_kind[kind].second;
      if (!hit && GetEnv("KVAULT_RECALL_MISSES")) std::printf("missed %s %s\n", kind, suite[t].name.c_str());
      if (hit) {
        ++m.found;
        ++m.by_kind[kind].first;
      }
    }
  }
}

void Report(const char* suite_name, const Measure& m) {
  std::printf("decontamination on %s: recall %d/%d (%.3f)", suite_name, m.found, m.planted,
              m.planted ? static_cast<double>(m.found) / m.planted : 0.0);
  for (const auto& [kind, n] : m.by_kind) std::printf(", %s %d/%d", kind.c_str(), n.first, n.second);
  std::printf("; unrelated tasks flagged %d/%d (%.3f)\n", m.flagged, m.unrelated,
              m.unrelated ? static_cast<double>(m.flagged) / m.unrelated : 0.0);
}

std::vector<BenchmarkTask> Tasks(const TaskSpec* tasks, size_t n) {
  std::vector<BenchmarkTask> out;
  for (size_t i = 0; i < n; ++i) out.push_back({tasks[i].name, "", TaskFile(tasks[i]), "python"});
  return out;
}

void Unrelated(const SuiteIndex& index, Measure& m) {
  for (const BenchmarkTask& u : Tasks(kUnrelated, std::size(kUnrelated))) {
    ++m.unrelated;
    auto hits = index.Check({"unrelated", "__global__ void k(float* a) { a[0] = 2; }\n", "cuda", u.source});
    for (const ContaminationHit& h : hits)
      std::printf("unrelated %s flagged: task %zu, %s, score %.2f\n", u.name.c_str(), h.task, h.reason.c_str(), h.score);
    m.flagged += !hits.empty();
  }
}

TEST(DecontamRecall, PlantedResizedRenamedReorderedTasksAreCaught) {
  std::vector<BenchmarkTask> suite = Tasks(kSuite, std::size(kSuite));
  // The variants really differ from their task.
  for (const BenchmarkTask& t : suite) {
    EXPECT_NE(Resized(t.source), t.source) << t.name;
    EXPECT_NE(Renamed(t.source), t.source) << t.name;
    EXPECT_NE(Reordered(t.source), t.source) << t.name;
    EXPECT_NE(ClassRenamed(t.source), t.source) << t.name;
    EXPECT_NE(Moved(t.source), t.source) << t.name;
    EXPECT_EQ(Moved(t.source).find("class "), Moved(t.source).rfind("class ")) << t.name;
    // The operation signature sees the renamed model and every rewrite at once, not
    // only the n-grams: the task's shape-free signature is the variant's.
    auto task = ReferenceSignature(t.source), all = ReferenceSignature(AllAtOnce(t.source)),
         class_renamed = ReferenceSignature(ClassRenamed(t.source));
    ASSERT_TRUE(task && all && class_renamed) << t.name;
    EXPECT_EQ(class_renamed->key, task->key) << t.name;
    EXPECT_EQ(all->shape_free_key, task->shape_free_key) << t.name;
  }
  SuiteIndex index(suite, DecontamOptions{});
  Measure m;
  Plant(index, suite, m);
  Unrelated(index, m);
  Report("the planted suite", m);
  EXPECT_EQ(m.planted, 48);
  EXPECT_EQ(m.found, m.planted);
  // argmax is sum_reduce's file with one call changed: the n-grams of their shared
  // reduction template reach half of sum_reduce's distinctive ones (score 0.54). In a
  // suite of many reductions that template is boilerplate; here it is not.
  EXPECT_LE(m.flagged, 1);
  // Without the shape-free signature and number-blind n-grams a resized task is
  // missed (the case this measures): its exact signature differs.
  DecontamItem resized{"r", "", "cuda", Resized(suite[0].source)};
  bool exact = false;
  for (const ContaminationHit& h : index.Check(resized)) exact |= h.reason == "signature";
  EXPECT_FALSE(exact);
}

TEST(DecontamRecall, KernelBenchWhenGiven) {
  const std::string root = GetEnv("KVAULT_KERNELBENCH").value_or("");
  if (root.empty()) GTEST_SKIP() << "KVAULT_KERNELBENCH names no KernelBench/ folder";
  auto suite = LoadBenchmarkSuite(root);
  ASSERT_TRUE(suite.ok()) << suite.error();
  SuiteIndex index(*suite, DecontamOptions{});
  Measure m;
  Plant(index, *suite, m);
  Unrelated(index, m);
  Report(root.c_str(), m);
  EXPECT_GT(m.planted, 0);
}

}  // namespace
}  // namespace kvault::corpus
