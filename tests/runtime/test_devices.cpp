// The device interface and the devices besides CPU: PYTHON (the uop interpreter, with work-groups, locals and
// barriers), NULL (allocates and runs nothing), copies between devices, buffer specs, and device selection.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "error_of.h"
#include "scoped_env.h"
#include "tg/codegen/heuristic.h"
#include "tg/codegen/kernel.h"
#include "tg/engine/realize.h"
#include "tg/renderer/renderer.h"
#include "tg/runtime/device.h"
#include "tg/runtime/ops_python.h"
#include "tg/tensor/tensor.h"
#include "tg/uop/uop.h"

namespace tg {
namespace {

using test::ScopedEnv;

using test::error_of;

// the schedule's one kernel AST for t
UOp kernel_ast(const Tensor& t) {
  auto [schedule, vars] = Tensor::schedule_with_vars({t});
  for (const ScheduleItem& si : schedule)
    if (si.ast.op() == Ops::SINK) return si.ast;
  throw Error("no kernel in the schedule");
}

bool has_op(const std::vector<UOp>& uops, Ops op) {
  return std::any_of(uops.begin(), uops.end(), [&](const UOp& u) { return u.op() == op; });
}

std::vector<float> host_values(size_t n, int seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; i++)
    v[i] = static_cast<float>(((i * 7919 + static_cast<size_t>(seed) * 104729) % 1000)) / 500.0f - 1.0f;
  return v;
}

// *** the interface ***

TEST(DeviceInterface, EveryDeviceHasARendererAndACompiler) {
  for (const char* d : {"CPU", "PYTHON", "NULL"}) {
    Compiled& dev = Device::get(d);
    ASSERT_NE(dev.renderer, nullptr) << d;
    ASSERT_NE(dev.compiler, nullptr) << d;
    EXPECT_EQ(dev.device, d);
  }
  EXPECT_EQ(Device::get("CPU").renderer->device, "CPU");
  EXPECT_FALSE(Device::get("CPU").renderer->has_local);
  EXPECT_TRUE(Device::get("PYTHON").renderer->has_local);  // the GPU code path
  EXPECT_TRUE(Device::get("PYTHON").renderer->has_shared);
  EXPECT_EQ(Device::get("NULL").renderer->device, "NULL");
}

TEST(DeviceInterface, SelectionByDevAndNumbers) {
  {
    ScopedEnv dev("DEV", "python");
    Device::DEFAULT.reset();
    EXPECT_EQ(Device::DEFAULT.str(), "PYTHON");
    EXPECT_EQ(&Device::default_device(), &Device::get("PYTHON"));
  }
  Device::DEFAULT.reset();
  EXPECT_EQ(Device::canonicalize("python:0"), "PYTHON");
  Compiled& p1 = Device::get("python:1");  // a second device of the kind, opened on its own
  EXPECT_EQ(p1.device, "PYTHON:1");
  EXPECT_NE(&p1, &Device::get("PYTHON"));
  Tensor t = Tensor({1, 2, 3}, {.device = "PYTHON:1"}) * 2;
  EXPECT_EQ(t.device(), "PYTHON:1");
  EXPECT_EQ(t.tolist<int>(), (std::vector<int>{2, 4, 6}));
}

TEST(DeviceInterface, BadDeviceNamesItWhyAndTheAvailableOnes) {
  const std::string available = join(Device::get_available_devices(), ", ");  // [GPU, ]CPU, [LLVM, ]PYTHON, NULL
  EXPECT_NE(available.find("CPU, "), std::string::npos);
  EXPECT_TRUE(available.ends_with("PYTHON, NULL")) << available;
  EXPECT_EQ(error_of([] { Tensor({1}, {.device = "FOO"}); }), "unknown device 'FOO'; available: " + available);
  EXPECT_EQ(error_of([] { Tensor({1}, {.device = "cpu"}).to("METAL"); }),
            "device 'METAL' is not available in this build; available: " + available);
  ScopedEnv dev("DEV", "NOPE");
  Device::DEFAULT.reset();
  EXPECT_EQ(error_of([] { Tensor({1}); }), "unknown device 'NOPE'; available: " + available);
  Device::DEFAULT.reset();
}

TEST(DeviceInterface, IsDtypeSupported) {
  EXPECT_TRUE(is_dtype_supported(dtypes::float32, "CPU"));
  EXPECT_TRUE(is_dtype_supported(dtypes::half, "PYTHON"));
  EXPECT_TRUE(is_dtype_supported(dtypes::bfloat16, "PYTHON"));
  EXPECT_FALSE(is_dtype_supported(dtypes::fp8e4m3, "CPU"));  // no fp8 arithmetic yet, as the reference
  EXPECT_FALSE(is_dtype_supported(dtypes::float32, "FOO"));  // a device that can't open supports nothing
}

// *** copies and buffers ***

TEST(DeviceCopies, BetweenAnyTwoDevices) {
  std::vector<float> v = host_values(33, 1);
  Tensor t(v, {33}, {.device = "CPU"});
  Tensor p = t.to("PYTHON");
  EXPECT_EQ(p.device(), "PYTHON");
  EXPECT_EQ((p + 0).tolist<float>(), v);  // computed there
  EXPECT_EQ(p.to("python:1").to("CPU").tolist<float>(), v);
  EXPECT_TRUE(t.to("cpu").is(t));  // already there: itself
  Buffer a("CPU", 4, dtypes::int32, true), b("PYTHON", 4, dtypes::int32, true), n("NULL", 4, dtypes::int32, true);
  int32_t x[4] = {1, -2, 3, -4}, y[4] = {};
  a.copyin(x, sizeof(x));
  b.copy_from(a);
  n.copy_from(b);  // into nothing
  a.copyin(y, sizeof(y));
  a.copy_from(b);
  a.copyout(y, sizeof(y));
  EXPECT_EQ(std::vector<int32_t>(y, y + 4), std::vector<int32_t>(x, x + 4));
}

TEST(DeviceCopies, MismatchedSizesAreAnErrorNotAPartialCopy) {
  Buffer a("CPU", 4, dtypes::int32, true), b("PYTHON", 3, dtypes::int32, true);
  int32_t x[4] = {7, 7, 7, 7};
  a.copyin(x, sizeof(x));
  std::string err = error_of([&] { b.copy_from(a); });
  EXPECT_NE(err.find("buffer copy size mismatch"), std::string::npos) << err;
  EXPECT_NE(err.find("is 16 bytes"), std::string::npos) << err;
  EXPECT_NE(err.find("is 12"), std::string::npos) << err;
}

TEST(DeviceBuffers, ExternalMemoryIsUsedAndNeverFreed) {
  alignas(64) float mem[4] = {0, 0, 0, 0};
  {
    Buffer b("CPU", 4, dtypes::float32, BufferSpec{.external_ptr = mem}, true);
    EXPECT_EQ(b.opaque(), static_cast<void*>(mem));
    float x[4] = {1, 2, 3, 4};
    b.copyin(x, sizeof(x));
  }  // freed here: the memory is ours, so nothing happens to it (ASan would see a bad free)
  EXPECT_EQ(mem[3], 4.0f);
  Buffer nolru("CPU", 8, dtypes::float32, BufferSpec{.nolru = true}, true);
  EXPECT_TRUE(nolru.spec().nolru);
  EXPECT_TRUE(nolru.view(2, dtypes::float32, 8).spec().nolru);  // a view has its base's spec
}

// *** NULL ***

TEST(NullDevice, SchedulesAndRendersButRunsNothing) {
  Tensor a = Tensor::empty({64, 64}, {.device = "NULL"}), b = Tensor::empty({64, 64}, {.device = "NULL"});
  Tensor c = (a.matmul(b) + 1).relu();
  int64_t before = GlobalCounters::kernel_count;
  c.realize();
  EXPECT_GE(GlobalCounters::kernel_count - before, 1);
  std::vector<float> got = c.tolist<float>();
  EXPECT_EQ(got, std::vector<float>(64 * 64, 0.0f));  // nothing ran: reads give zeros
  std::shared_ptr<CompiledRunner> r = get_runner("NULL", kernel_ast((a + b).contiguous()));
  EXPECT_NE(r->p.src.find("void E_"), std::string::npos) << r->p.src;  // rendered as C
  EXPECT_EQ(r->lib, r->p.src);                                         // and never compiled
}

// *** PYTHON: the interpreter ***

TEST(PythonDevice, TutorialAddRunsThere) {
  Tensor t = Tensor({1, 2, 3}, {.device = "PYTHON"}) + 1;
  EXPECT_EQ(t.device(), "PYTHON");
  EXPECT_EQ(t.tolist<int>(), (std::vector<int>{2, 3, 4}));
  std::shared_ptr<CompiledRunner> r = get_runner("PYTHON", kernel_ast(Tensor({1, 2, 3}, {.device = "PYTHON"}) + 1));
  EXPECT_EQ(r->device, "PYTHON");
  EXPECT_TRUE(has_op(r->p.uops, Ops::SPECIAL));  // global dims: gidx0
  ASSERT_TRUE(r->p.global_size.has_value());
  EXPECT_EQ((*r->p.global_size)[0] * (r->p.local_size ? (*r->p.local_size)[0] : 1), 3);
}

TEST(PythonDevice, MatmulWithLocalsMatchesTheCpu) {
  std::vector<float> av = host_values(48 * 40, 2), bv = host_values(40 * 24, 3);
  auto mm = [&](const char* dev) {
    return Tensor(av, {48, 40}, {.device = dev}).matmul(Tensor(bv, {40, 24}, {.device = dev})).tolist<float>();
  };
  std::vector<float> p = mm("PYTHON"), c = mm("CPU");
  ASSERT_EQ(p.size(), c.size());
  for (size_t i = 0; i < p.size(); i++) EXPECT_NEAR(p[i], c[i], 1e-4f) << i;
  Tensor m = Tensor(av, {48, 40}, {.device = "PYTHON"}).matmul(Tensor(bv, {40, 24}, {.device = "PYTHON"}));
  std::shared_ptr<CompiledRunner> r = get_runner("PYTHON", kernel_ast(m));
  ASSERT_TRUE(r->p.local_size.has_value());
  const LaunchSize& l = *r->p.local_size;
  EXPECT_GT(l[0] * l[1] * l[2], 1) << "the heuristic gave the kernel no locals";
}

TEST(PythonDevice, GroupedReduceThroughSharedMemoryAndBarriers) {
  std::vector<float> v = host_values(4096, 4);
  Tensor x(v, {4096}, {.device = "PYTHON"});
  Kernel k(kernel_ast(x.sum()), *Device::get("PYTHON").renderer);
  k.apply_opt({OptOps::GROUPTOP, 0, 16});
  std::shared_ptr<CompiledRunner> r = compile_kernel(k, *Device::get("PYTHON").renderer, true, "PYTHON");
  EXPECT_TRUE(has_op(r->p.uops, Ops::DEFINE_LOCAL));
  EXPECT_TRUE(has_op(r->p.uops, Ops::BARRIER));
  Buffer out("PYTHON", 1, dtypes::float32, true), in("PYTHON", 4096, dtypes::float32, true);
  in.copyin(v.data(), v.size() * sizeof(float));
  (*r)({out, in}, {}, true);
  float got = 0;
  out.copyout(&got, sizeof(got));
  double want = 0;
  for (float f : v) want += f;
  EXPECT_NEAR(got, want, 1e-3);
  EXPECT_NEAR(x.sum().item<float>(), want, 1e-3);  // and as the heuristic chooses
}

TEST(PythonDevice, GatedLoadsReadTheirAlternative) {
  std::vector<float> v = host_values(12, 5);
  auto padded = [&](const char* dev) {
    return Tensor(v, {3, 4}, {.device = dev}).pad({{1, 2}, {0, 3}}, ConstValue(2.5)).exp2().tolist<float>();
  };
  std::vector<float> p = padded("PYTHON"), c = padded("CPU");
  ASSERT_EQ(p.size(), c.size());
  for (size_t i = 0; i < p.size(); i++) EXPECT_NEAR(p[i], c[i], 1e-5f * std::fabs(c[i])) << i;
}

// a hand-written program: each of 3 work-groups of 4 threads writes gidx0 * 4 + lidx0 to its element
std::vector<UOp> iota_program(int64_t size) {
  UOp buf = UOp::make(Ops::DEFINE_GLOBAL, dtypes::int32.ptr(size), {}, ConstValue(int64_t(0)));
  UOp g = UOp::make(Ops::SPECIAL, dtypes::int32, {}, SpecialArg{"gidx0", 3});
  UOp l = UOp::make(Ops::SPECIAL, dtypes::int32, {}, SpecialArg{"lidx0", 4});
  UOp four = UOp::const_(dtypes::int32, int64_t(4));
  UOp idx = UOp::make(Ops::ADD, dtypes::int32, {UOp::make(Ops::MUL, dtypes::int32, {g, four}), l});
  UOp store = UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, buf.dtype(), {buf, idx}), idx});
  return {buf, g, l, four, idx.src(0), idx, store.src(0), store};
}

TEST(PythonDevice, LaunchRunsEveryWorkGroupAndThread) {
  PythonProgram prg("iota", iota_program(12), {});
  Buffer out("PYTHON", 12, dtypes::int32, true);
  std::vector<Opaque> bufs{out.opaque()};
  prg(bufs, {}, true, {3, 1, 1}, Program::Dims{4, 1, 1});
  std::vector<int32_t> got(12);
  out.copyout(got.data(), 48);
  for (int i = 0; i < 12; i++) EXPECT_EQ(got[static_cast<size_t>(i)], i);
}

TEST(PythonDevice, OutOfBoundsIsAnIndexError) {
  PythonProgram prg("iota", iota_program(10), {});  // 12 threads, a buffer of 10
  Buffer out("PYTHON", 10, dtypes::int32, true);
  std::vector<Opaque> bufs{out.opaque()};
  try {
    prg(bufs, {}, true, {3, 1, 1}, Program::Dims{4, 1, 1});
    FAIL() << "no error";
  } catch (const IndexError& e) {
    EXPECT_EQ(std::string(e.what()), "PYTHON: iota: Ops.STORE out of bounds: element 10 of a buffer of 10");
  }
}

TEST(PythonDevice, UnknownUopIsNotImplemented) {
  UOp w = UOp::make(Ops::CUSTOM, dtypes::int32, {}, std::string("foo()"));
  EXPECT_THROW(PythonProgram("c", {w}, {}), NotImplementedError);
}

TEST(PythonDevice, ProgramTextIsTheSource) {
  // one uop a line (index, op, dtype, sources, arg), the text the device's programs are read back from
  std::shared_ptr<CompiledRunner> r = get_runner("PYTHON", kernel_ast(Tensor({1, 2}, {.device = "PYTHON"}) * 3));
  EXPECT_NE(r->p.src.find("0 DEFINE_GLOBAL int*2 () i0\n"), std::string::npos) << r->p.src;
  EXPECT_NE(r->p.src.find(" STORE void ("), std::string::npos) << r->p.src;
  EXPECT_EQ(load_python_program("E_2", r->p.src), r->p.uops);
}

TEST(TensorTo, MovesTheGradToo) {
  Tensor x = Tensor({1.0f, 2.0f}, {.device = "CPU", .requires_grad = true});
  (x * x).sum().backward();
  Tensor y = x.to("PYTHON");
  EXPECT_EQ(y.device(), "PYTHON");
  ASSERT_TRUE(y.grad().has_value());
  EXPECT_EQ(y.grad()->device(), "PYTHON");
  EXPECT_EQ(y.grad()->tolist<float>(), (std::vector<float>{2, 4}));
  x.to_("PYTHON");
  EXPECT_EQ(x.device(), "PYTHON");
  EXPECT_EQ(x.grad()->device(), "PYTHON");
  EXPECT_EQ(x.tolist<float>(), (std::vector<float>{1, 2}));
}

}  // namespace
}  // namespace tg
