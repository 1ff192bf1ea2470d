// ShapeTracker and View: reprs as the reference prints them, and random chains of movement ops checked against a
// naive strided reference (an explicit table of source indices).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <unordered_map>

#include "sanitized.h"
#include "tg/shape/shapetracker.h"

using namespace tg;

TEST(ShapeTracker, ReprCases) {  // reference/golden/uop_repr/repr_cases.out R11
  ShapeTracker st = ShapeTracker::from_shape({4, 4});
  EXPECT_EQ(st.repr(),
            "ShapeTracker(views=(View(shape=(4, 4), strides=(4, 1), offset=0, mask=None, contiguous=True),))");
  EXPECT_EQ(ShapeTracker::from_shape({1, 4}).expand({4, 4}).repr(),
            "ShapeTracker(views=(View(shape=(4, 4), strides=(0, 1), offset=0, mask=None, contiguous=False),))");
  EXPECT_EQ(st.permute({1, 0}).repr(),
            "ShapeTracker(views=(View(shape=(4, 4), strides=(1, 4), offset=0, mask=None, contiguous=False),))");
  EXPECT_EQ(
      st.pad({{1, 1}, {0, 0}}).repr(),
      "ShapeTracker(views=(View(shape=(6, 4), strides=(4, 1), offset=-4, mask=((1, 5), (0, 4)), contiguous=False),))");
  EXPECT_EQ(st.shrink({{1, 3}, {1, 3}}).repr(),
            "ShapeTracker(views=(View(shape=(2, 2), strides=(4, 1), offset=5, mask=None, contiguous=False),))");
  EXPECT_EQ(st.permute({1, 0}).reshape({16}).repr(),
            "ShapeTracker(views=(View(shape=(4, 4), strides=(1, 4), offset=0, mask=None, contiguous=False), "
            "View(shape=(16,), strides=(1,), offset=0, mask=None, contiguous=True)))");
  EXPECT_EQ(ShapeTracker::from_shape({}).repr(),
            "ShapeTracker(views=(View(shape=(), strides=(), offset=0, mask=None, contiguous=True),))");
}

TEST(ShapeTracker, ViewUOpRepr) {  // R12
  UOp x = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr(16), {}, ConstValue(int64_t(0)));
  UOp v = UOp::make(Ops::VIEW, x.dtype(), {x}, st_arg(ShapeTracker::from_shape({4, 4}).pad({{1, 1}, {0, 0}})));
  EXPECT_EQ(v.repr(),
            "UOp(Ops.VIEW, dtypes.float.ptr(16), arg=ShapeTracker(views=(View(shape=(6, 4), strides=(4, 1), offset=-4, "
            "mask=((1, 5), (0, 4)), contiguous=False),)), src=(\n"
            "  UOp(Ops.DEFINE_GLOBAL, dtypes.float.ptr(16), arg=0, src=()),))");
  // equal trackers built twice are one node
  EXPECT_EQ(ShapeTracker::from_shape({3}).to_uop(), ShapeTracker::from_shape({3}).to_uop());
}

// a tracker's arg hashes its content, not its text: equal trackers hash alike, and trackers that differ in any one
// field (shape, strides, offset, mask, contiguity, the number of views) hash apart
TEST(ShapeTracker, ArgHashByContent) {
  auto h = [](const ShapeTracker& st) { return ShapeTrackerArg(st).hash(); };
  ShapeTracker base = ShapeTracker::from_shape({4, 4});
  EXPECT_EQ(h(base.pad({{1, 1}, {0, 0}})), h(ShapeTracker::from_shape({4, 4}).pad({{1, 1}, {0, 0}})));
  std::vector<ShapeTracker> all{base,
                                ShapeTracker::from_shape({16}),
                                ShapeTracker::from_shape({4, 4}, Shape{1, 4}),
                                base.shrink({{1, 3}, {0, 4}}),
                                base.pad({{1, 1}, {0, 0}}),
                                base.pad({{0, 2}, {0, 0}}),
                                base.permute({1, 0}).reshape({16}),
                                base.expand({4, 4}).reshape({2, 8})};
  for (size_t i = 0; i < all.size(); i++)
    for (size_t j = i + 1; j < all.size(); j++)
      if (!(all[i] == all[j])) {
        EXPECT_NE(h(all[i]), h(all[j])) << all[i].repr() << " vs " << all[j].repr();
      }
}

// multi-view simplification (tinygrad's TestSimplifyingShapeTracker)
TEST(ShapeTracker, ExpandContractSimplifies) {
  ShapeTracker st = ShapeTracker::from_shape({1, 10}).expand({10, 10}).reshape({100});
  EXPECT_EQ(st.views.size(), 2u);
  EXPECT_EQ(st.reshape({10, 10}).simplify().views.size(), 1u);
  EXPECT_EQ(st.reshape({2, 5, 2, 5}).simplify().views.size(), 1u);
  EXPECT_EQ(st.reshape({5, 20}).simplify().views.size(), 2u);  // still complex
}

TEST(ShapeTracker, BadInputIsError) {
  ShapeTracker st = ShapeTracker::from_shape({2, 3});
  EXPECT_THROW(st.reshape({4, 2}), Error);
  EXPECT_THROW(st.expand({4, 3}), Error);
  EXPECT_THROW(st.permute({0, 0}), Error);
  EXPECT_THROW(st.shrink({{0, 3}, {0, 3}}), Error);
  EXPECT_THROW(st.pad({{-1, 0}, {0, 0}}), Error);
  try {
    st.reshape({4, 2});
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(2, 3)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(4, 2)"), std::string::npos) << e.what();
  }
}

// *** a naive reference: every element holds the flat source index it reads, or -1 where padded ***

struct Naive {
  Shape shape;
  std::vector<int64_t> src;
};
static std::vector<int64_t> unflat(int64_t i, const Shape& s) {
  std::vector<int64_t> idx(s.size());
  for (size_t d = s.size(); d-- > 0;) idx[d] = i % s[d], i /= s[d];
  return idx;
}
static int64_t flat(const std::vector<int64_t>& idx, const Shape& s) {
  int64_t f = 0;
  for (size_t d = 0; d < s.size(); d++) f = f * s[d] + idx[d];
  return f;
}
template <class F>
static Naive remap(const Naive& a, const Shape& ns, F&& source_of) {  // source_of(out index) -> in index or empty
  Naive out{ns, std::vector<int64_t>(static_cast<size_t>(prod(ns)))};
  for (int64_t i = 0; i < prod(ns); i++) {
    auto in = source_of(unflat(i, ns));
    out.src[static_cast<size_t>(i)] =
        in.empty() && !a.shape.empty() ? -1 : a.src[static_cast<size_t>(flat(in, a.shape))];
  }
  return out;
}

// evaluate an index expression with RANGE i bound to vals[i]
static int64_t eval(const UOp& u, const std::vector<int64_t>& vals) {
  std::unordered_map<const UOpNode*, ConstValue> v;
  for (const UOp& n : u.toposort()) {
    ConstValue r;
    if (n.op() == Ops::CONST)
      r = n.const_arg();
    else if (n.op() == Ops::RANGE)
      r = vals.at(static_cast<size_t>(as_int(n.arg<ConstValue>())));
    else {
      std::vector<ConstValue> args;
      for (const UOp& s : n.src()) args.push_back(v.at(s.get()));
      r = exec_alu(n.op(), n.dtype(), args);
    }
    v[n.get()] = r;
  }
  return as_int(v.at(u.get()));
}

TEST(ShapeTracker, RandomMovementChainsMatchNaive) {
  std::mt19937 rng(1234);
  auto rnd = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int checked = 0, multi_view = 0;
  for (int trial = 0; trial < (TG_TEST_ASAN ? 150 : 600); trial++) {  // memory, not rules, under ASan
    Shape s0;
    for (int64_t d = rnd(1, 3); d > 0; d--) s0.push_back(rnd(1, 4));
    ShapeTracker st = ShapeTracker::from_shape(s0);
    Naive ref{s0, {}};
    for (int64_t i = 0; i < prod(s0); i++) ref.src.push_back(i);
    std::string ops;
    for (int64_t k = rnd(1, 6); k > 0; k--) {
      const Shape sh = ref.shape;
      switch (rnd(0, 5)) {
        case 0: {  // permute
          std::vector<int64_t> perm(sh.size());
          std::iota(perm.begin(), perm.end(), 0);
          std::shuffle(perm.begin(), perm.end(), rng);
          Shape ns;
          for (auto p : perm) ns.push_back(sh[static_cast<size_t>(p)]);
          ref = remap(ref, ns, [&](const std::vector<int64_t>& o) {
            std::vector<int64_t> in(sh.size());
            for (size_t d = 0; d < perm.size(); d++) in[static_cast<size_t>(perm[d])] = o[d];
            return in;
          });
          st = st.permute(perm), ops += " permute" + py_tuple(perm);
          break;
        }
        case 1: {  // reshape: split or merge a random factorization
          Shape ns;
          int64_t n = prod(sh);
          while (n > 1 && ns.size() < 4) {
            int64_t f = rnd(1, n);
            while (n % f) f--;
            ns.push_back(f), n /= f;
          }
          ns.push_back(n);
          if (rnd(0, 1)) ns.insert(ns.begin(), 1);
          Naive r2 = ref;
          r2.shape = ns;
          ref = r2, st = st.reshape(ns), ops += " reshape" + shape_str(ns);
          break;
        }
        case 2: {  // expand a size-1 dim
          Shape ns = sh;
          for (auto& d : ns)
            if (d == 1 && rnd(0, 1)) d = rnd(2, 3);
          ref = remap(ref, ns, [&](const std::vector<int64_t>& o) {
            std::vector<int64_t> in = o;
            for (size_t d = 0; d < sh.size(); d++)
              if (sh[d] == 1) in[d] = 0;
            return in;
          });
          st = st.expand(ns), ops += " expand" + shape_str(ns);
          break;
        }
        case 3: {  // pad
          Mask m;
          Shape ns;
          for (auto d : sh) m.push_back({rnd(0, 2), rnd(0, 2)}), ns.push_back(d + m.back().first + m.back().second);
          ref = remap(ref, ns, [&](const std::vector<int64_t>& o) {
            std::vector<int64_t> in(sh.size());
            for (size_t d = 0; d < sh.size(); d++) {
              in[d] = o[d] - m[d].first;
              if (in[d] < 0 || in[d] >= sh[d]) return std::vector<int64_t>{};
            }
            return in;
          });
          st = st.pad(m), ops += " pad";
          break;
        }
        case 4: {  // shrink
          Mask m;
          Shape ns;
          for (auto d : sh) {
            int64_t b = rnd(0, d - 1), e = rnd(b + 1, d);
            m.push_back({b, e}), ns.push_back(e - b);
          }
          ref = remap(ref, ns, [&](const std::vector<int64_t>& o) {
            std::vector<int64_t> in(sh.size());
            for (size_t d = 0; d < sh.size(); d++) in[d] = o[d] + m[d].first;
            return in;
          });
          st = st.shrink(m), ops += " shrink";
          break;
        }
        case 5: {  // flip
          std::vector<bool> f;
          for (size_t d = 0; d < sh.size(); d++) f.push_back(rnd(0, 1));
          ref = remap(ref, sh, [&](const std::vector<int64_t>& o) {
            std::vector<int64_t> in = o;
            for (size_t d = 0; d < sh.size(); d++)
              if (f[d]) in[d] = sh[d] - 1 - o[d];
            return in;
          });
          st = st.flip(f), ops += " flip";
          break;
        }
      }
      // a masked-out element reads nothing: propagate -1 through later ops (the remaps above already do)
    }
    if (trial % 3 == 0) {  // a last reshape to another factorization: where stacked views can merge again
      Shape ns;
      int64_t n = prod(ref.shape);
      while (n > 1 && ns.size() < 3) {
        int64_t f = rnd(1, n);
        while (n % f) f--;
        ns.push_back(f), n /= f;
      }
      ns.push_back(n);
      ref.shape = ns, st = st.reshape(ns), ops += " reshape" + shape_str(ns);
    }
    ASSERT_EQ(st.shape(), ref.shape) << ops;
    if (trial % 2) st = st.simplify();  // merging views must not change what is read
    if (st.views.size() > 1) multi_view++;
    auto [idx, valid] = st.to_indexed_uops();
    for (int64_t i = 0; i < prod(ref.shape); i++) {
      auto pos = unflat(i, ref.shape);
      bool ok = eval(valid, pos) != 0;
      int64_t want = ref.src[static_cast<size_t>(i)];
      ASSERT_EQ(ok, want != -1) << "shape " << shape_str(s0) << ops << " at " << i << "\n" << st.repr();
      if (ok) {
        ASSERT_EQ(eval(idx, pos), want) << "shape " << shape_str(s0) << ops << " at " << i << "\n" << st.repr();
      }
      checked++;
    }
  }
  EXPECT_GT(checked, 1000);
  EXPECT_GT(multi_view, 10);  // the chains do stack views
}
