// differential fuzz of the symbolic rules: random integer expressions are evaluated at random points inside their
// variables' bounds before and after simplification (C semantics, x/0 == x%0 == 0), and must agree exactly; every
// node of the simplified graph must also keep its value inside [vmin, vmax]. TG_FUZZ_ITERS=n runs n expressions.
#include <gtest/gtest.h>
#include <tinygrad/tinygrad.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "sanitized.h"
#include "tg/uop/symbolic.h"

using namespace tg;

namespace {
__extension__ typedef __int128 i128;

constexpr int64_t kI32Max = 2147483647, kI32Min = -2147483648LL;

struct Gen {
  std::mt19937_64 rng;
  std::vector<UOp> vars;
  explicit Gen(uint64_t seed) : rng(seed) {}

  int64_t uni(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
  bool coin(int percent) { return uni(0, 99) < percent; }

  std::pair<int64_t, int64_t> bounds() {
    switch (uni(0, 6)) {
      case 0: return {0, uni(0, 3)};  // tiny, often two values
      case 1: return {0, uni(1, 64)};
      case 2: {
        int64_t a = uni(-40, 0);
        return {a, a + uni(0, 40)};
      }
      case 3: {
        int64_t a = uni(-64, 0);
        return {a, 0};
      }
      case 4: {
        int64_t a = uni(-3, 3);
        return {a, a};
      }  // a variable that is a constant
      case 5: {
        int64_t a = uni(-1000, 1000);
        return {a, a + uni(0, 3000)};
      }
      default: return {uni(0, 20), uni(20, 100000)};
    }
  }
  int64_t small_const() {
    switch (uni(0, 5)) {
      case 0: return uni(-3, 3);
      case 1: return int64_t(1) << uni(0, 6);  // powers of two: the index math divisors
      case 2: return -(int64_t(1) << uni(0, 4));
      case 3: return uni(-20, 20);
      case 4: return uni(-1000, 1000);
      default: return uni(-100000, 100000);
    }
  }
  UOp leaf() {
    if (coin(60)) return vars[static_cast<size_t>(uni(0, static_cast<int64_t>(vars.size()) - 1))];
    return UOp::const_(dtypes::int32, small_const());
  }
  UOp gen_bool(int depth) {
    if (depth <= 0) return gen_int(0) < gen_int(0);
    switch (uni(0, 7)) {
      case 0:
      case 1: return gen_int(depth - 1) < gen_int(depth - 1);
      case 2: return gen_int(depth - 1) < UOp::const_(dtypes::int32, small_const());
      case 3: return gen_int(depth - 1).ne(coin(50) ? gen_int(depth - 1) : UOp::const_(dtypes::int32, small_const()));
      case 4: return coin(50) ? gen_bool(depth - 1).logical_not() : (linear(depth - 1) < 1).logical_not();  // simplex
      case 5: return gen_bool(depth - 1) & gen_bool(depth - 1);
      case 6: return gen_bool(depth - 1) | gen_bool(depth - 1);
      default: return linear(depth - 1) < UOp::const_(dtypes::int32, small_const());
    }
  }
  // bounded depth (<= 4), so plain recursion is fine here
  UOp gen_int(int depth) {
    if (depth <= 0 || coin(20)) return leaf();
    auto sub = [&]() { return gen_int(depth - 1); };
    auto cst = [&]() { return UOp::const_(dtypes::int32, small_const()); };
    switch (uni(0, 17)) {
      case 0:
      case 1: return sub() + sub();
      case 2: return sub() + cst();
      case 3: return sub() - sub();
      case 4: return sub() * cst();
      case 5: return sub() * sub();
      case 6:
      case 7: return idiv(sub(), coin(70) ? cst() : sub());
      case 8:
      case 9: return sub() % (coin(70) ? cst() : sub());
      case 10: return maximum(sub(), coin(50) ? cst() : sub());
      case 11: return minimum(sub(), coin(50) ? cst() : sub());
      case 12: return gen_bool(depth - 1).where(sub(), coin(50) ? cst() : sub());
      case 13: return -sub();
      case 14: return idiv(sub(), cst()) * cst() + sub() % cst();
      case 15: return idiv(sub() + cst(), cst()) + cst();
      case 16: {  // an unrolled arange: sum of (x+k)//d over (most of) k in [0, d)
        UOp x = sub(), ret;
        int64_t d = uni(1, 5), fac = coin(50) ? 1 : uni(-3, 3);
        for (int64_t k = 0; k < d; k++) {
          if (coin(15)) continue;
          UOp t = idiv(x + (k + (coin(10) ? uni(-2, 2) : 0)), d) * fac;
          ret = ret ? ret + t : t;
        }
        return ret ? ret : x;
      }
      default: return linear(depth - 1) % cst();
    }
  }
  // a*x + b*y + ... + c: the shape of index expressions
  UOp linear(int depth) {
    UOp ret = UOp::const_(dtypes::int32, uni(-20, 20));
    for (int64_t i = 0, n = uni(1, 3); i < n; i++)
      ret = (coin(50) ? gen_int(depth) : leaf()) * (uni(-3, 8) * (coin(50) ? 1 : 4)) + ret;
    return ret;
  }
};

// C semantics on unbounded ints, over a toposort (no recursion); a value past int64 skips the sample
struct Eval {
  std::vector<UOp> topo;
  std::unordered_map<const UOpNode*, size_t> pos;
  std::vector<std::vector<size_t>> srcs;
  std::vector<int64_t> vals;
  std::vector<bool> preset;
  std::string err;
  explicit Eval(const UOp& root) : topo(root.toposort()) {
    for (size_t i = 0; i < topo.size(); i++) pos[topo[i].get()] = i;
    for (const UOp& u : topo) {
      srcs.emplace_back();
      for (const UOp& s : u.src()) srcs.back().push_back(pos.at(s.get()));
    }
    vals.assign(topo.size(), 0), preset.assign(topo.size(), false);
  }
  void set(const UOp& var, int64_t v) {
    if (auto it = pos.find(var.get()); it != pos.end()) vals[it->second] = v, preset[it->second] = true;
  }
  std::optional<int64_t> run() {
    for (size_t i = 0; i < topo.size(); i++) {
      if (preset[i]) continue;
      const UOp& u = topo[i];
      auto s = [&](size_t k) { return static_cast<i128>(vals[srcs[i][k]]); };
      i128 r = 0;
      switch (u.op()) {
        case Ops::CONST: r = as_int(u.const_arg()); break;
        case Ops::ADD: r = s(0) + s(1); break;
        case Ops::SUB: r = s(0) - s(1); break;
        case Ops::MUL: r = s(0) * s(1); break;
        case Ops::NEG: r = -s(0); break;
        case Ops::IDIV: r = s(1) == 0 ? 0 : s(0) / s(1); break;
        case Ops::MOD: r = s(1) == 0 ? 0 : s(0) % s(1); break;
        case Ops::MAX: r = std::max(s(0), s(1)); break;
        case Ops::CMPLT: r = s(0) < s(1); break;
        case Ops::CMPNE: r = s(0) != s(1); break;
        case Ops::AND: r = s(0) & s(1); break;
        case Ops::OR: r = s(0) | s(1); break;
        case Ops::XOR: r = s(0) ^ s(1); break;
        case Ops::WHERE: r = s(0) != 0 ? s(1) : s(2); break;
        case Ops::CAST: r = u.dtype() == dtypes::bool_ ? i128(s(0) != 0) : s(0); break;
        default: err = cat("evaluator: no ", u.op()); return std::nullopt;
      }
      if (r > INT64_MAX || r < INT64_MIN) return std::nullopt;
      vals[i] = static_cast<int64_t>(r);
    }
    return vals.back();
  }
};

bool ranges_in_int32(const std::vector<UOp>& topo) {
  for (const UOp& u : topo) {
    if (std::holds_alternative<double>(u.vmin()) || std::holds_alternative<double>(u.vmax())) return false;
    if (as_int(u.vmin()) < kI32Min || as_int(u.vmax()) > kI32Max) return false;
  }
  return true;
}

uint64_t fuzz_seed() {
  if (const char* e = std::getenv("TG_FUZZ_SEED")) return std::strtoull(e, nullptr, 0);
  return 0x7157a11c5eedULL;
}

int64_t fuzz_iters() {
  if (const char* e = std::getenv("TG_FUZZ_ITERS")) return std::max<int64_t>(1, std::atoll(e));
#if TG_TEST_ASAN
  return 10000;  // the sanitizer build checks memory, not rules: the Release build runs the full 100,000
#else
  return 100000;
#endif
}

}  // namespace

TEST(SymbolicFuzz, Differential) {
  const int64_t iters = fuzz_iters();
  Gen g(fuzz_seed());
  int64_t tried = 0, checked_points = 0, changed = 0, failures = 0;
  std::ostringstream report;
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t it = 0; tried < iters && failures < 10 && it < 4 * iters; it++) {
    g.vars.clear();
    int nv = static_cast<int>(g.uni(2, 4));
    for (int i = 0; i < nv; i++) {
      auto [lo, hi] = g.bounds();
      g.vars.push_back(UOp::variable(cat("v", i), lo, hi));
    }
    UOp e = g.coin(85) ? g.gen_int(static_cast<int>(g.uni(1, 4)))
                       : g.gen_bool(static_cast<int>(g.uni(1, 3))).where(g.gen_int(2), g.gen_int(2));
    Eval ev0(e);
    if (!ranges_in_int32(ev0.topo)) continue;  // values past int32 would overflow the C program
    tried++;
    // half the expressions go through symbolic (UOp::simplify), half through the codegen's sym
    UOp s = (it & 1) ? e.simplify() : graph_rewrite(e, sym());
    if (s != e) changed++;
    Eval ev1(s);
    for (int p = 0; p < 8; p++) {
      std::vector<std::pair<std::string, int64_t>> point;
      for (const UOp& v : g.vars) {
        int64_t lo = as_int(v.vmin()), hi = as_int(v.vmax());
        int64_t x = p == 0 ? lo : p == 1 ? hi : g.uni(lo, hi);
        ev0.set(v, x), ev1.set(v, x);
        point.push_back({v.arg<VarArg>().name, x});
      }
      auto a = ev0.run();
      auto b = ev1.run();
      if (!ev0.err.empty() || !ev1.err.empty()) {
        ADD_FAILURE() << ev0.err << ev1.err << "\n  in " << s.render(false);
        return;
      }
      if (!a || !b) continue;
      checked_points++;
      std::string bad;
      if (*a != *b) bad = cat("value ", *a, " became ", *b);
      for (size_t i = 0; i < ev1.topo.size() && bad.empty(); i++) {
        const UOp& u = ev1.topo[i];
        int64_t v = ev1.vals[i];
        if (v < as_int(u.vmin()) || v > as_int(u.vmax()))
          bad = cat("range: ", u.render(false), " = ", v, " outside [", const_repr(u.vmin()), ", ",
                    const_repr(u.vmax()), "]");
      }
      if (bad.empty()) continue;
      failures++;
      report << "\n#" << it << " " << bad << "\n   Input: " << e.render(false) << "\n  Output: " << s.render(false)
             << "\n  at:";
      for (auto& [n, x] : point) report << " " << n << "=" << x;
      report << "  bounds:";
      for (const UOp& v : g.vars)
        report << " " << v.arg<VarArg>().name << "[" << const_repr(v.vmin()) << "," << const_repr(v.vmax()) << "]";
      break;
    }
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(failures, 0) << report.str();
  EXPECT_EQ(tried, iters) << "too many expressions rejected";
  std::printf("[ fuzz     ] %lld expressions (%lld simplified to something else), %lld points, %.2fs\n",
              static_cast<long long>(tried), static_cast<long long>(changed), static_cast<long long>(checked_points),
              secs);
}
