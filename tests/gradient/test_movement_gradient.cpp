// Backward through the [movement] group's ops (tensor_movement.cpp, tensor_index.cpp) against central finite
// differences in float64. Sort and topk inputs have distinct values, so a nudge never reorders them.
#include <gtest/gtest.h>

#include <functional>

#include "../tensor/gradcheck.h"
#include "tg/tensor/tensor.h"

using namespace tg;
using tg::test::expect_grad_matches;
using Ts = const std::vector<Tensor>&;

namespace {

const std::vector<double> k6{0.3, -1.2, 2.5, 0.7, -0.4, 1.9};  // distinct; small: each element costs two runs
const Shape s23{2, 3};

struct Case {
  const char* name;
  std::function<Tensor(const Tensor&)> f;
};

void check_all(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto f = c.f;
    expect_grad_matches([f](Ts x) { return f(x[0]); }, {k6}, {s23});
  }
}

}  // namespace

TEST(MovementGradient, ReshapesPadsAndRepeats) {
  check_all({
      {"view",
       [](const Tensor& x) {
         return x.view({3, 2}) * Tensor::arange(2).cast(dtypes::float64);
       }},
      {"pad reflect",
       [](const Tensor& x) {
         return x.pad({{1, 1}, {2, 1}}, "reflect");
       }},
      {"pad replicate",
       [](const Tensor& x) {
         return x.pad({{1, 2}, {-1, 2}}, "replicate");
       }},
      {"pad circular",
       [](const Tensor& x) {
         return x.pad({{2, 0}, {1, 3}}, "circular");
       }},
      {"pad constant",
       [](const Tensor& x) {
         return x.pad({{1, -1}, {0, 2}}, "constant", 2.5);
       }},
      {"repeat",
       [](const Tensor& x) {
         return x.repeat({2, 1, 2});
       }},
      {"repeat_interleave", [](const Tensor& x) { return x.repeat_interleave(2, 1); }},
      {"roll",
       [](const Tensor& x) {
         return x.roll({1, -2}, {0, 1});
       }},
      {"unfold", [](const Tensor& x) { return x.unfold(1, 2, 1); }},
      {"unfold strided", [](const Tensor& x) { return x.unfold(1, 1, 2); }},
      {"rearrange",
       [](const Tensor& x) {
         return x.rearrange("a (b c) -> c (b a)", {{"b", 3}});
       }},
      {"triu", [](const Tensor& x) { return x.triu(1); }},
      {"tril", [](const Tensor& x) { return x.tril(-1); }},
      {"split",
       [](const Tensor& x) {
         std::vector<Tensor> p = x.split({1, 2}, 1);
         return p[1] * p[0];
       }},
      {"chunk",
       [](const Tensor& x) {
         std::vector<Tensor> p = x.chunk(2, 0);
         return p[0].sum(0) + p[1].sum(0) * 2;
       }},
      {"meshgrid",
       [](const Tensor& x) {
         std::vector<Tensor> g = Tensor::meshgrid({x.flatten().shrink({{0, 3}}), x.flatten().shrink({{3, 5}})}, "xy");
         return g[0] * g[1];
       }},
  });
}

TEST(MovementGradient, Indexing) {
  check_all({
      {"ints and slices",
       [](const Tensor& x) {
         return x.index({Slice{.step = -2}, None, Slice{2, 0, -1}});
       }},
      {"int", [](const Tensor& x) { return x[1]; }},
      {"index tensor",
       [](const Tensor& x) {
         return x.index({Tensor({1, 0, 1, -1})});
       }},  // row 1 three times: grads add
      {"two index tensors",
       [](const Tensor& x) {
         return x.index({Tensor(std::vector<int>{1, 0}, {2, 1}), Tensor({2, 0, 2})});
       }},
      {"out of range index",
       [](const Tensor& x) {
         return x.index({Slice{}, Tensor({5, 1})});
       }},
      {"gather",
       [](const Tensor& x) {
         return x.gather(1, Tensor(std::vector<int>{2, 0, 0, 1}, {2, 2}));
       }},
      {"masked_select",
       [](const Tensor& x) {
         return x.masked_select(Tensor({true, false, true}));
       }},
  });
}

TEST(MovementGradient, ScatterToSelfAndSource) {
  Tensor idx = Tensor(std::vector<int>{1, 0, 1, 1}, {2, 2});  // along dim 0 of a (2, 3): column 0 gets two
  const std::vector<double> src{0.4, -0.8, 1.3, 2.1};
  for (const char* mode : {"scatter", "sum", "mean", "prod", "amax", "amin"})
    for (bool include_self : {true, false}) {
      SCOPED_TRACE(std::string(mode) + (include_self ? " include_self" : ""));
      std::string m = mode;
      expect_grad_matches(
          [&](Ts x) {
            return m == "scatter" ? x[0].scatter(0, idx, x[1]) : x[0].scatter_reduce(0, idx, x[1], m, include_self);
          },
          {k6, src}, {s23, {2, 2}});
      if (m == "scatter" || m == "prod" || m == "amin") break;  // include_self=false: sum, mean, amax
    }
}

TEST(MovementGradient, SortAndTopkValues) {
  check_all({
      {"sort", [](const Tensor& x) { return x.sort(1).first; }},
      {"sort descending dim 0", [](const Tensor& x) { return x.sort(0, true).first; }},
      {"topk", [](const Tensor& x) { return x.topk(2, {.dim = 1}).first; }},
      {"topk smallest", [](const Tensor& x) { return x.topk(1, {.dim = 0, .largest = false}).first; }},
  });
}
