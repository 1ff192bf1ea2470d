// The reference's two DEBUG-level programs (reference/golden/debug/t347.py and mm_relu_sum.py) in C++:
//
//   debug_programs t347          t = Tensor([1,2,3,4]); (t+3+4).realize()
//   debug_programs mm_relu_sum   a 4x4 @ 4x4 matmul, .relu().sum(), print(.item())  -> 81.5
//
// Run with CPU=1 and DEBUG=1..6 (or NOOPT=1 DEBUG=2/4): the output matches the golden transcripts once pids and
// timings are masked (tests/debug, label debug).
#include <cstdlib>
#include <iostream>
#include <string_view>
#include <vector>

#include "tg/helpers/helpers.h"
#include "tg/tensor/tensor.h"

using namespace tg;

static void t347() {
  Tensor t({1, 2, 3, 4});
  (t + 3 + 4).realize();
}

static void mm_relu_sum() {
  Tensor a(std::vector<float>{1., -2., 3., -4., 5., 6., -7., 8., -1., 2., 3., 4., 0.5, -0.5, 1.5, -1.5}, {4, 4});
  Tensor b(std::vector<float>{1., 0., 2., -1., 0., 1., -1., 2., 3., -2., 0., 1., 1., 1., 1., 1.}, {4, 4});
  // Python's a @ b calls Tensor.__matmul__, the outermost method, so its kernel lists '__matmul__'; the C++
  // a.matmul(b) would record 'matmul' (Tensor.matmul's own name). The outermost scope names the nodes, so this
  // scope makes the metadata the reference's.
  Tensor mm = [&] {
    MetadataScope m("__matmul__");
    return a.matmul(b);
  }();
  Tensor out = mm.relu().sum();
  std::cout << py_float_repr(static_cast<double>(out.item<float>())) << "\n";
}

int main(int argc, char** argv) {
  std::string_view which = argc > 1 ? argv[1] : "";
  if (which == "t347")
    t347();
  else if (which == "mm_relu_sum")
    mm_relu_sum();
  else {
    std::cerr << "usage: debug_programs t347|mm_relu_sum\n";
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}
