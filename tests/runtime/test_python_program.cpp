// The PYTHON device's program text (PythonRenderer::render, load_python_program): it reads back into the very uops
// that were rendered, whatever their args; malformed text is a ValueError; PythonProgram::run checks its accesses
// against the sizes of the buffers it is given.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tg/engine/realize.h"
#include "tg/runtime/device.h"
#include "tg/runtime/ops_python.h"
#include "tg/tensor/tensor.h"
#include "tg/uop/kernel_info.h"
#include "tg/uop/uop.h"

namespace tg {
namespace {

// the runner of the one kernel that realizes t on PYTHON
std::shared_ptr<CompiledRunner> runner_of(const Tensor& t) {
  auto [schedule, vars] = Tensor::schedule_with_vars({t});
  for (const ScheduleItem& si : schedule)
    if (si.ast.op() == Ops::SINK) return get_runner("PYTHON", si.ast);
  throw Error("no kernel in the schedule");
}

void expect_round_trip(const std::vector<UOp>& uops) {
  PythonRenderer r;
  const std::string src = r.render(uops);
  std::vector<UOp> back = load_python_program("t", src);
  ASSERT_EQ(back.size(), uops.size()) << src;
  for (size_t i = 0; i < uops.size(); i++) EXPECT_EQ(back[i], uops[i]) << "uop " << i << " of\n" << src;
}

TEST(PythonProgramText, KernelsReadBackIntoTheSameUops) {
  // a reduce with locals (SPECIAL, DEFINE_ACC with later RANGEs, SINK's KernelInfo), a symbolic kernel (DEFINE_VAR),
  // vectors (GEP, VECTORIZE) and a where over bools
  Tensor a = Tensor::arange(64).reshape({8, 8}).cast(dtypes::float32);
  std::vector<Tensor> ts = {a.sum(1), (a * 2.5f).exp2(), (a < 3.0f).where(a, -a).max(0),
                            Tensor::arange(16).cast(dtypes::half) + 1};
  for (const Tensor& t : ts) {
    std::shared_ptr<CompiledRunner> r = runner_of(t.to("PYTHON"));
    expect_round_trip(r->p.uops);
  }
  UOp v = UOp::variable("start_pos", 1, 10);
  Tensor s = Tensor::ones({10}, {.device = "PYTHON"}).shrink({{0, sint(v.bind(3))}}).sum();
  auto [schedule, vars] = Tensor::schedule_with_vars({s});
  for (const ScheduleItem& si : schedule)
    if (si.ast.op() == Ops::SINK) expect_round_trip(get_runner("PYTHON", si.ast)->p.uops);
}

TEST(PythonProgramText, OddArgsReadBack) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<UOp> uops = {
      UOp::const_(dtypes::float64, std::nan("")),
      UOp::const_(dtypes::float32, -inf),
      UOp::const_(dtypes::float32, -0.0),
      UOp::const_(dtypes::float64, 0.1),
      UOp::const_(dtypes::float64, 5e-324),
      UOp::const_(dtypes::uint64, ConstValue(std::numeric_limits<uint64_t>::max())),
      UOp::const_(dtypes::uint64, int64_t(-1022)),
      UOp::const_(dtypes::int64, std::numeric_limits<int64_t>::min()),
      UOp::const_(dtypes::bool_, true),
      UOp::vconst(dtypes::int32.vec(3), {int64_t(1), int64_t(-2), int64_t(3)}),
      UOp::make(Ops::CUSTOM, dtypes::int32, {}, std::string("say \"hi\"\\\n(0) @1 -")),
      UOp::make(Ops::DEFINE_LOCAL, dtypes::float32.vec(4).ptr(16, true), {}, int64_t(0)),
      UOp::make(Ops::DEFINE_GLOBAL, dtypes::half.ptr(-1).vec(4), {}, int64_t(1)),
      UOp::variable("i", 0, 7),
      UOp::make(Ops::SINK, dtypes::void_, {}, ObjectArg(std::make_shared<const KernelInfo>("r_8_8\n", 1, 2))),
  };
  expect_round_trip(uops);
}

TEST(PythonProgramText, UnlistedSourcesAndSymbolicSizesComeAlong) {
  // a uop whose source is not in the list, and a SPECIAL whose size is an expression: written as "aux" lines
  UOp n = UOp::variable("n", 1, 8);
  UOp special = UOp::make(Ops::SPECIAL, dtypes::int32, {}, SpecialArg{"gidx0", 8, std::make_shared<UOpArg>(n * 2)});
  UOp sum = special + UOp::const_(dtypes::int32, 3);
  expect_round_trip({n, special, sum});
  PythonRenderer r;
  EXPECT_NE(r.render({special, sum}).find("aux "), std::string::npos);
}

TEST(PythonProgramText, MalformedTextIsAValueError) {
  for (const char* bad : {"0 NOT_AN_OP int () -", "0 CONST nodtype () i1", "0 CONST int (3) i1", "1 CONST int () i1",
                          "0 CONST int () \"open", "0 CONST int () x1", "0 CONST int ()", "0 ADD int (0 0) -",
                          "0 SPECIAL int () special(\"gidx0\" 4 @9)"}) {
    try {
      load_python_program("bad", bad);
      ADD_FAILURE() << "no error for: " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind, ErrorKind::Value) << bad << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("not a PYTHON program"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(load_python_program("empty", "# nothing\n").empty());
}

TEST(PythonProgramText, RunChecksTheBuffersItIsGiven) {
  // out[0] = in[5]
  UOp in = UOp::make(Ops::DEFINE_GLOBAL, dtypes::int32.ptr(), {}, int64_t(1));
  UOp out = UOp::make(Ops::DEFINE_GLOBAL, dtypes::int32.ptr(), {}, int64_t(0));
  UOp ld = in.index(UOp::const_(dtypes::int32, 5)).load();
  UOp st = out.index(UOp::const_(dtypes::int32, 0)).store({ld});
  std::vector<UOp> uops = {out,
                           in,
                           UOp::const_(dtypes::int32, 0),
                           UOp::const_(dtypes::int32, 5),
                           in.index(UOp::const_(dtypes::int32, 5)),
                           ld,
                           out.index(UOp::const_(dtypes::int32, 0)),
                           st,
                           UOp::sink({st})};
  PythonRenderer r;
  PythonProgram p("p", std::string_view(r.render(uops)));
  int32_t o = 0, big[6] = {0, 0, 0, 0, 0, 42}, small[2] = {1, 2};
  void* ok[] = {&o, big};
  size_t ok_sizes[] = {4, 24};
  p.run(ok, ok_sizes, {}, false, {1, 1, 1}, std::nullopt);
  EXPECT_EQ(o, 42);
  void* short_in[] = {&o, small};
  size_t short_sizes[] = {4, 8};
  try {
    p.run(short_in, short_sizes, {}, false, {1, 1, 1}, std::nullopt);
    ADD_FAILURE() << "no error for a 2-element input";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind, ErrorKind::Index) << e.what();
  }
  try {
    p.run(std::span<void* const>(ok, 1), std::span<const size_t>(ok_sizes, 1), {}, false, {1, 1, 1}, std::nullopt);
    ADD_FAILURE() << "no error for one buffer of two";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind, ErrorKind::Index) << e.what();
  }
}

TEST(PythonProgramText, DeviceFactoryRunsTheText) {
  // the device's runtime makes programs from their text, as the reference's PythonProgram(name, lib)
  std::shared_ptr<CompiledRunner> r = runner_of(Tensor({1, 2, 3}, {.device = "PYTHON"}) * 3);
  Compiled& dev = Device::get("PYTHON");
  std::unique_ptr<Program> p = dev.runtime("k", dev.compiler->compile(r->p.src));
  Buffer out("PYTHON", 3, dtypes::int32, true), in("PYTHON", 3, dtypes::int32, true);
  int32_t vals[3] = {1, 2, 3}, got[3] = {};
  in.copyin(vals, sizeof(vals));
  Opaque bufs[] = {out.opaque(), in.opaque()};
  Program::Dims g{1, 1, 1};
  if (r->p.global_size) g = {(*r->p.global_size)[0], (*r->p.global_size)[1], (*r->p.global_size)[2]};
  std::optional<Program::Dims> l;
  if (r->p.local_size) l = Program::Dims{(*r->p.local_size)[0], (*r->p.local_size)[1], (*r->p.local_size)[2]};
  (*p)(bufs, {}, true, g, l);
  out.copyout(got, sizeof(got));
  EXPECT_EQ(std::vector<int>(got, got + 3), (std::vector<int>{3, 6, 9}));
}

}  // namespace
}  // namespace tg
