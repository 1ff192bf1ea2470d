// The tutorial ("Introduction to Tinygrad", seed/tutorial.txt), every section in C++, in order.
//
//   tutorial            all sections in one process, as reference/golden/tutorial/tutorial_full.py; a line
//                       "##### <section>" goes to stderr before each section (stdout flushed first), as there
//   tutorial sNN        one section in a fresh process, its earlier state rebuilt by a prelude, as the golden
//                       sNN_*.py scripts (s01 .. s13, and s11b: three (4,) kernels in one process, named E_4n2)
//
// The tests (label tutorial, examples/CMakeLists.txt) compare the output with the reference's transcripts, copied to
// tests/data/tutorial. Run with CPU=1; s11 and s11b print their kernels with DEBUG=2 or DEBUG=4 (and NOOPT=1).
#include <tinygrad/tinygrad.h>

#include <cstdlib>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tg/codegen/pipeline.h"
#include "tg/runtime/device.h"
#include "tg/schedule/grouper.h"
#include "tg/tensor/tensor.h"

using namespace tg;

namespace {

// "##### <section>" on stderr (stdout flushed first) when all sections run in one process, as the golden
// tutorial_full.annotated.out; nothing when one section runs alone
std::function<void(const char*)> mark = [](const char*) {};

// what the sections share when they run in one process (the Python session's globals)
struct Session {
  std::optional<Tensor> t, t_plus_3_plus_4;
  std::optional<UOp> a_plus_b;
  bool standalone = false;  // one section in a fresh process: rebuild the state it needs (the golden's PRELUDE lines)
};

// Python's print(float(x)): the shortest repr of the value as a double
void print_item(float v) { std::cout << py_float_repr(static_cast<double>(v)) << "\n"; }

// print(list_of_ints)
void print_list(const std::vector<int>& v) {
  std::cout << "[";
  for (size_t i = 0; i < v.size(); i++) std::cout << (i ? ", " : "") << v[i];
  std::cout << "]\n";
}

// *** 01 The Tensor ***

void s01_tensor(Session& s) {
  Tensor t({1, 2, 3, 4});
  std::cout << t << "\n";

  // basic operations work as expected
  Tensor doubled = t * 2;
  print_list(doubled.tolist<int>());  // [2, 4, 6, 8]

  // more complex operations
  Tensor result = t + 3 + 4;
  print_list(result.tolist<int>());  // [8, 9, 10, 11] (the tutorial's comment says [8, 10, 12, 14])
  s.t = t;
}

// *** 02 The Devices ***

void s02_devices(Session&) {
  std::cout << Device::DEFAULT << "\n";  // CPU with CPU=1 (on Apple Silicon: METAL)

  mark("02 The Devices (b)");

  Device::DEFAULT = "CPU";
  std::cout << Device::DEFAULT << "\n";  // CPU
}

// *** 03 Lazy Evaluation ***

void s03_lazy(Session& s) {
  Tensor t({1, 2, 3, 4});

  // examine the tensor properties
  TG_ASSERT(t.device() == Device::DEFAULT.str(), "t is not on the default device");
  TG_ASSERT(t.dtype() == dtypes::int32, "t is not an int tensor");
  TG_ASSERT(t.shape() == Shape{4}, "t does not have shape (4,)");

  std::cout << t << "\n";  // <Tensor <UOp CPU (4,) int (<Ops.COPY: 7>, None)> on CPU with grad None>
  s.t = t;
}

// *** 04 The UOP ***

void s04_uop(Session& s) {
  if (s.standalone) s.t = Tensor({1, 2, 3, 4});  // PRELUDE
  std::cout << s.t->uop() << "\n";
}

// *** 05 Realization ***

void s05_realize(Session& s) {
  if (s.standalone) s.t = Tensor({1, 2, 3, 4});  // PRELUDE
  s.t->realize();
  std::cout << s.t->uop() << "\n";
}

// *** 06 Operations build computation graphs ***

void s06_graph(Session& s) {
  if (s.standalone) s.t = Tensor({1, 2, 3, 4}).realize();  // PRELUDE (the tutorial shows t already realized)
  Tensor t_times_2 = *s.t * 2;
  std::cout << t_times_2.uop() << "\n";

  mark("06 Operations build computation graphs (b)");
  TG_ASSERT((t_times_2.tolist<int>() == std::vector<int>{2, 4, 6, 8}), "t*2 is not [2, 4, 6, 8]");
}

// *** 07 Smart Deduplication ***

void s07_dedup(Session& s) {
  if (s.standalone) s.t = Tensor({1, 2, 3, 4}).realize();  // PRELUDE
  Tensor A = *s.t * 4;
  Tensor B = *s.t * 4;

  // different Tensor objects, the same computational specification: one UOp node
  TG_ASSERT(A.uop().get() == B.uop().get(), "A and B do not share their UOp");

  mark("07 Smart Deduplication (b)");

  A.realize();

  // both tensors now point to the same realized buffer
  TG_ASSERT(A.uop().get() == B.uop().get(), "A and B do not share their buffer after realize");

  print_list(B.tolist<int>());  // [4, 8, 12, 16] - no computation needed
}

// *** 08 Automatic Differentiation ***

void s08_autodiff(Session&) {
  Tensor x = Tensor({2.0f}, {.requires_grad = true});
  Tensor y = x.pow(x.scalar_like(to_const(2))) + 3 * x + 1;  // x**2 + 3*x + 1
  Tensor loss = y.sum();

  print_item(x.item<float>());  // 2.0
  print_item(y.item<float>());  // 4 + 6 + 1 = 11.0

  mark("08 Automatic Differentiation (b)");
  Tensor grad = loss.gradient({x})[0];  // grad, = loss.gradient(x)
  print_item(grad.item<float>());       // 7.0
}

// *** 09 Chain Rule ***

void s09_chain(Session&) {
  Tensor x = Tensor({2.0f}, {.requires_grad = true});
  Tensor z = (x.pow(x.scalar_like(to_const(2))) + 1).log();  // (x**2 + 1).log()
  Tensor loss = z.sum();

  print_item(x.item<float>());  // 2.0
  print_item(z.item<float>());  // log(2^2 + 1) = log(5) = 1.6094378232955933

  mark("09 Chain Rule (b)");
  Tensor grad = loss.gradient({x})[0];  // grad, = loss.gradient(x)
  print_item(grad.item<float>());       // 0.800000011920929
}

// *** 10 Graph Optimization and Kernel Generation ***

void s10_kernelize(Session& s) {
  Tensor t({1, 2, 3, 4});
  Tensor t_plus_3_plus_4 = t + 3 + 4;
  std::cout << t_plus_3_plus_4.uop() << "\n";  // shows the addition of 3 and 4 separately

  mark("10 Graph Optimization (b) kernelize");
  t_plus_3_plus_4.kernelize();
  std::cout << t_plus_3_plus_4.uop() << "\n";  // ASSIGN(BUFFER, KERNEL(...)): +3+4 is still two ADDs

  mark("10 Graph Optimization (c) kernel AST + full_rewrite_to_sink");
  UOp kernel_ast = get_kernel(t_plus_3_plus_4.uop().src(1)).ast;
  // no renderer: the generic Renderer() (has_local, so a SPECIAL gidx0 index); here 3+4 folds to 7
  UOp rewritten_ast = full_rewrite_to_sink(kernel_ast);
  std::cout << rewritten_ast << "\n";
  s.t = t;
  s.t_plus_3_plus_4 = t_plus_3_plus_4;
}

// *** 11 Generated Code: realizing t+3+4 compiles E_4 (see it with DEBUG=4, and NOOPT=1 DEBUG=4) ***

void s11_generated_code(Session& s) {
  if (s.standalone) {
    Tensor t({1, 2, 3, 4});
    s.t_plus_3_plus_4 = t + 3 + 4;
  }
  s.t_plus_3_plus_4->realize();
}

// the tutorial's name E_4n2: the third distinct (4,) int kernel of the process (s11b_generated_code_n2.py)
void s11b_generated_code_n2(Session&) {
  Tensor t = Tensor({1, 2, 3, 4}).realize();
  (t * 2).realize();      // E_4
  (t * 4).realize();      // E_4n1
  (t + 3 + 4).realize();  // E_4n2
}

// *** 12 Low-Level UOp Construction ***

void s12_lowlevel_uop(Session& s) {
  // create constant UOps
  UOp a = UOp::make(Ops::CONST, dtypes::int32, {}, ConstValue{int64_t{2}});
  UOp b = UOp::make(Ops::CONST, dtypes::int32, {}, ConstValue{int64_t{2}});

  // global uniqueness: same specifications = same object
  TG_ASSERT(a.get() == b.get(), "hash-consing gave two nodes for one UOp");

  // construct computation
  UOp a_plus_b = a + b;
  std::cout << a_plus_b << "\n";
  s.a_plus_b = a_plus_b;
}

// *** 13 Pattern Matching and Graph Rewriting ***

void s13_pattern(Session& s) {
  if (s.standalone) s.a_plus_b = UOp::const_(dtypes::int32, 2) + UOp::const_(dtypes::int32, 2);  // PRELUDE

  // define a constant folding pattern: UOp(Ops.CONST, dtype=c1.dtype, arg=c1.arg+c2.arg)
  PatternMatcher<UOp> simple_pm{
      {op(Ops::ADD, {op(Ops::CONST).named("c1"), op(Ops::CONST).named("c2")}),
       [](M m) {
         UOp c1 = m["c1"], c2 = m["c2"];
         return UOp::make(Ops::CONST, c1.dtype(), {}, exec_alu(Ops::ADD, c1.dtype(), {c1.const_arg(), c2.const_arg()}));
       }},
  };

  // apply the pattern
  UOp a_plus_b_simplified = graph_rewrite(*s.a_plus_b, simple_pm);
  std::cout << a_plus_b_simplified << "\n";  // UOp(Ops.CONST, dtypes.int, arg=4, src=())

  mark("12 Pattern Matching (b) sugar");
  // the same rule with UPat.cvar and const_like
  PatternMatcher<UOp> simpler_pm{
      {pat::c1 + pat::c2,
       [](M m) {
         return m[pat::c1].const_like(
             exec_alu(Ops::ADD, m[pat::c1].dtype(), {m[pat::c1].const_arg(), m[pat::c2].const_arg()}));
       }},
  };
  TG_ASSERT(graph_rewrite(*s.a_plus_b, simple_pm) == graph_rewrite(*s.a_plus_b, simpler_pm),
            "the two matchers disagree");
}

}  // namespace

int main(int argc, char** argv) {
  std::string_view only = argc > 1 ? argv[1] : "";
  Session s;
  s.standalone = !only.empty();
  if (!s.standalone)
    mark = [](const char* name) {
      std::cout << std::flush;
      std::cerr << "##### " << name << "\n" << std::flush;
    };

  struct Section {
    std::string_view id;
    std::function<void()> run;
  };
  const std::vector<Section> sections = {
      {"s01",
       [&] {
         mark("01 The Tensor");
         s01_tensor(s);
       }},
      {"s02",
       [&] {
         mark("02 The Devices (a)");
         s02_devices(s);
       }},
      {"s03",
       [&] {
         mark("03 Lazy Evaluation");
         s03_lazy(s);
       }},
      {"s04",
       [&] {
         mark("04 The UOP");
         s04_uop(s);
       }},
      {"s05",
       [&] {
         mark("05 Realization");
         s05_realize(s);
       }},
      {"s06",
       [&] {
         mark("06 Operations build computation graphs (a)");
         s06_graph(s);
       }},
      {"s07",
       [&] {
         mark("07 Smart Deduplication (a)");
         s07_dedup(s);
       }},
      {"s08",
       [&] {
         mark("08 Automatic Differentiation (a)");
         s08_autodiff(s);
       }},
      {"s09",
       [&] {
         mark("09 Chain Rule (a)");
         s09_chain(s);
       }},
      {"s10",
       [&] {
         mark("10 Graph Optimization (a) t+3+4");
         s10_kernelize(s);
       }},
      {"s11", [&] { s11_generated_code(s); }},  // no marker: the golden script has no section here
      {"s11b", [&] { s11b_generated_code_n2(s); }},
      {"s12",
       [&] {
         mark("11 Low-Level UOP Construction");
         s12_lowlevel_uop(s);
       }},
      {"s13",
       [&] {
         mark("12 Pattern Matching (a)");
         s13_pattern(s);
       }},
  };
  for (const Section& sec : sections) {
    if (only.empty() ? sec.id == "s11b" : sec.id != only) continue;
    sec.run();
    if (!only.empty()) return EXIT_SUCCESS;
  }
  if (!only.empty()) {
    std::cerr << "unknown section " << only << " (s01 .. s13, s11b)\n";
    return EXIT_FAILURE;
  }
  mark("END");
  return EXIT_SUCCESS;
}
