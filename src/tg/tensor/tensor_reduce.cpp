// The Tensor's reductions (tinygrad's tensor.py reduce ops): sum, prod, max, min, mean, softmax and dot.
#include <algorithm>

#include "tg/tensor/tensor_internal.h"

namespace tg {

// *** reduce ***

Tensor Tensor::reduce(Ops op, std::vector<int64_t> axis, bool keepdim) const {
  if (axis.empty())
    for (int64_t i = 0; i < ndim(); i++) axis.push_back(i);
  for (auto& a : axis) a = resolve_dim(a);
  if (ndim() == 0) axis.clear();
  Tensor ret = apply_uop(uop_r(uop(), op, axis), {this});
  if (keepdim) return ret;
  Shape s = shape(), ns;
  for (size_t i = 0; i < s.size(); i++)
    if (std::find(axis.begin(), axis.end(), static_cast<int64_t>(i)) == axis.end()) ns.push_back(s[i]);
  return ret.reshape(ns);
}
Tensor Tensor::sum(std::vector<int64_t> axis, bool keepdim, std::optional<DType> acc) const {
  TG_META("sum");
  Tensor ret = cast(acc ? *acc : sum_acc_dtype(dtype())).reduce(Ops::ADD, std::move(axis), keepdim);
  return (!acc && (dtype() == dtypes::float16 || dtype() == dtypes::bfloat16)) ? ret.cast(dtype()) : ret;
}
Tensor Tensor::prod(std::vector<int64_t> axis, bool keepdim, std::optional<DType> acc) const {
  TG_META("prod");
  return cast(acc ? *acc : dtype()).reduce(Ops::MUL, std::move(axis), keepdim);
}
Tensor Tensor::max(std::vector<int64_t> axis, bool keepdim) const {
  TG_META("max");
  return reduce(Ops::MAX, std::move(axis), keepdim);
}
Tensor Tensor::min(std::vector<int64_t> axis, bool keepdim) const {
  TG_META("min");
  return inverse().max(std::move(axis), keepdim).inverse();
}
Tensor Tensor::mean(std::vector<int64_t> axis, bool keepdim) const {
  TG_META("mean");
  DType out = dtypes::is_float(dtype()) ? dtype() : dtypes::float32;
  Tensor num = cast(sum_acc_dtype(dtype())).sum(axis, keepdim);
  Shape s = shape(), r = sum(axis, true).shape();
  sint n = 1;
  for (size_t i = 0; i < s.size(); i++)
    if (s[i] != r[i]) n *= s[i];  // symbolic: its value at the bound Variables, as a tensor
  return num.div(num.size_scalar(n)).cast(out);
}
Tensor Tensor::softmax(int64_t axis, std::optional<DType> dt) const {
  TG_META("softmax");
  Tensor m = *this - max(axis, true).detach();
  if (dt) m = m.cast(*dt);
  Tensor e = m.exp();
  return e.div(e.sum(axis, true));
}
Tensor Tensor::log_softmax(int64_t axis, std::optional<DType> dt) const {
  TG_META("log_softmax");
  Tensor m = *this - max(axis, true).detach();
  if (dt) m = m.cast(*dt);
  return m - m.exp().sum(axis, true).log();
}

Tensor Tensor::dot(const Tensor& w, std::optional<DType> dt) const {
  TG_META("dot");
  int64_t dx = ndim(), dw = w.ndim();
  TG_CHECK(dx > 0 && dw > 0, "both tensors need to be at least 1D, got ", dx, "D and ", dw, "D");
  Shape xs = shape(), ws = w.shape();
  int64_t axis_w = -std::min<int64_t>(dw, 2);
  TG_CHECK(xs.back() == ws[static_cast<size_t>(dw + axis_w)], "cannot dot ", shape_str(xs), " and ", shape_str(ws));
  int64_t ones = std::min<int64_t>({dx - 1, dw - 1, 1});
  Shape nx(xs.begin(), xs.end() - 1);
  for (int64_t i = 0; i < ones; i++) nx.push_back(1);
  nx.push_back(xs.back());
  Shape nw(ws.begin(), ws.end() - std::min<int64_t>(dw, 2));
  for (int64_t i = 0; i < ones; i++) nw.push_back(1);
  nw.insert(nw.end(), ws.end() + axis_w, ws.end());
  Tensor x = reshape(nx), ww = w.reshape(nw).transpose(-1, axis_w);
  return (x * ww).sum(std::vector<int64_t>{-1}, false, dt).cast(dt ? *dt : least_upper_dtype({x.dtype(), ww.dtype()}));
}

}  // namespace tg
