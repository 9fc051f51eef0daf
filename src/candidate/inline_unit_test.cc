#include "candidate/inline_unit.h"

#include <gtest/gtest.h>

namespace kvault {
namespace {

// A call as the worker's record_inline notes it (python/kvault_worker/inline_ext.py).
Json Call(Json cpp, Json cuda = Json::array()) {
  return Json{{"cpp_sources", std::move(cpp)}, {"cuda_sources", std::move(cuda)},
              {"functions", Json::array({Json::array({"f", "f"})})},
              {"extra_cflags", Json::array()}, {"extra_cuda_cflags", Json::array()},
              {"extra_ldflags", Json::array()}, {"extra_include_paths", Json::array()},
              {"with_cuda", nullptr}, {"is_python_module", true}, {"with_pytorch_error_handling", true},
              {"other", Json::object()}, {"digest", std::string(64, 'a')}};
}

TEST(InlineUnit, WhatTheCallPassedDecidesWhetherItBuildsCuda) {
  // Whatever the file's text said: C++ sources whose text names __global__ (a comment,
  // a string) build no CUDA; cuda_sources do, even of empty texts (PyTorch's own rule).
  EXPECT_FALSE(CallBuildsCuda(Call(Json::array({"// __global__\nint f();", "auto s = \"__global__\";"}))));
  EXPECT_TRUE(CallBuildsCuda(Call(Json::array(), Json::array({"__global__ void k() {}"}))));
  EXPECT_TRUE(CallBuildsCuda(Call(Json::array(), Json::array({""}))));
  Json forced = Call(Json::array({"int f();"}));
  forced["with_cuda"] = true;
  EXPECT_TRUE(CallBuildsCuda(forced));
  forced["with_cuda"] = false;
  EXPECT_FALSE(CallBuildsCuda(forced));
  EXPECT_FALSE(CallBuildsCuda(Json("not a call")));
}

TEST(InlineUnit, CppSourcesAloneAreMainCppAsPyTorchWritesIt) {
  Json call = Call(Json::array({"int g();", "torch::Tensor f(torch::Tensor x) { return x; }"}));
  call["extra_cflags"] = Json::array({"-O3", "-DFOO=1"});
  auto unit = InlineUnitFor(call);
  ASSERT_TRUE(unit) << unit.error();
  EXPECT_EQ(unit->language, "cpp");
  EXPECT_EQ(unit->digest, std::string(64, 'a'));
  EXPECT_EQ(unit->source,
            "#include <torch/extension.h>\nint g();\ntorch::Tensor f(torch::Tensor x) { return x; }\n"
            "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n"
            "m.def(\"f\", torch::wrap_pybind_function(f), \"f\");\n}");
  EXPECT_EQ(unit->extra_flags, (std::vector<std::string>{"-O3", "-DFOO=1"}));
}

TEST(InlineUnit, DeclaringCppSourcesAndCudaSourcesAreOneUnitForNvcc) {
  Json call = Call(Json::array({"torch::Tensor f(torch::Tensor x);  // {not code}"}),
                   Json::array({"__global__ void k() {}", "torch::Tensor f(torch::Tensor x) { return x; }"}));
  call["functions"] = Json::array({Json::array({"f", "the doc"})});
  call["with_pytorch_error_handling"] = false;
  call["extra_cflags"] = Json::array({"-O3"});
  call["extra_cuda_cflags"] = Json::array({"--use_fast_math"});
  auto unit = InlineUnitFor(call);
  ASSERT_TRUE(unit) << unit.error();
  EXPECT_EQ(unit->language, "cuda");
  EXPECT_EQ(unit->extra_flags, std::vector<std::string>{"--use_fast_math"});
  // The bindings follow the definitions; main.cpp's declarations stay out (a default
  // argument repeated in one unit is an error), its includes go first.
  EXPECT_EQ(unit->source,
            "#include <torch/extension.h>\n"
            "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n"
            "__global__ void k() {}\ntorch::Tensor f(torch::Tensor x) { return x; }\n"
            "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\nm.def(\"f\", f, \"the doc\");\n}");
}

// Models that bind by hand write PYBIND11_MODULE into cpp_sources beside their
// declarations and name no functions: the block follows cuda.cu's text, as the
// generated bindings do. Anything more in cpp_sources is still PyTorch's to build.
TEST(InlineUnit, APybindModuleInCppSourcesFollowsTheCudaSources) {
  const std::string module =
      "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n"
      "  m.def(\"forward\", &f, \"f {doc}\", py::arg(\"x\"));  // }\n}";
  Json call = Call(Json::array({"#include <vector>\ntorch::Tensor f(torch::Tensor x, float s = 1.0f);\n" + module + "\n"}),
                   Json::array({"torch::Tensor f(torch::Tensor x, float s) { return x; }"}));
  call["functions"] = nullptr;
  auto unit = InlineUnitFor(call);
  ASSERT_TRUE(unit) << unit.error();
  EXPECT_EQ(unit->source,
            "#include <torch/extension.h>\n#include <vector>\n"
            "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n"
            "torch::Tensor f(torch::Tensor x, float s) { return x; }\n" + module);
  auto why = [&](const std::string& cpp, Json functions = nullptr) {
    Json c = call;
    c["cpp_sources"] = Json::array({cpp});
    c["functions"] = std::move(functions);
    auto u = InlineUnitFor(c);
    return u ? std::string("built") : u.error();
  };
  // Code beside the block, a directive in it, two blocks, or bindings of functions= too.
  EXPECT_NE(why("int g() { return 1; }\n" + module).find("define code"), std::string::npos);
  EXPECT_NE(why("#define N 4\n" + module).find("define code"), std::string::npos);
  EXPECT_NE(why("PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n#ifdef X\n m.def(\"f\", &f);\n#endif\n}").find("define code"),
            std::string::npos);
  EXPECT_NE(why(module + "\n" + module).find("define code"), std::string::npos);
  EXPECT_NE(why(module, Json::array({Json::array({"f", "f"})})).find("define code"), std::string::npos);
  EXPECT_NE(why("PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"f\", &f);").find("define code"), std::string::npos);
  Json two = call;
  two["cpp_sources"] = Json::array({module, module});
  auto u = InlineUnitFor(two);
  ASSERT_FALSE(u);
  EXPECT_NE(u.error().find("more than one PYBIND11_MODULE"), std::string::npos);
}

TEST(InlineUnit, WhatIsLeftToPyTorchsOwnBuild) {
  const Json cuda = Json::array({"__global__ void k() {}"});
  auto why = [](const Json& call) {
    auto unit = InlineUnitFor(call);
    return unit ? std::string("built") : unit.error();
  };
  EXPECT_NE(why(Call(Json::array({"int f() { return 1; }"}), cuda)).find("define code beside cuda_sources"), std::string::npos);
  EXPECT_NE(why(Call(Json::array({"#define N 4\nint f();"}), cuda)).find("define code"), std::string::npos);
  Json c = Call(Json::array({"int f();"}), cuda);
  c["extra_cflags"] = Json::array({"-DN=4"});
  EXPECT_NE(why(c).find("extra_cflags '-DN=4'"), std::string::npos);
  c = Call(Json::array({"int f();"}));
  c["extra_include_paths"] = Json::array({"/x"});
  EXPECT_NE(why(c).find("extra_include_paths"), std::string::npos);
  c = Call(Json::array({"int f();"}));
  c["with_cuda"] = true;
  EXPECT_NE(why(c).find("with_cuda"), std::string::npos);
  c = Call(Json::array({"int f();"}));
  c["other"] = Json{{"no_implicit_headers", true}};
  EXPECT_NE(why(c).find("no_implicit_headers"), std::string::npos);
  c = Call(Json::array({"int f();"}));
  c["is_python_module"] = false;
  EXPECT_NE(why(c).find("is_python_module"), std::string::npos);
  c = Call(Json::array({"int f();"}));
  c["functions"] = Json::array({Json::array({"f(); system(\"x\")", "f"})});
  EXPECT_NE(why(c).find("not an identifier"), std::string::npos);
  c = Call(Json::array({"int f();"}));
  c["functions"] = Json::array({Json::array({"f", "a \" quote"})});
  EXPECT_NE(why(c).find("escaping"), std::string::npos);
  for (const char* field : {"cpp_sources", "extra_cflags", "digest"}) {
    c = Call(Json::array({"int f();"}));
    c[field] = 7;
    EXPECT_NE(why(c).find("malformed"), std::string::npos) << field;
  }
  EXPECT_NE(why(Json::array()).find("malformed"), std::string::npos);
  c = Call(Json::array({"int f();"}));
  c["functions"] = nullptr;  // the sources bind themselves: built, no bindings added
  auto unit = InlineUnitFor(c);
  ASSERT_TRUE(unit) << unit.error();
  EXPECT_EQ(unit->source.find("PYBIND11_MODULE"), std::string::npos);
}

// What LLM-written files pass (empty strings, -O3 twice, cuBLAS with its folder) is
// built; a flag off the allow-list is refused by name, whatever else the call holds.
TEST(InlineUnit, FlagsAsModelsWriteThem) {
  Json call = Call(Json::array({"torch::Tensor f(torch::Tensor x);"}), Json::array({"__global__ void k() {}"}));
  call["extra_cflags"] = Json::array({""});
  call["extra_cuda_cflags"] = Json::array({"-O3", "--use_fast_math", "-O3"});
  call["extra_ldflags"] = Json::array({"", "-L/usr/local/cuda/lib64 -lcublas"});
  auto unit = InlineUnitFor(call);
  ASSERT_TRUE(unit) << unit.error();
  EXPECT_EQ(unit->extra_flags, (std::vector<std::string>{"-O3", "--use_fast_math"}));
  EXPECT_EQ(unit->extra_link_flags, std::vector<std::string>{"-lcublas"});
  EXPECT_EQ(RefusedInlineFlag(call), "");

  call["extra_cflags"] = Json::array({"-wrapper /bin/sh,-c,id"});
  EXPECT_EQ(RefusedInlineFlag(call), "extra_cflags: flag '-wrapper' is not allowed for g++");
  EXPECT_FALSE(InlineUnitFor(call));
  call["extra_cflags"] = Json::array();
  call["extra_cuda_cflags"] = Json::array({"-Xcompiler=@/tmp/opts"});
  EXPECT_EQ(RefusedInlineFlag(call), "extra_cuda_cflags: flag '-Xcompiler=@/tmp/opts' is not allowed for nvcc");
  // Refused even where the call is otherwise left to PyTorch's build.
  call["other"] = Json{{"no_implicit_headers", true}};
  EXPECT_NE(RefusedInlineFlag(call), "");
}

// PyTorch's build (which the engine leaves such calls to) writes each include folder as
// -I<folder> into a command line a shell reads: a folder that would be more than one
// argument there is refused by name; a plain one leaves the call to PyTorch, as before.
TEST(InlineUnit, IncludeFoldersHideNoFlagOrCommand) {
  Json call = Call(Json::array({"int f();"}));
  call["extra_include_paths"] = Json::array({"", "/usr/local/cuda/include"});
  EXPECT_EQ(RefusedInlineFlag(call), "");
  EXPECT_NE(InlineUnitFor(call).error().find("left to PyTorch"), std::string::npos);
  call["extra_include_paths"] = Json::array({"/tmp -wrapper /bin/sh,-c,id"});
  EXPECT_EQ(RefusedInlineFlag(call), "extra_include_paths: folder '/tmp -wrapper /bin/sh,-c,id' is not a plain path");
  call["extra_include_paths"] = Json::array({"x;id"});
  EXPECT_EQ(InlineUnitFor(call).error(), "extra_include_paths: folder 'x;id' is not a plain path");
  call["extra_include_paths"] = "x";
  EXPECT_NE(RefusedInlineFlag(call).find("malformed"), std::string::npos);
}

// std::regex matches by recursion (a few hundred bytes of stack a character): no text
// of the candidate's reaches one unbounded, or a long line ended the engine.
TEST(InlineUnit, LongTextIsJudgedWithoutOverflowingTheStack) {
  const std::string a(1 << 20, 'a'), blanks(1 << 20, ' ');
  const Json cuda = Json::array({"__global__ void k() {}"});
  Json call = Call(Json::array({"int f();"}));
  call["functions"] = Json::array({Json::array({a, "f"})});
  EXPECT_FALSE(InlineUnitFor(call));
  call = Call(Json::array({"#include <" + a + ">\nint f();"}), cuda);
  EXPECT_EQ(IncludeLines("#include <" + a + ">"), std::vector<std::string>{});
  EXPECT_FALSE(DeclaresOnly("#include <" + a + ">\nint f();"));
  EXPECT_FALSE(DeclaresOnly("#pragma once" + blanks));
  call = Call(Json::array({"int f();\nPYBIND11_MODULE" + blanks + "(TORCH_EXTENSION_NAME, m) { m.def(\"f\", &f); }"}),
              cuda);
  call["functions"] = nullptr;
  EXPECT_FALSE(InlineUnitFor(call));
}

// The name, which PyTorch's build writes as -DTORCH_EXTENSION_NAME=<name>, is checked
// when the worker noted it (records of older workers have none).
TEST(InlineUnit, TheNameHidesNoCommand) {
  Json call = Call(Json::array({"int f();"}));
  EXPECT_EQ(RefusedInlineFlag(call), "");
  call["name"] = "relu_ext";
  EXPECT_EQ(RefusedInlineFlag(call), "");
  EXPECT_TRUE(InlineUnitFor(call));
  call["name"] = "x;touch y #";
  EXPECT_EQ(RefusedInlineFlag(call), "name 'x;touch y #' is not plain");
  EXPECT_FALSE(InlineUnitFor(call));
  call["name"] = 7;
  EXPECT_NE(RefusedInlineFlag(call).find("malformed"), std::string::npos);
}

// cpp_sources that repeat the definition's default argument, as models write them:
// the unit holds the definition once, the declaring text only by its includes.
TEST(InlineUnit, ADeclarationWithDefaultArgumentsIsNotRepeated) {
  Json call = Call(Json::array({"#include <vector>\n/*\n#include <gone.h>\n*/\n"
                                 "torch::Tensor f(torch::Tensor x, float eps = 1e-5f);"}),
                   Json::array({"torch::Tensor f(torch::Tensor x, float eps = 1e-5f) { return x; }"}));
  auto unit = InlineUnitFor(call);
  ASSERT_TRUE(unit) << unit.error();
  EXPECT_NE(unit->source.find("#include <vector>"), std::string::npos);
  EXPECT_EQ(unit->source.find("gone.h"), std::string::npos);  // commented out
  EXPECT_EQ(unit->source.find("eps = 1e-5f);"), std::string::npos);
  EXPECT_LT(unit->source.find("{ return x; }"), unit->source.find("PYBIND11_MODULE"));
}

TEST(InlineUnit, DeclaresOnly) {
  EXPECT_TRUE(DeclaresOnly("torch::Tensor f(torch::Tensor x);\n#include <vector>\n#pragma once\n"));
  EXPECT_TRUE(DeclaresOnly("// a comment with { braces }\n/* and } */ int f(const char* s = \"{\");"));
  EXPECT_TRUE(DeclaresOnly("#include \"local.h\"\nint f();"));
  EXPECT_FALSE(DeclaresOnly("int f() { return 1; }"));
  EXPECT_FALSE(DeclaresOnly("#define F 1\nint f();"));
  EXPECT_FALSE(DeclaresOnly("  #  if 1\nint f();\n#endif"));
  EXPECT_FALSE(DeclaresOnly("std::vector<int> v = {1};"));
  EXPECT_FALSE(DeclaresOnly("const char* s = R\"(x)\"; int f();"));
}

}  // namespace
}  // namespace kvault
