#include "tg/tensor/tensor.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <ostream>
#include <unordered_map>
#include <unordered_set>

#include "tg/gradient/gradient.h"
#include "tg/runtime/buffers.h"
#include "tg/shape/uop_multi.h"
#include "tg/tensor/tensor_internal.h"

namespace tg {

struct TensorData {
  UOp uop;
  std::optional<bool> requires_grad;
  std::shared_ptr<TensorData> grad;
};

// *** the registry of live tensors, so a kernelize/realize can point every tensor at its new graph ***

namespace {
struct Registry {
  std::mutex mu;
  std::vector<std::weak_ptr<TensorData>> all;
  size_t next_sweep = 1024;
};
Registry& registry() {
  static auto* r = new Registry();
  return *r;
}
std::shared_ptr<TensorData> track(UOp uop, std::optional<bool> requires_grad) {
  auto d = std::make_shared<TensorData>(TensorData{std::move(uop), requires_grad, nullptr});
  auto& r = registry();
  std::lock_guard lock(r.mu);
  if (r.all.size() >= r.next_sweep) {  // drop dead entries now and then: amortized O(1)
    std::erase_if(r.all, [](auto& w) { return w.expired(); });
    r.next_sweep = std::max<size_t>(1024, r.all.size() * 2);
  }
  r.all.push_back(d);
  return d;
}

ConstValue read_host(const void* data, size_t i, DType host) {
  TG_CHECK(host.fmt() != 0, "unsupported host dtype ", host);
  return read_value(static_cast<const uint8_t*>(data) + i * static_cast<size_t>(host.itemsize()), host);
}
}  // namespace

std::string resolve_device(const std::optional<std::string>& device) {
  if (device && is_multi_device(*device)) {  // a tuple: each device canonicalized and opened
    std::vector<std::string> names = device_names(*device);
    for (std::string& d : names) d = resolve_device(d);
    return multi_device_name(names);
  }
  std::string d = Device::canonicalize(device ? std::string_view(*device) : std::string_view(Device::DEFAULT.str()));
  Device::get(d);
  return d;
}

// *** metadata ***

static thread_local const Metadata* current_metadata = nullptr;
MetadataScope::MetadataScope(const char* name) {
  if (current_metadata == nullptr) current_metadata = intern_metadata(name), owner_ = true;
}
MetadataScope::~MetadataScope() {
  if (owner_) current_metadata = nullptr;
}
const Metadata* MetadataScope::current() { return current_metadata; }
void MetadataScope::set_current(const Metadata* m) { current_metadata = m; }

// *** creation ***

Tensor::Tensor(const UOp& uop, TensorOptions opts) {
  TG_CHECK_AS(AssertionError, !opts.dtype || *opts.dtype == uop.dtype(),
              "dtype doesn't match, and casting isn't supported");
  std::string device = resolve_device(opts.device);  // as tinygrad: no device means Device::DEFAULT
  const std::optional<std::string> have = uop_device(uop);
  // onto a tuple of devices, a single device's UOp is copied whole to each (shard without an axis); from a tuple to
  // one device, gathered there
  TG_CHECK_AS(AssertionError, !have || !is_multi_device(*have) || !is_multi_device(device) || *have == device,
              "MultiLazyBuffer device mismatch, ", *have, " != ", device);
  UOp u = have == device ? uop : uop_copy_to_device(uop, device);
  d_ = track(std::move(u), opts.requires_grad);
}

Tensor tensor_from_uop(const UOp& u, std::optional<bool> requires_grad) { return Tensor(track(u, requires_grad)); }

Tensor Tensor::from_host(const void* data, size_t count, DType host, const Shape& shape, TensorOptions opts) {
  for (sint s : shape) TG_CHECK_AS(ValueError, s >= 0, "negative dimension in shape ", shape_str(shape));
  TG_CHECK_AS(ValueError, static_cast<sint>(count) == tg::prod(shape), "data has ", count, " elements but shape ",
              shape_str(shape), " needs ", tg::prod(shape));
  DType dtype = opts.dtype ? *opts.dtype : host;
  if (dtype == dtypes::bfloat16 || dtype == dtypes::fp8e4m3 || dtype == dtypes::fp8e5m2) {  // as tinygrad: via float
    TensorOptions o = opts;
    o.dtype = dtypes::float32;
    return from_host(data, count, host, shape, o).cast(dtype);
  }
  TG_CHECK(dtype.fmt() != 0, "can't create a tensor of ", dtype, " from host data");
  UOp buf = uop_new_buffer("PYTHON", static_cast<sint>(count), dtype);
  std::vector<uint8_t> bytes(count * static_cast<size_t>(dtype.itemsize()));
  for (size_t i = 0; i < count; i++)
    write_value(bytes.data() + i * static_cast<size_t>(dtype.itemsize()), dtype,
                truncate(dtypes::as_const(read_host(data, i, host), dtype), dtype));
  Buffer b = uop_buffer(buf);  // "fake realize": the host data is the PYTHON buffer's contents
  if (count > 0) b.allocate().copyin(bytes.data(), bytes.size());  // no data, no allocation (0-size is a const 0 later)
  return Tensor(uop_reshape(buf, shape), opts);
}

template <class T>
static Tensor from_list(std::initializer_list<T> data, TensorOptions opts, DType host) {
  std::vector<T> v(data);
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> b(v.begin(), v.end());
    return Tensor(b.data(), Shape{static_cast<sint>(b.size())},
                  TensorOptions{opts.device, opts.dtype ? opts.dtype : host, opts.requires_grad});
  } else {
    return Tensor(v, Shape{static_cast<sint>(v.size())},
                  TensorOptions{opts.device, opts.dtype ? opts.dtype : host, opts.requires_grad});
  }
}
Tensor::Tensor(std::initializer_list<int> data, TensorOptions opts) : Tensor(from_list(data, opts, dtypes::int32)) {}
Tensor::Tensor(std::initializer_list<float> data, TensorOptions opts)
    : Tensor(from_list(data, opts, dtypes::float32)) {}
Tensor::Tensor(std::initializer_list<double> data, TensorOptions opts)
    : Tensor(from_list(data, opts, dtypes::default_float)) {}  // python floats are the default float
Tensor::Tensor(std::initializer_list<bool> data, TensorOptions opts) : Tensor(from_list(data, opts, dtypes::bool_)) {}

static Tensor const_tensor(ConstValue v, DType default_dtype, TensorOptions opts) {
  DType dt = opts.dtype ? *opts.dtype : default_dtype;
  std::string device = resolve_device(opts.device);
  return tensor_from_uop(uop_const(dt, v, device, Shape{}), opts.requires_grad);
}
Tensor::Tensor(int v, TensorOptions opts) : Tensor(const_tensor(int64_t(v), dtypes::default_int, opts)) {}
Tensor::Tensor(int64_t v, TensorOptions opts) : Tensor(const_tensor(v, dtypes::default_int, opts)) {}
Tensor::Tensor(float v, TensorOptions opts) : Tensor(const_tensor(double(v), dtypes::default_float, opts)) {}
Tensor::Tensor(double v, TensorOptions opts) : Tensor(const_tensor(v, dtypes::default_float, opts)) {}
Tensor::Tensor(bool v, TensorOptions opts) : Tensor(const_tensor(v, dtypes::bool_, opts)) {}

static DType from_py(const ConstValue& v) {
  if (std::holds_alternative<bool>(v)) return dtypes::bool_;
  return std::holds_alternative<double>(v) ? dtypes::default_float : dtypes::default_int;
}

// A parameter is a leaf of its own. Identical constants are one node (two Tensor.ones(128), two LayerNorms'
// weights), so two tensors that require grad may hold the same graph: the gradient would then be the one node's,
// both uses summed, and each step would keep them tied. A tensor that comes to require grad while another live
// tensor holds its constant graph gets the value in a buffer of its own (an ASSIGN into a new buffer, realized with
// its first use). A graph that reads a buffer or a Variable is left alone: its gradient flows on to what it reads.
// (The reference, 0.10.3, ties such parameters: its BERT training step has 346 kernels where untied ones take 404.)
static void own_leaf_if_shared(TensorData& d) {
  if (!d.requires_grad.value_or(false)) return;
  std::optional<std::string> dev = uop_device(d.uop);
  if (!dev || is_multi_device(*dev) || !dtypes::is_float(d.uop.dtype())) return;
  for (const UOp& x : d.uop.toposort())
    if (x.op() == Ops::BUFFER || x.op() == Ops::DEFINE_VAR) return;
  if (live_tensors_holding(d.uop) <= 1) return;
  const Shape& shape = uop_shape(d.uop);
  UOp target = uop_reshape(uop_new_buffer(*dev, tg::prod(shape), d.uop.dtype()), shape);
  d.uop = UOp::make(Ops::ASSIGN, d.uop.dtype(), {target, d.uop});
}

Tensor Tensor::full(const Shape& shape, ConstValue fill, TensorOptions opts) {
  TG_META("full");
  Tensor t = const_tensor(fill, from_py(fill), opts);
  Tensor ret = t.reshape(Shape(shape.size(), 1)).expand(shape);
  own_leaf_if_shared(*ret.d_);  // a parameter made by full (requires_grad=True) is its own (see requires_grad_)
  return ret;
}
Tensor Tensor::zeros(const Shape& shape, TensorOptions opts) {
  TG_META("zeros");
  return full(shape, 0.0, opts);
}
Tensor Tensor::ones(const Shape& shape, TensorOptions opts) {
  TG_META("ones");
  return full(shape, 1.0, opts);
}
Tensor Tensor::empty(const Shape& shape, TensorOptions opts) {
  TG_META("empty");
  DType dt = opts.dtype ? *opts.dtype : dtypes::default_float;
  std::string device = resolve_device(opts.device);
  return Tensor(uop_new_buffer(device, tg::prod(shape), dt), TensorOptions{device, dt, opts.requires_grad})
      .reshape(shape);
}
Tensor Tensor::from_file(const std::string& path, TensorOptions opts) {
  TG_META("from_file");
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  uintmax_t nbytes = ec ? 0 : std::filesystem::file_size(abs, ec);
  TG_CHECK(!ec, "can't open ", py_str_repr(path), " as a tensor: ", ec.message());
  DType dt = opts.dtype ? *opts.dtype : dtypes::uint8;
  const auto n = static_cast<int64_t>(nbytes) / dt.itemsize();
  if (opts.device && n > 0) {  // host memory maps the file (copy-on-write): no copy, the page cache's pages are read
    std::string dev = Device::canonicalize(*opts.device);
    if (Device::get(dev).allocator->maps_files()) {
      UOp buf = uop_new_buffer(dev, n, dt);
      uop_set_buffer(buf, Buffer(dev, n, dt, BufferSpec{.file = abs.string()}, true));
      return Tensor(buf, TensorOptions{dev, dt, opts.requires_grad});
    }
  }
  std::string disk = "DISK:" + abs.string();
  Tensor t(uop_new_buffer(disk, n, dt), TensorOptions{disk, dt, opts.requires_grad});
  return opts.device ? t.to(*opts.device) : t;
}
Tensor Tensor::full_like(ConstValue fill, TensorOptions opts) const {
  TG_META("full_like");
  return full(
      shape(), fill,
      TensorOptions{opts.device ? opts.device : device(), opts.dtype ? opts.dtype : dtype(), opts.requires_grad});
}
Tensor Tensor::arange(int64_t stop, TensorOptions opts) {
  TG_META("arange");
  if (!opts.dtype) opts.dtype = dtypes::default_int;
  return arange(0.0, static_cast<double>(stop), 1.0, opts);
}
Tensor Tensor::arange(double start, double stop, double step, TensorOptions opts) {
  TG_META("arange");
  TG_CHECK(step != 0, "arange with step 0");
  DType dt = opts.dtype ? *opts.dtype : dtypes::default_float;
  double count = std::ceil((stop - start) / step);
  // the graph below holds n * (2n + 1) elements: 2^30 elements at most keeps that within an int64 (NaN fails too)
  TG_CHECK_AS(ValueError, count <= double(1 << 30), "arange of ", count, " elements (start=", start, ", stop=", stop,
              ", step=", step, ") is too long");
  int64_t n = static_cast<int64_t>(count);
  if (n <= 0) return Tensor(std::vector<float>{}, Shape{0}, TensorOptions{opts.device, dt, opts.requires_grad});
  // tinygrad's graph: a cumulative sum of `step` (sliding windows over a zero-padded copy, summed) + (start - step)
  Tensor steps = full({n}, dtypes::is_float(dt) ? ConstValue(step) : ConstValue(static_cast<int64_t>(step)),
                      TensorOptions{opts.device, dt, false});
  // row i of the (n, n) windows reads padded[i:i+n], i.e. n-1-i zeros and then steps[0..i]
  Tensor windows = steps.pad({{n - 1, 1}})
                       .reshape({1, 2 * n})
                       .expand({n + 1, 2 * n})
                       .reshape({(n + 1) * 2 * n})
                       .shrink({{0, n * (2 * n + 1)}})
                       .reshape({n, 2 * n + 1})
                       .shrink({{0, n}, {0, n}});
  Tensor cum = windows.sum(std::vector<int64_t>{1});
  Tensor start_minus_step =
      cum.scalar_like(dtypes::is_float(dt) ? ConstValue(start - step) : ConstValue(static_cast<int64_t>(start - step)));
  return (cum + start_minus_step).cast(dt);
}
Tensor Tensor::arange(const sint& start, const sint& stop, TensorOptions opts) {
  TG_META("arange");
  if (start.is_int() && stop.is_int()) {
    if (!opts.dtype) opts.dtype = dtypes::default_int;
    return arange(static_cast<double>(start.as_int()), static_cast<double>(stop.as_int()), 1.0, opts);
  }
  DType dt = opts.dtype ? *opts.dtype : dtypes::default_int;
  sint n = stop - start;
  TG_CHECK_AS(ValueError, tg::as_int((n.uop()).vmin()) > 0, "arange from ", start.str(), " to ", stop.str(),
              " can be empty; a symbolic arange needs stop > start for every value");
  // the same cumulative sum of ones as the int arange, over the symbolic length
  Tensor steps = full({n}, ConstValue(int64_t(1)), TensorOptions{opts.device, dt, false});
  Tensor windows = steps.pad({{n - 1, 1}})
                       .reshape({1, n * 2})
                       .expand({n + 1, n * 2})
                       .reshape({(n + 1) * (n * 2)})
                       .shrink({{0, n * (n * 2 + 1)}})
                       .reshape({n, n * 2 + 1})
                       .shrink({{0, n}, {0, n}});
  Tensor cum = windows.sum(std::vector<int64_t>{1});
  return (cum + cum.size_scalar(start - 1)).cast(dt);
}
Tensor Tensor::eye(int64_t n, std::optional<int64_t> m, TensorOptions opts) {
  TG_META("eye");
  TG_CHECK_AS(ValueError, n >= 0 && (!m || *m >= 0), "cannot have negative n=", n, ", m=", m ? *m : 0);
  Tensor x = ones({n, 1}, opts).pad({{0, 0}, {0, n}}).flatten().shrink({{0, n * n}}).reshape({n, n});
  if (!m) return x;
  return *m > n ? x.pad({{0, 0}, {0, *m - n}}) : x.shrink({{0, n}, {0, *m}});
}

// *** properties ***

const UOp& Tensor::uop() const { return d_->uop; }
Shape Tensor::shape() const { return uop_shape(d_->uop); }
DType Tensor::dtype() const { return d_->uop.dtype(); }
std::string Tensor::device() const { return uop_device_str(d_->uop); }

Tensor Tensor::to(std::string_view device) const {
  std::string d = resolve_device(std::string(device));
  if (this->device() == d) return *this;
  if (is_multi_device(d)) return shard(device_names(d));
  Tensor ret(uop(), TensorOptions{d, std::nullopt, requires_grad()});
  if (std::optional<Tensor> g = grad()) ret.set_grad(g->to(d));
  return ret;
}
Tensor& Tensor::to_(std::string_view device) {
  Tensor real = to(device);
  d_->uop = real.uop();
  set_grad(real.grad());
  return *this;
}
Tensor Tensor::shard(const std::vector<std::string>& devices, std::optional<int64_t> axis) const {
  TG_CHECK_AS(AssertionError, !is_multi_device(device()), "can't shard a MultiLazyBuffer (on ", device(), ")");
  const std::string d = resolve_device(multi_device_name(devices));
  UOp u = axis ? uop_shard(uop(), d, resolve_dim(*axis)) : uop_copy_to_device(uop(), d);
  return Tensor(u, TensorOptions{d, std::nullopt, requires_grad()});
}
Tensor& Tensor::shard_(const std::vector<std::string>& devices, std::optional<int64_t> axis) {
  return replace(shard(devices, axis));
}
std::optional<bool> Tensor::requires_grad() const { return d_->requires_grad; }

Tensor& Tensor::requires_grad_(bool v) {
  const bool was = d_->requires_grad.value_or(false);
  d_->requires_grad = v;
  if (v && !was) own_leaf_if_shared(*d_);
  return *this;
}
std::optional<Tensor> Tensor::grad() const {
  if (!d_->grad) return std::nullopt;
  return Tensor(d_->grad);
}
void Tensor::set_grad(std::optional<Tensor> g) { d_->grad = g ? g->d_ : nullptr; }

std::string Tensor::repr() const {
  const UOp& u = d_->uop;
  UOp base = uop_base(u);
  std::string what;
  if (base != u) {
    what = uop_st(u)->repr();
  } else {
    auto real = uop_realized(u);
    what = tg::cat("(", op_repr(u.op()), ", ", real ? real->repr() : "None", ")");
  }
  std::string dev = uop_device_str(u);
  return tg::cat("<Tensor <UOp ", dev, " ", shape_str(uop_shape(u)), " ", u.dtype().repr().substr(7), " ", what,
                 "> on ", dev, " with grad ", d_->grad ? d_->grad->uop.repr() : "None", ">");
}
std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.repr(); }

int64_t Tensor::resolve_dim(int64_t dim, bool extra) const {
  int64_t total = ndim() + (extra ? 1 : 0), hi = std::max<int64_t>(1, total);
  TG_CHECK_AS(IndexError, -hi <= dim && dim <= hi - 1, "dim=", dim, " out of range [", -hi, ", ", hi - 1,
              "] for shape ", shape_str(shape()));
  return dim < 0 ? dim + total : dim;
}

// *** applying uops ***

Tensor Tensor::apply_uop(UOp u, std::initializer_list<const Tensor*> inputs) const {
  bool any_true = false, any_none = false;
  for (const Tensor* t : inputs) {
    auto rg = t->d_->requires_grad;
    any_true |= rg.value_or(false);
    any_none |= !rg.has_value();
  }
  std::optional<bool> rg = any_true ? std::optional<bool>(true) : any_none ? std::nullopt : std::optional<bool>(false);
  if (no_grad) rg = false;
  if (const Metadata* m = MetadataScope::current()) u.set_metadata(m);
  return tensor_from_uop(u, rg);
}

Tensor Tensor::scalar_like(ConstValue v) const {
  DType x = dtype(),
        y = (dtypes::is_float(x) || x.is_image() || (dtypes::is_int(x) && from_py(v) == dtypes::default_int))
                ? x
                : from_py(v);
  return Tensor(track(uop_const(y, dtypes::as_const(v, y), device(), Shape{}), false));
}

Tensor Tensor::from_bind(const UOp& bind, const std::optional<std::string>& device) {
  TG_CHECK_AS(ValueError,
              bind.op() == Ops::BIND && bind.src(0).op() == Ops::DEFINE_VAR && bind.src(1).op() == Ops::CONST,
              "can't create a Tensor from UOp ", bind.render(), ": only a bound Variable");
  UOp c = uop_const(bind.dtype(), bind.src(1).const_arg(), resolve_device(device), Shape{});
  UOp var = bind.src(0).replace(std::nullopt, std::nullopt, c.src());
  return Tensor(track(bind.replace(std::nullopt, std::nullopt, std::vector<UOp>{var, c}), false));
}
Tensor Tensor::size_scalar(const sint& v) const {
  if (v.is_int()) return scalar_like(ConstValue(v.as_int()));
  // the expression's nodes in order, each one's tensor from its sources' (no recursion)
  std::unordered_map<const UOpNode*, Tensor> t;
  for (const UOp& x : v.uop().toposort()) {
    auto src = [&](int i) -> const Tensor& { return t.at(x.src(i).get()); };
    switch (x.op()) {
      case Ops::BIND: t.emplace(x.get(), from_bind(x, device())); break;
      case Ops::CONST: t.emplace(x.get(), scalar_like(x.const_arg())); break;
      case Ops::ADD: t.emplace(x.get(), src(0) + src(1)); break;
      case Ops::MUL: t.emplace(x.get(), src(0) * src(1)); break;
      case Ops::MAX: t.emplace(x.get(), src(0).maximum(src(1))); break;
      case Ops::DEFINE_VAR: break;  // under its BIND
      default:
        throw Error(tg::cat("can't make a tensor of the size ", v.str(), ": ", op_repr(x.op()),
                            " is not a sum or product of bound Variables"));
    }
  }
  return t.at(v.uop().get()).cast(dtypes::is_float(dtype()) ? dtype() : dtypes::default_int);
}

static Shape broadcast_shape(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; i++) {
    sint x = i + a.size() >= n ? a[i + a.size() - n] : sint(1), y = i + b.size() >= n ? b[i + b.size() - n] : sint(1);
    // a size against 1 or itself is that size (smax would build max(1, x), whose simplified form of a symbolic x
    // may be another node than x: the expand to it then failed)
    out[i] = (x == 0 || y == 0) ? sint(0) : x == 1 || x == y ? y : y == 1 ? x : smax(x, y);
  }
  return out;
}

Tensor Tensor::broadcast_to(const Shape& new_shape) const {
  Shape s = shape();
  if (s == new_shape) return *this;
  TG_CHECK_AS(ValueError, s.size() <= new_shape.size(),
              "cannot broadcast tensor to fewer dimensions. shape=", shape_str(s),
              " to new_shape=", shape_str(new_shape));
  Shape aligned(new_shape.size() - s.size(), 1);
  aligned.insert(aligned.end(), s.begin(), s.end());
  for (size_t i = 0; i < aligned.size(); i++)
    TG_CHECK_AS(ValueError, aligned[i] == new_shape[i] || aligned[i] == 1, "cannot broadcast ", shape_str(s),
                " to new_shape=", shape_str(new_shape));
  Tensor r = reshape(aligned);
  return r.apply_uop(uop_expand(r.uop(), new_shape), {&r});
}

std::pair<Tensor, Tensor> Tensor::broadcasted(const Tensor& y_in, bool reverse, bool match_dtype) const {
  Tensor x = *this, y = y_in;
  if (match_dtype && x.dtype() != y.dtype()) {
    DType out = least_upper_dtype({x.dtype(), y.dtype()});
    x = x.cast(out), y = y.cast(out);
  }
  if (reverse) std::swap(x, y);
  Shape out = broadcast_shape(x.shape(), y.shape());
  return {x.broadcast_to(out), y.broadcast_to(out)};
}

Tensor Tensor::binop(Ops op, const Tensor& x, bool reverse) const {
  auto [a, b] = broadcasted(x, reverse);
  return a.apply_uop(a.uop().alu(op, {b.uop()}), {&a, &b});
}

// *** movement ***

Tensor Tensor::reshape(Shape new_shape) const {
  TG_META("reshape");
  Shape s = shape();
  int64_t inferred = std::count(new_shape.begin(), new_shape.end(), -1);
  TG_CHECK(inferred <= 1, "only one dimension can be inferred using -1, getting ", shape_str(new_shape));
  if (inferred) {
    sint known = 1;
    for (sint x : new_shape)
      if (x != -1) known *= x;
    TG_CHECK_AS(ValueError, known != 0 && tg::prod(s) % known == 0, "shape ", shape_str(new_shape),
                " is invalid for input of size ", tg::prod(s));
    for (sint& x : new_shape)
      if (x == -1) x = tg::prod(s) / known;
  }
  for (const sint& x : new_shape)
    TG_CHECK_AS(ValueError, x.is_sym() || x >= 0, "shape can't contain negative numbers ", shape_str(new_shape));
  auto now = [](const sint& x) { return bound_value(x).value_or(-1); };  // at the bound values: the same size
  TG_CHECK_AS(ValueError, !sym_ne(tg::prod(s), tg::prod(new_shape)) && now(tg::prod(s)) == now(tg::prod(new_shape)),
              "size mismatched, can't reshape self.shape=", shape_str(s), " -> new_shape=", shape_str(new_shape));
  if (new_shape == s) return *this;
  return apply_uop(uop_reshape(uop(), new_shape), {this});
}
Tensor Tensor::expand(Shape new_shape) const {
  TG_META("expand");
  Shape s = shape();
  TG_CHECK_AS(ValueError, new_shape.size() >= s.size(),
              "cannot broadcast tensor to fewer dimensions. shape=", shape_str(s),
              " to new_shape=", shape_str(new_shape));
  size_t off = new_shape.size() - s.size();
  for (size_t i = 0; i < new_shape.size(); i++)
    if (new_shape[i] == -1) {
      TG_CHECK_AS(ValueError, i >= off, "-1 in expand for a new dimension: ", shape_str(new_shape));
      new_shape[i] = s[i - off];
    }
  return broadcast_to(new_shape);
}
Tensor Tensor::permute(std::vector<int64_t> order) const {
  TG_META("permute");
  for (auto& o : order) o = resolve_dim(o);
  std::vector<int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  bool ok = static_cast<int64_t>(sorted.size()) == ndim();
  for (size_t i = 0; ok && i < sorted.size(); i++) ok = sorted[i] == static_cast<int64_t>(i);
  TG_CHECK(ok, "order is not a valid permutation, getting ", py_tuple(order), " for shape ", shape_str(shape()));
  return apply_uop(uop_permute(uop(), order), {this});
}
Tensor Tensor::flip(std::vector<int64_t> axes) const {
  TG_META("flip");
  std::vector<bool> f(static_cast<size_t>(std::max<int64_t>(ndim(), 1)), false);
  for (int64_t a : axes) {
    int64_t d = std::max<int64_t>(resolve_dim(a), 0);  // a 0-d tensor's dims 0 and -1 are one dim that isn't there
    TG_CHECK(!f[static_cast<size_t>(d)], "dim can appear at most once, getting ", py_tuple(axes));
    f[static_cast<size_t>(d)] = true;
  }
  f.resize(static_cast<size_t>(ndim()));
  return apply_uop(uop_flip(uop(), f), {this});
}
Tensor Tensor::shrink(const Mask& arg) const {
  TG_META("shrink");
  Shape s = shape();
  TG_CHECK_AS(AssertionError, arg.size() == s.size(), "invalid shrink of ", arg.size(), " dims for shape ",
              shape_str(s));
  bool noop = true;
  for (size_t i = 0; i < s.size(); i++) {
    // a symbolic bound is checked at its Variables' bound values (the reference doesn't check it)
    auto now = [](const sint& x) -> std::optional<int64_t> { return x.is_int() ? x.as_int() : bound_value(x); };
    auto b = now(arg[i].first), e = now(arg[i].second), n = now(s[i]);
    TG_CHECK_AS(AssertionError, !b || !e || !n || (0 <= *b && *b <= *e && *e <= *n), "invalid shrink (", arg[i].first,
                ", ", arg[i].second, ") on dim ", i, " of shape ", shape_str(s),
                b && e && n && !(arg[i].first.is_int() && arg[i].second.is_int() && s[i].is_int())
                    ? tg::cat(" (at the bound values: (", *b, ", ", *e, ") of ", *n, ")")
                    : "");
    noop &= arg[i] == std::pair<sint, sint>{0, s[i]};
  }
  return noop ? *this : apply_uop(uop_shrink(uop(), arg), {this});
}
Tensor Tensor::pad(const Mask& padding, ConstValue value) const {
  TG_META("pad");
  Shape s = shape();
  TG_CHECK(padding.size() == s.size(), "padding length ", padding.size(), " must match ndim ", s.size(), " of shape ",
           shape_str(s));
  bool negative = false, any = false;
  // a symbolic pad the bounds don't decide is taken as non-negative, as the reference's resolve(p >= 0) (a KV cache
  // padded by max_context - start_pos - T: negative only for positions past the cache)
  for (auto& [b, e] : padding) negative |= resolve_lt(b, 0, false) || resolve_lt(e, 0, false), any |= b != 0 || e != 0;
  if (!any) return *this;
  Tensor x = *this;
  Mask p = padding;
  if (negative) {  // negative padding shrinks first
    Mask sh;
    for (size_t i = 0; i < s.size(); i++) {
      sh.push_back({-std::min<sint>(p[i].first, 0), std::min<sint>(p[i].second + s[i], s[i])});
      p[i] = {std::max<sint>(p[i].first, 0), std::max<sint>(p[i].second, 0)};
    }
    x = x.shrink(sh);
  }
  Tensor padded = x.apply_uop(uop_pad(x.uop(), p), {&x});
  if (!as_bool(value)) return padded;
  Tensor ones = x.ones_like();
  Tensor mask = ones.apply_uop(uop_pad(ones.uop(), p), {&ones});
  return padded + mask.where(padded.scalar_like(int64_t(0)), padded.scalar_like(value));
}
Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const {
  TG_META("transpose");
  TG_CHECK_AS(IndexError, ndim() > 0, "can't transpose dims ", dim0, " and ", dim1, " of a 0-d tensor");
  std::vector<int64_t> order(static_cast<size_t>(ndim()));
  for (size_t i = 0; i < order.size(); i++) order[i] = static_cast<int64_t>(i);
  std::swap(order[static_cast<size_t>(resolve_dim(dim0))], order[static_cast<size_t>(resolve_dim(dim1))]);
  return permute(order);
}
Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  TG_META("flatten");
  Shape s = shape();
  size_t a = static_cast<size_t>(resolve_dim(start_dim)), b = static_cast<size_t>(resolve_dim(end_dim));
  if (s.empty()) return reshape({1});  // python slices of (): any dims give (1,)
  Shape ns(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(a));
  // eye(2^40) flattens (2^40, 2^40 + 1): too many for an int64 (prod says so)
  Shape merged;
  for (size_t i = a; i <= b && i < s.size(); i++) merged.push_back(s[i]);
  ns.push_back(tg::prod(merged));
  ns.insert(ns.end(), s.begin() + static_cast<std::ptrdiff_t>(std::min(b + 1, s.size())), s.end());
  return reshape(ns);
}
Tensor Tensor::squeeze(std::optional<int64_t> dim) const {
  TG_META("squeeze");
  Shape s = shape(), ns;
  if (!dim) {
    for (sint x : s)
      if (x != 1) ns.push_back(x);
    return reshape(ns);
  }
  int64_t d = resolve_dim(*dim);
  if (s.empty() || s[static_cast<size_t>(d)] != 1) return *this;
  s.erase(s.begin() + d);
  return reshape(s);
}
Tensor Tensor::unsqueeze(int64_t dim) const {
  TG_META("unsqueeze");
  int64_t d = resolve_dim(dim, true);
  Shape s = shape();
  s.insert(s.begin() + d, 1);
  return reshape(s);
}

// *** concatenation and bit casts ***

Tensor Tensor::cat(const std::vector<Tensor>& others, int64_t dim) const {
  TG_META("cat");
  int64_t d = resolve_dim(dim);
  TG_CHECK_AS(IndexError, ndim() > 0, "can't cat 0-d tensors: dim ", dim, " is out of range for shape ()");
  std::vector<Tensor> ts{*this};
  ts.insert(ts.end(), others.begin(), others.end());
  Shape s = shape();
  for (const Tensor& t : others) {
    Shape o = t.shape();
    bool ok = o.size() == s.size();
    for (size_t i = 0; ok && i < s.size(); i++) ok = static_cast<int64_t>(i) == d || o[i] == s[i];
    TG_CHECK_AS(AssertionError, ok, "cat: shape ", shape_str(o), " doesn't match ", shape_str(s), " outside dim ", d);
  }
  std::vector<sint> cum{0};
  for (const Tensor& t : ts) cum.push_back(cum.back() + t.shape()[static_cast<size_t>(d)]);
  std::optional<Tensor> out;
  for (size_t i = 0; i < ts.size(); i++) {  // each piece padded into place, then summed (as tinygrad)
    Mask pad(static_cast<size_t>(ts[i].ndim()), {0, 0});
    pad[static_cast<size_t>(d)] = {cum[i], cum.back() - cum[i + 1]};
    Tensor p = ts[i].pad(pad);
    out = out ? *out + p : p;
  }
  return *out;
}
Tensor Tensor::stack(const std::vector<Tensor>& tensors, int64_t dim) {
  TG_CHECK(!tensors.empty(), "stack needs at least one tensor");
  TG_META("stack");
  std::vector<Tensor> rest;
  for (size_t i = 1; i < tensors.size(); i++) rest.push_back(tensors[i].unsqueeze(dim));
  return tensors[0].unsqueeze(dim).cat(rest, dim);
}
DType uint_of_size(int bytes) {
  switch (bytes) {
    case 1: return dtypes::uint8;
    case 2: return dtypes::uint16;
    case 4: return dtypes::uint32;
    case 8: return dtypes::uint64;
    default: throw Error(tg::cat("no unsigned dtype of ", bytes, " bytes"));
  }
}
Tensor Tensor::bitcast(DType dt) const {
  TG_META("bitcast");
  TG_CHECK(!requires_grad().value_or(false), "can't backprop through bitcast");
  int ns = dt.itemsize(), os = dtype().itemsize();
  if (ns == os) return dtype() == dt ? *this : apply_uop(uop().bitcast(dt), {this});
  Shape s = shape();
  TG_CHECK(!s.empty() && (s.back() * os) % ns == 0, "unsupported size in bitcast from ", dtype(), " to ", dt,
           " for shape ", shape_str(s));
  if (is_disk(device())) return apply_uop(uop().bitcast(dt), {this});  // a file's bytes read as another dtype
  DType new_uint = uint_of_size(ns), old_uint = uint_of_size(os);
  Tensor tmp = bitcast(old_uint);
  if (ns > os) {  // merge `rate` old elements, little endian
    int rate = ns / os;
    Shape rs(s.begin(), s.end() - 1);
    rs.push_back(s.back() / rate), rs.push_back(rate);
    tmp = tmp.reshape(rs);
    std::optional<Tensor> acc;
    for (int i = 0; i < rate; i++) {
      Mask m;
      for (size_t k = 0; k + 1 < rs.size(); k++) m.push_back({0, rs[k]});
      m.push_back({i, i + 1});
      Tensor part = tmp.shrink(m).cast(new_uint) * (uint64_t(1) << (8 * i * os));
      acc = acc ? *acc + part : part;
    }
    return acc->squeeze(-1).bitcast(dt);
  }
  std::vector<Tensor> parts;  // split each element into os/ns smaller ones
  for (int i = 0; i < os / ns; i++) parts.push_back(tmp.rshift(8 * i * ns));
  return stack(parts, -1).flatten(-2).cast(new_uint).bitcast(dt);
}

// *** in place ***

Tensor& Tensor::replace(const Tensor& x, bool allow_shape_mismatch) {
  TG_CHECK_AS(AssertionError, allow_shape_mismatch || shape() == x.shape(), "replace shape mismatch ",
              shape_str(shape()), " != ", shape_str(x.shape()));
  d_->uop = x.uop();
  return *this;
}

// on DISK, assign writes x's bytes into the file now (tinygrad does the same): the range this tensor views is made a
// buffer (a view of the file's mapping) and x, realized on its own device, is copied into it
static Tensor& disk_assign(Tensor& self, const Tensor& x) {
  TG_CHECK_AS(AssertionError, self.dtype() == x.dtype(), "assign dtype mismatch ", self.dtype(), " != ", x.dtype());
  TG_CHECK_AS(AssertionError, broadcastable(x.shape(), self.shape()), "assign shape mismatch ", shape_str(self.shape()),
              " != ", shape_str(x.shape()));
  Tensor src = is_disk(x.device()) ? x.to("CPU") : x;
  std::vector<uint8_t> bytes = src.expand(self.shape()).data_bytes();
  Tensor target = self.contiguous();
  target.realize();
  UOp base = uop_base(target.uop());
  TG_ASSERT(base.op() == Ops::BUFFER, "a realized DISK range is not a buffer: ", base.op());
  if (!bytes.empty()) uop_buffer(base).ensure_allocated().copyin(bytes.data(), bytes.size());
  return self;
}

Tensor& Tensor::assign(const Tensor& x) {
  TG_META("assign");
  if (uop() == x.uop()) return *this;  // a self assign is a no-op
  if (is_disk(device())) return disk_assign(*this, x);
  TG_CHECK_AS(AssertionError, shape() == x.shape(), "assign shape mismatch ", shape_str(shape()),
              " != ", shape_str(x.shape()));
  TG_CHECK_AS(AssertionError, device() == x.device(), "assign device mismatch ", device(), " != ", x.device());
  TG_CHECK_AS(AssertionError, dtype() == x.dtype(), "assign dtype mismatch ", dtype(), " != ", x.dtype());
  UOp target = uop();
  // a realized tensor is its BUFFER, or a contiguous view (VIEW, RESHAPE) of the whole buffer
  bool whole_buffer = target.op() == Ops::BUFFER;
  if (UOp base = uop_base(target); !whole_buffer && base.op() == Ops::BUFFER && uop_size(base) == numel()) {
    const ShapeTracker* st = uop_st(target);
    whole_buffer = st != nullptr && st->contiguous() && target.src(0) == base;
  }
  if (whole_buffer) {
    // copy-on-write: a buffer that another live tensor also points at (graph dedup) is not written in place
    if (live_tensors_holding(target) > 1) target = uop_reshape(uop_new_buffer(device(), numel(), dtype()), shape());
  }
  d_->uop = UOp::make(Ops::ASSIGN, dtype(), {target, x.uop()});
  return *this;
}

// *** autograd ***

std::vector<Tensor> Tensor::gradient(const std::vector<Tensor>& targets, std::optional<Tensor> seed,
                                     bool materialize) const {
  TG_CHECK_AS(AssertionError, seed || shape().empty(),
              "when no gradient is provided, backward must be called on a scalar tensor, not ", shape_str(shape()));
  TG_CHECK(is_floating_point(), "only float Tensors have gradient, this one is ", dtype());
  for (const Tensor& t : targets)
    TG_CHECK(t.is_floating_point(), "only float Tensors have gradient, a target is ", t.dtype());
  if (!seed) seed = Tensor(1.0, TensorOptions{device(), dtype(), false});
  TG_CHECK(seed->shape() == shape(), "the gradient's shape ", shape_str(seed->shape()), " must match the tensor's ",
           shape_str(shape()));
  std::vector<UOp> target_uops;
  for (const Tensor& t : targets) target_uops.push_back(t.uop());
  auto grads = compute_gradient(uop(), seed->uop(), target_uops);
  std::vector<Tensor> out;
  for (size_t i = 0; i < targets.size(); i++) {
    auto it = grads.find(target_uops[i].get());
    UOp g;
    if (it != grads.end())
      g = it->second;
    else {
      TG_CHECK(materialize, "target ", i, " (shape ", shape_str(targets[i].shape()),
               ") is not in the graph of this tensor: no gradient flows to it");
      g = target_uops[i].const_like(ConstValue(int64_t(0)));
    }
    out.push_back(Tensor(g, TensorOptions{targets[i].device(), std::nullopt, std::nullopt}));
  }
  return out;
}

Tensor& Tensor::backward(std::optional<Tensor> seed) {
  std::unordered_set<const UOpNode*> in_graph;
  for (const UOp& u : uop().toposort()) in_graph.insert(u.get());
  std::vector<Tensor> need;
  {
    auto& r = registry();
    std::lock_guard lock(r.mu);
    for (auto& w : r.all)
      if (auto d = w.lock(); d && d->requires_grad.value_or(false) && in_graph.count(d->uop.get()))
        need.push_back(Tensor(std::move(d)));
  }
  std::vector<Tensor> grads = gradient(need, std::move(seed), true);
  for (size_t i = 0; i < need.size(); i++) {
    TG_ASSERT(grads[i].shape() == need[i].shape(), "grad shape ", shape_str(grads[i].shape()),
              " must match tensor shape ", shape_str(need[i].shape()));
    std::optional<Tensor> old = need[i].grad();
    need[i].set_grad(old ? *old + grads[i] : grads[i]);
  }
  return *this;
}

// *** graph replacement after kernelize/realize: every live tensor follows ***

void apply_map_to_tensors(const std::vector<std::pair<UOp, UOp>>& map, const char* name) {
  std::vector<std::shared_ptr<TensorData>> live;
  {
    auto& r = registry();
    std::lock_guard lock(r.mu);
    for (auto& w : r.all)
      if (auto d = w.lock()) live.push_back(std::move(d));
  }
  if (live.empty() || map.empty()) return;
  // only the graphs that hold a key change (tinygrad finds them walking up from the keys): one walk over the live
  // graphs marks the nodes that reach a key, without building anything, and stops at nodes older than every key
  // (UOpNode::seq: their graphs can't hold one). A model's live tensors are mostly its weights and their lazy
  // dequantizations, made at load (TinyLlama: 880 tensors, 6300 nodes), which a realize of one layer never touches:
  // substituting them all rebuilt each node's sources (2.5 ms a realize), walking them all took 2.2
  // A key that is only a constant's view (CONST 0.0 reshaped: interned, made once, old) is left out of `oldest`: its
  // image is the same value in another form, so an older graph that holds it keeps its form
  auto const_view = [](const UOp& k) {
    std::vector<const UOpNode*> todo{k.get()};
    while (!todo.empty()) {
      const UOpNode* n = todo.back();
      todo.pop_back();
      if (n->op != Ops::CONST && n->op != Ops::DEVICE && n->op != Ops::VIEW && !GroupOp::Movement.has(n->op))
        return false;
      for (const UOp& s : n->src) todo.push_back(s.get());
    }
    return true;
  };
  std::unordered_set<const UOpNode*> keys;
  uint64_t oldest = UINT64_MAX;
  for (const auto& [k, v] : map)
    if (k != v) {
      keys.insert(k.get());
      if (!const_view(k)) oldest = std::min(oldest, k.get()->seq);
    }
  if (keys.empty()) return;
  std::unordered_map<const UOpNode*, bool> reaches;    // node -> whether its graph holds a key
  std::vector<std::pair<const UOpNode*, bool>> stack;  // (node, its sources done)
  std::vector<size_t> touched;
  for (size_t i = 0; i < live.size(); i++) {
    stack.emplace_back(live[i]->uop.get(), false);
    while (!stack.empty()) {
      auto [n, done] = stack.back();
      stack.pop_back();
      if (!done) {
        if (reaches.count(n)) continue;
        if (n->seq < oldest) {
          reaches.emplace(n, false);
          continue;
        }
        stack.emplace_back(n, true);
        for (const UOp& s : n->src)
          if (!reaches.count(s.get())) stack.emplace_back(s.get(), false);
        continue;
      }
      bool r = keys.count(n) > 0;
      for (const UOp& s : n->src) r = r || reaches.at(s.get());
      reaches[n] = r;
    }
    if (reaches.at(live[i]->uop.get())) touched.push_back(i);
  }
  if (touched.empty()) return;
  // one bottom-up substitute over those graphs at once (tinygrad's _apply_map_to_tensors): a replacement is itself
  // searched for keys, so an intermediate value of the kernelize map (a node fused into a kernel) still ends at the
  // final form of its sources
  std::vector<UOp> roots;
  for (size_t i : touched) roots.push_back(live[i]->uop);
  UOp sink = UOp::sink(roots), new_sink = sink.substitute(map, name);
  if (new_sink == sink) return;
  for (size_t j = 0; j < touched.size(); j++) live[touched[j]]->uop = new_sink.src(j);
}

size_t live_tensors_holding(const UOp& u) {
  auto& r = registry();
  std::lock_guard lock(r.mu);
  size_t n = 0;
  for (auto& w : r.all)
    if (auto d = w.lock(); d && d->uop == u) n++;
  return n;
}

std::vector<UOp> pending_assign_uops() {
  std::vector<UOp> out;
  auto& r = registry();
  std::lock_guard lock(r.mu);
  for (auto& w : r.all)
    if (auto d = w.lock(); d && d->uop.op() == Ops::ASSIGN) out.push_back(d->uop);
  return out;
}

}  // namespace tg
