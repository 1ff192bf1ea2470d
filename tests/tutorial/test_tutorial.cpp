// examples/tutorial.cpp against the reference's transcripts (reference/golden/tutorial, copied to
// tests/data/tutorial): each section in a fresh process (CPU=1) as the golden sNN_*.py scripts, the DEBUG output
// of "Generated Code", and all sections in one process as tutorial_full.py.
//
// Differences by design, applied to the golden text here and nowhere else:
// - autograd: Tensor::gradient() does not exist yet (issue 4). Sections 08 and 09 print the forward values and
//   then "autograd: see issue 4" where the reference prints grad.item() (7.0 and 0.800000011920929).
// - In one process the skipped gradients realize two buffers fewer, so section 10's UNIQUE numbers are two lower
//   than tutorial_full's (14/15/16 for 16/17/18).
#include <cctype>
#include <string>

#include "golden_run.h"

namespace tg {
namespace {

const std::string kData = TG_TEST_DATA "/tutorial/";
const std::string kNote = "autograd: see issue 4\n";

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
                                           Section{"s07", "s07_dedup.out"}, Section{"s10", "s10_kernelize.out"},
                                           Section{"s12", "s12_lowlevel_uop.out"}, Section{"s13", "s13_pattern.out"}),
                         [](const auto& info) { return std::string(info.param.arg); });

// the autograd sections: the forward values match; the gradient line is the note (see above)
TEST(Tutorial, AutodiffForward) {
  EXPECT_EQ(tutorial("s08"), golden::replace_all(expected("s08_autodiff.out"), "\n7.0\n", "\n" + kNote));
}
TEST(Tutorial, ChainRuleForward) {
  EXPECT_EQ(tutorial("s09"), golden::replace_all(expected("s09_chain.out"), "\n0.800000011920929\n", "\n" + kNote));
}

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

TEST(Tutorial, FullSession) {
  std::string want = expected("tutorial_full.annotated.out");
  want = golden::replace_all(want, "##### 08 Automatic Differentiation (b)\n7.0\n",
                             "##### 08 Automatic Differentiation (b)\n" + kNote);
  want = golden::replace_all(want, "##### 09 Chain Rule (b)\n0.800000011920929\n", "##### 09 Chain Rule (b)\n" + kNote);
  for (auto [from, to] : {std::pair{"16", "14"}, std::pair{"17", "15"}, std::pair{"18", "16"}})
    want = golden::replace_all(want, std::string("UOp(Ops.UNIQUE, dtypes.void, arg=") + from + ",",
                               std::string("UOp(Ops.UNIQUE, dtypes.void, arg=") + to + ",");
  EXPECT_EQ(tutorial("", "", /*merge=*/true), want);
}

}  // namespace
}  // namespace tg
