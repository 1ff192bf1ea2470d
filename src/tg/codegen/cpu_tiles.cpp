#include "tg/codegen/cpu_tiles.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <tuple>

#include "tg/codegen/devectorizer.h"
#include "tg/helpers/knobs.h"

namespace tg {

namespace {

constexpr double kCacheBytes = 512 * 1024;  // the smallest L2 of the CPUs we run on (Zen 3's): nothing reads the host

// what nest_traffic costs a loop order by: the kernel's sizes and its loads' strides (as numbers) and item sizes
struct Nest {
  struct Load {
    std::vector<int64_t> strides;  // absolute, one per axis
    double itemsize;
  };
  std::vector<int64_t> sizes;
  std::vector<Load> loads;
  int first_reduce, threads;
};
// nullopt where a size or a stride is not a number
std::optional<Nest> nest_of(const Kernel& k) {
  Nest nest{{}, {}, k.first_reduce(), k.opts.threads};
  for (const sint& d : k.full_shape()) {
    if (!d.is_int()) return std::nullopt;
    nest.sizes.push_back(d.as_int());
  }
  for (size_t i = 0; i < k.bufs.size(); i++) {
    if (k.bufs[i].op() != Ops::LOAD) continue;
    Nest::Load l{{}, static_cast<double>(k.bufs[i].src(0).dtype().base().itemsize())};
    for (const std::optional<sint>& st : real_strides(k.sts[i])) {
      if (!st || !st->is_int()) return std::nullopt;
      l.strides.push_back(std::abs(st->as_int()));
    }
    nest.loads.push_back(std::move(l));
  }
  return nest;
}

// the bytes moved from memory by a loop nest `order` (global axes, outermost first; every other axis of the kernel
// inside them, once), a buffer's bytes in a nest the span of its elements it touches there (or their count when
// fewer). A buffer that does not move along a loop whose body touches no more than kCacheBytes is read once for all
// of the loop's iterations, everything else once per iteration
double nest_traffic(const Nest& nest, const std::vector<int>& order) {
  auto bytes = [&](const Nest::Load& l, const std::vector<int>& axes) {
    double count = 1, span = 1;
    for (int a : axes) {
      const auto s = static_cast<double>(l.strides[static_cast<size_t>(a)]);
      const auto n = static_cast<double>(nest.sizes[static_cast<size_t>(a)]);
      if (s == 0) continue;
      count *= n;
      span += s * (n - 1);
    }
    return std::min(count, span) * l.itemsize;
  };
  // from the innermost nest outwards: each buffer's traffic, and the footprint of the nest inside the next loop
  std::vector<int> axes;  // the axes inside the global loops
  for (int a = nest.first_reduce; a < static_cast<int>(nest.sizes.size()); a++) axes.push_back(a);
  std::vector<double> traffic;
  double footprint = 0;
  for (const Nest::Load& l : nest.loads) traffic.push_back(bytes(l, axes)), footprint += traffic.back();
  for (size_t i = order.size(); i-- > 0;) {
    const int a = order[i];
    const auto n = static_cast<double>(nest.sizes[static_cast<size_t>(a)]);
    for (size_t j = 0; j < nest.loads.size(); j++)
      if (nest.loads[j].strides[static_cast<size_t>(a)] != 0 || footprint > kCacheBytes) traffic[j] *= n;
    if (i == 0) break;
    axes.push_back(a);
    footprint = 0;
    for (const Nest::Load& l : nest.loads) footprint += bytes(l, axes);
  }
  double total = 0;
  for (double t : traffic) total += t;
  // the threads share the outermost loop: an uneven share waits on the last thread
  if (const int t = nest.threads; t > 1 && !order.empty()) {
    const auto n = static_cast<double>(nest.sizes[static_cast<size_t>(order[0])]);
    total *= std::ceil(n / t) * t / n;
  }
  return total;
}

// the CPU's loop order (ours), for the global axes of a kernel whose sizes are known: the order that moves the fewest
// bytes through a cache of kCacheBytes (above), ties (and kernels it can't judge) to the axes along which the loads
// move farthest outermost, so the inner loops revisit the blocks they load while those are still in cache and walk
// memory in order. A matmul of 4096x1536 by 1536x384 with rows outermost re-read all of its 2.4 MB right-hand side
// from beyond the L2 for each row block (32 ms on a Xeon); with the column blocks outermost, a 196 KB strip of it stays
// in cache and the left side streams 12 times (17 ms). Throws KernelOptError.
void order_global_loops(Kernel& kc) {
  auto cost = [&](int a) {
    sint c = 0;
    for (size_t i = 0; i < kc.bufs.size(); i++)
      if (kc.bufs[i].op() == Ops::LOAD) {
        std::optional<sint> s = real_strides(kc.sts[i])[static_cast<size_t>(a)];
        c += s ? std::abs(*s) : sint(1) << 40;
      }
    return c;
  };
  // the stride order: the axes along which the loads move farthest outermost
  std::vector<int> order;
  for (int a = 0; a < kc.first_reduce(); a++) order.push_back(a);
  for (size_t pos = 0; pos < order.size(); pos++) {
    size_t best = pos;
    for (size_t q = pos + 1; q < order.size(); q++)
      if (cost(order[q]) > cost(order[best])) best = q;
    std::swap(order[pos], order[best]);
  }
  // another order only where it moves clearly fewer bytes (a quarter less)
  if (order.size() >= 2 && order.size() <= 5)
    if (std::optional<Nest> nest = nest_of(kc)) {
      std::vector<int> perm = order, best = order;
      double best_cost = nest_traffic(*nest, order) * 0.75;
      std::sort(perm.begin(), perm.end());
      do {
        if (double c = nest_traffic(*nest, perm); c < best_cost) best = perm, best_cost = c;
      } while (std::next_permutation(perm.begin(), perm.end()));
      order = best;
    }
  // apply it: order[pos] is an axis of the kernel as it was; SWAPs move the axes
  std::vector<int> at(order.size());  // at[axis] = where the axis is now
  for (size_t a = 0; a < at.size(); a++) at[a] = static_cast<int>(a);
  for (size_t pos = 0; pos < order.size(); pos++) {
    int from = at[static_cast<size_t>(order[pos])];
    if (from == static_cast<int>(pos)) continue;
    kc.apply_opt({OptOps::SWAP, static_cast<int>(pos), from});
    for (int& x : at)
      if (x == static_cast<int>(pos))
        x = from;
      else if (x == from)
        x = static_cast<int>(pos);
  }
}

// applies the opts `pre`, then (axis, amount) upcasts (UPCAST, or UPCASTTOP: the outer part of each axis), then (axis,
// amount) unrolls (absolute axes of the kernel after `pre`), on a copy of k; the axes are followed as upcasts or
// unrolls of whole axes drop them. nullopt if an opt does not apply.
std::optional<std::vector<Opt>> apply_tile(const Kernel& k, std::vector<std::pair<int, int>> ups,
                                           std::vector<std::pair<int, int>> unrolls, OptOps up = OptOps::UPCAST,
                                           const std::vector<Opt>& pre = {}) {
  Kernel kc = k.copy();
  auto follow = [&](int removed, size_t from) {
    for (size_t j = from; j < ups.size(); j++)
      if (ups[j].first > removed) ups[j].first--;
    for (auto& u : unrolls)
      if (u.first > removed) u.first--;
  };
  try {
    for (const Opt& o : pre) kc.apply_opt(o);
    for (size_t i = 0; i < ups.size(); i++) {
      int len = kc.first_upcast();  // a whole axis upcast leaves the axes before the upcast ones
      kc.apply_opt({up, ups[i].first, ups[i].second});
      if (kc.first_upcast() < len) follow(ups[i].first, i + 1);
    }
    for (size_t i = 0; i < unrolls.size(); i++) {
      int len = kc.first_upcast(), axis = unrolls[i].first;
      kc.apply_opt({OptOps::UNROLL, axis - kc.first_reduce(), unrolls[i].second});
      if (kc.first_upcast() < len)
        for (size_t j = i + 1; j < unrolls.size(); j++)
          if (unrolls[j].first > axis) unrolls[j].first--;
    }
    if (CPU_LOOP_ORDER) order_global_loops(kc);
  } catch (const KernelOptError&) {
    return std::nullopt;
  }
  return kc.applied_opts;
}

int pow2_amount(sint size, int most) {  // the largest power of two <= most dividing size (1 if none)
  for (int c = most; c >= 2; c /= 2)
    if (size % c == 0) return c;
  return 1;
}

// the element a ShapeTracker of integer views reads at idx (of its shape), nullopt where a mask hides it
std::optional<int64_t> offset_at(const ShapeTracker& st, std::vector<int64_t> idx) {
  for (size_t vi = st.views.size(); vi-- > 0;) {
    const View& v = st.views[vi];
    int64_t off = v.offset.as_int();
    for (size_t d = 0; d < idx.size(); d++) {
      if (v.mask && (idx[d] < (*v.mask)[d].first.as_int() || idx[d] >= (*v.mask)[d].second.as_int()))
        return std::nullopt;
      off += idx[d] * v.strides[d].as_int();
    }
    if (vi == 0) return off;
    const Shape& prev = st.views[vi - 1].shape;  // the offset as an index of the view before (row-major)
    idx.assign(prev.size(), 0);
    for (size_t d = prev.size(); d-- > 0;) {
      const int64_t n = prev[d].as_int();
      if (n <= 0) return std::nullopt;
      idx[d] = off % n, off /= n;
    }
  }
  return std::nullopt;
}

// the smallest power of two P (up to `most`, dividing the reduce axis `axis`) after which st's reads along that axis
// repeat, shifted: element r + P is element r's plus a constant, hidden where r's is (a quantized block of P weights
// is P in; a plain row 1). nullopt when none does, or a dim is symbolic
std::optional<int64_t> reduce_period(const ShapeTracker& st, const Shape& full, int axis, int64_t most) {
  for (const View& v : st.views) {  // offset_at reads every size, stride, offset and mask bound as an int
    if (v.offset.is_sym() || !all_int(v.shape) || !all_int(v.strides)) return std::nullopt;
    if (v.mask && std::any_of(v.mask->begin(), v.mask->end(),
                              [](const auto& m) { return m.first.is_sym() || m.second.is_sym(); }))
      return std::nullopt;
  }
  const int64_t size = full[static_cast<size_t>(axis)].as_int();
  std::vector<int64_t> at(full.size(), 0);
  auto offset = [&](int64_t r) {
    at[static_cast<size_t>(axis)] = r;
    return offset_at(st, at);
  };
  for (int64_t p = 1; p <= most && size % p == 0; p *= 2) {
    std::optional<int64_t> step;  // element r + p's offset less element r's, the same for every r that is read
    bool periodic = true;
    for (int64_t r = 0; periodic && r + p < size && r < 2 * p + 64; r++) {
      std::optional<int64_t> a = offset(r), b = offset(r + p);
      if (a.has_value() != b.has_value())
        periodic = false;
      else if (a && !step)
        step = *b - *a;
      else if (a)
        periodic = *b - *a == *step;
    }
    if (periodic) return p;
  }
  return std::nullopt;
}

// how far st's reads move for `step` along `axis`, the same from its first element and from the one at 1 on the other
// axes (a view real_strides can't read as a stride: a packed weight's nibbles); nullopt when they differ or are hidden
std::optional<int64_t> steps_along(const ShapeTracker& st, const Shape& full, int axis, int64_t step) {
  std::optional<int64_t> move;
  for (int64_t base = 0; base < 2; base++) {
    std::vector<int64_t> at(full.size(), 0);
    for (size_t d = 0; d < full.size(); d++) at[d] = std::min(base, full[d].as_int() - 1);
    at[static_cast<size_t>(axis)] = 0;
    std::optional<int64_t> from = offset_at(st, at);
    at[static_cast<size_t>(axis)] += step;
    if (at[static_cast<size_t>(axis)] >= full[static_cast<size_t>(axis)].as_int()) return std::nullopt;
    std::optional<int64_t> to = offset_at(st, at);
    if (!from || !to || (move && *move != *to - *from)) return std::nullopt;
    move = *to - *from;
  }
  return move;
}

}  // namespace

std::optional<CpuTile> cpu_packed_matvec_tile(const Kernel& k) {
  if (k.opts.simd_lanes <= 0 || !k.applied_opts.empty() || k.reduceops.size() != 1) return std::nullopt;
  const UOp r = k.reduceop();
  if (r.arg<ReduceArg>().op != Ops::ADD || r.dtype() != dtypes::float32) return std::nullopt;
  const int fr = k.first_reduce(), n = k.shape_len();
  // one reduce axis after the weight's rows, and maybe the activations' rows before them (a matmul of a few rows:
  // a prefill's chunk)
  if ((fr != 1 && fr != 2) || n != fr + 1) return std::nullopt;
  const Shape full = k.full_shape();
  for (const sint& s : full)
    if (s.is_sym()) return std::nullopt;
  const int w_rows = fr - 1;  // the weight's rows: the activations broadcast along them
  std::vector<UOp> reduced = r.toposort();
  bool packed = false, broadcast = false, tokens = fr == 2;
  int64_t period = 1;
  for (size_t i = 0; i < k.bufs.size(); i++) {
    const UOp& b = k.bufs[i];
    if (std::find(reduced.begin(), reduced.end(), b) == reduced.end() || b.op() == Ops::STORE) continue;
    if (b.op() == Ops::LOAD) {
      const DType dt = b.dtype().scalar();
      const bool weight = (dtypes::is_int(dt) && dt.itemsize() <= 2) || dt == dtypes::float16 || dt == dtypes::bfloat16;
      packed |= weight;
      std::vector<std::optional<sint>> st = real_strides(k.sts[i]);
      broadcast |= st[static_cast<size_t>(w_rows)] && *st[static_cast<size_t>(w_rows)] == 0;
      // each load is the weight's (the same for every activation row) or the activations' (broadcast along the
      // weight's rows)
      auto zero = [&](int a) {
        const std::optional<sint>& s = st[static_cast<size_t>(a)];
        return s ? *s == 0 : steps_along(k.sts[i], full, a, 1) == std::optional<int64_t>(0);
      };
      if (fr == 2 && !zero(0) && !zero(w_rows)) tokens = false;
    }
    std::optional<int64_t> p = reduce_period(k.sts[i], full, fr, 256);
    if (!p) return std::nullopt;
    period = std::max(period, *p);
  }
  if (!packed || !broadcast || (fr == 2 && !tokens)) return std::nullopt;
  // a weight laid out for the dot-product instruction (nn::GGMLInt8Weight): a byte load whose rows are 4 bytes apart
  // and whose quads of 4 weights 64, 16 rows of a quad side by side
  bool quad_rows = false;
  for (size_t i = 0; i < k.bufs.size(); i++) {
    const UOp& b = k.bufs[i];
    if (b.op() == Ops::LOAD && b.dtype().scalar().itemsize() == 1 && dtypes::is_int(b.dtype().scalar()) &&
        std::find(reduced.begin(), reduced.end(), b) != reduced.end() && full[static_cast<size_t>(w_rows)] % 16 == 0)
      quad_rows |= steps_along(k.sts[i], full, w_rows, 1) == std::optional<int64_t>(4) &&
                   steps_along(k.sts[i], full, fr, 4) == std::optional<int64_t>(64);
  }
  // the unroll: a block of 32 weights (a K-quant's super-block of 256 is 8 of them: what varies between those is the
  // same for every lane of an iteration, a select of whole vectors), or 32 of a plain F16 row. Unrolling a whole
  // super-block ran slower (Q4_K 4.7 against 5.4 GiB/s) and took clang seconds per kernel
  // A reduce of an odd number of 16s takes 16 (Q4_K's mins, one a block: TinyLlama's ffn_down has 176 blocks a row,
  // and took the reference's opts, 116 us a token and layer against 19 for ffn_gate's 64 blocks)
  const int64_t red = full[static_cast<size_t>(fr)].as_int();
  const int unroll = red % 32 == 0 ? 32 : red % 16 == 0 && period <= 16 ? 16 : 0;
  if (unroll == 0 || period > 256 || (period > 32 && period % 32 != 0)) return std::nullopt;
  // Rows: 8 of blocks of 32 (AVX-512, 4096x4096: Q4_0 8.4 -> 9.4 GiB/s, Q8_0 17 -> 18), 4 of super-blocks (Q6_K
  // 6.7 against 3.6 with 8); half as many within 16 registers (8 x 32 lanes would fill all of AVX2's with
  // accumulators; AVX2 code, Q4_K: 3.5 GiB/s with 2 rows, 2.4-2.8 with 4)
  // A reduce of integer products scaled by a block's floats (nn::ggml_int8_linear) keeps a quarter of the lanes in
  // accumulators (the devectorizer sums the products in fours, a dot-product instruction): twice the rows (16 of
  // blocks of 32: Q4_0 10.2 -> 12.1 GiB/s, Q8_0 20.1 -> 20.2, Q4_K 10.2 -> 11.1 with 8 of super-blocks)
  // (float(p) [+ e]) * s [+ c] (c: a K-quant's min term, devectorizer's group_block_sums_plus)
  bool ints = false;
  for (const UOp& in : r.src(0).op() == Ops::ADD ? r.src(0).src() : std::vector<UOp>{r.src(0)})
    if (in.op() == Ops::MUL)
      for (const UOp& f : in.src())
        ints |= is_int_product(f) || (f.op() == Ops::ADD && (is_int_product(f.src(0)) || is_int_product(f.src(1))));
  const int lanes = cpu_tile_lanes(k.opts),
            most = (period <= 32 ? std::min(8, lanes / 32) : std::min(4, lanes / 64)) * (ints ? 2 : 1);
  std::vector<std::pair<int, int>> ups;
  // The layout's tile: 64 rows (16 of each of its four groups), whose products sum as integers over each block
  // (Lowering::integer_block_sums): a quad of x's block times 16 rows' quad is one dot-product instruction, and a
  // block's 8 are added as vectors, converted and scaled once (AVX-512, 2048x5632 Q4_0: decode 0.16 -> 0.14 ms,
  // a prefill's 64 rows 9.9 ms as a float copy's matmul -> 4.0; the vector's 8 slices are accumulated in the
  // instruction, renderer/cpu_dot4.cpp)
  if (quad_rows && ints && k.opts.dot_products && unroll == 32) {
    // A prefill's chunk (the activations' rows before the weight's) takes 4 of its rows and 16 of the weight's: each
    // weight vector, unpacked once, is multiplied by 4 rows' quads (2048x5632 by 512 rows, AVX-512 VNNI: Q4_0 847 ->
    // 1100 GOP/s, Q8_0 585 -> 1101, Q4_K 881 -> 1185; its AVX2 code 340 -> 351, Q4_K 316 -> 377). The activations'
    // rows go first, so the 16 weight rows are the lanes of each vector. Their products carry no offset there
    // (nn::ggml_int8_linear sums it apart): a block sum of each row's x in the tile cost as much as its products
    if (int tokens = fr == 2 ? pow2_amount(full[0], 4) : 1; tokens > 1) ups.push_back({0, tokens});
    const int most_rows = ups.empty() ? 64 : 16;
    if (int rows = pow2_amount(full[static_cast<size_t>(w_rows)], most_rows); rows >= 16) ups.push_back({w_rows, rows});
    if (auto opts = apply_tile(k, ups, {{fr, 32}}))
      return CpuTile{.opts = *opts, .reduce_lanes = true, .block_sums = true};
    return std::nullopt;
  }
  if (int rows = pow2_amount(full[static_cast<size_t>(w_rows)], most); rows > 1) ups.push_back({w_rows, rows});
  // A decode step's matvec (one row of activations) takes its rows far apart (UPCASTTOP: row g * n / rows + t for lane
  // g), so each lane reads one long run of consecutive rows through memory, as the packed layout's groups do, where
  // neighbouring rows were short streams (a row of 4096 halves: 8 KB) that the prefetcher picked up anew each tile
  // (AVX-512, 4096x11008 at 48 GiB/s: F16 74 -> 85% of the bandwidth, Q4_0's float 29 -> 42%, Q6_K's int8 on the
  // file's blocks 38 -> 72%; TinyLlama F16 decode 18 -> 21-22 tok/s)
  if (auto opts = apply_tile(k, ups, {{fr, unroll}}, fr == 1 ? OptOps::UPCASTTOP : OptOps::UPCAST))
    return CpuTile{.opts = *opts, .reduce_lanes = true};
  return std::nullopt;
}

std::optional<CpuTile> cpu_transpose_tile(const Kernel& k) {
  if (k.opts.simd_lanes <= 0 || !k.applied_opts.empty() || k.upcasted != 0 || !k.reduceops.empty() ||
      k.local_dims != 0 || k.bufs.size() != 2 || k.bufs[1].op() != Ops::LOAD || !big_cpu_kernel(k))
    return std::nullopt;
  const DType t = k.bufs[1].dtype().scalar();
  if (t.itemsize() != 4 || k.bufs[0].src().size() < 2 || k.bufs[0].src(1).op() != Ops::LOAD) return std::nullopt;
  const int w = cpu_register_width(k.opts, dtypes::float32);
  const auto out = real_strides(k.sts[0]), in = real_strides(k.sts[1]);
  int o = -1, c = -1;  // the axis the output stores contiguously, the one the input loads contiguously
  for (int a = 0; a < k.shape_len(); a++) {
    if (k.full_shape()[static_cast<size_t>(a)] % w != 0) continue;
    if (out[static_cast<size_t>(a)] == sint(1) && in[static_cast<size_t>(a)] != sint(1)) o = a;
    if (in[static_cast<size_t>(a)] == sint(1) && out[static_cast<size_t>(a)] != sint(1)) c = a;
  }
  if (o < 0 || c < 0 || !in[static_cast<size_t>(o)] || !out[static_cast<size_t>(c)]) return std::nullopt;
  if (auto opts = apply_tile(k, {{c, w}, {o, w}}, {})) return CpuTile{.opts = *opts};
  return std::nullopt;
}

bool big_cpu_kernel(const Kernel& k) {
  return k.opts.simd_lanes > 0 && prod_range(k.full_shape(), 0, k.shape_len()) >= (int64_t(1) << 20);
}

std::optional<CpuTile> cpu_vector_tile(const Kernel& k, bool whole_rows) {
  if (k.opts.simd_lanes <= 0 || !k.applied_opts.empty() || k.upcasted != 0 || k.local_dims != 0 ||
      k.group_for_reduces != 0)
    return std::nullopt;
  if (k.reduceops.size() != 1) return std::nullopt;
  UOp r = k.reduceop();
  if (r.arg<ReduceArg>().op != Ops::ADD || r.dtype() != dtypes::float32) return std::nullopt;
  const int fr = k.first_reduce(), n = k.shape_len();
  if (fr == 0 || fr >= n) return std::nullopt;
  // the tile pays off only with many multiply-adds (big_cpu_kernel, below), or adds: a sum's from 64K of them (a full
  // sum's second stage)
  if (prod_range(k.full_shape(), 0, n) < (int64_t(1) << 16)) return std::nullopt;
  if (std::optional<CpuTile> t = cpu_packed_matvec_tile(k)) return t;
  const int tile_lanes = cpu_tile_lanes(k.opts);  // the register budget in float lanes

  // the strides of every buffer the reduce loads (loads after it, as a fused relu mask, run once per output)
  std::vector<std::vector<std::optional<sint>>> in;
  std::vector<UOp> reduced = r.toposort();
  for (size_t i = 0; i < k.bufs.size(); i++)
    if (k.bufs[i].op() == Ops::LOAD && std::find(reduced.begin(), reduced.end(), k.bufs[i]) != reduced.end())
      in.push_back(real_strides(k.sts[i]));
  if (in.empty()) return std::nullopt;
  auto size = [&](int a) { return k.full_shape()[static_cast<size_t>(a)]; };
  auto stride_is = [](const std::optional<sint>& s, sint v) { return s && *s == v; };
  auto st = [](const std::vector<std::optional<sint>>& strides, int a) { return strides[static_cast<size_t>(a)]; };
  auto out_strides = real_strides(k.sts[0]);

  // the vector axis among [lo, hi) (up to `most` lanes): every input loads it contiguously or broadcasts it, at least
  // one contiguously
  auto vector_axis = [&](int lo, int hi, int most, int& amt) {
    int v = -1;
    amt = 0;
    bool v_unit = false;
    for (int a = lo; a < hi; a++) {
      int c = pow2_amount(size(a), most);
      if (c < 2) continue;
      bool ok = true, any_contig = false;
      for (auto& s : in) {
        ok &= stride_is(st(s, a), 0) || stride_is(st(s, a), 1);
        any_contig |= stride_is(st(s, a), 1);
      }
      if (!ok || !any_contig) continue;
      bool unit = stride_is(st(out_strides, a), 1);
      if (std::make_tuple(c, unit, a) > std::make_tuple(amt, v_unit, v)) v = a, amt = c, v_unit = unit;
    }
    return v;
  };
  // the fill axis among [lo, hi) and its amount, when the vector axis v gives fewer than 16 lanes (va): the inputs
  // broadcasting v broadcast it too, and the contiguous ones have a stride on it (rows of the same vector). The
  // most lanes first (up to 16 in all), then the closest rows; or the other way round (more_lanes false).
  auto fill = [&](int lo, int hi, int v, int va, bool more_lanes) -> std::pair<int, int> {
    int f = -1, fa = 1;
    sint best = 0;
    for (int a = lo; a < hi && va < 16; a++) {
      int need = pow2_amount(size(a), 16 / va);
      if (a == v || need < 2) continue;
      bool ok = true;
      sint far = 0;
      for (auto& s : in) {
        if (stride_is(st(s, v), 1)) {
          ok &= st(s, a).has_value();
          if (st(s, a)) far = std::max(far, *st(s, a));
        } else {
          ok &= stride_is(st(s, a), 0);
        }
      }
      bool better = more_lanes ? std::make_pair(need, -far) > std::make_pair(fa, -best)
                               : std::make_pair(-far, need) > std::make_pair(-best, fa);
      if (ok && (f < 0 || better)) f = a, fa = need, best = far;
    }
    return {f, fa};
  };

  // a sum across rows, of one input or of products (a bias's gradient: a (4096, 1536) matrix summed over its 4096
  // rows; a layernorm weight's: dy * x-hat summed so): the output's contiguous axis in vector lanes, two registers of
  // them (a row's 128 bytes, the pair of lines memory sends together), the reduce unrolled by 4 (four rows' loads in
  // flight), where the reference's upcast of 3 outputs summed 12 bytes of each line it read (AVX2, a GPT's step: its
  // 1536-wide bias gradients 25.4 -> 6.0 ms, the 384-wide ones and the layernorms' weight gradients 16.4 -> 6.3 ms)
  auto sum_of_rows = [&]() -> std::optional<CpuTile> {
    int va = 0, v = vector_axis(0, fr, tile_lanes / 8, va);
    if (v < 0 || va < 8 || !big_cpu_kernel(k)) return std::nullopt;
    std::vector<std::pair<int, int>> unrolls;
    if (size(n - 1) % 4 == 0) unrolls.push_back({n - 1, 4});
    if (auto opts = apply_tile(k, {{v, va}}, unrolls)) return CpuTile{.opts = *opts, .reduce_lanes = false};
    return std::nullopt;
  };

  // 0. a sum (not a product of two inputs) along contiguous rows: vector accumulators along the reduce, two vector
  // registers each, for four outputs: eight independent chains of adds keep the loads at memory speed, where one
  // scalar chain waits on each add's latency (a row sum, a full sum's first stage). A big sum of short rows (one
  // reduce axis of up to 16K floats) takes its four rows far apart: the output axis along which the input moves
  // farthest splits into one block per thread share (THREAD: each core reads one contiguous part of the input, the
  // part its share of the kernel that wrote it wrote, still in that core's caches) and each block into four
  // (UPCASTTOP): four streams through memory, as the bandwidth probe reads, where four neighbouring rows restart
  // their streams every row (AVX2 row sum of 4096x4096: 119 -> 158 GB/s, AVX-512 138 -> 152)
  if (r.src(0).op() != Ops::MUL || in.size() < 2) {
    int ra = 0, rv = vector_axis(fr, n, tile_lanes / 8, ra);
    if (rv < 0 || ra < 8) return sum_of_rows();
    int far = -1;
    sint far_stride = 0;
    const bool short_rows = n - fr == 1 && size(rv) <= 16384 && big_cpu_kernel(k);
    for (int a = 0; short_rows && a < fr; a++)
      for (auto& s : in)
        if (size(a) % 4 == 0 && st(s, a) && *st(s, a) > far_stride) far = a, far_stride = *st(s, a);
    if (far >= 0) {
      std::vector<Opt> pre;
      const int threads = k.opts.threads;
      for (int t = threads > 1 ? static_cast<int>(std::bit_ceil(4u * static_cast<unsigned>(threads))) : 0;
           t >= 2 && pre.empty(); t /= 2)
        if (size(far) % (4 * t) == 0) pre.push_back({OptOps::THREAD, far, t});
      const int moved = pre.empty() ? 0 : 1;  // the thread axis goes first: the others move one on
      if (auto opts = apply_tile(k, {{far + moved, 4}}, {{rv + moved, ra}}, OptOps::UPCASTTOP, pre))
        return CpuTile{.opts = *opts, .reduce_lanes = true};
    }
    std::vector<std::pair<int, int>> ups;
    for (int a = fr - 1; a >= 0 && ups.empty(); a--)  // the innermost output axis with four outputs
      if (pow2_amount(size(a), 4) == 4) ups.push_back({a, 4});
    if (auto opts = apply_tile(k, ups, {{rv, ra}})) return CpuTile{.opts = *opts, .reduce_lanes = true};
    return std::nullopt;
  }
  if (!big_cpu_kernel(k)) return std::nullopt;

  // 1. output lanes: a vector axis of the output (contiguous inputs: vector loads; broadcast ones: splats), the
  // outer lanes along axes the contiguous inputs repeat on, so one vector load serves every accumulator
  const bool sixteen = tile_lanes <= 128, conv = n - fr > 1;
  // (whole rows: a quarter of the budget, half of it with 16 registers, where the row then takes every accumulator)
  const int row_most = tile_lanes / (whole_rows ? (sixteen ? 2 : 4) : 8);
  int va = 0, v = vector_axis(0, fr, static_cast<int>(std::min<int64_t>(row_most, k.opts.upcast_max)), va);
  // a matmul whose contiguous input is packed in panels (pack_matmul_operand: its rows along the reduce one vector
  // axis of va lanes long)
  auto packed = [&](int vec, int lanes) {
    return std::all_of(in.begin(), in.end(),
                       [&](auto& s) { return !stride_is(st(s, vec), 1) || stride_is(st(s, n - 1), lanes); });
  };
  // With 16 registers, an unpacked matmul (one reduce axis) whose broadcast input stays in L2 (a 1x1 convolution's
  // weights: at most 256K floats) takes one vector register of lanes and half the budget: 8 x 8 accumulators leave
  // registers for the operands where 8 x 16 fill the register file and spill in the inner loop, and the extra reads
  // of the small input come from cache (AVX2: PaddleOCR's recognizer 56 -> 41 ms). A big one keeps 16 (below).
  bool small_broadcast = false;
  if (v >= 0 && sixteen && !conv && !whole_rows && va > tile_lanes / 16 && !packed(v, va)) {
    int64_t broadcast = 0;
    Shape full = k.full_shape();
    for (auto& s : in) {
      if (stride_is(st(s, v), 1)) continue;
      int64_t elems = 1;
      for (size_t d = 0; d < full.size(); d++)
        if (!stride_is(s[d], 0)) elems *= full[d].vmax();
      broadcast = std::max(broadcast, elems);
    }
    small_broadcast = broadcast <= (int64_t{1} << 18);
    if (small_broadcast) v = vector_axis(0, fr, tile_lanes / 16, va);
  }
  if (v >= 0) {
    auto [f, fa] = fill(0, fr, v, va, true);
    const int inner = va * fa;
    // the outer lanes: up to three axes along which the contiguous inputs repeat, the ones along which the broadcast
    // inputs move least first (their loads of one reduce step then share cache lines: a conv's neighbouring output
    // positions, not images 18 KB apart)
    std::vector<std::tuple<sint, int>> cands;  // (farthest step of a broadcast input, axis)
    for (int a = 0; a < fr; a++) {
      if (a == v || a == f || pow2_amount(size(a), 16) < 2) continue;
      if (!std::all_of(in.begin(), in.end(),
                       [&](auto& s) { return !stride_is(st(s, v), 1) || stride_is(st(s, a), 0); }))
        continue;
      sint far = 0;
      for (auto& s : in)
        if (!stride_is(st(s, v), 1)) far = std::max<sint>(far, st(s, a) ? std::abs(*st(s, a)) : sint(1) << 40);
      cands.emplace_back(far, a);
    }
    std::sort(cands.begin(), cands.end());
    // a target with 16 vector registers (AVX2, SSE) holds 8 accumulators of a power-of-two conv tile (a reduce over
    // a window: more than one reduce axis) without spilling, where 16 spill (on AVX2: conv2's forward 161 -> 65 ms,
    // conv3's 19 -> 9 ms); 12 where a small plane's axis takes 3, 5 or 6 lanes (below). Also 8 of a matmul whose
    // contiguous input is packed in panels (pack_matmul_operand: its rows along the reduce one vector axis long),
    // whose panel stays in L2 (AVX2 sgemm 1024 / 2048: 107 / 100 -> 152 / 155 GFLOP/s). An unpacked matmul keeps
    // 16: their spills cost less than reading B from memory twice as often (sgemm 1024: 115 against 62 GFLOP/s)
    const bool panels = packed(v, va);
    const int budget = !sixteen                                  ? tile_lanes
                       : conv                                    ? tile_lanes * 3 / 4
                       : panels || small_broadcast || whole_rows ? tile_lanes / 2
                                                                 : tile_lanes;
    // Up to three axes: a conv on small planes (6x6, 10x10: 2 lanes per row) takes 2x2 of a plane and 2 images, 16
    // accumulators where two axes gave 8 (AVX-512: conv3's input gradient 5.4 -> 4.8 ms, conv4's forward 3.7 -> 3.35).
    // With 16 registers an axis whose power of two is below 4 takes its largest divisor that fits instead (a 6-wide
    // plane 6: 12 accumulators; AVX2 conv4's forward 7.1 -> 6.6 ms, conv3's row sums 7.9 -> 7.4). The C compiler
    // gets such a tile's vectors in power-of-two parts (split_odd_vectors), and the axis that takes the most lanes
    // goes first (conv4's row sums: 6 rows, not 4 of the 8 columns: 9.6 -> 8.5 ms). With 32 registers the three axes
    // of 2 do better (conv3's row sums 3.7 ms against 4.2 with 5 lanes of a row)
    auto amount = [&](int a, int left) {
      const int most = std::min(16, left);
      int c = pow2_amount(size(a), static_cast<int>(std::bit_floor(static_cast<unsigned>(most))));
      for (int d = most; sixteen && c < 4 && d > c; d--)
        if (size(a) % d == 0) return d;
      return c;
    };
    std::vector<int> rest;
    for (auto& [far, a] : cands) rest.push_back(a);
    std::vector<std::pair<int, int>> outer;  // (axis, amount), nearest first
    int left = budget / inner, outer_lanes = 1;
    while (!rest.empty()) {
      size_t best = 0;
      for (size_t i = 1; sixteen && i < rest.size(); i++)
        if (amount(rest[i], left) > amount(rest[best], left)) best = i;
      const int a = rest[best], c = amount(a, left);
      rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(best));
      if (c < 2) continue;
      outer.push_back({a, c});
      outer_lanes *= c;
      left /= c;
      if (left < 2 || outer.size() == 3) break;
    }
    if (inner >= 4 && inner * outer_lanes >= 32) {  // else too few lanes to beat the scalar code
      std::vector<std::pair<int, int>> ups(outer.rbegin(), outer.rend());
      if (f >= 0) ups.push_back({f, fa});
      ups.push_back({v, va});
      // The reduce is not unrolled: unrolled by 2, each row of A (the broadcast input) loads its two steps as one
      // 2-lane vector, and the C compiler splats its lanes with register shuffles. On Intel's AVX-512 cores those
      // run on port 5, the second FMA unit's port: 16 shuffles a step against 32 FMAs held sgemm to ~65% of the peak
      // (Xeon model 207, 2048: 190-207 -> 305 GFLOP/s, OpenBLAS's SkylakeX kernels 306-314; the MNIST step's conv2
      // weight gradient 79 -> 55 ms). With 16 registers the shuffles' index register also spilled the accumulators
      // (AVX2 sgemm 221-231 -> 233-242 GFLOP/s; a GELU's backward fused into a 4096 x 384 x 1536 matmul 45 -> 25 ms).
      // One step loads each of A's rows as a broadcast from memory, a load port's work alone.
      // With 16 registers, a packed matmul's rows go in blocks whose part of A (512 KB) stays in L2 while the block
      // sweeps every panel of B: the block loop outermost (THREAD: the threads share it), where the panel loop
      // outermost read all of A from memory once per panel, twice as many panels as AVX-512's (AVX2 sgemm 4096:
      // 139-152 -> 170-180 GFLOP/s, 2048: 0.78 -> 0.87 of OpenBLAS; AVX-512 gains nothing at 1024 and 2048).
      // CPU_ROW_BLOCKS=0 turns it off.
      std::vector<Opt> pre;
      if (sixteen && panels && !outer.empty() && k.opts.threads > 1 && CPU_ROW_BLOCKS) {
        const auto [row, tile] = outer.front();
        const auto reduce = static_cast<uint64_t>(prod_range(k.full_shape(), fr, n));
        const sint rows = std::max<sint>(tile, (sint(1) << 17) >> (std::bit_width(reduce) - 1));  // 128K floats
        const sint blocks = size(row) / rows;
        if (blocks >= 2 && blocks <= 4096 && size(row) % (blocks * tile) == 0) {
          pre.push_back({OptOps::THREAD, row, static_cast<int>(blocks)});
          for (auto& u : ups) u.first++;
        }
      }
      if (auto opts = apply_tile(k, ups, {}, OptOps::UPCAST, pre)) return CpuTile{.opts = *opts, .reduce_lanes = false};
    }
  }

  // 2. reduce lanes (a dot product along contiguous rows, as the weight gradient of a conv): a vector accumulator
  // per output element, its lanes summed after the loop; a few outputs along axes some input broadcasts, so each
  // vector load serves several accumulators
  int ra = 0, rv = vector_axis(fr, n, 16, ra);
  if (rv < 0) return sum_of_rows();
  auto [rf, rfa] = fill(fr, n, rv, ra, false);
  if (ra * rfa < 4) return std::nullopt;
  std::vector<std::pair<int, int>> ups;
  std::vector<size_t> reused;  // the inputs whose loads an output axis chosen so far reuses
  for (int a = 0; a < fr && ups.size() < 2; a++) {
    int c = pow2_amount(size(a), 4);
    if (c < 4) continue;
    for (size_t i = 0; i < in.size(); i++)
      if (stride_is(st(in[i], a), 0) && std::find(reused.begin(), reused.end(), i) == reused.end()) {
        ups.push_back({a, c});
        reused.push_back(i);
        break;
      }
  }
  if (ups.empty()) return std::nullopt;
  // a single such axis takes more outputs, up to the lanes two axes of 4 would take (the first conv's weight
  // gradient, one input channel: 7.6 -> 6.0 ms)
  if (ups.size() == 1) ups[0].second = pow2_amount(size(ups[0].first), std::min(16, tile_lanes / (ra * rfa)));
  std::vector<std::pair<int, int>> unrolls;
  if (rf >= 0) unrolls.push_back({rf, rfa});
  unrolls.push_back({rv, ra});
  if (auto opts = apply_tile(k, ups, unrolls)) return CpuTile{.opts = *opts, .reduce_lanes = true};
  return std::nullopt;
}

namespace {
// a kernel's VIEWs with every Variable at its value in ctx
const PatternMatcher<UOp, const VarVals>& pm_substitute_vars() {
  static const PatternMatcher<UOp, const VarVals> pm{
      {op(Ops::VIEW).named("x"),
       [](M m, const VarVals& ctx) -> UOp {
         const UOp& x = m["x"];
         const ShapeTracker* st = get_st(x.arg());
         if (st == nullptr) return {};
         ShapeTracker at = *st;
         for (const auto& [name, val] : ctx) at = at.substitute_var(name, val);
         return at == *st ? UOp{} : x.replace(std::nullopt, std::nullopt, std::nullopt, st_arg(std::move(at)));
       }},
  };
  return pm;
}

// no opt's amount divides x: none of 2 .. 16 (the upcasts' powers of two, and the 3, 5, 6 ... a tile takes where
// no power of two fits)
bool no_small_divisor(int64_t x) {
  for (int64_t d = 2; d <= 16; d++)
    if (x % d == 0) return false;
  return true;
}
}  // namespace

std::optional<CpuTile> cpu_symbolic_tile(const Kernel& k) {
  if (k.opts.simd_lanes <= 0) return std::nullopt;
  const Shape& full = k.full_shape();
  std::vector<UOp> vars;  // the Variables of the symbolic sizes (in the views' args, not the AST's nodes)
  for (const sint& d : full)
    if (d.is_sym())
      for (const UOp& u : d.uop().toposort())
        if (u.op() == Ops::DEFINE_VAR && std::find(vars.begin(), vars.end(), u) == vars.end()) vars.push_back(u);
  if (vars.size() != 1) return std::nullopt;
  const VarArg& var = vars[0].arg<VarArg>();
  const int64_t lo = as_int(var.min), hi = as_int(var.max);
  // the stand-in's value: in the upper half of the range, every symbolic size above 16 with no divisor from 2 to
  // 16, so no opt takes those axes; a few thousand values tried at most (a size that is always even,
  // 4 * (v + 1), finds none)
  std::optional<int64_t> at;
  for (int64_t v = hi, tries = 0; v >= std::max(lo, hi / 2) && tries < 4096 && !at; v--, tries++) {
    bool ok = true;
    for (const sint& d : full)
      if (d.is_sym()) {
        const int64_t n = sym_infer(d, {{var.name, v}});
        ok = ok && n > 16 && no_small_divisor(n);
      }
    if (ok) at = v;
  }
  if (!at) return std::nullopt;
  const VarVals vals{{var.name, *at}};
  std::optional<CpuTile> tile = cpu_vector_tile(Kernel(graph_rewrite(k.ast, pm_substitute_vars(), vals), k.opts), true);
  if (!tile) return std::nullopt;
  // the tile's opts on the kernel itself: every symbolic size still a whole axis of its own, outside the upcasts
  Kernel t = k.copy();
  try {
    for (const Opt& o : tile->opts) t.apply_opt(o);
  } catch (const KernelOptError&) {
    return std::nullopt;
  }
  auto symbolic = [](const Shape& sh, int from, int to) {
    std::vector<sint> out;
    for (int a = from; a < to; a++)
      if (sh[static_cast<size_t>(a)].is_sym()) out.push_back(sh[static_cast<size_t>(a)]);
    return out;
  };
  const Shape& tf = t.full_shape();
  if (!symbolic(tf, t.first_upcast(), t.shape_len()).empty() ||
      symbolic(tf, 0, t.shape_len()) != symbolic(full, 0, k.shape_len()))
    return std::nullopt;
  return tile;
}

namespace {
// a kernel of 64K iterations or more (a symbolic size at its largest) on a CPU target whose C compiler vectorizes
// plain loops (the plain loops' gate)
bool plain_loop_kernel(const Kernel& k) {
  return CPU_VECTOR_TILE && k.opts.simd_lanes > 0 && k.opts.loop_vectorizer && !k.opts.has_local &&
         prod_range(k.full_shape(), 0, k.shape_len()).vmax() >= (int64_t(1) << 16);
}
}  // namespace

bool cpu_vector_loop(const Kernel& k) {
  if (!plain_loop_kernel(k)) return false;
  auto is_float = [](const UOp& u) { return u.dtype() == dtypes::float32 || u.dtype() == dtypes::float64; };
  static constexpr OpSet transcendental{Ops::EXP2, Ops::LOG2, Ops::SIN};
  bool any = false;
  const std::vector<UOp> topo = k.ast.toposort();
  for (const UOp& u : topo) {
    if (!transcendental.has(u.op())) continue;
    if (!is_float(u)) return false;
    any = true;
  }
  const int n = k.shape_len();
  const bool random_bits = std::any_of(topo.begin(), topo.end(), [](const UOp& u) { return u.op() == Ops::THREEFRY; });
  if (k.reduceops.empty() && n > 0 && (random_bits || !any)) {
    // an elementwise kernel (random bits, or no transcendental) whose every buffer is stored at stride 1 and read at
    // stride 1 or 0 along its innermost axis, with gated loads, as a plain loop:
    // - random bits (THREEFRY, Tensor.rand's counters hashed) with loads gated along outer axes only (rand's two
    //   halves concatenated): clang vectorizes the loop, the gates the same along it, where the upcast form ran the 20
    //   rounds lane by lane (a GPT's dropout masks, 13 kernels a step: AVX-512 67.6 -> 14.6 ms, AVX2 85 -> 32 ms); one
    //   without gates keeps the upcast form, which clang vectorizes as well as the loop
    // - one load gated (a pad's copy: a conv's padded input) of 1M elements at most: the loop vectorizes into masked
    //   vector loads, where the upcast form loads lane by lane (the recognizer's pad copies ~30 -> ~190 GB/s). A bigger
    //   copy streams from memory, where the upcast form's several streams a thread read faster, and a
    //   concatenation's several gated loads along the row don't vectorize (clang 14)
    const int last = n - 1;
    int gated = 0, gated_along = 0;  // inputs gated anywhere, and along the innermost axis
    for (size_t i = 0; i < k.bufs.size(); i++) {
      const bool store = k.bufs[i].op() == Ops::STORE, along = axis_is_masked(k.sts[i], last);
      std::optional<sint> s = real_strides(k.sts[i], true)[static_cast<size_t>(last)];
      if (!s || !(*s == sint(1) || (!store && *s == sint(0))) || (store && along)) return false;
      gated += along || (k.bufs[i].op() == Ops::LOAD && has_mask(k.sts[i]));
      gated_along += along;
    }
    if (random_bits) return gated > 0 && gated_along == 0;
    const sint& row = k.full_shape()[static_cast<size_t>(last)];
    return gated == 1 && row.is_int() && row.as_int() >= 16 && prod_range(k.full_shape(), 0, n) <= (int64_t(1) << 20);
  }
  if (!any || k.reduceops.empty()) return any;
  // a sum: the innermost loop is its last reduce axis, along which every load reads contiguously or not at all
  if (k.first_reduce() >= n) return false;
  for (const UOp& r : k.reduceops)
    if (r.arg<ReduceArg>().op != Ops::ADD || !is_float(r)) return false;
  for (size_t i = 0; i < k.bufs.size(); i++) {
    if (k.bufs[i].op() != Ops::LOAD) continue;
    std::optional<sint> s = real_strides(k.sts[i])[static_cast<size_t>(n - 1)];
    if (!s || (*s != sint(0) && *s != sint(1))) return false;
  }
  return true;
}

std::optional<std::vector<Opt>> cpu_window_loop(const Kernel& k) {
  const int n = k.shape_len(), fr = k.first_reduce();
  if (!plain_loop_kernel(k) || k.reduceops.empty() || fr == 0 || fr >= n || k.upcasted > 0) return std::nullopt;
  for (const UOp& r : k.reduceops)
    if (r.arg<ReduceArg>().op != Ops::ADD || r.dtype() != dtypes::float32) return std::nullopt;
  int64_t window = 1;
  for (int a = fr; a < n; a++) {
    const sint& s = k.full_shape()[static_cast<size_t>(a)];
    if (!s.is_int()) return std::nullopt;
    window *= s.as_int();
  }
  const sint& row = k.full_shape()[static_cast<size_t>(fr - 1)];
  if (window > 64 || !row.is_int() || row.as_int() < 16) return std::nullopt;
  // the row: stored at stride 1, and read at stride 1 or 0 by every load (a constant's view is one of 0)
  for (size_t i = 0; i < k.bufs.size(); i++) {
    std::optional<sint> s = real_strides(k.sts[i])[static_cast<size_t>(fr - 1)];
    if (!s || (*s != sint(1) && (*s != sint(0) || k.bufs[i].op() == Ops::STORE))) return std::nullopt;
  }
  Kernel u = k.copy();
  try {
    for (int a = n - 1; a >= fr; a--) u.apply_opt({OptOps::UNROLL, a - fr, 0});
  } catch (const KernelOptError&) {
    return std::nullopt;
  }
  return u.applied_opts;
}

void cpu_row_upcast(Kernel& k) {
  if (CPU_ROW_UPCAST) {
    auto out_strides = real_strides(k.sts[0]);
    sint lanes = prod_range(k.full_shape(), k.first_upcast(), k.shape_len());
    // the row: the axis of stride 1, or the one right outside an upcast block of the row (a row of 12 upcast by 3
    // takes 4 more: the whole row per iteration)
    bool upcast_row = k.upcasted > 0;
    for (int a = k.first_upcast(), n = k.shape_len(); a < n; a++) {
      auto s = out_strides[static_cast<size_t>(a)];
      upcast_row &= s && *s == prod_range(k.full_shape(), a + 1, n);
    }
    for (int a = k.first_reduce() - 1; a >= 0; a--) {
      auto s = out_strides[static_cast<size_t>(a)];
      if (!s || (*s != 1 && !(upcast_row && *s == lanes))) continue;
      for (int amt : {4, 5, 3, 2})
        if (k.full_shape()[static_cast<size_t>(a)] % amt == 0 && lanes * amt <= 128) {
          k.apply_opt({OptOps::UPCAST, a, amt});
          break;
        }
      break;
    }
  }
}

std::optional<std::vector<Opt>> cpu_loop_order(const Kernel& k) {
  if (CPU_LOOP_ORDER) {
    Kernel ordered = k.copy();
    try {
      order_global_loops(ordered);
      return ordered.applied_opts;
    } catch (const KernelOptError&) {
    }
  }
  return std::nullopt;
}

}  // namespace tg
