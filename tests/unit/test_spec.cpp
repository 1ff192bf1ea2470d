// the codegen spec (tinygrad's spec.py): valid kernels pass type_verify, malformed UOps throw tg::Error naming them
#include <gtest/gtest.h>
#include <tinygrad/tinygrad.h>

#include <cstdlib>

#include "tg/uop/kernel_info.h"

using namespace tg;

namespace {

const DType f32 = dtypes::float32, i32 = dtypes::int32;
UOp ci(int64_t v) { return UOp::const_(dtypes::int32, v); }
UOp cf(double v) { return UOp::const_(dtypes::float32, v); }
UOp global(int64_t n, int64_t size = 16, DType d = dtypes::float32) {
  return UOp::make(Ops::DEFINE_GLOBAL, d.ptr(size), {}, ConstValue(n));
}
UOp range(int64_t end, int64_t n) { return UOp::range(i32, end, n); }
UOp make(Ops op, DType d, std::vector<UOp> src = {}, Arg arg = {}) {
  return UOp::make(op, d, std::move(src), std::move(arg));
}

// the error message type_verify gives for uops, or "" when they pass
std::string verify_error(const std::vector<UOp>& uops) {
  try {
    type_verify(uops);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// *** valid kernels ***

TEST(Spec, ElementwiseKernel) {  // c[i] = a[i] + b[i] for i in range(16)
  UOp r = range(16, 0);
  UOp a = global(1).index(r).load(), b = global(2).index(r).load();
  UOp st = global(0).index(r).store({a + b});
  UOp sink = UOp::sink({st}, kernel_info("E_16"));
  EXPECT_NO_THROW(type_verify(sink));
  std::vector<UOp> uops = sink.toposort();
  uops.push_back(make(Ops::ENDRANGE, dtypes::void_, {r}));
  EXPECT_NO_THROW(type_verify(uops));
}

TEST(Spec, ReduceKernel) {  // out[0] = sum(a[i] for i in range(8)) with an accumulator
  UOp r = range(8, 1);
  UOp acc = make(Ops::DEFINE_ACC, f32, {cf(0.0), r}, Tuple{int64_t(0)});
  UOp upd = make(Ops::ASSIGN, f32, {acc, acc + global(1).index(r).load()});
  UOp st = global(0, 1).index(ci(0)).store({upd});
  EXPECT_NO_THROW(type_verify(UOp::sink({st})));
}

TEST(Spec, GatedAndVectorKernel) {
  UOp gidx = make(Ops::SPECIAL, i32, {}, SpecialArg{"gidx0", 4});
  UOp n = UOp::variable("n", int64_t(1), int64_t(4));
  UOp gate = gidx < n;  // CMPLT gives bool
  UOp buf = global(0, 16), in = global(1, 16, dtypes::int32);
  UOp x = in.index(gidx, gate).load({ci(0)});                              // gated load with an alt value
  UOp y = x.where(idiv(x, ci(2)) % 3, (x << ci(1)) ^ ci(7));               // WHERE, IDIV/MOD/SHL/XOR on ints
  UOp sh = UOp::make(Ops::SHR, i32, {y, UOp::const_(dtypes::uint32, 1)});  // a uint shift distance
  UOp f = sh.cast(f32);
  UOp v = UOp::make(Ops::VECTORIZE, f32.vec(4), {f, f, f, f});
  UOp g = UOp::make(Ops::GEP, f32, {v + UOp::make(Ops::VCONST, f32.vec(4), {}, Tuple{1.0, 2.0, 3.0, 4.0})},
                    Tuple{int64_t(2)});
  UOp bits = g.bitcast(dtypes::uint32).bitcast(f32);
  UOp st = buf.index(gidx).store({bits.sqrt().exp2(), gate});  // gated store
  UOp iff = make(Ops::IF, dtypes::void_, {gate});
  UOp st2 = buf.index(gidx).store({cf(1.0), iff});
  UOp local = make(Ops::DEFINE_LOCAL, f32.ptr(4, true), {}, std::string("temp0"));
  UOp lst = local.index(gidx).store({cf(2.0)});
  UOp bar = make(Ops::BARRIER, dtypes::void_, {lst});
  UOp lld = local.index(gidx).load({bar});
  UOp st3 = buf.index(gidx).store({lld});
  std::vector<UOp> uops = UOp::sink({st, st2, st3}).toposort();
  uops.push_back(make(Ops::ENDIF, dtypes::void_, {iff}));
  uops.push_back(make(Ops::NOOP, dtypes::void_));
  uops.push_back(make(Ops::CUSTOM, i32, {}, std::string("__builtin_trap()")));
  EXPECT_EQ(verify_error(uops), "");
}

TEST(Spec, ExtraSpecIsAskedFirst) {
  UOp copy = make(Ops::COPY, f32, {cf(1.0)});
  EXPECT_NE(verify_error({copy}), "");
  static const SpecMatcher extra{{op(Ops::COPY), [](M) -> std::optional<bool> { return true; }}};
  EXPECT_NO_THROW(type_verify(std::vector<UOp>{copy}, &extra));
  static const SpecMatcher strict{{op(Ops::CONST), [](M) -> std::optional<bool> { return false; }}};
  EXPECT_THROW(type_verify(cf(1.0), &strict), Error);
}

// *** malformed UOps: each is an Error that names the op and what is wrong ***

struct BadCase {
  const char* what;
  UOp u;
  std::vector<std::string> in_message;
};

TEST(Spec, MalformedUOps) {
  UOp r = range(16, 0), idx = global(0).index(r), fv = cf(1.0), iv = ci(1);
  const BadCase cases[] = {
      {"ADD of int and float",
       make(Ops::ADD, f32, {iv, fv}),
       {"Ops.ADD dtypes.float 2 [Ops.CONST, Ops.CONST]", "[dtypes.int, dtypes.float]", "output's dtype"}},
      {"CMPLT that is not bool", make(Ops::CMPLT, i32, {iv, iv}), {"Ops.CMPLT dtypes.int", "give bool"}},
      {"CMPNE of two dtypes", make(Ops::CMPNE, dtypes::bool_, {iv, fv}), {"Ops.CMPNE dtypes.bool", "rejected by"}},
      {"WHERE with an int condition", make(Ops::WHERE, f32, {iv, fv, fv}), {"Ops.WHERE", "bool condition"}},
      {"WHERE of mixed values", make(Ops::WHERE, f32, {UOp::const_(dtypes::bool_, true), fv, iv}), {"Ops.WHERE"}},
      {"IDIV on floats", make(Ops::IDIV, f32, {fv, fv}), {"Ops.IDIV dtypes.float", "ints only"}},
      {"MOD on floats", make(Ops::MOD, f32, {fv, fv}), {"Ops.MOD dtypes.float"}},
      {"SHL by a float", make(Ops::SHL, i32, {iv, fv}), {"Ops.SHL dtypes.int", "distance"}},
      {"CONST float with an int arg",
       make(Ops::CONST, f32, {}, ConstValue(int64_t(1))),
       {"Ops.CONST dtypes.float 0 [] 1", "float for floats"}},
      {"CONST int with a float arg", make(Ops::CONST, i32, {}, ConstValue(1.0)), {"Ops.CONST dtypes.int 0 [] 1.0"}},
      {"CONST bool with an int arg",
       make(Ops::CONST, dtypes::bool_, {}, ConstValue(int64_t(1))),
       {"Ops.CONST dtypes.bool"}},
      {"VCONST with too few values", make(Ops::VCONST, f32.vec(4), {}, Tuple{1.0, 2.0}), {"Ops.VCONST", "per lane"}},
      {"BITCAST to another size", make(Ops::BITCAST, dtypes::half, {fv}), {"Ops.BITCAST dtypes.half", "byte size"}},
      {"CAST with an arg", make(Ops::CAST, i32, {fv}, ConstValue(int64_t(1))), {"Ops.CAST dtypes.int", "no arg"}},
      {"GEP of the wrong dtype",
       make(Ops::GEP, i32, {make(Ops::VECTORIZE, f32.vec(2), {fv, fv})}, Tuple{int64_t(0)}),
       {"Ops.GEP dtypes.int", "scalar"}},
      {"VECTORIZE with a wrong count", make(Ops::VECTORIZE, f32.vec(4), {fv, fv, fv}), {"Ops.VECTORIZE", ".vec(n)"}},
      {"VECTORIZE of one", make(Ops::VECTORIZE, f32, {fv}), {"Ops.VECTORIZE dtypes.float 1"}},
      {"DEFINE_GLOBAL of a value",
       make(Ops::DEFINE_GLOBAL, f32, {}, ConstValue(int64_t(0))),
       {"Ops.DEFINE_GLOBAL dtypes.float", "global pointer"}},
      {"DEFINE_GLOBAL that is local",
       make(Ops::DEFINE_GLOBAL, f32.ptr(4, true), {}, ConstValue(int64_t(0))),
       {"Ops.DEFINE_GLOBAL dtypes.float.ptr(4, local=True)"}},
      {"DEFINE_LOCAL that is global",
       make(Ops::DEFINE_LOCAL, f32.ptr(4), {}, std::string("temp0")),
       {"Ops.DEFINE_LOCAL dtypes.float.ptr(4)", "local pointer"}},
      {"DEFINE_ACC over a non-RANGE", make(Ops::DEFINE_ACC, f32, {fv, iv}, Tuple{int64_t(0)}), {"Ops.DEFINE_ACC"}},
      {"DEFINE_ACC of another dtype", make(Ops::DEFINE_ACC, f32, {iv, r}, Tuple{int64_t(0)}), {"Ops.DEFINE_ACC"}},
      {"DEFINE_VAR with float bounds",
       make(Ops::DEFINE_VAR, i32, {}, VarArg{"a", 0.5, 2.0}),
       {"Ops.DEFINE_VAR dtypes.int 0 [] ('a', 0.5, 2.0)", "int bounds"}},
      {"RANGE of another dtype",
       make(Ops::RANGE, dtypes::int64, {iv}, ConstValue(int64_t(0))),
       {"Ops.RANGE dtypes.long"}},
      {"RANGE with a float arg",
       make(Ops::RANGE, i32, {iv}, ConstValue(0.5)),
       {"Ops.RANGE dtypes.int 1 [Ops.CONST] 0.5"}},
      {"STORE that is not void", make(Ops::STORE, f32, {idx, fv}), {"Ops.STORE dtypes.float", "STORE is void"}},
      {"STORE to a value",
       make(Ops::STORE, dtypes::void_, {fv, fv}),
       {"Ops.STORE dtypes.void 2 [Ops.CONST, Ops.CONST]"}},
      {"LOAD with an alt of another dtype", make(Ops::LOAD, f32, {idx, iv}), {"Ops.LOAD dtypes.float", "rejected by"}},
      {"INDEX into a value", make(Ops::INDEX, f32, {fv, r}), {"Ops.INDEX dtypes.float"}},
      {"INDEX with an int gate", make(Ops::INDEX, f32.ptr(16), {global(0), r, iv}), {"Ops.INDEX"}},
      {"ENDIF of a non-IF", make(Ops::ENDIF, dtypes::void_, {iv}), {"Ops.ENDIF"}},
      {"IF that is not void", make(Ops::IF, dtypes::bool_, {UOp::const_(dtypes::bool_, true)}), {"Ops.IF dtypes.bool"}},
      {"SINK that is not void", make(Ops::SINK, f32, {}), {"Ops.SINK dtypes.float"}},
      {"REDUCE_AXIS with SUB", make(Ops::REDUCE_AXIS, f32, {fv}, ReduceArg{Ops::SUB, {0}}), {"Ops.REDUCE_AXIS"}},
      {"a tensor-level op", make(Ops::COPY, f32, {fv}), {"Ops.COPY", "no rule accepts it", "no rule for this op"}},
  };
  for (auto& c : cases) {
    std::string msg = verify_error({c.u});
    EXPECT_EQ(msg.rfind("UOp verification failed at 0 on ", 0), 0u) << c.what << ": " << msg;
    for (auto& want : c.in_message) EXPECT_NE(msg.find(want), std::string::npos) << c.what << ": " << msg;
  }
}

TEST(Spec, ErrorNamesThePositionAndRule) {
  UOp bad = make(Ops::ADD, f32, {ci(1), cf(2.0)});
  std::vector<UOp> uops = UOp::sink({global(0).index(ci(0)).store({bad})}).toposort();
  std::string msg = verify_error(uops);
  // toposort: DEFINE_GLOBAL, CONST 0, INDEX, CONST 1, CONST 2.0, ADD, ...
  EXPECT_NE(msg.find("UOp verification failed at 5 on Ops.ADD dtypes.float 2 [Ops.CONST, Ops.CONST] None: "
                     "src dtypes [dtypes.int, dtypes.float]: rejected by the rule at spec.cpp:"),
            std::string::npos)
      << msg;
}

TEST(Spec, IndexBounds) {
  // without z3 bounds are only checked on request (IGNORE_OOB=0), from vmin/vmax
  UOp oob = global(0, 16).index(range(32, 0)), inb = global(0, 16).index(range(16, 0));
  EXPECT_EQ(verify_error({oob}), "");
  std::string msg;
  {
    Context ctx{{"IGNORE_OOB", 0}};
    msg = verify_error({oob});
    EXPECT_EQ(verify_error({inb}), "");
    EXPECT_EQ(verify_error({global(0, -1).index(range(32, 0))}), "");  // unsized buffers are not checked
  }
  EXPECT_NE(msg.find("Ops.INDEX dtypes.float.ptr(16) 2 [Ops.DEFINE_GLOBAL, Ops.RANGE]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("in bounds"), std::string::npos) << msg;
}

TEST(Spec, RulesCoverTheCodegenOps) {
  // every rule root is indexed; spot-check the number of rules and that the matcher answers without throwing
  EXPECT_GE(spec().rules().size(), 40u);
  for (Ops o : {Ops::ADD, Ops::SINK, Ops::NOOP, Ops::BARRIER})
    EXPECT_NO_THROW(spec().rewrite(make(o, o == Ops::ADD ? f32 : dtypes::void_,
                                        o == Ops::ADD ? std::vector<UOp>{cf(1), cf(2)} : std::vector<UOp>{})));
}
