#include "tg/codegen/devectorizer.h"

#include <algorithm>
#include <map>

#include "tg/uop/symbolic.h"
#include "tg/uop/wmma_arg.h"

namespace tg {

// *** load_store_indexing ***

namespace {

UOp simplify_valid_load(M m) {
  UOp buf = m["buf"], start_idx = m["start_idx"], valid = m["valid"];
  UOp idx = uop_given_valid(valid, start_idx);
  if (!idx) return buf.const_like(0);
  TG_CHECK(!buf.dtype().is_image(), "image buffers are not supported");
  return idx == start_idx ? UOp{} : buf.index(idx, valid);
}

UOp delete_redundant_gates(const UOp& buf, const UOp& idx, const UOp& val, const UOp& store_gate, const UOp* cast) {
  bool found = false;
  for (const UOp& g : val.toposort())
    if (g.op() == Ops::IF && g.src(0) == store_gate) found = true;
  if (!found) return {};
  // remove the gate from the index
  UOp i = buf.index(idx);
  return (cast ? i.cast(cast->dtype()) : i).store({val});
}

}  // namespace

const PatternMatcher<UOp>& load_store_indexing() {
  static const PatternMatcher<UOp> pm = {
      {op(Ops::AND).named("valid"), [](M m) { return simplify_valid(m["valid"]); }},  // valid -> simplified valid
      {op(Ops::INDEX, {var("buf"), var("start_idx"), var("valid")}),
       simplify_valid_load},  // INDEX(b, i, v) -> INDEX(b, i|v, v)
      {op(Ops::INDEX,
          {var("buf"), var("start_idx"), const_pat(std::nullopt, true)}),  // INDEX(b, i, True) -> INDEX(b, i)
       [](M m) { return m["buf"].index(m["start_idx"]); }},
      // delete_redundant_gates (after expand)
      {op(Ops::STORE, {op(Ops::INDEX, {var("buf"), var("idx"), var("store_gate")}), var("val")}),
       [](M m) { return delete_redundant_gates(m["buf"], m["idx"], m["val"], m["store_gate"], nullptr); }},
      {op(Ops::STORE, {op(Ops::INDEX, {var("buf"), var("idx"), var("store_gate")}).cast().named("cast"), var("val")}),
       [](M m) {
         UOp c = m["cast"];
         return delete_redundant_gates(m["buf"], m["idx"], m["val"], m["store_gate"], &c);
       }},
  };
  return pm;
}

// *** load/store grouping ***

namespace {

UOp expand_index(M m) {
  UOp buf = m["buf"], vec = m["vec"];
  UOp mask = m.has("mask") ? m["mask"] : UOp{};
  int n = vec.dtype().count();
  // generate the individual indexes
  std::vector<UOp> idxs_src;
  for (int i = 0; i < n; i++) idxs_src.push_back(mask ? buf.index(vec.gep(i), mask.gep(i)) : buf.index(vec.gep(i)));
  static const PatternMatcher<UOp> pm_index = sym() + gep_pushing() + load_store_indexing();
  const std::string name = trace::tracking() ? cat("index_buf_", arg_str(buf.arg())) : "";
  UOp midx = graph_rewrite(UOp::sink(idxs_src), pm_index, {.name = name.empty() ? nullptr : name.c_str()});
  // extract all the relevant offsets, grouped by their root (and gate), in first-seen order
  struct Root {
    UOp gate, root;  // root null: the index is a CONST
    std::map<int64_t, std::vector<int>> offsets;
  };
  std::vector<Root> roots;
  for (int i = 0; i < n; i++) {
    const UOp& mi = midx.src(static_cast<size_t>(i));
    const UOp& idx = mi.src(1);
    UOp root_src;
    int64_t arg = 0;
    if (idx.op() == Ops::ADD && idx.src(1).op() == Ops::CONST)
      root_src = idx.src(0), arg = as_int(idx.src(1).const_arg());
    else if (idx.op() == Ops::ADD && idx.src(0).op() == Ops::CONST)
      root_src = idx.src(1), arg = as_int(idx.src(0).const_arg());
    else if (idx.op() == Ops::CONST)
      arg = as_int(idx.const_arg());
    else
      root_src = idx;
    UOp gate = mi.src().size() == 3 ? mi.src(2) : UOp{};
    auto it =
        std::find_if(roots.begin(), roots.end(), [&](const Root& r) { return r.gate == gate && r.root == root_src; });
    if (it == roots.end()) it = roots.insert(roots.end(), Root{gate, root_src, {}});
    it->offsets[arg].push_back(i);
  }
  // the buf.dtype is always a pointer
  DType ptrdtype = buf.dtype();
  // then rewrite everything we can into groups
  std::vector<UOp> ret;
  std::vector<int64_t> idxs(static_cast<size_t>(n), -1);
  int64_t global_offset = 0;
  for (const Root& r : roots) {
    std::vector<std::vector<int64_t>> groups;
    int64_t i = 0, prev_key = 0;
    for (auto& [off, _] : r.offsets) {
      if (groups.empty() || off - i != prev_key) groups.push_back({});
      prev_key = off - i;
      groups.back().push_back(off);
      i++;
    }
    for (const auto& grp : groups) {
      // get the index offset for this element. using [0] is okay, because they are the same
      UOp lidx = midx.src(static_cast<size_t>(r.offsets.at(grp[0])[0]));
      if (grp.size() > 1)
        lidx = lidx.cast(ptrdtype.base().vec(static_cast<int>(grp.size())).ptr(ptrdtype.size(), ptrdtype.local()));
      // set the idxs of the output
      for (size_t j = 0; j < grp.size(); j++)
        for (int oo : r.offsets.at(grp[j])) idxs[static_cast<size_t>(oo)] = global_offset + static_cast<int64_t>(j);
      // add this lidx to the CAT
      ret.push_back(lidx);
      global_offset += static_cast<int64_t>(grp.size());
    }
  }
  TG_ASSERT(std::find(idxs.begin(), idxs.end(), -1) == idxs.end(), "some idxs are missing");
  // this base thing is for image, we want the CAT to be a normal pointer
  UOp post_cat = UOp::make(Ops::PTRCAT, ptrdtype.base().ptr(ptrdtype.size(), ptrdtype.local()).vec(n), ret);
  return post_cat.gep(idxs);
}

UOp cat_after_store(M m) {
  UOp c = m["cat"], data = m["data"];
  int64_t offset = 0;
  std::vector<UOp> ret;
  for (const UOp& s : c.src()) {
    ret.push_back(s.store({data.gep(iota(offset, offset + s.dtype().count()))}));
    offset += s.dtype().count();
  }
  return UOp::sink(ret);
}

UOp gep_on_store(M m) {
  // NOTE: we need to invert the gep here, but it may be an expanding gep. fake argsort. TODO: handle duplicates
  UOp gep = m["gep"], st = m["st"];
  std::map<int64_t, int64_t> a;
  auto arg = tuple_ints(gep.arg());
  for (size_t i = 0; i < arg.size(); i++) a[arg[i]] = static_cast<int64_t>(i);
  std::vector<int64_t> new_arg;
  for (auto& [_, v] : a) new_arg.push_back(v);
  return UOp::make(Ops::STORE, dtypes::void_, {gep.src(0), st.gep(new_arg)});
}

}  // namespace

const PatternMatcher<UOp>& load_store_folding() {
  static const OpSet bufs{Ops::DEFINE_GLOBAL, Ops::DEFINE_LOCAL};
  static const PatternMatcher<UOp> pm = {
      {op(Ops::INDEX, {op(Ops::VECTORIZE).each(op(bufs).named("buf")), var("vec")}),
       expand_index},  // INDEX(vec buf) -> PTRCAT
      {op(Ops::INDEX, {op(Ops::VECTORIZE).each(op(bufs).named("buf")), var("vec"), var("mask")}), expand_index},
      {op(Ops::LOAD, {op(Ops::GEP).named("gep")}).any_len().named("ld"),
       [](M m) {  // LOAD(GEP(p)) -> GEP(LOAD(p))
         UOp ld = m["ld"], gep = m["gep"];
         std::vector<UOp> src = ld.src();
         src[0] = gep.src(0);
         return ld.replace(std::nullopt, ld.dtype().scalar().vec(gep.dtype().count()), src).gep(tuple_ints(gep.arg()));
       }},
      {op(Ops::STORE, {op(Ops::GEP).named("gep"), var("st")}), gep_on_store},  // STORE(GEP(p), x) -> STORE(p, GEP(x))
      {op(Ops::LOAD, {op(Ops::PTRCAT).named("cat")}).any_len().named("ld"),
       [](M m) {  // LOAD(PTRCAT) -> CAT(LOADs)
         UOp ld = m["ld"];
         std::vector<UOp> loads;
         for (const UOp& p : m["cat"].src()) {
           std::vector<UOp> src = ld.src();
           src[0] = p;
           loads.push_back(ld.replace(std::nullopt, p.dtype().base(), src));
         }
         return UOp::make(Ops::CAT, ld.dtype(), loads);
       }},
      {op(Ops::STORE, {op(Ops::PTRCAT).named("cat"), var("data")}), cat_after_store},  // STORE(PTRCAT) -> SINK(STOREs)
  };
  return pm;
}

// *** correct load/store: split into the vector widths the renderer folds ***

namespace {

UOp split_load_store(M m, const RenderOpts& ctx, bool register_wide) {
  UOp ls = m["ls"], idx = m["idx"];
  // if there's only one element to load/store, no splitting needed
  int sz = ls.src(0).dtype().count();
  if (sz == 1) return {};
  UOp buf = idx.src(0);
  DType base = buf.dtype().base();
  // determine fold lengths
  std::vector<int> lengths;
  bool must_divide = true;
  if (ctx.device == "DSP") {
    lengths = {128, 64, 32, 16, 8, 4};
    must_divide = false;
  } else if (unaligned_vector_loads(ctx, base) && ls.op() == Ops::LOAD) {
    // ours: on the CPU, bytes and shorts (a quantized weight's blocks) load as one vector up to a register's width
    // wherever they start (the renderer's typedefs of them assume no alignment)
    for (int n = cpu_register_width(ctx, base); n >= 2; n /= 2) lengths.push_back(n);
    must_divide = false;
  } else if (register_wide && base == dtypes::float32 && cpu_register_width(ctx, base) > 4) {
    // ours: a CPU vector tile's float32 up to a register's width (16 on AVX-512), so its epilogue (a fused GELU's
    // backward after a matmul) computes whole registers rather than quarters of them
    for (int n = cpu_register_width(ctx, base); n >= 2; n /= 2) lengths.push_back(n);
  } else if (base != dtypes::float32 && base != dtypes::float16 && !buf.dtype().is_image()) {
  } else if (buf.dtype().is_image()) {
    lengths = {4};
  } else if (ctx.supports_float4) {
    lengths = {4, 2};  // NOTE: tinygrad adds 8 for ALLOW_HALF8 and 16 for AMX
  }
  lengths.push_back(1);  // worst case, it's not folded
  // filter fold lengths that don't divide
  if (must_divide) {
    std::vector<int> l2;
    for (int x : lengths)
      if (idx.src(1).divides(x)) l2.push_back(x);
    lengths = l2;
  }
  // split based on the fold lengths
  int64_t global_offset = 0;
  std::vector<UOp> ret;
  DType ptrdtype = buf.dtype();
  while (global_offset < sz) {
    // with 1 at the end of the lengths list, this will always hit
    for (int fold_length : lengths) {
      if (global_offset + fold_length > sz) continue;
      UOp off = idx.src(1) + global_offset;
      UOp lidx = idx.src().size() > 2 ? buf.index(off, idx.src(2)) : buf.index(off);
      if (fold_length > 1) lidx = lidx.cast(ptrdtype.base().vec(fold_length).ptr(ptrdtype.size(), ptrdtype.local()));
      std::vector<UOp> src = ls.src();
      src[0] = lidx;
      if (ls.op() == Ops::STORE) {
        src[1] = ls.src(1).gep(iota(global_offset, global_offset + fold_length));
        ret.push_back(ls.replace(std::nullopt, std::nullopt, src));
      } else {
        ret.push_back(ls.replace(std::nullopt, ls.dtype().scalar().vec(fold_length), src));
      }
      global_offset += fold_length;
      break;
    }
  }
  // if it wasn't split, we return None. otherwise we CAT them
  return ret.size() > 1 ? UOp::make(Ops::CAT, ls.dtype(), ret) : UOp{};
}

template <bool RegisterWide>
UOp split_load_store_as(M m, const RenderOpts& ctx) {
  return split_load_store(m, ctx, RegisterWide);
}

// split LOAD/STORE (image indexing is not supported yet)
template <bool RegisterWide>
const PatternMatcher<UOp, const RenderOpts>& split_loads_and_stores() {
  static const PatternMatcher<UOp, const RenderOpts> pm = {
      {op({Ops::LOAD, Ops::STORE}, {op(Ops::INDEX).named("idx").cast()}).any_len().named("ls"),
       split_load_store_as<RegisterWide>},
  };
  return pm;
}

}  // namespace

const PatternMatcher<UOp, const RenderOpts>& correct_load_store(bool register_wide) {
  return register_wide ? split_loads_and_stores<true>() : split_loads_and_stores<false>();
}

// *** a CPU tile's splatted lanes: loads of their own ***

namespace {
// the float vector load ld's lanes, each a load of its own (null when ld is not an ungated vector load of floats)
std::vector<UOp> lanes_loaded_alone(const UOp& ld, const std::vector<int64_t>& lanes) {
  if (ld.op() != Ops::LOAD || ld.src().size() != 1 || ld.dtype().count() < 2 || !dtypes::is_float(ld.dtype()))
    return {};
  const UOp& idx = ld.src(0).op() == Ops::CAST ? ld.src(0).src(0) : ld.src(0);
  if (idx.op() != Ops::INDEX || idx.src().size() != 2) return {};  // (a gated load keeps its vector)
  std::map<int64_t, UOp> alone;
  std::vector<UOp> ret;
  for (int64_t l : lanes) {
    auto [it, fresh] = alone.try_emplace(l);
    if (fresh) it->second = UOp::make(Ops::LOAD, ld.dtype().scalar(), {idx.src(0).index(idx.src(1) + l)});
    ret.push_back(it->second);
  }
  return ret;
}
bool some_lane_repeats(std::vector<int64_t> lanes) {
  std::sort(lanes.begin(), lanes.end());
  return std::adjacent_find(lanes.begin(), lanes.end()) != lanes.end();
}
}  // namespace

const PatternMatcher<UOp>& splatted_lanes_load_alone() {
  static const PatternMatcher<UOp> pm = {
      // GEP(ld, (0, 0, ... 1, 1, ...)): the lanes of a splat
      {op(Ops::GEP, {op(Ops::LOAD).named("ld")}).named("g"),
       [](M m) -> UOp {
         const std::vector<int64_t> lanes = tuple_ints(m["g"].arg());
         if (lanes.size() < 2 || !some_lane_repeats(lanes)) return {};
         std::vector<UOp> src = lanes_loaded_alone(m["ld"], lanes);
         return src.empty() ? UOp{} : UOp::make(Ops::VECTORIZE, m["g"].dtype(), std::move(src));
       }},
  };
  return pm;
}

// *** devectorize: no ALU on vectorized dtypes (no_vectorized_alu is in uop/symbolic) ***

namespace {
// a WMMA over several instructions' worth of operands -> one WMMA per instruction
UOp no_vectorized_wmma(M m) {
  UOp wmma = m["wmma"];
  const WmmaArg& w = as_wmma_arg(wmma.arg());
  const int64_t out_sz = w.upcast_size(2);
  if (wmma.dtype().count() == out_sz) return {};
  std::vector<UOp> wmma_ex;
  for (int64_t i = 0; i < wmma.dtype().count() / out_sz; i++) {
    UOp one =
        UOp::make(Ops::WMMA, wmma.dtype().scalar().vec(static_cast<int>(out_sz)),
                  {wmma_operand(wmma, 0, {i}), wmma_operand(wmma, 1, {i}), wmma_operand(wmma, 2, {i})}, wmma.arg());
    for (int64_t e = 0; e < out_sz; e++) wmma_ex.push_back(one.gep(static_cast<int>(e)));
  }
  return UOp::make(Ops::VECTORIZE, wmma.dtype(), std::move(wmma_ex));
}
UOp no_vectorized_acc(M m) {
  UOp acc = m["acc"];
  int n = acc.dtype().count();
  if (n == 1) return {};
  std::vector<UOp> alus;
  for (int i = 0; i < n; i++) {
    std::vector<UOp> src = acc.src();
    src[0] = src[0].gep(i);
    Tuple a = acc.arg<Tuple>();
    a.push_back(ConstValue(int64_t(i)));
    alus.push_back(UOp::make(acc.op(), acc.dtype().scalar(), src, a));
  }
  return UOp::make(Ops::VECTORIZE, acc.dtype(), alus);
}
}  // namespace

const PatternMatcher<UOp>& devectorize() {
  static const PatternMatcher<UOp> pm = {
      {op(GroupOp::ALU | OpSet{Ops::CAST, Ops::BITCAST, Ops::ASSIGN})
           .named("alu"),  // vector alu -> VECTORIZE(scalar alus)
       [](M m) { return no_vectorized_alu(m["alu"]); }},
      {op(Ops::WMMA).named("wmma"), no_vectorized_wmma},      // WMMA of n instructions -> n WMMAs
      {op(Ops::DEFINE_ACC).named("acc"), no_vectorized_acc},  // vector acc -> VECTORIZE(scalar accs)
  };
  return pm;
}

// *** split_odd_vectors: vector ALUs and accumulators of a count that is not a power of two, in power-of-two parts ***

namespace {
// the largest power of two dividing n
int pow2_part(int n) { return n & -n; }
// x's lanes idx, looking through CAT, VECTORIZE and GEP: a part of a CAT whole where the lanes are one part
UOp fold_gep(UOp x, std::vector<int64_t> idx) {
  while (x.op() == Ops::GEP) {  // GEP(GEP(y, a), b) is y's lanes a[b]
    auto inner = tuple_ints(x.arg());
    for (int64_t& i : idx) i = inner[static_cast<size_t>(i)];
    x = x.src(0);
  }
  if (x.op() == Ops::VECTORIZE) {
    std::vector<UOp> src;
    for (int64_t i : idx) src.push_back(x.src(static_cast<size_t>(i)));
    return src.size() == 1 ? src[0]
                           : UOp::make(Ops::VECTORIZE, x.dtype().scalar().vec(static_cast<int>(src.size())), src);
  }
  if (x.op() == Ops::CAT) {
    std::vector<std::pair<size_t, int64_t>> at;  // (part, lane in it)
    for (int64_t i : idx) {
      size_t p = 0;
      while (i >= x.src(p).dtype().count()) i -= x.src(p++).dtype().count();
      at.emplace_back(p, i);
    }
    if (std::all_of(at.begin(), at.end(), [&](auto& a) { return a.first == at[0].first; })) {
      std::vector<int64_t> lanes;
      for (auto& a : at) lanes.push_back(a.second);
      return fold_gep(x.src(at[0].first), lanes);
    }
    std::vector<UOp> src;
    for (auto& [p, i] : at) src.push_back(fold_gep(x.src(p), {i}));
    return UOp::make(Ops::VECTORIZE, x.dtype().scalar().vec(static_cast<int>(src.size())), src);
  }
  if (idx == iota(0, x.dtype().count())) return x;
  return x.gep(idx);
}
UOp split_odd_alu(M m) {
  UOp alu = m["alu"];
  int n = alu.dtype().vcount(), c = pow2_part(n);
  if (n <= 1 || c == n || c < 4 || alu.dtype().is_ptr()) return {};
  std::vector<UOp> parts;
  for (int i = 0; i < n / c; i++) {
    std::vector<UOp> src;
    for (const UOp& s : alu.src())
      src.push_back(s.dtype().vcount() == n ? fold_gep(s, iota(int64_t(i) * c, int64_t(i + 1) * c)) : s);
    parts.push_back(UOp::make(alu.op(), alu.dtype().scalar().vec(c), std::move(src), alu.arg()));
  }
  return UOp::make(Ops::CAT, alu.dtype(), std::move(parts));
}
UOp split_odd_acc(M m) {
  UOp acc = m["acc"];
  int n = acc.dtype().count(), c = pow2_part(n);
  if (n <= 1 || c == n || c < 4) return {};
  std::vector<UOp> parts;
  for (int i = 0; i < n / c; i++) {
    std::vector<UOp> src = acc.src();
    src[0] = fold_gep(src[0], iota(int64_t(i) * c, int64_t(i + 1) * c));
    Tuple a = acc.arg<Tuple>();
    a.push_back(ConstValue(int64_t(i)));
    parts.push_back(UOp::make(acc.op(), acc.dtype().scalar().vec(c), src, a));
  }
  return UOp::make(Ops::CAT, acc.dtype(), std::move(parts));
}
}  // namespace

const PatternMatcher<UOp>& split_odd_vectors() {
  static const PatternMatcher<UOp> pm = {
      {op(GroupOp::ALU | OpSet{Ops::CAST, Ops::BITCAST, Ops::ASSIGN}).named("alu"), split_odd_alu},
      {op(Ops::DEFINE_ACC).named("acc"), split_odd_acc},
      {op(Ops::GEP, {op(Ops::CAT)}).named("g"),
       [](M m) -> UOp {
         UOp g = m["g"];
         return g.dtype().is_ptr() ? UOp{} : fold_gep(g.src(0), tuple_ints(g.arg()));
       }},
  };
  return pm;
}

const PatternMatcher<UOp>& cat_to_vectorize() {
  static const PatternMatcher<UOp> pm = {
      {op(Ops::CAT).named("x"),
       [](M m) -> UOp {
         UOp x = m["x"];
         if (x.dtype().is_ptr()) return {};
         std::vector<UOp> src;
         for (int64_t i = 0; i < x.dtype().count(); i++) src.push_back(fold_gep(x, {i}));
         return UOp::make(Ops::VECTORIZE, x.dtype(), src);
       }},
  };
  return pm;
}

// *** pm_render: explicit VECTORIZE for rendering, alt values for masked loads, IF for gated stores ***

const PatternMatcher<UOp>& pm_render() {
  using namespace pat;
  static const PatternMatcher<UOp> pm = {
      {op(Ops::CONST).named("c"),
       [](M m) -> UOp {  // vector CONST -> VECTORIZE(CONSTs)
         UOp c = m["c"];
         if (c.dtype().vcount() <= 1) return {};
         UOp s = UOp::const_(c.dtype().scalar(), c.const_arg());
         return UOp::make(Ops::VECTORIZE, c.dtype(), std::vector<UOp>(static_cast<size_t>(c.dtype().vcount()), s));
       }},
      {op(Ops::VCONST).named("c"),
       [](M m) {  // VCONST -> VECTORIZE(CONSTs)
         UOp c = m["c"];
         std::vector<UOp> src;
         for (const ConstValue& v : c.arg<Tuple>()) src.push_back(UOp::const_(c.dtype().scalar(), v));
         return UOp::make(Ops::VECTORIZE, c.dtype(), src);
       }},
      {op(Ops::GEP).named("gep"),
       [](M m) -> UOp {  // GEP(x, (a, b)) -> VECTORIZE(GEP a, GEP b)
         UOp gep = m["gep"];
         auto a = tuple_ints(gep.arg());
         if (a.size() <= 1) return {};
         std::vector<UOp> src;
         for (int64_t i : a) src.push_back(gep.src(0).gep(i));
         return UOp::make(Ops::VECTORIZE, gep.dtype(), src);
       }},
      {op(Ops::GEP).named("gep"),
       [](M m) -> UOp {  // GEP(scalar, 0) -> scalar
         UOp gep = m["gep"];
         return gep.src(0).dtype().vcount() == 1 && tuple_ints(gep.arg()) == std::vector<int64_t>{0} ? gep.src(0)
                                                                                                     : UOp{};
       }},
      {op(Ops::VECTORIZE, {x}), x},  // VECTORIZE(x) -> x
      // give any loads that are masked an alt value
      {op(Ops::LOAD, {op(Ops::INDEX, {var(), var(), var()}).or_casted()}).any_len().named("x"),
       [](M m) -> UOp {
         UOp x = m["x"];
         if (x.src().size() != 1 && x.src(1).op() != Ops::CUSTOM) return {};
         std::vector<UOp> src = x.src();
         src.insert(src.begin() + 1, x.const_like(0));
         return x.replace(std::nullopt, std::nullopt, src);
       }},
      // gate any stores that aren't gated with ifs
      {op(Ops::STORE, {op(GroupOp::All, {var(), var(), var().dtype(dtypes::bool_)}).named("idx").or_casted(), var()})
           .dtype(dtypes::void_)
           .named("store"),
       [](M m) {
         UOp store = m["store"];
         std::vector<UOp> src = store.src();
         src.push_back(UOp::make(Ops::IF, dtypes::void_, {m["idx"].src(2)}));
         return UOp::make(Ops::STORE, dtypes::void_, src);
       }},
  };
  return pm;
}

}  // namespace tg
