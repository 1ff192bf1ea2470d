#include "tg/runtime/cpu_kernelize.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "tg/helpers/knobs.h"
#include "tg/renderer/renderer.h"
#include "tg/runtime/device.h"
#include "tg/shape/real_strides.h"
#include "tg/shape/uop_shape.h"

namespace tg {

namespace {

const ShapeTracker& st_of(const UOp& u) {
  const ShapeTracker* st = uop_st(u);
  TG_ASSERT(st != nullptr, "UOp ", u.op(), " has no ShapeTracker");
  return *st;
}
UOp make_contiguous(const UOp& u) { return UOp::make(Ops::CONTIGUOUS, u.dtype(), {u}); }

// a copy of the operand a (of shape xs, a view that broadcasts along the axes of no real stride) with the axes
// [lo, hi] innermost, that copy's broadcast axes of size 1: the copy, and its view back in xs's order. nullopt where a
// is masked or the copy would be bigger than what it views (a conv's overlapping windows)
std::optional<std::pair<UOp, ShapeTracker>> copy_inner(const UOp& a, const Shape& xs, int64_t lo, int64_t hi) {
  const auto real = real_strides(st_of(a));
  Mask keep;
  Shape kept;
  for (size_t d = 0; d < xs.size(); d++) {
    kept.push_back(real[d] == sint(0) ? sint(1) : xs[d]);
    keep.push_back({0, kept.back()});
  }
  const Shape base = uop_shape(a.src(0));
  if (has_mask(st_of(a)) || !all_int(base) || prod(kept) > prod(base)) return std::nullopt;
  std::vector<int64_t> perm, inv(xs.size());
  for (int64_t d = 0; d < static_cast<int64_t>(xs.size()); d++)
    if (d < lo || d > hi) perm.push_back(d);
  for (int64_t d = lo; d <= hi; d++) perm.push_back(d);
  for (size_t d = 0; d < perm.size(); d++) inv[static_cast<size_t>(perm[d])] = static_cast<int64_t>(d);
  const UOp copy = make_contiguous(uop_permute(uop_shrink(a, keep), perm));
  return std::pair{copy, ShapeTracker::from_shape(uop_shape(copy)).permute(inv).expand(xs)};
}

// The panel width pack_matmul_operand packs a matmul's B into on this device: the lanes of a CPU tile's vector axis
// (codegen/cpu_tiles.h: 32 with AVX-512, 16 with AVX2), 0 where no tile is or CPU_PACK=0
int64_t pack_width(const std::optional<std::string>& device) {
  if (!device || !CPU_PACK || !CPU_VECTOR_TILE) return 0;
  return cpu_tile_lanes(*Device::get(*device).renderer) / 8;
}

// A big matmul on a CPU (x @ w, w row-major K x N): each register tile reads P columns of w, P*4 bytes of each of K
// rows N*4 bytes apart. Those rows fall on a few cache sets (N*4 a multiple of 4 KB: one set of L1, N/16 of L2's),
// so a tile's panel of w leaves the caches before the next tile that reuses it, and every tile of rows reads w again
// from memory. Copying w once into panels (N/P, K, P), each tile's columns contiguous along K, keeps a panel in L2
// for the whole sweep over x's rows: what BLAS calls packing (one core, AVX-512, standalone C: 1024^2 79 -> 185
// GFLOP/s, 2048^2 53 -> 147; the copy 0.1-0.2 ms at 1024, 5-9 ms at 4096). Only for a B at least 32 panels wide
// with AVX-512 (N >= 1024: at 512 it gains less than the extra kernel costs), 16 with AVX2 (N >= 256, below) and
// reused by at least 512 outputs (the rows of x), so that the copy pays for itself; the
// packed operand has stride P along K, so the rule doesn't fire again.
//
// B may also be stored transposed (x @ w.T with w of (N, K): a linear layer's weight), or its reduce may run along
// the rows of both operands (a weight's gradient, x.T @ g): then the tile would read B a column at a time, and the
// copy into panels is a transpose. The panel axis is the output's innermost axis (where the tile's lanes store), and
// a reduce over several axes that merge (a gradient summed over batch and positions) is one axis here.
UOp pack_matmul_operand(M m) {
  UOp reduce = m["reduce"], x = m["x"];
  std::vector<int64_t> axes = reduce.arg<ReduceArg>().axes;
  if (reduce.arg<ReduceArg>().op != Ops::ADD || x.dtype() != dtypes::float32 || axes.empty()) return {};
  const int64_t P = pack_width(uop_device(reduce));
  if (P == 0) return {};
  Shape xs = uop_shape(x);
  if (!all_int(xs)) return {};  // a symbolic shape is left as it is
  if (axes.size() > 1) {  // adjacent reduce axes merged into the first (a view of both operands; strides that don't
                          // merge give no real stride below, and the rule passes)
    std::sort(axes.begin(), axes.end());
    for (size_t k = 1; k < axes.size(); k++)
      if (axes[k] != axes[k - 1] + 1) return {};
    Shape merged(xs.begin(), xs.begin() + axes[0]);
    merged.push_back(prod(Shape(xs.begin() + axes[0], xs.begin() + axes.back() + 1)));
    merged.insert(merged.end(), xs.begin() + axes.back() + 1, xs.end());
    // An operand whose reduce axes don't merge in its view (attention's output, (B, H, T, D) read as (B*T, H*D) by
    // the projection's weight gradient) is copied first with them innermost, where the copy is no bigger than what
    // it views (not a conv's overlapping windows): its rows then run along the reduce as in x @ w, where a tile read
    // 4 floats of a row and the next step's a row further on (AVX2, a GPT's 384x384 projection over 4096 positions
    // 25 -> 9 ms)
    auto merge = [&](const UOp& s) {  // a view stays a view (the rule below reads its strides)
      if (s.op() != Ops::VIEW) return uop_reshape(s, merged);
      UOp v = uop_view(s.src(0), st_of(s).reshape(merged));
      if (real_strides(st_of(v))[static_cast<size_t>(axes.front())]) return v;
      auto rows = copy_inner(s, xs, axes.front(), axes.back());
      return rows ? uop_view(rows->first, rows->second.reshape(merged)) : v;
    };
    x = x.replace(std::nullopt, std::nullopt, std::vector<UOp>{merge(x.src(0)), merge(x.src(1))});
    xs = merged;
    axes = {axes[0]};
  }
  const size_t r = static_cast<size_t>(axes[0]);
  if (xs[r] < 64) return {};
  std::optional<size_t> inner;  // the output's innermost axis
  for (size_t a = 0; a < xs.size(); a++)
    if (a != r && xs[a] != sint(1)) inner = a;
  if (!inner) return {};
  for (size_t i = 0; i < 2; i++) {
    UOp o = x.src(i);
    const UOp& other = x.src(1 - i);
    if (o.op() != Ops::VIEW || has_mask(st_of(o))) continue;
    // an operand computed for this matmul (a quantized weight's dequantization, a cast, or a copy made for it) is
    // written once anyway: written into panels instead, it costs no more, so a few rows pay for it (a prefill chunk of
    // 64-256 tokens against TinyLlama's weights). A copy's (CONTIGUOUS's) source is packed in its place.
    const UOp& base = o.src(0);
    const bool computed = base.op() == Ops::CONTIGUOUS || base.op() == Ops::CAST || GroupOp::ALU.has(base.op());
    if (base.op() == Ops::CONTIGUOUS) o = o.replace(std::nullopt, std::nullopt, std::vector<UOp>{base.src(0)});
    auto real = real_strides(st_of(o)), oreal = real_strides(st_of(other));
    if (!real[r]) continue;
    sint reuse = 1;
    for (size_t a = 0; a < xs.size(); a++)
      if (real[a] == sint(0)) reuse *= xs[a];
    std::optional<size_t> j;  // o's column axis: the output's innermost, along which the other operand is broadcast
    // Columns that no 8 lanes divide (a classifier's 6625 characters) leave the tile no vector axis at all: their
    // panels are padded with zero columns to a multiple of P, and the output's padding shrunk away after the reduce
    // (PaddleOCR's recognizer's head, 40 x 120 x 6625: 1.39 -> 0.31 ms, and 0.38 ms for the copy)
    const sint N = xs[*inner];
    const bool ragged = N % P != 0 && N % 8 != 0;
    const sint NP = ragged ? ceildiv(N, sint(P)) * P : N;
    if (real[*inner] && *real[*inner] != sint(0) && oreal[*inner] == sint(0) && (N % P == 0 || ragged)) j = inner;
    // a row-major B whose rows are far apart (the case above), a B read across its rows (transposed), or a reduce
    // long enough to run in blocks (below): each block's panel then stays in L2 for the tiles that reuse it. Such a
    // reduce pays for the copy with fewer rows (a 384-wide layer's weight gradient over 4096 positions: 3x faster)
    // (blocks as the split below makes them: a reduce of 5632 isn't split, and so packing it again and again, each
    // time on one more axis of 1, ran out of memory)
    const sint kb = static_cast<int64_t>(CPU_KSPLIT);
    const bool blocks = kb > 0 && xs[r] >= 4 * kb && xs[r] % kb == 0;
    if (!j) continue;
    const bool in_panels = xs[*j] == sint(P) && *real[*j] == sint(1) && *real[r] == sint(P);  // packed already
    const int64_t min_reuse = computed || ragged ? 16 : blocks ? 64 : 512;
    // With 16 vector registers (P = 16) the unpacked tile spills (codegen/cpu_tiles.cpp): a B from rows 1 KB apart is
    // packed (AVX2: sgemm 512 1.75 against 2.5 ms; the input gradients of a GPT's 384-wide layers, dY @ W with W's rows
    // 384 or 1536 floats long, 82-128 -> ~225 GFLOP/s)
    const int64_t far_rows = P <= 16 ? 16 * P : 32 * P;
    if (in_panels || reuse < min_reuse || !(*real[r] >= far_rows || *real[*j] != sint(1) || blocks || computed))
      continue;
    Mask keep, pad_j, first_j;  // one copy of the operand: its broadcast axes shrunk to 1; padded along j to NP
    Shape shrunk, xs_p = xs;
    xs_p[*j] = NP;
    for (size_t a = 0; a < xs.size(); a++) {
      shrunk.push_back(real[a] == sint(0) ? sint(1) : xs[a]);
      keep.push_back({0, shrunk.back()});
      pad_j.push_back({0, a == *j ? NP - N : sint(0)});
      first_j.push_back({0, a == *j ? sint(1) : xs[a]});
    }
    auto split_j = [&](const Shape& s) {  // s with the column axis split into (NP/P, P)
      Shape out(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(*j));
      out.push_back(NP / P);
      out.push_back(P);
      out.insert(out.end(), s.begin() + static_cast<std::ptrdiff_t>(*j) + 1, s.end());
      return out;
    };
    const Shape split = split_j(shrunk), xsplit = split_j(xs);
    // A, the operand the tile broadcasts, read across its rows (a weight's gradient x.T @ g: each step of the reduce
    // a row of x, its few floats of a tile's rows at one end of a line and the next step's a row further on, beyond
    // what the prefetchers follow): copied once, transposed, so that each of its rows in the tile runs along the
    // reduce as in x @ w (A's rows then re-read from cache by every panel of B)
    auto a_rows = [&](const UOp& a) {
      if (a.op() != Ops::VIEW) return a;
      auto ar = real_strides(st_of(a));
      bool across = false;
      for (size_t d = 0; d < xs.size(); d++) across |= d != r && ar[d] == sint(1) && xs[d] != sint(1);
      if (!across || !ar[r] || *ar[r] < 64 || NP / P < 4) return a;
      auto rows = copy_inner(a, xs, static_cast<int64_t>(r), static_cast<int64_t>(r));
      return rows ? uop_view(rows->first, rows->second) : a;
    };
    const int64_t ri = static_cast<int64_t>(r > *j ? r + 1 : r), lane = static_cast<int64_t>(*j) + 1;
    std::vector<int64_t> perm, inv(split.size());
    for (int64_t d = 0; d < static_cast<int64_t>(split.size()); d++)
      if (d != ri && d != lane) perm.push_back(d);
    perm.push_back(ri);
    perm.push_back(lane);
    for (size_t d = 0; d < perm.size(); d++) inv[static_cast<size_t>(perm[d])] = static_cast<int64_t>(d);
    // the reduce runs on x's shape with the column axis split (xsplit): the packed operand is one strided view of its
    // panels there, which the kernel's tile upcasts as its vector axis
    UOp packed = make_contiguous(uop_permute(uop_reshape(uop_pad(uop_shrink(o, keep), pad_j), split), perm));
    std::vector<UOp> srcs = x.src();
    srcs[i] = uop_expand(uop_permute(packed, inv), xsplit);
    // (the other operand, broadcast along j, broadcast along the padded columns too: a padded view would mask its
    // loads)
    srcs[1 - i] = uop_reshape(ragged ? uop_expand(uop_shrink(other, first_j), xs_p) : a_rows(other), xsplit);
    // the reduce's result, its padded columns dropped
    Shape out_p = uop_shape(reduce);
    out_p[*j] = NP;
    Mask out_keep;
    for (size_t a = 0; a < out_p.size(); a++) out_keep.push_back({0, a == *j ? N : out_p[a]});
    auto unpadded = [&](const UOp& r) { return ragged ? uop_shrink(uop_reshape(r, out_p), out_keep) : r; };
    // a reduce of 4096 or more in blocks of 1024 (CPU_KSPLIT; 0: whole), each block's sums realized and added by one
    // streaming kernel after: a tile's rows of A and its B panel for one block take a quarter of L2 where the whole
    // reduce's evicted the panel it was reused against (sgemm 4096: 308 -> 341 GFLOP/s with AVX-512, 164 -> 177
    // with AVX2; 2048 unchanged; blocks of 512 made 2048 slower). The sums' kernel reads them at memory speed, where
    // an add fused into the last block's stores waited on every load (+20 ms against +5 at 4096)
    if (blocks) {
      std::optional<UOp> sum;
      Mask block;  // the whole of xsplit but one block of the reduce axis
      for (sint d : xsplit) block.push_back({0, d});
      for (sint k0 = 0; k0 < xs[r]; k0 += kb) {
        block[static_cast<size_t>(ri)] = {k0, k0 + kb};
        const UOp part = uop_r(x.replace(std::nullopt, std::nullopt,
                                         std::vector<UOp>{uop_shrink(srcs[0], block), uop_shrink(srcs[1], block)}),
                               Ops::ADD, {ri});
        sum = sum ? *sum + make_contiguous(part) : make_contiguous(part);
      }
      return uop_reshape(unpadded(*sum), uop_shape(reduce));
    }
    return uop_reshape(unpadded(uop_r(x.replace(std::nullopt, std::nullopt, srcs), Ops::ADD, {ri})), uop_shape(reduce));
  }
  return {};
}

}  // namespace

const PatternMatcher<UOp>& cpu_kernelize_matcher() {
  static const PatternMatcher<UOp> pm{
      {op(Ops::REDUCE_AXIS, {op(Ops::MUL).named("x")}).named("reduce"), pack_matmul_operand}};
  return pm;
}

}  // namespace tg
