// The ONNX runner's nn ops: convolutions, pools, normalizations, activations, resize, losses, quantization and the
// com.microsoft transformer ops (tinygrad's extra/onnx.py, checked against the ONNX operator spec)
#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>

#include "tg/helpers/helpers.h"
#include "tg/onnx/onnx_ops.h"

namespace tg::onnx {

namespace {

using Ints = std::vector<int64_t>;
using R = std::vector<Value>;

// *** helpers ***

// python's //: ONNX's pad splits floor negative totals
int64_t floordiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0); }

Ints to_ints(const Shape& s) { return Ints(s.begin(), s.end()); }

// numpy's legacy generator: np.random.seed(seed) then np.random.uniform(0, 1, shape). Its MT19937 seeded with an int
// is std::mt19937's seeding, and each double takes 53 bits from two 32-bit draws (27 and 26 bits).
Tensor numpy_uniform(int64_t seed, const Shape& shape, const std::string& device) {
  std::mt19937 mt(static_cast<uint32_t>(seed));
  std::vector<double> v(static_cast<size_t>(tg::prod(shape)));
  for (double& x : v) {
    uint32_t a = mt() >> 5, b = mt() >> 6;
    x = (a * 67108864.0 + b) / 9007199254740992.0;
  }
  return Tensor(v, shape, {.device = device, .dtype = dtypes::float64});
}
Ints spatial(const Tensor& x, size_t nd) {
  Ints s = to_ints(x.shape());
  return Ints(s.end() - static_cast<std::ptrdiff_t>(nd), s.end());
}
Ints axes_from(int64_t a, int64_t b) { return tg::iota(a, b); }
// the spatial axes of an (N, C, *spatial) input, or (N, *spatial, C) when channels_last; checked, since an empty
// list would mean every axis to the reductions
Ints spatial_axes(const OpContext& c, const Tensor& x, bool channels_last = false) {
  if (x.ndim() < 3) c.invalid(cat("input of shape ", shape_str(x.shape()), " has no spatial dims"));
  return channels_last ? axes_from(1, x.ndim() - 1) : axes_from(2, x.ndim());
}

// an ints attribute with one value per spatial dim (a single value repeats), or `def` for each
Ints per_dim(const OpContext& c, const std::string& name, size_t nd, int64_t def) {
  std::optional<Ints> v = c.attr_ints(name);
  if (!v || v->empty()) return Ints(nd, def);
  if (v->size() == 1) return Ints(nd, (*v)[0]);
  if (v->size() != nd) c.invalid(cat("attribute ", py_str_repr(name), " has ", v->size(), " values, expected ", nd));
  return *v;
}

// ONNX pads (x1_begin, x2_begin, ..., x1_end, x2_end, ...) -> torch's flat order, last dim first (left, right, ...)
Ints torch_pads(const Ints& pads) {
  size_t n = pads.size() / 2;
  Ints out;
  for (size_t i = n; i-- > 0;) out.insert(out.end(), {pads[i], pads[i + n]});
  return out;
}

// a total padding split per dim: SAME_UPPER puts the odd one at the end, SAME_LOWER (and ConvTranspose's NOTSET) at
// the beginning. ONNX order.
Ints split_pads(const Ints& total, bool upper) {
  size_t n = total.size();
  Ints pads(2 * n);
  for (size_t i = 0; i < n; i++) {
    int64_t begin = upper ? floordiv(total[i], 2) : total[i] - floordiv(total[i], 2);
    pads[i] = begin, pads[i + n] = total[i] - begin;
  }
  return pads;
}

// the pads of a conv or pool window over x's trailing dims, from auto_pad or the pads attribute, in torch's order
Ints window_pads(const OpContext& c, const Tensor& x, const Ints& k, const Ints& s, const Ints& d) {
  size_t nd = k.size();
  std::string auto_pad = c.attr_s("auto_pad", "NOTSET");
  if (auto_pad == "VALID") return Ints(2 * nd, 0);
  if (auto_pad == "NOTSET") {
    Ints pads = c.attr_ints("pads").value_or(Ints(2 * nd, 0));
    if (pads.size() != 2 * nd) c.invalid(cat("pads has ", pads.size(), " values, expected ", 2 * nd));
    return torch_pads(pads);
  }
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") c.unsupported(cat("auto_pad=", py_str_repr(auto_pad)));
  // SAME: the output is ceil(in / stride), padded as little as that needs (never negative, as onnxruntime)
  Ints in = spatial(x, nd), total(nd);
  for (size_t i = 0; i < nd; i++) {
    int64_t out = (in[i] + s[i] - 1) / s[i];
    total[i] = std::max<int64_t>(0, (out - 1) * s[i] + (k[i] - 1) * d[i] + 1 - in[i]);
  }
  return torch_pads(split_pads(total, auto_pad == "SAME_UPPER"));
}

// Conv's attributes applied to x and w (also QLinearConv's and ConvInteger's)
Tensor conv(const OpContext& c, const Tensor& x, const Tensor& w, const std::optional<Tensor>& b) {
  if (w.ndim() < 3) c.invalid(cat("weight of shape ", shape_str(w.shape()), " has no spatial dims"));
  size_t nd = static_cast<size_t>(w.ndim()) - 2;
  Ints k = c.attr_ints("kernel_shape").value_or(spatial(w, nd)), s = per_dim(c, "strides", nd, 1),
       d = per_dim(c, "dilations", nd, 1);
  return x.conv2d(w, b,
                  {.groups = c.attr_i("group", 1), .stride = s, .dilation = d, .padding = window_pads(c, x, k, s, d)});
}

// pads the op's outputs with omitted ones up to the count the node names (outputs only training gives, say)
R outputs(const OpContext& c, R v) {
  if (v.size() < c.num_outputs) v.resize(c.num_outputs);
  return v;
}

// softmax before opset 13: the input as a 2-D matrix split at axis, normalized over its rows
Tensor coerced_softmax(const Tensor& x, int64_t axis, bool log) {
  if (x.ndim() == 0) return log ? x.log_softmax(-1) : x.softmax(-1);
  int64_t a = x.resolve_dim(axis);
  if (a == x.ndim() - 1) return log ? x.log_softmax(-1) : x.softmax(-1);
  Ints s = to_ints(x.shape());
  int64_t outer = 1;
  for (int64_t i = 0; i < a; i++) outer *= s[static_cast<size_t>(i)];
  Tensor f = x.reshape({outer, -1});
  return (log ? f.log_softmax(-1) : f.softmax(-1)).reshape(x.shape());
}

Tensor exact_gelu(const Tensor& x) { return 0.5 * x * ((x / std::sqrt(2.0)).erf() + 1.0); }

// *** resize ***

struct ResizeMode {
  std::string mode = "nearest", coord = "half_pixel", nearest = "round_prefer_floor", policy = "stretch";
  bool antialias = false;  // only changes linear down-sampling, which isn't supported with it
};

// the input coordinate output index i maps to (the ONNX reference's, whose output width is the unrounded in * scale)
double resize_coord(const OpContext& c, const std::string& mode, int64_t i, int64_t in, int64_t out, double scale) {
  double x = static_cast<double>(i), width = scale * static_cast<double>(in);
  if (mode == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (mode == "asymmetric") return x / scale;
  if (mode == "tf_half_pixel_for_nn") return (x + 0.5) / scale;  // opset 11-12
  if (mode == "align_corners") return width == 1 ? 0.0 : x * static_cast<double>(in - 1) / (width - 1);
  if (mode == "pytorch_half_pixel") return width == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  if (mode == "half_pixel_symmetric")
    return static_cast<double>(in) / 2 * (1 - static_cast<double>(out) / width) + (x + 0.5) / scale - 0.5;
  c.unsupported(cat("coordinate_transformation_mode=", py_str_repr(mode)));
}

int64_t nearest_index(const OpContext& c, const std::string& mode, double x, double scale) {
  if (mode == "round_prefer_floor") return static_cast<int64_t>(std::ceil(x - 0.5));
  if (mode == "round_prefer_ceil") return static_cast<int64_t>(std::floor(x + 0.5));
  if (mode == "floor") return static_cast<int64_t>(std::floor(x));
  if (mode == "ceil") return static_cast<int64_t>(std::ceil(x));
  // Upsample and Resize-10 (onnxruntime's "simple"): down-sampling rounds up, up-sampling down
  if (mode == "simple") return static_cast<int64_t>(scale < 1 ? std::ceil(x) : std::floor(x));
  c.unsupported(cat("nearest_mode=", py_str_repr(mode)));
}

// resizes x along `axes` (every dim when empty) by scales or to sizes (one given, one value per axis). The source
// positions are computed here in doubles, as the reference does in numpy, and gathered one axis at a time.
Tensor resize(const OpContext& c, Tensor x, Ints axes, const std::vector<double>& scales, const Ints& sizes,
              const ResizeMode& m) {
  if (m.mode == "cubic") c.unsupported("mode='cubic'");
  if (m.mode != "nearest" && m.mode != "linear") c.unsupported(cat("mode=", py_str_repr(m.mode)));
  if (scales.empty() == sizes.empty()) c.invalid("exactly one of scales and sizes must be given");
  if (axes.empty()) axes = axes_from(0, x.ndim());
  for (int64_t& a : axes) a = x.resolve_dim(a);
  size_t n = axes.size();
  if ((scales.empty() ? sizes.size() : scales.size()) != n)
    c.invalid(cat(scales.empty() ? "sizes" : "scales", " has ", scales.empty() ? sizes.size() : scales.size(),
                  " values, expected one per axis: ", n));
  Ints in(n), out(n);
  std::vector<double> sc(n);
  for (size_t i = 0; i < n; i++) in[i] = x.shape()[static_cast<size_t>(axes[i])];
  if (!sizes.empty()) {
    if (m.policy == "stretch") {
      for (size_t i = 0; i < n; i++) sc[i] = static_cast<double>(sizes[i]) / static_cast<double>(in[i]);
      out = sizes;
    } else if (m.policy == "not_larger" || m.policy == "not_smaller") {
      // one scale for every axis, the largest that fits in sizes (or the smallest that covers it)
      double s = static_cast<double>(sizes[0]) / static_cast<double>(in[0]);
      for (size_t i = 1; i < n; i++) {
        double si = static_cast<double>(sizes[i]) / static_cast<double>(in[i]);
        s = m.policy == "not_larger" ? std::min(s, si) : std::max(s, si);
      }
      for (size_t i = 0; i < n; i++)
        sc[i] = s, out[i] = static_cast<int64_t>(std::floor(s * static_cast<double>(in[i]) + 0.5));
    } else {
      c.unsupported(cat("keep_aspect_ratio_policy=", py_str_repr(m.policy)));
    }
  } else {
    sc = scales;
    for (size_t i = 0; i < n; i++) {
      if (!(sc[i] > 0)) c.invalid(cat("scale ", sc[i], " must be positive"));
      out[i] = static_cast<int64_t>(std::floor(sc[i] * static_cast<double>(in[i])));
    }
  }
  for (size_t i = 0; i < n; i++) {
    if (out[i] == in[i] && sc[i] == 1.0) continue;  // every coordinate mode maps this axis to itself
    if (m.antialias && m.mode == "linear" && out[i] < in[i]) c.unsupported("antialias=1 when down-sampling");
    int64_t a = axes[i];
    Shape rs(static_cast<size_t>(x.ndim()), 1), full = x.shape();
    rs[static_cast<size_t>(a)] = full[static_cast<size_t>(a)] = out[i];
    auto spread = [&](const Tensor& v) { return v.reshape(rs).expand(full); };
    std::vector<int32_t> lo(static_cast<size_t>(out[i])), hi(lo.size());
    std::vector<float> w(lo.size());
    for (int64_t j = 0; j < out[i]; j++) {
      double xo = resize_coord(c, m.coord, j, in[i], out[i], sc[i]);
      auto k = static_cast<size_t>(j);
      if (m.mode == "nearest") {
        lo[k] = static_cast<int32_t>(std::clamp<int64_t>(nearest_index(c, m.nearest, xo, sc[i]), 0, in[i] - 1));
      } else {  // clamping the coordinate is the reference's edge padding
        xo = std::clamp(xo, 0.0, static_cast<double>(in[i] - 1));
        lo[k] = static_cast<int32_t>(std::floor(xo));
        hi[k] = static_cast<int32_t>(std::min<int64_t>(lo[k] + 1, in[i] - 1));
        w[k] = static_cast<float>(xo - std::floor(xo));
      }
    }
    Shape os{out[i]};
    TensorOptions on{.device = x.device()};
    Tensor low = x.gather(a, spread(Tensor(lo, os, on)));
    if (m.mode == "nearest") {
      x = low;
      continue;
    }
    Tensor wt(w, os, on);
    if (dtypes::is_float(x.dtype())) wt = wt.cast(x.dtype());
    x = low.lerp(x.gather(a, spread(Tensor(hi, os, on))), wt.reshape(rs));
  }
  return x;
}

// *** quantization ***

// a scale or zero point shaped to broadcast against x: one value, one per index of `axis`, or one per block of it
Tensor quant_param(const OpContext& c, const Tensor& v, const Tensor& x, int64_t axis, int64_t block) {
  if (v.numel() == 1) return v.reshape({});
  int64_t a = x.resolve_dim(axis);
  if (block > 0) {
    Tensor r = v.repeat_interleave(block, a);
    Shape s = r.shape();
    if (s[static_cast<size_t>(a)] != x.shape()[static_cast<size_t>(a)]) {
      Mask m;
      for (size_t i = 0; i < s.size(); i++) m.emplace_back(0, i == static_cast<size_t>(a) ? x.shape()[i] : s[i]);
      r = r.shrink(m);
    }
    return r;
  }
  if (v.ndim() != 1) c.invalid(cat("a per-axis scale or zero point must be 1-D, got shape ", shape_str(v.shape())));
  Shape s(static_cast<size_t>(x.ndim()), 1);
  s[static_cast<size_t>(a)] = v.shape()[0];
  return v.reshape(s);
}

Tensor clamp_cast(const Tensor& x, DType dt) { return x.clamp(dtypes::min(dt), dtypes::max(dt)).cast(dt); }

// x - zero_point in int32, the integer form the quantized ops compute in
Tensor dezero(const Tensor& x, const std::optional<Tensor>& zp) {
  Tensor xi = x.cast(dtypes::int32);
  return zp ? xi - zp->cast(dtypes::int32) : xi;
}

// a real-valued result quantized by the output's scale and zero point (uint8 when there is none)
Tensor requantize(const Tensor& r, const Tensor& y_scale, const std::optional<Tensor>& y_zp) {
  Tensor q = (r / y_scale).round();
  if (y_zp) q = q + *y_zp;
  return clamp_cast(q, y_zp ? y_zp->dtype() : dtypes::uint8);
}

// a per-row parameter (one value per row of the left matmul operand) as a column
Tensor per_row(const Tensor& v) { return v.numel() > 1 && v.ndim() == 1 ? v.unsqueeze(-1) : v; }
// a per-output-channel parameter of a conv, shaped for `ndim`-dim tensors with channels at `dim`
Tensor per_channel(const Tensor& v, int64_t ndim, size_t dim) {
  if (v.numel() == 1) return v.reshape({});
  Shape s(static_cast<size_t>(ndim), 1);
  s[dim] = v.numel();
  return v.reshape(s);
}

// *** normalization ***

// float16 and bfloat16 normalize in float32 (stash_type=1)
Tensor stash(const Tensor& x, const OpContext& c) {
  bool half = x.dtype() == dtypes::float16 || x.dtype() == dtypes::bfloat16;
  return half && c.attr_i("stash_type", 1) == 1 ? x.cast(dtypes::float32) : x;
}

// (normalized, mean, inverse std dev) over `axes`, keeping them
std::tuple<Tensor, Tensor, Tensor> normalize(const Tensor& x, const Ints& axes, double eps) {
  Tensor mean = x.mean(axes, true), d = x - mean;
  Tensor invstd = (d.square().mean(axes, true) + eps).rsqrt();
  return {d * invstd, mean, invstd};
}

}  // namespace

void add_nn_ops(OpTable& t) {
  auto op = [&t](const char* name, int64_t since, OpFn fn) { t[name].push_back({since, std::move(fn)}); };

  // *** convolutions and pools ***

  op("Conv", 1, [](OpContext& c) -> R { return {conv(c, c.t(0), c.t(1), c.opt(2))}; });

  op("ConvTranspose", 1, [](OpContext& c) -> R {
    const Tensor &x = c.t(0), &w = c.t(1);
    if (w.ndim() < 3) c.invalid(cat("weight of shape ", shape_str(w.shape()), " has no spatial dims"));
    size_t nd = static_cast<size_t>(w.ndim()) - 2;
    Ints in = spatial(x, nd), k = c.attr_ints("kernel_shape").value_or(spatial(w, nd)),
         s = per_dim(c, "strides", nd, 1), d = per_dim(c, "dilations", nd, 1),
         out_pad = per_dim(c, "output_padding", nd, 0);
    std::string auto_pad = c.attr_s("auto_pad", "NOTSET");
    // the total padding that gives an output shape: one given, or SAME's in * stride
    auto pads_for = [&](const Ints& out_shape) {
      Ints total(nd);
      for (size_t i = 0; i < nd; i++) total[i] = s[i] * (in[i] - 1) + out_pad[i] + (k[i] - 1) * d[i] + 1 - out_shape[i];
      return split_pads(total, auto_pad == "SAME_UPPER");
    };
    Ints pads;
    if (std::optional<Ints> os = c.attr_ints("output_shape")) {
      if (os->size() < nd) c.invalid(cat("output_shape has ", os->size(), " values, expected ", nd));
      pads = pads_for(Ints(os->end() - static_cast<std::ptrdiff_t>(nd), os->end()));
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      Ints out(nd);
      for (size_t i = 0; i < nd; i++) out[i] = in[i] * s[i];
      pads = pads_for(out);
    } else if (auto_pad == "NOTSET") {
      pads = c.attr_ints("pads").value_or(Ints(2 * nd, 0));
      if (pads.size() != 2 * nd) c.invalid(cat("pads has ", pads.size(), " values, expected ", 2 * nd));
    } else if (auto_pad == "VALID") {
      pads = Ints(2 * nd, 0);
    } else {
      c.unsupported(cat("auto_pad=", py_str_repr(auto_pad)));
    }
    return {x.conv_transpose2d(w, c.opt(2),
                               {.groups = c.attr_i("group", 1),
                                .stride = s,
                                .dilation = d,
                                .padding = torch_pads(pads),
                                .output_padding = out_pad})};
  });

  op("AveragePool", 1, [](OpContext& c) -> R {
    const Tensor& x = c.t(0);
    Ints k = c.attr_ints("kernel_shape").value_or(Ints{});
    if (k.empty()) c.invalid("attribute 'kernel_shape' is required");
    Ints s = per_dim(c, "strides", k.size(), 1), d = per_dim(c, "dilations", k.size(), 1);
    return {x.avg_pool2d({.kernel_size = k,
                          .stride = s,
                          .dilation = d,
                          .padding = window_pads(c, x, k, s, d),
                          .ceil_mode = c.attr_i("ceil_mode", 0) != 0,
                          .count_include_pad = c.attr_i("count_include_pad", 0) != 0})};
  });

  op("MaxPool", 1, [](OpContext& c) -> R {
    const Tensor& x = c.t(0);
    Ints k = c.attr_ints("kernel_shape").value_or(Ints{});
    if (k.empty()) c.invalid("attribute 'kernel_shape' is required");
    size_t nd = k.size();
    Ints s = per_dim(c, "strides", nd, 1), d = per_dim(c, "dilations", nd, 1);
    MaxPool2dOptions o{.kernel_size = k,
                       .stride = s,
                       .dilation = d,
                       .padding = window_pads(c, x, k, s, d),
                       .ceil_mode = c.attr_i("ceil_mode", 0) != 0};
    if (c.num_outputs < 2) return {x.max_pool2d(o)};
    auto [vals, idx] = x.max_pool2d_with_indices(o);
    // ONNX's indices count through the whole flattened input: the row-major (or, with storage_order=1, column-major)
    // index in the spatial dims plus the (batch, channel) plane's offset
    Ints sp = spatial(x, nd);
    int64_t plane = 1;
    for (int64_t v : sp) plane *= v;
    idx = idx.cast(dtypes::int64);
    if (c.attr_i("storage_order", 0) == 1) {
      Tensor col = idx.zeros_like();
      int64_t row_stride = plane, col_stride = 1;
      for (size_t i = 0; i < nd; i++) {
        row_stride /= sp[i];
        col = col + idx.idiv(idx.scalar_like(row_stride)) % sp[i] * col_stride;
        col_stride *= sp[i];
      }
      idx = col;
    }
    Ints xs = to_ints(x.shape());
    if (xs.size() == nd + 2 && xs[0] * xs[1] > 1) {
      Shape bs(xs.size(), 1);
      bs[0] = xs[0], bs[1] = xs[1];
      idx = idx + Tensor::arange(xs[0] * xs[1], {.device = x.device(), .dtype = dtypes::int64}).reshape(bs) * plane;
    }
    return {vals, idx};
  });

  // the values scattered to their indices in the shape the pool came from (inferred from its attributes); an
  // output_shape only zero-pads that at the end (the ONNX reference's semantics)
  op("MaxUnpool", 1, [](OpContext& c) -> R {
    const Tensor &x = c.t(0), &ind = c.t(1);
    if (x.ndim() < 3) c.invalid(cat("input of shape ", shape_str(x.shape()), " has no spatial dims"));
    size_t nd = static_cast<size_t>(x.ndim()) - 2;
    Ints k = c.attr_ints("kernel_shape").value_or(Ints{}), s = per_dim(c, "strides", nd, 1), in = spatial(x, nd);
    if (k.size() != nd) c.invalid(cat("kernel_shape needs ", nd, " values, got ", py_tuple(k)));
    Ints pads = c.attr_ints("pads").value_or(Ints(2 * nd, 0)), out(nd);
    if (pads.size() != 2 * nd) c.invalid(cat("pads has ", pads.size(), " values, expected ", 2 * nd));
    for (size_t i = 0; i < nd; i++) out[i] = (in[i] - 1) * s[i] - (pads[i] + pads[i + nd]) + k[i];
    // the indices count through the whole flattened tensor (MaxPool's); max_unpool2d wants them within each plane
    int64_t plane = 1;
    for (int64_t v : out) plane *= v;
    Ints xs = to_ints(x.shape());
    Tensor idx = ind;
    if (xs[0] * xs[1] > 1) {
      Shape bs(xs.size(), 1);
      bs[0] = xs[0], bs[1] = xs[1];
      idx = idx - Tensor::arange(xs[0] * xs[1], {.device = x.device(), .dtype = ind.dtype()}).reshape(bs) * plane;
    }
    Tensor y = x.max_unpool2d(idx, {.kernel_size = k, .stride = s, .padding = torch_pads(pads), .output_size = out});
    if (!c.has(2)) return {y};
    Ints os = c.ints(2), ys = to_ints(y.shape());
    if (os.size() != ys.size()) c.invalid(cat("output_shape ", py_tuple(os), " doesn't have ", ys.size(), " dims"));
    Mask grow;
    for (size_t i = 0; i < ys.size(); i++) {
      if (os[i] < ys[i])
        c.invalid(cat("output_shape ", py_tuple(os), " is smaller than the unpooled shape ", py_tuple(ys)));
      grow.emplace_back(0, os[i] - ys[i]);
    }
    return {y.pad(grow)};
  });

  op("GlobalAveragePool", 1, [](OpContext& c) -> R {
    const Tensor& x = c.t(0);
    return {x.mean(spatial_axes(c, x), true)};
  });
  op("GlobalMaxPool", 1, [](OpContext& c) -> R {
    const Tensor& x = c.t(0);
    return {x.max(spatial_axes(c, x), true)};
  });

  op("Gemm", 1, [](OpContext& c) -> R {
    Tensor a = c.t(0), b = c.t(1);
    if (c.attr_i("transA", 0)) a = a.transpose();
    if (c.attr_i("transB", 0)) b = b.transpose();
    double alpha = c.attr_f("alpha", 1.0), beta = c.attr_f("beta", 1.0);
    Tensor ret = a.matmul(b);
    if (alpha != 1.0) ret = ret * alpha;  // skipped at 1: an int Gemm stays int
    if (std::optional<Tensor> bias = c.opt(2)) ret = ret + (beta != 1.0 ? *bias * beta : *bias);
    return {ret};
  });

  op("Einsum", 1, [](OpContext& c) -> R { return {Tensor::einsum(c.attr_s("equation", ""), c.variadic())}; });

  // *** normalization ***

  op("BatchNormalization", 1, [](OpContext& c) -> R {
    const Tensor &x = c.t(0), &scale = c.t(1), &bias = c.t(2), &mean = c.t(3), &var = c.t(4);
    double eps = c.attr_f("epsilon", 1e-5), momentum = c.attr_f("momentum", 0.9);
    if (c.attr_i("spatial", 1) != 1) c.unsupported("spatial=0");
    if (c.attr_i("training_mode", 0) == 0) return outputs(c, {x.batchnorm(scale, bias, mean, (var + eps).rsqrt())});
    // training: normalized by the batch's statistics, which also update the running ones
    Ints axes = axes_from(0, x.ndim());
    axes.erase(axes.begin() + 1);
    Tensor cur_mean = x.mean(axes);
    Shape bs(static_cast<size_t>(x.ndim()), 1);
    bs[1] = -1;
    Tensor cur_var = (x - cur_mean.reshape(bs)).square().mean(axes);
    Tensor y = x.batchnorm(scale, bias, cur_mean, (cur_var + eps).rsqrt());
    return {y, mean * momentum + cur_mean * (1 - momentum), var * momentum + cur_var * (1 - momentum)};
  });

  op("InstanceNormalization", 1, [](OpContext& c) -> R {
    const Tensor& x = c.t(0);
    Shape bs(static_cast<size_t>(x.ndim()), 1);
    bs[1] = -1;
    Tensor y = x.layernorm(spatial_axes(c, x), c.attr_f("epsilon", 1e-5));
    return {y * c.t(1).reshape(bs) + c.t(2).reshape(bs)};
  });

  op("GroupNormalization", 18, [](OpContext& c) -> R {
    const Tensor& x = c.t(0);
    Tensor scale = c.t(1), bias = c.t(2), xf = stash(x, c);
    int64_t groups = c.attr_i("num_groups", 0);
    Ints xs = to_ints(x.shape());
    if (xs.size() < 2 || groups <= 0 || xs[1] % groups != 0)
      c.invalid(cat("num_groups=", groups, " doesn't divide the channels of shape ", shape_str(x.shape())));
    Tensor y = xf.reshape({xs[0], groups, -1}).layernorm({-1}, c.attr_f("epsilon", 1e-5)).reshape(x.shape());
    // opset 18's scale and bias have one value per group, opset 21's one per channel
    if (scale.numel() != xs[1]) scale = scale.reshape({groups, 1}).expand({groups, xs[1] / groups}).reshape({-1});
    if (bias.numel() != xs[1]) bias = bias.reshape({groups, 1}).expand({groups, xs[1] / groups}).reshape({-1});
    Shape bs(xs.size(), 1);
    bs[1] = -1;
    return {(y * scale.reshape(bs) + bias.reshape(bs)).cast(x.dtype())};
  });

  op("LayerNormalization", 1, [](OpContext& c) -> R {
    const Tensor& x = c.t(0);
    Tensor xf = stash(x, c);
    int64_t axis = x.resolve_dim(c.attr_i("axis", -1));
    auto [y, mean, invstd] = normalize(xf, axes_from(axis, x.ndim()), c.attr_f("epsilon", 1e-5));
    y = y.cast(x.dtype()) * c.t(1);
    if (std::optional<Tensor> b = c.opt(2)) y = y + *b;
    return {y, mean, invstd};
  });

  // com.microsoft: (x + skip + bias) normalized over the last dim; outputs the mean, inverse std dev and the sum too
  op("SkipLayerNormalization", 1, [](OpContext& c) -> R {
    Tensor x = c.t(0) + c.t(1);
    if (std::optional<Tensor> bias = c.opt(4)) x = x + *bias;
    auto [y, mean, invstd] = normalize(x, {-1}, c.attr_f("epsilon", 1e-12));
    y = y * c.t(2);
    if (std::optional<Tensor> beta = c.opt(3)) y = y + *beta;
    return {y, mean, invstd, x};
  });

  // com.microsoft: BERT's embeddings (word + position + segment) normalized; outputs the mask's lengths and the sum
  op("EmbedLayerNormalization", 1, [](OpContext& c) -> R {
    const Tensor& ids = c.t(0);
    if (ids.ndim() != 2) c.invalid(cat("input_ids must be (batch, sequence), got shape ", shape_str(ids.shape())));
    if (c.has(1) != c.has(4)) c.invalid("segment_ids and segment_embedding must be given together");
    Ints is = to_ints(ids.shape());
    Tensor pos =
        c.has(8)
            ? c.t(8)
            : Tensor::arange(is[1], {.device = ids.device(), .dtype = ids.dtype()}).unsqueeze(0).expand(ids.shape());
    Tensor sum = c.t(2)[ids] + c.t(3)[pos];
    if (c.has(1)) sum = sum + c.t(4)[c.t(1)];
    Tensor out = sum.layernorm({-1}, c.attr_f("epsilon", 1e-12)) * c.t(5) + c.t(6);
    // the mask's count of tokens per batch (onnxruntime's), zeros without a mask
    Tensor mask_index = c.has(7) ? c.t(7).cast(dtypes::int32).sum(-1, false, dtypes::int32)
                                 : Tensor::zeros({is[0]}, {.device = ids.device(), .dtype = dtypes::int32});
    return {out, mask_index, sum};
  });

  op("MeanVarianceNormalization", 1, [](OpContext& c) -> R {
    const Tensor& x = c.t(0);
    Ints axes = c.attr_ints("axes").value_or(Ints{0, 2, 3});
    return {(x - x.mean(axes, true)) / (x.std(axes, true, 0) + 1e-9)};
  });

  op("LpNormalization", 1, [](OpContext& c) -> R {
    const Tensor& x = c.t(0);
    int64_t axis = c.attr_i("axis", -1), p = c.attr_i("p", 2);
    if (p == 1) return {x / x.abs().sum(axis, true)};
    if (p == 2) return {x / x.square().sum(axis, true).sqrt()};
    c.unsupported(cat("p=", p));
  });

  // the square sum over a window of `size` channels around each one
  op("LRN", 1, [](OpContext& c) -> R {
    const Tensor& x = c.t(0);
    int64_t size = c.attr_i("size", 0);
    if (size <= 0) c.invalid(cat("size must be positive, got ", size));
    double alpha = c.attr_f("alpha", 1e-4), beta = c.attr_f("beta", 0.75), bias = c.attr_f("bias", 1.0);
    Ints xs = to_ints(x.shape());
    Tensor sq = x.square().reshape({xs[0], 1, xs[1], -1}).pad(Mask{{0, 0}, {0, 0}, {(size - 1) / 2, size / 2}, {0, 0}});
    Tensor avg = sq.avg_pool2d({.kernel_size = {size, 1}, .stride = {1, 1}}).reshape(x.shape());
    return {x / (avg * alpha + bias).pow(beta)};
  });

  // *** dropout ***

  // inference returns the data and an all-true mask. Training with a `seed` draws the mask as onnx's reference does
  // (numpy's legacy np.random.seed(seed); np.random.uniform(0, 1, shape)), so a seeded model drops the same elements
  // under any runtime that follows the reference; without one, from Tensor::rand.
  auto dropout = [](const OpContext& c, const Tensor& x, double ratio, bool training) -> R {
    if (!training || ratio == 0) return {x, Tensor::ones(x.shape(), {.device = x.device(), .dtype = dtypes::bool_})};
    Tensor mask = c.has_attr("seed") ? numpy_uniform(c.attr_i("seed", 0), x.shape(), x.device()) >= ratio
                                     : Tensor::rand(x.shape(), {.device = x.device()}) >= ratio;
    return {x * mask.cast(x.dtype()) * (1.0 / (1.0 - ratio)), mask};
  };
  op("Dropout", 1,
     [dropout](OpContext& c) -> R { return dropout(c, c.t(0), c.attr_f("ratio", 0.5), c.attr_i("is_test", 0) == 0); });
  op("Dropout", 7, [dropout](OpContext& c) -> R { return dropout(c, c.t(0), c.attr_f("ratio", 0.5), false); });
  op("Dropout", 12, [dropout](OpContext& c) -> R {
    bool training = c.has(2) && c.int_(2) != 0;  // the ratio is only read (to the host) when it is used
    return dropout(c, c.t(0), training && c.has(1) ? c.float_(1) : 0.5, training);
  });

  // *** activations ***

  op("Softmax", 1, [](OpContext& c) -> R { return {coerced_softmax(c.t(0), c.attr_i("axis", 1), false)}; });
  op("Softmax", 13, [](OpContext& c) -> R { return {c.t(0).softmax(c.attr_i("axis", -1))}; });
  op("LogSoftmax", 1, [](OpContext& c) -> R { return {coerced_softmax(c.t(0), c.attr_i("axis", 1), true)}; });
  op("LogSoftmax", 13, [](OpContext& c) -> R { return {c.t(0).log_softmax(c.attr_i("axis", -1))}; });

  op("HardSigmoid", 1,
     [](OpContext& c) -> R { return {(c.t(0) * c.attr_f("alpha", 0.2) + c.attr_f("beta", 0.5)).clip(0.0, 1.0)}; });
  op("Gelu", 1, [](OpContext& c) -> R {
    std::string approximate = c.attr_s("approximate", "none");
    if (approximate == "tanh") return {c.t(0).gelu()};
    if (approximate != "none") c.unsupported(cat("approximate=", py_str_repr(approximate)));
    return {exact_gelu(c.t(0))};
  });
  op("BiasGelu", 1, [](OpContext& c) -> R { return {exact_gelu(c.t(0) + c.t(1))}; });
  op("FastGelu", 1, [](OpContext& c) -> R {  // tanh-approximated
    std::optional<Tensor> bias = c.opt(1);
    return {(bias ? c.t(0) + *bias : c.t(0)).gelu()};
  });
  op("PRelu", 1, [](OpContext& c) -> R {
    const Tensor& x = c.t(0);
    Tensor slope = c.t(1);
    // old exports give one slope per channel, (C,), which numpy's broadcasting would put on the last dim instead
    Ints xs = to_ints(x.shape());
    if (slope.ndim() == 1 && xs.size() >= 3 && slope.numel() == xs[1] && slope.numel() != xs.back() && xs.back() != 1) {
      Shape bs(xs.size(), 1);
      bs[1] = -1;
      slope = slope.reshape(bs);
    }
    return {(x > 0).where(x, x * slope)};
  });
  op("LeakyRelu", 1, [](OpContext& c) -> R { return {c.t(0).leaky_relu(c.attr_f("alpha", 0.01))}; });
  op("ThresholdedRelu", 1, [](OpContext& c) -> R {
    const Tensor& x = c.t(0);
    return {(x > c.attr_f("alpha", 1.0)).where(x, x.zeros_like())};
  });
  op("Shrink", 1, [](OpContext& c) -> R {
    const Tensor& x = c.t(0);
    double bias = c.attr_f("bias", 0.0), lambd = c.attr_f("lambd", 0.5);
    Tensor y = (x < -lambd).where(x + bias, (x > lambd).where(x - bias, x.zeros_like()));
    return {y.cast(x.dtype())};
  });
  op("Clip", 1, [](OpContext& c) -> R {
    std::optional<ConstValue> lo, hi;
    if (c.has_attr("min")) lo = c.attr_f("min", 0.0);
    if (c.has_attr("max")) hi = c.attr_f("max", 0.0);
    const Tensor& x = c.t(0);
    return {lo || hi ? x.clip(lo, hi) : x};
  });
  op("Clip", 11, [](OpContext& c) -> R {
    Tensor x = c.t(0);
    if (std::optional<Tensor> lo = c.opt(1)) x = x.maximum(lo->cast(x.dtype()));
    if (std::optional<Tensor> hi = c.opt(2)) x = x.minimum(hi->cast(x.dtype()));
    return {x};
  });
  op("Binarizer", 1, [](OpContext& c) -> R {
    const Tensor& x = c.t(0);
    return {(x > c.attr_f("threshold", 0.0)).cast(x.dtype())};
  });

  // *** resize ***

  // Resize-10 and Upsample: (X, scales), asymmetric coordinates, onnxruntime's nearest rounding
  auto legacy_resize = [](OpContext& c, const std::vector<double>& scales) -> R {
    std::string mode = c.attr_s("mode", "nearest");
    ResizeMode m{.mode = mode == "bilinear" ? "linear" : mode, .coord = "asymmetric", .nearest = "simple"};
    return {resize(c, c.t(0), {}, scales, {}, m)};
  };
  op("Upsample", 7, [legacy_resize](OpContext& c) -> R {
    std::vector<double> scales = c.has(1) ? c.floats(1) : c.attr_floats("scales").value_or(std::vector<double>{});
    return legacy_resize(c, scales);
  });
  op("Resize", 10, [legacy_resize](OpContext& c) -> R { return legacy_resize(c, c.floats(1)); });
  op("Resize", 11, [](OpContext& c) -> R {
    ResizeMode m{.mode = c.attr_s("mode", "nearest"),
                 .coord = c.attr_s("coordinate_transformation_mode", "half_pixel"),
                 .nearest = c.attr_s("nearest_mode", "round_prefer_floor"),
                 .policy = c.attr_s("keep_aspect_ratio_policy", "stretch"),
                 .antialias = c.attr_i("antialias", 0) != 0};
    if (m.coord == "tf_crop_and_resize") c.unsupported("coordinate_transformation_mode='tf_crop_and_resize'");
    std::vector<double> scales = c.has(2) ? c.floats(2) : std::vector<double>{};
    Ints sizes = c.has(3) ? c.ints(3) : Ints{};
    return {resize(c, c.t(0), c.attr_ints("axes").value_or(Ints{}), scales, sizes, m)};
  });

  // *** losses ***

  auto nll_options = [](const OpContext& c) {
    NllLossOptions o{.reduction = c.attr_s("reduction", "mean")};
    if (c.has_attr("ignore_index")) o.ignore_index = c.attr_i("ignore_index", 0);
    return o;
  };
  op("NegativeLogLikelihoodLoss", 1,
     [nll_options](OpContext& c) -> R { return {c.t(0).nll_loss(c.t(1), c.opt(2), nll_options(c))}; });
  op("SoftmaxCrossEntropyLoss", 1, [nll_options](OpContext& c) -> R {
    Tensor log_probs = c.t(0).log_softmax(1);
    return {log_probs.nll_loss(c.t(1), c.opt(2), nll_options(c)), log_probs};
  });

  // *** quantization ***

  op("QuantizeLinear", 1, [](OpContext& c) -> R {
    const Tensor &x = c.t(0), &scale = c.t(1);
    std::optional<Tensor> zp = c.opt(2);
    int64_t axis = c.attr_i("axis", 1), block = c.attr_i("block_size", 0), out = c.attr_i("output_dtype", 0);
    DType dt = zp ? zp->dtype() : out ? dtype_parse(static_cast<int32_t>(out)) : dtypes::uint8;
    if (!dtypes::is_int(dt)) c.unsupported(cat("quantizing to ", dt));
    Tensor q = (x / quant_param(c, scale, x, axis, block)).round();  // round half to even, as the spec
    if (zp) q = q + quant_param(c, *zp, x, axis, block);
    return {clamp_cast(q, dt).contiguous()};
  });

  op("DequantizeLinear", 1, [](OpContext& c) -> R {
    const Tensor &x = c.t(0), &scale = c.t(1);
    int64_t axis = c.attr_i("axis", 1), block = c.attr_i("block_size", 0);
    std::optional<Tensor> zp = c.opt(2);
    if (zp) zp = quant_param(c, *zp, x, axis, block);
    return {(dezero(x, zp) * quant_param(c, scale, x, axis, block)).cast(scale.dtype())};
  });

  // to uint8 with the scale and zero point that cover the input's range (and 0)
  op("DynamicQuantizeLinear", 1, [](OpContext& c) -> R {
    const Tensor& x = c.t(0);
    Tensor hi = x.max().clip(0.0, std::nullopt), lo = x.min().clip(std::nullopt, 0.0);
    Tensor scale = (hi - lo) / 255.0;
    Tensor zp = clamp_cast((0.0 - lo / scale).round(), dtypes::uint8);
    return {clamp_cast((x / scale).round() + zp, dtypes::uint8), scale, zp};
  });

  op("QLinearConv", 1, [](OpContext& c) -> R {
    const Tensor &x = c.t(0), &w = c.t(3);
    std::optional<Tensor> wzp = c.opt(5);
    if (wzp) wzp = per_channel(*wzp, w.ndim(), 0);
    Tensor acc = conv(c, dezero(x, c.opt(2)), dezero(w, wzp), c.opt(8));
    return {requantize(acc * (c.t(1) * per_channel(c.t(4), x.ndim(), 1)), c.t(6), c.opt(7))};
  });

  op("QLinearMatMul", 1, [](OpContext& c) -> R {
    std::optional<Tensor> azp = c.opt(2);
    if (azp) azp = per_row(*azp);
    Tensor acc = dezero(c.t(0), azp).matmul(dezero(c.t(3), c.opt(5)));
    return {requantize(acc * (per_row(c.t(1)) * c.t(4)), c.t(6), c.opt(7))};
  });

  // com.microsoft: the sum dequantized (as onnxruntime), the product in integers
  op("QLinearAdd", 1, [](OpContext& c) -> R {
    Tensor sum = dezero(c.t(0), c.opt(2)) * c.t(1) + dezero(c.t(3), c.opt(5)) * c.t(4);
    return {requantize(sum, c.t(6), c.opt(7))};
  });
  op("QLinearMul", 1, [](OpContext& c) -> R {
    Tensor prod = dezero(c.t(0), c.opt(2)) * dezero(c.t(3), c.opt(5));
    return {requantize(prod * (c.t(1) * c.t(4)), c.t(6), c.opt(7))};
  });

  op("QLinearGlobalAveragePool", 1, [](OpContext& c) -> R {
    const Tensor& x = c.t(0);
    Ints axes = spatial_axes(c, x, c.attr_i("channels_last", 0) != 0);
    Tensor avg = (dezero(x, c.opt(2)) * c.t(1)).mean(axes, true);
    return {requantize(avg, c.t(3), c.opt(4))};
  });

  op("MatMulInteger", 1, [](OpContext& c) -> R {
    std::optional<Tensor> azp = c.opt(2);
    if (azp) azp = per_row(*azp);
    return {dezero(c.t(0), azp).matmul(dezero(c.t(1), c.opt(3)))};
  });

  op("ConvInteger", 1, [](OpContext& c) -> R {
    const Tensor& w = c.t(1);
    std::optional<Tensor> wzp = c.opt(3);
    if (wzp) wzp = per_channel(*wzp, w.ndim(), 0);
    return {conv(c, dezero(c.t(0), c.opt(2)), dezero(w, wzp), std::nullopt)};
  });

  // *** transformer ops (com.microsoft) and grids ***

  // multi-head self-attention of x through one packed QKV projection; `past` is (2, batch, heads, past_len, head)
  op("Attention", 1, [](OpContext& c) -> R {
    const Tensor &x = c.t(0), &weights = c.t(1);
    if (c.attr_i("do_rotary", 0) != 0) c.unsupported("do_rotary=1");
    if (c.attr_i("past_present_share_buffer", 0) != 0) c.unsupported("past_present_share_buffer=1");
    if (x.ndim() != 3) c.invalid(cat("input must be (batch, sequence, hidden), got shape ", shape_str(x.shape())));
    int64_t heads = c.attr_i("num_heads", 0);
    if (heads <= 0) c.invalid("attribute 'num_heads' is required");
    Ints sizes = c.attr_ints("qkv_hidden_sizes").value_or(Ints(3, weights.shape()[1] / 3));
    if (sizes.size() != 3) c.invalid(cat("qkv_hidden_sizes needs 3 values, got ", py_tuple(sizes)));
    Ints xs = to_ints(x.shape());
    int64_t B = xs[0], S = xs[1];
    std::vector<Tensor> qkv = x.linear(weights, c.opt(2)).split(sizes, 2);
    for (size_t i = 0; i < 3; i++) qkv[i] = qkv[i].reshape({B, S, heads, sizes[i] / heads}).transpose(1, 2);
    Tensor q = qkv[0], k = qkv[1], v = qkv[2];
    Value present;
    if (std::optional<Tensor> past = c.opt(4)) {
      k = (*past)[0].cat({k}, 2), v = (*past)[1].cat({v}, 2);
      present = Tensor::stack({k, v});
    }
    int64_t T = k.shape()[2];
    double scale = c.attr_f("scale", 1.0 / std::sqrt(static_cast<double>(sizes[0] / heads)));
    Tensor scores = q.matmul(k.transpose(-1, -2)) * scale;
    double filter = c.attr_f("mask_filter_value", -10000.0);
    if (std::optional<Tensor> mi = c.opt(3)) {
      // masked scores get mask_filter_value added (onnxruntime's): key lengths, (end, start) pairs, or a 0/1 mask
      Tensor mask = *mi;
      TensorOptions on{.device = mi->device(), .dtype = mi->dtype()};
      if (mi->ndim() == 1 && mi->shape()[0] == B) {
        mask = Tensor::arange(T, on).unsqueeze(0) < mi->unsqueeze(1);
      } else if (mi->ndim() == 1 && mi->shape()[0] == 2 * B) {
        Tensor end = mi->shrink({{0, B}}).unsqueeze(1), start = mi->shrink({{B, 2 * B}}).unsqueeze(1);
        Tensor pos = Tensor::arange(T, on).unsqueeze(0);
        mask = (pos < end).bitwise_and(pos >= start);
      } else if (mi->ndim() >= 2 && mi->ndim() <= 4) {
        mask = mi->cast(dtypes::bool_);
      } else {
        c.unsupported(cat("mask_index of shape ", shape_str(mi->shape())));
      }
      while (mask.ndim() < 4) mask = mask.unsqueeze(1);
      scores = mask.where(scores, scores + filter);
    }
    if (std::optional<Tensor> bias = c.opt(5)) scores = scores + *bias;
    if (c.attr_i("unidirectional", 0) != 0) {  // query i sees the past and keys up to its own position
      Tensor causal = Tensor::ones({S, T}, {.device = x.device(), .dtype = dtypes::bool_}).tril(T - S);
      scores = causal.where(scores, scores + filter);
    }
    Tensor out = scores.softmax(-1).matmul(v).transpose(1, 2).reshape({B, S, -1});
    return {out, present};
  });

  // the sampling grid of theta's affine maps over normalized coordinates in [-1, 1]
  op("AffineGrid", 1, [](OpContext& c) -> R {
    const Tensor& theta = c.t(0);
    Ints size = c.ints(1);
    if (size.size() < 3) c.invalid(cat("size needs (N, C, *spatial), got ", py_tuple(size)));
    bool align = c.attr_i("align_corners", 0) != 0;
    Ints sp(size.begin() + 2, size.end());
    TensorOptions on{.device = theta.device(),
                     .dtype = dtypes::is_float(theta.dtype()) ? theta.dtype() : dtypes::float32};
    std::vector<Tensor> axes;
    for (int64_t n : sp) {
      double edge = align ? 1.0 : 1.0 - 1.0 / static_cast<double>(n);
      axes.push_back(Tensor::linspace(-edge, edge, n, on));
    }
    std::vector<Tensor> grids = Tensor::meshgrid(axes);
    std::vector<Tensor> cols(grids.rbegin(), grids.rend());  // x (the last dim) first
    cols.push_back(grids[0].ones_like());
    int64_t count = 1;
    for (int64_t n : sp) count *= n;
    auto nd = static_cast<int64_t>(sp.size());
    Tensor base = Tensor::stack(cols, -1).reshape({1, count, nd + 1}).expand({size[0], -1, -1});
    Shape out{size[0]};
    out.insert(out.end(), sp.begin(), sp.end());
    out.push_back(nd);
    return {base.matmul(theta.cast(*on.dtype).transpose(1, 2)).reshape(out)};
  });

  // crops or pads each axis, centered, to the shape (the odd one out goes to the end)
  op("CenterCropPad", 1, [](OpContext& c) -> R {
    const Tensor& x = c.t(0);
    Ints shape = c.ints(1), xs = to_ints(x.shape());
    Ints axes = c.attr_ints("axes").value_or(axes_from(0, x.ndim()));
    if (shape.size() != axes.size()) c.invalid(cat("shape has ", shape.size(), " values for ", axes.size(), " axes"));
    Mask crop, pad(xs.size(), {0, 0});
    for (int64_t d : xs) crop.emplace_back(0, d);
    for (size_t i = 0; i < axes.size(); i++) {
      auto a = static_cast<size_t>(x.resolve_dim(axes[i]));
      int64_t want = shape[i], have = xs[a];
      if (want < have)
        crop[a] = {(have - want) / 2, (have - want) / 2 + want};
      else if (want > have)
        pad[a] = {(want - have) / 2, want - have - (want - have) / 2};
    }
    return {x.shrink(crop).pad(pad)};
  });

  // *** training (ai.onnx.preview.training): functional optimizer steps, R the rate and T the step count; the inputs
  // are the groups (X..., G..., state...), the outputs every new X, then every new state ***

  // splits the inputs after R and T into `per` groups of equal size
  auto groups = [](const OpContext& c, size_t per) {
    size_t n = c.n() - 2;
    if (n == 0 || n % per != 0) c.invalid(cat(c.n() - 2, " inputs after R and T, expected a multiple of ", per));
    std::vector<std::vector<Tensor>> g(per);
    for (size_t i = 0; i < n; i++) g[i / (n / per)].push_back(c.t(2 + i).detach());
    return g;
  };
  auto flatten_out = [](const std::vector<std::vector<Tensor>>& outs) {
    R r;
    for (const auto& group : outs)
      for (const Tensor& t : group) r.emplace_back(t);
    return r;
  };
  op("Adagrad", 1, [=](OpContext& c) -> R {
    Tensor rate = c.t(0).detach();
    int64_t step = c.int_(1);
    double decay = c.attr_f("decay_factor", 0.0), eps = c.attr_f("epsilon", 0.0),
           norm = c.attr_f("norm_coefficient", 0.0);
    auto g = groups(c, 3);
    std::vector<std::vector<Tensor>> out(2);
    for (size_t i = 0; i < g[0].size(); i++) {
      Tensor grad = g[0][i] * norm + g[1][i];
      Tensor h = g[2][i] + grad.square();
      Tensor r = rate / (1.0 + static_cast<double>(step) * decay);
      out[0].push_back(g[0][i] - r * grad / (h.sqrt() + eps));
      out[1].push_back(h);
    }
    return flatten_out(out);
  });
  op("Momentum", 1, [=](OpContext& c) -> R {
    Tensor rate = c.t(0).detach();
    int64_t step = c.int_(1);
    double alpha = c.attr_f("alpha", 0.0), beta = c.attr_f("beta", 0.0), norm = c.attr_f("norm_coefficient", 0.0);
    std::string mode = c.attr_s("mode", "standard");
    if (mode != "standard" && mode != "nesterov") c.invalid(cat("mode ", py_str_repr(mode)));
    auto g = groups(c, 3);
    std::vector<std::vector<Tensor>> out(2);
    for (size_t i = 0; i < g[0].size(); i++) {
      Tensor grad = g[0][i] * norm + g[1][i];
      Tensor v = g[2][i] * alpha + grad * (step > 0 ? beta : 1.0);  // the first step takes the whole gradient
      out[0].push_back(g[0][i] - rate * (mode == "standard" ? v : grad + v * alpha));
      out[1].push_back(v);
    }
    return flatten_out(out);
  });
  op("Adam", 1, [=](OpContext& c) -> R {
    Tensor rate = c.t(0).detach();
    int64_t step = c.int_(1);
    double alpha = c.attr_f("alpha", 0.9), beta = c.attr_f("beta", 0.999), eps = c.attr_f("epsilon", 0.0);
    double norm = c.attr_f("norm_coefficient", 0.0), post = c.attr_f("norm_coefficient_post", 0.0);
    auto g = groups(c, 4);
    std::vector<std::vector<Tensor>> out(3);
    double t = static_cast<double>(step);
    double adjust = step > 0 ? std::sqrt(1.0 - std::pow(beta, t)) / (1.0 - std::pow(alpha, t)) : 1.0;
    for (size_t i = 0; i < g[0].size(); i++) {
      Tensor grad = g[0][i] * norm + g[1][i];
      Tensor v = g[2][i] * alpha + grad * (1.0 - alpha);
      Tensor h = g[3][i] * beta + grad.square() * (1.0 - beta);
      Tensor x = g[0][i] - rate * adjust * (v / (h.sqrt() + eps));
      out[0].push_back(x * (1.0 - post));
      out[1].push_back(v);
      out[2].push_back(h);
    }
    return flatten_out(out);
  });
  // the gradients of the value named by `y` with respect to this node's inputs (the values named by `xs`)
  op("Gradient", 1, [](OpContext& c) -> R {
    std::string y = c.attr_s("y", "");
    auto it = c.values->find(y);
    if (it == c.values->end()) c.invalid(cat("y names ", py_str_repr(y), ", which is not computed before this node"));
    const Tensor& target = as_tensor(it->second, cat("Gradient's y ", py_str_repr(y)));
    std::vector<Tensor> xs = c.variadic();
    R r;
    for (Tensor& g : target.gradient(xs, target.ones_like(), true)) r.emplace_back(std::move(g));
    return r;
  });
}

}  // namespace tg::onnx
