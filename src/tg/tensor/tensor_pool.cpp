// The Tensor's [nn] group, part 2: processing and linalg. Every sliding-window op (conv2d, the pools, cumsum) is a
// view: _pool turns the trailing dims into (output positions..., kernel positions...) with movement ops only, and a
// reduce over the kernel dims finishes the job (tinygrad's tensor.py).
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "tg/gradient/gradient.h"
#include "tg/helpers/knobs.h"
#include "tg/renderer/renderer.h"
#include "tg/runtime/device.h"
#include "tg/shape/uop_shape.h"
#include "tg/tensor/tensor_internal.h"
#include "tg/tensor/tensor_nn_internal.h"

namespace tg {

using namespace nn_detail;

namespace {

// the (before, after) pairs of a flat torch-order padding list, first dim first (tinygrad's _flat_to_grouped)
std::vector<std::pair<int64_t, int64_t>> flat_to_grouped(const std::vector<int64_t>& pads) {
  std::vector<std::pair<int64_t, int64_t>> g;
  for (size_t k = pads.size() / 2; k-- > 0;) g.push_back({pads[2 * k], pads[2 * k + 1]});
  return g;
}

// ceil_mode: more padding after each dim, so that a last window that starts inside the input (or its padding
// before) is kept (relationship 15 of arxiv.org/pdf/1603.07285, section 5.1)
std::vector<int64_t> apply_ceil_mode(std::vector<int64_t> pads, const Shape& k_, const std::vector<int64_t>& s_,
                                     const std::vector<int64_t>& d_, const Shape& i_) {
  auto grouped = flat_to_grouped(pads);
  for (size_t dim = 0; dim < k_.size(); dim++) {
    auto [pB, pA] = grouped[dim];
    sint i = i_[dim], k = k_[dim], s = s_[dim], d = d_[dim];
    TG_CHECK(s > 0, "stride must be positive, got stride ", py_tuple(s_));  // (a kernel size of 0 is its default)
    sint o = ceildiv(i + pB + pA - (d * (k - 1) + 1), s) + 1;
    pads[pads.size() - 1 - 2 * dim] +=
        s * (o - 1) + (d * (k - 1) + 1) - (i + pB + pA) - std::max<sint>(s * (o - 1) - (pB + i - 1), 0);
  }
  return pads;
}

Shape trailing(const Shape& s, size_t n) { return Shape(s.end() - static_cast<std::ptrdiff_t>(n), s.end()); }
std::vector<int64_t> last_axes(size_t n) {
  std::vector<int64_t> axis;
  for (int64_t i = -static_cast<int64_t>(n); i < 0; i++) axis.push_back(i);
  return axis;
}

}  // namespace

// (..., *i_) -> (..., *o_, *k_): every window of the trailing dims, stride and dilation applied
Tensor Tensor::pool(const Shape& k_, std::vector<int64_t> stride, std::vector<int64_t> dilation) const {
  Shape s = shape();
  size_t nk = k_.size();
  TG_CHECK_AS(AssertionError, s.size() >= nk, "can't pool ", shape_str(s), " with ", shape_str(k_));
  std::vector<int64_t> s_ = as_tuple(stride, nk, "stride"), d_ = as_tuple(dilation, nk, "dilation");
  size_t nn = s.size() - nk;
  Shape i_ = trailing(s, nk), o_;
  for (size_t j = 0; j < nk; j++) {
    TG_CHECK(s_[j] > 0 && d_[j] > 0, "stride and dilation must be positive, got stride ", py_tuple(s_), " dilation ",
             py_tuple(d_));
    TG_CHECK_AS(AssertionError, d_[j] * (k_[j] - 1) + 1 <= i_[j],
                "kernel size cannot be greater than actual input size: kernel ", shape_str(k_), " (dilation ",
                py_tuple(d_), ") on input ", shape_str(s));
    o_.push_back(ceildiv(i_[j] - d_[j] * (k_[j] - 1), s_[j]));
  }
  auto keep = [&](Mask m) {  // the leading (not pooled) dims stay whole
    Mask full;
    for (size_t j = 0; j < nn; j++) full.push_back({0, s[j]});
    full.insert(full.end(), m.begin(), m.end());
    return full;
  };
  auto lead = [&](Shape tail) {
    Shape r(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(nn));
    r.insert(r.end(), tail.begin(), tail.end());
    return r;
  };
  std::vector<int64_t> order;
  for (size_t j = 0; j < nn; j++) order.push_back(static_cast<int64_t>(j));
  bool overlapping = false;
  for (size_t j = 0; j < nk; j++) overlapping |= k_[j] > s_[j] || d_[j] != 1;
  if (overlapping) {
    // repeat the input so windows of (i*f + d) elements, read k times, line up without padding; f doubles the
    // input when the strided windows would run past it
    std::vector<int64_t> f_, reps(nn, 1);
    for (size_t j = 0; j < nk; j++) {
      // (a kernel of 0 fits a 0-size dim; the reference divides by the size here: ZeroDivisionError)
      TG_CHECK(i_[j] > 0, "can't pool a 0-size dim with overlapping or dilated windows: ", shape_str(s), " kernel ",
               shape_str(k_));
      f_.push_back(1 + (o_[j] * s_[j] > i_[j] - d_[j] * (k_[j] - 1) ? 1 : 0));
      int64_t w = 0;  // k windows of (i*f + d) elements: for a 2^32 dim (a cumsum's pool) more than an int64 holds
      TG_CHECK_AS(ValueError, !__builtin_mul_overflow(int64_t(k_[j]), int64_t(i_[j] * f_[j] + d_[j]), &w), "pool of ",
                  shape_str(s), " with kernel ", shape_str(k_), " has too many elements");
      reps.push_back(ceildiv(w, i_[j]));
    }
    Tensor x = repeat(reps);
    Mask m1, m2, m3;
    Shape r1, r2, r3;
    for (size_t j = 0; j < nk; j++) {
      sint w = i_[j] * f_[j] + d_[j];
      m1.push_back({0, k_[j] * w});
      r1.insert(r1.end(), {k_[j], w});  // dilation: row t of a window starts t*(i*f+d) later, i.e. t*d further
      m2.insert(m2.end(), {{0, k_[j]}, {0, o_[j] * s_[j]}});
      r2.insert(r2.end(), {k_[j], o_[j], s_[j]});  // stride: every s-th start
      m3.insert(m3.end(), {{0, k_[j]}, {0, o_[j]}, {0, 1}});
      r3.insert(r3.end(), {k_[j], o_[j]});
    }
    x = x.shrink(keep(m1)).reshape(lead(r1));
    x = x.shrink(keep(m2)).reshape(lead(r2));
    x = x.shrink(keep(m3)).reshape(lead(r3));
    for (size_t j = 0; j < nk; j++) order.push_back(static_cast<int64_t>(nn + 2 * j + 1));
    for (size_t j = 0; j < nk; j++) order.push_back(static_cast<int64_t>(nn + 2 * j));
    return x.permute(order);
  }
  // windows that don't overlap: pad to o*s, split each dim into (o, s) and keep the first k of every s
  Mask pad_m(nn, {0, 0}), m1, m2;
  Shape r1;
  for (size_t j = 0; j < nk; j++) {
    pad_m.push_back({0, std::max<sint>(0, o_[j] * s_[j] - i_[j])});
    m1.push_back({0, o_[j] * s_[j]});
    r1.insert(r1.end(), {o_[j], s_[j]});
    m2.insert(m2.end(), {{0, o_[j]}, {0, k_[j]}});
  }
  Tensor x = pad(pad_m);
  Shape padded = x.shape();
  Mask sh;
  for (size_t j = 0; j < nn; j++) sh.push_back({0, padded[j]});
  sh.insert(sh.end(), m1.begin(), m1.end());
  x = x.shrink(sh).reshape(lead(r1)).shrink(keep(m2));
  for (size_t j = 0; j < nk; j++) order.push_back(static_cast<int64_t>(nn + 2 * j));
  for (size_t j = 0; j < nk; j++) order.push_back(static_cast<int64_t>(nn + 2 * j + 1));
  return x.permute(order);
}

// *** convolutions ***

namespace {

// (bs, c, *spatial) with stride-1 zeros between the elements of each spatial dim: k -> (k-1)*s+1
Tensor spread_by_stride(const Tensor& x, const std::vector<int64_t>& stride) {
  if (std::none_of(stride.begin(), stride.end(), [](int64_t s) { return s > 1; })) return x;
  // (k) -> (k, 1) -> pad to (k, s) -> (k*s) -> the last s-1 zeros go
  Shape xs = x.shape(), r{xs[0], xs[1]}, spread{xs[0], xs[1]};
  size_t nd = stride.size();
  Mask p(2 + 2 * nd, {0, 0}), sh{{0, xs[0]}, {0, xs[1]}};
  for (size_t i = 0; i < nd; i++) {
    sint k = xs[2 + i], s = stride[i];
    r.insert(r.end(), {k, 1});
    p[2 + 2 * i + 1] = {0, s - 1};
    spread.push_back(k * s);
    sh.push_back({0, k * s - (s - 1)});
  }
  return x.reshape(r).pad(p).reshape(spread).shrink(sh);
}

// a conv weight (cin, cout/groups, *HW) as the conv2d weight of the transposed conv: (cout, cin/groups, *HW), the
// kernel flipped
Tensor transposed_conv_weight(const Tensor& weight, sint groups) {
  Shape ws = weight.shape(), us{groups, ws[0] / groups};
  us.insert(us.end(), ws.begin() + 1, ws.end());
  std::vector<int64_t> spatial;
  for (size_t i = 0; i + 2 < ws.size(); i++) spatial.push_back(static_cast<int64_t>(3 + i));
  return weight.reshape(us).transpose(1, 2).flip(spatial).flatten(0, 1);
}

// t stored with its dim `dim` last (contiguous in memory) and viewed back in its own dim order: channels-last is
// dim 1 of (bs, c, *spatial); a conv weight with its output channels last is dim 0 of (cout, cin, *HW)
Tensor stored_dim_last(const Tensor& t, int64_t dim) {
  std::vector<int64_t> to, back;
  for (int64_t i = 0; i < t.ndim(); i++)
    if (i != dim) to.push_back(i);
  to.push_back(dim);
  for (int64_t i = 0; i < t.ndim(); i++) back.push_back(i == dim ? t.ndim() - 1 : i - (i > dim));
  return t.permute(to).contiguous().permute(back);
}

// whether a device takes the CPU vector tiles (RenderOpts::simd_lanes); on a tuple of devices, its first decides
bool cpu_tiles_device(const std::string& device) {  // (CPU_VECTOR_TILE=0: no tiles, so no layouts for them)
  const std::string first = is_multi_device(device) ? device_names(device).at(0) : device;
  return CPU_VECTOR_TILE && Device::get(first).renderer->simd_lanes > 0;
}
// whether a conv (output shape os, weight shape ws) is big enough for the CPU vector tiles (2^20 multiply-adds,
// codegen/cpu_tiles.h) and on a device that takes them: such convs take layouts that suit the tiles; elsewhere
// (small convs, GPUs) the same graphs without copies
bool tiled_conv(const Shape& os, const Shape& ws, const std::string& device) {
  return prod(os) * prod(Shape(ws.begin() + 1, ws.end())) >= (sint(1) << 20) && cpu_tiles_device(device);
}
// whether a conv is a sum over a small window that the CPU runs as a plain loop along its output rows
// (cpu_window_loop, codegen/cpu_tiles.h: 64K multiply-adds or more, a window of at most 64, a depthwise conv's), its
// rows read at stride 1 and 16 or more long: it too reads its padded input from memory, so its rows load unmasked
bool window_conv(const Shape& os, const Shape& ws, const std::vector<int64_t>& stride, const std::string& device) {
  sint window = prod(Shape(ws.begin() + 1, ws.end()));
  return window <= 64 && prod(os) * window >= (sint(1) << 16) && stride.back() == 1 && os.back() >= 16 &&
         cpu_tiles_device(device);
}
// the tiles' lanes run along rows of 8 or more; shorter rows take them along channels
bool short_rows(sint row) { return row % 8 != 0; }

bool all_ones(const std::vector<int64_t>& v) {  // a stride or dilation of 1 in every dim
  return std::all_of(v.begin(), v.end(), [](int64_t s) { return s == 1; });
}
// a conv's output plus its bias, one per output channel (dim 1) over nd spatial dims
Tensor add_channel_bias(const Tensor& ret, const std::optional<Tensor>& bias, size_t nd) {
  if (!bias) return ret;
  Shape bshape{1, -1};
  bshape.insert(bshape.end(), nd, 1);
  return ret.add(bias->reshape(bshape));
}

// whether the input gradient of a tiled 2-D conv with lanes along the channels goes a kernel row at a time
// (ConvGrad): stride and dilation 1, one group, a kernel of more than one row, and the row sums' buffer (KH times
// the input gradient's size, less its padded rows) at most 32 MiB, so its extra pass stays cheaper than the rows of
// padding it skips
bool rows_split(bool tiled_cl, const Shape& is, const Shape& ws, const Shape& os, sint groups,
                const std::vector<int64_t>& stride, const std::vector<int64_t>& dilation) {
  return tiled_cl && ws.size() == 4 && groups == 1 && all_ones(stride) && all_ones(dilation) && ws[2] > 1 &&
         ws[2] * is[0] * ws[1] * os[2] * is[3] * 4 <= (sint(32) << 20);
}

}  // namespace

// the derivatives of conv2d for its padded input (node.src(1)) and its weight (node.src(2)), taken here rather than
// through the windows' movement ops (which scatter the input's gradient back with div/mod indexing):
// - the input's is the transposed convolution of the output gradient: spread by the stride and padded by the dilated
//   kernel (and up to the input's size), realized so that the conv kernel loads it unmasked and gets the dense CPU tile
// - the weight's sums the output gradient times the input's windows over the batch (in chunks whose inputs stay in
//   cache: at most 1 MiB) and the output positions, then over the chunks
// The CPU tiles' lanes run along the input's rows, or along channels where there are 16 or more of them (two
// registers of lanes for 32) or the rows are too short for 8 lanes: the weight of the transposed conv is then stored
// with its output channels last, and the weight gradient reads a channels-last copy of the input (the output
// gradient it broadcasts across those lanes, read as it is: a channels-last copy of it too cost more than it saved,
// AVX-512 conv3/conv4 forward+backward 12.2/14.1 -> 11.6/13.2 ms without). Measured on the MNIST model's convs
// (bench/bench_vs_torch.py; the 5x5 conv's input gradient 53 -> 48 ms with the channel lanes).
struct ConvGrad final : GradFn {  // a friend of Tensor, so in tg, not in an unnamed namespace
  sint groups;
  std::vector<int64_t> stride, dilation;
  ConvGrad(sint g, std::vector<int64_t> s, std::vector<int64_t> d)
      : groups(g), stride(std::move(s)), dilation(std::move(d)) {}
  std::string repr() const override {
    return "ConvGrad(groups=" + std::to_string(groups) + ", stride=" + shape_str(stride) +
           ", dilation=" + shape_str(dilation) + ")";
  }
  uint64_t hash() const override {
    uint64_t h = static_cast<uint64_t>(groups) * 0x9E3779B97F4A7C15ull;
    for (int64_t v : stride) h = (h ^ static_cast<uint64_t>(v)) * 0x100000001B3ull;
    for (int64_t v : dilation) h = (h ^ static_cast<uint64_t>(v + 7)) * 0x100000001B3ull;
    return h;
  }
  bool equals(const ArgObject& o) const override {
    const auto* c = dynamic_cast<const ConvGrad*>(&o);
    return c != nullptr && c->groups == groups && c->stride == stride && c->dilation == dilation;
  }
  std::vector<UOp> backward(const UOp& ctx, const UOp& node) const override {
    Tensor g = tensor_from_uop(ctx, std::nullopt), xp = tensor_from_uop(node.src(1), std::nullopt),
           weight = tensor_from_uop(node.src(2), std::nullopt);
    Shape is = xp.shape(), ws = weight.shape(), os = g.shape();
    size_t nd = ws.size() - 2;
    bool tiled = tiled_conv(os, ws, xp.device());
    bool cl = tiled && ws[1] >= 16;  // lanes along the input channels
    // the output gradient once in memory: both derivatives read it, and would recompute it otherwise
    if (tiled) g = g.contiguous();
    Mask pads{{0, 0}, {0, 0}};
    for (size_t i = 0; i < nd; i++) {
      sint full = dilation[i] * (ws[2 + i] - 1), used = (os[2 + i] - 1) * stride[i] + full + 1;
      pads.push_back({full, full + is[2 + i] - used});  // the input past the last window gets no gradient
    }
    Tensor wt = transposed_conv_weight(weight, groups);
    auto input_grad = [&]() -> Tensor {
      if (rows_split(tiled && cl, is, ws, os, groups, stride, dilation)) {
        // the transposed conv a kernel row at a time: t (bs, KH*cin, OH, IW), row a of the kernel over g padded along
        // x only; then dx's rows y sum t's rows y-(KH-1-a) of each a. The tiles compute only g's rows, not the 2(KH-1)
        // rows of zeros the full conv's padding adds (conv3's 8 of 10 rows, conv4's 6 of 8), for one more pass over t
        sint KH = ws[2], KW = ws[3], cin = ws[1];
        Tensor w_rows = stored_dim_last(wt.permute({2, 0, 1, 3}).reshape({KH * cin, ws[0], 1, KW}), 0);
        Tensor t = g.pad({{0, 0}, {0, 0}, {0, 0}, {KW - 1, KW - 1}}).contiguous().conv2d(w_rows);
        Shape ts{is[0], KH, cin, os[2], is[3]};
        t = t.reshape(ts);
        auto row = [&](sint a) {  // t's rows of kernel row a, where they land in dx
          return t.shrink({{0, is[0]}, {a, a + 1}, {0, cin}, {0, os[2]}, {0, is[3]}})
              .reshape({is[0], cin, os[2], is[3]})
              .pad({{0, 0}, {0, 0}, {KH - 1 - a, a}, {0, 0}});
        };
        Tensor dx = row(0);
        for (int64_t a = 1; a < KH; a++) dx = dx.add(row(a));
        return dx;
      }
      Tensor gp = spread_by_stride(g, stride).pad(pads);
      if (cl || (tiled && short_rows(is.back()))) wt = stored_dim_last(wt, 0);
      return (tiled ? gp.contiguous() : gp).conv2d(wt, std::nullopt, {.groups = groups, .dilation = dilation});
    };
    Tensor dx = input_grad();

    // an int input (uint8 images) as floats in memory: the tile's lanes load floats
    Tensor xf = tiled && xp.dtype() != g.dtype() ? xp.cast(g.dtype()).contiguous() : xp;
    sint bs = is[0], n_per = 1;
    if (tiled) {  // (a tiled conv has a batch)
      int64_t per_n = static_cast<int64_t>(xf.dtype().itemsize()) * (prod(is) + prod(os)) / bs;
      for (int64_t c = 1; c <= bs; c++)
        if (bs % c == 0 && c * per_n <= (int64_t(1) << 20)) n_per = c;
    }
    // (chunks, bs/chunks, groups, rcout, cin, *o, *HW), summed over bs/chunks and *o, then over the chunks
    Shape HW(ws.begin() + 2, ws.end()), xr{bs / n_per, n_per, groups, 1, ws[1]},
        gr{bs / n_per, n_per, groups, ws[0] / groups, 1};
    std::vector<int64_t> axes{1};
    for (size_t i = 0; i < nd; i++) {
      xr.push_back(os[2 + i]);
      gr.push_back(os[2 + i]);
      axes.push_back(static_cast<int64_t>(5 + i));
    }
    xr.insert(xr.end(), HW.begin(), HW.end());
    gr.insert(gr.end(), nd, 1);
    Tensor windows = (cl ? stored_dim_last(xf, 1) : xf).pool(HW, stride, dilation).reshape(xr);
    Tensor dw = (g.reshape(gr) * windows).sum(axes).sum(0).reshape(ws);
    return {dx.cast(xp.dtype()).uop(), dw.cast(weight.dtype()).uop()};
  }
};

Tensor Tensor::conv2d(const Tensor& weight, const std::optional<Tensor>& bias, const Conv2dOptions& o) const {
  TG_META("conv2d");
  Shape xs = shape(), ws = weight.shape();
  TG_CHECK_AS(AssertionError, ws.size() >= 3 && xs.size() == ws.size(), "Input Tensor shape ", shape_str(xs),
              " does not match the shape of the weights ", shape_str(ws),
              ": conv2d needs (bs, cin, *spatial) and (cout, cin/groups, *kernel) of the same rank");
  TG_CHECK(o.groups >= 1, "conv2d: groups must be positive, got ", o.groups);
  sint bs = xs[0], cin_ = xs[1], cout = ws[0], cin = ws[1];
  TG_CHECK_AS(AssertionError, o.groups * cin == cin_, "Input Tensor shape ", shape_str(xs),
              " does not match the shape of the weights ", shape_str(ws), ". (", o.groups * cin, " vs. ", cin_, ")");
  TG_CHECK(cout % o.groups == 0, "conv2d: weight shape ", shape_str(ws), " has ", cout,
           " output channels, not a multiple of groups=", o.groups);
  size_t nd = ws.size() - 2;
  Shape HW = trailing(ws, nd);
  std::vector<int64_t> pads = resolve_pool_pads(o.padding, nd, xs);
  if (WINO && std::all_of(HW.begin(), HW.end(), [](const sint& k) { return k == sint(3); }) &&
      all_ones(as_tuple(o.stride, nd, "stride")) && all_ones(as_tuple(o.dilation, nd, "dilation"))) {
    // Winograd's F(4x4, 3x3): its own graph, differentiated as it is; its output made contiguous both ways
    Tensor ret = winograd_conv(weight, o.groups, flat_to_grouped(pads), o.dtype);
    return add_channel_bias(ret, bias, nd).contiguous().contiguous_backward();
  }
  // the windows of the padded input, (bs, groups*cin, *oyx, *HW). The derivatives are not taken through them (which
  // gives a scatter with div/mod indexing) but by ConvGrad, through CUSTOM_GRAD below
  Tensor xp = pad(flat_to_mask(pads, xs.size()));
  bool custom_grad = !no_grad && (dtypes::is_float(dtype()) || dtypes::is_float(weight.dtype()));
  auto windows = [&] { return (custom_grad ? xp.detach() : xp).pool(HW, o.stride, o.dilation); };
  Tensor x = windows(), w = custom_grad ? weight.detach() : weight;
  sint groups = o.groups, rcout = cout / groups;
  Shape px = x.shape(), oyx(px.begin() + 2, px.end() - static_cast<std::ptrdiff_t>(nd));
  Shape out{bs, cout};
  out.insert(out.end(), oyx.begin(), oyx.end());
  // A tiled conv's padded input in memory (one more kernel where the input is already in a buffer; none where it
  // is computed: the kernel that computes it writes the padded rows): the tile's lanes run along the input's rows,
  // and a masked row (the padding, as a view) is read a lane at a time where an unmasked one is one vector load
  // (AVX-512: PaddleOCR's detector's 96 -> 24 channel 3x3 conv on 160x160, 16.0 -> 4.7 ms with the copy)
  const bool tiled = tiled_conv(out, ws, device());
  if ((tiled || window_conv(out, ws, as_tuple(o.stride, nd, "stride"), device())) &&
      std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p > 0; })) {
    xp = xp.contiguous();
    x = windows();
  }
  // the tiles' lanes along the output channels, of a weight stored with them last (a copy of the weight), when the
  // output rows are too short for them or there are 16 input channels or more (the MNIST model's 3x3 conv on 8x8
  // inputs 8.3 -> 5.5 ms, on 10x10 5.1 -> 4.3 ms; its first conv, one input channel, keeps the row lanes)
  if (tiled && rcout >= 16 && (short_rows(oyx.back()) || cin >= 16)) w = stored_dim_last(w, 0);

  // broadcast to (bs, groups, rcout, *oyx, cin, *HW) against the weight, and sum cin and the kernel
  Shape r{bs, groups, cin, 1}, e{bs, groups, cin, rcout}, wr{1, groups, rcout};
  r.insert(r.end(), oyx.begin(), oyx.end());
  r.insert(r.end(), HW.begin(), HW.end());
  e.insert(e.end(), oyx.begin(), oyx.end());
  e.insert(e.end(), HW.begin(), HW.end());
  wr.insert(wr.end(), nd, 1);
  wr.push_back(cin);
  wr.insert(wr.end(), HW.begin(), HW.end());
  std::vector<int64_t> order{0, 1, 3}, axes;
  for (size_t i = 0; i < nd; i++) order.push_back(static_cast<int64_t>(4 + i));
  order.push_back(2);
  for (size_t i = 0; i < nd; i++) order.push_back(static_cast<int64_t>(4 + nd + i));
  for (size_t i = 0; i <= nd; i++) axes.push_back(-1 - static_cast<int64_t>(i));
  x = x.reshape(r).expand(e).permute(order);
  Tensor ret = (x * w.reshape(wr)).sum(axes, true, o.dtype).reshape(out);
  if (custom_grad) {
    auto fn =
        std::make_shared<ConvGrad>(groups, as_tuple(o.stride, nd, "stride"), as_tuple(o.dilation, nd, "dilation"));
    ret = ret.apply_uop(UOp::make(Ops::CUSTOM_GRAD, ret.dtype(), {ret.uop(), xp.uop(), weight.uop()}, ObjectArg(fn)),
                        {&ret, &xp, &weight});
  }
  return add_channel_bias(ret, bias, nd);
}

// a conv2d of the input, spread out by the stride, with the kernel flipped and its in/out channels swapped
Tensor Tensor::conv_transpose2d(const Tensor& weight, const std::optional<Tensor>& bias,
                                const ConvTranspose2dOptions& o) const {
  TG_META("conv_transpose2d");
  Shape xs = shape(), ws = weight.shape();
  TG_CHECK_AS(AssertionError, ws.size() >= 3 && xs.size() == ws.size(), "conv_transpose2d: input shape ", shape_str(xs),
              " does not match the shape of the weights ", shape_str(ws),
              ": it needs (bs, cin, *spatial) and (cin, cout/groups, *kernel) of the same rank");
  size_t nd = ws.size() - 2;
  Shape HW = trailing(ws, nd);
  auto padding = flat_to_grouped(resolve_pool_pads(o.padding, nd, xs));  // a bad padding is reported first
  TG_CHECK_AS(AssertionError, o.groups >= 1 && ws[0] % o.groups == 0 && xs[1] == ws[0],
              "conv_transpose2d: input shape ", shape_str(xs), " does not match the shape of the weights ",
              shape_str(ws), " with groups=", o.groups);
  std::vector<int64_t> stride = as_tuple(o.stride, nd, "stride"), dilation = as_tuple(o.dilation, nd, "dilation"),
                       out_pad = as_tuple(o.output_padding, nd, "output_padding");
  // Windows that tile the output (stride == kernel, no padding, one group: a 2x2 stride-2 upsampling): each input
  // pixel writes its own KH x KW block, a matmul over the input channels, (bs, cout, *HW, *spatial), whose blocks are
  // then interleaved into the output. The general form spreads the input by the stride (zeros between) and convolves
  // it: s^2 times the multiply-adds, all but one in s^2 of them with a zero (PaddleOCR's detector's two 2x2
  // upsamplings, with the spread input's copies: 10.3 -> 1.5 ms)
  const bool tiles = o.groups == 1 &&
                     std::all_of(padding.begin(), padding.end(), [](auto p) { return p.first == 0 && p.second == 0; });
  bool blocks = tiles;
  for (size_t i = 0; i < nd; i++) blocks &= stride[i] == HW[i] && dilation[i] == 1 && out_pad[i] == 0;
  if (blocks) {
    Shape xr{xs[0], xs[1], 1}, wr{1, ws[0], ws[1]}, out{xs[0], ws[1]};
    xr.insert(xr.end(), nd, 1);
    xr.insert(xr.end(), xs.begin() + 2, xs.end());
    wr.insert(wr.end(), HW.begin(), HW.end());
    wr.insert(wr.end(), nd, 1);
    std::vector<int64_t> order{0, 1};
    for (size_t i = 0; i < nd; i++) {
      order.insert(order.end(), {static_cast<int64_t>(2 + nd + i), static_cast<int64_t>(2 + i)});
      out.push_back(xs[2 + i] * HW[i]);
    }
    return add_channel_bias((reshape(xr) * weight.reshape(wr)).sum(1).permute(order).reshape(out), bias, nd);
  }
  std::vector<int64_t> flat;
  for (size_t i = nd; i-- > 0;) {
    sint full = (HW[i] - 1) * dilation[i];
    flat.insert(flat.end(), {full - padding[i].first, full - padding[i].second + out_pad[i]});
  }
  return spread_by_stride(*this, stride)
      .conv2d(transposed_conv_weight(weight, o.groups), bias,
              {.groups = o.groups, .dilation = dilation, .padding = flat});
}

// *** pools ***

Tensor Tensor::avg_pool2d(const AvgPool2dOptions& o) const {
  TG_META("avg_pool2d");
  Shape k_(o.kernel_size.begin(), o.kernel_size.end());
  size_t nd = k_.size();
  TG_CHECK(nd >= 1 && static_cast<size_t>(ndim()) >= nd, "avg_pool2d: kernel ", shape_str(k_), " doesn't fit shape ",
           shape_str(shape()));
  std::vector<int64_t> stride = o.stride.empty() ? o.kernel_size : o.stride, axis = last_axes(nd);
  auto pooled = [&](const Tensor& x, const std::vector<int64_t>& pads) {
    return x.pad(flat_to_mask(pads, static_cast<size_t>(x.ndim()))).pool(k_, stride, o.dilation);
  };
  std::vector<int64_t> reg_pads = resolve_pool_pads(o.padding, nd, shape());
  std::vector<int64_t> ceil_pads = apply_ceil_mode(reg_pads, k_, as_tuple(stride, nd, "stride"),
                                                   as_tuple(o.dilation, nd, "dilation"), trailing(shape(), nd));
  if (!o.count_include_pad) {
    const std::vector<int64_t>& pads = o.ceil_mode ? ceil_pads : reg_pads;
    return pooled(*this, pads).sum(axis) / pooled(ones_like(), pads).sum(axis);
  }
  if (!o.ceil_mode) return pooled(*this, reg_pads).mean(axis);
  // the regular padding counts, the extra ceil_mode padding doesn't
  std::vector<int64_t> extra(ceil_pads.size());
  for (size_t i = 0; i < extra.size(); i++) extra[i] = ceil_pads[i] - reg_pads[i];
  Tensor ones = pad(flat_to_mask(reg_pads, static_cast<size_t>(ndim()))).ones_like();
  return pooled(*this, ceil_pads).sum(axis) / pooled(ones, extra).sum(axis);
}

namespace {
struct MaxPoolParts {
  Tensor padded;  // padded with the dtype's min, to be pooled
  std::vector<int64_t> pads, stride;
  Shape k_;
};
MaxPoolParts max_pool_parts(const Tensor& t, const MaxPool2dOptions& o) {
  Shape k_(o.kernel_size.begin(), o.kernel_size.end());
  size_t nd = k_.size();
  TG_CHECK(nd >= 1 && static_cast<size_t>(t.ndim()) >= nd, "max_pool2d: kernel ", shape_str(k_), " doesn't fit shape ",
           shape_str(t.shape()));
  std::vector<int64_t> stride = o.stride.empty() ? o.kernel_size : o.stride;
  std::vector<int64_t> pads = resolve_pool_pads(o.padding, nd, t.shape());
  if (o.ceil_mode)
    pads = apply_ceil_mode(pads, k_, as_tuple(stride, nd, "stride"), as_tuple(o.dilation, nd, "dilation"),
                           trailing(t.shape(), nd));
  Tensor padded = t.pad(flat_to_mask(pads, static_cast<size_t>(t.ndim())), dtypes::min(t.dtype()));
  return {padded, pads, stride, k_};
}
}  // namespace

Tensor Tensor::max_pool2d(const MaxPool2dOptions& o) const {
  TG_META("max_pool2d");
  MaxPoolParts p = max_pool_parts(*this, o);
  return p.padded.pool(p.k_, p.stride, o.dilation).max(last_axes(p.k_.size()));
}

std::pair<Tensor, Tensor> Tensor::max_pool2d_with_indices(const MaxPool2dOptions& o) const {
  TG_META("max_pool2d");
  MaxPoolParts p = max_pool_parts(*this, o);
  Tensor pooled = p.padded.pool(p.k_, p.stride, o.dilation);
  std::vector<int64_t> axis = last_axes(p.k_.size());
  // the flat index into the spatial dims of the first max in each window, as a countdown that max() can pick
  Shape spatial = trailing(shape(), p.k_.size());
  sint spatial_sz = tg::prod(spatial);
  Tensor idx = arange(static_cast<double>(spatial_sz), 0, -1, {device(), dtypes::default_int, false}).reshape(spatial);
  Tensor m = pooled.eq(pooled.max(axis, true));
  idx = m * idx.pad(flat_to_mask(p.pads, spatial.size()), dtypes::min(idx.dtype())).pool(p.k_, p.stride, o.dilation);
  return {pooled.max(axis), static_cast<int64_t>(spatial_sz) - idx.max(axis)};
}

Tensor Tensor::max_unpool2d(const Tensor& indices, const MaxUnpool2dOptions& o) const {
  TG_META("max_unpool2d");
  Shape s = shape();
  TG_CHECK(s.size() >= 3, "max_unpool2d needs (bs, c, *spatial), got shape ", shape_str(s));
  TG_CHECK(indices.shape() == s, "max_unpool2d: indices of shape ", shape_str(indices.shape()),
           " don't match the input ", shape_str(s));
  size_t nd = s.size() - 2;
  Shape spatial = trailing(s, nd), output_size;
  if (o.output_size.empty()) {
    std::vector<int64_t> k_ = as_tuple(o.kernel_size, nd, "kernel_size"), d_ = as_tuple(o.dilation, nd, "dilation"),
                         s_ = as_tuple(o.stride.empty() ? o.kernel_size : o.stride, nd, "stride");
    auto p_ = flat_to_grouped(resolve_pool_pads(o.padding, nd, s));
    for (size_t i = 0; i < nd; i++)  // the inverse of the pool's output size
      output_size.push_back((spatial[i] - 1) * s_[i] - (p_[i].first + p_[i].second) + (d_[i] * (k_[i] - 1) + 1));
  } else {
    TG_CHECK(o.output_size.size() >= nd, "max_unpool2d: output_size ", py_tuple(o.output_size), " has fewer than ", nd,
             " dims");
    output_size = trailing(Shape(o.output_size.begin(), o.output_size.end()), nd);
  }
  sint bs = s[0], c = s[1];
  Tensor hot = one_hot_along_dim(indices.reshape({bs, c, 1, -1}), tg::prod(output_size), 2);
  Tensor ret = (hot * reshape({bs, c, 1, -1})).sum(3);
  Shape out{bs, c};
  out.insert(out.end(), output_size.begin(), output_size.end());
  return ret.reshape(out);
}

// *** interpolate ***

Tensor Tensor::interpolate(const Shape& size, const std::string& mode, bool align_corners) const {
  TG_META("interpolate");
  TG_CHECK_AS(AssertionError, !size.empty() && static_cast<int64_t>(size.size()) <= ndim(),
              "invalid size=", shape_str(size), " for shape ", shape_str(shape()));
  TG_CHECK_AS(AssertionError, mode == "linear" || mode == "nearest" || mode == "nearest-exact",
              "only supports linear, nearest or nearest-exact interpolate, got mode='", mode, "'");
  TG_CHECK_AS(AssertionError, !align_corners || mode == "linear",
              "align_corners option can only be set with the interpolating mode linear");
  Shape s = shape(), expand = s;
  Tensor x = *this;
  for (size_t k = 1; k <= size.size(); k++) {
    size_t d = s.size() - k;
    sint out = size[size.size() - k], ac = align_corners ? 1 : 0;
    TG_CHECK_AS(AssertionError, out > 0 && out - ac > 0, "interpolate: can't resize dim ", d, " of shape ",
                shape_str(s), " to ", out, align_corners ? " with align_corners" : "");
    double scale = static_cast<double>(s[d] - ac) / static_cast<double>(out - ac);
    Tensor arr = arange(0, static_cast<double>(out), 1, {device(), dtypes::float32, std::nullopt});
    Shape rs(s.size(), 1);
    rs[d] = expand[d] = out;
    auto spread = [&](const Tensor& t) { return t.reshape(rs).expand(expand); };
    int64_t dim = static_cast<int64_t>(d);
    if (mode == "linear") {
      Tensor index = (align_corners ? scale * arr : scale * (arr + 0.5) - 0.5).clip(0.0, static_cast<double>(s[d] - 1));
      Tensor low = spread(index.floor().cast(dtypes::int32)), high = spread(index.ceil().cast(dtypes::int32));
      Tensor perc = spread(index - index.floor());
      x = x.gather(dim, low).lerp(x.gather(dim, high), perc);
    } else {
      Tensor pos = mode == "nearest-exact" ? scale * (arr + 0.5) : scale * arr;
      x = x.gather(dim, spread(pos.cast(dtypes::int32)));
    }
  }
  return x.cast(dtype());
}

// *** einsum ***

Tensor Tensor::einsum(const std::string& formula_in, const std::vector<Tensor>& xs, std::optional<DType> dt) {
  TG_META("einsum");
  std::string formula;
  for (char c : formula_in)
    if (c != ' ') formula += c;
  size_t arrow = formula.find("->");
  std::string lhs = formula.substr(0, arrow);
  std::vector<std::string> inputs{""};
  for (char c : lhs) {
    if (c == ',')
      inputs.push_back("");
    else
      inputs.back() += c;
  }
  TG_CHECK_AS(AssertionError, inputs.size() == xs.size(),
              "number of inputs doesn't match number of operands in formula, expected ", inputs.size(), ", got ",
              xs.size());
  auto is_alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  auto once_sorted = [&](const std::string& within, const std::string& skip) {  // letters seen once, sorted
    std::string r;
    for (char c : within)
      if (is_alpha(c) && std::count(within.begin(), within.end(), c) == 1 && skip.find(c) == std::string::npos) r += c;
    std::sort(r.begin(), r.end());
    return r;
  };
  std::string output;
  if (formula.find("...") != std::string::npos) {
    // the ellipsis dims get letters the formula doesn't use, aligned right across the operands
    std::string unused;
    for (char c = 'a'; c <= 'z'; c++) unused += c;
    for (char c = 'A'; c <= 'Z'; c++) unused += c;
    std::erase_if(unused, [&](char c) { return formula.find(c) != std::string::npos; });
    size_t longest = 0;
    for (size_t i = 0; i < inputs.size(); i++) {
      size_t at = inputs[i].find("...");
      if (at == std::string::npos) continue;
      int64_t count = std::max<int64_t>(xs[i].ndim(), 1) - static_cast<int64_t>(inputs[i].size() - 3);
      TG_CHECK_AS(AssertionError, count >= 0 && count <= static_cast<int64_t>(unused.size()), "einsum: operand ", i,
                  " of shape ", shape_str(xs[i].shape()), " doesn't fit '", inputs[i], "'");
      longest = std::max(longest, static_cast<size_t>(count));
      inputs[i].replace(at, 3, unused.substr(unused.size() - static_cast<size_t>(count)));
    }
    std::string ell = unused.substr(unused.size() - longest), joined;
    for (size_t i = 0; i < inputs.size(); i++) joined += (i ? "," : "") + inputs[i];
    if (arrow != std::string::npos) {
      output = formula.substr(arrow + 2);
      if (size_t at = output.find("..."); at != std::string::npos) output.replace(at, 3, ell);
    } else {
      output = ell + once_sorted(joined, ell);
    }
  } else {
    output = arrow != std::string::npos ? formula.substr(arrow + 2) : once_sorted(formula, "");
  }
  std::map<char, sint> letter_val;  // sorted by letter, as python's sorted()
  for (size_t i = 0; i < inputs.size(); i++) {
    Shape s = xs[i].shape();
    TG_CHECK(inputs[i].size() == s.size(), "einsum: '", inputs[i], "' has ", inputs[i].size(), " letters for operand ",
             i, " of shape ", shape_str(s));
    for (size_t j = 0; j < s.size(); j++) {
      char c = inputs[i][j];
      TG_CHECK_AS(AssertionError, std::count(inputs[i].begin(), inputs[i].end(), c) == 1, "einsum: letter '", c,
                  "' repeats within operand '", inputs[i], "' (no diagonals)");
      auto [it, fresh] = letter_val.emplace(c, s[j]);
      TG_CHECK_AS(AssertionError, fresh || it->second == s[j], "einsum: letter '", c, "' is ", it->second, " and ",
                  s[j]);
    }
  }
  for (char c : output)
    TG_CHECK_AS(AssertionError, letter_val.count(c) && std::count(output.begin(), output.end(), c) == 1,
                "einsum: output letter '", c, "' is not an input letter, or repeats, in '", formula_in, "'");
  // every operand permuted to sorted letter order, with size-1 dims for the letters it lacks, then expanded
  std::optional<Tensor> product;
  for (size_t i = 0; i < xs.size(); i++) {
    const std::string& letters = inputs[i];
    std::vector<int64_t> order(letters.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return letters[static_cast<size_t>(a)] < letters[static_cast<size_t>(b)];
    });
    Shape r, e;
    for (auto [c, v] : letter_val) {
      r.push_back(letters.find(c) != std::string::npos ? v : sint(1));
      e.push_back(v);
    }
    Tensor x = xs[i].permute(order).reshape(r).expand(e);
    product = product ? *product * x : x;
  }
  std::vector<int64_t> reduce_axes;
  std::string kept;
  int64_t ax = 0;
  for (auto [c, v] : letter_val) {
    if (output.find(c) == std::string::npos)
      reduce_axes.push_back(ax);
    else
      kept += c;
    ax++;
  }
  Tensor r = *product;
  if (!reduce_axes.empty()) {
    r = r.sum(reduce_axes, false, dt);
  } else {  // as sum over no axes: only the accumulation cast
    DType in = r.dtype();
    r = r.cast(dt ? *dt : sum_acc_dtype(in));
    if (!dt && (in == dtypes::float16 || in == dtypes::bfloat16)) r = r.cast(in);
  }
  // the kept letters are in sorted order; each output position takes its letter's rank
  std::vector<int64_t> rank;
  for (char c : output) rank.push_back(static_cast<int64_t>(kept.find(c)));
  return r.permute(rank);
}

Tensor Tensor::sequential(const std::vector<std::function<Tensor(const Tensor&)>>& ll) const {
  TG_META("sequential");
  Tensor x = *this;
  for (const auto& f : ll) x = f(x);
  return x;
}

}  // namespace tg
