// The ONNX ops that are elementwise math, reductions, casts and movement, as Tensor calls
#include "tg/onnx/onnx_ops.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "tg/helpers/helpers.h"

// g++ 12 at -O3 warns that an Index's unused Slice (optional<sint>) "may be used uninitialized" when Indexes are
// copied into a vector: a false positive (clang and the sanitizers see none)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace tg::onnx {

namespace {

using R = std::vector<Value>;

std::vector<int64_t> ishape(const Tensor& x) {
  Shape s = x.shape();
  return std::vector<int64_t>(s.begin(), s.end());
}
int64_t norm_axis(const OpContext& c, int64_t axis, int64_t ndim) {
  if (axis < -ndim || axis >= std::max<int64_t>(ndim, 1))
    c.invalid(cat("axis ", axis, " is out of range for ", ndim, " dims"));
  return axis < 0 ? axis + ndim : axis;
}
Tensor i64(std::vector<int64_t> v, const std::string& device) {
  auto n = static_cast<int64_t>(v.size());
  return Tensor(v, Shape{n}, {.device = device, .dtype = dtypes::int64});
}
// n full slices (Python's `:`), the start of an index that selects along dim n
std::vector<Index> full_slices(int64_t n) {
  std::vector<Index> out;
  for (int64_t i = 0; i < n; i++) out.emplace_back(Slice{std::nullopt, std::nullopt, std::nullopt});
  return out;
}
// the dtype ONNX says an op keeps: tinygrad's promotion may widen (bool + bool, int8 * int8 ...)
Tensor keep(const Tensor& out, DType dt) { return out.dtype() == dt ? out : out.cast(dt); }

void unary(OpTable& t, const char* name, Tensor (Tensor::*fn)() const) {
  t[name].push_back({1, [fn](OpContext& c) -> R { return {(c.t(0).*fn)()}; }});
}
void binary(OpTable& t, const char* name, std::function<Tensor(const Tensor&, const Tensor&)> fn) {
  t[name].push_back({1, [fn](OpContext& c) -> R { return {fn(c.t(0), c.t(1))}; }});
}

// the axes of a reduce op: an attribute before the opset that moved them to input 1, else that input
std::optional<std::vector<int64_t>> reduce_axes(const OpContext& c) {
  if (c.has(1)) return c.ints(1);
  if (auto a = c.attr_ints("axes")) return *a;
  return std::nullopt;
}
// tinygrad's _axes: no axes reduce every axis, unless noop_with_empty_axes; pre and post wrap the sum or reduce
void reduce_op(OpTable& t, const char* name, std::function<Tensor(const Tensor&)> pre,
               std::function<Tensor(const Tensor&, std::vector<int64_t>, bool)> red,
               std::function<Tensor(const Tensor&)> post) {
  t[name].push_back({1, [=](OpContext& c) -> R {
                       Tensor x = pre ? pre(c.t(0)) : c.t(0);
                       bool keepdims = c.attr_i("keepdims", 1) != 0;
                       std::optional<std::vector<int64_t>> axes = reduce_axes(c);
                       if ((!axes || axes->empty()) && c.attr_i("noop_with_empty_axes", 0) != 0)
                         return {post ? post(x) : x};
                       std::vector<int64_t> ax;
                       if (axes && !axes->empty())
                         ax = *axes;
                       else {
                         ax.resize(static_cast<size_t>(x.ndim()));
                         std::iota(ax.begin(), ax.end(), 0);
                       }
                       Tensor y = red(x, ax, keepdims);
                       return {post ? post(y) : y};
                     }});
}

Tensor argmax(const OpContext& c, const Tensor& x) {
  int64_t axis = norm_axis(c, c.attr_i("axis", 0), x.ndim());
  bool keepdims = c.attr_i("keepdims", 1) != 0;
  if (c.attr_i("select_last_index", 0) != 0) {
    Tensor last = x.flip({axis}).argmax(axis, keepdims).cast(dtypes::int64);
    return last.scalar_like(ishape(x)[static_cast<size_t>(axis)] - 1).sub(last);
  }
  return x.argmax(axis, keepdims).cast(dtypes::int64);
}

// ONNX's Slice (and the reference's): python slices per axis
Tensor slice(const OpContext& c, const Tensor& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
             std::optional<std::vector<int64_t>> axes, std::optional<std::vector<int64_t>> steps) {
  if (starts.size() != ends.size()) c.invalid(cat("starts has ", starts.size(), " values, ends ", ends.size()));
  std::vector<Index> idx = full_slices(x.ndim());
  for (size_t i = 0; i < starts.size(); i++) {
    int64_t axis = axes && !axes->empty() ? norm_axis(c, (*axes)[i], x.ndim()) : static_cast<int64_t>(i);
    int64_t step = steps && !steps->empty() ? (*steps)[i] : 1;
    if (step == 0) c.invalid("a step of 0");
    idx[static_cast<size_t>(axis)] = Slice{starts[i], ends[i], step};
  }
  return x.index(idx);
}

// ONNX's and tinygrad's pads: (begin of each axis..., end of each axis...) -> Tensor::pad's per-dim pairs
Tensor pad(const OpContext& c, const Tensor& x, const std::vector<int64_t>& pads,
           std::optional<std::vector<int64_t>> axes, const std::string& mode, double value) {
  int64_t nd = x.ndim();
  std::vector<int64_t> ax;
  if (axes && !axes->empty())
    for (int64_t a : *axes) ax.push_back(norm_axis(c, a, nd));
  else {
    ax.resize(static_cast<size_t>(nd));
    std::iota(ax.begin(), ax.end(), 0);
  }
  if (pads.size() != 2 * ax.size()) c.invalid(cat("pads has ", pads.size(), " values for ", ax.size(), " axes"));
  std::vector<int64_t> before(static_cast<size_t>(nd), 0), after(static_cast<size_t>(nd), 0);
  for (size_t i = 0; i < ax.size(); i++) {
    before[static_cast<size_t>(ax[i])] = pads[i];
    after[static_cast<size_t>(ax[i])] = pads[i + ax.size()];
  }
  // negative pads crop: crop first, then pad what is positive
  Mask shrink, padding;
  std::vector<int64_t> sh = ishape(x);
  bool crops = false;
  for (size_t d = 0; d < static_cast<size_t>(nd); d++) {
    int64_t b = std::min<int64_t>(before[d], 0), e = std::min<int64_t>(after[d], 0);
    crops = crops || b < 0 || e < 0;
    shrink.push_back({-b, sh[d] + e});
    padding.push_back({std::max<int64_t>(before[d], 0), std::max<int64_t>(after[d], 0)});
  }
  Tensor y = crops ? x.shrink(shrink) : x;
  std::string m = mode == "edge" ? "replicate" : mode == "wrap" ? "circular" : mode;
  if (m != "constant" && m != "reflect" && m != "replicate" && m != "circular")
    c.unsupported(cat("mode ", py_str_repr(mode)));
  ConstValue v = dtypes::is_float(x.dtype()) ? ConstValue(value) : ConstValue(static_cast<int64_t>(value));
  if (x.dtype() == dtypes::bool_) v = ConstValue(value != 0);
  return y.pad(padding, m, v);
}

}  // namespace

void add_math_ops(OpTable& t) {
  // *** unary ***
  unary(t, "Neg", &Tensor::neg);
  unary(t, "Reciprocal", &Tensor::reciprocal);
  unary(t, "Sqrt", &Tensor::sqrt);
  unary(t, "Sign", &Tensor::sign);
  unary(t, "Abs", &Tensor::abs);
  unary(t, "Exp", &Tensor::exp);
  unary(t, "Log", &Tensor::log);
  unary(t, "Mish", &Tensor::mish);
  unary(t, "Sin", &Tensor::sin);
  unary(t, "Cos", &Tensor::cos);
  unary(t, "Tan", &Tensor::tan);
  unary(t, "Asin", &Tensor::asin);
  unary(t, "Acos", &Tensor::acos);
  unary(t, "Atan", &Tensor::atan);
  unary(t, "Relu", &Tensor::relu);
  unary(t, "Sigmoid", &Tensor::sigmoid);
  unary(t, "Floor", &Tensor::floor);
  unary(t, "Ceil", &Tensor::ceil);
  unary(t, "IsNaN", &Tensor::isnan);
  unary(t, "HardSwish", &Tensor::hardswish);
  unary(t, "Sinh", &Tensor::sinh);
  unary(t, "Cosh", &Tensor::cosh);
  unary(t, "Tanh", &Tensor::tanh);
  unary(t, "Softsign", &Tensor::softsign);
  unary(t, "Asinh", &Tensor::asinh);
  unary(t, "Acosh", &Tensor::acosh);
  unary(t, "Atanh", &Tensor::atanh);
  unary(t, "Round", &Tensor::round);
  unary(t, "Erf", &Tensor::erf);
  unary(t, "Not", &Tensor::logical_not);
  unary(t, "BitwiseNot", &Tensor::bitwise_not);
  t["Identity"].push_back({1, [](OpContext& c) -> R { return {c.inputs.at(0)}; }});  // tensors and sequences alike
  t["Softplus"].push_back({1, [](OpContext& c) -> R { return {c.t(0).softplus()}; }});
  t["Elu"].push_back({1, [](OpContext& c) -> R { return {c.t(0).elu(c.attr_f("alpha", 1.0))}; }});
  t["Celu"].push_back({1, [](OpContext& c) -> R { return {c.t(0).celu(c.attr_f("alpha", 1.0))}; }});
  t["Selu"].push_back({1, [](OpContext& c) -> R {
                         return {c.t(0).selu(c.attr_f("alpha", 1.67326319217681884765625),
                                             c.attr_f("gamma", 1.05070102214813232421875))};
                       }});
  t["IsInf"].push_back({1, [](OpContext& c) -> R {
                          return {
                              c.t(0).isinf(c.attr_i("detect_positive", 1) != 0, c.attr_i("detect_negative", 1) != 0)};
                        }});

  // *** binary (broadcasting) ***
  binary(t, "Add", [](const Tensor& x, const Tensor& y) { return keep(x + y, x.dtype()); });
  binary(t, "Sub", [](const Tensor& x, const Tensor& y) { return keep(x - y, x.dtype()); });
  binary(t, "Mul", [](const Tensor& x, const Tensor& y) { return keep(x * y, x.dtype()); });
  binary(t, "Div", [](const Tensor& x, const Tensor& y) {
    if (dtypes::is_int(x.dtype())) return keep(x.div(y, false, std::string("trunc")), x.dtype());
    return keep(x / y, x.dtype());
  });
  binary(t, "Pow", [](const Tensor& x, const Tensor& y) {
    // the base's dtype (T): an int base to a float power is computed in float and cast back
    if (dtypes::is_int(x.dtype()) && dtypes::is_float(y.dtype())) return x.cast(y.dtype()).pow(y).cast(x.dtype());
    if (dtypes::is_int(x.dtype()))  // ints to int powers through float64: exact up to 2**53
      return x.cast(dtypes::float64).pow(y.cast(dtypes::float64)).cast(x.dtype());
    return keep(x.pow(y), x.dtype());
  });
  binary(t, "MatMul", [](const Tensor& x, const Tensor& y) { return x.matmul(y); });
  binary(t, "Less", [](const Tensor& x, const Tensor& y) { return x < y; });
  binary(t, "LessOrEqual", [](const Tensor& x, const Tensor& y) { return x <= y; });
  binary(t, "Greater", [](const Tensor& x, const Tensor& y) { return x > y; });
  binary(t, "GreaterOrEqual", [](const Tensor& x, const Tensor& y) { return x >= y; });
  binary(t, "Equal", [](const Tensor& x, const Tensor& y) { return x == y; });
  binary(t, "And", [](const Tensor& x, const Tensor& y) { return x.bool_().bitwise_and(y.bool_()); });
  binary(t, "Or", [](const Tensor& x, const Tensor& y) { return x.bool_().bitwise_or(y.bool_()); });
  binary(t, "Xor", [](const Tensor& x, const Tensor& y) { return x.bool_().bitwise_xor(y.bool_()); });
  binary(t, "BitwiseAnd", [](const Tensor& x, const Tensor& y) { return x & y; });
  binary(t, "BitwiseOr", [](const Tensor& x, const Tensor& y) { return x | y; });
  binary(t, "BitwiseXor", [](const Tensor& x, const Tensor& y) { return x ^ y; });
  t["Mod"].push_back({1, [](OpContext& c) -> R {
                        const Tensor &x = c.t(0), &y = c.t(1);
                        if (c.attr_i("fmod", 0) != 0) {  // C's fmod: the sign of the dividend
                          if (dtypes::is_float(x.dtype())) return {x - (x / y).trunc() * y};
                          return {keep(x - x.div(y, false, std::string("trunc")) * y, x.dtype())};
                        }
                        return {keep(x % y, x.dtype())};
                      }});
  t["BitShift"].push_back({1, [](OpContext& c) -> R {
                             const Tensor &x = c.t(0), &y = c.t(1);
                             std::string dir = c.attr_s("direction", "");
                             // 2**y, exact in float64 for every shift of a 64-bit int
                             Tensor pw = y.cast(dtypes::float64).exp2().cast(x.dtype());
                             if (dir == "LEFT") return {x * pw};
                             if (dir == "RIGHT") return {x.div(pw, false, std::string("floor"))};
                             c.invalid(cat("direction ", py_str_repr(dir)));
                           }});
  t["Where"].push_back({1, [](OpContext& c) -> R { return {c.t(0).bool_().where(c.t(1), c.t(2))}; }});

  // *** variadic ***
  auto fold = [](const char* name, std::function<Tensor(const Tensor&, const Tensor&)> f, bool mean) {
    return [=](OpContext& c) -> R {
      std::vector<Tensor> xs = c.variadic();
      if (xs.empty()) c.invalid(cat(name, " needs at least one input"));
      Tensor acc = xs[0];
      for (size_t i = 1; i < xs.size(); i++) acc = f(acc, xs[i]);
      if (mean) acc = acc / static_cast<double>(xs.size());
      return {keep(acc, xs[0].dtype())};
    };
  };
  t["Max"].push_back({1, fold(
                             "Max", [](const Tensor& a, const Tensor& b) { return a.maximum(b); }, false)});
  t["Min"].push_back({1, fold(
                             "Min", [](const Tensor& a, const Tensor& b) { return a.minimum(b); }, false)});
  t["Sum"].push_back({1, fold(
                             "Sum", [](const Tensor& a, const Tensor& b) { return a + b; }, false)});
  t["Mean"].push_back({1, fold(
                              "Mean", [](const Tensor& a, const Tensor& b) { return a + b; }, true)});

  // *** casts ***
  t["Cast"].push_back({1, [](OpContext& c) -> R {
                         if (!c.has_attr("to")) c.invalid("the attribute 'to' is required");
                         return {c.t(0).cast(dtype_parse(static_cast<int32_t>(c.attr_i("to", 0))))};
                       }});
  t["CastLike"].push_back({1, [](OpContext& c) -> R { return {c.t(0).cast(c.t(1).dtype())}; }});

  // *** reductions ***
  auto sum = [](const Tensor& x, std::vector<int64_t> ax, bool k) { return x.sum(std::move(ax), k); };
  auto sq = [](const Tensor& x) { return x.square(); };
  reduce_op(
      t, "ReduceMax", nullptr, [](const Tensor& x, std::vector<int64_t> ax, bool k) { return x.max(ax, k); }, nullptr);
  reduce_op(
      t, "ReduceMin", nullptr, [](const Tensor& x, std::vector<int64_t> ax, bool k) { return x.min(ax, k); }, nullptr);
  reduce_op(t, "ReduceSum", nullptr, sum, nullptr);
  reduce_op(
      t, "ReduceMean", nullptr, [](const Tensor& x, std::vector<int64_t> ax, bool k) { return x.mean(ax, k); },
      nullptr);
  reduce_op(
      t, "ReduceProd", nullptr, [](const Tensor& x, std::vector<int64_t> ax, bool k) { return x.prod(ax, k); },
      nullptr);
  reduce_op(t, "ReduceSumSquare", sq, sum, nullptr);
  reduce_op(
      t, "ReduceL1", [](const Tensor& x) { return x.abs(); }, sum, nullptr);
  reduce_op(t, "ReduceL2", sq, sum, [](const Tensor& x) { return x.sqrt(); });
  reduce_op(t, "ReduceLogSum", nullptr, sum, [](const Tensor& x) { return x.log(); });
  reduce_op(
      t, "ReduceLogSumExp", nullptr,
      [](const Tensor& x, std::vector<int64_t> ax, bool k) { return x.logsumexp(ax, k); }, nullptr);
  t["ArgMax"].push_back({1, [](OpContext& c) -> R { return {argmax(c, c.t(0))}; }});
  t["ArgMin"].push_back({1, [](OpContext& c) -> R {
                           const Tensor& x = c.t(0);
                           // -x of an unsigned or bool tensor wraps: compare through a signed copy
                           Tensor s = dtypes::is_float(x.dtype()) ? x : x.cast(dtypes::int64);
                           return {argmax(c, -s)};
                         }});
  t["CumSum"].push_back({1, [](OpContext& c) -> R {
                           Tensor x = c.t(0);
                           int64_t axis = norm_axis(c, c.int_(1), x.ndim());
                           bool reverse = c.attr_i("reverse", 0) != 0, exclusive = c.attr_i("exclusive", 0) != 0;
                           if (reverse) x = x.flip({axis});
                           if (exclusive) {
                             Mask p(static_cast<size_t>(x.ndim()), {0, 0}), s;
                             p[static_cast<size_t>(axis)] = {1, 0};
                             for (int64_t d : ishape(x)) s.push_back({0, d});
                             x = x.pad(p).shrink(s);
                           }
                           Tensor y = x.cumsum(axis);
                           return {keep(reverse ? y.flip({axis}) : y, c.t(0).dtype())};
                         }});
}

void add_movement_ops(OpTable& t) {
  t["Reshape"].push_back({1, [](OpContext& c) -> R {
                            const Tensor& x = c.t(0);
                            std::vector<int64_t> shape =
                                c.has(1) ? c.ints(1) : c.attr_ints("shape").value_or(std::vector<int64_t>{});
                            bool allowzero = c.attr_i("allowzero", 0) != 0;
                            std::vector<int64_t> xs = ishape(x);
                            Shape out;
                            for (size_t i = 0; i < shape.size(); i++) {
                              if (shape[i] == 0 && !allowzero) {
                                if (i >= xs.size()) c.invalid(cat("a 0 at dim ", i, " of ", xs.size()));
                                out.push_back(xs[i]);
                              } else
                                out.push_back(shape[i]);
                            }
                            return {x.reshape(out)};
                          }});
  t["Flatten"].push_back({1, [](OpContext& c) -> R {
                            const Tensor& x = c.t(0);
                            int64_t axis = c.attr_i("axis", 1);
                            if (axis < 0) axis += x.ndim();
                            if (axis < 0 || axis > x.ndim()) c.invalid(cat("axis ", axis, " for ", x.ndim(), " dims"));
                            std::vector<int64_t> xs = ishape(x);
                            int64_t a = 1, b = 1;
                            for (size_t i = 0; i < xs.size(); i++) (static_cast<int64_t>(i) < axis ? a : b) *= xs[i];
                            return {x.reshape({a, b})};
                          }});
  t["Expand"].push_back({1, [](OpContext& c) -> R {
                           const Tensor& x = c.t(0);
                           std::vector<int64_t> want = c.ints(1), xs = ishape(x);
                           size_t nd = std::max(want.size(), xs.size());
                           Shape padded(nd - xs.size(), 1), out(nd);
                           padded.insert(padded.end(), xs.begin(), xs.end());
                           for (size_t i = 0; i < nd; i++) {
                             int64_t a = padded[i], b = i < nd - want.size() ? 1 : want[i - (nd - want.size())];
                             if (a != b && a != 1 && b != 1)
                               c.invalid(cat("can't broadcast ", shape_str(x.shape()), " to ",
                                             shape_str(Shape(want.begin(), want.end()))));
                             out[i] = a == 1 ? b : a;
                           }
                           return {x.reshape(padded).expand(out)};
                         }});
  t["Transpose"].push_back({1, [](OpContext& c) -> R {
                              const Tensor& x = c.t(0);
                              std::vector<int64_t> perm = c.attr_ints("perm").value_or(std::vector<int64_t>{});
                              if (perm.empty())
                                for (int64_t i = x.ndim() - 1; i >= 0; i--) perm.push_back(i);
                              return {x.permute(perm)};
                            }});
  t["Squeeze"].push_back({1, [](OpContext& c) -> R {
                            Tensor x = c.t(0);
                            std::optional<std::vector<int64_t>> axes =
                                c.has(1) ? std::optional(c.ints(1)) : c.attr_ints("axes");
                            if (!axes) return {x.squeeze()};
                            std::vector<int64_t> ax;
                            for (int64_t a : *axes) ax.push_back(norm_axis(c, a, x.ndim()));
                            std::sort(ax.rbegin(), ax.rend());
                            for (int64_t a : ax) x = x.squeeze(a);
                            return {x};
                          }});
  t["Unsqueeze"].push_back({1, [](OpContext& c) -> R {
                              Tensor x = c.t(0);
                              std::vector<int64_t> axes =
                                  c.has(1) ? c.ints(1) : c.attr_ints("axes").value_or(std::vector<int64_t>{});
                              int64_t out_nd = x.ndim() + static_cast<int64_t>(axes.size());
                              std::vector<int64_t> ax;
                              for (int64_t a : axes) ax.push_back(norm_axis(c, a, out_nd));
                              std::sort(ax.begin(), ax.end());
                              for (int64_t a : ax) x = x.unsqueeze(a);
                              return {x};
                            }});
  t["Tile"].push_back({1, [](OpContext& c) -> R { return {c.t(0).repeat(c.ints(1))}; }});
  t["Concat"].push_back({1, [](OpContext& c) -> R {
                           std::vector<Tensor> xs = c.variadic();
                           if (xs.empty()) c.invalid("no inputs");
                           if (!c.has_attr("axis")) c.invalid("the attribute 'axis' is required");
                           int64_t axis = c.attr_i("axis", 0);
                           std::vector<Tensor> rest(xs.begin() + 1, xs.end());
                           return {xs[0].cat(rest, axis)};
                         }});
  t["Slice"].push_back({1, [](OpContext& c) -> R {  // opset 1-9: attributes
                          return {slice(c, c.t(0), c.attr_ints("starts").value_or(std::vector<int64_t>{}),
                                        c.attr_ints("ends").value_or(std::vector<int64_t>{}), c.attr_ints("axes"),
                                        std::nullopt)};
                        }});
  t["Slice"].push_back({10, [](OpContext& c) -> R {
                          return {slice(c, c.t(0), c.ints(1), c.ints(2),
                                        c.has(3) ? std::optional(c.ints(3)) : std::nullopt,
                                        c.has(4) ? std::optional(c.ints(4)) : std::nullopt)};
                        }});
  t["Split"].push_back({1, [](OpContext& c) -> R {
                          const Tensor& x = c.t(0);
                          int64_t axis = norm_axis(c, c.attr_i("axis", 0), x.ndim());
                          std::vector<int64_t> split;
                          if (c.has(1))
                            split = c.ints(1);
                          else if (auto a = c.attr_ints("split"))
                            split = *a;
                          if (split.empty()) {
                            int64_t n = c.attr_i("num_outputs", static_cast<int64_t>(c.num_outputs));
                            int64_t sz = ishape(x)[static_cast<size_t>(axis)];
                            if (n <= 0) c.invalid(cat("num_outputs ", n));
                            // ONNX's uneven split: pieces of ceil(sz / n), the last one smaller
                            int64_t piece = (sz + n - 1) / n;
                            for (int64_t i = 0, left = sz; i < n; i++, left -= piece)
                              split.push_back(std::max<int64_t>(0, std::min(piece, left)));
                          }
                          R out;
                          for (Tensor& p : x.split(split, axis)) out.emplace_back(std::move(p));
                          return out;
                        }});
  t["Pad"].push_back({1, [](OpContext& c) -> R {  // opset 2-10: pads and value are attributes
                        return {pad(c, c.t(0), c.attr_ints("pads").value_or(std::vector<int64_t>{}), std::nullopt,
                                    c.attr_s("mode", "constant"), c.attr_f("value", 0.0))};
                      }});
  t["Pad"].push_back({11, [](OpContext& c) -> R {
                        double value = c.has(2) ? c.float_(2) : 0.0;
                        return {pad(c, c.t(0), c.ints(1), c.has(3) ? std::optional(c.ints(3)) : std::nullopt,
                                    c.attr_s("mode", "constant"), value)};
                      }});
  t["Shape"].push_back({1, [](OpContext& c) -> R {
                          std::vector<int64_t> s = ishape(c.t(0));
                          auto n = static_cast<int64_t>(s.size());
                          auto clampi = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + n : v, 0, n); };
                          int64_t start = clampi(c.attr_i("start", 0)), end = clampi(c.attr_i("end", n));
                          std::vector<int64_t> out(s.begin() + start, s.begin() + std::max(start, end));
                          return {i64(out, c.device)};
                        }});
  t["Size"].push_back(
      {1, [](OpContext& c) -> R { return {Tensor(c.t(0).numel(), {.device = c.device, .dtype = dtypes::int64})}; }});
  t["Constant"].push_back({1, [](OpContext& c) -> R {
                             TensorOptions o{.device = c.device};
                             if (auto v = c.attr_t("value")) return {*v};
                             if (c.has_attr("value_float"))
                               return {Tensor(static_cast<float>(c.attr_f("value_float", 0)), o)};
                             if (auto v = c.attr_floats("value_floats")) {
                               std::vector<float> f(v->begin(), v->end());
                               return {Tensor(f, Shape{static_cast<int64_t>(f.size())}, o)};
                             }
                             o.dtype = dtypes::int64;
                             if (c.has_attr("value_int")) return {Tensor(c.attr_i("value_int", 0), o)};
                             if (auto v = c.attr_ints("value_ints")) return {i64(*v, c.device)};
                             c.unsupported(
                                 "only value, value_float(s) and value_int(s) are supported (not strings or "
                                 "sparse tensors)");
                           }});
  t["ConstantOfShape"].push_back({1, [](OpContext& c) -> R {
                                    std::vector<int64_t> shape = c.ints(0);
                                    std::optional<Tensor> v = c.attr_t("value");
                                    Tensor value = v ? v->reshape(Shape{})
                                                     : Tensor(0.0f, {.device = c.device, .dtype = dtypes::float32});
                                    Shape s(shape.begin(), shape.end());
                                    if (tg::prod(s) == 0)
                                      return {Tensor::empty(s, {.device = c.device, .dtype = value.dtype()})};
                                    return {value.reshape(Shape(s.size(), 1)).expand(s).contiguous()};
                                  }});
  t["Range"].push_back({1, [](OpContext& c) -> R {
                          DType dt = c.t(0).dtype();
                          if (dtypes::is_float(dt)) {
                            double start = c.float_(0), limit = c.float_(1), delta = c.float_(2);
                            return {Tensor::arange(start, limit, delta, {.device = c.device, .dtype = dt})};
                          }
                          int64_t start = c.int_(0), limit = c.int_(1), delta = c.int_(2);
                          if (delta == 0) c.invalid("a delta of 0");
                          int64_t n = std::max<int64_t>(0, (limit - start + delta + (delta > 0 ? -1 : 1)) / delta);
                          Tensor r = Tensor::arange(n, {.device = c.device, .dtype = dt});
                          return {r * delta + start};
                        }});
  t["EyeLike"].push_back(
      {1, [](OpContext& c) -> R {
         const Tensor& x = c.t(0);
         std::vector<int64_t> s = ishape(x);
         if (s.size() != 2) c.invalid(cat("input must be 2-D, got ", shape_str(x.shape())));
         DType dt = c.has_attr("dtype") ? dtype_parse(static_cast<int32_t>(c.attr_i("dtype", 1))) : x.dtype();
         int64_t k = c.attr_i("k", 0);
         Tensor r = Tensor::arange(s[0], {.device = c.device, .dtype = dtypes::int64}).reshape({s[0], 1});
         Tensor col = Tensor::arange(s[1], {.device = c.device, .dtype = dtypes::int64}).reshape({1, s[1]});
         return {(col - r == k).cast(dt)};
       }});
  t["Trilu"].push_back({1, [](OpContext& c) -> R {
                          int64_t k = c.has(1) ? c.int_(1) : 0;
                          return {c.attr_i("upper", 1) != 0 ? c.t(0).triu(k) : c.t(0).tril(k)};
                        }});
  t["OptionalHasElement"].push_back({1, [](OpContext& c) -> R {
                                       bool has = c.has(0) && (!std::holds_alternative<Tensor>(c.inputs[0]) ||
                                                               std::get<Tensor>(c.inputs[0]).numel() > 0);
                                       return {Tensor(has, {.device = c.device})};
                                     }});
  t["OptionalGetElement"].push_back({1, [](OpContext& c) -> R {
                                       if (!c.has(0)) return {Tensor::empty({0}, {.device = c.device})};
                                       return {c.inputs[0]};
                                     }});

  // *** gathers and scatters ***
  t["Gather"].push_back({1, [](OpContext& c) -> R {
                           const Tensor& x = c.t(0);
                           int64_t axis = norm_axis(c, c.attr_i("axis", 0), x.ndim());
                           Tensor idx = c.t(1);
                           int64_t dim = ishape(x)[static_cast<size_t>(axis)];
                           idx = (idx < 0).where(idx + dim, idx);
                           std::vector<Index> sel = full_slices(axis);
                           sel.push_back(Index(idx));
                           return {x.index(sel)};
                         }});
  t["GatherElements"].push_back({1, [](OpContext& c) -> R {
                                   const Tensor& x = c.t(0);
                                   int64_t axis = norm_axis(c, c.attr_i("axis", 0), x.ndim());
                                   Tensor idx = c.t(1);
                                   idx = (idx < 0).where(idx + ishape(x)[static_cast<size_t>(axis)], idx);
                                   return {x.gather(axis, idx)};
                                 }});
  t["GatherND"].push_back({1, [](OpContext& c) -> R {
                             Tensor x = c.t(0), idx = c.t(1);
                             int64_t b = c.attr_i("batch_dims", 0);
                             std::vector<int64_t> xs = ishape(x), is = ishape(idx);
                             int64_t k = is.back(), bn = 1;
                             for (int64_t i = 0; i < b; i++) bn *= xs[static_cast<size_t>(i)];
                             Shape xr{bn}, ir{bn};
                             xr.insert(xr.end(), xs.begin() + b, xs.end());
                             ir.insert(ir.end(), is.begin() + b, is.end());
                             x = x.reshape(xr), idx = idx.reshape(ir);
                             std::vector<Index> sel;
                             Shape bshape(ir.begin(), ir.end() - 1);
                             Shape ones(bshape.size(), 1);
                             ones[0] = bn;
                             sel.push_back(
                                 Index(Tensor::arange(bn, {.device = c.device}).reshape(ones).expand(bshape)));
                             for (int64_t j = 0; j < k; j++) {
                               Tensor ij = idx.shrink([&] {
                                                Mask m;
                                                for (size_t d = 0; d + 1 < ir.size(); d++) m.push_back({0, ir[d]});
                                                m.push_back({j, j + 1});
                                                return m;
                                              }())
                                               .squeeze(-1);
                               int64_t dim = xr[static_cast<size_t>(1 + j)];
                               sel.push_back(Index((ij < 0).where(ij + dim, ij)));
                             }
                             Tensor y = x.index(sel);
                             Shape out(xs.begin(), xs.begin() + b);
                             out.insert(out.end(), is.begin() + b, is.end() - 1);
                             out.insert(out.end(), xs.begin() + b + k, xs.end());
                             return {y.reshape(out)};
                           }});
  auto scatter_elements = [](OpContext& c) -> R {
    const Tensor& x = c.t(0);
    int64_t axis = norm_axis(c, c.attr_i("axis", 0), x.ndim());
    Tensor idx = c.t(1);
    idx = (idx < 0).where(idx + ishape(x)[static_cast<size_t>(axis)], idx);
    std::string red = c.attr_s("reduction", "none");
    if (red == "none") return {x.scatter(axis, idx, c.t(2))};
    std::string r = red == "add" ? "sum" : red == "mul" ? "prod" : red == "min" ? "amin" : red == "max" ? "amax" : "";
    if (r.empty()) c.unsupported(cat("reduction ", py_str_repr(red)));
    return {x.scatter_reduce(axis, idx, c.t(2), r)};
  };
  t["ScatterElements"].push_back({1, scatter_elements});
  t["Scatter"].push_back({1, scatter_elements});
  t["ScatterND"].push_back({1, [](OpContext& c) -> R {
                              Tensor x = c.t(0).contiguous();
                              const Tensor &idx = c.t(1), &upd = c.t(2);
                              std::string red = c.attr_s("reduction", "none");
                              std::vector<int64_t> is = ishape(idx), xs = ishape(x);
                              int64_t k = is.back(), n = 1;
                              for (size_t i = 0; i + 1 < is.size(); i++) n *= is[i];
                              // one update at a time, in order (later indices win), as ONNX's reference
                              std::vector<int64_t> flat = idx.cast(dtypes::int64).tolist<int64_t>();
                              Shape tail(xs.begin() + k, xs.end()), un{n};
                              un.insert(un.end(), tail.begin(), tail.end());
                              Tensor u = upd.reshape(un);
                              for (int64_t i = 0; i < n; i++) {
                                std::vector<Index> sel;
                                for (int64_t j = 0; j < k; j++) {
                                  int64_t v = flat[static_cast<size_t>(i * k + j)], d = xs[static_cast<size_t>(j)];
                                  if (v < -d || v >= d)
                                    c.invalid(cat("index ", v, " is out of range for dim ", j, " of size ", d));
                                  sel.push_back(Index(v < 0 ? v + d : v));
                                }
                                Tensor ui = u[i];
                                Tensor cur = x.index(sel);
                                if (red == "add")
                                  ui = cur + ui;
                                else if (red == "mul")
                                  ui = cur * ui;
                                else if (red == "max")
                                  ui = cur.maximum(ui);
                                else if (red == "min")
                                  ui = cur.minimum(ui);
                                else if (red != "none")
                                  c.unsupported(cat("reduction ", py_str_repr(red)));
                                x.setitem(sel, ui.cast(x.dtype()));
                              }
                              return {x};
                            }});
  t["Compress"].push_back({1, [](OpContext& c) -> R {
                             Tensor x = c.t(0);
                             std::optional<int64_t> axis;
                             if (c.has_attr("axis")) axis = c.attr_i("axis", 0);
                             if (!axis) x = x.flatten(), axis = 0;
                             int64_t a = norm_axis(c, *axis, x.ndim());
                             std::vector<int64_t> cond = c.ints(1), keep_idx;
                             for (size_t i = 0; i < cond.size(); i++)
                               if (cond[i] != 0) keep_idx.push_back(static_cast<int64_t>(i));
                             std::vector<Index> sel = full_slices(a);
                             sel.push_back(Index(i64(keep_idx, c.device)));
                             return {x.index(sel)};
                           }});
  t["OneHot"].push_back({1, [](OpContext& c) -> R {
                           Tensor idx = c.t(0).cast(dtypes::int64);
                           int64_t depth = static_cast<int64_t>(c.floats(1).at(0));
                           const Tensor& values = c.t(2);
                           int64_t axis = c.attr_i("axis", -1);
                           int64_t nd = idx.ndim() + 1;
                           axis = norm_axis(c, axis, nd);
                           idx = (idx < 0).where(idx + depth, idx);
                           Shape rs(static_cast<size_t>(nd), 1);
                           rs[static_cast<size_t>(axis)] = depth;
                           Tensor ar = Tensor::arange(depth, {.device = c.device, .dtype = dtypes::int64}).reshape(rs);
                           Tensor hot = idx.unsqueeze(axis) == ar;
                           return {hot.where(values[1], values[0])};
                         }});
  t["TopK"].push_back({1, [](OpContext& c) -> R {
                         auto [v, i] = c.t(0).topk(c.ints(1).at(0), {.dim = c.attr_i("axis", -1),
                                                                     .largest = c.attr_i("largest", 1) != 0,
                                                                     .sorted = c.attr_i("sorted", 1) != 0});
                         return {v, i.cast(dtypes::int64)};
                       }});
  t["DepthToSpace"].push_back(
      {1, [](OpContext& c) -> R {
         int64_t b = c.attr_i("blocksize", 0);
         bool crd = c.attr_s("mode", "DCR") == "CRD";
         return {c.t(0).rearrange(crd ? "b (c h1 w1) h w -> b c (h h1) (w w1)" : "b (h1 w1 c) h w -> b c (h h1) (w w1)",
                                  {{"h1", b}, {"w1", b}})};
       }});
  t["SpaceToDepth"].push_back(
      {1, [](OpContext& c) -> R {
         int64_t b = c.attr_i("blocksize", 0);
         return {c.t(0).rearrange("b c (h h1) (w w1) -> b (h1 w1 c) h w", {{"h1", b}, {"w1", b}})};
       }});
  t["ArrayFeatureExtractor"].push_back({1, [](OpContext& c) -> R {
                                          return {c.t(0).index({Ellipsis, Index(c.t(1))})};
                                        }});
}

}  // namespace tg::onnx
