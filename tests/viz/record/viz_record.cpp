// viz_record MODE TRACE: runs a small program with VIZ=-1 and its trace written to TRACE, for the explorer's tests
//   t347  the tutorial's Tensor([1, 2, 3, 4]) + 3 + 4, realized and read back
//   big   one rewrite step over a graph of about 10,000 nodes, with a few rewrites
//   throw a context whose rewrite throws half way (the trace keeps what ran)
#include <cstdlib>
#include <iostream>
#include <string>

#include "tg/uop/symbolic.h"
#include "tg/uop/trace.h"
#include "tinygrad/tinygrad.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: viz_record t347|big|throw TRACE\n";
    return 2;
  }
  using tg::UOp;
  const std::string mode = argv[1];
  // VIZ_OFF=1: the same program without VIZ; VIZ_COUNT_NODES=1: print how many UOps are alive at the end
  if (std::getenv("VIZ_OFF") == nullptr) {
    ::setenv("VIZ", "-1", 1);
    ::setenv("VIZ_TRACE", argv[2], 1);
  }
  try {
    if (mode == "t347") {
      tg::Tensor t = tg::Tensor({1, 2, 3, 4});
      tg::Tensor r = t + 3 + 4;  // the temporary t + 3 is gone, as in python
      for (int v : r.tolist<int>()) std::cout << v << " ";
      std::cout << "\n";
    } else if (mode == "big") {
      tg::trace::TrackedContext ctx("big graph");
      // 2,500 terms (v_i * 3 + i + 1), multiplied pairwise: about 10,000 nodes drawn (the consts go into labels);
      // four terms carry a "* 1" to fold
      std::vector<UOp> terms;
      for (int i = 0; i < 2500; i++) {
        UOp v = UOp::variable("v" + std::to_string(i), 0, 100);
        UOp t = v * 3 + (i + 1);
        if (i % 700 == 0) t = t * 1;
        terms.push_back(t);
      }
      while (terms.size() > 1) {
        std::vector<UOp> next;
        for (size_t i = 0; i + 1 < terms.size(); i += 2) next.push_back(terms[i] * terms[i + 1]);
        if (terms.size() % 2) next.push_back(terms.back());
        terms = std::move(next);
      }
      UOp r = tg::graph_rewrite(UOp::sink({terms[0]}), tg::symbolic_simple(), {.name = "fold x*1"});
      std::cout << "nodes " << r.toposort().size() << "\n";
    } else if (mode == "throw") {
      tg::trace::TrackedContext ctx("throws");
      static const tg::PatternMatcher<tg::UOp> pm = {
          {tg::pat::x * 1, tg::pat::x},
          {tg::op(tg::Ops::SINK).named("s"), [](tg::M) -> tg::UOp { throw tg::Error("a rule that throws"); }},
      };
      UOp a = UOp::variable("a", 0, 10);
      try {
        tg::graph_rewrite(UOp::sink({a * 1}), pm, {.name = "throwing rewrite"});
      } catch (const tg::Error& e) {
        std::cout << "caught: " << e.what() << "\n";
      }
      tg::graph_rewrite(UOp::sink({a * 1}), tg::symbolic_simple(), {.name = "after the throw"});
    } else {
      std::cerr << "viz_record: unknown mode " << mode << "\n";
      return 2;
    }
  } catch (const std::exception& e) {
    std::cerr << "viz_record: " << e.what() << "\n";
    return 1;
  }
  if (std::getenv("VIZ_COUNT_NODES") != nullptr) std::cout << "live uops " << tg::uop_intern_count() << "\n";
  return 0;
}
