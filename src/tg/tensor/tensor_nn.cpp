// The Tensor's [nn] group, part 1: reductions built from the primitive ones (any, var, argmax, cumsum ...), the nn
// functional methods (linear, norms, dropout, attention) and the losses (tinygrad's tensor.py).
#include <algorithm>
#include <cmath>
#include <limits>

#include "tg/tensor/tensor_internal.h"
#include "tg/tensor/tensor_nn_internal.h"

namespace tg {

// *** helpers shared with tensor_pool.cpp ***

namespace nn_detail {

std::vector<int64_t> as_tuple(const std::vector<int64_t>& v, size_t n, const char* what) {
  if (v.size() == 1) return std::vector<int64_t>(n, v[0]);
  TG_CHECK(v.size() == n, what, " needs 1 or ", n, " values, got ", py_tuple(v));
  return v;
}

std::vector<int64_t> resolve_pool_pads(const std::vector<int64_t>& padding, size_t dims, const Shape& shape) {
  if (padding.size() == 1) return std::vector<int64_t>(2 * dims, padding[0]);
  TG_CHECK_AS(ValueError, padding.size() == dims || padding.size() == 2 * dims,
              "Padding must be an int or a sequence of length ", dims, " or ", 2 * dims,
              ", but got padding=", py_tuple(padding), " for self.shape=", shape_str(shape), " with dims=", dims, ".");
  if (padding.size() == 2 * dims) return padding;
  std::vector<int64_t> flat;  // one value per dim, first dim first -> (before, after) pairs, last dim first
  for (size_t i = dims; i-- > 0;) flat.insert(flat.end(), {padding[i], padding[i]});
  return flat;
}

Mask flat_to_mask(const std::vector<int64_t>& pads, size_t ndim) {
  TG_CHECK(pads.size() % 2 == 0 && pads.size() / 2 <= ndim, "padding ", py_tuple(pads), " doesn't fit ", ndim, " dims");
  Mask m(ndim, {0, 0});
  for (size_t k = 0; k < pads.size() / 2; k++) m[ndim - 1 - k] = {pads[2 * k], pads[2 * k + 1]};
  return m;
}

}  // namespace nn_detail

using namespace nn_detail;

namespace {
// how many elements each output of a reduce over `axis` (empty: all) combines
sint reduced_count(const Tensor& t, const std::vector<int64_t>& axis) {
  Shape s = t.shape();
  std::vector<bool> r(s.size(), axis.empty());
  for (int64_t a : axis) {
    int64_t d = t.resolve_dim(a);                      // checks a; a 0-d tensor's dim -1 resolves to -1
    if (!s.empty()) r[static_cast<size_t>(d)] = true;  // 0-d: a count of 1
  }
  sint n = 1;
  for (size_t i = 0; i < s.size(); i++)
    if (r[i]) n *= s[i];
  return n;
}
void check_reduction(const std::string& reduction) {
  TG_CHECK_AS(ValueError, reduction == "mean" || reduction == "sum" || reduction == "none", "reduction='", reduction,
              "' must be one of ('mean', 'sum', 'none')");
}
}  // namespace

// *** reductions ***

Tensor Tensor::any(std::vector<int64_t> axis, bool keepdim) const {
  TG_META("any");
  return cast(dtypes::bool_).max(std::move(axis), keepdim);
}
Tensor Tensor::all(std::vector<int64_t> axis, bool keepdim) const {
  TG_META("all");
  return logical_not().any(std::move(axis), keepdim).logical_not();
}
Tensor Tensor::var(std::vector<int64_t> axis, bool keepdim, double correction) const {
  TG_META("var");
  Tensor squares = (*this - mean(axis, true)).square();
  sint count = reduced_count(*this, axis);
  if (count.is_sym()) {  // a symbolic axis: the count at the bound values, less an int correction
    TG_CHECK_AS(ValueError, correction == std::floor(correction), "var over the symbolic size ", count.str(),
                " needs an int correction, got ", correction);
    return squares.sum(axis, keepdim).div(squares.size_scalar(smax(0, count - static_cast<int64_t>(correction))));
  }
  double n = static_cast<double>(count.as_int());
  return squares.sum(axis, keepdim).div(squares.scalar_like(std::max(0.0, n - correction)));
}
Tensor Tensor::std(std::vector<int64_t> axis, bool keepdim, double correction) const {
  TG_META("std");
  return var(std::move(axis), keepdim, correction).sqrt();
}
std::pair<Tensor, Tensor> Tensor::var_mean(std::vector<int64_t> axis, bool keepdim, double correction) const {
  TG_META("var_mean");
  return {var(axis, keepdim, correction), mean(axis, keepdim)};
}
std::pair<Tensor, Tensor> Tensor::std_mean(std::vector<int64_t> axis, bool keepdim, double correction) const {
  TG_META("std_mean");
  return {std(axis, keepdim, correction), mean(axis, keepdim)};
}

Tensor Tensor::argmax(std::optional<int64_t> axis, bool keepdim) const {
  TG_META("argmax");
  if (!axis) return flatten().argmax(0);
  int64_t ax = resolve_dim(*axis);
  TG_CHECK_AS(IndexError, ndim() > 0, "argmax/argmin of a 0-d tensor along axis ", *axis);
  sint n = shape()[static_cast<size_t>(ax)];
  // the first max wins: the match with the largest countdown value n - i
  Shape rs(static_cast<size_t>(ndim() - ax), 1);
  rs[0] = n;
  Tensor countdown = arange(static_cast<double>(n), 0, -1, {device(), dtypes::default_int, false}).reshape(rs);
  Tensor idx = eq(max(ax, true)) * countdown;
  return (static_cast<int64_t>(n) - idx.max(ax, keepdim)).cast(dtypes::int32);
}
Tensor Tensor::argmin(std::optional<int64_t> axis, bool keepdim) const {
  TG_META("argmin");
  return inverse().argmax(axis, keepdim);
}

Tensor Tensor::logsumexp(std::vector<int64_t> axis, bool keepdim) const {
  TG_META("logsumexp");
  Tensor m = max(axis, true);
  Tensor ret = (*this - m).exp().sum(axis, keepdim).log();
  return ret + (keepdim ? m : m.reshape(ret.shape()));
}

Tensor Tensor::logcumsumexp(int64_t axis) const {
  TG_META("logcumsumexp");
  if (ndim() == 0 || numel() == 0) return *this;
  int64_t ax = resolve_dim(axis);
  Tensor x = transpose(ax, -1);
  sint last = x.shape().back();
  Tensor flat = x.reshape({-1, last});
  Tensor running_max = flat.cummax(-1).unsqueeze(-1);  // (rows, last, 1)
  Tensor rows = flat.unsqueeze(1).expand({flat.shape()[0], last, last});
  Tensor lower = Tensor::ones({last, last}, {device(), std::nullopt, false}).tril().unsqueeze(0);
  Tensor ret = ((rows - running_max).exp() * lower).sum(-1).log() + running_max.squeeze(-1);
  return ret.reshape(x.shape()).transpose(-1, ax);
}

// a cumulative op along axis: a pool of windows of the axis' size over a copy padded with the identity in front
Tensor Tensor::cumalu(int64_t axis_, Ops op, bool include_initial) const {
  int64_t axis = resolve_dim(axis_);
  sint n = shape()[static_cast<size_t>(axis)];
  TG_ASSERT(n != 0 && (op == Ops::ADD || op == Ops::MAX || op == Ops::MUL));
  Tensor t = transpose(axis, -1);
  Mask p(static_cast<size_t>(t.ndim()), {0, 0});
  p.back() = {n - (include_initial ? 0 : 1), include_initial ? -1 : 0};
  Tensor pooled = t.pad(p, identity_element(op, dtype())).pool({n});
  Tensor r = op == Ops::ADD ? pooled.sum(-1) : op == Ops::MAX ? pooled.max(-1) : pooled.prod(-1);
  return r.transpose(axis, -1);
}

// long axes go in two stages: a cumulative op within blocks of 256, then over the blocks' totals
Tensor Tensor::split_cumalu(int64_t axis, Ops op) const {
  int64_t ax = resolve_dim(axis);
  Shape sh = shape();
  if (ndim() == 0 || std::find(sh.begin(), sh.end(), 0) != sh.end()) return *this;
  const sint SPLIT = 256, s = sh[static_cast<size_t>(ax)];
  if (s <= SPLIT * 2) return cumalu(ax, op);
  Tensor t = transpose(ax, -1);
  Mask p(static_cast<size_t>(t.ndim()), {0, 0});
  p.back() = {ceildiv(s, SPLIT) * SPLIT - s, 0};
  t = t.pad(p, identity_element(op, dtype()));
  Shape blocks = t.shape();
  blocks.back() = blocks.back() / SPLIT;
  blocks.push_back(SPLIT);
  Tensor ret = t.reshape(blocks).cumalu(-1, op);
  Mask last;
  for (sint d : blocks) last.push_back({0, d});
  last.back() = {SPLIT - 1, SPLIT};
  Tensor base = ret.shrink(last).squeeze(-1).cumalu(ret.ndim() - 2, op, true);
  Shape bs = base.shape();
  bs.push_back(SPLIT);
  base = base.unsqueeze(-1).expand(bs);
  auto fix = [&](const Tensor& x) {
    Tensor f = x.flatten(-2);
    Mask m;
    for (sint d : f.shape()) m.push_back({0, d});
    m.back() = {f.shape().back() - s, f.shape().back()};
    return f.shrink(m).transpose(ax, -1);
  };
  Tensor a = fix(ret), b = fix(base);
  return op == Ops::ADD ? a + b : op == Ops::MAX ? a.maximum(b) : a * b;
}
Tensor Tensor::cumsum(int64_t axis) const {
  TG_META("cumsum");
  return split_cumalu(axis, Ops::ADD);
}
Tensor Tensor::cumprod(int64_t axis) const {
  TG_META("cumprod");
  return split_cumalu(axis, Ops::MUL);
}
Tensor Tensor::cummax(int64_t axis) const {
  TG_META("cummax");
  return split_cumalu(axis, Ops::MAX);
}

// *** nn functional ***

Tensor Tensor::linear(const Tensor& weight, const std::optional<Tensor>& bias, std::optional<DType> dt) const {
  TG_META("linear");
  if (dt) return cast(*dt).linear(weight.cast(*dt), bias ? std::optional<Tensor>(bias->cast(*dt)) : std::nullopt);
  Tensor x = weight.ndim() == 1 ? mul(weight) : dot(weight);
  return bias ? x.add(*bias) : x;
}

Tensor Tensor::layernorm(std::vector<int64_t> axis, double eps) const {
  TG_META("layernorm");
  Tensor y = *this - mean(axis, true);
  return y.mul(((y * y).mean(axis, true) + eps).rsqrt());
}

Tensor Tensor::batchnorm(const std::optional<Tensor>& weight, const std::optional<Tensor>& bias, const Tensor& mean,
                         const Tensor& invstd, std::vector<int64_t> axis) const {
  TG_META("batchnorm");
  Shape s = shape(), bshape(s.size(), 1);  // the stats broadcast along every axis but `axis`
  TG_CHECK_AS(IndexError, !s.empty() || axis.empty(), "batchnorm axis ", py_tuple(axis), " of a 0-d tensor");
  for (int64_t a : axis) bshape[static_cast<size_t>(resolve_dim(a))] = s[static_cast<size_t>(resolve_dim(a))];
  Tensor x = *this - mean.reshape(bshape);
  if (weight) x = x * weight->reshape(bshape);
  Tensor ret = x.mul(invstd.ndim() == static_cast<int64_t>(axis.size()) ? invstd.reshape(bshape) : invstd);
  return bias ? ret + bias->reshape(bshape) : ret;
}

Tensor Tensor::dropout(double p) const {
  TG_META("dropout");
  if (!training || p == 0) return *this;
  Tensor keep = rand_like({std::nullopt, dtypes::default_float, false}, false) >= p;
  return keep.contiguous().where(*this, scalar_like(int64_t(0))) / (1.0 - p);
}

Tensor Tensor::one_hot(int64_t num_classes) const {
  TG_META("one_hot");
  TG_CHECK(dtypes::is_int(dtype()), "expect integer dtype, getting dtype=", dtype());
  if (num_classes == -1) num_classes = (max().cast(dtypes::int64) + 1).item<int64_t>();
  TensorOptions o{device(), std::nullopt, std::nullopt};
  return one_hot_along_dim(unsqueeze(-1), num_classes).where(Tensor(1, o), Tensor(0, o));
}

Tensor Tensor::scaled_dot_product_attention(const Tensor& key, const Tensor& value,
                                            const std::optional<Tensor>& attn_mask, double dropout_p,
                                            bool is_causal) const {
  TG_META("scaled_dot_product_attention");
  Tensor qk = matmul(key.transpose(-2, -1), least_upper_dtype({dtype(), key.dtype(), dtypes::float32})) /
              std::sqrt(static_cast<double>(shape().back()));
  std::optional<Tensor> mask = attn_mask;
  if (is_causal) {
    TG_CHECK(!attn_mask, "cannot set attn_mask when is_causal=True");
    mask = qk.ones_like({device(), dtypes::bool_, false}).tril();
  }
  if (mask) {
    if (mask->dtype() == dtypes::bool_) {
      TensorOptions o{device(), std::nullopt, std::nullopt};
      mask = mask->where(Tensor(0.0, o), Tensor(-std::numeric_limits<double>::infinity(), o));
    }
    qk = qk + *mask;
  }
  return qk.cast(dtype()).softmax(-1).dropout(dropout_p).matmul(value);
}

// *** losses ***

Tensor Tensor::do_reduction(const std::string& reduction) const {
  check_reduction(reduction);
  return reduction == "mean" ? mean() : reduction == "sum" ? sum() : *this;
}

Tensor Tensor::binary_crossentropy(const Tensor& Y, const std::string& reduction) const {
  TG_META("binary_crossentropy");
  return (-Y * log() - (1 - Y) * (1 - *this).log()).do_reduction(reduction);
}

Tensor Tensor::binary_crossentropy_logits(const Tensor& Y, const std::string& reduction) const {
  TG_META("binary_crossentropy_logits");
  return (maximum(scalar_like(int64_t(0))) - Y * *this + (1 + abs().neg().exp()).log()).do_reduction(reduction);
}

Tensor Tensor::sparse_categorical_crossentropy(const Tensor& Y_in, const SparseCrossEntropyOptions& o) const {
  TG_META("sparse_categorical_crossentropy");
  TG_CHECK_AS(AssertionError, 0.0 <= o.label_smoothing && o.label_smoothing <= 1.0,
              "label_smoothing must be in [0.0, 1.0], got ", o.label_smoothing);
  check_reduction(o.reduction);
  TG_CHECK(ndim() >= 1, "sparse_categorical_crossentropy needs logits with a class axis, got shape ",
           shape_str(shape()));
  Tensor Y = Y_in.to(device());
  sint classes = shape().back();
  // the labels' shape and the logits' batch shape broadcast together, as the reference multiplies them (its data
  // parallel test has (128,) logits for (2,) labels)
  Shape ys = Y.shape(), batch = shape();
  batch.pop_back();
  for (size_t i = 1; i <= std::min(ys.size(), batch.size()); i++) {
    const sint &a = ys[ys.size() - i], &b = batch[batch.size() - i];
    TG_CHECK(a == b || a == 1 || b == 1, "sparse_categorical_crossentropy: labels of shape ", shape_str(ys),
             " don't broadcast with logits ", shape_str(shape()));
  }
  Tensor log_probs = log_softmax();
  Tensor loss_mask = o.ignore_index != -1 ? Y.ne(Y.scalar_like(o.ignore_index))
                                          : Y.ones_like({std::nullopt, dtypes::bool_, std::nullopt});
  Tensor counted = one_hot_along_dim(Y.flatten().reshape({-1, 1}), classes);
  ys.push_back(classes);
  Tensor y = (counted * loss_mask.reshape({-1, 1})).reshape(ys);
  Tensor smoothing = o.label_smoothing * (log_probs.mean(-1) * loss_mask);
  Tensor unreduced = (1 - o.label_smoothing) * (log_probs * y).sum(-1) + smoothing;
  // no Tensor::mean here: the ignored labels don't count
  if (o.reduction == "mean") return -(unreduced.sum() / loss_mask.sum());
  return -(o.reduction == "sum" ? unreduced.sum() : unreduced);
}

Tensor Tensor::cross_entropy(const Tensor& Y_in, const CrossEntropyOptions& o) const {
  TG_META("cross_entropy");
  TG_CHECK_AS(AssertionError, 0.0 <= o.label_smoothing && o.label_smoothing <= 1.0,
              "label_smoothing must be in [0.0, 1.0], got ", o.label_smoothing);
  TG_CHECK(ndim() >= 2, "cross_entropy needs logits of shape (N, C, ...), got ", shape_str(shape()));
  Tensor Y = Y_in.ndim() < 2 ? Y_in.one_hot(shape()[1]) : Y_in;
  Y = (1 - o.label_smoothing) * Y + o.label_smoothing / static_cast<double>(Y.shape()[1]);
  return (-log_softmax(1).mul(Y).sum(1)).do_reduction(o.reduction);
}

Tensor Tensor::nll_loss(const Tensor& Y, const std::optional<Tensor>& weight, const NllLossOptions& o) const {
  TG_META("nll_loss");
  check_reduction(o.reduction);
  TG_CHECK(ndim() >= 2, "nll_loss needs log-probabilities of shape (N, C, ...), got ", shape_str(shape()));
  Tensor w = Y.ones_like({std::nullopt, std::nullopt, false});
  if (weight) {  // weight[Y], as a one-hot sum: weight->index({Y}) costs a kernel more (7 here, 8 in the reference)
    TG_CHECK(weight->ndim() == 1, "nll_loss: weight must be 1-D, got shape ", shape_str(weight->shape()));
    w = (one_hot_along_dim(Y.unsqueeze(-1), weight->shape()[0]) * *weight).sum(-1, false, weight->dtype());
  }
  Tensor masked = o.ignore_index ? w * Y.ne(Y.scalar_like(*o.ignore_index)) : w;
  Tensor nll = -gather(1, Y.unsqueeze(1)).squeeze(1) * masked;
  return o.reduction == "mean" ? nll.sum() / masked.sum() : nll.do_reduction(o.reduction);
}

}  // namespace tg
