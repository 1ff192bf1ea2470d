#include "tg/codegen/heuristic.h"

#include <algorithm>
#include <iostream>
#include <set>
#include <tuple>

#include "tg/codegen/cpu_tiles.h"
#include "tg/helpers/knobs.h"

namespace tg {

namespace {

// Symbolic sizes (a Variable's) in the reference's heuristic: `s % x == 0` is False for an expression (a UOp never
// equals an int), and resolve(...) takes its default when the bounds don't decide the comparison.
bool divides(const sint& s, int64_t x) { return s.is_int() && s.as_int() % x == 0; }
bool resolve_gt(const sint& a, const sint& b, bool dflt) { return resolve_lt(b, a, dflt); }
bool resolve_le(const sint& a, const sint& b, bool dflt) { return !resolve_lt(b, a, !dflt); }

bool has_expanded_axis(const Shape& shape, const std::vector<std::optional<sint>>& strides) {
  for (size_t i = 0; i < shape.size(); i++)
    if (resolve_gt(shape[i], 1, true) && strides[i] && *strides[i] == 0) return true;
  return false;
}

// MV: a matrix-vector reduce gets GROUP + LOCAL + UPCAST, on targets with locals and shared memory; true if it did
bool matvec(Kernel& k) {
  int64_t blocksize = MV_BLOCKSIZE, threads_per_row = MV_THREADS_PER_ROW, rows_per_thread = MV_ROWS_PER_THREAD;
  UOp r = k.reduceop();
  if (!(k.opts.has_local && MV != 0 && (blocksize > 1 || threads_per_row > 1 || rows_per_thread > 1) && r &&
        r.arg<ReduceArg>().op == Ops::ADD && k.full_shape().size() >= 2 && k.opts.has_shared))
    return false;
  const UOp& mulop = r.src(0);
  if (mulop.op() != Ops::MUL || mulop.src(0).op() != Ops::LOAD || mulop.src(1).op() != Ops::LOAD) return false;
  const ShapeTracker &st0 = k.sts[static_cast<size_t>(k.buf_index(mulop.src(0)))],
                     &st1 = k.sts[static_cast<size_t>(k.buf_index(mulop.src(1)))];
  auto strides0 = real_strides(st0), strides1 = real_strides(st1);
  auto s0 = strides0[static_cast<size_t>(k.first_reduce())];
  if (!(s0 && *s0 == 1 && !(has_expanded_axis(st0.shape(), strides0) && has_expanded_axis(st1.shape(), strides1))))
    return false;
  for (int global_idx = 0; global_idx < k.global_dims(); global_idx++) {
    if (divides(k.full_shape()[static_cast<size_t>(k.first_reduce())], threads_per_row) &&
        divides(k.full_shape()[static_cast<size_t>(global_idx)], blocksize * rows_per_thread)) {
      if (DEBUG >= 3)
        std::cout << "MATVEC: k.full_shape=" << shape_str(k.full_shape()) << " k.first_reduce=" << k.first_reduce()
                  << " strides0=" << strides_str(strides0) << " MV_BLOCKSIZE=" << blocksize
                  << " MV_THREADS_PER_ROW=" << threads_per_row << " MV_ROWS_PER_THREAD=" << rows_per_thread << "\n";
      if (threads_per_row > 1) k.apply_opt({OptOps::GROUP, 0, static_cast<int>(threads_per_row)});
      if (blocksize > 1) k.apply_opt({OptOps::LOCAL, global_idx, static_cast<int>(blocksize)});
      if (rows_per_thread > 1) k.apply_opt({OptOps::UPCAST, global_idx, static_cast<int>(rows_per_thread)});
      return true;
    }
  }
  return false;
}

}  // namespace

namespace {

// the reference's opts, with the CPU's on top (codegen/cpu_tiles.h): a vector tile or a plain loop when the kernel
// takes one, else the row upcast and the loop order of big kernels
std::pair<std::vector<Opt>, Lowering> hand_coded(const Kernel& k_in) {
  // a kernel with a symbolic dim (a Variable's size) takes a tile chosen for a stand-in size (cpu_symbolic_tile), a
  // plain loop if it reduces (decode's softmax sums exp over the positions so far: the reference's opts left one
  // scalar chain, TinyLlama at 515 positions 22 -> 2.4 us a layer), or the reference's opts: the other CPU opts are
  // sized by the shape
  const bool symbolic =
      std::any_of(k_in.full_shape().begin(), k_in.full_shape().end(), [](const sint& s) { return s.is_sym(); });
  if (CPU_VECTOR_TILE) {
    std::optional<CpuTile> tile = symbolic ? cpu_symbolic_tile(k_in) : cpu_vector_tile(k_in);
    if (!tile && !symbolic) tile = cpu_transpose_tile(k_in);
    if (tile) return {tile->opts, tile->lowering()};
  }
  if ((!symbolic || !k_in.reduceops.empty()) && cpu_vector_loop(k_in))
    return {{}, {.polynomial_transcendentals = true, .reassociate_reduces = !k_in.reduceops.empty()}};
  if (!symbolic)
    if (std::optional<std::vector<Opt>> opts = cpu_window_loop(k_in)) return {*opts, {}};
  Kernel k = k_in.copy();  // the heuristic must not mutate its input
  const int debug = static_cast<int>(DEBUG);

  if (matvec(k)) return {k.applied_opts, {}};

  // *** grouping: a reduce with a small output gets its reduce split across a workgroup (needs locals) ***
  const Shape out_shape(k.sts[0].shape().begin(), k.sts[0].shape().begin() + k.first_reduce());
  if (k.opts.has_local && k.opts.has_shared &&
      std::all_of(out_shape.begin(), out_shape.end(), [](const sint& s) { return s.is_int(); })) {
    bool upcast_unit_stride = false;
    for (int x : unit_stride_axes(k.sts[0]))
      if (x >= k.first_upcast() && divides(k.sts[0].shape()[static_cast<size_t>(x)], 4)) upcast_unit_stride = true;
    sint out_size = prod_range(k.sts[0].shape(), 0, k.first_reduce());
    if (!upcast_unit_stride && k.first_reduce() <= 2 && k.first_reduce() < k.shape_len() && out_size <= 2048) {
      // TODO (as tinygrad): use 1024 if it's allowed in a smarter way
      std::vector<int> szs = out_size <= 32 ? std::vector<int>{256, 16} : std::vector<int>{16};
      for (int sz : szs) {
        bool fits = std::all_of(k.sts.begin(), k.sts.end(), [&](const ShapeTracker& st) {
          sint s = st.shape()[static_cast<size_t>(k.first_reduce())];
          return divides(s, sz) || s == 1;
        });
        if (!fits) continue;
        try {  // may fail for excessive shared memory
          k.apply_opt({OptOps::GROUPTOP, 0, sz});
          break;
        } catch (const KernelOptError&) {
        }
      }
    }
  }

  // *** upcast float4 images ***
  for (size_t bi = 0; bi < k.bufs.size(); bi++) {
    if (!k.bufs[bi].src(0).dtype().is_image()) continue;
    std::vector<int> ax4;
    for (int i : unit_stride_axes(k.sts[bi], true))
      if (divides(k.sts[bi].shape()[static_cast<size_t>(i)], 4)) ax4.push_back(i);
    if (!ax4.empty() && std::all_of(ax4.begin(), ax4.end(), [&](int x) { return x < k.first_upcast(); })) {
      if (ax4[0] < k.first_reduce())
        k.apply_opt({OptOps::UPCAST, ax4[0], 4});
      else
        k.apply_opt({OptOps::UNROLL, ax4[0] - k.first_reduce(), 4});
    }
  }

  // no more opt if we are grouping
  if (k.group_for_reduces) return {k.applied_opts, {}};

  // **** below this line need to be optional and benchmarked ****

  // small masked dims (from Tensor.stack, cat, pad ...) are upcast so the masks fold into constants
  std::vector<int> to_upcast;
  // upcast leading axes first (tinygrad: hack-ish for winograd; we actually want masked axes with low stride first)
  for (int axis = 0; axis < k.first_reduce(); axis++) {
    sint s = k.full_shape()[static_cast<size_t>(axis)];
    if (s.is_sym() || s > 7) continue;  // (as the reference) no masked upcast of a symbolic axis
    bool masked =
        std::any_of(k.sts.begin(), k.sts.end(), [&](const ShapeTracker& st) { return axis_is_masked(st, axis); });
    sint up = prod_range(k.full_shape(), k.first_upcast(), k.shape_len());
    for (int j : to_upcast) up *= k.full_shape()[static_cast<size_t>(j)];
    if (masked && resolve_le(up * s, 7 * 7, false)) {
      if (debug >= 4) std::cout << "upcasting masked axis : " << axis << "\n";
      to_upcast.push_back(axis);
    }
  }
  for (auto it = to_upcast.rbegin(); it != to_upcast.rend(); ++it) k.apply_opt({OptOps::UPCAST, *it, 0});

  // more upcasts of non-reduce axes while the output is big: prefer axes that some buffer broadcasts (stride 0)
  const bool is_dsp = k.opts.device == "DSP";
  std::set<int> upcasted_axis;
  while (!resolve_lt(prod_range(k.sts[0].shape(), 0, k.first_reduce()), 1024, false)) {
    std::vector<std::tuple<int64_t, sint, int, int>> xb_choices;  // (positive strides, their sum, axis, amount)
    std::vector<int> amounts =
        is_dsp ? (upcasted_axis.empty() ? std::vector<int>{128} : std::vector<int>{}) : std::vector<int>{3, 4};
    for (int axis = 0; axis < k.first_reduce(); axis++) {
      for (int amount : amounts) {
        if (upcasted_axis.count(axis) || !divides(k.full_shape()[static_cast<size_t>(axis)], amount)) continue;
        // some buffer has stride 0 on this axis and no stride 0 in its upcast axes yet
        bool any = false;
        for (size_t bi = 0; bi < k.sts.size() && !any; bi++) {
          if (k.sts[bi].views.back().strides[static_cast<size_t>(axis)] != 0) continue;
          auto ua = k.upcasted_axis(static_cast<int>(bi));
          any = std::none_of(ua.begin(), ua.end(), [](const Kernel::UpcastedAxis& x) { return x.stride == sint(0); });
        }
        if (!any) continue;
        int64_t npos = 0;
        sint ssum = 0;
        for (const ShapeTracker& st : k.sts) {
          sint s = st.views.back().strides[static_cast<size_t>(axis)];
          npos += resolve_gt(s, 0, true), ssum += s;
        }
        xb_choices.emplace_back(npos, ssum, axis, amount);
      }
    }
    if (xb_choices.empty()) break;
    // sorted as tuples. An axis along which some buffer moves by a symbolic stride comes first, as in the reference
    // (there the count of positive strides is then an expression, which sorts before the ints)
    auto key = [](const std::tuple<int64_t, sint, int, int>& c) {
      const auto& [npos, ssum, axis, amount] = c;
      return std::make_tuple(ssum.is_int(), npos, ssum.is_int() ? ssum.as_int() : 0, axis, amount);
    };
    std::stable_sort(xb_choices.begin(), xb_choices.end(),
                     [&](const auto& a, const auto& b) { return key(a) < key(b); });
    if (debug >= 4) {
      std::vector<std::string> parts;
      for (auto& [a, b, c, d] : xb_choices) parts.push_back(cat("(", a, ", ", b, ", ", c, ", ", d, ")"));
      std::cout << "float4 merging axis : [" << join(parts, ", ") << "]\n";
    }
    auto [npos, ssum, axis, amount] = xb_choices[0];
    k.apply_opt({OptOps::UPCAST, axis, amount});
    upcasted_axis.insert(axis);
  }

  // if the last dim is small(ish) and it's a reduce dim, unroll it (loop unrolling)
  auto fus = [&]() { return k.full_unupcasted_shape(); };
  bool small_upcast = resolve_le(prod_range(k.full_shape(), k.first_upcast(), k.shape_len()), 4, false);
  bool no_unroll = true;  // no upcast dim is an unroll yet
  for (int i = k.first_upcast(); i < k.shape_len(); i++)
    if (k.sts[0].shape()[static_cast<size_t>(i)] != k.full_shape()[static_cast<size_t>(i)]) no_unroll = false;
  if (k.first_reduce() < k.first_upcast() && (small_upcast || no_unroll) &&
      (k.upcasted == 0 ||
       resolve_lt(prod_range(k.full_shape(), k.shape_len() - k.upcasted, k.shape_len()), 64, false))) {
    sint s = fus().back();
    int last = static_cast<int>(fus().size()) - 1 - k.first_reduce();
    if (s.is_int() && s <= 32) {  // (a symbolic axis can't be unrolled)
      k.apply_opt({OptOps::UNROLL, last, 0});
      // if it's small, upcast a second reduce dimension too
      if (k.first_reduce() < k.first_upcast() && s <= 3 && fus().back().is_int() && fus().back() <= 3)
        k.apply_opt({OptOps::UNROLL, static_cast<int>(fus().size()) - 1 - k.first_reduce(), 0});
    } else if (divides(s, 4)) {
      k.apply_opt({OptOps::UNROLL, last, 4});
    }
  }

  // if nothing at all is upcasted and it's easy to, do an upcast
  if (k.upcasted == 0 && !fus().empty() && divides(fus().back(), 4))
    k.apply_opt({OptOps::UPCAST, static_cast<int>(fus().size()) - 1, 4});
  // CPU: a reduce along a symbolic axis that nothing upcast or unrolled (decode's softmax max over the positions so
  // far) takes 8 (else 4) of its outputs at once: independent chains where one waited on each step's latency, and
  // vectors across them for the C compiler (TinyLlama at 515 positions: 4.8 -> 2.0 us a layer)
  if (symbolic && k.upcasted == 0 && k.opts.simd_lanes > 0 && k.reduceop() && fus().back().is_sym())
    [&] {
      for (int amount : {8, 4})
        for (int a = k.first_reduce() - 1; a >= 0; a--)
          if (divides(k.full_shape()[static_cast<size_t>(a)], amount)) return k.apply_opt({OptOps::UPCAST, a, amount});
    }();

  if (!symbolic && big_cpu_kernel(k)) cpu_row_upcast(k);

  // *** local groups ***
  if (k.opts.has_local) {
    if (NOLOCALS && k.local_dims == 0 && !k.group_for_reduces) {
      k.apply_opt({OptOps::NOLOCALS, std::nullopt, {}});
    } else {
      // prioritize making expand axes local
      std::vector<std::pair<bool, int>> ranking;
      for (int axis = 0; axis < k.first_reduce(); axis++) {
        bool expand = std::any_of(k.sts.begin(), k.sts.end(), [&](const ShapeTracker& st) {
          return st.views.back().strides[static_cast<size_t>(axis)] == 0;
        });
        ranking.emplace_back(expand, axis);
      }
      std::sort(ranking.begin(), ranking.end(), [](auto& a, auto& b) {  // key (-expand, -axis)
        return std::make_pair(-int(a.first), -a.second) < std::make_pair(-int(b.first), -b.second);
      });
      std::vector<std::pair<int, int>> to_local;
      for (auto& [expand, axis] : ranking) {
        sint local_size = 1;
        for (auto& [a, sz] : to_local) local_size *= sz;
        std::vector<int> cands = axis == 0 ? std::vector<int>{32, 16, 8, 4, 3, 2} : std::vector<int>{16, 8, 4, 3, 2};
        for (int x : cands)
          if (divides(k.full_shape()[static_cast<size_t>(axis)], x) && resolve_le(local_size * x, 128, false)) {
            to_local.emplace_back(axis, x);
            break;
          }
      }
      if (to_local.size() > 3) to_local.resize(3);
      std::sort(to_local.begin(), to_local.end());
      int deleted_shape = 0;
      for (auto [axis, local_sz] : to_local) {
        axis -= deleted_shape;
        bool will_delete_shape = local_sz == k.full_shape()[static_cast<size_t>(axis)];
        k.apply_opt({OptOps::LOCAL, axis, local_sz});
        if (will_delete_shape) deleted_shape += 1;
      }
    }
  }
  if (!symbolic && big_cpu_kernel(k) && k.reduceop())
    if (std::optional<std::vector<Opt>> ordered = cpu_loop_order(k)) return {*ordered, {}};
  return {k.applied_opts, {}};
}

}  // namespace

std::vector<Opt> hand_coded_optimizations(const Kernel& k) { return hand_coded(k).first; }

void apply_hand_coded(Kernel& k) {
  auto [opts, lowering] = hand_coded(k);
  k.apply_opts(opts);
  k.lowering = lowering;
}

void apply_default_opts(Kernel& k) {
  if (NOOPT) return;
  if (k.apply_tensor_cores(static_cast<int>(TC))) return;  // a tensor core first, where one fits
  apply_hand_coded(k);
}

}  // namespace tg
