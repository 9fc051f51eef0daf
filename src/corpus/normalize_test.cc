#include "corpus/normalize.h"

#include <gtest/gtest.h>

namespace kvault::corpus {
namespace {

constexpr const char* kRelu = R"(
// elementwise relu
__global__ void relu_kernel(const float* __restrict__ in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;  /* one thread per element */
  if (i < n) out[i] = fmaxf(in[i], 0.0f);
}
)";

constexpr const char* kReluRenamed = R"(
__global__ void my_relu(const float* __restrict__ src,
                        float* dst, int count) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < count) dst[idx] = fmaxf(src[idx], 0.0f);   // clamp
}
)";

constexpr const char* kSigmoid = R"(
__global__ void relu_kernel(const float* __restrict__ in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 1.0f / (1.0f + expf(-in[i]));
}
)";

TEST(Normalize, RenamedIdentifiersCommentsAndWhitespaceCollide) {
  auto a = Normalize(kRelu, LanguageFamily::kC);
  auto b = Normalize(kReluRenamed, LanguageFamily::kC);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(a.key.size(), 64u);
}

TEST(Normalize, DifferentOperationDoesNotCollide) {
  EXPECT_NE(Normalize(kRelu, LanguageFamily::kC).key, Normalize(kSigmoid, LanguageFamily::kC).key);
}

TEST(Normalize, ChangedConstantDoesNotCollide) {
  std::string changed = kRelu;
  changed.replace(changed.find("0.0f"), 4, "0.1f");
  EXPECT_NE(Normalize(kRelu, LanguageFamily::kC).key, Normalize(changed, LanguageFamily::kC).key);
}

TEST(Normalize, KeepsBuiltinsAndRenamesOwnNames) {
  auto n = Normalize(kRelu, LanguageFamily::kC);
  std::vector<std::string> head(n.tokens.begin(), n.tokens.begin() + 8);
  EXPECT_EQ(head, (std::vector<std::string>{"__global__", "void", "v0", "(", "const", "float", "*",
                                            "__restrict__"}));
  EXPECT_NE(std::find(n.tokens.begin(), n.tokens.end(), "threadIdx"), n.tokens.end());
  EXPECT_NE(std::find(n.tokens.begin(), n.tokens.end(), "fmaxf"), n.tokens.end());
}

TEST(Normalize, NamesTheSourceUsesButDoesNotDeclareAreKept) {
  // Another library function or another macro constant is another kernel: a wrong
  // initial value (FLT_MIN for -FLT_MAX) or a wrong call must not share the key.
  const char* max_init = R"(
__global__ void row_max(const float* x, float* out, int n) {
  float m = FLT_MAX;
  for (int i = 0; i < n; ++i) m = fminf(m, log1pf(x[i]));
  out[0] = m;
})";
  std::string wrong_init = max_init;
  wrong_init.replace(wrong_init.find("FLT_MAX"), 7, "FLT_MIN");
  std::string wrong_call = max_init;
  wrong_call.replace(wrong_call.find("log1pf"), 6, "expm1f");
  const auto key = Normalize(max_init, LanguageFamily::kC).key;
  EXPECT_NE(Normalize(wrong_init, LanguageFamily::kC).key, key);
  EXPECT_NE(Normalize(wrong_call, LanguageFamily::kC).key, key);
  // Its own names still rename, whatever they are.
  std::string renamed = max_init;
  for (auto [from, to] : {std::pair{"row_max", "k"}, {"float m", "float best"}, {"m =", "best ="},
                          {"(m,", "(best,"}, {"= m;", "= best;"}, {"int i", "int j"}, {"i < n", "j < n"},
                          {"++i", "++j"}, {"x[i]", "x[j]"}})
    renamed.replace(renamed.find(from), std::string(from).size(), to);
  EXPECT_EQ(Normalize(renamed, LanguageFamily::kC).key, key);
  auto tokens = Normalize(max_init, LanguageFamily::kC).tokens;
  EXPECT_NE(std::find(tokens.begin(), tokens.end(), "FLT_MAX"), tokens.end());
  EXPECT_NE(std::find(tokens.begin(), tokens.end(), "log1pf"), tokens.end());
  // A pragma's words are not declarations; Python's imported names and keyword
  // arguments are kept, its parameters, targets and `self.` attributes renamed.
  EXPECT_NE(Normalize("#pragma omp parallel for\nint i;", LanguageFamily::kC).key,
            Normalize("#pragma omp single for\nint i;", LanguageFamily::kC).key);
  const char* py = "from torch import relu\nclass M:\n    def forward(self, x, y=1):\n"
                   "        self.s, t = x, y\n        return relu(self.s) + t.sum(dim=y)\n";
  const char* py_renamed = "from torch import relu\nclass N:\n    def forward(self, a, b=1):\n"
                           "        self.w, c = a, b\n        return relu(self.w) + c.sum(dim=b)\n";
  const char* py_other = "from torch import sigmoid\nclass M:\n    def forward(self, x, y=1):\n"
                         "        self.s, t = x, y\n        return sigmoid(self.s) + t.sum(dim=y)\n";
  EXPECT_EQ(Normalize(py, LanguageFamily::kPython).key, Normalize(py_renamed, LanguageFamily::kPython).key);
  EXPECT_NE(Normalize(py, LanguageFamily::kPython).key, Normalize(py_other, LanguageFamily::kPython).key);
}

TEST(Normalize, PythonTritonMembersKeptDocstringsDropped) {
  const char* a = R"(
import triton
import triton.language as tl

@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Adds two vectors."""
    pid = tl.program_id(0)  # block index
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + tl.load(y_ptr + offs), mask=offs < n)
)";
  const char* b = R"(
import triton
import triton.language as tl
@triton.jit
def k(a, b, c, size, B: tl.constexpr):
    p = tl.program_id(0)
    o = p * B + tl.arange(0, B)
    tl.store(c + o, tl.load(a + o) + tl.load(b + o), mask=o < size)
)";
  auto na = Normalize(a, LanguageFamily::kPython), nb = Normalize(b, LanguageFamily::kPython);
  EXPECT_EQ(na.key, nb.key);
  EXPECT_NE(std::find(na.tokens.begin(), na.tokens.end(), "program_id"), na.tokens.end());
  std::string mul = b;
  mul.replace(mul.find("tl.load(a + o) + tl.load"), 24, "tl.load(a + o) * tl.load");
  EXPECT_NE(Normalize(mul, LanguageFamily::kPython).key, nb.key);
}

TEST(Normalize, PythonBlocksAreTokensWhateverTheIndentWidth) {
  // The same scan; in `outside` the store left the loop: another kernel, same tokens
  // but for the block that holds the store.
  const char* inside = "def f(x, out):\n    acc = 0\n    for i in range(len(x)):\n        acc += x[i]\n"
                       "        out[i] = acc\n    return out\n";
  const char* outside = "def f(x, out):\n    acc = 0\n    for i in range(len(x)):\n        acc += x[i]\n"
                        "    out[i] = acc\n    return out\n";
  const char* two_spaces = "def g(y, res):\n  run = 0\n  for k in range(len(y)):  # the scan\n    run += y[k]\n"
                           "    res[k] = run\n  return res\n";
  auto a = Normalize(inside, LanguageFamily::kPython), b = Normalize(outside, LanguageFamily::kPython);
  EXPECT_NE(a.key, b.key);
  EXPECT_EQ(Normalize(two_spaces, LanguageFamily::kPython).key, a.key);
  EXPECT_EQ(std::count(a.tokens.begin(), a.tokens.end(), "<indent>"), 2);
  EXPECT_EQ(std::count(a.tokens.begin(), a.tokens.end(), "<dedent>"), 1);
  // Lines continued inside brackets or after a backslash open no block.
  const char* wrapped = "def f(x, out):\n    acc = (0 +\n           0)\n    z = 1 + \\\n        2\n    return out\n";
  auto w = Normalize(wrapped, LanguageFamily::kPython);
  EXPECT_EQ(std::count(w.tokens.begin(), w.tokens.end(), "<indent>"), 1);
  // Decontamination's erased style reads no blocks.
  auto e = Normalize(inside, LanguageFamily::kPython, RenameStyle::kErased);
  EXPECT_EQ(std::count(e.tokens.begin(), e.tokens.end(), "<indent>"), 0);
}

TEST(Normalize, EmbeddedCudaSourceInPythonIsTokenizedAsC) {
  const char* py = "src = \"\"\"\n__global__ void k(float* a) { a[threadIdx.x] = 0; }\n\"\"\"\n";
  auto n = Normalize(py, LanguageFamily::kPython);
  EXPECT_NE(std::find(n.tokens.begin(), n.tokens.end(), "__global__"), n.tokens.end());
  EXPECT_NE(std::find(n.tokens.begin(), n.tokens.end(), "{"), n.tokens.end());
}

TEST(Normalize, ErasedStyleSpellsEveryOwnNameTheSame) {
  auto n = Normalize("int alpha = beta + gamma;", LanguageFamily::kC, RenameStyle::kErased);
  EXPECT_EQ(n.tokens, (std::vector<std::string>{"int", "v", "=", "v", "+", "v", ";"}));
}

TEST(Normalize, UnterminatedStringAndCommentDoNotFail) {
  EXPECT_FALSE(Normalize("x = \"abc", LanguageFamily::kPython).tokens.empty());
  EXPECT_FALSE(Normalize("int x; /* never closed", LanguageFamily::kC).tokens.empty());
  EXPECT_EQ(Tokenize("a\nb\n\nc", LanguageFamily::kC).back().line, 4);
}

TEST(Normalize, LanguageFamilies) {
  EXPECT_EQ(LanguageFamilyOf("HIP"), LanguageFamily::kC);
  EXPECT_EQ(LanguageFamilyOf("triton"), LanguageFamily::kPython);
  EXPECT_EQ(LanguageFamilyOf("unknown", "int f() { return 0; }"), LanguageFamily::kC);
  EXPECT_EQ(LanguageFamilyOf("unknown", "def f():\n  return {}\n"), LanguageFamily::kPython);
}

}  // namespace
}  // namespace kvault::corpus
