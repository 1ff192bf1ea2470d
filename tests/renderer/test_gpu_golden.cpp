// Our OpenCL and CUDA kernels against the reference's: the same programs scheduled, each kernel given the hand-coded
// GPU opts (locals, GROUP/GROUPTOP, the matvec path) and rendered by OpenCLRenderer / CUDARenderer("sm_90"), compared
// line by line with what tinygrad 2025-06-12 prints (tests/data/gpu/<renderer>/<program>.txt, written by
// tools/gen_gpu_goldens.py). No device is needed: this renders only.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <memory>
#include <sstream>

#include "tg/codegen/heuristic.h"
#include "tg/codegen/kernel.h"
#include "tg/codegen/program.h"
#include "tg/renderer/cstyle.h"
#include "tg/schedule/schedule.h"
#include "tg/tensor/tensor.h"

using namespace tg;

namespace {

// on a device with locals (PYTHON, always there), so the tensor layer lays out convs as for a GPU (the CPU's tiled
// layouts are ours, not the reference's)
Tensor E(const Shape& shape, DType dt = dtypes::float32) {
  return Tensor::empty(shape, {.device = "PYTHON", .dtype = dt});
}

// keep in step with tools/gen_gpu_goldens.py
const std::vector<std::pair<std::string, std::function<Tensor()>>>& programs() {
  static const std::vector<std::pair<std::string, std::function<Tensor()>>> p = {
      {"t347", [] { return E({4}) + 3 + 4; }},
      {"mm_relu_sum",
       [] {
         return E({4, 4}).matmul(E({4, 4})).relu().sum();
       }},
      {"matmul",
       [] {
         return E({256, 256}).matmul(E({256, 256}));
       }},
      {"matvec",
       [] {
         return E({1, 1024}).matmul(E({1024, 1024}));
       }},
      {"softmax",
       [] {
         return E({64, 128}).softmax(-1);
       }},
      {"sum_grouped", [] { return E({4096}).sum(); }},
      {"row_sum",
       [] {
         return E({256, 512}).sum(1);
       }},
      {"elementwise",
       [] {
         Tensor a = E({1024, 1024}), b = E({1024, 1024}), c = E({1024, 1024});
         return ((a * b + c).relu() * 2 - a).exp2();
       }},
      {"conv2d",
       [] {
         return E({8, 16, 12, 12}).conv2d(E({32, 16, 3, 3}));
       }},
      {"matmul_half",
       [] {
         return E({256, 256}, dtypes::half).matmul(E({256, 256}, dtypes::half));
       }},
  };
  return p;
}

std::string golden(const std::string& renderer, const std::string& program) {
  std::ifstream f(std::string(TG_TEST_DATA) + "/gpu/" + renderer + "/" + program + ".txt");
  EXPECT_TRUE(f.good()) << "missing tests/data/gpu/" << renderer << "/" << program << ".txt";
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// what the generator writes: per kernel "// name [opts]\n" + source, joined by blank lines
std::string ours(Renderer& r, const Tensor& out) {
  std::vector<std::string> srcs;
  for (const ScheduleItem& si : Tensor::schedule_with_vars({out}).first) {
    if (si.ast.op() != Ops::SINK) continue;
    Kernel k(si.ast, r);
    apply_default_opts(k);
    std::vector<std::string> opts;
    for (const Opt& o : k.applied_opts) opts.push_back("'" + o.repr() + "'");
    ProgramSpec p = to_program(k, r, true, r.device);
    srcs.push_back(cat("// ", p.name, " [", join(opts, ", "), "]\n", p.src));
  }
  return join(srcs, "\n\n") + "\n";
}

struct Case {
  std::string renderer, program;
  friend void PrintTo(const Case& c, std::ostream* os) { *os << c.renderer << "/" << c.program; }
};
class GpuGolden : public testing::TestWithParam<Case> {};

TEST_P(GpuGolden, MatchesTheReference) {
  const Case& c = GetParam();
  reset_kernel_cnt();  // named as in a fresh process, as the generator names them
  std::unique_ptr<Renderer> r;
  if (c.renderer == "opencl")
    r = std::make_unique<OpenCLRenderer>();
  else
    r = std::make_unique<CUDARenderer>("sm_90");
  for (const auto& [name, make] : programs()) {
    if (name == c.program) {
      EXPECT_EQ(ours(*r, make()), golden(c.renderer, c.program));
    }
  }
}

std::vector<Case> cases() {
  std::vector<Case> ret;
  for (const char* r : {"opencl", "cuda"})
    for (const auto& [name, _] : programs()) ret.push_back({r, name});
  return ret;
}
INSTANTIATE_TEST_SUITE_P(Renderers, GpuGolden, testing::ValuesIn(cases()), [](const testing::TestParamInfo<Case>& i) {
  return i.param.renderer + "_" + i.param.program;
});

}  // namespace
