// Judging a failed lite compile (toolchain/lite_diagnostics.h) on real diagnostics,
// and BuildExtension's use of the judgement with a fake compiler.
//
// testdata/lite_diagnostics/<unit> are load_inline units as the engine assembles them,
// <unit>.lite.txt what the lite compile printed for each (g++ 12.2 under a UTF-8 locale,
// and once under LC_ALL=C; nvcc 13.0 with -arch sm_90; the lite command of
// docs/toolchains.md, run from that folder so the messages name the unit as given).
#include "toolchain/lite_diagnostics.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>

#include "toolchain/build.h"
#include "util/env_vars.h"
#include "util/files.h"

namespace kvault {
namespace {

using Names = std::vector<std::string>;

const char kLiteDir[] = "/work/main/include_lite";  // where the texts were made

LiteFailureJudgement Judge(const std::string& unit, const std::string& diagnostics_suffix = ".lite.txt") {
  const std::string dir = SourceRoot() + "/src/toolchain/testdata/lite_diagnostics/";
  auto source = ReadFile(dir + unit);
  auto diagnostics = ReadFile(dir + unit + diagnostics_suffix);
  EXPECT_TRUE(source.ok() && diagnostics.ok()) << unit;
  if (!source || !diagnostics) return {};
  return JudgeLiteFailure(*diagnostics, unit, *source, kLiteDir);
}

// The source's own errors: no full build needed.
TEST(LiteDiagnosticsTest, SyntaxErrorsAreTheSourcesOwn) {
  // A missing semicolon, then an unterminated string; 'i' is the broken for loop's echo.
  auto gxx = Judge("cpp_semicolon.cpp");
  EXPECT_TRUE(gxx.own) << gxx.why;
  EXPECT_EQ(gxx.why, "line 11: missing terminating \" character");
  EXPECT_EQ(gxx.undeclared, Names{});
  auto nvcc = Judge("cu_semicolon.cu");
  EXPECT_TRUE(nvcc.own) << nvcc.why;
  EXPECT_EQ(nvcc.why, "line 7: expected a \";\"");
  auto lexical = Judge("cu_lex.cu");  // a missing closing quote, a stray '@'
  EXPECT_TRUE(lexical.own) << lexical.why;
  EXPECT_EQ(lexical.undeclared, Names{});
}

TEST(LiteDiagnosticsTest, UndeclaredNamesAreOwnUnlessPyTorchsHeadersHoldThem) {
  for (const char* suffix : {".lite.txt", ".lite-c-locale.txt"}) {  // ‘’ and '' quotes
    auto gxx = Judge("cpp_undeclared.cpp", suffix);
    EXPECT_TRUE(gxx.own) << gxx.why;
    EXPECT_EQ(gxx.undeclared, (Names{"idx_t", "row_sum"})) << suffix;
  }
  // As feedback, the function's signature reads as PyTorch's build prints it.
  auto text = ReadFile(SourceRoot() + "/src/toolchain/testdata/lite_diagnostics/cpp_undeclared.cpp.lite-c-locale.txt");
  ASSERT_TRUE(text.ok());
  EXPECT_NE(WithPyTorchNames(*text).find("In function 'at::Tensor softmax_cpu(at::Tensor)'"), std::string::npos);
  EXPECT_EQ(WithPyTorchNames(*text).find("kvault_lite"), std::string::npos);
  auto nvcc = Judge("cu_undeclared.cu");
  EXPECT_TRUE(nvcc.own) << nvcc.why;
  EXPECT_EQ(nvcc.undeclared, Names{"num_cols"});
  // An unknown macro in front of a declarator reads as bad grammar.
  auto macro = Judge("cpp_macro.cpp");
  EXPECT_TRUE(macro.own) << macro.why;
  EXPECT_EQ(macro.macro_like, Names{"UNKNOWN_ATTR"});
}

TEST(LiteDiagnosticsTest, TypeErrorsOnLinesOfBuiltinTypesAreOwn) {
  // Writes through const float*, int* into float*, a redeclared int.
  auto gxx = Judge("cpp_const.cpp");
  EXPECT_TRUE(gxx.own) << gxx.why;
  // The same, and blockIdx.w; the kernel's `out` is a pointer where the host's is a tensor.
  auto nvcc = Judge("cu_const.cu");
  EXPECT_TRUE(nvcc.own) << nvcc.why;
  EXPECT_EQ(nvcc.why, "line 7: expression must be a modifiable lvalue");
  // A host function launched with <<<...>>>: neither the lite headers nor PyTorch's
  // declare a kernel a source could mean instead.
  auto launch = Judge("cu_launch.cu");
  EXPECT_TRUE(launch.own) << launch.why;
  EXPECT_EQ(launch.why, "line 15: a host function call cannot be configured");
}

// Anything that may be a name the lite headers lack: the full build decides.
TEST(LiteDiagnosticsTest, WhatMayBeTheLiteHeadersLeavesItToTheFullBuild) {
  struct Case {
    const char* unit;
    const char* why;
  } cases[] = {
      {"cpp_torchname.cpp", "line 5: 'matmul' is not a member of 'torch'"},
      {"cu_torchname.cu", "line 7: namespace \"torch\" has no member \"matmul\""},
      {"cpp_binding.cpp", "the diagnostics name the lite headers"},  // module.h's static_assert
      {"cu_tuple.cu", "the diagnostics name the lite headers"},  // no conversion from IntArrayRef
      {"cu_macro.cu", "line 5: this declaration has no storage class or type specifier"},
      {"cu_brace.cu", "the diagnostics name the lite headers"},  // the bindings' expansion
  };
  for (const Case& c : cases) {
    auto j = Judge(c.unit);
    EXPECT_FALSE(j.own) << c.unit;
    EXPECT_EQ(j.why.rfind(c.why, 0), 0u) << c.unit << ": " << j.why;
  }
}

TEST(LiteDiagnosticsTest, ErrorsElsewhereOrUnlocatedAreDoubts) {
  const std::string source = "int f() { return 0 }\n";
  EXPECT_TRUE(JudgeLiteFailure("u.cpp:1:20: error: expected ';' before '}' token\n", "u.cpp", source, "").own);
  // The same message at a header's line, at another unit's, or from the driver.
  EXPECT_FALSE(JudgeLiteFailure("/usr/include/x.h:1:20: error: expected ';' before '}' token\n", "u.cpp", source, "").own);
  EXPECT_FALSE(JudgeLiteFailure("u.cpp:1:20: error: expected ';' before '}' token\n"
                                "u.cpp:1:1: note: in expansion of macro 'M' from /usr/include/m.h\n"
                                "/usr/include/m.h:3:1: note: defined here\n", "u.cpp", source, "").own);
  EXPECT_FALSE(JudgeLiteFailure("cc1plus: fatal error: u.cpp: No such file or directory\n", "u.cpp", source, "").own);
  EXPECT_FALSE(JudgeLiteFailure("u.cpp:1:20: error: expected ';' before '}' token\n"
                                "u.cpp:1:1: note: 'std::vector' is defined in header '<vector>'; did you forget to "
                                "'#include <vector>'?\n", "u.cpp", source, "").own);
  EXPECT_FALSE(JudgeLiteFailure("", "u.cpp", source, "").own);  // killed, or no message
  // Diagnostics past 16 KiB keep their head and tail: the errors between are unseen.
  EXPECT_FALSE(JudgeLiteFailure("u.cpp:1:20: error: expected ';' before '}' token\n[... 5000 bytes omitted ...]\n"
                                "u.cpp:1:20: error: expected ';' before '}' token\n", "u.cpp", source, "").own);
}

// Text std::regex cannot match without overflowing its stack (util/strings.h) is the
// full build's to judge: a syntax error beside a macro-like word looks the word up in
// the whole source, across a run of 200,000 blank lines here.
TEST(LiteDiagnosticsTest, TextTooLongToMatchIsADoubt) {
  const std::string source = "int f() { return FOO_BAR 0 }\n#" + std::string(200000, '\n') + "define Y 1\n";
  auto j = JudgeLiteFailure("u.cpp:1:27: error: expected ';' before numeric constant\n", "u.cpp", source, "");
  EXPECT_FALSE(j.own);
  EXPECT_NE(j.why.find("too long to match"), std::string::npos) << j.why;
  j = JudgeLiteFailure("u.cpp:1:20: error: expected ';' before '" + std::string(100000, 'x') + "'\n", "u.cpp",
                       "int f() { return 0 }\n", "");
  EXPECT_FALSE(j.own);
  EXPECT_NE(j.why.find("too long to match"), std::string::npos) << j.why;
  // Short lines, short blank runs: a declaration's words are still read near its name
  // only (100,000 lines of `const` between a type and a name).
  std::string consts;
  for (int i = 0; i < 100000; ++i) consts += "const\n";
  j = JudgeLiteFailure("u.cpp:2:8: error: assignment of read-only location '* x'\n", "u.cpp",
                       "void f(const float* x) {\n  x[0] = 1;\n}\nfloat\n" + consts + "x;\n", "");
  EXPECT_TRUE(j.own) << j.why;  // x is a const float* where the error is
}

TEST(LiteDiagnosticsTest, UnknownWordsBesideASyntaxErrorAreLookedUp) {
  const std::string source = "__device__ float __ubsan_ignore_undefined__ g(float x) { return x; }\n";
  auto j = JudgeLiteFailure("u.cu(1): error: expected a \";\"\n", "u.cu", source, "");
  EXPECT_TRUE(j.own) << j.why;
  EXPECT_EQ(j.macro_like, Names{"__ubsan_ignore_undefined__"});  // not __device__: CUDA's
}

TEST(LiteDiagnosticsTest, NamesOutsideSourceSkipsTheSourcesOwnLines) {
  const std::string preprocessed =
      "# 0 \"/s/u.cu\"\n"
      "# 0 \"<built-in>\"\n"
      "#define __FLT_MAX__ 3.4e38F\n"
      "# 1 \"/usr/include/torch/x.h\" 1 3\n"
      "namespace at { struct Tensor; int matmul_out(int); }\n"
      "#define TORCH_CHECK(cond, ...) check(cond)\n"
      "# 2 \"/s/u.cu\" 2\n"
      "int num_cols_used = row_sum + matmul_out(1);\n"
      "# 1 \"/s/u.cu.h\" 1\n"  // another file whose name begins like the source's
      "int row_sum;\n";
  EXPECT_EQ(NamesOutsideSource(preprocessed, "/s/u.cu",
                               {"matmul_out", "TORCH_CHECK", "num_cols_used", "row_sum", "__FLT_MAX__", "absent"}),
            (Names{"TORCH_CHECK", "__FLT_MAX__", "matmul_out", "row_sum"}));
}

// BuildExtension with a fake compiler whose lite compile (its command holds
// include_lite) fails with `lite_error` at the source's line 3; -E writes
// `preprocessed` (with the source's marker) to its -o; a full compile succeeds.
class LiteVerdictBuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = std::make_unique<TempDir>(TempDir::Create("", "kvault-liteverdict").value());
    source_ = work_->Join("unit.cpp");
    ASSERT_TRUE(WriteFileAtomic(source_, "#include <torch/extension.h>\nint f() {\n  return 0\n}\n").ok());
  }
  void TearDown() override { unsetenv("KVAULT_CXX"); }

  void FakeCompiler(const std::string& lite_error, const std::string& header_text) {
    const std::string script = work_->Join("fakecc");
    std::ofstream(script) << "#!/bin/bash\n"
                          << "if [ \"$1\" = --version ]; then echo 'fakecc (KernelVault test) 9.9.9'; exit 0; fi\n"
                          << "echo \"$*\" >> '" << work_->Join("calls.log") << "'\n"
                          << "out=; prev=; src=; for a in \"$@\"; do [ \"$prev\" = -o ] && out=$a; "
                          << "case $a in *.cpp) src=$a;; esac; prev=$a; done\n"
                          << "case \" $* \" in\n"
                          << "  *' -E '*) printf '# 1 \"%s\"\\n# 1 \"/torch/h.h\" 1\\n" << header_text
                          << "\\n# 2 \"%s\" 2\\nint f();\\n' \"$src\" \"$src\" > \"$out\";;\n"
                          << "  *include_lite*) echo \"$src:3:3: error: " << lite_error << "\"; exit 1;;\n"
                          << "  *) echo built > \"$out\";;\n"
                          << "esac\n";
    ::chmod(script.c_str(), 0755);
    setenv("KVAULT_CXX", script.c_str(), 1);
  }
  std::string Calls() const { return ReadFile(work_->Join("calls.log")).value(); }
  Result<BuildResult> Build() {
    BuildRequest r;
    r.source_path = source_;
    r.torch.include_paths = {work_->Join("torch-include")};
    r.torch.torch_version = "1.13.0";
    r.cache_dir = work_->Join("cache");
    r.compile_only = true;  // no lite object to make
    return BuildExtension(r, std::chrono::seconds(20));
  }

  std::unique_ptr<TempDir> work_;
  std::string source_;
};

int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

TEST_F(LiteVerdictBuildTest, ASyntaxErrorIsAnsweredFromTheLiteCompile) {
  FakeCompiler("expected ';' before '}' token", "");
  auto r = Build();
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_FALSE(r->ok);
  EXPECT_TRUE(r->lite_verdict);
  EXPECT_EQ(r->lite_ext_note,
            "not built the full way: the lite compile's errors are the source's own (line 3: expected ';' before "
            "'}' token)");
  EXPECT_EQ(Lines(Calls()), 1) << Calls();  // the lite compile alone
}

TEST_F(LiteVerdictBuildTest, AnUndeclaredNameIsLookedUpInTheFullBuildsHeaders) {
  FakeCompiler("'row_sum' was not declared in this scope", "int other;");
  auto own = Build();
  ASSERT_TRUE(own.ok()) << own.error();
  EXPECT_TRUE(own->lite_verdict) << own->lite_ext_note;
  EXPECT_EQ(Lines(Calls()), 2) << Calls();  // the lite compile and the full preprocessor
  EXPECT_NE(Calls().find(" -E -dD "), std::string::npos) << Calls();
  EXPECT_EQ(Calls().find("include_lite", Calls().find('\n')), std::string::npos) << Calls();

  // PyTorch's headers declare it: the full build decides, and compiles it.
  FakeCompiler("'row_sum' was not declared in this scope", "float row_sum;");
  auto full = Build();
  ASSERT_TRUE(full.ok()) << full.error();
  EXPECT_TRUE(full->ok);
  EXPECT_FALSE(full->lite_verdict);
  EXPECT_NE(full->lite_ext_note.find("the full build decides (PyTorch's headers hold 'row_sum')"), std::string::npos)
      << full->lite_ext_note;
}

TEST_F(LiteVerdictBuildTest, ADoubtfulErrorTakesTheFullBuild) {
  FakeCompiler("'matmul' is not a member of 'torch'", "");
  auto r = Build();
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_TRUE(r->ok);
  EXPECT_FALSE(r->lite_verdict);
  EXPECT_NE(r->lite_ext_note.find("; the full build decides (line 3: 'matmul' is not a member of 'torch')"),
            std::string::npos)
      << r->lite_ext_note;
}

}  // namespace
}  // namespace kvault

