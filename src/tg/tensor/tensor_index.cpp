// Indexing (tinygrad's __getitem__ / __setitem__), gather, scatter, masked_select, sort and topk. Basic indices
// (ints, slices, None, ...) are movement ops; index tensors become one-hot masks that select by a sum, so an
// out-of-range index tensor value selects nothing (0), as in the reference.
#include <algorithm>

#include "tg/tensor/tensor_internal.h"

namespace tg {

Index::Index(const Tensor& t) : kind_(Kind::Tensor), tensor_(std::make_shared<const Tensor>(t)) {}
Index::Index(std::initializer_list<int64_t> list) : kind_(Kind::Tensor), list_(std::vector<int64_t>(list)) {}
Index::Index(std::vector<int64_t> list) : kind_(Kind::Tensor), list_(std::move(list)) {}
const Tensor& Index::as_tensor() const {
  TG_ASSERT(tensor_ != nullptr, "not a tensor index");
  return *tensor_;
}

namespace {

// a zero of t's dtype, as a scalar operand
Tensor zero_of(const Tensor& t) {
  return t.scalar_like(t.dtype() == dtypes::bool_ ? ConstValue(false) : ConstValue(int64_t(0)));
}

Shape broadcast_shapes(const std::vector<Shape>& shapes) {
  size_t n = 0;
  for (const Shape& s : shapes) n = std::max(n, s.size());
  Shape out(n, 1);
  for (const Shape& s : shapes)
    for (size_t i = 0; i < s.size(); i++) {
      sint& o = out[n - s.size() + i];
      TG_CHECK_AS(IndexError, s[i] == o || s[i] == 1 || o == 1, "cannot broadcast indices of shapes ", [&] {
        std::string r;
        for (const Shape& x : shapes) r += shape_str(x) + " ";
        return r;
      }());
      o = (o == 0 || s[i] == 0) ? sint(0) : smax(o, s[i]);
    }
  return out;
}

// python's slice.indices(size): start and stop clamped into the dim, defaults by the step's sign
std::pair<sint, sint> slice_bounds(const Slice& sl, sint size, int64_t step) {
  sint lower = step > 0 ? 0 : -1, upper = step > 0 ? size : size - 1;
  auto clamp = [&](const std::optional<sint>& v, sint dflt) {
    if (!v) return dflt;
    sint x = *v;
    if (x.is_sym() || size.is_sym()) return x;  // a symbolic bound is taken as it is (Tensor::shrink checks it)
    if (x < 0) return std::max(x + size, lower);
    return std::min(x, upper);
  };
  return {clamp(sl.start, step > 0 ? lower : upper), clamp(sl.stop, step > 0 ? upper : lower)};
}

struct ParsedIndex {
  Index::Kind kind = Index::Kind::None;
  sint size = 1;                 // of the result's dim (None: 1, int: collapsed)
  sint begin = 0, end = 1;       // the shrink of the source dim
  int64_t stride = 1;            // negative: flipped
  std::optional<Tensor> tensor;  // an index tensor, negatives wrapped
};

}  // namespace

bool broadcastable(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  for (size_t i = 0; i < from.size(); i++) {
    sint f = from[from.size() - 1 - i], t = to[to.size() - 1 - i];
    if (f != t && f != 1) return false;
  }
  return true;
}

// what getitem did: the basic part of an index is movement ops (shrink, flip, every stride-th element, drop ints /
// add Nones), index tensors follow
struct Tensor::IndexPlan {
  bool advanced = false;
};

// *** getitem ***

Tensor Tensor::getitem(std::vector<Index> indices, IndexPlan* plan) const {
  Shape s = shape();
  int64_t ellipses = 0, nones = 0;
  size_t fill_at = indices.size();
  for (size_t i = 0; i < indices.size(); i++) {
    if (indices[i].kind() == Index::Kind::Ellipsis) ellipses++, fill_at = i;
    nones += indices[i].kind() == Index::Kind::None;
  }
  TG_CHECK_AS(IndexError, ellipses <= 1, "indices can only have a single ellipsis");
  int64_t real = static_cast<int64_t>(indices.size()) - ellipses - nones;
  TG_CHECK_AS(IndexError, real <= ndim(), "too many indices: ", real, " for shape ", shape_str(s));
  if (ellipses) indices.erase(indices.begin() + static_cast<std::ptrdiff_t>(fill_at));
  indices.insert(indices.begin() + static_cast<std::ptrdiff_t>(fill_at), static_cast<size_t>(ndim() - real),
                 Index(Slice{}));

  std::vector<ParsedIndex> parsed;
  size_t dim = 0;
  for (const Index& index : indices) {
    ParsedIndex p;
    p.kind = index.kind();
    if (index.kind() == Index::Kind::None) {
      parsed.push_back(p);
      continue;
    }
    sint size = s[dim];
    if (index.kind() == Index::Kind::Int) {
      int64_t i = index.as_int();
      TG_CHECK_AS(IndexError, -size <= i && i < size, "index ", i, " is out of bounds for dim ", dim, " with size ",
                  size);
      p.begin = i < 0 ? i + size : sint(i), p.end = p.begin + 1;
    } else if (index.kind() == Index::Kind::Slice) {
      const Slice& sl = index.as_slice();
      p.stride = sl.step.value_or(1);
      TG_CHECK_AS(ValueError, p.stride != 0, "slice step cannot be 0 (dim ", dim, ")");
      // a step longer than the dim picks one element, as that dim's size + 1 does; no overflow below (INT64_MIN)
      bool sym = size.is_sym() || (sl.start && sl.start->is_sym()) || (sl.stop && sl.stop->is_sym());
      TG_CHECK_AS(ValueError, !sym || p.stride == 1, "a symbolic slice takes step 1, got ", p.stride, " (dim ", dim,
                  ")");
      if (!sym) {
        sint lim = size < INT64_MAX ? size + 1 : size;
        p.stride = std::clamp<int64_t>(p.stride, -lim, lim);
      }
      auto [b, e] = slice_bounds(sl, size, p.stride);
      if (!sym && e != b && (p.stride < 0) != (e < b))  // step and stop - start differ in sign
        b = e = 0;                                      // empty
      else if (p.stride < 0)
        std::tie(b, e) = std::pair{e + 1, b + 1};  // the same elements, then flipped
      p.begin = b, p.end = e, p.size = ceildiv(e - b, std::abs(p.stride));
    } else {
      Tensor t = index.as_list() ? Tensor(*index.as_list(), Shape{static_cast<sint>(index.as_list()->size())},
                                          TensorOptions{device(), dtypes::default_int, false})
                                 : index.as_tensor().to(device());
      TG_CHECK_AS(IndexError, dtypes::is_int(t.dtype()), "index dtype ", t.dtype(), " is not supported (dim ", dim,
                  ")");
      p.tensor = (t < 0).where(t + static_cast<int64_t>(size), t);
      p.size = size, p.end = size;
    }
    parsed.push_back(p);
    dim++;
  }

  // basic indexing: shrink, flip the negative strides, then take every stride-th element (pad to a multiple,
  // split each dim into (n, stride), keep the first of each)
  Tensor x = *this;
  Mask cut;
  std::vector<int64_t> flips, strides;
  for (const ParsedIndex& p : parsed) {
    if (p.kind == Index::Kind::None) continue;
    if (p.stride < 0) flips.push_back(static_cast<int64_t>(cut.size()));
    cut.push_back({p.begin, p.end});
    strides.push_back(std::abs(p.stride));
  }
  x = x.shrink(cut).flip(flips);
  if (std::any_of(strides.begin(), strides.end(), [](int64_t st) { return st != 1; })) {
    Shape xs = x.shape(), split, out;
    Mask pad, keep;
    for (size_t i = 0; i < xs.size(); i++) {
      sint n = ceildiv(xs[i], strides[i]);
      pad.push_back({0, n * strides[i] - xs[i]});
      split.insert(split.end(), {n, strides[i]});
      keep.insert(keep.end(), {{0, n}, {0, 1}});
      out.push_back(n);
    }
    x = x.pad(pad).reshape(split).shrink(keep).reshape(out);
  }
  Shape kept;  // ints drop their dim, None adds one
  for (const ParsedIndex& p : parsed)
    if (p.kind != Index::Kind::Int) kept.push_back(p.size);
  x = x.reshape(kept);

  // advanced indexing: a one-hot mask per index tensor over a broadcast of them all, the product selects, a sum
  // over the indexed dims collects
  std::vector<size_t> dims;
  std::vector<Tensor> tensors;
  size_t pos = 0;
  for (const ParsedIndex& p : parsed) {
    if (p.kind == Index::Kind::Int) continue;
    if (p.tensor) dims.push_back(pos), tensors.push_back(*p.tensor);
    pos++;
  }
  if (plan) plan->advanced = !dims.empty();
  if (dims.empty()) return x;
  std::vector<Shape> shapes;
  for (const Tensor& t : tensors) shapes.push_back(t.shape());
  Shape xs = x.shape(), big = broadcast_shapes(shapes);
  auto d0 = static_cast<std::ptrdiff_t>(dims[0]), nbig = static_cast<std::ptrdiff_t>(big.size());
  Shape pre(xs.begin(), xs.begin() + d0), spread(xs.begin(), xs.begin() + d0);  // (.., big, x[d0:]), (.., 1s, x[d0:])
  pre.insert(pre.end(), big.begin(), big.end());
  pre.insert(pre.end(), xs.begin() + d0, xs.end());
  spread.insert(spread.end(), big.size(), 1);
  spread.insert(spread.end(), xs.begin() + d0, xs.end());
  std::optional<Tensor> mask;
  std::vector<int64_t> sum_axis;
  for (size_t k = 0; k < dims.size(); k++) {
    Shape ts = tensors[k].shape();
    ts.insert(ts.end(), xs.size() - dims[0], 1);
    Tensor i = tensors[k].reshape(ts).broadcast_to(pre);
    Tensor m = one_hot_along_dim(i, xs[dims[k]], static_cast<int64_t>(dims[k]) - static_cast<int64_t>(xs.size()));
    mask = mask ? mask->bitwise_and(m) : m;
    sum_axis.push_back(static_cast<int64_t>(dims[k]) + nbig);
  }
  Tensor xr = x.reshape(spread);
  x = mask->where(xr, zero_of(xr)).sum_exact(sum_axis);
  bool adjacent = true;
  for (size_t k = 1; k < dims.size(); k++) adjacent &= dims[k] == dims[k - 1] + 1;
  if (d0 != 0 && !adjacent) {  // the reference moves the broadcast dims first when the index tensors are apart
    std::vector<int64_t> order;
    for (int64_t i = d0; i < d0 + nbig; i++) order.push_back(i);
    for (int64_t i = 0; i < d0; i++) order.push_back(i);
    for (int64_t i = d0 + nbig; i < x.ndim(); i++) order.push_back(i);
    x = x.permute(order);
  }
  return x;
}

Tensor Tensor::sum_exact(std::vector<int64_t> axis) const {
  return reduce(dtype() == dtypes::bool_ ? Ops::MAX : Ops::ADD, std::move(axis), false);
}

Tensor Tensor::index(const std::vector<Index>& indices) const {
  TG_META("__getitem__");
  return getitem(indices);
}
Tensor Tensor::operator[](const Index& index) const {
  TG_META("__getitem__");
  return getitem({index});
}

// *** setitem ***

Tensor Tensor::masked_setitem(const Tensor& values, const Tensor& mask) const {
  sint n = mask.shape().back();
  if (n == 0) return *this;
  // 1 + the last true position along the last dim, 0 where there is none; that position's value
  Tensor order = Tensor::arange(n, TensorOptions{device(), std::nullopt, false}) + 1;
  Tensor last = mask.where(order, zero_of(order)).max(-1);
  Tensor pick = last.unsqueeze(-1).eq(order);
  Tensor v = pick.where(values, zero_of(values)).sum_exact({-1});
  return (last > 0).where(v, *this);
}

Tensor& Tensor::setitem(const std::vector<Index>& indices, ConstValue v) {
  TG_META("__setitem__");
  std::string dev = is_disk(device()) ? std::string("CPU") : device();  // DISK holds no constants
  return setitem(indices, Tensor::full({}, v, TensorOptions{dev, dtype(), std::nullopt}));
}

Tensor& Tensor::setitem(const std::vector<Index>& indices, const Tensor& v) {
  TG_META("__setitem__");
  if (is_disk(device())) {  // the indexed range of the file is written at once (tinygrad's DISK setitem)
    realize();
    Tensor view = getitem(indices);
    view.assign(is_disk(v.device()) ? v : v.cast(dtype()));
    return *this;
  }
  const ShapeTracker* st = uop_st(uop());
  TG_CHECK(st != nullptr && st->contiguous(), "setitem target needs to be contiguous");
  TG_CHECK_AS(NotImplementedError, !requires_grad().value_or(false) && !v.requires_grad().value_or(false),
              "setitem with requires_grad is not supported");
  realize();
  bool shared = live_tensors_holding(uop()) > 1;  // before this function makes tensors of its own
  IndexPlan plan;
  Tensor view = getitem(indices, &plan);
  Shape rs = view.shape();
  Tensor value = v.to(device()).cast(dtype());
  TG_CHECK(broadcastable(value.shape(), rs), "can't set a value of shape ", shape_str(value.shape()),
           " to an index of shape ", shape_str(rs));
  value = value.broadcast_to(rs);
  if (numel() == 0 || tg::prod(rs) == 0) return *this;
  bool reads_self = false;  // a value that reads this buffer is computed before the write
  for (const UOp& u : value.uop().toposort()) reads_self |= u == uop_base(uop());
  if (reads_self) value = value.contiguous();
  if (!plan.advanced) {
    // the value is assigned to the view of this tensor's buffer (tinygrad's res.assign(v)): one kernel writes just
    // the indexed elements in place. A buffer another tensor also holds (graph dedup) is copied to its own first,
    // so the write is never a copy-on-write.
    if (shared) {
      assign(contiguous()).realize();
      view = getitem(indices);
    }
    tensor_from_uop(UOp::make(Ops::ASSIGN, dtype(), {view.uop(), value.uop()}), false).realize();
    return *this;
  }
  // advanced: the same index applied to 1 + the flat positions says which element each value goes to (0: an
  // out-of-range index, nothing), and a mask of (elements, values) picks the last value written to each element
  sint n = numel(), m = tg::prod(rs);
  TensorOptions ints{device(), std::nullopt, false};
  Tensor flat_pos = Tensor::arange(n, ints) + 1;
  Tensor target = flat_pos.reshape(shape()).getitem(indices).reshape({1, m});
  Tensor written = flatten().masked_setitem(value.reshape({1, m}), target.eq(flat_pos.reshape({n, 1})));
  assign(written.reshape(shape())).realize();
  return *this;
}

// *** gather and scatter ***

Tensor one_hot_along_dim(const Tensor& t, sint num_classes, int64_t dim) {
  TG_CHECK(dtypes::is_int(t.dtype()), "one-hot needs an int index tensor, got ", t.dtype());
  Shape s(static_cast<size_t>(t.ndim() - t.resolve_dim(dim)), 1);
  s[0] = num_classes;
  return t.eq(Tensor::arange(num_classes, TensorOptions{t.device(), std::nullopt, false}).reshape(s));
}

Tensor Tensor::gather(int64_t dim, const Tensor& index) const {
  TG_META("gather");
  TG_CHECK_AS(AssertionError, index.ndim() == ndim(), "self.ndim must equal index.ndim, got shapes ",
              shape_str(shape()), " and ", shape_str(index.shape()));
  TG_CHECK(ndim() > 0, "can't gather from a 0-d tensor");
  int64_t d = resolve_dim(dim);
  Shape s = shape(), is = index.shape();
  Mask cut;
  for (size_t k = 0; k < s.size(); k++) {
    TG_CHECK_AS(AssertionError, static_cast<int64_t>(k) == d || s[k] >= is[k], "gather: index shape ", shape_str(is),
                " exceeds shape ", shape_str(s), " at dim ", k);
    cut.push_back({0, static_cast<int64_t>(k) == d ? s[k] : is[k]});
  }
  // x[.., 1 at d, .., j] against index[..] == j, picked by a where (the reference multiplies by the mask, so an inf
  // or nan that isn't picked turns the sum into nan; here it doesn't)
  Tensor x = shrink(cut).unsqueeze(-1).transpose(-1, d);
  Tensor mask = one_hot_along_dim(index.to(device()).unsqueeze(-1), s[static_cast<size_t>(d)], -1);
  return mask.where(x, zero_of(x)).sum_exact({-1});
}

std::pair<Tensor, Tensor> Tensor::pre_scatter(int64_t dim, const Tensor& index, const Tensor& src) const {
  TG_CHECK_AS(AssertionError, index.ndim() == ndim() && src.ndim() == ndim(),
              "self, index and src need the same ndim, got shapes ", shape_str(shape()), ", ", shape_str(index.shape()),
              " and ", shape_str(src.shape()));
  TG_CHECK(ndim() > 0, "can't scatter into a 0-d tensor");
  int64_t d = resolve_dim(dim);
  Shape s = shape(), is = index.shape(), ss = src.shape();
  for (size_t k = 0; k < s.size(); k++)
    TG_CHECK_AS(AssertionError, (static_cast<int64_t>(k) == d || s[k] >= is[k]) && ss[k] >= is[k], "index shape ",
                shape_str(is), " must not exceed src shape ", shape_str(ss), " nor self shape ", shape_str(s),
                " outside dim ", d);
  TG_CHECK(dtype() == src.dtype(), "expect self.dtype=", dtype(), " to be equal to src.dtype=", src.dtype());
  // (self's shape, the index's extent along dim): src values and where they go, index position last
  Mask cut;
  for (sint x : is) cut.push_back({0, x});
  Tensor sv = src.shrink(cut);
  Shape e = sv.shape();
  e.push_back(s[static_cast<size_t>(d)]);
  sv = sv.unsqueeze(-1).expand(e).transpose(-1, d);
  Tensor mask = one_hot_along_dim(index.to(device()).unsqueeze(-1), s[static_cast<size_t>(d)], -1);
  mask = mask.transpose(-1, d);
  Mask pad;
  for (size_t k = 0; k < s.size(); k++) pad.push_back({0, static_cast<int64_t>(k) == d ? sint(0) : s[k] - is[k]});
  pad.push_back({0, 0});
  return {sv.pad(pad), mask.pad(pad)};
}

Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Tensor& src) const {
  TG_META("scatter");
  auto [values, mask] = pre_scatter(dim, index, src);
  return masked_setitem(values, mask);
}

Tensor Tensor::scatter(int64_t dim, const Tensor& index, ConstValue src, std::string_view reduce) const {
  TG_META("scatter");
  TG_CHECK_AS(TypeError, reduce.empty() || reduce == "add" || reduce == "multiply", "reduce=", reduce,
              " must be one of None, 'multiply', or 'add'");
  Tensor s = index.full_like(src, TensorOptions{device(), dtype(), std::nullopt});
  if (reduce == "add") return scatter_reduce(dim, index, s, "sum");
  if (reduce == "multiply") return scatter_reduce(dim, index, s, "prod");
  return scatter(dim, index, s);
}

Tensor Tensor::scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                              bool include_self) const {
  TG_META("scatter_reduce");
  TG_CHECK(reduce == "sum" || reduce == "prod" || reduce == "mean" || reduce == "amax" || reduce == "amin",
           "reduce=", reduce, " must be one of 'sum', 'prod', 'mean', 'amax', 'amin'");
  auto [values_, mask_] = pre_scatter(dim, index, src);
  Tensor values = values_, mask = mask_;  // named tensors: lambdas below capture them
  // the elements nothing is scattered to keep self; the others take `fill` in place of self without include_self
  Tensor untouched = mask.max(-1).logical_not();
  auto self_or = [&](ConstValue fill) { return include_self ? *this : untouched.where(*this, scalar_like(fill)); };
  auto masked = [&](ConstValue fill) { return mask.where(values, values.scalar_like(fill)); };
  if (reduce == "sum") return masked(int64_t(0)).sum(-1).add(self_or(int64_t(0)));
  if (reduce == "prod") return masked(int64_t(1)).prod(-1).mul(self_or(int64_t(1)));
  if (reduce == "amax") return masked(dtypes::min(dtype())).max(-1).maximum(self_or(dtypes::min(dtype())));
  if (reduce == "amin") return masked(dtypes::max(dtype())).min(-1).minimum(self_or(dtypes::max(dtype())));
  Tensor one = scalar_like(int64_t(1)), count = mask.where(one, zero_of(one)).sum(-1);
  count = count + (include_self ? one : untouched.where(one, zero_of(one)));
  return masked(int64_t(0)).sum(-1).add(self_or(int64_t(0))).div(count);
}

Tensor Tensor::masked_select(const Tensor& mask) const {
  TG_META("masked_select");
  TG_CHECK(dtypes::is_bool(mask.dtype()), "masked_select expects bool mask tensor, got ", mask.dtype());
  Tensor x = flatten();
  // the output's size depends on the mask's data: it is realized (as the reference's .item()), and the selected
  // positions are read with it, so the selection is one gather
  std::vector<bool> m = mask.to(device()).broadcast_to(shape()).flatten().tolist<bool>();
  std::vector<int32_t> at;
  for (size_t i = 0; i < m.size(); i++)
    if (m[i]) at.push_back(static_cast<int32_t>(i));
  if (at.empty()) return x.shrink({{0, 0}});
  return x.index({Tensor(at, Shape{static_cast<sint>(at.size())}, TensorOptions{device(), std::nullopt, false})});
}

// *** sorting ***

std::pair<Tensor, Tensor> Tensor::sort_ranked(int64_t dim, bool descending, std::optional<int64_t> k) const {
  TG_CHECK(ndim() > 0, "can't sort a 0-d tensor");
  int64_t d = resolve_dim(dim);
  auto ud = static_cast<size_t>(d);
  sint n = shape()[ud], out = k.value_or(n);
  TensorOptions ints{device(), std::nullopt, false};
  if (n == 0) return {*this, Tensor::zeros(shape(), TensorOptions{device(), dtypes::default_int, false})};
  // the rank of element i: the elements that go before it, and the equal ones before it (a stable sort)
  Tensor xi = unsqueeze(d + 1), xj = unsqueeze(d);
  Shape si(static_cast<size_t>(ndim()) + 1, 1), sj = si, sr = si;
  si[ud] = n, sj[ud + 1] = n, sr[ud] = out;
  Tensor ii = Tensor::arange(n, ints).reshape(si), jj = Tensor::arange(n, ints).reshape(sj);
  Tensor before = descending ? xj.gt(xi) : xj.lt(xi);
  Tensor rank = (before | (xj.eq(xi) & jj.lt(ii))).cast(dtypes::default_int).sum(d + 1);
  // output slot r takes the element of rank r
  Tensor pick = rank.unsqueeze(d).eq(Tensor::arange(out, ints).reshape(sr));
  Tensor values = pick.where(xj, zero_of(xj)).sum_exact({d + 1});
  Tensor indices = pick.where(jj, zero_of(jj)).sum_exact({d + 1});
  return {values, indices};
}

std::pair<Tensor, Tensor> Tensor::sort(int64_t dim, bool descending) const {
  TG_META("sort");
  return sort_ranked(dim, descending, std::nullopt);
}

std::pair<Tensor, Tensor> Tensor::topk(int64_t k, TopkOptions opts) const {
  TG_META("topk");
  TG_CHECK_AS(NotImplementedError, opts.sorted, "topk with sorted_=False is not supported");
  TG_CHECK(ndim() > 0, "can't topk a 0-d tensor");
  sint n = shape()[static_cast<size_t>(resolve_dim(opts.dim))];
  TG_CHECK_AS(ValueError, 0 <= k && k <= n, "selected index k=", k, " is out of range for dim ", opts.dim, " of size ",
              n);
  return sort_ranked(opts.dim, opts.largest, k);
}

}  // namespace tg
