// Run with CROSS_COMPILE=CUDA:sm_90 (the cuda.compile_op_suite test), every kernel of this suite is also compiled for
// an H200 by NVRTC (engine/realize.h cross_compile); a compile error fails the test that made the kernel. At the end,
// this checks that kernels were compiled at all, so the run can't pass by compiling nothing.
#include <gtest/gtest.h>

#include <iostream>

#include "tg/engine/realize.h"
#include "tg/helpers/helpers.h"
#include "tg/helpers/knobs.h"

namespace {

class CrossCompiled : public testing::Environment {
 public:
  void TearDown() override {
    std::string target = tg::CROSS_COMPILE;
    if (target.empty()) return;
    std::cout << "cross-compiled " << tg::cross_compiled.load() << " kernels for " << target << "\n";
    // a run filtered down to tests that compile nothing has nothing to check
    if (testing::UnitTest::GetInstance()->test_to_run_count() > 20) {
      EXPECT_GT(tg::cross_compiled.load(), 100);
    }
  }
};
[[maybe_unused]] testing::Environment* const env = testing::AddGlobalTestEnvironment(new CrossCompiled);

}  // namespace
