// Rendered kernels, with their entry shim, compiled and run by the CPU runtime: the shim's contract (buffers in
// signature order, variable values in ProgramSpec::vars order) and the numbers the kernels compute.
#include <gtest/gtest.h>

#include <cstdlib>
#include <numeric>

#include "tg/renderer/cstyle.h"
#include "tg/runtime/device.h"
#include "tg/runtime/ops_cpu.h"
#include "uop_lists.h"

namespace tg {
namespace {

using namespace render_cases;

bool have_cc() { return std::system("command -v clang >/dev/null 2>&1 || command -v cc >/dev/null 2>&1") == 0; }

// renders rows, appends the entry shim, compiles and loads the kernel
std::unique_ptr<CPUProgram> load(const std::vector<Row>& rows, ProgramSpec* spec = nullptr) {
  std::vector<UOp> uops = build(rows);
  ClangRenderer renderer;
  std::string name = renderer.render_uops(uops).name;
  ProgramSpec p = ProgramSpec::from_uops(name, renderer.render(uops), "CPU", UOp{}, uops);
  std::string lib = ClangCompiler().compile(p.src + renderer.entry_shim(p.name, p.params));
  if (spec) *spec = p;
  return std::make_unique<CPUProgram>(p.name, lib);
}

template <class T>
Buffer make_buffer(DType dtype, const std::vector<T>& host) {
  Buffer b("CPU", static_cast<int64_t>(host.size()), dtype, true);
  b.copyin(host.data(), host.size() * sizeof(T));
  return b;
}
template <class T>
std::vector<T> read(const Buffer& b) {
  std::vector<T> out(static_cast<size_t>(b.size()));
  b.copyout(out.data(), out.size() * sizeof(T));
  return out;
}

TEST(ClangRendererRun, E4Upcast) {  // t+3+4
  if (!have_cc()) GTEST_SKIP() << "no C compiler";
  auto prg = load(E_4_upcast);
  Buffer out = make_buffer(dtypes::int32, std::vector<int32_t>(4, 0));
  Buffer in = make_buffer(dtypes::int32, std::vector<int32_t>{1, 2, 3, 4});
  std::vector<Opaque> bufs{out.opaque(), in.opaque()};
  (*prg)(bufs);
  EXPECT_EQ(read<int32_t>(out), (std::vector<int32_t>{8, 9, 10, 11}));
}

TEST(ClangRendererRun, SumWithAccumulator) {  // r_256: sum of 0..255
  if (!have_cc()) GTEST_SKIP() << "no C compiler";
  auto prg = load(r_256_noopt);
  std::vector<float> x(256);
  std::iota(x.begin(), x.end(), 0.0f);
  Buffer out = make_buffer(dtypes::float32, std::vector<float>{0.0f});
  Buffer in = make_buffer(dtypes::float32, x);
  std::vector<Opaque> bufs{out.opaque(), in.opaque()};
  (*prg)(bufs);
  EXPECT_EQ(read<float>(out)[0], 255.0f * 256.0f / 2.0f);
}

TEST(ClangRendererRun, MatmulFloat4) {  // r_4_4_4: float4 loads of a, then a @ b
  if (!have_cc()) GTEST_SKIP() << "no C compiler";
  auto prg = load(r_4_4_4);
  std::vector<float> a(16), b(16), want(16, 0.0f);
  for (int i = 0; i < 16; i++) a[i] = static_cast<float>(i % 7 - 3), b[i] = static_cast<float>((i * 5) % 11 - 5);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++)
      for (int k = 0; k < 4; k++) want[i * 4 + j] += a[i * 4 + k] * b[k * 4 + j];
  Buffer out = make_buffer(dtypes::float32, std::vector<float>(16, 0.0f));
  Buffer ba = make_buffer(dtypes::float32, a), bb = make_buffer(dtypes::float32, b);
  std::vector<Opaque> bufs{out.opaque(), ba.opaque(), bb.opaque()};
  (*prg)(bufs);
  EXPECT_EQ(read<float>(out), want);
}

TEST(ClangRendererRun, VarsComeInSortedOrder) {  // signature (data0, data1, b, a); values come as vars: (a, b)
  if (!have_cc()) GTEST_SKIP() << "no C compiler";
  ProgramSpec spec;
  auto prg = load(ref_gated_if_vars, &spec);
  ASSERT_EQ(spec.vars.size(), 2u);
  ASSERT_EQ(spec.vars[0].arg<VarArg>().name, "a");
  std::vector<float> x(32);
  std::iota(x.begin(), x.end(), 100.0f);
  Buffer out = make_buffer(dtypes::float32, std::vector<float>(32, -1.0f));
  Buffer in = make_buffer(dtypes::float32, x);
  std::vector<Opaque> bufs{out.opaque(), in.opaque()};
  std::vector<int64_t> vals{3, 4};  // a=3, b=4: out[r] = (r+a < b) ? in[r+a] : 1.0 for r < a
  (*prg)(bufs, vals);
  std::vector<float> got = read<float>(out);
  EXPECT_EQ(got[0], 103.0f);
  EXPECT_EQ(got[1], 1.0f);
  EXPECT_EQ(got[2], 1.0f);
  EXPECT_EQ(got[3], -1.0f);  // r >= a: not stored
}

}  // namespace
}  // namespace tg
