#include "toolchain/flags.h"

#include <algorithm>
#include <regex>

namespace kvault {
namespace {

// The libraries PyTorch extensions link when the worker lists none.
const std::vector<std::string> kDefaultLibraries = {"c10", "torch", "torch_cpu", "torch_python"};

// PyTorch's own extension builds (torch.utils.cpp_extension) compile device code with
// these; candidates written against load()/load_inline() expect them.
const std::vector<std::string> kNvccTorchDefines = {
    "-D__CUDA_NO_HALF_OPERATORS__", "-D__CUDA_NO_HALF_CONVERSIONS__",
    "-D__CUDA_NO_BFLOAT16_CONVERSIONS__", "-D__CUDA_NO_HALF2_OPERATORS__"};
// For HIP sources on NVIDIA: the CUDA spelling of ROCm's __HIP_NO_HALF_* defines.
// bf16 conversions stay on: hip_bfloat16 maps to __nv_bfloat16 and converts to float.
const std::vector<std::string> kNvccHipDefines = {
    "-D__CUDA_NO_HALF_OPERATORS__", "-D__CUDA_NO_HALF_CONVERSIONS__",
    "-D__CUDA_NO_HALF2_OPERATORS__"};
const std::vector<std::string> kHipccTorchDefines = {
    "-D__HIP_PLATFORM_AMD__=1", "-DUSE_ROCM=1", "-DCUDA_HAS_FP16=1",
    "-D__HIP_NO_HALF_OPERATORS__=1", "-D__HIP_NO_HALF_CONVERSIONS__=1"};

void Append(std::vector<std::string>& out, const std::vector<std::string>& more) {
  out.insert(out.end(), more.begin(), more.end());
}

std::vector<std::string> Libraries(const TorchBuildInfo& torch, Backend backend) {
  std::vector<std::string> libs = torch.libraries.empty() ? kDefaultLibraries : torch.libraries;
  auto add = [&](const std::string& l) {
    if (std::find(libs.begin(), libs.end(), l) == libs.end()) libs.push_back(l);
  };
  if (backend == Backend::kCuda) {
    add("c10_cuda");
    add("torch_cuda");
  } else if (backend == Backend::kHip) {
    add("c10_hip");
    add("torch_hip");
    add("amdhip64");
  }
  return libs;
}

// -D and -isystem flags every extension build shares. `module` "" leaves out
// -DTORCH_EXTENSION_NAME (the precompiled header's build).
std::vector<std::string> TorchCompileFlags(const TorchBuildInfo& torch, const std::string& module) {
  std::vector<std::string> f = {std::string("-D_GLIBCXX_USE_CXX11_ABI=") + (torch.cxx11_abi ? "1" : "0"),
                                "-DTORCH_API_INCLUDE_EXTENSION_H"};
  if (!module.empty()) f.push_back("-DTORCH_EXTENSION_NAME=" + module);
  for (const std::string& dir : torch.include_paths) Append(f, {"-isystem", dir});
  if (!torch.python_include.empty()) Append(f, {"-isystem", torch.python_include});
  return f;
}

std::vector<std::string> LinkFlags(const TorchBuildInfo& torch, Backend backend, Tool tool) {
  std::vector<std::string> f;
  for (const std::string& dir : torch.library_paths) {
    f.push_back("-L" + dir);
    if (tool == Tool::kNvcc)
      Append(f, {"-Xlinker", "-rpath," + dir});
    else
      f.push_back("-Wl,-rpath," + dir);
  }
  for (const std::string& lib : Libraries(torch, backend)) f.push_back("-l" + lib);
  return f;
}

// The C++ standard of extension builds: the one PyTorch's own extension builds use
// (its headers may require it: C++20 since some 2.x releases).
std::string TorchStd(const TorchBuildInfo& torch) { return "-std=" + torch.cxx_standard; }

// g++'s own flags, shared by candidate and precompiled-header compiles.
std::vector<std::string> CxxFlags(const TorchBuildInfo& torch) {
  return {"-O2", TorchStd(torch), "-fPIC"};
}

// A native source: a plain shared library, nothing of PyTorch's.
CompileCommand NativeCommand(const BuildRequest& req, const CompilerSetup& setup,
                             const CommandSlots& slots, Tool tool, const std::vector<std::string>& arch) {
  CompileCommand cmd;
  std::vector<std::string>& a = cmd.argv;
  a.push_back(setup.tool_path);
  switch (tool) {
    case Tool::kCxx:
      Append(a, {"-O3", "-std=c++17", "-fPIC"});
      break;
    case Tool::kNvcc:
      Append(a, {"-O3", "-std=c++17", "-Xcompiler", "-fPIC", "--expt-relaxed-constexpr"});
      break;
    case Tool::kHipcc:
      Append(a, {"-O3", "-std=c++17", "-fPIC"});
      break;
  }
  Append(a, arch);
  Append(a, {"-I", setup.native_include_dir});
  if (tool == Tool::kNvcc && req.language == Language::kHip) {
    Append(a, {"-I", setup.include_hip_dir});
    cmd.variant = "native, hip-on-nvidia";
  } else {
    cmd.variant = "native";
  }
  Append(a, req.extra_flags);
  if (tool == Tool::kNvcc && req.language == Language::kHip) Append(a, {"-x", "cu"});
  if (tool == Tool::kHipcc) Append(a, {"-x", "hip"});
  a.push_back(slots.source);
  if (req.compile_only) {
    Append(a, {"-c", "-o", slots.output});
  } else {
    Append(a, {"-shared", "-o", slots.output});
    if (tool == Tool::kNvcc) Append(a, {"-cudart", "shared"});
  }
  return cmd;
}

}  // namespace

Result<Tool> ToolFor(Language language, Backend backend) {
  if (language == Language::kCpp && backend == Backend::kCpu) return Tool::kCxx;
  if (language == Language::kCuda && backend == Backend::kCuda) return Tool::kNvcc;
  if (language == Language::kHip && backend == Backend::kCuda) return Tool::kNvcc;
  if (language == Language::kHip && backend == Backend::kHip) return Tool::kHipcc;
  return Error{"cannot build a " + std::string(ToString(language)) + " source for the " +
               std::string(ToString(backend)) + " backend"};
}

Result<std::vector<std::string>> ArchFlags(Tool tool, const std::string& arch) {
  if (arch.empty() || tool == Tool::kCxx) return std::vector<std::string>{};
  if (tool == Tool::kNvcc) {
    static const std::regex sm("sm_([0-9]+[a-z]?)");
    std::smatch m;
    if (!std::regex_match(arch, m, sm))
      return Error{"nvcc target '" + arch + "' is not of the form sm_90"};
    std::string v = m[1];
    return std::vector<std::string>{"-gencode",
                                    "arch=compute_" + v + ",code=[sm_" + v + ",compute_" + v + "]"};
  }
  static const std::regex gfx("gfx[0-9a-f]+(:[a-z0-9_]+[+-])*");
  if (!std::regex_match(arch, gfx))
    return Error{"hipcc target '" + arch + "' is not of the form gfx942 or gfx90a:xnack-"};
  return std::vector<std::string>{"--offload-arch=" + arch};
}

Result<CompileCommand> AssembleCommand(const BuildRequest& req, const CompilerSetup& setup,
                                       const CommandSlots& slots) {
  auto tool = ToolFor(req.language, req.backend);
  if (!tool) return Error{tool.error()};
  if (*tool != setup.tool)
    return Error{"internal: setup is for " + ToolName(setup.tool) + ", request needs " + ToolName(*tool)};
  auto arch = ArchFlags(*tool, req.arch);
  if (!arch) return Error{arch.error()};
  if (req.kind == SourceKind::kNative) {
    if (!slots.pch_header.empty()) return Error{"internal: no precompiled header for native sources"};
    return NativeCommand(req, setup, slots, *tool, *arch);
  }
  bool hip_shims = *tool == Tool::kHipcc && !setup.torch_has_hip;
  if (hip_shims && !req.compile_only)
    return Error{"the worker's PyTorch has no HIP support: HIP sources can only be compile-checked "
                 "(compile_only) on this machine"};

  CompileCommand cmd;
  std::vector<std::string>& a = cmd.argv;
  a.push_back(setup.tool_path);
  const bool ext = !slots.ext_include_dir.empty() || !slots.link_object.empty() || !slots.ext_defines.empty();
  if (ext && (*tool == Tool::kHipcc || req.language == Language::kHip))
    return Error{"internal: the lite extension build is for g++ and nvcc on C++ and CUDA sources"};
  auto ext_flags = [&] {
    if (!slots.ext_include_dir.empty()) Append(a, {"-I", slots.ext_include_dir});
    Append(a, slots.ext_defines);
  };
  switch (*tool) {
    case Tool::kCxx:
      Append(a, CxxFlags(req.torch));
      ext_flags();
      break;
    case Tool::kNvcc:
      Append(a, {"-O3", TorchStd(req.torch), "-Xcompiler", "-fPIC", "--expt-relaxed-constexpr"});
      ext_flags();
      Append(a, *arch);
      Append(a, req.language == Language::kHip ? kNvccHipDefines : kNvccTorchDefines);
      if (req.language == Language::kHip) {
        Append(a, {"-I", setup.include_hip_dir});
        cmd.variant = "hip-on-nvidia";
      }
      break;
    case Tool::kHipcc:
      Append(a, {"-O3", TorchStd(req.torch), "-fPIC"});
      Append(a, *arch);
      Append(a, kHipccTorchDefines);
      if (hip_shims) {
        Append(a, {"-I", setup.include_hip_dir + "/compile_only"});
        cmd.variant = "compile-only shims";
      }
      break;
  }
  Append(a, TorchCompileFlags(req.torch, slots.module_name));
  Append(a, req.extra_flags);
  if (*tool == Tool::kNvcc && req.language == Language::kHip) Append(a, {"-x", "cu"});
  if (*tool == Tool::kHipcc) Append(a, {"-x", "hip"});
  if (!slots.pch_header.empty()) {
    if (*tool != Tool::kCxx) return Error{"internal: a precompiled header is for g++ only"};
    Append(a, {"-Winvalid-pch", "-include", slots.pch_header});
  }
  a.push_back(slots.source);
  if (req.compile_only) {
    if (!slots.link_object.empty()) return Error{"internal: nothing is linked in a compile-only build"};
    Append(a, {"-c", "-o", slots.output});
    return cmd;
  }
  if (!slots.link_object.empty()) a.push_back(slots.link_object);
  Append(a, {"-shared", "-o", slots.output});
  if (*tool == Tool::kNvcc) Append(a, {"-cudart", "shared"});
  Append(a, LinkFlags(req.torch, req.backend, *tool));
  Append(a, req.extra_link_flags);
  return cmd;
}

Result<CompileCommand> AssemblePchCommand(const BuildRequest& req, const CompilerSetup& setup,
                                          const std::string& header, const std::string& output) {
  auto tool = ToolFor(req.language, req.backend);
  if (!tool) return Error{tool.error()};
  if (*tool != Tool::kCxx || setup.tool != Tool::kCxx)
    return Error{"precompiled headers are for g++ (cpp on cpu) only"};
  CompileCommand cmd;
  std::vector<std::string>& a = cmd.argv;
  a.push_back(setup.tool_path);
  Append(a, CxxFlags(req.torch));
  Append(a, TorchCompileFlags(req.torch, /*module=*/""));
  Append(a, req.extra_flags);
  Append(a, {"-x", "c++-header", header, "-o", output});
  return cmd;
}

bool IsUnitLocalFlag(const std::string& flag) {
  static const std::regex kUnitLocal(
      R"(-O[0-3sz]?|-Ofast|-Og|-g[0-9]?|-ggdb[0-3]?|-w|-W[A-Za-z0-9=_+-]*|-std=(c|gnu)\+\+[0-9a-z]+|-fPIC|-fpic|)"
      R"(-pipe|-march=[A-Za-z0-9_.+-]+|-mtune=[A-Za-z0-9_.+-]+|-ffast-math|-funroll-loops|-fopenmp-simd|)"
      R"(-m(no-)?(avx[0-9a-z_]*|fma|f16c|sse[0-9a-z_.]*|ssse3|bmi2?|popcnt|lzcnt|)"
      R"(prefer-vector-width=[0-9]+))");
  return std::regex_match(flag, kUnitLocal);
}

Result<CompileCommand> AssembleLiteObjectCommand(const BuildRequest& req, const std::string& cxx_path,
                                                 const std::string& cuda_include_dir, const std::string& source,
                                                 const std::string& output) {
  auto tool = ToolFor(req.language, req.backend);
  if (!tool) return Error{tool.error()};
  if (req.language == Language::kHip || *tool == Tool::kHipcc)
    return Error{"the lite extension build is for g++ and nvcc on C++ and CUDA sources"};
  CompileCommand cmd;
  std::vector<std::string>& a = cmd.argv;
  a.push_back(cxx_path);
  Append(a, CxxFlags(req.torch));
  Append(a, TorchCompileFlags(req.torch, /*module=*/""));
  if (*tool == Tool::kNvcc) {
    Append(a, {"-DKVAULT_LITE_CUDA=1", "-isystem", cuda_include_dir});
  } else {
    for (const std::string& flag : req.extra_flags)
      if (!IsUnitLocalFlag(flag)) a.push_back(flag);
  }
  Append(a, {"-c", source, "-o", output});
  return cmd;
}

std::string ShellQuote(const std::vector<std::string>& argv) {
  static const std::string kSafe =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%";
  std::string out;
  for (const std::string& arg : argv) {
    if (!out.empty()) out += ' ';
    if (!arg.empty() && arg.find_first_not_of(kSafe) == std::string::npos) {
      out += arg;
      continue;
    }
    out += '\'';
    for (char c : arg) {
      if (c == '\'')
        out += "'\\''";
      else
        out += c;
    }
    out += '\'';
  }
  return out;
}

}  // namespace kvault
