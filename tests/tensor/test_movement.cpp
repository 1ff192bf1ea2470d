// High-level movement and indexing (tensor_movement.cpp, tensor_index.cpp), each against a plain reference written
// as loops over the elements: padding modes, repeats, splits, unfold, roll, rearrange, gather/scatter, sort/topk,
// triangles, and indexing with ints, slices of any step, None, ellipsis and index tensors, and setitem.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>

#include "tg/runtime/device.h"
#include "tg/tensor/tensor.h"

using namespace tg;

namespace {

struct Movement : ::testing::Test {
  void SetUp() override { Device::DEFAULT = "CPU"; }
};

// a row-major array of doubles: the plain reference the tensors are checked against
struct Arr {
  Shape shape;
  std::vector<double> v;
  static Arr iota(const Shape& s, double start = 0) {
    Arr a{s, std::vector<double>(static_cast<size_t>(prod(s)))};
    std::iota(a.v.begin(), a.v.end(), start);
    return a;
  }
  size_t flat(const std::vector<int64_t>& idx) const {
    size_t f = 0;
    for (size_t i = 0; i < shape.size(); i++) f = f * static_cast<size_t>(shape[i]) + static_cast<size_t>(idx[i]);
    return f;
  }
  double at(const std::vector<int64_t>& idx) const { return v[flat(idx)]; }
  Tensor tensor(DType dt = dtypes::float32) const { return Tensor(v, shape, {.dtype = dt}); }
};

// out[idx] = f(idx) over every index of `shape`, row-major
Arr build(const Shape& shape, const std::function<double(const std::vector<int64_t>&)>& f) {
  Arr a{shape, {}};
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t n = 0; n < prod(shape); n++) {
    a.v.push_back(f(idx));
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; d--) {
      if (++idx[static_cast<size_t>(d)] < shape[static_cast<size_t>(d)]) break;
      idx[static_cast<size_t>(d)] = 0;
    }
  }
  return a;
}

std::vector<double> values(const Tensor& t) { return t.cast(dtypes::float64).tolist<double>(); }

void expect_arr(const Tensor& t, const Arr& want, const std::string& what = "") {
  ASSERT_EQ(t.shape(), want.shape) << what << ": shape " << shape_str(t.shape()) << " vs " << shape_str(want.shape);
  EXPECT_EQ(values(t), want.v) << what;
}

// several checks with one realize (each kernel costs a compile): the tensors flattened and concatenated
struct Batch {
  std::vector<std::pair<Tensor, Arr>> cases;
  std::vector<std::string> names;
  void add(const Tensor& t, const Arr& want, const std::string& name = "") {
    EXPECT_EQ(t.shape(), want.shape) << name << ": shape " << shape_str(t.shape()) << " vs " << shape_str(want.shape);
    cases.push_back({t, want}), names.push_back(name);
  }
  ~Batch() {
    if (cases.empty()) return;
    std::vector<Tensor> flat;
    for (auto& c : cases) flat.push_back(c.first.cast(dtypes::float64).reshape({c.first.numel()}));
    std::vector<double> got = values(flat[0].cat(std::vector<Tensor>(flat.begin() + 1, flat.end())));
    size_t at = 0;
    for (size_t i = 0; i < cases.size(); i++) {
      const std::vector<double>& want = cases[i].second.v;
      std::vector<double> part(got.begin() + static_cast<std::ptrdiff_t>(at),
                               got.begin() + static_cast<std::ptrdiff_t>(std::min(got.size(), at + want.size())));
      EXPECT_EQ(part, want) << names[i];
      at += want.size();
    }
  }
};

template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}
#define EXPECT_ERROR(expr, text) EXPECT_NE(error_of([&] { (void)(expr); }).find(text), std::string::npos) << #expr

}  // namespace

// *** reshapes ***

TEST_F(Movement, ViewIsReshapeAndUnflattenInfersWithinTheDim) {
  Arr a = Arr::iota({2, 6});
  expect_arr(a.tensor().view({3, -1}), Arr{{3, 4}, a.v});
  EXPECT_EQ(a.tensor().unflatten(1, {2, 3}).shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(a.tensor().unflatten(-1, {-1, 2}).shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(Tensor::zeros({0, 6}).unflatten(1, {3, -1}).shape(), (Shape{0, 3, 2}));  // -1 from the dim, not the total
  EXPECT_ERROR(a.tensor().unflatten(1, {4, 2}), "size mismatched");
}

// *** padding modes ***

TEST_F(Movement, PadModesAgainstIndexMaps) {
  Arr a = Arr::iota({3, 4});
  // output k of a dim padded by (b, ...) reads source coordinate o = k - b, mapped into [0, n) by the mode
  std::map<std::string, std::function<int64_t(int64_t, int64_t)>> map = {
      {"reflect", [](int64_t o, int64_t n) { return o < 0    ? -o
                                                    : o >= n ? 2 * (n - 1) - o
                                                             : o; }},
      {"replicate", [](int64_t o, int64_t n) { return std::clamp<int64_t>(o, 0, n - 1); }},
      {"circular", [](int64_t o, int64_t n) { return ((o % n) + n) % n; }},
  };
  std::vector<Mask> pads = {{{1, 2}, {2, 1}}, {{0, 0}, {3, 3}}, {{2, 0}, {0, 1}}, {{-1, 2}, {1, -2}}};
  Batch b;
  for (auto& [mode, f] : map) {
    for (const Mask& p : pads) {
      if (mode == "circular" && (p[0].first < 0 || p[1].second < 0)) continue;
      Shape out{3 + p[0].first + p[0].second, 4 + p[1].first + p[1].second};
      auto& fm = f;
      Arr want = build(out, [&](auto& k) { return a.at({fm(k[0] - p[0].first, 3), fm(k[1] - p[1].first, 4)}); });
      b.add(a.tensor().pad(p, mode), want, mode);
    }
  }
  // constant mode with a value, and negative pads shrink
  Arr want = build({4, 3}, [&](auto& k) {
    int64_t i = k[0] - 1, j = k[1] + 1;
    return (i < 0 || i >= 3) ? -1.5 : a.at({i, j});
  });
  b.add(a.tensor().pad({{1, 0}, {-1, 0}}, "constant", -1.5), want);
}

TEST_F(Movement, PadModeErrors) {
  Tensor t = Tensor::ones({2, 3});
  EXPECT_ERROR(t.pad({{0, 0}, {3, 0}}, "reflect"), "should be less than the input size=3 for dim=1");
  EXPECT_ERROR(t.pad({{0, 0}, {4, 0}}, "circular"), "wraps around more than once");
  EXPECT_ERROR(t.pad({{0, 0}, {-1, 0}}, "circular"), "negative pads with circular");
  EXPECT_ERROR(t.pad({{0, 0}, {1, 0}}, "wrap"), "mode='wrap' is not supported");
  EXPECT_ERROR(t.pad({{1, 1}}, "reflect"), "padding length 1 must match ndim 2");
  EXPECT_ERROR(Tensor::ones({2, 0}).pad({{0, 0}, {1, 1}}, "replicate"), "dim 1 of size 0");
}

// *** repeats ***

TEST_F(Movement, RepeatTilesAndAddsLeadingDims) {
  Arr a = Arr::iota({2, 3});
  expect_arr(a.tensor().repeat({2, 1, 2}), build({2, 2, 6}, [&](auto& k) { return a.at({k[1] % 2, k[2] % 3}); }));
  EXPECT_EQ(a.tensor().repeat({0, 2}).shape(), (Shape{0, 6}));
  expect_arr(Tensor::full({}, 7.0).repeat({3}), Arr{{3}, {7, 7, 7}});
  EXPECT_ERROR(a.tensor().repeat({2}), "needs a count for each of the 2 dims");
}

TEST_F(Movement, RepeatInterleave) {
  Arr a = Arr::iota({2, 3});
  expect_arr(a.tensor().repeat_interleave(2, 1), build({2, 6}, [&](auto& k) { return a.at({k[0], k[1] / 2}); }));
  expect_arr(a.tensor().repeat_interleave(2), build({12}, [&](auto& k) { return a.v[static_cast<size_t>(k[0] / 2)]; }));
  EXPECT_EQ(a.tensor().repeat_interleave(0, 0).shape(), (Shape{0, 3}));
}

// *** splitting ***

TEST_F(Movement, SplitBySizeAndBySizes) {
  Arr a = Arr::iota({5, 2});
  std::vector<Tensor> parts = a.tensor().split(2);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[2].shape(), (Shape{1, 2}));
  expect_arr(parts[1], Arr{{2, 2}, {4, 5, 6, 7}});
  parts = a.tensor().split({1, 4});
  expect_arr(parts[0], Arr{{1, 2}, {0, 1}});
  EXPECT_EQ(parts[1].shape(), (Shape{4, 2}));
  parts = a.tensor().split({2, 0}, -1);
  EXPECT_EQ(parts[1].shape(), (Shape{5, 0}));
  EXPECT_ERROR(a.tensor().split({1, 3}), "expect sizes to sum exactly to 5, but got 4");
  EXPECT_ERROR(a.tensor().split(1, 2), "dim=2 out of range");
}

TEST_F(Movement, ChunkSizesAsTheReference) {
  auto sizes = [](int64_t n, int64_t chunks) {
    std::vector<sint> s;
    for (const Tensor& t : Tensor::arange(n).chunk(chunks)) s.push_back(t.shape()[0]);
    return s;
  };
  EXPECT_EQ(sizes(11, 6), (std::vector<sint>{2, 2, 2, 2, 2, 1}));
  EXPECT_EQ(sizes(12, 6), (std::vector<sint>{2, 2, 2, 2, 2, 2}));
  EXPECT_EQ(sizes(13, 6), (std::vector<sint>{3, 3, 3, 3, 1}));  // fewer chunks than asked
  EXPECT_EQ(Tensor::zeros({0, 2}).chunk(3).size(), 3u);
  EXPECT_ERROR(Tensor::arange(4).chunk(0), "expect chunks to be greater than 0");
}

TEST_F(Movement, UnfoldWindows) {
  struct Case {
    Shape shape;
    int64_t dim, size, step;
  };
  for (Case c : std::vector<Case>{{{8}, 0, 2, 2},
                                  {{8}, 0, 3, 1},
                                  {{7}, 0, 3, 2},
                                  {{5}, 0, 5, 1},
                                  {{5}, 0, 0, 2},
                                  {{7}, 0, 2, 4},
                                  {{3, 3, 3}, -1, 2, 3},
                                  {{2, 6, 3}, 1, 4, 1}}) {
    Arr a = Arr::iota(c.shape);
    size_t d = static_cast<size_t>(c.dim < 0 ? c.dim + static_cast<int64_t>(c.shape.size()) : c.dim);
    Shape out = c.shape;
    out[d] = (c.shape[d] - c.size) / c.step + 1;
    out.push_back(c.size);
    Arr want = build(out, [&](auto& k) {
      std::vector<int64_t> src(k.begin(), k.end() - 1);
      src[d] = k[d] * c.step + k.back();
      return a.at(src);
    });
    expect_arr(a.tensor().unfold(c.dim, c.size, c.step), want, shape_str(c.shape));
  }
  EXPECT_ERROR(Tensor::arange(4).unfold(0, 5, 1), "maximum size for tensor at dimension 0 is 4 but size is 5");
  EXPECT_ERROR(Tensor::arange(4).unfold(0, 2, 0), "step must be > 0");
}

TEST_F(Movement, Meshgrid) {
  Tensor x({1, 2, 3}), y({4, 5});
  std::vector<Tensor> ij = Tensor::meshgrid({x, y});
  expect_arr(ij[0], Arr{{3, 2}, {1, 1, 2, 2, 3, 3}});
  expect_arr(ij[1], Arr{{3, 2}, {4, 5, 4, 5, 4, 5}});
  std::vector<Tensor> xy = Tensor::meshgrid({x, y, Tensor({7})}, "xy");
  expect_arr(xy[0], Arr{{2, 3, 1}, {1, 2, 3, 1, 2, 3}});
  expect_arr(xy[1], Arr{{2, 3, 1}, {4, 4, 4, 5, 5, 5}});
  EXPECT_ERROR(Tensor::meshgrid({x, y}, "ji"), "indexing must be in");
}

// *** roll and rearrange ***

TEST_F(Movement, RollWrapsAround) {
  Arr a = Arr::iota({3, 4});
  auto want = [&](int64_t s0, int64_t s1) {
    return build({3, 4}, [&](auto& k) { return a.at({(((k[0] - s0) % 3) + 3) % 3, (((k[1] - s1) % 4) + 4) % 4}); });
  };
  expect_arr(a.tensor().roll(1, 0), want(1, 0));
  expect_arr(a.tensor().roll(-5, -1), want(0, -5));
  expect_arr(a.tensor().roll({2, 7}, {0, 1}), want(2, 7));
  EXPECT_EQ(Tensor::zeros({0, 2}).roll(3, 0).shape(), (Shape{0, 2}));
  EXPECT_ERROR(a.tensor().roll({1, 2}, {0}), "roll needs one shift per dim");
}

TEST_F(Movement, RearrangeLikeEinops) {
  Arr a = Arr::iota({2, 3, 4, 2});
  expect_arr(a.tensor().rearrange("b c h w -> b (c h w)"), Arr{{2, 24}, a.v});
  expect_arr(a.tensor().rearrange("b c h w -> w b h c"), build({2, 2, 4, 3}, [&](auto& k) {
               return a.at({k[1], k[3], k[2], k[0]});
             }));
  expect_arr(a.tensor().rearrange("b c (h1 h2) w -> b h1 (c h2 w)", {{"h1", 2}}), build({2, 2, 12}, [&](auto& k) {
               int64_t c = k[2] / 4, h2 = (k[2] / 2) % 2, w = k[2] % 2;
               return a.at({k[0], c, k[1] * 2 + h2, w});
             }));
  EXPECT_EQ(a.tensor().rearrange("... w -> w ...").shape(), (Shape{2, 2, 3, 4}));
  EXPECT_EQ(a.tensor().rearrange("b … h w -> (b …) 1 h w").shape(), (Shape{6, 1, 4, 2}));
  EXPECT_EQ(a.tensor().rearrange("b c h w -> b c 1 (h w)").shape(), (Shape{2, 3, 1, 8}));
  EXPECT_EQ(Tensor::zeros({2, 1, 8}).rearrange("b 1 x -> x b").shape(), (Shape{8, 2}));
}

TEST_F(Movement, RearrangeErrors) {
  Tensor t = Tensor::zeros({2, 3});
  EXPECT_ERROR(t.rearrange("a b"), "need exactly one \"->\"");
  EXPECT_ERROR(t.rearrange("a b -> a c"), "name mismatch");
  EXPECT_ERROR(t.rearrange("a (b -> a b"), "bracket mismatch");
  EXPECT_ERROR(t.rearrange("a _b -> a _b"), "invalid axis name _b");
  EXPECT_ERROR(t.rearrange("a b c -> a b c"), "describes 3 dims but the shape is (2, 3)");
  EXPECT_ERROR(t.rearrange("a b -> b a", {{"c", 2}}), "axis c is not used");
  EXPECT_ERROR(t.rearrange("a b -> b a", {{"a", 3}}), "size 3 provided for dimension a is incorrect");
  EXPECT_ERROR(t.rearrange("(a ...) -> a ...", {}), "cannot have collapsed ellipsis");
}

// *** triangles ***

TEST_F(Movement, TriuTrilOverDiagonals) {
  Batch b;
  for (Shape s : std::vector<Shape>{{3, 4}, {4, 3}, {2, 3, 3}, {0, 2}, {1, 1}}) {
    Arr a = Arr::iota(s, 1);
    for (int64_t diag : {-4, -1, 0, 1, 2, 5}) {
      auto keep = [&](auto& k, bool upper) {
        int64_t i = k[k.size() - 2], j = k.back();
        return (upper ? j - i >= diag : j - i <= diag) ? a.at(k) : 0.0;
      };
      std::string what = shape_str(s) + " diagonal " + std::to_string(diag);
      b.add(a.tensor().triu(diag), build(s, [&](auto& k) { return keep(k, true); }), "triu " + what);
      b.add(a.tensor().tril(diag), build(s, [&](auto& k) { return keep(k, false); }), "tril " + what);
    }
  }
  EXPECT_EQ(Tensor({true, true}).reshape({1, 2}).triu(1).dtype(), dtypes::bool_);
  EXPECT_ERROR(Tensor::arange(3).triu(), "triu needs at least 2 dims");
}
