// The committed prompt files load and render for every mode and format.
#include "agent/prompt_library.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "agent/template.h"

namespace kvault::agent {
namespace {

std::string Root() {
  const char* r = std::getenv("KVAULT_SOURCE_ROOT");
  return std::string(r ? r : ".") + "/prompts";
}

TemplateValues AllValues() {
  TemplateValues v;
  for (const std::string& n : kPlaceholders) v[n] = "<" + n + ">";
  return v;
}

TEST(PromptLibrary, EveryModeAndFormatLoadsAndRenders) {
  struct Combo { const char *mode, *format, *lang, *hw; };
  for (const Combo& c : {Combo{"torch2kernel", "extension", "cpp", "cpu"},
                         Combo{"torch2kernel", "extension", "cuda", "h200"},
                         Combo{"torch2kernel", "extension", "hip", "mi300x"},
                         Combo{"kernel2kernel", "extension", "hip", "mi355x"},
                         Combo{"modu2func", "functional", "python", "cpu"},
                         Combo{"torch2kernel", "triton", "python", "cpu"},
                         Combo{"torch2kernel", "triton", "python", "h200"},
                         Combo{"torch2kernel", "native", "cpp", "cpu"},
                         Combo{"torch2kernel", "native", "cuda", "h200"},
                         Combo{"torch2kernel", "native", "hip", "mi300x"}}) {
    auto set = LoadPromptSet({Root(), "v1", c.mode, c.format, c.lang, c.hw});
    ASSERT_TRUE(set) << set.error();
    EXPECT_EQ(set->version.substr(0, 3), "v1-");
    EXPECT_EQ(set->version.size(), 15u);
    EXPECT_FALSE(set->format.contract.empty());
    for (const std::string* t : {&set->generate, &set->optimize, &set->reflect}) {
      auto text = RenderTemplate(*t, AllValues());
      ASSERT_TRUE(text) << text.error();
      EXPECT_NE(text->find("task: <task_name>"), std::string::npos) << c.mode;
      EXPECT_NE(text->find("role: "), std::string::npos) << c.mode;
    }
  }
}

TEST(PromptLibrary, VersionHashFollowsTheFilesUsed) {
  auto cpp = LoadPromptSet({Root(), "v1", "torch2kernel", "extension", "cpp", "cpu"});
  auto hip = LoadPromptSet({Root(), "v1", "torch2kernel", "extension", "hip", "cpu"});
  ASSERT_TRUE(cpp && hip);
  EXPECT_NE(cpp->version, hip->version);
  EXPECT_EQ(hip->format.file_extension, ".hip");
}

// Every format file is named <format>-<lang>.md, as LoadPromptSet looks it up, and
// loads through it; its extension is one the engine detects candidates by.
TEST(PromptLibrary, EveryFormatFileFollowsTheNamingRule) {
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(Root() + "/v1/formats")) {
    const std::string file = entry.path().filename().string();
    ASSERT_EQ(entry.path().extension(), ".md") << file;
    const std::string stem = entry.path().stem().string();
    const size_t dash = stem.rfind('-');
    ASSERT_NE(dash, std::string::npos) << file << " is not <format>-<lang>.md";
    const std::string format = stem.substr(0, dash), lang = stem.substr(dash + 1);
    const std::string mode = format == "functional" ? "modu2func" : "torch2kernel";
    auto set = LoadPromptSet({Root(), "v1", mode, format, lang, "cpu"});
    ASSERT_TRUE(set) << file << ": " << set.error();
    EXPECT_EQ(set->format.name, stem);
    const std::string ext = set->format.file_extension;
    EXPECT_TRUE(ext == ".cpp" || ext == ".cu" || ext == ".hip" || ext == ".py") << file << ": " << ext;
    ++seen;
  }
  EXPECT_GE(seen, 8);
}

TEST(PromptLibrary, TritonContractAndHardwareReachTheSystemPrompt) {
  auto set = LoadPromptSet({Root(), "v1", "torch2kernel", "triton", "python", "h200"});
  ASSERT_TRUE(set) << set.error();
  EXPECT_EQ(set->format.file_extension, ".py");
  EXPECT_EQ(set->format.fence, "python");
  EXPECT_NE(set->format.contract.find("@triton.jit"), std::string::npos);
  TemplateValues v = AllValues();
  v["hardware"] = set->hardware;
  v["format_contract"] = set->format.contract;
  auto system = RenderTemplate(set->system, v);
  ASSERT_TRUE(system) << system.error();
  EXPECT_NE(system->find(set->hardware), std::string::npos);
  EXPECT_NE(system->find(set->format.contract), std::string::npos);
}

TEST(PromptLibrary, MissingFilesAndBadNamesAreClearErrors) {
  auto no_lang = LoadPromptSet({Root(), "v1", "torch2kernel", "extension", "fortran", "cpu"});
  ASSERT_FALSE(no_lang);
  EXPECT_NE(no_lang.error().find("--lang fortran"), std::string::npos) << no_lang.error();
  EXPECT_FALSE(LoadPromptSet({Root(), "v1", "../v1", "extension", "cpp", "cpu"}));
  EXPECT_FALSE(LoadPromptSet({Root(), "v9", "torch2kernel", "extension", "cpp", "cpu"}));
}

TEST(ParseFormatFile, NeedsHeaderKeys) {
  EXPECT_TRUE(ParseFormatFile("x", "file_extension: .cu\nfence: cuda\n---\nbody"));
  EXPECT_FALSE(ParseFormatFile("x", "fence: cuda\n---\nbody"));
  EXPECT_FALSE(ParseFormatFile("x", "file_extension: .cu\nfence: cuda\nbody"));
  EXPECT_FALSE(ParseFormatFile("x", "file_extension: .cu\ncolor: red\n---\n"));
}

}  // namespace
}  // namespace kvault::agent
