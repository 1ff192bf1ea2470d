// the devectorizer's reduces: pm_reduce (REDUCE -> DEFINE_ACC+ASSIGN, or a closed form) and pm_horizontal_tree
#include <algorithm>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "tg/codegen/devectorizer.h"
#include "tg/uop/symbolic.h"

namespace tg {

// *** pm_horizontal_tree: a deferred horizontal reduce as a tree of halvings ***

namespace {

// x = g_0 op g_1 op ... op g_(h-1), each g_i a GEP of one vector v taking lane i of every output, each output's h
// lanes one aligned block of v, h >= 4 a power of two -> halvings of those blocks ([out][h] -> [out][h/2]: lanes h/2..
// of each output op-ed onto lanes ..h/2) until one lane an output is left. The chain gathers `out` scattered lanes h
// times, a shuffle each; the halvings add whole vector registers first, and only the last few steps shuffle.
// gep_pushing would flatten the halvings back into the chain, so this runs after the last rewrite that pushes GEPs.
UOp horizontal_tree(M m) {
  UOp root = m["root"];
  const Ops op = root.op();
  const int64_t out = root.dtype().count();
  std::vector<UOp> leaves, stack{root};
  while (!stack.empty()) {  // the leaves of the op-tree under root (the same op and dtype inside)
    UOp u = stack.back();
    stack.pop_back();
    if (u.op() == op && u.dtype() == root.dtype()) {
      stack.insert(stack.end(), u.src().rbegin(), u.src().rend());
    } else {
      if (u.op() != Ops::GEP || (!leaves.empty() && u.src(0) != leaves[0].src(0))) return {};
      leaves.push_back(u);
    }
  }
  const int64_t h = static_cast<int64_t>(leaves.size());
  UOp v = leaves[0].src(0);
  if (h < 4 || (h & (h - 1)) != 0 || v.dtype().count() % h != 0) return {};
  std::vector<bool> seen(static_cast<size_t>(v.dtype().count()));
  std::vector<int64_t> block(static_cast<size_t>(out), -1);  // output o's lanes: block block[o] of h lanes of v
  for (const UOp& g : leaves) {
    auto idx = tuple_ints(g.arg());
    for (int64_t o = 0; o < out; o++) {
      int64_t lane = idx[static_cast<size_t>(o)];
      if (block[static_cast<size_t>(o)] < 0) block[static_cast<size_t>(o)] = lane / h;
      if (lane / h != block[static_cast<size_t>(o)] || seen[static_cast<size_t>(lane)]) return {};
      seen[static_cast<size_t>(lane)] = true;
    }
  }
  bool whole = out * h == v.dtype().count();  // v is [out][h] as it is
  for (int64_t o = 0; o < out; o++) whole &= block[static_cast<size_t>(o)] == o;
  if (!whole) {  // the outputs' blocks, in order (one row's accumulator of a tile whose rows store apart)
    std::vector<int64_t> lanes;
    for (int64_t b : block)
      for (int64_t j = 0; j < h; j++) lanes.push_back(b * h + j);
    v = v.gep(lanes);
  }
  for (int64_t half = h / 2; half >= 1; half /= 2) {
    std::vector<int64_t> lo, hi;
    for (int64_t o = 0; o < out; o++)
      for (int64_t j = 0; j < half; j++) lo.push_back(o * 2 * half + j), hi.push_back(o * 2 * half + half + j);
    v = v.gep(lo).alu(op, {v.gep(hi)});
  }
  return v;
}

}  // namespace

const PatternMatcher<UOp>& pm_horizontal_tree() {
  using namespace pat;
  static const PatternMatcher<UOp> pm = {{op({Ops::ADD, Ops::MUL, Ops::MAX}).named("root"), horizontal_tree}};
  return pm;
}

// *** pm_reduce: REDUCE -> DEFINE_ACC+ASSIGN ***

namespace {

std::vector<UOp> horizontal_reduce(const UOp& inp, DType out_dtype) {
  // if this has a horizontal reduction component, do that first
  if (inp.dtype() != out_dtype) {
    // NOTE: [0 1 2 3 4 5 6 7] -> [0+4, 1+5, 2+6, 3+7]
    int cnt = inp.dtype().count(), horizontal_amount = cnt / out_dtype.count();
    std::vector<UOp> out;
    for (int i = 0; i < horizontal_amount; i++) {
      std::vector<int64_t> g;
      for (int j = i; j < cnt; j += horizontal_amount) g.push_back(j);
      out.push_back(inp.gep(g));
    }
    return out;
  }
  return {inp};
}

UOp alu_fold(const std::vector<UOp>& xs, Ops op) {  // xs[0] op xs[1] op ...
  UOp ret = xs[0];
  for (size_t i = 1; i < xs.size(); i++) ret = ret.alu(op, {xs[i]});
  return ret;
}

// whether lanes a and b of u hold the same value for every (a, b) of `pairs`, seen from u's structure: the same
// source of a VECTORIZE, the same lane of a GEP, lane-wise ops of sources that do. Walks the vector ops above the
// loads, and into the indices of a load of one address a lane (a worklist, no recursion); a vector load's lanes are
// told apart
bool lanes_equal(const UOp& u, std::vector<std::pair<int64_t, int64_t>> pairs) {
  std::vector<std::pair<UOp, std::vector<std::pair<int64_t, int64_t>>>> work{{u, std::move(pairs)}};
  size_t budget = 1 << 16;  // pair checks, so a wide graph costs a bounded walk (then: not shown equal)
  while (!work.empty()) {
    auto [x, ps] = std::move(work.back());
    work.pop_back();
    if (ps.empty()) continue;
    if (ps.size() > budget) return false;
    budget -= ps.size();
    if (x.op() == Ops::LOAD) {  // a gather's lanes are equal where their addresses are (each lane its own index)
      const UOp& ix = x.src(0);
      if (x.src().size() != 1 || ix.op() != Ops::INDEX || ix.src().size() < 2 ||
          ix.src(1).dtype().count() != x.dtype().count())
        return false;
      for (size_t i = 1; i < ix.src().size(); i++) work.emplace_back(ix.src(i), ps);
      continue;
    }
    if (x.dtype().count() == 1 && x.op() != Ops::GEP) continue;  // a scalar broadcast: every lane is the one value
    switch (x.op()) {
      case Ops::VECTORIZE:
        for (auto [a, b] : ps)
          if (x.src(static_cast<size_t>(a)) != x.src(static_cast<size_t>(b))) return false;
        break;
      case Ops::VCONST: {
        auto vals = x.arg<Tuple>();
        for (auto [a, b] : ps)
          if (!(vals[static_cast<size_t>(a)] == vals[static_cast<size_t>(b)])) return false;
        break;
      }
      case Ops::CONST: break;
      case Ops::GEP: {
        auto idx = tuple_ints(x.arg());
        std::vector<std::pair<int64_t, int64_t>> next;
        for (auto [a, b] : ps)
          if (idx[static_cast<size_t>(a)] != idx[static_cast<size_t>(b)])
            next.emplace_back(idx[static_cast<size_t>(a)], idx[static_cast<size_t>(b)]);
        work.emplace_back(x.src(0), std::move(next));
        break;
      }
      default:
        if (!GroupOp::ALU.has(x.op()) && x.op() != Ops::CAST && x.op() != Ops::BITCAST) return false;
        if (x.op() == Ops::BITCAST && x.src(0).dtype().count() != x.dtype().count()) return false;
        for (const UOp& s : x.src()) work.emplace_back(s, ps);
    }
  }
  return true;
}

// whether u's n lanes are the same within each run of w (lanes s .. s + w - 1, s a multiple of w)
bool runs_equal(const UOp& u, int64_t n, int64_t w) {
  std::vector<std::pair<int64_t, int64_t>> same;
  for (int64_t s = 0; s < n; s += w)
    for (int64_t l = 1; l < w; l++) same.emplace_back(s, s + l);
  return lanes_equal(u, std::move(same));
}

// v's lanes summed in `parts` vectors of `width` lanes: lane m of part k is v's lane at(k, m)
template <class At>
UOp sum_of_parts(const UOp& v, int64_t parts, int64_t width, At at) {
  UOp sum;
  for (int64_t k = 0; k < parts; k++) {
    std::vector<int64_t> lanes;
    for (int64_t m = 0; m < width; m++) lanes.push_back(at(k, m));
    sum = k == 0 ? v.gep(lanes) : sum.alu(Ops::ADD, {v.gep(lanes)});
  }
  return sum;
}

// the integer sums of a * b over each output's h lanes (n lanes, [output][h]): the products reordered to (quad,
// output, 4 lanes), each quad's four summed (one lane of a dot-product instruction), the quads' sums added as whole
// vectors of the outputs. Both NOOPs keep their vector whole (the GEP pushing would split it into lanes)
UOp block_dot(const UOp& a, const UOp& b, int64_t n, int64_t h) {
  const int64_t out = n / h, quads = h / 4;
  std::vector<int64_t> order;  // lane (q, o, j) of the reordered product: lane o * h + 4q + j of a * b
  for (int64_t q = 0; q < quads; q++)
    for (int64_t o = 0; o < out; o++)
      for (int64_t j = 0; j < 4; j++) order.push_back(o * h + 4 * q + j);
  UOp whole = UOp::make(Ops::NOOP, a.dtype(), {a.gep(order).alu(Ops::MUL, {b.gep(order)})});
  // (q, o): each quad's four products summed; then the quads
  UOp dot = sum_of_parts(whole, 4, quads * out, [](int64_t j, int64_t m) { return 4 * m + j; });
  dot = UOp::make(Ops::NOOP, dot.dtype(), {dot});
  return sum_of_parts(dot, quads, out, [&](int64_t q, int64_t o) { return q * out + o; });
}

// x's sum over each output's h lanes: when every output's lanes are the same (activations broadcast along a weight's
// rows), the first output's, by halvings, broadcast; else every output's
UOp block_total(const UOp& x, int64_t n, int64_t h) {
  const int64_t out = n / h;
  std::vector<std::pair<int64_t, int64_t>> same;
  for (int64_t o = 1; o < out; o++)
    for (int64_t l = 0; l < h; l++) same.emplace_back(l, o * h + l);
  if (!lanes_equal(x, same)) return sum_of_parts(x, h, out, [&](int64_t l, int64_t o) { return o * h + l; });
  std::vector<int64_t> first(static_cast<size_t>(h));
  std::iota(first.begin(), first.end(), 0);
  UOp v = UOp::make(Ops::NOOP, x.dtype().scalar().vec(static_cast<int>(h)), {x.gep(first)});
  for (int64_t w = h / 2; w >= 1; w /= 2) {
    std::vector<int64_t> lo(static_cast<size_t>(w)), hi(static_cast<size_t>(w));
    std::iota(lo.begin(), lo.end(), 0), std::iota(hi.begin(), hi.end(), w);
    v = v.gep(lo).alu(Ops::ADD, {v.gep(hi)});
  }
  return v.broadcast(static_cast<int>(out));
}

// ReduceContext::integer_block_sums: (float(p) [+ e]) * s over an output's h lanes (n lanes, [output][h]), s (and e)
// the same on each part of w of them (w = h, or a half, a quarter: Q6_K's scale covers 16 weights of a block of 32),
// as the parts' (float(the part's integer sum) [+ w * e]) * s added, the sums in the order of a dot-product
// instruction's operands
// (block_dot: a weight laid out (quad, row, 4) loads whole vectors of them, multiplied by the activations' quad
// broadcast). A factor u + c, c a constant (a weight's integers less their offset: Q4_0's 8, Q8_0's 128 as we store
// it), is u's products plus c times the other factor's sum, taken once for all outputs where they share it
std::optional<UOp> integer_block_sum(const UOp& p, const UOp& sc, const std::optional<UOp>& e, DType f, int64_t n,
                                     int64_t h) {
  const int64_t out = n / h;
  auto constant_over = [&](int64_t w) { return runs_equal(sc, n, w) && (!e || runs_equal(*e, n, w)); };
  int64_t w = h;
  while (w % 8 == 0 && !constant_over(w)) w /= 2;
  if (!constant_over(w)) return std::nullopt;
  // p as (u + c) * x, c a uniform constant, or a * b
  UOp a = p.src(0), x = p.src(1);
  std::optional<UOp> cv;
  for (size_t i = 0; i < 2 && !cv; i++) {
    const UOp& ai = p.src(i);
    if (ai.op() != Ops::ADD) continue;
    for (size_t k = 0; k < 2 && !cv; k++) {
      const UOp& c = ai.src(k);
      const bool uniform = c.op() == Ops::CONST ||
                           (c.op() == Ops::VECTORIZE && c.src(0).op() == Ops::CONST &&
                            std::all_of(c.src().begin(), c.src().end(), [&](const UOp& s) { return s == c.src(0); }));
      if (!uniform) continue;
      cv = UOp::const_(c.dtype().scalar(), (c.op() == Ops::CONST ? c : c.src(0)).const_arg())
               .broadcast(static_cast<int>(out));
      a = ai.src(1 - k), x = p.src(1 - i);
    }
  }
  UOp total;
  for (int64_t part = 0; part < h / w; part++) {
    // the part's lanes, [output][w]: all of them when the scale is constant over the whole block
    std::vector<int64_t> pick, first;
    for (int64_t o = 0; o < out; o++) {
      first.push_back(o * h + part * w);
      for (int64_t l = 0; l < w; l++) pick.push_back(o * h + part * w + l);
    }
    const UOp pa = w == h ? a : a.gep(pick), px = w == h ? x : x.gep(pick);
    UOp sum = block_dot(pa, px, out * w, w);
    if (cv) sum = sum + block_total(px, out * w, w) * *cv;
    UOp t = sum.cast(f.vec(static_cast<int>(out)));
    if (e) t = t + e->gep(first) * e->gep(first).const_like(static_cast<double>(w));
    t = t * sc.gep(first);
    total = part == 0 ? t : total + t;
  }
  return total;
}

}  // namespace

bool is_int_product(const UOp& u) {
  return u.op() == Ops::CAST && u.src(0).op() == Ops::MUL && dtypes::is_int(u.src(0).dtype().scalar());
}

namespace {

// A deferred horizontal sum of float(p) * s, with p a product of integers and s the same on each group of g lanes
// (g = 4, or 2 where an output's h lanes aren't whole fours; a group lies within one output's lanes): the group's
// integer products summed first, float(p[gj] + ... + p[gj+g-1]) * s[gj], a g-th of the lanes. The integer adds are
// exact (the factors' bounds keep a group's sum within int32) and the float sum over an output's lanes is only
// reassociated, as any unrolled reduce is. A group of four 8-bit products summed into 32 bits is one lane of x86's
// vpdpbusd (VNNI) and of CUDA's dp4a: the renderers that have such an instruction see the sum (four GEPs of the
// product's lanes) and emit it; the others compute it as written. A quantized matvec's blocks of integer products
// (nn::ggml_int8_linear) become a few dot instructions where they were a conversion and an FMA a lane. nullopt when
// inp isn't one, or h is odd
std::optional<UOp> group_integer_products(const UOp& inp, int64_t h, bool block_sums) {
  const int64_t g = h % 4 == 0 ? 4 : 2;
  if (h % 2 != 0 || inp.op() != Ops::MUL || !dtypes::is_float(inp.dtype().scalar())) return std::nullopt;
  for (size_t i = 0; i < 2; i++) {
    UOp c = inp.src(i);
    const UOp& sc = inp.src(1 - i);
    // (float(p) + e) * s: a float added to each lane, the same over a block (an integer offset of the weight's taken
    // out of p, times x's block sum, spread over the block's lanes: nn::ggml_int8_linear), on the block-sum path only
    std::optional<UOp> e;
    if (block_sums && c.op() == Ops::ADD)
      for (size_t j = 0; j < 2 && !e; j++)
        if (is_int_product(c.src(j))) e = c.src(1 - j), c = c.src(j);
    if (!is_int_product(c)) continue;
    const UOp& p = c.src(0);
    if (p.dtype().scalar().itemsize() < 4) continue;
    auto mag = [](const UOp& x) {
      ConstValue lo = x.vmin(), hi = x.vmax();
      if (std::holds_alternative<double>(lo) || std::holds_alternative<double>(hi)) return i128(1) << 64;
      return std::max(as_i128(hi), -as_i128(lo));
    };
    const int64_t n = inp.dtype().count();
    if (block_sums && h % 4 == 0 && mag(p.src(0)) * mag(p.src(1)) * h < (i128(1) << 31))
      if (std::optional<UOp> summed = integer_block_sum(p, sc, e, c.dtype().scalar(), n, h)) return summed;
    if (e || mag(p.src(0)) * mag(p.src(1)) * g >= (i128(1) << 31)) continue;
    if (!runs_equal(sc, n, g)) continue;
    std::vector<std::vector<int64_t>> lanes(static_cast<size_t>(g));
    for (int64_t j = 0; j < n; j += g)
      for (int64_t k = 0; k < g; k++) lanes[static_cast<size_t>(k)].push_back(j + k);
    // the product stays one vector (a NOOP: the GEP pushing would split it into its groups' lanes, and neither the
    // renderer nor the compiler would see the groups)
    UOp whole = UOp::make(Ops::NOOP, p.dtype(), {p});
    UOp sum = whole.gep(lanes[0]);
    for (size_t k = 1; k < lanes.size(); k++) sum = sum.alu(Ops::ADD, {whole.gep(lanes[k])});
    return sum.cast(c.dtype().scalar().vec(n / g)) * sc.gep(lanes[0]);
  }
  return std::nullopt;
}

// float(p) * s + c over each output's h lanes, c the same on all of them (a K-quant's min times x's block sum, a
// 32nd on each lane: nn::ggml_int8_linear): the product's block sums (integer_block_sum) plus h * c once an output,
// where c took an add a lane. nullopt unless the product sums by blocks
std::optional<UOp> group_block_sums_plus(const UOp& inp, int64_t h) {
  if (inp.op() != Ops::ADD || h % 4 != 0) return std::nullopt;
  const int64_t n = inp.dtype().count(), out = n / h;
  std::vector<int64_t> first;
  for (int64_t o = 0; o < out; o++) first.push_back(o * h);
  for (size_t i = 0; i < 2; i++) {
    const UOp &x = inp.src(i), &c = inp.src(1 - i);
    if (x.op() != Ops::MUL || !runs_equal(c, n, h)) continue;
    std::optional<UOp> g = group_integer_products(x, h, true);
    if (!g || g->dtype().count() != out) continue;
    return *g + c.gep(first) * c.gep(first).const_like(static_cast<double>(h));
  }
  return std::nullopt;
}

UOp reduce_to_acc(M m, ReduceContext& ctx) {
  UOp red = m["red"];
  UOp inp = red.src(0);
  std::vector<UOp> reduce_range(red.src().begin() + 1, red.src().end());
  Ops rop = red.arg<Ops>();
  if (ctx.defer_horizontal && !reduce_range.empty() && inp.dtype() != red.dtype()) {
    const int64_t h = inp.dtype().count() / red.dtype().count();
    if (rop == Ops::ADD)
      if (std::optional<UOp> grouped = ctx.integer_block_sums && inp.op() == Ops::ADD
                                           ? group_block_sums_plus(inp, h)
                                           : group_integer_products(inp, h, ctx.integer_block_sums))
        inp = *grouped;
    std::vector<UOp> src{inp.const_like(identity_element(rop, inp.dtype().scalar()))};
    src.insert(src.end(), reduce_range.begin(), reduce_range.end());
    UOp acc = UOp::make(Ops::DEFINE_ACC, inp.dtype(), src, Tuple{ConstValue(ctx.acc_num++)});
    return alu_fold(horizontal_reduce(UOp::make(Ops::ASSIGN, acc.dtype(), {acc, acc.alu(rop, {inp})}), red.dtype()),
                    rop);
  }
  std::vector<UOp> lst = horizontal_reduce(inp, red.dtype());
  for (const UOp& x : lst) TG_ASSERT(x.dtype() == red.dtype(), "horizontal reduction mismatch");
  UOp acc;
  // if we have a range
  if (!reduce_range.empty()) {
    std::vector<UOp> src{red.const_like(identity_element(rop, red.dtype().scalar()))};
    src.insert(src.end(), reduce_range.begin(), reduce_range.end());
    acc = UOp::make(Ops::DEFINE_ACC, red.dtype(), src, Tuple{ConstValue(ctx.acc_num)});
    lst.insert(lst.begin(), acc);  // put acc as the first element
    ctx.acc_num++;
  }
  UOp ret = alu_fold(lst, rop);
  return acc ? UOp::make(Ops::ASSIGN, acc.dtype(), {acc, ret}) : ret;
}

UOp reduce_unparented(M m) {
  UOp red = m["red"];
  Ops rop = red.arg<Ops>();
  if (rop != Ops::ADD && rop != Ops::MAX) return {};
  std::vector<UOp> parents = red.src(0).toposort();
  std::unordered_set<const UOpNode*> ps;
  for (const UOp& p : parents) ps.insert(p.get());
  std::vector<UOp> parented, unparented;
  for (size_t i = 1; i < red.src().size(); i++)
    (ps.count(red.src(i).get()) ? parented : unparented).push_back(red.src(i));
  if (unparented.empty()) return {};
  UOp ret;
  if (!parented.empty() || red.dtype() != red.src(0).dtype()) {
    std::vector<UOp> src{red.src(0)};
    src.insert(src.end(), parented.begin(), parented.end());
    ret = red.replace(std::nullopt, std::nullopt, src);
  } else {
    ret = red.src(0);
  }
  if (rop == Ops::ADD)
    for (const UOp& r : unparented) ret = ret * r.src(0).cast(ret.dtype().scalar()).broadcast(ret.dtype().count());
  return ret;
}

bool no_range(const UOp& u) {
  for (const UOp& x : u.toposort())
    if (x.op() == Ops::RANGE) return false;
  return true;
}

UOp reduce_rangeless(M m) {
  // TODO: share code with reduce_unparented
  UOp red = m["red"];
  Ops rop = red.arg<Ops>();
  if (rop != Ops::ADD && rop != Ops::MAX) return {};
  if (red.src(0).dtype() != red.dtype()) return {};
  if (!no_range(red.src(0))) return {};
  UOp ret = red.src(0);
  if (rop == Ops::ADD)
    for (size_t i = 1; i < red.src().size(); i++)
      ret = ret * red.src(i).src(0).cast(ret.dtype().scalar()).broadcast(ret.dtype().count());
  return ret;
}

// a REDUCE of a vector: its horizontal part first (lanes folded into the output's count), then one scalar REDUCE per
// output lane, so the collapse rules see scalars (an unrolled arange)
UOp no_vectorized_reduce(M m) {
  UOp inp = m["inp"], red = m["red"];
  Ops rop = red.arg<Ops>();
  if (inp.dtype() != red.dtype()) {
    std::vector<UOp> src = red.src();
    src[0] = alu_fold(horizontal_reduce(inp, red.dtype()), rop);
    red = red.replace(std::nullopt, std::nullopt, src);
    if (red.dtype().count() == 1) return red;
  }
  if (red.dtype().count() == 1) return {};
  std::vector<UOp> alus;
  for (int i = 0; i < red.dtype().count(); i++) {
    std::vector<UOp> src = red.src();
    src[0] = red.src(0).gep(i);
    alus.push_back(UOp::make(Ops::REDUCE, red.dtype().scalar(), src, red.arg()));
  }
  return UOp::make(Ops::VECTORIZE, red.dtype(), alus);
}

UOp reduce_add(const UOp& x, const UOp& r) {  // x.reduce(*r.src[1:], arg=ADD)
  std::vector<UOp> src{x};
  src.insert(src.end(), r.src().begin() + 1, r.src().end());
  return UOp::make(Ops::REDUCE, x.dtype(), src, Ops::ADD);
}

// the rules that fold a REDUCE over a range into closed-form math (arange, one-hot indexing)
const PatternMatcher<UOp>& pm_reduce_collapse() {
  using namespace pat;
  auto reduce_of = [](UPat src) { return op(Ops::REDUCE, {std::move(src)}).any_len().arg(Arg(Ops::ADD)); };
  static const PatternMatcher<UOp> pm =
      PatternMatcher<UOp>{
          {(x + y) < z,
           [](M m) -> UOp {  // x+y<c -> x<c-y (y, c outside)
             return no_range(m[y]) && no_range(m[z]) ? m[x] < (m[z] - m[y]) : UOp{};
           }},
          {(x * y) < z,
           [](M m) -> UOp {  // x*y<c -> x<(c+y-1)//y (y > 0)
             if (!no_range(m[y]) || !no_range(m[z]) || !(as_double(m[y].vmin()) > 0)) return {};
             return m[x] < idiv(m[z] + m[y] - 1, m[y]);
           }},
          {ne(x + y, z),
           [](M m) -> UOp {  // x+y!=c -> x!=c-y (y, c outside)
             return no_range(m[y]) && no_range(m[z]) ? m[x].ne(m[z] - m[y]) : UOp{};
           }},
          // fold the range
          {reduce_of(where(op(Ops::RANGE).named("r") < var("cut"), const_pat(std::nullopt, int64_t(0)), cvar("val"))),
           [](M m) {
             UOp r = m["r"], cut = m["cut"], val = m["val"];  // sum(r<cut ? 0 : val) -> clamp(n-cut)*val
             return (r.src(0) - cut).maximum(r.src(0).const_like(0)).minimum(r.src(0)).cast(val.dtype()) * val;
           }},
          {reduce_of(where(op(Ops::RANGE).named("r") < var("cut"), cvar("val"), const_pat(std::nullopt, int64_t(0)))),
           [](M m) {
             UOp r = m["r"], cut = m["cut"], val = m["val"];  // sum(r<cut ? val : 0) -> clamp(cut)*val
             return cut.maximum(cut.const_like(0)).minimum(r.src(0)).cast(val.dtype()) * val;
           }},
          {reduce_of(x + y).named("r"),
           [](M m) {  // sum(x+y) -> sum(x)+sum(y)
             return reduce_add(m[x], m["r"]) + reduce_add(m[y], m["r"]);
           }},
          {x * var("gate").dtype(dtypes::bool_).cast(),
           [](M m) { return m["gate"].where(m[x], m[x].const_like(0)); }},  // x*cast(g) -> g?x:0
          // WHERE on LOAD (works on max too)
          {reduce_of(where(var("gate"), op(Ops::INDEX, {var("buf"), var("idx")}).load(),
                           const_pat(std::nullopt, int64_t(0)))),
           [](M m) { return m["buf"].index(m["idx"], m["gate"]).load(); }},  // sum(g?LOAD(i):0) -> LOAD(i, g)
          {reduce_of(where(var("gate"), const_pat(std::nullopt, int64_t(0)),
                           op(Ops::INDEX, {var("buf"), var("idx")}).load())),
           [](M m) {
             return m["buf"].index(m["idx"], m["gate"].logical_not()).load();
           }},  // sum(g?0:LOAD(i)) -> LOAD(i, !g)
          // INDEX on RANGE / gated RANGE: buf[expr(r)] gated by idx==r -> buf[expr(idx)], gated by 0<=idx<n
          {op(Ops::INDEX, {var("buf"), var("expr"), ne(ne(var("idx"), op(Ops::RANGE).named("r").or_casted()), true)}),
           [](M m) {
             UOp r = m["r"], i = m["idx"].cast(m["r"].dtype());
             UOp valid = (i >= i.const_like(0)) & (i < r.src(0));
             return m["buf"].index(m["expr"].substitute({{r, i}}), valid);
           }},
          // AND on WHERE: sum(x&y ? c : 0) with x a variable (outside the range) -> sum(y ? c : 0) * x
          {reduce_of(where(any({op(Ops::DEFINE_VAR).named("dv"), op(Ops::DEFINE_VAR).gep().named("dv")}) & var("g"),
                           cvar("c"), const_pat(std::nullopt, int64_t(0))))
               .named("r"),
           [](M m) {
             UOp c = m["c"];
             return reduce_add(m["g"].where(c, c.const_like(0)), m["r"]) * m["dv"].cast(c.dtype());
           }},
          {op(Ops::REDUCE).named("red"), reduce_rangeless},  // REDUCE without RANGE in src -> x*n
          {op(Ops::REDUCE, {op(Ops::VECTORIZE).named("inp")}).any_len().named("red"),
           no_vectorized_reduce},  // REDUCE(vector) -> VECTORIZE(REDUCEs)
          {op({Ops::INDEX, Ops::LOAD, Ops::WHERE}).named("alu"),
           [](M m) { return no_vectorized_alu(m["alu"]); }},  // TODO: too aggressive
      } +
      sym_codegen();
  return pm;
}

// root's parents in tinygrad's order (u.parents: its srcs, then each src's parents, first occurrences only). A src
// whose parents were walked already adds nothing new, so each node is walked once, on an explicit stack (every
// node's own list was quadratic: a packed matmul's unrolled kernel spent seconds here)
std::vector<UOp> ordered_parents(const UOp& root) {
  std::vector<UOp> out;
  std::unordered_set<const UOpNode*> listed, walked{root.get()};
  auto list_srcs = [&](const UOp& u) {
    for (const UOp& s : u.src())
      if (listed.insert(s.get()).second) out.push_back(s);
  };
  struct Frame {
    UOp u;
    size_t next;
  };
  std::vector<Frame> stack{{root, 0}};
  list_srcs(root);
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.next == f.u.src().size()) {
      stack.pop_back();
      continue;
    }
    UOp s = f.u.src(f.next++);
    if (!walked.insert(s.get()).second) continue;
    list_srcs(s);
    stack.push_back({std::move(s), 0});
  }
  return out;
}

UOp reduce_collapse(M m) {
  UOp red = m["red"];
  const UOp& rng = red.src(1);
  std::unordered_set<const UOpNode*> after_rng;  // the nodes that have rng among their parents
  for (const UOp& u : red.toposort())
    for (const UOp& s : u.src())
      if (s == rng || after_rng.count(s.get())) {
        after_rng.insert(u.get());
        break;
      }
  std::vector<UOp> included;
  std::unordered_set<const UOpNode*> not_included;
  for (const UOp& x : ordered_parents(red)) {
    if (x == rng || after_rng.count(x.get()))
      included.push_back(x);
    else
      not_included.insert(x.get());
  }
  for (const UOp& x : included)
    if (x.op() == Ops::STORE || x.op() == Ops::REDUCE) return {};
  // the cheap test first: a sum that uses its range sheds it only where the range is compared (r < cut, idx != r):
  // every rule below that removes a range matches a comparison (a matmul's sum has none)
  const UOp& x0 = red.src(0);
  if ((x0 == rng || after_rng.count(x0.get())) && std::none_of(included.begin(), included.end(), [](const UOp& x) {
        return x.op() == Ops::CMPLT || x.op() == Ops::CMPNE;
      }))
    return {};
  std::vector<std::pair<UOp, UOp>> replaces, back;
  std::unordered_set<const UOpNode*> replaced;
  static constexpr OpSet keep{Ops::CONST, Ops::VCONST, Ops::DEFINE_GLOBAL, Ops::DEFINE_LOCAL, Ops::DEFINE_VAR};
  for (const UOp& u : included)
    for (const UOp& s : u.src()) {
      if (!not_included.count(s.get()) || keep.has(s.op()) || !replaced.insert(s.get()).second) continue;
      UOp v = UOp::make(Ops::DEFINE_VAR, s.dtype(), {}, VarArg{cat("in", replaces.size()), s.vmin(), s.vmax()});
      replaces.push_back({s, v});
      back.push_back({v, s});
    }
  UOp collapse_fxn = replaces.empty() ? red : red.substitute(replaces);
  UOp sink = graph_rewrite(collapse_fxn, pm_reduce_collapse(), {.name = "reduce_collapse"});
  // TODO: why is REDUCE needed here and just RANGE isn't enough?
  for (const UOp& x : sink.toposort())
    if (x.op() == Ops::REDUCE || x.op() == Ops::RANGE) return {};
  return back.empty() ? sink : sink.substitute(back);
}

}  // namespace

const PatternMatcher<UOp, ReduceContext>& pm_reduce() {
  static const PatternMatcher<UOp, ReduceContext> pm =
      PatternMatcher<UOp, ReduceContext>{
          {op(Ops::REDUCE).named("red"), reduce_unparented},                // drop ranges the source doesn't use
          {op(Ops::REDUCE, {var(), var()}).named("red"), reduce_collapse},  // REDUCE without loads -> closed form
          {op(Ops::REDUCE).named("red"), reduce_to_acc},                    // REDUCE -> DEFINE_ACC+ASSIGN
          {op(Ops::WMMA).named("wmma") + var("add"),
           [](M m) {  // WMMA(a, b, c) + add -> WMMA(a, b, c + add): the tensor core's own accumulate
             UOp w = m["wmma"];
             return UOp::make(Ops::WMMA, w.dtype(), {w.src(0), w.src(1), w.src(2) + m["add"]}, w.arg());
           }},
      } +
      with_ctx<ReduceContext>(sym_codegen());
  return pm;
}

}  // namespace tg
