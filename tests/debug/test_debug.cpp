// examples/debug_programs.cpp (t347, mm_relu_sum) at every DEBUG level against the reference's transcripts
// (reference/golden/debug, copied to tests/data/debug): a fresh process with CPU=1, the output normalized as the
// golden .norm.out files (pid:<PID>, timing digits masked with '#', widths kept).
// DEBUG=7 is not compared: the reference crashes there (no capstone disassembler).
#include <cctype>
#include <string>

#include "../tutorial/golden_run.h"

namespace tg {
namespace {

const std::string kData = TG_TEST_DATA "/debug/";

struct DebugRun {
  const char* program;
  const char* env;
  const char* suffix;  // the golden file: <program>.<suffix>
};
class DebugTranscript : public ::testing::TestWithParam<DebugRun> {};

TEST_P(DebugTranscript, MatchesGolden) {
  const DebugRun& p = GetParam();
  std::string got = golden::normalize(golden::run(TG_DEBUG_PROGRAMS, p.program, p.env));
  std::string want = golden::read_file(kData + p.program + "." + p.suffix);
  EXPECT_EQ(got, want) << "--- got:\n" << golden::vis(got) << "--- expected:\n" << golden::vis(want);
}

#define TG_DEBUG_RUNS(P)                                                                                        \
  DebugRun{P, "", "out"}, DebugRun{P, "DEBUG=1", "DEBUG1.norm.out"}, DebugRun{P, "DEBUG=2", "DEBUG2.norm.out"}, \
      DebugRun{P, "DEBUG=3", "DEBUG3.norm.out"}, DebugRun{P, "DEBUG=4", "DEBUG4.norm.out"},                     \
      DebugRun{P, "DEBUG=5", "DEBUG5.norm.out"}, DebugRun{P, "DEBUG=6", "DEBUG6.norm.out"},                     \
      DebugRun{P, "NOOPT=1 DEBUG=2", "NOOPT1_DEBUG2.norm.out"}, DebugRun {                                      \
    P, "NOOPT=1 DEBUG=4", "NOOPT1_DEBUG4.norm.out"                                                              \
  }
INSTANTIATE_TEST_SUITE_P(Debug, DebugTranscript, ::testing::Values(TG_DEBUG_RUNS("t347"), TG_DEBUG_RUNS("mm_relu_sum")),
                         [](const auto& info) {
                           std::string n = std::string(info.param.program) + "_" + info.param.suffix;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });
#undef TG_DEBUG_RUNS

}  // namespace
}  // namespace tg
