#include "tg/codegen/kernel.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <mutex>
#include <unordered_map>

#include "tg/helpers/knobs.h"
#include "tg/runtime/device.h"
#include "tg/uop/kernel_info.h"
#include "tg/uop/wmma_arg.h"

namespace tg {

// *** the name counter ***

static std::mutex kernel_cnt_mu;
static std::unordered_map<std::string, int>& kernel_cnt() {
  static std::unordered_map<std::string, int> cnt;
  return cnt;
}
std::string register_kernel_name(const std::string& base_name) {
  int n;
  {
    std::lock_guard<std::mutex> lock(kernel_cnt_mu);
    n = ++kernel_cnt()[to_function_name(base_name)];
  }
  return base_name + colored(n > 1 ? cat("n", n - 1) : "", "BLACK");
}
void reset_kernel_cnt() {
  std::lock_guard<std::mutex> lock(kernel_cnt_mu);
  kernel_cnt().clear();
}

// *** small helpers ***

namespace {

template <class T>
std::vector<T> slice(const std::vector<T>& v, int64_t start, int64_t stop) {  // python's v[start:stop]
  int64_t n = static_cast<int64_t>(v.size());
  auto norm = [n](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + n : i, 0, n); };
  start = norm(start), stop = norm(stop);
  return stop > start ? std::vector<T>(v.begin() + start, v.begin() + stop) : std::vector<T>{};
}

void check(bool cond, const std::string& msg) {
  if (!cond) throw KernelOptError(msg);
}

// tinygrad's UOp.st for every node of a kernel AST, in one pass over the toposort (no recursion)
std::unordered_map<const UOpNode*, std::optional<ShapeTracker>> ast_sts(const std::vector<UOp>& topo) {
  std::unordered_map<const UOpNode*, std::optional<ShapeTracker>> sts;
  for (const UOp& u : topo) {
    std::optional<ShapeTracker> st;
    if (u.op() == Ops::VIEW) {
      const ShapeTracker* p = get_st(u.arg());
      TG_ASSERT(p != nullptr, "VIEW without a ShapeTracker arg");
      st = *p;
    } else if (GroupOp::Movement.has(u.op())) {
      if (auto& s = sts.at(u.src(0).get())) st = s->mop(u.op(), u.arg());
    } else if (GroupOp::Buffer.has(u.op())) {
      for (const UOp& s : u.src())
        if (s.op() == Ops::VIEW) {
          st = sts.at(s.get());
          break;
        }
    } else if (u.op() == Ops::ASSIGN) {
      st = sts.at(u.src(0).get());
    } else {
      const std::optional<ShapeTracker>* first = nullptr;
      for (const UOp& s : u.src())
        if (auto& ss = sts.at(s.get()); ss) {
          if (first == nullptr)
            first = &ss;
          else
            TG_CHECK(ss->shape() == (*first)->shape(), "UOp sources must have the same shape ", u.op(), " ",
                     shape_str((*first)->shape()), " vs ", shape_str(ss->shape()));
        }
      if (first != nullptr) {
        Shape shape = (*first)->shape();
        if (u.op() == Ops::REDUCE_AXIS) shape = (*first)->reduce(u.arg<ReduceArg>().axes);
        st = ShapeTracker::from_shape(shape);
      }
    }
    sts.emplace(u.get(), std::move(st));
  }
  return sts;
}

std::string ljust(const std::string& s, size_t w) { return s.size() >= w ? s : s + std::string(w - s.size(), ' '); }

}  // namespace

// *** Kernel ***

Kernel::Kernel(UOp ast_) : Kernel(std::move(ast_), *Device::get().renderer) {}
Kernel::Kernel(UOp ast_, RenderOpts opts_) : ast(std::move(ast_)), opts(std::move(opts_)) {
  TG_CHECK(ast && ast.op() == Ops::SINK, "a Kernel is made from a SINK, got ", ast ? op_repr(ast.op()) : "null");
  std::vector<UOp> topo = ast.toposort();
  auto st_of = ast_sts(topo);
  for (const UOp& x : topo) {
    if (x.op() == Ops::REDUCE_AXIS) reduceops.push_back(x);
    if (x.op() == Ops::DEFINE_VAR) vars.push_back(x);
    if (GroupOp::Buffer.has(x.op())) bufs.push_back(x);
  }
  // NOTE: tinygrad reverses the toposort here ("this requires a specific order with the [::-1]"), so bufs[0] is the
  // STORE
  std::reverse(bufs.begin(), bufs.end());
  for (const UOp& b : bufs) {
    auto& st = st_of.at(b.get());
    TG_CHECK(st.has_value(), "kernel buffer op ", op_repr(b.op()), " has no VIEW source");
    sts.push_back(*st);
  }
  // the reduce's output and input shapes track which axes each reduce reduces
  for (const UOp& r : reduceops) {
    auto &out = st_of.at(r.get()), &in = st_of.at(r.src(0).get());
    TG_CHECK(out && in, "REDUCE_AXIS without a shape in the kernel AST");
    sts.push_back(*out);
    sts.push_back(*in);
  }
  TG_CHECK(!sts.empty(), "a kernel AST needs at least one buffer op");
  // one more ShapeTracker for the full shape, with 0 strides so that it merges with anything
  Shape full = sts[0].shape();
  for (const ShapeTracker& st : sts) {
    TG_CHECK(st.shape().size() == full.size(),
             "kernel ShapeTrackers must have the same number of dims: ", shape_str(st.shape()), " vs ",
             shape_str(full));
    for (size_t i = 0; i < full.size(); i++) full[i] = smax(full[i], st.shape()[i]);
  }
  sts.push_back(ShapeTracker::from_shape(full, Shape(full.size(), 0)));

  // move all reduce axes to the end
  std::vector<int64_t> perm;
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < full.size(); i++)
      if ((full[i] != output_shape()[i]) == (pass == 1)) perm.push_back(static_cast<int64_t>(i));
  reshape_and_permute(nullptr, perm);

  simplify_ones();
  simplify_merge_adjacent();
  split_unaffine_dims();
}

Shape Kernel::full_unupcasted_shape() const { return slice(full_shape(), 0, first_upcast()); }

int Kernel::first_reduce() const {
  const Shape &o = output_shape(), &f = full_shape();
  int fu = first_upcast();
  for (int i = 0; i < fu; i++)
    if (o[i] != f[i]) return i;
  return fu;  // the appended (0,) vs (1,) of the reference
}

std::vector<UOp> Kernel::membufs() const {
  std::vector<UOp> ret;
  for (const UOp& x : bufs) {
    if (x.op() != Ops::LOAD && x.op() != Ops::STORE) continue;
    UOp b = x.src(0);
    while (b.op() == Ops::VIEW && !b.src().empty()) b = b.src(0);  // .base
    if (std::find(ret.begin(), ret.end(), b) == ret.end()) ret.push_back(b);
  }
  return ret;
}

int Kernel::buf_index(const UOp& buf) const {
  auto it = std::find(bufs.begin(), bufs.end(), buf);
  return it == bufs.end() ? -1 : static_cast<int>(it - bufs.begin());
}

std::vector<Kernel::UpcastedAxis> Kernel::upcasted_axis(int i) const {
  int fu = first_upcast();
  const Shape& shape = sts[static_cast<size_t>(i)].shape();
  auto strides = real_strides(sts[static_cast<size_t>(i)]);
  std::vector<UpcastedAxis> ret;
  for (int d = fu; d < shape_len(); d++) ret.push_back({shape[d], strides[d], sts[0].shape()[d] != full_shape()[d]});
  return ret;
}

// blue global, cyan local | green group-reduce, red reduce | magenta unrolled reduce, yellow upcast
std::vector<std::string> Kernel::colors() const {
  std::vector<std::string> c(static_cast<size_t>(global_dims()), dont_use_locals ? "BLUE" : "blue");
  c.insert(c.end(), static_cast<size_t>(local_dims), "cyan");
  c.insert(c.end(), static_cast<size_t>(group_for_reduces), "green");
  c.insert(c.end(), static_cast<size_t>(std::max(0, first_upcast() - (first_reduce() + group_for_reduces))), "red");
  for (int i = first_upcast(); i < shape_len(); i++)
    c.push_back(full_shape()[i] != sts[0].shape()[i] ? "magenta" : "yellow");
  TG_ASSERT(static_cast<int>(c.size()) == shape_len(), "colors size mismatch");
  return c;
}

std::string Kernel::colored_shape(int pad, bool dense) const {
  auto cs = colors();
  std::string ret;
  for (size_t i = 0; i < full_shape().size(); i++) {
    std::string s = std::to_string(full_shape()[i]);
    if (!dense && s.size() < 4) s = std::string(4 - s.size(), ' ') + s;
    ret += (i ? " " : "") + colored(s, cs[i].c_str());
  }
  if (pad > 0 && ansilen(ret) < static_cast<size_t>(pad))
    ret += std::string(static_cast<size_t>(pad) - ansilen(ret), ' ');
  return ret;
}

// *** base simplifiers ***

void Kernel::reshape_and_permute(const ShapeFxn& new_shape_fxn, const std::optional<std::vector<int64_t>>& axis) {
  for (ShapeTracker& st : sts) {
    if (new_shape_fxn) st = st.reshape(new_shape_fxn(st.shape()));
    if (axis) st = st.permute(*axis);
  }
}

void Kernel::upcast() {
  check(full_shape().back() != 1, "can't upcast a dimension with size 1");
  upcasted += 1;
}

void Kernel::shift_to(int axis, sint amount, bool top, std::optional<int> insert_before_) {
  int insert_before = insert_before_.value_or(shape_len());
  int move_axis = top ? axis : axis + 1;
  if (move_axis < insert_before) insert_before += 1;
  std::vector<int64_t> perm;
  for (int i = 0; i < insert_before; i++)
    if (i != move_axis) perm.push_back(i);
  perm.push_back(move_axis);
  for (int i = insert_before; i < shape_len() + 1; i++)
    if (i != move_axis) perm.push_back(i);
  auto a = static_cast<size_t>(axis);
  reshape_and_permute(
      [&](const Shape& x) {
        Shape s(x.begin(), x.begin() + static_cast<int64_t>(a));
        if (x[a] > 1) {
          if (top)
            s.insert(s.end(), {amount, floordiv(x[a], amount)});
          else
            s.insert(s.end(), {floordiv(x[a], amount), amount});
        } else {
          s.insert(s.end(), {1, 1});
        }
        s.insert(s.end(), x.begin() + static_cast<int64_t>(a) + 1, x.end());
        return s;
      },
      perm);
}

bool Kernel::simplify_ones() {
  if (shape_len() == 0) return false;
  std::vector<bool> all_ones;
  for (sint s : full_shape()) all_ones.push_back(s == 1);
  auto count = [](const std::vector<bool>& v) { return static_cast<int>(std::count(v.begin(), v.end(), true)); };
  int fr = first_reduce();
  local_dims -= count(slice(all_ones, fr - local_dims, fr));
  upcasted -= count(slice(all_ones, first_upcast(), shape_len()));  // TODO (as tinygrad): upcasts are never 1
  reshape_and_permute(
      [&](const Shape& shape) {
        Shape s;
        for (size_t i = 0; i < shape.size(); i++)
          if (!all_ones[i]) s.push_back(shape[i]);
        return s;
      },
      std::nullopt);
  return count(all_ones) > 0;
}

void Kernel::split_unaffine_dims() {
  if (opts.simd_lanes <= 0 || !CPU_VECTOR_TILE) return;
  const Shape& full = full_shape();
  if (!std::all_of(full.begin(), full.end(), [](const sint& d) { return d.is_int(); }) ||
      prod_range(full, 0, shape_len()) < (int64_t(1) << 20))
    return;
  auto affine = [](const std::vector<ShapeTracker>& s, int d) {
    return std::all_of(s.begin(), s.end(), [&](const ShapeTracker& st) {
      return real_strides(st, true)[static_cast<size_t>(d)].has_value();
    });
  };
  auto split = [](const std::vector<ShapeTracker>& s, int d, int64_t inner) {
    std::vector<ShapeTracker> out;
    for (const ShapeTracker& st : s) {
      Shape sh = st.shape();
      const int64_t n = sh[static_cast<size_t>(d)].as_int();  // 1 along a reduce's output: it stays 1 x 1
      sh[static_cast<size_t>(d)] = sint(n == 1 ? 1 : inner);
      sh.insert(sh.begin() + d, sint(n == 1 ? 1 : n / inner));
      out.push_back(st.reshape(sh));
    }
    return out;
  };
  // only reduce dims: an output dim's index is computed once a tile, a reduce dim's every step of the inner loop (and
  // an output dim split differently changes the tile: a weight gradient's q/k/v rows split as (3, 6, 64) took the 6
  // heads, 64 KB apart, for an AVX2 tile's rows, where 4 of 64 contiguous ones load as one vector: 7x slower)
  std::vector<int> unaffine;  // the dims to split, from the last
  for (const ShapeTracker& st : sts) {
    std::vector<std::optional<sint>> strides = real_strides(st, true);
    for (int d = first_reduce(); d < shape_len(); d++)
      if (!strides[static_cast<size_t>(d)] && std::find(unaffine.begin(), unaffine.end(), d) == unaffine.end())
        unaffine.push_back(d);
  }
  std::sort(unaffine.rbegin(), unaffine.rend());
  for (int d : unaffine) {
    // from the innermost part out: the biggest inner part along which every index is affine, then the same for what
    // is left of the dim; nothing changes where some part has none
    std::vector<ShapeTracker> trial = sts;
    bool done = false;
    while (!done) {
      const int64_t n = trial.back().shape()[static_cast<size_t>(d)].as_int();
      if (n > (int64_t(1) << 24)) break;  // no loop that long takes a tile; and its divisors are many
      std::vector<int64_t> divisors;      // the proper ones, biggest first
      for (int64_t f = 2; f * f <= n; f++)
        if (n % f == 0) {
          divisors.push_back(f);
          if (f != n / f) divisors.push_back(n / f);
        }
      std::sort(divisors.rbegin(), divisors.rend());
      bool found = false;
      for (int64_t f : divisors) {
        std::vector<ShapeTracker> t = split(trial, d, f);
        if (!affine(t, d + 1)) continue;
        trial = std::move(t), found = true;
        done = affine(trial, d);
        break;
      }
      if (!found) break;
    }
    if (done) sts = std::move(trial);
  }
}

void Kernel::simplify_merge_adjacent() {
  if (shape_len() == 0) return;
  // TODO: image dtypes insert fake strides here so that merging does not cross image axes
  std::vector<Shape> shapes;
  std::vector<std::vector<std::optional<sint>>> strides;
  for (const ShapeTracker& st : sts) shapes.push_back(st.shape()), strides.push_back(real_strides(st));
  using Dim = std::pair<sint, std::optional<sint>>;
  std::vector<std::vector<Dim>> rets;
  for (size_t j = 0; j < shapes.size(); j++) rets.push_back({{shapes[j][0], strides[j][0]}});
  int fr = first_reduce();
  for (size_t i = 1; i < shapes[0].size(); i++) {
    bool mergeable = static_cast<int>(i) != fr;
    for (size_t j = 0; j < shapes.size() && mergeable; j++) {
      sint si = shapes[j][i];
      const std::optional<sint>&sti = strides[j][i], &last_st = rets[j].back().second;
      // NOTE: a None stride never merges; a 0 stride merges only with a 0 stride
      mergeable = sti.has_value() && ((*sti != 0 && last_st == si * *sti) || (*sti == 0 && last_st == sint(0)));
    }
    for (size_t j = 0; j < shapes.size(); j++) {
      if (mergeable)
        rets[j].back() = {rets[j].back().first * shapes[j][i], strides[j][i]};
      else
        rets[j].push_back({shapes[j][i], strides[j][i]});
    }
  }
  for (size_t i = 0; i < sts.size(); i++) {
    Shape s;
    for (auto& d : rets[i]) s.push_back(d.first);
    sts[i] = sts[i].reshape(s);
  }
}

// *** the opts ***

int Kernel::real_axis(const Opt& opt) const {
  if (!opt.axis) return -1;
  if (opt.op == OptOps::UNROLL) return first_reduce() + *opt.axis;
  if (opt.op == OptOps::GROUP || opt.op == OptOps::GROUPTOP) return first_reduce() + group_for_reduces + *opt.axis;
  return *opt.axis;
}

void Kernel::apply_opt(const Opt& opt, bool append_opt) {
  // NOTE: unlike tinygrad, a failed opt leaves the kernel as it was (PADTO could fail half way)
  Kernel saved = *this;
  try {
    apply_opt_unchecked(opt, append_opt);
  } catch (const KernelOptError&) {
    sts = std::move(saved.sts);
    applied_opts = std::move(saved.applied_opts);
    group_for_reduces = saved.group_for_reduces, upcasted = saved.upcasted, local_dims = saved.local_dims;
    dont_use_locals = saved.dont_use_locals;
    tensor_core = std::move(saved.tensor_core), tensor_core_opts = std::move(saved.tensor_core_opts);
    use_tensor_cores = saved.use_tensor_cores;
    throw;
  }
  lowering = {};
}

void Kernel::apply_opt_unchecked(const Opt& opt, bool append_opt) {
  if (dont_use_locals)
    check(opt.op != OptOps::LOCAL && opt.op != OptOps::GROUP && opt.op != OptOps::GROUPTOP, "not using locals");
  if (opt.op == OptOps::TC) {
    check(applied_opts.empty(), "tensor core opts must be first");  // TODO (as tinygrad): PADTO might be fine
    check(!opts.tensor_cores.empty(), "must have tensor cores");
    check(opt.axis.has_value(), "tensor core opts must have an axis");
    const auto* targ = std::get_if<std::tuple<int, int, int>>(&opt.arg);
    check(targ != nullptr, "tensor core opts must have valid arg");
    auto [tc_select, tc_opt, use_tc] = *targ;
    check(-1 <= tc_select && tc_select < static_cast<int>(opts.tensor_cores.size()),
          "tensor core opts must have valid tc_select");
    check(0 <= tc_opt && tc_opt <= 2, "tensor core opts must have valid tc_opt");
    check(0 < use_tc && use_tc <= 3, "use_tensor_cores value is not valid");
    check(apply_tc_opt(use_tc, *opt.axis, tc_select, tc_opt), "no tensor core available");
    applied_opts.push_back(opt);
    return;
  }

  int axis = real_axis(opt);
  int nfull = static_cast<int>(full_shape().size());
  check(axis < nfull && (axis >= 0 || !opt.axis), "invalid axis");  // NOTE: a negative axis is invalid here

  const int* iarg = std::get_if<int>(&opt.arg);
  sint amt = -1;
  if (opt.op == OptOps::SWAP) {
    check(iarg != nullptr, "arg should be int");
    amt = *iarg;  // the arg is the other axis
  } else if (!std::holds_alternative<std::monostate>(opt.arg)) {
    check(iarg != nullptr, "arg should be int");
    check(axis >= 0, "invalid axis");
    amt = *iarg != 0 ? sint(*iarg) : full_shape()[static_cast<size_t>(axis)];
    check(amt != 1, cat("shift/padto of amt=", amt, ", 1 or symbolic amount is meaningless"));
    check(amt > 0, cat("shift/padto of amt=", amt, ", the amount must be positive"));
    if (opt.op != OptOps::PADTO)
      check(
          full_shape()[static_cast<size_t>(axis)] % amt == 0,
          cat("no longer valid shift self.full_shape[axis]=", full_shape()[static_cast<size_t>(axis)], ", amt=", amt));
  }

  UOp r = reduceop();
  if (r && (opt.op == OptOps::GROUP || opt.op == OptOps::GROUPTOP ||
            (group_for_reduces && opt.op != OptOps::NOLOCALS && opt.op != OptOps::PADTO))) {
    sint acc_sz = r.dtype().itemsize(), upcast_sz = 1, local_sz = 1;
    for (int i = first_upcast(); i < shape_len(); i++)
      if (full_shape()[i] == sts[0].shape()[i]) upcast_sz *= full_shape()[i];
    for (sint s : slice(full_shape(), first_reduce() - local_dims, first_reduce() + group_for_reduces)) local_sz *= s;
    sint smem_sz = amt * acc_sz * upcast_sz * local_sz;
    check(smem_sz <= opts.shared_max,
          cat("exceeds maximum shared memory size: needs ", smem_sz, ", max ", opts.shared_max));
  }

  switch (opt.op) {
    case OptOps::LOCAL:  // cyan
      // NOTE: CPU could use locals too, treated as globals; tinygrad disables it since it makes BEAM slow
      check(opts.has_local, "target does not support local");
      check(axis < global_dims(), "local is for globals");
      shift_to(axis, amt, false, first_reduce());
      local_dims += 1;
      break;
    case OptOps::GROUP:
    case OptOps::GROUPTOP: {  // green
      check(opts.has_local && opts.has_shared, "target does not support local or shared mem");
      check(first_reduce() + group_for_reduces <= axis && axis < first_upcast(), "must be reduce axis to group");
      check(!tensor_core, "can't group with tensor cores");
      std::vector<int64_t> reduce_axes;
      for (const UOp& ro : reduceops)
        for (int64_t a : ro.arg<ReduceArg>().axes) reduce_axes.push_back(a);
      std::vector<int64_t> uniq = reduce_axes;
      std::sort(uniq.begin(), uniq.end());
      check(std::unique(uniq.begin(), uniq.end()) == uniq.end(), "can't group with parallel reduces");
      shift_to(axis, amt, opt.op == OptOps::GROUPTOP, first_reduce() + group_for_reduces);
      group_for_reduces += 1;
      break;
    }
    case OptOps::UNROLL:  // magenta
      check(axis < first_upcast(), "can't upcasted already upcasted");
      check(amt <= 32, "don't unroll more than 32");
      // a full unroll of the first reduce dim empties it: count it as local so simplify_ones takes it back off
      if (full_shape()[static_cast<size_t>(axis)] == amt && axis == first_reduce()) local_dims += 1;
      if (full_shape()[static_cast<size_t>(axis)] == amt && axis < first_reduce() + group_for_reduces)
        group_for_reduces -= 1;  // fully unrolling a GROUP
      shift_to(axis, amt, false, std::nullopt);
      upcast();
      break;
    case OptOps::THREAD:  // ours as tinygrad's later THREAD: a new outermost axis, the loop the threads share
      check(opts.threads > 0, "target does not support threads");
      check(axis < first_reduce(), "thread is for non-reduce");
      check(std::none_of(applied_opts.begin(), applied_opts.end(), [](const Opt& o) { return o.op == OptOps::THREAD; }),
            "already threaded");
      shift_to(axis, amt, true, 0);
      break;
    case OptOps::UPCAST:  // yellow
    case OptOps::UPCASTTOP:
      check(axis < first_reduce(), "upcast is for non-reduce");
      check(!(tensor_core && global_dims() <= axis &&
              axis < global_dims() + static_cast<int>(tensor_core->local_opts().size())),
            "can't upcast TC locals");
      check(opts.device == "DSP" || amt <= opts.upcast_max, cat("don't upcast more than ", opts.upcast_max));
      shift_to(axis, amt, opt.op == OptOps::UPCASTTOP, std::nullopt);
      upcast();
      break;
    case OptOps::NOLOCALS:
      check(opts.has_local && !dont_use_locals,
            "NOLOCALS is meaningless if target does not support local or already not using locals");
      check(local_dims == 0 && group_for_reduces == 0, "can't have no locals with locals");
      dont_use_locals = true;
      break;
    case OptOps::SWAP: {
      check(axis < amt && amt < global_dims(), cat("swap is only for globals with axis < amt, getting amt=", amt,
                                                   ", axis=", axis, ", self.global_dims=", global_dims()));
      std::vector<int64_t> perm;
      for (int i = 0; i < shape_len(); i++) perm.push_back(i);
      std::swap(perm[static_cast<size_t>(axis)], perm[static_cast<size_t>(amt)]);
      reshape_and_permute(nullptr, perm);
      break;
    }
    case OptOps::PADTO: {
      check(vars.empty(), "does not work with symbolic shape");
      check(axis < first_upcast(), "cannot pad upcasted");
      // padding a SUM is fine if every op above the loads keeps f(0) = 0
      if (r && first_reduce() <= axis) {
        bool ok = r.arg<ReduceArg>().op == Ops::ADD;
        for (const UOp& u : r.toposort()) ok = ok && !GroupOp::UnsafePad.has(u.op());
        check(ok, cat("cannot pad ", r.repr()));
      }
      bool padded = false;
      for (ShapeTracker& st : sts) {
        sint s = st.shape()[static_cast<size_t>(axis)];
        if (s == 1) continue;  // reduced
        check(s > floordiv(amt, 4),
              cat("pad adds more than quadruple the work st.shape[axis]=", s, " > amt//4=", floordiv(amt, 4)));
        if (sint ru = ceildiv(s, amt) * amt - s) {
          Mask m(st.shape().size(), {0, 0});
          m[static_cast<size_t>(axis)] = {0, ru};  // pad right seems to be faster
          st = st.pad(m);
          padded = true;
        }
      }
      check(padded, "nothing was padded");
      break;
    }
    case OptOps::TC: break;  // unreachable: handled above
  }
  if (append_opt) applied_opts.push_back(opt);
  if (simplify_ones() && tensor_core_opts) tensor_core_opts->fix_axes(axis);  // TC axes after a removed dim
}

// *** tensor cores ***

void TensorCoreOptions::fix_axes(int removed_axis) {
  for (size_t d = 0; d < 2; d++) {
    if (!axes_exist[d]) continue;
    if (removed_axis < axes[d])
      axes[d] -= 1;
    else if (removed_axis == axes[d])
      axes_exist[d] = false;
  }
}

std::optional<TensorCoreOptions> Kernel::create_tc_opts(const UOp& reduceop, const TensorCore& tc, int axis,
                                                        int opt_level) const {
  const bool has_cast = tc.dtype_in != tc.dtype_out;
  const UOp& rsrc = reduceop.src(0);
  if (has_cast && !(rsrc.op() == Ops::CAST && rsrc.dtype() == tc.dtype_out)) return std::nullopt;
  const UOp& mul_op = has_cast ? rsrc.src(0) : rsrc;
  if (mul_op.op() != Ops::MUL) return std::nullopt;
  auto tc_buf = [&](const UOp& src) -> int {  // the buffer a source of the MUL loads (-1: none)
    // TODO (as tinygrad): apply tc even if the sources are not from LOAD
    if (src.op() == Ops::LOAD && src.dtype() == tc.dtype_in) return buf_index(src);
    if (opt_level >= 1 && src.op() == Ops::CAST && src.dtype() == tc.dtype_in) return buf_index(src.src(0));
    return -1;
  };
  const int buf0 = tc_buf(mul_op.src(0)), buf1 = tc_buf(mul_op.src(1));
  if (buf0 < 0 || buf1 < 0) return std::nullopt;
  auto strides0 = real_strides(sts[static_cast<size_t>(buf0)]), strides1 = real_strides(sts[static_cast<size_t>(buf1)]);
  const int fr = first_reduce();
  std::vector<int> axis_buf0, axis_buf1;  // dims buf0 (buf1) does not vary along: candidates for N (M)
  for (int i = 0; i < fr; i++) {
    if (strides0[static_cast<size_t>(i)] == sint(0)) axis_buf0.push_back(i);
    if (strides1[static_cast<size_t>(i)] == sint(0)) axis_buf1.push_back(i);
  }
  if (axis_buf0.empty() || axis_buf1.empty() || !(shape_len() - fr == 1 || opt_level >= 1)) return std::nullopt;
  // itertools.product(axis_buf0, axis_buf1, reduce dims), counted from the end
  const int nk = shape_len() - fr, n_choices = static_cast<int>(axis_buf0.size() * axis_buf1.size()) * nk;
  if (!(axis < n_choices)) return std::nullopt;
  const int c = n_choices - 1 - axis;
  const int s2 = fr + c % nk, s1 = axis_buf1[static_cast<size_t>(c / nk) % axis_buf1.size()],
            s0 = axis_buf0[static_cast<size_t>(c / nk / static_cast<int>(axis_buf1.size()))];
  TensorCoreOptions ret{{s0, s1, s2}, {true, true}, {}};
  for (int i = 0; i < 3; i++)
    if (full_shape()[static_cast<size_t>(ret.axes[static_cast<size_t>(i)])] % tc.dims[static_cast<size_t>(i)] != 0)
      ret.axis_pads.push_back({ret.axes[static_cast<size_t>(i)], tc.dims[static_cast<size_t>(i)]});
  if (!ret.axis_pads.empty() && opt_level < 2) return std::nullopt;
  if (DEBUG >= 3) std::printf("TENSOR CORES %d %d %s\n", s0, s1, tc.str().c_str());
  return ret;
}

bool Kernel::apply_tc_opt(int use_tc, int axis, int tc_select, int opt_level) {
  UOp r = reduceop();
  if (!use_tc || !r || r.arg<ReduceArg>().op != Ops::ADD) return false;
  std::vector<TensorCore> candidates = opts.tensor_cores;
  if (tc_select != -1) candidates = {opts.tensor_cores.at(static_cast<size_t>(tc_select))};
  for (const TensorCore& tc : candidates) {
    std::optional<TensorCoreOptions> tc_opts = create_tc_opts(reduceops[0], tc, axis, opt_level);
    for (size_t i = 1; i < reduceops.size(); i++)  // can only fuse reduces with the same tc options
      TG_ASSERT(create_tc_opts(reduceops[i], tc, axis, opt_level) == tc_opts, "reduces with different TC options");
    if (!tc_opts) continue;
    Kernel saved = *this;
    try {
      tensor_core_opts = tc_opts;
      // pad the axes that need it, then unroll K and lay out N and M over the warp's threads and upcasts
      for (auto [ax, dim] : tc_opts->axis_pads) apply_opt({OptOps::PADTO, ax, dim}, false);
      for (int i = 0; i < tc.reduce_axes(); i++)
        apply_opt({OptOps::UNROLL, tensor_core_opts->axes[2] - first_reduce(), 2}, false);
      for (const std::string& o : tc.opts)
        apply_opt(
            {o[0] == 'u' ? OptOps::UPCAST : OptOps::LOCAL, tensor_core_opts->axes[static_cast<size_t>(o[1] - '0')], 2},
            false);
    } catch (const KernelOptError&) {  // NOTE: tinygrad keeps what applied; we try the next one from a clean kernel
      *this = saved;
      continue;
    }
    tensor_core = tc;
    use_tensor_cores = use_tc;  // TC=2 does the shape ops without the WMMA
    return true;
  }
  return false;
}

bool Kernel::apply_tensor_cores(int use_tc, const std::optional<std::vector<Opt>>& extra_opts, int axis,
                                std::optional<int> tc_select, std::optional<int> tc_opt) {
  if (opts.tensor_cores.empty()) return false;
  Kernel saved = *this;
  try {  // check TC first and apply hand-coded opts if successful
    apply_opt({OptOps::TC, axis,
               std::tuple<int, int, int>{tc_select.value_or(static_cast<int>(TC_SELECT)),
                                         tc_opt.value_or(static_cast<int>(TC_OPT)), use_tc}});
    if (!tensor_core_opts) return true;
    if (extra_opts) {
      apply_opts(*extra_opts);
      return true;
    }
    // hand-coded TC opts: upcast M and N, then make N local
    for (int d : {1, 0}) {
      if (!tensor_core_opts->axes_exist[static_cast<size_t>(d)]) continue;
      int ax = tensor_core_opts->axes[static_cast<size_t>(d)];
      for (int sz : {5, 4, 3, 2})
        if (full_shape()[static_cast<size_t>(ax)] % sz == 0) {
          apply_opt({OptOps::UPCAST, ax, sz});
          break;
        }
    }
    if (tensor_core_opts->axes_exist[0]) {
      int ax = tensor_core_opts->axes[0];
      for (int sz : {4, 2})
        if (full_shape()[static_cast<size_t>(ax)] % sz == 0) {
          apply_opt({OptOps::LOCAL, ax, sz});
          break;
        }
    }
    return true;
  } catch (const KernelOptError&) {  // NOTE: tinygrad leaves what applied in place; we give back the kernel we got
    *this = saved;
    return false;
  }
}

Kernel& Kernel::apply_opts(const std::vector<Opt>& opts_) {
  for (const Opt& o : opts_) apply_opt(o);
  return *this;
}

// *** outputs ***

std::string Kernel::base_name() const {
  bool only_buffers = true;
  for (const UOp& x : ast.toposort())
    only_buffers = only_buffers && (x.op() == Ops::SINK || GroupOp::Buffer.has(x.op()));
  // NOTE: "C" never happens in practice: VIEW and DEFINE_GLOBAL are not buffer ops
  std::string kernel_type = reduceop() ? "r" : (only_buffers ? "C" : "E");
  auto cs = colors();
  std::string suffix;
  for (size_t i = 0; i < cs.size(); i++)
    suffix += (i ? colored("_", "BLACK") : "") + colored(full_shape()[i].str(), cs[i].c_str());
  return kernel_type + (ast.src().size() > 1 ? std::to_string(ast.src().size()) : "") + "_" + suffix;
}

const std::string& Kernel::name() const {
  if (!name_.v) name_.v = register_kernel_name(base_name());
  return *name_.v;
}

UOp Kernel::get_optimized_ast(const std::optional<std::string>& name_override) const {
  const int fr = first_reduce(), n = shape_len();
  std::unordered_map<const UOpNode*, UOp> done;
  for (const UOp& op : ast.toposort()) {
    std::vector<UOp> src;
    for (const UOp& s : op.src()) src.push_back(done.at(s.get()));
    UOp ret = op.replace(std::nullopt, std::nullopt, std::move(src));
    int bi = GroupOp::Buffer.has(op.op()) ? buf_index(op) : -1;
    if (bi >= 0) {
      const ShapeTracker& st = sts[static_cast<size_t>(bi)];
      bool masked = std::any_of(st.views.begin(), st.views.end(), [](const View& v) { return v.mask.has_value(); });
      if (op.op() == Ops::CONST && masked) {
        // a CONST masked by the opts (PADTO) becomes VALID(st).where(c, 0), as tinygrad's UOp.valid
        UOp shape_view = ShapeTracker::from_shape({}).reshape(Shape(st.shape().size(), 1)).expand(st.shape()).to_uop();
        UOp c = UOp::make(Ops::CONST, op.dtype(), {shape_view}, op.arg());
        UOp zero = UOp::make(Ops::CONST, op.dtype(), {shape_view}, dtypes::as_const(int64_t(0), op.dtype()));
        UOp valid = UOp::make(Ops::VALID, dtypes::bool_, {st.to_uop()});
        ret = UOp::make(Ops::WHERE, op.dtype(), {valid, c, zero});
      } else {
        std::vector<UOp> s = ret.src();
        s[0] = s[0].replace(std::nullopt, std::nullopt, std::nullopt, st_arg(st));
        ret = ret.replace(std::nullopt, std::nullopt, std::move(s));
      }
    } else if (op.op() == Ops::SINK) {
      ret = ret.replace(std::nullopt, std::nullopt, std::nullopt,
                        kernel_info(name_override ? *name_override : to_function_name(name()), local_dims, upcasted,
                                    dont_use_locals, lowering));
    } else if (op.op() == Ops::REDUCE_AXIS) {
      auto ri = std::find(reduceops.begin(), reduceops.end(), op) - reduceops.begin();
      size_t reduce_idx = bufs.size() + static_cast<size_t>(ri) * 2;
      const Shape &rs_out = sts[reduce_idx].shape(), &rs_in = sts[reduce_idx + 1].shape();
      auto reduced_axes = [&](int start, int stop) {
        std::vector<int64_t> ax;
        for (int i = start; i < stop; i++)
          if (rs_out[static_cast<size_t>(i)] != rs_in[static_cast<size_t>(i)]) ax.push_back(i);
        return ax;
      };
      std::vector<int64_t> axes = reduced_axes(fr + group_for_reduces, n),
                           grouped_axes = reduced_axes(fr, fr + group_for_reduces);
      Ops rop = op.arg<ReduceArg>().op;
      if (tensor_core && (use_tensor_cores == 1 || use_tensor_cores == 3)) {
        done.emplace(op.get(), tensor_core_reduce(op, ret, axes));
        continue;
      }
      ret = ret.replace(std::nullopt, std::nullopt, std::nullopt, ReduceArg{rop, axes});
      if (group_for_reduces && !grouped_axes.empty()) {
        // reduce the grouped axes in shared memory: store the partial results, load them back and reduce again
        Shape local_shape(static_cast<size_t>(global_dims()), 1);
        for (int i = global_dims(); i < global_dims() + local_dims; i++) local_shape.push_back(full_shape()[i]);
        for (int i = fr; i < fr + group_for_reduces; i++)
          local_shape.push_back(rs_out[static_cast<size_t>(i)] != rs_in[static_cast<size_t>(i)] ? full_shape()[i]
                                                                                                : sint(1));
        for (int i = 0; i < n - upcasted - group_for_reduces - fr; i++) local_shape.push_back(1);
        for (const auto& ua : upcasted_axis(0)) local_shape.push_back(ua.size);
        ShapeTracker lst = ShapeTracker::from_shape(local_shape);
        UOp local_buffer = UOp::make(Ops::DEFINE_LOCAL, op.dtype().ptr(lst.real_size(), true), {}, cat("temp", ri));
        UOp lview = UOp::make(Ops::VIEW, local_buffer.dtype(), {local_buffer}, st_arg(lst));
        UOp local_load = UOp::make(Ops::LOAD, op.dtype(), {lview, UOp::make(Ops::STORE, dtypes::void_, {lview, ret})});
        UOp grouped_reduce = UOp::make(Ops::REDUCE_AXIS, op.dtype(), {local_load}, ReduceArg{rop, grouped_axes});
        if (op == reduceops.back()) {
          ret = grouped_reduce;
        } else {
          Shape s2 = local_shape;
          for (int64_t a : grouped_axes) s2[static_cast<size_t>(a)] = 1;
          UOp v2 = UOp::make(Ops::VIEW, local_buffer.dtype(), {local_buffer}, st_arg(ShapeTracker::from_shape(s2)));
          ret = UOp::make(Ops::LOAD, op.dtype(), {v2, UOp::make(Ops::STORE, dtypes::void_, {v2, grouped_reduce})});
        }
      }
    }
    done.emplace(op.get(), std::move(ret));
  }
  // NOTE: tinygrad ends with graph_rewrite(view_left); it changes nothing here: every VIEW sits on a DEFINE_GLOBAL,
  // a DEFINE_LOCAL, or nothing (CONST/VALID)
  return done.at(ast.get());
}

// The reduce of a kernel with a tensor core: the two inputs of its MUL swizzled into the warp's layout, then a WMMA
// over their upcast axes (TC=1), or a plain multiply-and-sum through shared memory (TC=3); the reduce dims the
// instruction doesn't take stay a REDUCE_AXIS around it.
UOp Kernel::tensor_core_reduce(const UOp& op, const UOp& ret, const std::vector<int64_t>& axes) const {
  const TensorCore& tc = *tensor_core;
  const int wd = global_dims(), tcd = first_upcast();
  const int n_reduce = tc.reduce_axes(), n_upcast = static_cast<int>(tc.upcast_opts().size());
  auto upcast_axes = [&](int operand) {  // upcast along the non-zero dims of (tc_reduce + tc_upcast)
    PairTuple ret;
    const int n = std::countr_zero(static_cast<unsigned>(tc.elements_per_thread[static_cast<size_t>(operand)]));
    for (int i = 0; i < n; i++) ret.push_back({tcd + n_reduce + n_upcast - (i + 1), 2});
    return ret;
  };
  auto swizzle_st = [&](const Shape& shape, const std::vector<int64_t>& local_perm,
                        const std::vector<int64_t>& upcast_perm) {
    const int64_t nl = static_cast<int64_t>(local_perm.size()), offset = tcd - (wd + nl);
    auto moved = [&](int64_t x) { return wd + x + (x >= nl ? offset : 0); };
    std::vector<int64_t> perm;
    for (int64_t i = 0; i < wd; i++) perm.push_back(i);
    for (int64_t x : local_perm) perm.push_back(moved(x));
    for (int64_t i = wd + nl; i < tcd; i++) perm.push_back(i);
    for (int64_t x : upcast_perm) perm.push_back(moved(x));
    for (int64_t i = tcd + static_cast<int64_t>(upcast_perm.size()); i < static_cast<int64_t>(shape.size()); i++)
      perm.push_back(i);
    return ShapeTracker::from_shape(shape).permute(perm);
  };
  // a LOAD (or CAST of one) seen through another view: the view composed into the LOAD's (tinygrad's view_left)
  auto with_view = [](const UOp& src, const ShapeTracker& view) {
    const UOp& load = src.op() == Ops::CAST ? src.src(0) : src;
    std::vector<UOp> ls = load.src();
    ls[0] = ls[0].replace(std::nullopt, std::nullopt, std::nullopt, st_arg(*get_st(ls[0].arg()) + view));
    UOp nl = load.replace(std::nullopt, std::nullopt, std::move(ls));
    return src.op() == Ops::CAST ? src.replace(std::nullopt, std::nullopt, std::vector<UOp>{nl}) : nl;
  };
  const UOp& mul = ret.src(0).op() == Ops::CAST ? ret.src(0).src(0) : ret.src(0);
  std::vector<UOp> srcs = mul.src();
  for (size_t i = 0; i < 2; i++) {
    const UOp& load = srcs[i].op() == Ops::LOAD ? srcs[i] : srcs[i].src(0);
    const ShapeTracker src_st = *get_st(load.src(0).arg());
    if (tc.swizzle[i])
      srcs[i] = with_view(srcs[i], swizzle_st(src_st.shape(), tc.swizzle[i]->first, tc.swizzle[i]->second));
    if (use_tensor_cores == 3) {  // emulate the warp's addressing with shared memory
      auto rs = real_strides(src_st);
      Shape local_shape;
      for (int d = 0; d < static_cast<int>(rs.size()); d++)
        local_shape.push_back(rs[static_cast<size_t>(d)] == sint(0) || d < wd || (d >= first_reduce() && d < tcd)
                                  ? sint(1)
                                  : src_st.shape()[static_cast<size_t>(d)]);
      ShapeTracker st = ShapeTracker::from_shape(local_shape), store_st = st;
      if (tc.swizzle[i]) store_st = swizzle_st(local_shape, tc.swizzle[i]->first, tc.swizzle[i]->second);
      UOp local = UOp::make(Ops::DEFINE_LOCAL, tc.dtype_in.ptr(st.real_size(), true), {}, cat("temp", i));
      UOp store = UOp::make(Ops::STORE, dtypes::void_,
                            {UOp::make(Ops::VIEW, local.dtype(), {local}, st_arg(store_st)), srcs[i]});
      srcs[i] = UOp::make(Ops::LOAD, tc.dtype_in, {UOp::make(Ops::VIEW, local.dtype(), {local}, st_arg(st)), store});
    }
  }
  std::vector<int64_t> tc_reduce_axes;
  for (int i = 0; i < n_reduce; i++) tc_reduce_axes.push_back(tcd + i);
  UOp tc_uop;
  if (use_tensor_cores == 1) {  // a real WMMA: CONTRACT/UNROLL give the expander the vectors it takes and makes
    std::array<PairTuple, 3> ups{upcast_axes(0), upcast_axes(1), upcast_axes(2)};
    const auto& ept = tc.elements_per_thread;
    UOp wmma = UOp::make(
        Ops::WMMA, tc.dtype_out.vec(ept[2]),
        {UOp::make(Ops::CONTRACT, srcs[0].dtype().vec(ept[0]), {srcs[0]}, ups[0]),
         UOp::make(Ops::CONTRACT, srcs[1].dtype().vec(ept[1]), {srcs[1]}, ups[1]),
         UOp::const_(tc.dtype_out.vec(ept[2]), 0.0)},
        wmma_arg(WmmaArg(tc.str(), tc.dims, tc.dtype_in, tc.dtype_out, opts.device, tc.threads, ups, tc_reduce_axes)));
    tc_uop = UOp::make(Ops::UNROLL, tc.dtype_out, {wmma}, ups[2]);
  } else {  // TC=3: a MUL and a SUM instead of the WMMA
    UOp prod = UOp::make(Ops::MUL, srcs[0].dtype(), {srcs[0], srcs[1]});
    tc_uop = UOp::make(Ops::REDUCE_AXIS, tc.dtype_out, {prod.cast(tc.dtype_out)}, ReduceArg{Ops::ADD, tc_reduce_axes});
  }
  std::vector<int64_t> new_axes;
  for (int64_t a : axes)
    if (std::find(tc_reduce_axes.begin(), tc_reduce_axes.end(), a) == tc_reduce_axes.end()) new_axes.push_back(a);
  if (new_axes.empty()) return tc_uop;
  return UOp::make(Ops::REDUCE_AXIS, op.dtype(), {tc_uop}, ReduceArg{Ops::ADD, new_axes});
}

std::string Kernel::buffer_table(bool with_st) const {
  std::string out;
  int i = 0;
  for (size_t b = 0; b < bufs.size(); b++) {
    if (bufs[b].op() == Ops::CONST || bufs[b].op() == Ops::VALID) continue;
    std::string dt = bufs[b].src(0).dtype().repr();
    for (size_t p; (p = dt.find("dtypes.")) != std::string::npos;) dt.erase(p, 7);
    char idx[16];
    std::snprintf(idx, sizeof(idx), "%2d", i++);
    out += cat(idx, ": ", ljust(shape_str(sts[b].shape()), 25), " ", ljust(dt, 20), " ",
               ljust(strides_str(real_strides(sts[b])), 30), " ", with_st ? sts[b].repr() : "", "\n");
  }
  return out;
}

}  // namespace tg
