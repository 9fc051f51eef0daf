#include "cli/flag_hint.h"

#include <gtest/gtest.h>

namespace kvault::cli {
namespace {

struct Commands {
  CLI::App app{"kvault"};
  std::string suite, candidates, vault;
  int port = 0;
  Commands() {
    auto* eval = app.add_subcommand("eval");
    eval->add_option("--suite", suite)->required();
    eval->add_option("--candidates", candidates)->required();
    app.add_subcommand("serve")->add_option("--port", port);
    auto* corpus = app.add_subcommand("corpus");
    corpus->add_option("--vault", vault);
    corpus->add_subcommand("export")->add_option("--output,-o", suite);
  }
  std::string Hint(std::vector<const char*> argv) {
    argv.insert(argv.begin(), "kvault");
    return UnknownFlagHint(app, static_cast<int>(argv.size()), argv.data());
  }
};

TEST(FlagHint, NamesTheUnknownFlagAndTheCloseOne) {
  Commands c;
  EXPECT_EQ(c.Hint({"eval", "--suite", "s", "--candiates", "c"}),
            "unknown flag --candiates of kvault eval (did you mean --candidates?)");
  EXPECT_EQ(c.Hint({"serve", "--prot=8471"}), "unknown flag --prot of kvault serve (did you mean --port?)");
  EXPECT_EQ(c.Hint({"serve", "--verbose"}), "unknown flag --verbose of kvault serve");
  EXPECT_EQ(c.Hint({"corpus", "export", "--outptu", "x"}),
            "unknown flag --outptu of kvault corpus export (did you mean --output?)");
}

TEST(FlagHint, KnownFlagsAndValuesSayNothing) {
  Commands c;
  EXPECT_EQ(c.Hint({"eval", "--suite", "s", "--candidates", "c"}), "");
  EXPECT_EQ(c.Hint({"corpus", "export", "--vault", "v", "-o", "x"}), "");  // a flag of the parent
  EXPECT_EQ(c.Hint({"serve", "--port", "8471", "--", "--anything"}), "");
  EXPECT_EQ(c.Hint({"eval", "--suite", "-x"}), "");
}

}  // namespace
}  // namespace kvault::cli
