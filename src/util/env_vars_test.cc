// The environment table against docs/environment.md and against the code that
// names KVAULT_ variables (src/ and python/).
#include "util/env_vars.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "util/files.h"

namespace kvault {
namespace {

namespace fs = std::filesystem;

// KVAULT_ names in the code that are not environment variables: the task file's
// metadata dict, build macros, compile definitions of the lite build, CMake options.
const std::set<std::string> kNotEnvironment = {
    "KVAULT_META",     "KVAULT_VERSION",     "KVAULT_DEFAULT_SOURCE_ROOT", "KVAULT_LITE_CUDA",
    "KVAULT_LITE_HALF", "KVAULT_BUILD_TESTS", "KVAULT_FUZZ"};

// Every KVAULT_[A-Z0-9_]+ token of `text` not preceded by a name character.
std::set<std::string> Tokens(const std::string& text) {
  std::set<std::string> out;
  auto name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = text.find("KVAULT_"); at != std::string::npos; at = text.find("KVAULT_", at + 1)) {
    if (at > 0 && name_char(text[at - 1])) continue;
    size_t end = at + 7;
    while (end < text.size() && (std::isupper(static_cast<unsigned char>(text[end])) ||
                                 std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '_'))
      ++end;
    if (end > at + 7) out.insert(text.substr(at, end - at));
  }
  return out;
}

bool IsTest(const fs::path& p) {
  const std::string s = p.string();
  return s.ends_with("_test.cc") || s.find("/tests/") != std::string::npos ||
         p.filename().string().starts_with("test_");
}

// (file, text) of the product code: src/**/*.{cc,h} and python/**/*.py, tests left out.
std::vector<std::pair<std::string, std::string>> ProductSources() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const char* top : {"src", "python"}) {
    const fs::path root = fs::path(SourceRoot()) / top;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || IsTest(e.path())) continue;
      if (ext != ".cc" && ext != ".h" && ext != ".py") continue;
      auto text = ReadFile(e.path().string());
      if (text) out.emplace_back(fs::relative(e.path(), SourceRoot()).string(), *text);
    }
  }
  return out;
}

TEST(EnvVars, TableIsSortedUniqueAndComplete) {
  std::string last;
  for (const EnvVar& v : kEnvVars) {
    EXPECT_TRUE(v.name.starts_with("KVAULT_")) << v.name;
    EXPECT_LT(last, std::string(v.name)) << "not sorted or repeated: " << v.name;
    EXPECT_FALSE(v.default_value.empty()) << v.name;
    EXPECT_FALSE(v.meaning.empty()) << v.name;
    last = v.name;
  }
  EXPECT_NE(FindEnvVar("KVAULT_PYTHON"), nullptr);
  EXPECT_EQ(FindEnvVar("KVAULT_PYTON"), nullptr);
}

TEST(EnvVars, DocsPageIsMadeFromTheTable) {
  const std::string page = SourceRoot() + "/docs/environment.md";
  auto text = ReadFile(page);
  if (!text || *text != EnvironmentDoc()) {
    const std::string fresh = fs::temp_directory_path().string() + "/kvault-environment.md";
    ASSERT_TRUE(WriteFileAtomic(fresh, EnvironmentDoc()));
    FAIL() << "docs/environment.md differs from util/env_vars.h; the page made from the table is in "
           << fresh << ": cp " << fresh << " " << page;
  }
}

// The code names only variables of the table, and the engine reads them only
// through KvaultEnv (a GetEnv or getenv of a KVAULT_ literal bypasses its check).
TEST(EnvVars, CodeNamesOnlyListedVariables) {
  size_t files = 0;
  for (const auto& [file, text] : ProductSources()) {
    ++files;
    for (const std::string& t : Tokens(text))
      EXPECT_TRUE(FindEnvVar(t) != nullptr || kNotEnvironment.count(t))
          << file << " names " << t << ", which util/env_vars.h does not list";
    if (file.ends_with(".py") || file.starts_with("src/util/env")) continue;
    for (const char* bypass : {"GetEnv(\"KVAULT_", "getenv(\"KVAULT_"})
      EXPECT_EQ(text.find(bypass), std::string::npos) << file << " reads a KVAULT_ variable without KvaultEnv";
  }
  EXPECT_GT(files, 100u);  // the walk found the tree
}

TEST(EnvVars, TokensAreWholeNames) {
  EXPECT_EQ(Tokens("x = os.environ.get('KVAULT_URL') + _KVAULT_TESTS + KVAULT_* + MY_KVAULT_X"),
            (std::set<std::string>{"KVAULT_URL"}));
}

}  // namespace
}  // namespace kvault
