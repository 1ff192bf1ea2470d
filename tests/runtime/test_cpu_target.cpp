// CPU_ARCH: the ISA the CPU devices compile for, read from the C compiler's predefined macros for a -march name, and
// the tile lane budget it gives the heuristic; an ISA the host can't run, or a name the compiler doesn't know, is a
// ValueError naming it.
#include <gtest/gtest.h>

#include "error_of.h"
#include "tg/runtime/ops_cpu.h"

using namespace tg;
using tg::test::error_of;

TEST(CpuTarget, ReadFromTheCompiler) {
  CpuTarget sse = cpu_target_for("x86-64-v2");  // SSE4.2: every x86-64 CPU this runs on has it
  EXPECT_EQ(sse.isa, "SSE");
  EXPECT_EQ(sse.vector_bytes, 16);
  EXPECT_EQ(sse.tile_lanes, 64);
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "no AVX2 here";
  CpuTarget avx2 = cpu_target_for("x86-64-v3");
  EXPECT_EQ(avx2.isa, "AVX2");
  EXPECT_EQ(avx2.vector_bytes, 32);
  EXPECT_EQ(avx2.registers, 16);
  EXPECT_EQ(avx2.tile_lanes, 128);
}

TEST(CpuTarget, NativeIsTheHost) {
  CpuTarget t = cpu_target_for("native");
  EXPECT_EQ(t.isa, __builtin_cpu_supports("avx512f") ? "AVX-512" : __builtin_cpu_supports("avx2") ? "AVX2" : "SSE");
}

TEST(CpuTarget, AnIsaTheHostLacksIsAnError) {
  if (__builtin_cpu_supports("avx512f")) {
    EXPECT_EQ(cpu_target_for("x86-64-v4").tile_lanes, 256);
  } else {
    std::string err = error_of([] { cpu_target_for("x86-64-v4"); });
    EXPECT_NE(err.find("CPU_ARCH=x86-64-v4 compiles for AVX-512, which this machine's CPU can't run"),
              std::string::npos)
        << err;
  }
}

TEST(CpuTarget, AnUnknownNameIsAnError) {
  std::string err = error_of([] { cpu_target_for("no-such-cpu"); });
  EXPECT_NE(err.find("CPU_ARCH=no-such-cpu: the C compiler doesn't know this target"), std::string::npos) << err;
}
