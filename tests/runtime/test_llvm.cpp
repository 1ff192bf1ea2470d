// The LLVM device: LLVM IR rendered from the uops, compiled in process (no subprocess, no temp file) and linked by
// ORC's LLJIT; skipped where no libLLVM loads (it then says why).
#include <gtest/gtest.h>

#include <cmath>

#include "error_of.h"
#include "scoped_env.h"
#include "tg/engine/realize.h"
#include "tg/renderer/llvmir.h"
#include "tg/runtime/device.h"
#include "tg/runtime/ops_cpu.h"
#include "tg/runtime/ops_llvm.h"
#include "tg/runtime/threadpool.h"
#include "tg/tensor/tensor.h"

namespace tg {
namespace {

using test::error_of;

bool have_llvm() {
  static const bool ok = [] {
    try {
      Device::get("LLVM");
      return true;
    } catch (const Error&) {
      return false;
    }
  }();
  return ok;
}
#define NEED_LLVM() \
  if (!have_llvm()) GTEST_SKIP() << error_of([] { Device::get("LLVM"); })

UOp kernel_ast(const Tensor& t) {
  auto [schedule, vars] = Tensor::schedule_with_vars({t});
  for (const ScheduleItem& si : schedule)
    if (si.ast.op() == Ops::SINK) return si.ast;
  throw Error("no kernel in the schedule");
}

std::vector<float> values(size_t n, int seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; i++)
    v[i] = static_cast<float>((i * 7919 + static_cast<size_t>(seed) * 104729) % 1000) / 500.0f - 1.0f;
  return v;
}

TEST(LLVMDevice, TutorialAdd) {
  NEED_LLVM();
  Tensor t = Tensor({1, 2, 3}, {.device = "LLVM"}) + 1;
  EXPECT_EQ(t.device(), "LLVM");
  EXPECT_EQ(t.tolist<int>(), (std::vector<int>{2, 3, 4}));
}

TEST(LLVMDevice, SourceIsLLVMIR) {
  NEED_LLVM();
  std::shared_ptr<CompiledRunner> r = get_runner("LLVM", kernel_ast(Tensor({1.0f, 2.0f}, {.device = "LLVM"}).sqrt()));
  EXPECT_NE(r->p.src.find(cat("define void @", r->p.name, "(ptr noalias %data0, ptr noalias %data1) #0")),
            std::string::npos)
      << r->p.src;
  EXPECT_NE(r->p.src.find("@llvm.sqrt.f32"), std::string::npos) << r->p.src;
  EXPECT_EQ(r->lib.rfind("\x7f"
                         "ELF",
                         0),
            0u);  // the compiled object
}

TEST(LLVMDevice, MatmulSplitAcrossCoresMatchesTheCpu) {
  NEED_LLVM();
  std::vector<float> a = values(96 * 80, 1), b = values(80 * 64, 2);
  auto mm = [&](const char* d) {
    return Tensor(a, {96, 80}, {.device = d}).matmul(Tensor(b, {80, 64}, {.device = d})).relu().tolist<float>();
  };
  int64_t runs = HostProgram::threaded_runs;
  std::vector<float> l = mm("LLVM"), c = mm("CPU");
  ASSERT_EQ(l.size(), c.size());
  for (size_t i = 0; i < l.size(); i++) EXPECT_NEAR(l[i], c[i], 1e-4f) << i;
  if (cpu_threads() > 1) {
    EXPECT_GT(HostProgram::threaded_runs - runs, 0);
  }
}

TEST(LLVMDevice, ReductionsGatesAndCasts) {
  NEED_LLVM();
  std::vector<float> v = values(300, 3);
  auto f = [&](const char* d) {
    Tensor x(v, {3, 100}, {.device = d});
    Tensor y = x.pad({{1, 1}, {2, 0}}, ConstValue(0.5)).exp2().sum(1) + x.max(1).pad({{1, 1}});
    return (y * 7).floor().cast(dtypes::int32).idiv(Tensor({3}, {.device = d})).tolist<int>();
  };
  EXPECT_EQ(f("LLVM"), f("CPU"));
}

TEST(LLVMDevice, BadIRIsACompileErrorWithLLVMsMessage) {
  NEED_LLVM();
  LLVMCompiler c;
  std::string err = error_of([&] { c.compile("define void @k() {\n  %x = add i32 1\n  ret void\n}\n"); });
  EXPECT_NE(err.find("LLVM: can't parse the kernel k: "), std::string::npos) << err;  // names it, then LLVM's words
  EXPECT_NE(err.find("--- source ---"), std::string::npos) << err;
}

TEST(LLVMRenderer, Constants) {
  EXPECT_EQ(ldt(dtypes::float32.vec(4)), "<4 x float>");
  EXPECT_EQ(ldt(dtypes::int32.ptr()), "ptr");
  EXPECT_EQ(lconst(1.0, dtypes::float32), "0x3FF0000000000000");
  EXPECT_EQ(lconst(0.1, dtypes::float32), "0x3FB99999A0000000");  // 0.1 rounded to a float first
  EXPECT_EQ(lconst(int64_t(-3), dtypes::int8), "-3");
  EXPECT_EQ(lconst(true, dtypes::bool_), "true");
}

}  // namespace
}  // namespace tg
