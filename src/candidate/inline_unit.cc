#include "candidate/inline_unit.h"

#include <cctype>
#include <optional>
#include <regex>

#include "candidate/source_language.h"
#include "toolchain/candidate_flags.h"
#include "toolchain/flags.h"
#include "util/strings.h"

namespace kvault {
namespace {

// The longest line or name a std::regex is run on (util/strings.h): longer text is no
// include line, no #pragma once, no identifier (nothing honest comes near it).
constexpr size_t kMostMatched = kMostRegexChars;

bool Matches(const std::string& s, const std::regex& re) {
  return s.size() <= kMostMatched && std::regex_match(s, re);
}

Result<std::vector<std::string>> Strings(const Json& call, const char* name) {
  std::vector<std::string> out;
  const Json* v = call.contains(name) ? &call[name] : nullptr;
  if (!v || !v->is_array()) return Error{std::string("malformed call: '") + name + "' is not a list"};
  for (const Json& s : *v) {
    if (!s.is_string()) return Error{std::string("malformed call: '") + name + "' holds a non-string"};
    out.push_back(s.get<std::string>());
  }
  return out;
}

// PyTorch's generated PYBIND11_MODULE for `functions` ([[name, docstring], ...]), one
// line each, as load_inline writes them. A name must be an identifier (the docstring
// a plain string) or the call is not built.
Result<std::vector<std::string>> Bindings(const Json& functions, bool error_handling) {
  std::vector<std::string> lines;
  if (functions.is_null()) return lines;  // the sources bind themselves
  if (!functions.is_array()) return Error{"malformed call: 'functions' is not a list"};
  static const std::regex kIdentifier("[A-Za-z_][A-Za-z0-9_]*");
  lines.push_back("PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {");
  for (const Json& f : functions) {
    if (!f.is_array() || f.size() != 2 || !f[0].is_string() || !f[1].is_string())
      return Error{"malformed call: a 'functions' entry is not [name, docstring]"};
    const std::string name = f[0].get<std::string>(), doc = f[1].get<std::string>();
    if (!Matches(name, kIdentifier)) return Error{"function name '" + Truncate(name, 80) + "' is not an identifier"};
    if (doc.find_first_of("\"\\\n") != std::string::npos)
      return Error{"the docstring of '" + name + "' needs escaping in C++"};
    lines.push_back(error_handling ? "m.def(\"" + name + "\", torch::wrap_pybind_function(" + name + "), \"" + doc + "\");"
                                   : "m.def(\"" + name + "\", " + name + ", \"" + doc + "\");");
  }
  lines.push_back("}");
  return lines;
}

// The call's flags, each list through its compiler's allow-list (CandidateCompileFlags,
// CandidateLinkFlags), and its include folders and name, which PyTorch's build makes
// flags (CandidateIncludePaths, CandidateExtensionName); Error "extra_cuda_cflags: flag
// '...' is not allowed for nvcc".
struct CheckedFlags {
  std::vector<std::string> cflags, cuda_cflags, ldflags;
};
Result<CheckedFlags> CheckFlags(const Json& call) {
  auto cflags = Strings(call, "extra_cflags");
  auto cuda_cflags = Strings(call, "extra_cuda_cflags");
  auto ldflags = Strings(call, "extra_ldflags");
  auto includes = Strings(call, "extra_include_paths");
  for (const auto* r : {&cflags, &cuda_cflags, &ldflags, &includes})
    if (!*r) return Error{r->error()};
  if (auto folders = CandidateIncludePaths(*includes); !folders) return Error{"extra_include_paths: " + folders.error()};
  if (call.contains("name")) {  // noted beside the digest by workers since it is checked
    if (!call["name"].is_string()) return Error{"malformed call: 'name' is not a string"};
    if (Status s = CandidateExtensionName(call["name"].get<std::string>()); !s) return Error{s.error()};
  }
  CheckedFlags out;
  auto host = CandidateCompileFlags(Tool::kCxx, *cflags);
  if (!host) return Error{"extra_cflags: " + host.error()};
  auto device = CandidateCompileFlags(Tool::kNvcc, *cuda_cflags);
  if (!device) return Error{"extra_cuda_cflags: " + device.error()};
  auto link = CandidateLinkFlags(*ldflags);
  if (!link) return Error{"extra_ldflags: " + link.error()};
  return CheckedFlags{std::move(*host), std::move(*device), std::move(*link)};
}

// True when `line` is an #include directive.
bool IsIncludeLine(const std::string& line) {
  static const std::regex kInclude(R"(\s*#\s*include\s*[<"][^>"]*[>"]\s*)");
  return Matches(line, kInclude);
}

// cpp_sources that bind by hand beside cuda_sources, as models write them without
// functions=: declarations and one PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { ... }
// block of code only (no directive, no raw string). `module` is the block's text,
// `rest` the source without it (which must then only declare).
struct ModuleSplit {
  std::string rest, module;
};
std::optional<ModuleSplit> SplitModule(const std::string& cpp) {
  static const std::regex kModule(R"(\bPYBIND11_MODULE\s*\(\s*TORCH_EXTENSION_NAME\s*,\s*[A-Za-z_]\w*\s*\)\s*\{)");
  const std::string code = CodeOnly(cpp);  // the same length: positions are the source's
  // The first PYBIND11_MODULE whose opening (matched within kMostMatched characters) is
  // the block's; a std::regex never runs over the whole source.
  size_t begin = std::string::npos, opening = 0;
  for (size_t at = code.find("PYBIND11_MODULE"); at != std::string::npos && begin == std::string::npos;
       at = code.find("PYBIND11_MODULE", at + 1)) {
    if (at > 0 && (std::isalnum(static_cast<unsigned char>(code[at - 1])) || code[at - 1] == '_')) continue;
    const std::string window = code.substr(at, kMostMatched);
    std::smatch m;
    if (std::regex_search(window, m, kModule, std::regex_constants::match_continuous))
      begin = at, opening = static_cast<size_t>(m.length(0));
  }
  if (begin == std::string::npos) return std::nullopt;
  size_t end = std::string::npos;
  int depth = 0;
  for (size_t i = begin + opening - 1; i < code.size() && end == std::string::npos; ++i) {
    if (code[i] == '{') ++depth;
    if (code[i] == '}' && --depth == 0) end = i + 1;
  }
  if (end == std::string::npos || code.find("PYBIND11_MODULE", end) != std::string::npos) return std::nullopt;
  const std::string block = cpp.substr(begin, end - begin);
  for (const std::string& line : Split(code.substr(begin, end - begin), '\n')) {
    const size_t at = line.find_first_not_of(" \t\r");
    if (at != std::string::npos && line[at] == '#') return std::nullopt;
  }
  if (block.find("R\"") != std::string::npos) return std::nullopt;
  return ModuleSplit{cpp.substr(0, begin) + cpp.substr(end), block};
}

}  // namespace

bool CallBuildsCuda(const Json& call) {
  if (!call.is_object()) return false;
  // The worker notes the sources as a list (a string becomes one); PyTorch builds CUDA
  // for any non-empty list, even of empty texts.
  if (call.contains("cuda_sources") && call["cuda_sources"].is_array() && !call["cuda_sources"].empty()) return true;
  return call.contains("with_cuda") && call["with_cuda"] == Json(true);
}

std::string RefusedInlineFlag(const Json& call) {
  if (!call.is_object()) return "";
  auto flags = CheckFlags(call);
  return flags ? "" : flags.error();
}

std::vector<std::string> IncludeLines(const std::string& cpp) {
  std::vector<std::string> out;
  // CodeOnly keeps the lines, so a line whose code starts with '#' is a directive and
  // the original line says which (an #include inside a comment is none).
  const std::vector<std::string> code_lines = Split(CodeOnly(cpp), '\n'), lines = Split(cpp, '\n');
  for (size_t i = 0; i < code_lines.size(); ++i) {
    const size_t at = code_lines[i].find_first_not_of(" \t\r");
    if (at != std::string::npos && code_lines[i][at] == '#' && IsIncludeLine(lines[i])) out.push_back(lines[i]);
  }
  return out;
}

bool DeclaresOnly(const std::string& cpp) {
  const std::string code = CodeOnly(cpp);
  if (code.find_first_of("{}") != std::string::npos) return false;
  // CodeOnly keeps the lines, so the original line says what a directive is.
  static const std::regex kPragmaOnce(R"(\s*#\s*pragma\s+once\s*)");
  const std::vector<std::string> code_lines = Split(code, '\n'), lines = Split(cpp, '\n');
  for (size_t i = 0; i < code_lines.size(); ++i) {
    const size_t at = code_lines[i].find_first_not_of(" \t\r");
    if (at != std::string::npos && code_lines[i][at] == '#' && !IsIncludeLine(lines[i]) &&
        !Matches(lines[i], kPragmaOnce))
      return false;
  }
  // A raw string literal would hide braces from CodeOnly's simple scan: not declarations.
  return cpp.find("R\"") == std::string::npos;
}

Result<InlineUnit> InlineUnitFor(const Json& call) {
  if (!call.is_object()) return Error{"malformed call: not an object"};
  InlineUnit unit;
  if (call.contains("digest") && call["digest"].is_string()) unit.digest = call["digest"].get<std::string>();
  static const std::regex kDigest("[0-9a-f]{64}");
  if (!std::regex_match(unit.digest, kDigest)) return Error{"malformed call: no digest"};
  if (call.contains("other") && call["other"].is_object() && !call["other"].empty()) {
    std::string names;
    for (const auto& [name, value] : call["other"].items()) names += (names.empty() ? "" : ", ") + name;
    return Error{"load_inline arguments the engine does not build: " + Truncate(names, 200)};
  }
  auto cpp = Strings(call, "cpp_sources");
  auto cuda = Strings(call, "cuda_sources");
  auto includes = Strings(call, "extra_include_paths");
  for (const auto* r : {&cpp, &cuda, &includes})
    if (!*r) return Error{r->error()};
  auto flags = CheckFlags(call);
  if (!flags) return Error{flags.error()};
  for (const std::string& path : *includes)
    if (!Trim(path).empty()) return Error{"extra_include_paths are left to PyTorch's build"};
  if (call.contains("is_python_module") && call["is_python_module"] != true) return Error{"is_python_module=False is left to PyTorch's build"};
  const Json with_cuda = call.contains("with_cuda") ? call["with_cuda"] : Json();
  if (!with_cuda.is_null() && !with_cuda.is_boolean()) return Error{"malformed call: 'with_cuda'"};
  if (!with_cuda.is_null() && with_cuda.get<bool>() == cuda->empty())
    return Error{"with_cuda contradicts the sources (CUDA headers for a C++ unit, or CUDA sources without them)"};
  const Json handling = call.contains("with_pytorch_error_handling") ? call["with_pytorch_error_handling"] : Json(true);
  if (!handling.is_boolean()) return Error{"malformed call: 'with_pytorch_error_handling'"};
  auto bindings = Bindings(call.contains("functions") ? call["functions"] : Json(), handling.get<bool>());
  if (!bindings) return Error{bindings.error()};

  std::vector<std::string> main_cpp{"#include <torch/extension.h>"};
  main_cpp.insert(main_cpp.end(), cpp->begin(), cpp->end());
  main_cpp.insert(main_cpp.end(), bindings->begin(), bindings->end());
  if (cuda->empty()) {
    unit.language = "cpp";
    unit.source = Join(main_cpp, "\n");
    unit.extra_flags = flags->cflags;
    unit.extra_link_flags = flags->ldflags;
    return unit;
  }
  // A PYBIND11_MODULE of cpp_sources (no functions= to bind) binds what they declare,
  // as the generated bindings do: it follows cuda.cu's text like them.
  std::vector<std::string> modules;
  for (const std::string& s : *cpp) {
    std::string rest = s;
    if (auto split = bindings->empty() ? SplitModule(s) : std::nullopt)
      modules.push_back(split->module), rest = split->rest;
    if (!DeclaresOnly(rest))
      return Error{"cpp_sources define code beside cuda_sources: PyTorch compiles the two apart"};
  }
  if (modules.size() > 1) return Error{"cpp_sources hold more than one PYBIND11_MODULE"};
  // main.cpp holds declarations and the bindings only: its host flags change nothing
  // they mean, but a flag that could (a define, an include path) is PyTorch's to apply.
  for (const std::string& f : flags->cflags)
    if (!IsUnitLocalFlag(f)) return Error{"extra_cflags '" + Truncate(f, 80) + "' beside cuda_sources are left to PyTorch's build"};
  // The bindings follow cuda.cu's text, which defines what they bind; main.cpp's
  // declarations stay out (only its #include lines come first), since a declaration
  // that repeats a definition's default arguments is an error within one unit.
  std::vector<std::string> unit_lines{"#include <torch/extension.h>"};
  for (const std::string& s : *cpp)
    for (const std::string& line : IncludeLines(s)) unit_lines.push_back(line);
  unit_lines.insert(unit_lines.end(), {"#include <torch/types.h>", "#include <cuda.h>", "#include <cuda_runtime.h>"});
  unit_lines.insert(unit_lines.end(), cuda->begin(), cuda->end());
  unit_lines.insert(unit_lines.end(), modules.begin(), modules.end());
  unit_lines.insert(unit_lines.end(), bindings->begin(), bindings->end());
  unit.language = "cuda";
  unit.source = Join(unit_lines, "\n");
  unit.extra_flags = flags->cuda_cflags;
  unit.extra_link_flags = flags->ldflags;
  return unit;
}

}  // namespace kvault
