#include "tg/codegen/heuristic.h"

#include <algorithm>
#include <iostream>
#include <set>
#include <tuple>

#include "tg/codegen/cpu_tiles.h"
#include "tg/helpers/knobs.h"

namespace tg {

namespace {

bool has_expanded_axis(const Shape& shape, const std::vector<std::optional<sint>>& strides) {
  for (size_t i = 0; i < shape.size(); i++)
    if (shape[i] > 1 && strides[i] && *strides[i] == 0) return true;
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
    if (k.full_shape()[static_cast<size_t>(k.first_reduce())] % threads_per_row == 0 &&
        k.full_shape()[static_cast<size_t>(global_idx)] % (blocksize * rows_per_thread) == 0) {
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
  // a symbolic dim (a Variable's size) keeps the kernel as it is: its opts would depend on the value
  for (const sint& s : k_in.full_shape())
    if (s.is_sym()) return {{}, {}};
  if (CPU_VECTOR_TILE)
    if (std::optional<CpuTile> tile = cpu_vector_tile(k_in)) return {tile->opts, tile->lowering()};
  if (cpu_vector_loop(k_in)) return {{}, {.polynomial_transcendentals = true}};
  Kernel k = k_in.copy();  // the heuristic must not mutate its input
  const int debug = static_cast<int>(DEBUG);

  if (matvec(k)) return {k.applied_opts, {}};

  // *** grouping: a reduce with a small output gets its reduce split across a workgroup (needs locals) ***
  if (k.opts.has_local && k.opts.has_shared) {
    bool upcast_unit_stride = false;
    for (int x : unit_stride_axes(k.sts[0]))
      if (x >= k.first_upcast() && k.sts[0].shape()[static_cast<size_t>(x)] % 4 == 0) upcast_unit_stride = true;
    sint out_size = prod_range(k.sts[0].shape(), 0, k.first_reduce());
    if (!upcast_unit_stride && k.first_reduce() <= 2 && k.first_reduce() < k.shape_len() && out_size <= 2048) {
      // TODO (as tinygrad): use 1024 if it's allowed in a smarter way
      std::vector<int> szs = out_size <= 32 ? std::vector<int>{256, 16} : std::vector<int>{16};
      for (int sz : szs) {
        bool fits = std::all_of(k.sts.begin(), k.sts.end(), [&](const ShapeTracker& st) {
          sint s = st.shape()[static_cast<size_t>(k.first_reduce())];
          return s % sz == 0 || s == 1;
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
      if (k.sts[bi].shape()[static_cast<size_t>(i)] % 4 == 0) ax4.push_back(i);
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
    if (s > 7) continue;
    bool masked =
        std::any_of(k.sts.begin(), k.sts.end(), [&](const ShapeTracker& st) { return axis_is_masked(st, axis); });
    sint up = prod_range(k.full_shape(), k.first_upcast(), k.shape_len());
    for (int j : to_upcast) up *= k.full_shape()[static_cast<size_t>(j)];
    if (masked && up * s <= 7 * 7) {
      if (debug >= 4) std::cout << "upcasting masked axis : " << axis << "\n";
      to_upcast.push_back(axis);
    }
  }
  for (auto it = to_upcast.rbegin(); it != to_upcast.rend(); ++it) k.apply_opt({OptOps::UPCAST, *it, 0});

  // more upcasts of non-reduce axes while the output is big: prefer axes that some buffer broadcasts (stride 0)
  const bool is_dsp = k.opts.device == "DSP";
  std::set<int> upcasted_axis;
  while (prod_range(k.sts[0].shape(), 0, k.first_reduce()) >= 1024) {
    std::vector<std::tuple<sint, sint, int, int>> xb_choices;
    std::vector<int> amounts =
        is_dsp ? (upcasted_axis.empty() ? std::vector<int>{128} : std::vector<int>{}) : std::vector<int>{3, 4};
    for (int axis = 0; axis < k.first_reduce(); axis++) {
      for (int amount : amounts) {
        if (upcasted_axis.count(axis) || k.full_shape()[static_cast<size_t>(axis)] % amount != 0) continue;
        // some buffer has stride 0 on this axis and no stride 0 in its upcast axes yet
        bool any = false;
        for (size_t bi = 0; bi < k.sts.size() && !any; bi++) {
          if (k.sts[bi].views.back().strides[static_cast<size_t>(axis)] != 0) continue;
          auto ua = k.upcasted_axis(static_cast<int>(bi));
          any = std::none_of(ua.begin(), ua.end(), [](const Kernel::UpcastedAxis& x) { return x.stride == sint(0); });
        }
        if (!any) continue;
        sint npos = 0, ssum = 0;
        for (const ShapeTracker& st : k.sts) {
          sint s = st.views.back().strides[static_cast<size_t>(axis)];
          npos += s > 0, ssum += s;
        }
        xb_choices.emplace_back(npos, ssum, axis, amount);
      }
    }
    if (xb_choices.empty()) break;
    std::sort(xb_choices.begin(), xb_choices.end());
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
  bool small_upcast = prod_range(k.full_shape(), k.first_upcast(), k.shape_len()) <= 4;
  bool no_unroll = true;  // no upcast dim is an unroll yet
  for (int i = k.first_upcast(); i < k.shape_len(); i++)
    if (k.sts[0].shape()[static_cast<size_t>(i)] != k.full_shape()[static_cast<size_t>(i)]) no_unroll = false;
  if (k.first_reduce() < k.first_upcast() && (small_upcast || no_unroll) &&
      (k.upcasted == 0 || prod_range(k.full_shape(), k.shape_len() - k.upcasted, k.shape_len()) < 64)) {
    sint s = fus().back();
    int last = static_cast<int>(fus().size()) - 1 - k.first_reduce();
    if (s <= 32) {
      k.apply_opt({OptOps::UNROLL, last, 0});
      // if it's small, upcast a second reduce dimension too
      if (k.first_reduce() < k.first_upcast() && s <= 3 && fus().back() <= 3)
        k.apply_opt({OptOps::UNROLL, static_cast<int>(fus().size()) - 1 - k.first_reduce(), 0});
    } else if (s % 4 == 0) {
      k.apply_opt({OptOps::UNROLL, last, 4});
    }
  }

  // if nothing at all is upcasted and it's easy to, do an upcast
  if (k.upcasted == 0 && !fus().empty() && fus().back() % 4 == 0)
    k.apply_opt({OptOps::UPCAST, static_cast<int>(fus().size()) - 1, 4});

  if (big_cpu_kernel(k)) cpu_row_upcast(k);

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
          if (k.full_shape()[static_cast<size_t>(axis)] % x == 0 && local_size * x <= 128) {
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
  if (big_cpu_kernel(k) && k.reduceop())
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
