// examples/tutorial.cpp against the reference's transcripts (reference/golden/tutorial, copied to
// tests/data/tutorial): each section in a fresh process (CPU=1) as the golden sNN_*.py scripts, the DEBUG output
// of "Generated Code", and all sections in one process as tutorial_full.py.
// Every section, the autograd ones included, prints byte for byte what the reference prints.
#include <cctype>
#include <string>

#include "golden_run.h"

namespace tg {
namespace {

const std::string kData = TG_TEST_DATA "/tutorial/";

std::string expected(const std::string& name) { return golden::read_file(kData + name); }
std::string tutorial(const std::string& args, const std::string& env = "", bool merge = false) {
  return golden::run(TG_TUTORIAL, args, env, merge);
}

// *** one section per process: stdout is byte for byte the golden's ***

struct Section {
  const char* arg;
  const char* golden;
};
class TutorialSection : public ::testing::TestWithParam<Section> {};

TEST_P(TutorialSection, MatchesGolden) { EXPECT_EQ(tutorial(GetParam().arg), expected(GetParam().golden)); }
INSTANTIATE_TEST_SUITE_P(Tutorial, TutorialSection,
                         ::testing::Values(Section{"s01", "s01_tensor.out"}, Section{"s02", "s02_devices.out"},
                                           Section{"s03", "s03_lazy.out"}, Section{"s04", "s04_uop.out"},
                                           Section{"s05", "s05_realize.out"}, Section{"s06", "s06_graph.out"},
                                           Section{"s07", "s07_dedup.out"}, Section{"s08", "s08_autodiff.out"},
                                           Section{"s09", "s09_chain.out"}, Section{"s10", "s10_kernelize.out"},
                                           Section{"s12", "s12_lowlevel_uop.out"}, Section{"s13", "s13_pattern.out"}),
                         [](const auto& info) { return std::string(info.param.arg); });

// *** Generated Code: the DEBUG transcripts of realizing t+3+4, normalized (pids, timings) ***

struct DebugRun {
  const char* arg;
  const char* env;
  const char* golden;
};
class TutorialGeneratedCode : public ::testing::TestWithParam<DebugRun> {};

TEST_P(TutorialGeneratedCode, MatchesGolden) {
  std::string got = golden::normalize(tutorial(GetParam().arg, GetParam().env));
  std::string want = expected(GetParam().golden);
  EXPECT_EQ(got, want) << "--- got:\n" << golden::vis(got) << "--- expected:\n" << golden::vis(want);
}
INSTANTIATE_TEST_SUITE_P(
    Tutorial, TutorialGeneratedCode,
    ::testing::Values(DebugRun{"s11", "DEBUG=2", "s11_generated_code.DEBUG2.norm.out"},
                      DebugRun{"s11", "DEBUG=4", "s11_generated_code.DEBUG4.norm.out"},
                      DebugRun{"s11", "NOOPT=1 DEBUG=4", "s11_generated_code.NOOPT1_DEBUG4.norm.out"},
                      DebugRun{"s11b", "DEBUG=2", "s11b_generated_code_n2.DEBUG2.norm.out"},
                      DebugRun{"s11b", "DEBUG=4", "s11b_generated_code_n2.DEBUG4.norm.out"},
                      DebugRun{"s11b", "NOOPT=1 DEBUG=4", "s11b_generated_code_n2.NOOPT1_DEBUG4.norm.out"}),
    [](const auto& info) {
      std::string n = std::string(info.param.arg) + "_" + info.param.env;
      for (char& c : n)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return n;
    });

TEST(Tutorial, GeneratedCodeIsQuietWithoutDebug) { EXPECT_EQ(tutorial("s11"), ""); }

// *** all sections in one process: stdout and the "#####" section markers (stderr), as tutorial_full.py ***

TEST(Tutorial, FullSession) { EXPECT_EQ(tutorial("", "", /*merge=*/true), expected("tutorial_full.annotated.out")); }

}  // namespace
}  // namespace tg
