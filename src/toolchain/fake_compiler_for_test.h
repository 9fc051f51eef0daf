#pragma once
// Test-only: fake compiler scripts for toolchain tests. Header-only.
//
//   FakeCompiler cc(FakeCompiler::kWritesOutput);
//   setenv("KVAULT_CXX", cc.path().c_str(), 1);
//   ... BuildExtension(...) ...
//   EXPECT_EQ(cc.Calls(), 1);
#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <string>

#include "util/files.h"

namespace kvault::testing {

class FakeCompiler {
 public:
  enum Behaviour {
    kWritesOutput,  // prints a warning, writes the file after -o, exits 0
    kSlowWrites,    // the same after sleeping 0.5 s
    kRejects,       // prints a compiler-style error, exits 1
    kFloods,        // prints 100,000 bytes, exits 1
    kHangs,         // sleeps 60 s
    kWritesNothing,  // exits 0 without writing the output
    kRejectsPch,     // as kWritesOutput, plus g++'s -Winvalid-pch warning when given -include
    kNoTorchCuda,    // the error of a CPU-only PyTorch's CUDA headers, exits 1
    kUnknownTarget   // clang's refusal of --offload-arch=gfx942, and a source's #error alike; exits 1
  };

  // `version_line` is what `--version` prints. `refuse_args_with`: any invocation
  // whose arguments contain this text exits 1 (e.g. "gfx942" for a hipcc without it).
  explicit FakeCompiler(Behaviour b, std::string version_line = "fakecc (KernelVault test) 9.9.9",
                        std::string refuse_args_with = "")
      : dir_(TempDir::Create("", "kvault-fakecc").value()) {
    std::string body;
    switch (b) {
      case kWritesOutput: body = "echo 'fake.cc:1:1: warning: fake warning'\nwrite_out \"$@\"\n"; break;
      case kSlowWrites: body = "sleep 0.5\nwrite_out \"$@\"\n"; break;
      case kRejects: body = "echo \"relu.cpp:3:5: error: expected ';' before '}' token\"\nexit 1\n"; break;
      case kFloods: body = "head -c 100000 /dev/zero | tr '\\0' 'e'\nexit 1\n"; break;
      case kHangs: body = "sleep 60\n"; break;
      case kWritesNothing: body = "exit 0\n"; break;
      case kNoTorchCuda:
        body = "echo \"/usr/include/c10/cuda/CUDAMacros.h:8:10: fatal error: "
               "c10/cuda/impl/cuda_cmake_macros.h: No such file or directory\"\nexit 1\n";
        break;
      case kUnknownTarget:
        body = "echo \"relu.hip:1:2: error: invalid target ID 'gfx90a'\"\n"
               "case \"$*\" in *gfx942*) echo \"clang: error: invalid target ID 'gfx942'; format is a "
               "processor name\";; esac\nexit 1\n";
        break;
      case kRejectsPch:
        body = "case \"$*\" in *' -include '*) echo \"cc1plus: warning: x.h.gch: not used because"
               " \\`__OPTIMIZE__' not defined [-Winvalid-pch]\";; esac\nwrite_out \"$@\"\n";
        break;
    }
    std::ostringstream s;
    s << "#!/bin/bash\n"
      << "if [ \"$1\" = --version ]; then echo '" << version_line << "'; exit 0; fi\n";
    if (!refuse_args_with.empty())
      s << "case \"$*\" in *" << refuse_args_with << "*) echo 'invalid target'; exit 1;; esac\n";
    s << "echo \"$*\" >> '" << dir_.Join("calls.log") << "'\n"
      << "write_out() { local out= prev=; for a in \"$@\"; do [ \"$prev\" = -o ] && out=\"$a\"; prev=\"$a\"; done;"
      << " if [ -n \"$out\" ]; then printf 'object built by fakecc\\n' > \"$out\"; fi; }\n"
      << body;
    path_ = dir_.Join("fakecc");
    std::ofstream(path_) << s.str();
    ::chmod(path_.c_str(), 0755);
  }

  const std::string& path() const { return path_; }
  const std::string& dir() const { return dir_.path(); }

  // How many compiles ran (`--version` calls not counted).
  int Calls() const {
    std::ifstream in(dir_.Join("calls.log"));
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }
  // Every compile's arguments, one line each.
  std::string Log() const {
    std::ifstream in(dir_.Join("calls.log"));
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  TempDir dir_;
  std::string path_;
};

}  // namespace kvault::testing
