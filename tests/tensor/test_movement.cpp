// High-level movement and indexing (tensor_movement.cpp, tensor_index.cpp), each against a plain reference written
// as loops over the elements: padding modes, repeats, splits, unfold, roll, rearrange, gather/scatter, sort/topk,
// triangles, and indexing with ints, slices of any step, None, ellipsis and index tensors, and setitem.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

#include "tg/runtime/device.h"
#include "tg/tensor/tensor.h"

using namespace tg;

namespace {

struct Movement : ::testing::Test {
  void SetUp() override { Device::DEFAULT.reset(); }  // the env's choice (DEV=...): these run on every device
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
  std::vector<double> tols;
  void add(const Tensor& t, const Arr& want, const std::string& name = "", double tol = 0) {
    EXPECT_EQ(t.shape(), want.shape) << name << ": shape " << shape_str(t.shape()) << " vs " << shape_str(want.shape);
    cases.push_back({t, want}), names.push_back(name), tols.push_back(tol);
  }
  ~Batch() {  // a destructor must not throw: a failed realize is a test failure
    try {
      check();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "realizing the batch threw: " << e.what();
    }
  }
  void check() {
    if (cases.empty()) return;
    std::vector<Tensor> flat;
    for (auto& c : cases) flat.push_back(c.first.cast(dtypes::float64).reshape({c.first.numel()}));
    std::vector<double> got = values(flat[0].cat(std::vector<Tensor>(flat.begin() + 1, flat.end())));
    size_t at = 0;
    for (size_t i = 0; i < cases.size(); i++) {
      const std::vector<double>& want = cases[i].second.v;
      std::vector<double> part(got.begin() + static_cast<std::ptrdiff_t>(at),
                               got.begin() + static_cast<std::ptrdiff_t>(std::min(got.size(), at + want.size())));
      if (tols[i] == 0) {
        EXPECT_EQ(part, want) << names[i];
      } else {
        EXPECT_EQ(part.size(), want.size()) << names[i];
        if (part.size() != want.size()) continue;
        for (size_t k = 0; k < want.size(); k++) EXPECT_NEAR(part[k], want[k], tols[i]) << names[i] << " at " << k;
      }
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

// reference: an int fill keeps an int tensor's dtype, a float fill makes it float, a bool tensor padded with an int
// becomes int; the fill is one kernel with the pad
TEST_F(Movement, PadFillKeepsTheDtypeAsTheReference) {
  Tensor u = Tensor(std::vector<uint8_t>{1, 2, 3}, {1, 3}).realize();
  Tensor u255 = u.pad({{0, 0}, {1, 1}}, int64_t(255));
  EXPECT_EQ(u255.dtype(), dtypes::uint8);
  EXPECT_EQ(u255.tolist<uint8_t>(), (std::vector<uint8_t>{255, 1, 2, 3, 255}));
  Tensor i = Tensor(std::vector<int32_t>{3, -1, 5}, {3});
  Tensor imin = i.pad({{2, -1}}, dtypes::min(dtypes::int32));
  EXPECT_EQ(imin.dtype(), dtypes::int32);
  EXPECT_EQ(imin.tolist<int32_t>(),
            (std::vector<int32_t>{std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::min(), 3, -1}));
  Tensor f = u.pad({{0, 0}, {1, 1}}, 2.5);
  EXPECT_EQ(f.dtype(), dtypes::float32);
  EXPECT_EQ(f.tolist<float>(), (std::vector<float>{2.5f, 1, 2, 3, 2.5f}));
  Tensor b = Tensor({true, false}).pad({{1, 1}}, true);
  EXPECT_EQ(b.dtype(), dtypes::int32);
  EXPECT_EQ(b.tolist<int32_t>(), (std::vector<int32_t>{1, 1, 0, 1}));
  EXPECT_EQ(i.pad({{1, 2}}, "reflect").tolist<int32_t>(), (std::vector<int32_t>{-1, 3, -1, 5, -1, 3}));
  int64_t before = GlobalCounters::kernel_count;
  i.pad({{1, 1}}, "constant", int64_t(7)).realize();
  EXPECT_EQ(GlobalCounters::kernel_count - before, 1);
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
                                  {{2, 7}, 1, 2, 4},
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

// *** indexing ***

namespace {
// python's positions of start:stop:step over a dim of n: negative ends count from the end, then clamp, then step
std::vector<int64_t> slice_positions(const Slice& s, int64_t n) {
  int64_t step = s.step.value_or(1);
  auto end = [&](std::optional<int64_t> v, int64_t open) {
    if (!v) return open;
    int64_t x = *v < 0 ? *v + n : *v;
    return step > 0 ? std::clamp<int64_t>(x, 0, n) : std::clamp<int64_t>(x, -1, n - 1);
  };
  std::vector<int64_t> out;
  for (int64_t i = end(s.start, step > 0 ? 0 : n - 1); step > 0 ? i < end(s.stop, n) : i > end(s.stop, -1); i += step)
    out.push_back(i);
  return out;
}
// a[indices] for ints, slices, None and one ellipsis: the positions each source dim takes, their product
Arr basic_index(const Arr& a, std::vector<Index> idx) {
  size_t used = 0;
  for (const Index& i : idx) used += i.kind() == Index::Kind::Int || i.kind() == Index::Kind::Slice;
  auto ell = std::find_if(idx.begin(), idx.end(), [](const Index& i) { return i.kind() == Index::Kind::Ellipsis; });
  auto at = ell == idx.end() ? idx.end() : idx.erase(ell);
  idx.insert(at, a.shape.size() - used, Index(Slice{}));
  std::vector<std::vector<int64_t>> pos;  // per source dim
  std::vector<int64_t> out_of;            // per output dim: its source dim, or -1 for a new one
  Shape out;
  size_t d = 0;
  for (const Index& i : idx) {
    if (i.kind() == Index::Kind::None) {
      out.push_back(1), out_of.push_back(-1);
      continue;
    }
    if (i.kind() == Index::Kind::Int) {
      pos.push_back({i.as_int() < 0 ? i.as_int() + int64_t(a.shape[d]) : i.as_int()});
    } else {
      pos.push_back(slice_positions(i.as_slice(), a.shape[d]));
      out.push_back(static_cast<sint>(pos.back().size())), out_of.push_back(static_cast<int64_t>(d));
    }
    d++;
  }
  return build(out, [&](auto& k) {
    std::vector<int64_t> src;
    for (auto& p : pos) src.push_back(p[0]);
    for (size_t o = 0; o < out.size(); o++)
      if (out_of[o] >= 0) src[static_cast<size_t>(out_of[o])] = pos[static_cast<size_t>(out_of[o])][k[o]];
    return a.at(src);
  });
}
}  // namespace

TEST_F(Movement, BasicIndexingAgainstPythonSemantics) {
  Arr a = Arr::iota({3, 4, 5}), e = Arr::iota({0, 3}), one = Arr::iota({1, 3});
  std::vector<std::pair<const Arr*, std::vector<Index>>> cases = {
      {&a, {1}},
      {&a, {-1}},
      {&a, {1, 2}},
      {&a, {0, 0, 0}},
      {&a, {-3, -4, -5}},
      {&a, {Slice{}}},
      {&a, {Slice{1, 3}}},
      {&a, {Slice{.step = -1}}},
      {&a, {Slice{.step = 2}}},
      {&a, {Slice{.start = -2}}},
      {&a, {Slice{.stop = -1, .step = -2}}},
      {&a, {Slice{10, -10, -3}}},
      {&a, {Slice{-100, 100, 3}}},
      {&a, {Slice{3, 1}}},
      {&a, {Slice{.start = 1, .step = -1}}},
      {&a, {Slice{.step = 3}, Slice{.step = -3}, Slice{1, 5, 2}}},
      {&a, {Slice{}, Slice{-1, -5, -2}, Slice{4, 0, -4}}},
      {&a, {Ellipsis, 0}},
      {&a, {None, 1, Ellipsis, None}},
      {&a, {Slice{}, None, Slice{.step = -2}, 4}},
      {&a, {Ellipsis}},
      {&a, {None}},
      {&a, {0, Ellipsis, Slice{.step = -1}, None}},
      {&e, {Slice{}}},
      {&e, {Slice{.step = -1}, 1}},
      {&e, {Slice{.step = 2}, None, Slice{.step = -2}}},
      {&one, {0}},
      {&one, {-1, Slice{.step = -1}}},
      {&one, {Slice{1, 5}}},
  };
  Batch b;
  for (auto& [arr, idx] : cases) {
    Arr want = basic_index(*arr, idx);
    b.add(arr->tensor().index(idx), want, "case " + std::to_string(b.cases.size()));
  }
  b.add(a.tensor()[2][Slice{.step = -1}][3], basic_index(a, {2, 0}), "operator[]");
}

TEST_F(Movement, BasicIndexingIsMovementOnly) {
  Tensor t = Arr::iota({3, 4}).tensor();
  Tensor r = t.index({Slice{.step = -2}, None, 1});
  for (const UOp& u : r.uop().toposort())
    EXPECT_FALSE(u.op() == Ops::REDUCE_AXIS || u.op() == Ops::CMPNE || u.op() == Ops::CMPLT) << u.op();
}

TEST_F(Movement, IndexErrorsNameTheIndexDimAndSize) {
  Tensor t = Tensor::zeros({3, 4});
  EXPECT_ERROR(t.index({3}), "index 3 is out of bounds for dim 0 with size 3");
  EXPECT_ERROR(t.index({0, -5}), "index -5 is out of bounds for dim 1 with size 4");
  EXPECT_ERROR(t[Slice{}][4], "index 4 is out of bounds for dim 0 with size 3");  // t[:] is (3, 4) again
  EXPECT_ERROR(t.index({Ellipsis, 0, Ellipsis}), "only have a single ellipsis");
  EXPECT_ERROR(t.index({0, 0, 0}), "too many indices: 3 for shape (3, 4)");
  EXPECT_ERROR(t.index({Slice{.step = 0}}), "slice step cannot be 0");
  EXPECT_ERROR(t.index({Tensor({0.5f})}), "index dtype dtypes.float is not supported");
  EXPECT_ERROR(t.index({Tensor({0, 1}), Tensor({0, 1, 2})}), "cannot broadcast indices");
  EXPECT_ERROR(Tensor(1.0f).index({0}), "too many indices");
}

TEST_F(Movement, TensorIndicesSelectAndBroadcast) {
  Arr a = Arr::iota({3, 4, 5}), b4 = Arr::iota({2, 3, 4, 5});
  Tensor i({2, 0, -1, 2}), j({3, 0}), m2 = Tensor(std::vector<int>{4, 0, 1, 1}, {2, 2}), col({1, 0}), oob({5, -4, 1});
  auto wrap = [](int64_t v, int64_t n) { return v < 0 ? v + n : v; };
  std::vector<int64_t> iv{2, 0, -1, 2}, jv{3, 0}, mv{4, 0, 1, 1};
  Batch b;
  b.add(a.tensor().index({i}), build({4, 4, 5}, [&](auto& k) { return a.at({wrap(iv[k[0]], 3), k[1], k[2]}); }));
  b.add(a.tensor().index({Slice{}, {3, 0}}), build({3, 2, 5}, [&](auto& k) { return a.at({k[0], jv[k[1]], k[2]}); }));
  b.add(a.tensor().index({Ellipsis, m2}), build({3, 4, 2, 2}, [&](auto& k) {
          return a.at({k[0], k[1], mv[k[2] * 2 + k[3]]});
        }));
  // adjacent index tensors broadcast together, in place: (2, 1) and (2,) -> (2, 2)
  Tensor col2 = Tensor(std::vector<int>{1, 0}, {2, 1});
  b.add(a.tensor().index({col2, j}), build({2, 2, 5}, [&](auto& k) {
          return a.at({k[0] == 0 ? 1 : 0, jv[k[1]], k[2]});
        }));
  // apart, starting at dim 0: in place
  b.add(a.tensor().index({Tensor({2, 0}), Slice{}, j}), build({2, 4}, [&](auto& k) {
          return a.at({k[0] == 0 ? 2 : 0, k[1], jv[k[0]]});
        }));
  // apart, after a slice: the broadcast dims go first
  b.add(b4.tensor().index({Slice{}, Tensor({2, 1}), Slice{}, j}), build({2, 2, 4}, [&](auto& k) {
          return b4.at({k[1], k[0] == 0 ? 2 : 1, k[2], jv[k[0]]});
        }));
  // an int is a basic index: it drops its dim first (unlike numpy, the tensor's dim stays in place)
  b.add(a.tensor().index({1, Slice{}, j}), build({4, 2}, [&](auto& k) { return a.at({1, k[0], jv[k[1]]}); }));
  b.add(a.tensor().index({None, Tensor({2, 0})}), build({1, 2, 4, 5}, [&](auto& k) {
          return a.at({k[1] == 0 ? 2 : 0, k[2], k[3]});
        }));
  b.add(a.tensor().index({Slice{.step = -1}, j}), build({3, 2, 5}, [&](auto& k) {
          return a.at({2 - k[0], jv[k[1]], k[2]});
        }));
  // out-of-range values select 0 (the reference's behaviour); negatives wrap once
  b.add(a.tensor().index({oob, 0, 0}), Arr{{3}, {0, 0, a.at({1, 0, 0})}});
  b.add(a.tensor().index({col}).reshape({2, 20}),
        build({2, 20}, [&](auto& k) { return a.v[static_cast<size_t>((k[0] == 0 ? 20 : 0) + k[1])]; }));
}

TEST_F(Movement, TensorIndicesKeepDtypeAndSpecialValues) {
  Tensor f = Tensor(std::vector<float>{INFINITY, 1, NAN, -INFINITY}, {4});
  std::vector<float> got = f.index({{1, 0, 3}}).tolist<float>();
  EXPECT_EQ(got, (std::vector<float>{1, INFINITY, -INFINITY}));  // no inf * 0 = nan from the unselected ones
  Tensor bools({true, false, true});
  EXPECT_EQ(bools.index({{1, 2, 0}}).tolist<bool>(), (std::vector<bool>{false, true, true}));
  Tensor i8 = Tensor(std::vector<int8_t>{-128, 5, 127}, {3});
  Tensor r = i8.index({Tensor({2, 0})});
  EXPECT_EQ(r.dtype(), dtypes::int8);
  EXPECT_EQ(r.tolist<int8_t>(), (std::vector<int8_t>{127, -128}));
}

// *** setitem ***

TEST_F(Movement, SetitemBasicWritesThroughTheView) {
  Arr a = Arr::iota({3, 4});
  Tensor t = a.tensor().contiguous().realize();
  t.setitem({1}, 50.0);
  t.setitem({Slice{}, Slice{.step = 2}}, Tensor(std::vector<float>{-1, -2}, {2}));  // broadcast along rows
  t.setitem({Slice{.step = -1}, 3}, Tensor({7.0f, 8.0f, 9.0f}));
  Arr want = build({3, 4}, [&](auto& k) {
    if (k[1] == 3) return 9.0 - static_cast<double>(k[0]);
    if (k[1] % 2 == 0) return k[1] == 0 ? -1.0 : -2.0;
    return k[0] == 1 ? 50.0 : a.at(k);
  });
  expect_arr(t, want);
  t.setitem({Ellipsis}, int64_t(3));
  EXPECT_EQ(values(t), std::vector<double>(12, 3.0));
}

TEST_F(Movement, SetitemAdvancedLastWriteWins) {
  Arr a = Arr::iota({3, 4});
  Tensor t = a.tensor().contiguous().realize();
  t.setitem({{2, 0, 2}}, Tensor(std::vector<float>{1, 2, 3}, {3, 1}));  // rows 2, 0, then 2 again
  t.setitem({Slice{1, 3}, {0, 3}}, Tensor(std::vector<float>{-1, -2, -3, -4}, {2, 2}));
  t.setitem({0, Tensor({9, 1})}, 100.0);  // 9 is out of range: ignored
  Arr want = build({3, 4}, [&](auto& k) {
    if (k[0] >= 1 && (k[1] == 0 || k[1] == 3)) return -1.0 - static_cast<double>((k[0] - 1) * 2 + (k[1] == 3));
    if (k[0] == 0) return k[1] == 1 ? 100.0 : 2.0;
    return k[0] == 2 ? 3.0 : a.at(k);
  });
  expect_arr(t, want);
  // a value read from the target itself is taken before the write
  Tensor u = Arr::iota({4}).tensor().contiguous().realize();
  u.setitem({{0, 1}}, u.index({{3, 2}}));
  EXPECT_EQ(values(u), (std::vector<double>{3, 2, 2, 3}));
}

TEST_F(Movement, SetitemErrors) {
  Tensor t = Tensor::zeros({2, 3}).contiguous().realize();
  EXPECT_ERROR(t.T().setitem({0}, 1.0), "setitem target needs to be contiguous");
  Tensor g = Tensor::zeros({2}).contiguous().requires_grad_();
  EXPECT_ERROR(g.setitem({0}, 1.0), "setitem with requires_grad is not supported");
  EXPECT_ERROR(t.setitem({0}, Tensor::ones({2})), "can't set a value of shape (2,) to an index of shape (3,)");
  EXPECT_ERROR(t.setitem({2}, 1.0), "index 2 is out of bounds for dim 0 with size 2");
}

// *** gather and scatter ***

TEST_F(Movement, Gather) {
  Arr a = Arr::iota({3, 4});
  std::vector<int> i0{2, 0, 1, 4, 0, 0, 1, 2}, i1{3, 0, 1, 2, 2, 0};  // 4 along dim 0 is out of range: 0
  Tensor idx0 = Tensor(i0, {2, 4}), idx1 = Tensor(i1, {3, 2});
  Batch b;
  b.add(a.tensor().gather(0, idx0), build({2, 4}, [&](auto& k) {
          int v = i0[static_cast<size_t>(k[0] * 4 + k[1])];
          return v < 3 ? a.at({v, k[1]}) : 0.0;
        }));
  b.add(a.tensor().gather(-1, idx1), build({3, 2}, [&](auto& k) {
          return a.at({k[0], i1[static_cast<size_t>(k[0] * 2 + k[1])]});
        }));
  b.add(a.tensor().gather(1, Tensor::zeros({1, 0}, {.dtype = dtypes::int32})), Arr{{1, 0}, {}});
  EXPECT_ERROR(a.tensor().gather(0, Tensor({0, 1})), "self.ndim must equal index.ndim");
  EXPECT_ERROR(a.tensor().gather(0, Tensor::zeros({2, 5}, {.dtype = dtypes::int32})), "exceeds shape (3, 4)");
}

TEST_F(Movement, ScatterLastWriteWinsAndScalars) {
  Arr src = Arr::iota({2, 5}, 1);
  std::vector<int> iv{0, 1, 2, 0, 2, 2, 1, 0};  // (2, 4) along dim 0: column 0 gets rows 0 then 2
  Tensor idx = Tensor(iv, {2, 4});
  auto scattered = [&](double base, const std::function<double(double, double)>& combine, bool with_src) {
    Arr out = build({3, 5}, [&](auto&) { return base; });
    for (int64_t r = 0; r < 2; r++)
      for (int64_t c = 0; c < 4; c++) {
        size_t at = out.flat({iv[static_cast<size_t>(r * 4 + c)], c});
        out.v[at] = combine(out.v[at], with_src ? src.at({r, c}) : 1.5);
      }
    return out;
  };
  Batch b;
  b.add(Tensor::zeros({3, 5}).scatter(0, idx, src.tensor()), scattered(
                                                                 0, [](double, double s) { return s; }, true));
  b.add(Tensor::full({3, 5}, 2.0).scatter(0, idx, 1.5), scattered(
                                                            2, [](double, double s) { return s; }, false));
  b.add(Tensor::full({3, 5}, 2.0).scatter(0, idx, 1.5, "add"), scattered(2, std::plus<>(), false));
  b.add(Tensor::full({3, 5}, 2.0).scatter(0, idx, 1.5, "multiply"), scattered(2, std::multiplies<>(), false));
  Tensor idx1 = Tensor(std::vector<int>{4, 4, 0}, {1, 3});  // along dim 1 into a (2, 5)
  b.add(Tensor::zeros({2, 5}).scatter(1, idx1, src.tensor()), Arr{{2, 5}, {3, 0, 0, 0, 2, 0, 0, 0, 0, 0}});
  EXPECT_ERROR(Tensor::zeros({3, 5}).scatter(0, idx, 1.0, "max"), "must be one of None, 'multiply', or 'add'");
  EXPECT_ERROR(Tensor::zeros({3, 5}).scatter(0, idx, Tensor::zeros({2, 5}, {.dtype = dtypes::int32})),
               "to be equal to src.dtype=dtypes.int");
}

TEST_F(Movement, ScatterReduceModes) {
  Arr self{{2, 3}, {-10, 20, 0, 5, 10, 7}}, src = Arr::iota({2, 3}, 1);
  std::vector<int> iv{0, 0, 1, 0, 1, 1};  // along dim 1: row r, column c goes to column iv[r*3+c]
  Tensor idx = Tensor(iv, {2, 3});
  using Fold = std::function<double(const std::vector<double>&)>;
  std::vector<std::pair<std::string, Fold>> modes = {
      {"sum", [](auto& v) { return std::accumulate(v.begin(), v.end(), 0.0); }},
      {"prod", [](auto& v) { return std::accumulate(v.begin(), v.end(), 1.0, std::multiplies<>()); }},
      {"mean", [](auto& v) { return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()); }},
      {"amax", [](auto& v) { return *std::max_element(v.begin(), v.end()); }},
      {"amin", [](auto& v) { return *std::min_element(v.begin(), v.end()); }},
  };
  Batch b;
  for (auto& [mode, fold_binding] : modes)
    for (bool include_self : {true, false}) {
      auto& fold = fold_binding;  // a lambda can't capture a structured binding (clang 14)
      Arr want = build({2, 3}, [&](auto& k) {
        std::vector<double> got;
        if (include_self) got.push_back(self.at(k));
        for (int64_t c = 0; c < 3; c++)
          if (iv[static_cast<size_t>(k[0] * 3 + c)] == k[1]) got.push_back(src.at({k[0], c}));
        return got.empty() ? self.at(k) : fold(got);
      });
      b.add(self.tensor().scatter_reduce(1, idx, src.tensor(), mode, include_self), want,
            mode + (include_self ? " include_self" : ""), mode == "mean" ? 1e-5 : 0);
    }
  EXPECT_ERROR(self.tensor().scatter_reduce(1, idx, src.tensor(), "max"), "must be one of 'sum'");
}

TEST_F(Movement, MaskedSelect) {
  Arr a = Arr::iota({3, 3});
  Tensor mask = Tensor({true, false, true, false, true, false, false, false, true}).reshape({3, 3});
  expect_arr(a.tensor().masked_select(mask), Arr{{4}, {0, 2, 4, 8}});
  expect_arr(a.tensor().masked_select(Tensor({false, true, true})), Arr{{6}, {1, 2, 4, 5, 7, 8}});  // broadcast
  EXPECT_EQ(a.tensor().masked_select(Tensor({false, false, false})).shape(), (Shape{0}));
  EXPECT_ERROR(a.tensor().masked_select(Tensor({1, 0, 1})), "masked_select expects bool mask tensor");
}

// *** sorting ***

TEST_F(Movement, SortIsStableBothWays) {
  std::vector<float> v{3, 1, 2, 1, 3, 0, -1, 2, 2, 5, -1, 0, 4, 4, 1, 1, 0, 4};  // (3, 6), many ties
  Tensor t = Tensor(v, {3, 6});
  for (bool desc : {false, true})
    for (int64_t dim : {1, 0}) {
      auto [values_t, indices_t] = t.sort(dim, desc);
      std::vector<float> got_v = values_t.tolist<float>();
      std::vector<int> got_i = indices_t.tolist<int>();
      size_t n = dim == 1 ? 6 : 3, lines = dim == 1 ? 3 : 6;
      for (size_t l = 0; l < lines; l++) {
        auto at = [&](size_t k) { return dim == 1 ? l * 6 + k : k * 6 + l; };
        std::vector<int> order(n);
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
          return desc ? v[at(static_cast<size_t>(x))] > v[at(static_cast<size_t>(y))]
                      : v[at(static_cast<size_t>(x))] < v[at(static_cast<size_t>(y))];
        });
        for (size_t k = 0; k < n; k++) {
          EXPECT_EQ(got_i[at(k)], order[k]) << "desc " << desc << " dim " << dim << " line " << l << " slot " << k;
          EXPECT_EQ(got_v[at(k)], v[at(static_cast<size_t>(order[k]))]);
        }
      }
    }
  auto [ev, ei] = Tensor::zeros({2, 0}).sort();
  EXPECT_EQ(ev.shape(), (Shape{2, 0}));
  EXPECT_EQ(ei.dtype(), dtypes::int32);
}

TEST_F(Movement, Topk) {
  Tensor t = Tensor(std::vector<float>{0.1f, 0.5f, 1.2f, 3.4f, 2.1f, 2.2f, 1.9f, 0.3f, 4.5f, 0.8f}, {2, 5});
  auto [v, i] = t.topk(2, {.dim = 1});
  EXPECT_EQ(v.tolist<float>(), (std::vector<float>{3.4f, 2.1f, 4.5f, 2.2f}));
  EXPECT_EQ(i.tolist<int>(), (std::vector<int>{3, 4, 3, 0}));
  auto [sv, si] = t.topk(1, {.dim = 0, .largest = false});
  EXPECT_EQ(sv.shape(), (Shape{1, 5}));
  EXPECT_EQ(si.tolist<int>(), (std::vector<int>{0, 0, 1, 0, 1}));
  EXPECT_ERROR(t.topk(6), "selected index k=6 is out of range");
  EXPECT_ERROR(t.topk(1, {.sorted = false}), "sorted_=False is not supported");
}
