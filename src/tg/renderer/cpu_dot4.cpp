// ClangRenderer's 8-bit dot products. The devectorizer sums a quantized matvec's integer products in groups of four
// lanes (group_integer_products): four GEPs of one product vector, added. Each group is a dot product of four 8-bit
// integers, one 32-bit lane of x86's vpdpbusd (AVX512-VNNI, AVX-VNNI) and of pmaddubsw + pmaddwd (AVX2). The rule
// here finds such a sum and makes it a call of a helper the kernel's defines hold, whose body the C compiler picks
// by the target's ISA macros: one source compiles for every CPU_ARCH, the generic body where no instruction fits.
#include <algorithm>
#include <limits>
#include <memory>
#include <unordered_map>

#include "tg/helpers/helpers.h"
#include "tg/renderer/cstyle.h"

namespace tg {

namespace {

constexpr const char* kDotName = "__tg_dot4_";

// x's lanes' bounds, seen through the GEPs and VECTORIZEs that pick them (whose own bounds are the dtype's) and
// the integer arithmetic between them: an upcast kernel's operands are vectors gathered from vectors, whose stored
// bounds stop at the first GEP. A few levels deep; past them a node's own bounds
using Bounds = std::pair<i128, i128>;
using BoundsMemo = std::unordered_map<const UOpNode*, Bounds>;
Bounds lane_bounds_of(const UOp& x, int depth, BoundsMemo& memo);
Bounds lane_bounds(const UOp& x) {
  BoundsMemo memo;
  return lane_bounds_of(x, 0, memo);
}
Bounds lane_bounds_uncached(const UOp& x, int depth, BoundsMemo& memo);
Bounds lane_bounds_of(const UOp& x, int depth, BoundsMemo& memo) {
  if (auto it = memo.find(x.get()); it != memo.end()) return it->second;
  Bounds b = lane_bounds_uncached(x, depth, memo);
  memo.emplace(x.get(), b);
  return b;
}
Bounds lane_bounds_uncached(const UOp& x, int depth, BoundsMemo& memo) {
  auto lane_bounds = [&](const UOp& y, int d) { return lane_bounds_of(y, d, memo); };
  auto own = [&]() { return std::pair<i128, i128>{as_i128(x.vmin()), as_i128(x.vmax())}; };
  if (depth > 12 || !dtypes::is_int(x.dtype().scalar())) return own();
  const DType t = x.dtype().scalar();
  const i128 tlo = as_i128(dtypes::min(t)), thi = as_i128(dtypes::max(t));
  auto clamp = [&](i128 lo, i128 hi) -> std::pair<i128, i128> {
    if (lo < tlo || hi > thi) return {tlo, thi};  // may wrap
    return {lo, hi};
  };
  switch (x.op()) {
    case Ops::GEP: return lane_bounds(x.src(0), depth + 1);
    case Ops::VECTORIZE: {
      i128 lo = std::numeric_limits<i128>::max(), hi = std::numeric_limits<i128>::min();
      for (const UOp& s : x.src()) {  // mostly the same few sources, lane by lane
        auto [l, h] = lane_bounds(s, depth + 1);
        lo = std::min(lo, l), hi = std::max(hi, h);
      }
      return {lo, hi};
    }
    case Ops::CAST: {
      if (!dtypes::is_int(x.src(0).dtype().scalar())) return own();
      auto [l, h] = lane_bounds(x.src(0), depth + 1);
      return clamp(l, h);
    }
    case Ops::ADD:
    case Ops::SUB:
    case Ops::MUL:
    case Ops::AND:
    case Ops::OR:
    case Ops::SHR:
    case Ops::IDIV: {
      auto [a0, a1] = lane_bounds(x.src(0), depth + 1);
      auto [b0, b1] = lane_bounds(x.src(1), depth + 1);
      switch (x.op()) {
        case Ops::ADD: return clamp(a0 + b0, a1 + b1);
        case Ops::SUB: return clamp(a0 - b1, a1 - b0);
        case Ops::MUL: {
          if (std::max({-a0, a1, -b0, b1}) > (i128(1) << 40)) return own();
          i128 v[4] = {a0 * b0, a0 * b1, a1 * b0, a1 * b1};
          return clamp(*std::min_element(v, v + 4), *std::max_element(v, v + 4));
        }
        case Ops::AND:
          if (b0 == b1 && a0 >= 0 && b0 >= 0) return {0, std::min(a1, b1)};
          return own();
        case Ops::OR: {  // of two nonnegative values: at least the larger, within the larger's bits
          if (a0 < 0 || b0 < 0) return own();
          i128 top = 1;
          while (top <= std::max(a1, b1)) top <<= 1;
          return {std::max(a0, b0), top - 1};
        }
        case Ops::SHR:
          if (b0 == b1 && b0 >= 0 && b0 < 64 && a0 >= 0) return {a0 >> b0, a1 >> b0};
          return own();
        default:  // IDIV by a positive constant, of a nonnegative value
          if (b0 == b1 && b0 > 0 && a0 >= 0) return {a0 / b0, a1 / b0};
          return own();
      }
    }
    default: return own();
  }
}

bool within(const UOp& x, int64_t lo, int64_t hi) {
  if (!dtypes::is_int(x.dtype().scalar())) return false;
  auto [l, h] = lane_bounds(x);
  return l >= lo && h <= hi;
}

// the one value of every lane of x, when x is a constant
std::optional<int64_t> uniform_const(const UOp& x) {
  if (x.op() == Ops::CONST) return static_cast<int64_t>(as_i128(x.const_arg()));
  if (x.op() == Ops::VECTORIZE && !x.src().empty()) {
    for (const UOp& s : x.src())
      if (s != x.src(0)) return std::nullopt;
    return uniform_const(x.src(0));
  }
  if (x.op() == Ops::VCONST) {
    const auto& vals = x.arg<Tuple>();
    if (vals.empty() || !std::all_of(vals.begin(), vals.end(), [&](const auto& v) { return v == vals[0]; }))
      return std::nullopt;
    return static_cast<int64_t>(as_i128(vals[0]));
  }
  return std::nullopt;
}

// x's lanes as 8-bit integers of type t (an x whose values fit): the narrow source of a widening cast when it is
// one, else x converted
UOp narrowed(UOp x, DType t) {
  while (x.op() == Ops::CAST && dtypes::is_int(x.src(0).dtype().scalar()) &&
         x.src(0).dtype().scalar().itemsize() < x.dtype().scalar().itemsize())
    x = x.src(0);
  return x.dtype().scalar() == t ? x : x.cast(t.vec(x.dtype().count()));
}

// a (u + c) * s operand split, u in [0, 255] and s in [-128, 127]: u as uint8, c, s as int8
struct DotOperands {
  UOp u, s;
  int64_t c = 0;
};

// the operands of a * b as u + c and s: one side (the one that needs no bias, else a) in [0, 255] after its added
// constant, the other within int8; a side within int8 but not uint8 is u - 128
std::optional<DotOperands> split_operands(const UOp& a, const UOp& b) {
  std::optional<DotOperands> best;
  bool best_biased = true;
  for (int i = 0; i < 2; i++) {
    const UOp &x = i == 0 ? a : b, &y = i == 0 ? b : a;
    if (!within(y, -128, 127)) continue;
    UOp u = x;
    int64_t c = 0;
    if (x.op() == Ops::ADD)
      for (size_t k = 0; k < 2; k++)
        if (std::optional<int64_t> v = uniform_const(x.src(k))) {
          u = x.src(1 - k), c = *v;
          break;
        }
    bool biased = false;
    if (!within(u, 0, 255)) {
      if (!within(u, -128, 127)) continue;
      u = u + u.const_like(128), c -= 128, biased = true;
    }
    if (!best || (best_biased && !biased)) best = DotOperands{narrowed(u, dtypes::uint8), narrowed(y, dtypes::int8), c};
    best_biased = best_biased && biased;
  }
  return best;
}

}  // namespace

std::optional<UOp> clang_dot4(const UOp& root) {
  const int64_t n = root.dtype().count();
  if (root.op() != Ops::ADD || root.dtype().scalar() != dtypes::int32 || n < 2 || n > 1024) return std::nullopt;
  for (const UOp& s : root.src())  // the cheap test first: a sum of picked lanes
    if (!OpSet{Ops::GEP, Ops::VECTORIZE, Ops::ADD}.has(s.op())) return std::nullopt;
  // which lanes of the product each lane of x sums, through ADDs and GEPs (any tree the horizontal-sum rewrites
  // made of the four GEPs, and VECTORIZEs of single lanes); a few levels deep at most
  UOp prod;
  auto is_prod = [&](const UOp& x) {  // the product (seen through a NOOP): every group's one MUL
    UOp p = x.op() == Ops::NOOP ? x.src(0) : x;
    if (p.op() != Ops::MUL || p.dtype().count() != 4 * n || (prod && p != prod)) return false;
    prod = p;
    return true;
  };
  // lanes[j]: the product's lanes that lane j sums; null where x is not such a sum. Each node's once (a VECTORIZE of
  // many GEPs of one ADD walked the ADD's tree again for every lane: ~10 ms a root in a Q4_0 matmul's kernel); a walk
  // cut short by the depth is redone from a shallower depth
  using Lanes = std::shared_ptr<const std::vector<std::vector<int64_t>>>;
  std::unordered_map<const UOpNode*, std::pair<int, Lanes>> memo;  // node -> (the depth it was walked from, lanes)
  auto lanes_of = [&](auto& self, const UOp& x, int depth) -> Lanes {
    if (depth > 8) return nullptr;
    if (auto it = memo.find(x.get()); it != memo.end() && (it->second.second || it->second.first <= depth))
      return it->second.second;
    auto walk = [&]() -> Lanes {
      std::vector<std::vector<int64_t>> out;
      if (x.op() == Ops::NOOP || x.op() == Ops::MUL) {
        if (!is_prod(x)) return nullptr;
        for (int64_t i = 0; i < 4 * n; i++) out.push_back({i});
      } else if (x.op() == Ops::GEP) {
        if ((x.src(0).op() == Ops::NOOP || x.src(0).op() == Ops::MUL) && is_prod(x.src(0))) {
          for (int64_t i : tuple_ints(x.arg())) out.push_back({i});  // the product's own lanes, without its list
        } else {
          Lanes in = self(self, x.src(0), depth + 1);
          if (!in) return nullptr;
          for (int64_t i : tuple_ints(x.arg())) out.push_back((*in)[static_cast<size_t>(i)]);
        }
      } else if (x.op() == Ops::VECTORIZE) {  // pm_render's form of a GEP of several lanes
        for (const UOp& s : x.src()) {
          Lanes in = self(self, s, depth + 1);
          if (!in) return nullptr;
          out.insert(out.end(), in->begin(), in->end());
        }
      } else {
        if (x.op() != Ops::ADD || x.dtype().scalar() != dtypes::int32) return nullptr;
        Lanes l = self(self, x.src(0), depth + 1), r = l ? self(self, x.src(1), depth + 1) : nullptr;
        if (!l || !r || l->size() != r->size()) return nullptr;
        out = *l;
        for (size_t i = 0; i < out.size(); i++) out[i].insert(out[i].end(), (*r)[i].begin(), (*r)[i].end());
      }
      return std::make_shared<const std::vector<std::vector<int64_t>>>(std::move(out));
    };
    Lanes r = walk();
    memo[x.get()] = {depth, r};
    return r;
  };
  Lanes lanes = lanes_of(lanes_of, root, 0);
  if (!lanes || !prod || static_cast<int64_t>(lanes->size()) != n) return std::nullopt;
  for (int64_t j = 0; j < n; j++) {
    std::vector<int64_t> l = (*lanes)[static_cast<size_t>(j)];
    std::sort(l.begin(), l.end());
    if (l != std::vector<int64_t>{4 * j, 4 * j + 1, 4 * j + 2, 4 * j + 3}) return std::nullopt;
  }
  const UOp& mul = prod;
  if (mul.op() != Ops::MUL || mul.dtype() != dtypes::int32.vec(4 * n)) return std::nullopt;
  std::optional<DotOperands> d = split_operands(mul.src(0), mul.src(1));
  if (!d) return std::nullopt;
  // the AVX2 body (pmaddubsw) saturates a pair's sum at 16 bits: it is used when u's bound keeps the pair within
  std::string name = cat(kDotName, n, lane_bounds(d->u).second * 128 * 2 <= 32767 ? "n" : "");
  UOp dot = UOp::make(Ops::CUSTOM, root.dtype(), {d->u, d->s}, cat(name, "({0}, {1})"));
  if (d->c == 0) return dot;
  UOp ones = UOp::const_(dtypes::uint8, 1).broadcast(static_cast<int>(4 * n));
  UOp sums = UOp::make(Ops::CUSTOM, root.dtype(), {ones, d->s}, cat(kDotName, n, "n({0}, {1})"));
  return dot + sums * root.const_like(d->c);
}

namespace {
// a dot helper's call: its name, without the arguments
std::string dot_name(const UOp& u) {
  if (u.op() != Ops::CUSTOM || !std::holds_alternative<std::string>(u.arg())) return "";
  const std::string& f = u.arg<std::string>();
  return f.rfind(kDotName, 0) == 0 ? f.substr(0, f.find('(')) : "";
}
}  // namespace

std::optional<UOp> clang_dot4_sum(const UOp& root) {
  const int64_t m = root.dtype().count();
  if (root.op() != Ops::ADD || root.dtype().scalar() != dtypes::int32 || m < 2) return std::nullopt;
  // the ADD tree's leaves (a few dozen at most)
  std::vector<UOp> leaves, work{root};
  while (!work.empty()) {
    UOp x = work.back();
    work.pop_back();
    if (x.op() == Ops::ADD && x.dtype() == root.dtype() && leaves.size() + work.size() < 64) {
      work.push_back(x.src(1)), work.push_back(x.src(0));
    } else {
      leaves.push_back(x);
    }
  }
  // a helper's whole product (n lanes, (slice, m) in order) among the leaves as its n / m slices, each once
  UOp dot;
  std::vector<bool> seen;
  std::vector<UOp> others;
  // a leaf's lanes of one vector: a GEP, or pm_render's VECTORIZE of single-lane GEPs
  auto picked = [](const UOp& l) -> std::pair<UOp, std::vector<int64_t>> {
    if (l.op() == Ops::GEP) return {l.src(0), tuple_ints(l.arg())};
    if (l.op() != Ops::VECTORIZE || l.src(0).op() != Ops::GEP) return {};
    std::vector<int64_t> idx;
    for (const UOp& g : l.src()) {
      if (g.op() != Ops::GEP || g.src(0) != l.src(0).src(0) || g.dtype().count() != 1) return {};
      idx.push_back(tuple_ints(g.arg())[0]);
    }
    return {l.src(0).src(0), idx};
  };
  for (const UOp& l : leaves) {
    auto [d, idx] = picked(l);
    if (d && d.op() == Ops::NOOP) d = d.src(0);
    const std::string name = d ? dot_name(d) : "";
    if (name.empty() || name.find('s') != std::string::npos || (dot && d != dot) || d.dtype().count() % m != 0) {
      others.push_back(l);
      continue;
    }
    if (static_cast<int64_t>(idx.size()) != m || idx[0] % m != 0) return std::nullopt;
    for (int64_t i = 0; i < m; i++)
      if (idx[static_cast<size_t>(i)] != idx[0] + i) return std::nullopt;
    if (!dot) dot = d, seen.assign(static_cast<size_t>(d.dtype().count() / m), false);
    if (seen[static_cast<size_t>(idx[0] / m)]) return std::nullopt;
    seen[static_cast<size_t>(idx[0] / m)] = true;
  }
  auto start = [&](const UOp& zero) {  // the other leaves' sum: the helper's start
    UOp sum = others.empty() ? zero : others[0];
    for (size_t i = 1; i < others.size(); i++) sum = sum + others[i];
    return sum;
  };
  // or a sum helper's call (its start zero) that the other leaves start instead
  if (!dot) {
    for (size_t i = 0; i < others.size() && !dot; i++) {
      const UOp& o = others[i];
      if (dot_name(o).find('s') == std::string::npos || o.dtype() != root.dtype() ||
          uniform_const(o.src(2)) != std::optional<int64_t>(0))
        continue;
      dot = o;
      others.erase(others.begin() + static_cast<std::ptrdiff_t>(i));
    }
    if (!dot || others.empty()) return std::nullopt;
    return dot.replace(std::nullopt, std::nullopt, std::vector<UOp>{dot.src(0), dot.src(1), start(UOp())});
  }
  if (std::find(seen.begin(), seen.end(), false) != seen.end()) return std::nullopt;
  return UOp::make(Ops::CUSTOM, root.dtype(), {dot.src(0), dot.src(1), start(root.const_like(0))},
                   cat(dot_name(dot), "s", m, "({0}, {1}, {2})"));
}

namespace {
// an ISA body's start: its vector types of `bytes`, and the operands a and b (of u8 and s8) as `chunks` of them
std::string isa_chunks(const std::string& u8, const std::string& s8, int64_t bytes, int64_t chunks) {
  return cat("  typedef int ci __attribute__((vector_size(", bytes, ")));\n",
             "  typedef char cb __attribute__((vector_size(", bytes, ")));\n",
             "  typedef short cs __attribute__((vector_size(", bytes, ")));\n", "  union { ", u8, " v; cb c[", chunks,
             "]; } x = {a};\n", "  union { ", s8, " v; cb c[", chunks, "]; } y = {b};\n");
}
}  // namespace

// the helper a CUSTOM of clang_dot4 calls: `int16 __tg_dot4_16n(unsigned_char64 a, signed_char64 b)`, each lane
// the sum of four lanes' products; `n` in the name: a's values keep pmaddubsw's pair sums within 16 bits
std::string ClangRenderer::render_dot4(const std::string& name, int64_t n) const {
  const bool narrow = name.back() == 'n';
  const std::string i32 = render_dtype(dtypes::int32.vec(n)), u8 = render_dtype(dtypes::uint8.vec(4 * n)),
                    s8 = render_dtype(dtypes::int8.vec(4 * n));
  std::string out =
      cat("static inline __attribute__((always_inline)) ", i32, " ", name, "(", u8, " a, ", s8, " b) {\n");
  // one ISA's body: the operands in chunks of `bytes`, each chunk's lanes from `expr` (of x, y: the chunks)
  bool first = true;
  auto body = [&](const std::string& cond, int64_t bytes, const std::string& expr) {
    if ((4 * n) % bytes != 0) return;
    const int64_t chunks = 4 * n / bytes;
    out += cat(first ? "#if " : "#elif ", cond, "\n");
    first = false;
    out += isa_chunks(u8, s8, bytes, chunks);
    out += cat("  union { ", i32, " v; ci c[", chunks, "]; } r;\n");
    // unrolled whole, so that the unions stay in registers (a loop over 32 chunks stays a loop through memory)
    out += cat("#pragma unroll\n  for (int i = 0; i < ", chunks, "; i++) r.c[i] = ", expr, ";\n");
    out += "  return r.v;\n";
  };
  body("defined(__AVX512VNNI__)", 64, "__builtin_ia32_vpdpbusd512((ci){0}, (ci)x.c[i], (ci)y.c[i])");
  body("defined(__AVXVNNI__) || (defined(__AVX512VNNI__) && defined(__AVX512VL__))", 32,
       "__builtin_ia32_vpdpbusd256((ci){0}, (ci)x.c[i], (ci)y.c[i])");
  if (narrow)
    body("defined(__AVX2__)", 32,
         "__builtin_ia32_pmaddwd256(__builtin_ia32_pmaddubsw256(x.c[i], y.c[i]), (cs){1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, "
         "1, "
         "1, 1, 1, 1})");
  if (!first) out += "#else\n";
  // plain C: the products widened as vectors, each group's four lanes picked by shuffles and added (the compiler
  // makes pmaddwd and adds of it; a loop over lanes would stay scalar), in chunks of 16 lanes: one expression over a
  // tile's 512 lanes took clang minutes to compile for SSE
  const int64_t lanes = std::min<int64_t>(n, 16), chunks = n / lanes;
  out += cat("  typedef unsigned char gu __attribute__((vector_size(", 4 * lanes, ")));\n");
  out += cat("  typedef signed char gs __attribute__((vector_size(", 4 * lanes, ")));\n");
  out += cat("  typedef int gi __attribute__((vector_size(", 4 * lanes, ")));\n");
  out += cat("  typedef int gw __attribute__((vector_size(", 16 * lanes, ")));\n");
  out += cat("  union { ", u8, " v; gu c[", chunks, "]; } x = {a};\n");
  out += cat("  union { ", s8, " v; gs c[", chunks, "]; } y = {b};\n");
  out += cat("  union { ", i32, " v; gi c[", chunks, "]; } r;\n");
  out += cat("#pragma unroll\n  for (int i = 0; i < ", chunks, "; i++) {\n");
  out += "    gw p = __builtin_convertvector(x.c[i], gw) * __builtin_convertvector(y.c[i], gw);\n    r.c[i] = ";
  for (int64_t k = 0; k < 4; k++) {
    out += cat(k ? " + " : "", "__builtin_shufflevector(p, p");
    for (int64_t j = 0; j < lanes; j++) out += cat(", ", 4 * j + k);
    out += ")";
  }
  out += ";\n  }\n  return r.v;\n";
  if (!first) out += "#endif\n";
  return out + "}";
}

// the helper a CUSTOM of clang_dot4_sum calls: `int16 __tg_dot4_64ns16(unsigned_char256 a, signed_char256 b, int16
// c)`, c plus the n / m slices of the dot helper's n lanes (`__tg_dot4_64n`'s) as one vector: each dot-product
// instruction accumulates into the slice's sum (vpdpbusd's first operand), where the slices were added after. The
// generic body calls the dot helper (emitted beside it) and adds its slices
std::string ClangRenderer::render_dot4_sum(const std::string& name, int64_t n, int64_t m) const {
  const std::string base = name.substr(0, name.rfind('s'));
  const std::string i32 = render_dtype(dtypes::int32.vec(m)), i32n = render_dtype(dtypes::int32.vec(n)),
                    u8 = render_dtype(dtypes::uint8.vec(4 * n)), s8 = render_dtype(dtypes::int8.vec(4 * n));
  std::string out =
      cat("static inline __attribute__((always_inline)) ", i32, " ", name, "(", u8, " a, ", s8, " b, ", i32, " c) {\n");
  bool first = true;
  auto body = [&](const std::string& cond, int64_t bytes, auto step) {
    const int64_t lanes = bytes / 4;  // int32 lanes a chunk
    if (m % lanes != 0) return;
    const int64_t per = m / lanes, chunks = 4 * n / bytes;
    out += cat(first ? "#if " : "#elif ", cond, "\n");
    first = false;
    out += isa_chunks(u8, s8, bytes, chunks);
    out += cat("  union { ", i32, " v; ci c[", per, "]; } r = {c};\n");
    // chunk i accumulates into its slice's lanes, r.c[i % per] (the step's `acc`)
    out += cat("#pragma unroll\n  for (int i = 0; i < ", chunks, "; i++) r.c[i % ", per,
               "] = ", step(cat("r.c[i % ", per, "]")), ";\n");
    out += "  return r.v;\n";
  };
  using Acc = const std::string&;
  body("defined(__AVX512VNNI__)", 64,
       [](Acc acc) { return cat("__builtin_ia32_vpdpbusd512(", acc, ", (ci)x.c[i], (ci)y.c[i])"); });
  body("defined(__AVXVNNI__) || (defined(__AVX512VNNI__) && defined(__AVX512VL__))", 32,
       [](Acc acc) { return cat("__builtin_ia32_vpdpbusd256(", acc, ", (ci)x.c[i], (ci)y.c[i])"); });
  if (name[name.rfind('s') - 1] == 'n')
    body("defined(__AVX2__)", 32, [](Acc acc) {
      return cat(acc,
                 " + __builtin_ia32_pmaddwd256(__builtin_ia32_pmaddubsw256(x.c[i], y.c[i]), (cs){1, 1, 1, 1, 1, 1, 1, "
                 "1, 1, 1, 1, 1, 1, 1, 1, 1})");
    });
  if (!first) out += "#else\n";
  out += cat("  typedef int gi __attribute__((vector_size(", 4 * m, ")));\n");
  out += cat("  union { ", i32n, " v; gi c[", n / m, "]; } d = {", base, "(a, b)};\n");
  out += cat("  ", i32, " r = c;\n#pragma unroll\n  for (int i = 0; i < ", n / m, "; i++) r += d.c[i];\n");
  out += "  return r;\n";
  if (!first) out += "#endif\n";
  return out + "}";
}

std::vector<DType> dot4_dtypes(const std::vector<UOp>& uops) {
  std::vector<DType> out;
  for (const UOp& u : uops)
    if (const std::string name = dot_name(u); !name.empty()) {
      const DType dt = dtypes::int32.vec(static_cast<int>(u.src(0).dtype().count() / 4));
      if (std::find(out.begin(), out.end(), dt) == out.end()) out.push_back(dt);
    }
  return out;
}

std::vector<std::string> ClangRenderer::render_dot4_defines(const std::vector<UOp>& uops) const {
  std::vector<std::string> names, out;
  auto add = [&](const std::string& name, auto render) {
    if (std::find(names.begin(), names.end(), name) != names.end()) return;
    names.push_back(name);
    out.push_back(render());
  };
  for (const UOp& u : uops) {
    const std::string name = dot_name(u);
    if (name.empty()) continue;
    const int64_t n = u.src(0).dtype().count() / 4;
    if (const size_t at = name.rfind('s'); at != std::string::npos) {  // a sum's: the dot helper first (its fallback)
      add(name.substr(0, at), [&] { return render_dot4(name.substr(0, at), n); });
      add(name, [&] { return render_dot4_sum(name, n, u.dtype().count()); });
    } else {
      add(name, [&] { return render_dot4(name, n); });
    }
  }
  return out;
}

}  // namespace tg
