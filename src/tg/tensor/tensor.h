#pragma once
// Tensor: a lazy tensor whose every operation builds UOps (tinygrad's tensor.py). Nothing runs until realize().
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tg/shape/uop_shape.h"

namespace tg {

struct TensorOptions {
  std::optional<std::string> device = std::nullopt;  // default: Device::DEFAULT
  std::optional<DType> dtype = std::nullopt;  // default: from the data (int -> int32, float -> float32, bool -> bool)
  std::optional<bool> requires_grad = std::nullopt;  // None (default), true or false, as tinygrad's three states
};

struct TensorData;
class Tensor;
struct ScheduleItem;
struct ConvGrad;

// Optional arguments: a method with more than one or two optional knobs takes an options struct, written with
// designated initializers at the call site: t.conv2d(w, b, {.stride = {2}, .padding = {1}}). Tensors stay positional.
// *** [math] option structs ***
struct IsCloseOptions {  // isclose: |a - b| <= atol + rtol * |b|; NaNs equal with equal_nan
  double rtol = 1e-05;
  double atol = 1e-08;
  bool equal_nan = false;
};

// *** [movement] option structs ***
// Entries of Tensor::index / setitem (tinygrad's __getitem__ / __setitem__), read like Python's subscripts:
//   t[1, 0:5:2, None, ..., idx]  ->  t.index({1, Slice{0, 5, 2}, None, Ellipsis, idx})
//   t[::-1]  ->  t.index({Slice{.step = -1}}),  t[[0, 2]]  ->  t.index({{0, 2}})  (a braced list of ints is a list
//   index)
// An int (negative counts from the end) must be in range, else tg::Error naming the index, the dim and its size.
// A Tensor or list index is advanced (gather-like) indexing: several of them broadcast together; their dims go where
// the first one was when they are adjacent, else first (as the reference, which counts ints as basic indices, unlike
// numpy). NOTE: an out-of-range value in an index tensor selects 0 (and setitem ignores it), as in the reference.
struct Slice {  // python's start:stop:step; an open end is nullopt; start and stop can be bound Variables' sizes
  std::optional<sint> start = std::nullopt, stop = std::nullopt;
  std::optional<int64_t> step = std::nullopt;
};
struct NoneIndex {};      // a new axis of size 1 (Python's None)
struct EllipsisIndex {};  // full slices for the dims the other entries leave (Python's ...)
inline constexpr NoneIndex None{};
inline constexpr EllipsisIndex Ellipsis{};
class Index {
 public:
  enum class Kind { Int, Slice, None, Ellipsis, Tensor };
  Index(int64_t i) : kind_(Kind::Int), int_(i) {}  // every constructor is implicit: entries read as subscripts
  Index(Slice s) : kind_(Kind::Slice), slice_(s) {}
  Index(NoneIndex) : kind_(Kind::None) {}
  Index(EllipsisIndex) : kind_(Kind::Ellipsis) {}
  Index(const Tensor& t);                      // an int tensor
  Index(std::initializer_list<int64_t> list);  // a list of ints: an int tensor on the indexed tensor's device
  Index(std::vector<int64_t> list);
  Kind kind() const { return kind_; }
  int64_t as_int() const { return int_; }
  const Slice& as_slice() const { return slice_; }
  const std::vector<int64_t>* as_list() const { return list_ ? &*list_ : nullptr; }  // else a Tensor
  const Tensor& as_tensor() const;

 private:
  Kind kind_;
  int64_t int_ = 0;
  Slice slice_;
  std::optional<std::vector<int64_t>> list_;
  std::shared_ptr<const Tensor> tensor_;  // a pointer: Tensor is incomplete here
};
struct TopkOptions {
  int64_t dim = -1;
  bool largest = true;
  bool sorted = true;  // tinygrad's sorted_; false is not supported (as the reference)
};

// *** [nn] option structs ***
// Convolutions and pools work on any number of spatial dims (the trailing ones). stride, dilation and kernel_size
// hold one value for every spatial dim or one per dim; padding holds one value, one per spatial dim, or a
// (before, after) pair per dim in torch's flat order, last dim first: {left, right, top, bottom}.
struct Conv2dOptions {
  int64_t groups = 1;
  std::vector<int64_t> stride = {1};
  std::vector<int64_t> dilation = {1};
  std::vector<int64_t> padding = {0};
  std::optional<DType> dtype = std::nullopt;  // the accumulation dtype
};
struct ConvTranspose2dOptions {
  int64_t groups = 1;
  std::vector<int64_t> stride = {1};
  std::vector<int64_t> dilation = {1};
  std::vector<int64_t> padding = {0};
  std::vector<int64_t> output_padding = {0};
};
struct AvgPool2dOptions {
  std::vector<int64_t> kernel_size = {2, 2};
  std::vector<int64_t> stride = {};  // empty: the kernel size
  std::vector<int64_t> dilation = {1};
  std::vector<int64_t> padding = {0};
  bool ceil_mode = false;
  bool count_include_pad = true;
};
struct MaxPool2dOptions {
  std::vector<int64_t> kernel_size = {2, 2};
  std::vector<int64_t> stride = {};  // empty: the kernel size
  std::vector<int64_t> dilation = {1};
  std::vector<int64_t> padding = {0};
  bool ceil_mode = false;
};
struct MaxUnpool2dOptions {
  std::vector<int64_t> kernel_size = {2, 2};
  std::vector<int64_t> stride = {};  // empty: the kernel size
  std::vector<int64_t> dilation = {1};
  std::vector<int64_t> padding = {0};
  std::vector<int64_t> output_size = {};  // empty: from the pool's arguments; else its trailing dims are used
};
// losses: reduction is "mean", "sum" or "none"
struct SparseCrossEntropyOptions {
  int64_t ignore_index = -1;  // -1: no index is ignored
  double label_smoothing = 0.0;
  std::string reduction = "mean";
};
struct CrossEntropyOptions {
  std::string reduction = "mean";
  double label_smoothing = 0.0;
};
struct NllLossOptions {
  std::optional<int64_t> ignore_index = std::nullopt;
  std::string reduction = "mean";
};

// The outermost Tensor method of a call names the nodes it makes (tinygrad's _metadata_wrapper); the names are
// the reference's Python names, so kernels list the same metadata (['__add__'], ['sum', 'relu', '__matmul__']).
class MetadataScope {
 public:
  explicit MetadataScope(const char* name);
  ~MetadataScope();
  MetadataScope(const MetadataScope&) = delete;
  MetadataScope& operator=(const MetadataScope&) = delete;
  static const Metadata* current();
  // tinygrad's _METADATA.set(m): while m is set, every Tensor method records m instead of its own name (scopes only
  // name nodes when nothing is set); nullptr restores the methods' names. Per thread.
  static void set_current(const Metadata* m);

 private:
  bool owner_ = false;
};

class Tensor {
 public:
  // *** creation ***
  Tensor(std::initializer_list<int> data, TensorOptions opts = {});
  Tensor(std::initializer_list<float> data, TensorOptions opts = {});
  Tensor(std::initializer_list<double> data, TensorOptions opts = {});
  Tensor(std::initializer_list<bool> data, TensorOptions opts = {});
  template <class T>
  Tensor(const std::vector<T>& data, const Shape& shape, TensorOptions opts = {})
      : Tensor(from_host(data.data(), data.size(), host_dtype<T>(), shape, opts)) {}
  template <class T>
  Tensor(const T* data, const Shape& shape, TensorOptions opts = {})
      : Tensor(from_host(data, static_cast<size_t>(tg::prod(shape)), host_dtype<T>(), shape, opts)) {}
  explicit Tensor(int v, TensorOptions opts = {});
  explicit Tensor(int64_t v, TensorOptions opts = {});
  explicit Tensor(float v, TensorOptions opts = {});
  explicit Tensor(double v, TensorOptions opts = {});
  explicit Tensor(bool v, TensorOptions opts = {});
  explicit Tensor(const UOp& uop, TensorOptions opts = {});  // wraps a tensor-level UOp (tinygrad's Tensor(UOp))

  static Tensor full(const Shape& shape, ConstValue fill, TensorOptions opts = {});
  static Tensor zeros(const Shape& shape, TensorOptions opts = {});
  static Tensor ones(const Shape& shape, TensorOptions opts = {});
  static Tensor empty(const Shape& shape, TensorOptions opts = {});
  // a file as a 1-D tensor of its bytes read as opts.dtype (default uint8), on "DISK:<absolute path>" (tinygrad's
  // Tensor(pathlib.Path)): nothing is read until it is used; with opts.device, a lazy copy to that device, or where
  // that device's memory is the host's (CPU), the file mapped copy-on-write (BufferSpec::file): a realized tensor
  // whose pages are the page cache's until written, read without a copy. A missing or unreadable path is an Error
  // naming it.
  static Tensor from_file(const std::string& path, TensorOptions opts = {});
  static Tensor arange(int64_t stop, TensorOptions opts = {});
  static Tensor arange(double start, double stop, double step = 1, TensorOptions opts = {});
  // start..stop by 1 where either end is a bound Variable's size: of symbolic length (int dtype by default)
  static Tensor arange(const sint& start, const sint& stop, TensorOptions opts = {});
  static Tensor eye(int64_t n, std::optional<int64_t> m = {}, TensorOptions opts = {});
  Tensor full_like(ConstValue fill, TensorOptions opts = {}) const;

  // *** random: the reference's counter-based generator (threefry2x32), so a seed gives the same numbers every run ***
  static void manual_seed(uint64_t seed = 0);
  // threefry2x32 of the 64-bit counters (counts1:counts0) keyed by (key[1]:key[0]): the words, counts0's then counts1's
  static Tensor threefry_random_bits(const Tensor& key, const Tensor& counts0, const Tensor& counts1);
  // the generator's state per device (tinygrad's Tensor._device_seeds, _device_rng_counters): made by the first rand
  // on a device, emptied by manual_seed
  static const std::map<std::string, Tensor>& device_seeds();
  static const std::map<std::string, Tensor>& device_rng_counters();
  // uniform in [0, 1); contiguous=false leaves the bits unrealized, to fuse into their user (as dropout does)
  static Tensor rand(const Shape& shape, TensorOptions opts = {}, bool contiguous = true);
  static Tensor randn(const Shape& shape, TensorOptions opts = {});  // standard normal (Box-Muller)
  static Tensor uniform(const Shape& shape, double low = 0.0, double high = 1.0, TensorOptions opts = {});
  Tensor rand_like(TensorOptions opts = {}, bool contiguous = true) const;
  Tensor randn_like(TensorOptions opts = {}) const;
  Tensor zeros_like(TensorOptions opts = {}) const { return full_like(ConstValue(int64_t(0)), opts); }
  Tensor ones_like(TensorOptions opts = {}) const { return full_like(ConstValue(int64_t(1)), opts); }

  // *** properties ***
  const UOp& uop() const;
  Shape shape() const;
  DType dtype() const;
  std::string device() const;
  int64_t ndim() const { return static_cast<int64_t>(shape().size()); }
  int64_t numel() const { return tg::prod(shape()); }
  int64_t element_size() const { return dtype().itemsize(); }
  int64_t nbytes() const { return numel() * element_size(); }
  bool is_floating_point() const { return dtypes::is_float(dtype()); }
  std::optional<bool> requires_grad() const;
  Tensor& requires_grad_(bool v = true);
  std::optional<Tensor> grad() const;
  void set_grad(std::optional<Tensor> g);
  bool is(const Tensor& o) const { return d_ == o.d_; }  // one tensor (Python's `is`), not equal values
  std::string repr() const;  // <Tensor <UOp CPU (4,) int (<Ops.COPY: 7>, None)> on CPU with grad None>

  // *** devices ***
  // this tensor on device (canonicalized: "cpu" is "CPU"): itself when it is there, else a lazy copy (COPY) with the
  // same requires_grad, and its grad moved too (tinygrad's Tensor.to). A device that can't open is an Error naming
  // it, why, and the devices that are available.
  Tensor to(std::string_view device) const;
  Tensor& to_(std::string_view device);  // moves this tensor (and its grad) in place
  // Many devices (tinygrad's shard): a tuple of devices is one name, the devices joined by ',' ("CPU,CPU:1"; see
  // multi_device_name), which device() returns for a tensor on them. shard splits this tensor along axis into equal
  // parts, one per device (the axis must divide evenly); without an axis every device holds all of it, as
  // to("CPU,CPU:1") does. Ops on such tensors run on every device, a reduce over the split axis all-reduces
  // between them (RING), and reading the data gathers it on the first device.
  Tensor shard(const std::vector<std::string>& devices, std::optional<int64_t> axis = std::nullopt) const;
  Tensor& shard_(const std::vector<std::string>& devices, std::optional<int64_t> axis = std::nullopt);

  // *** elementwise ***
  Tensor cast(DType dt) const;
  Tensor contiguous() const;
  Tensor contiguous_backward() const;  // the forward as is; the gradient flowing back through it is made contiguous
  Tensor fuse() const;   // its inputs back to their CONTIGUOUS fused into one kernel (single-kernel softmax)
  Tensor clone() const;  // a new buffer holding this tensor's values (and a clone of its grad)
  Tensor detach() const;
  Tensor neg() const;
  Tensor logical_not() const;
  Tensor reciprocal() const;
  Tensor sqrt() const;
  Tensor rsqrt() const { return sqrt().reciprocal(); }
  Tensor exp() const;
  Tensor exp2() const;
  Tensor log() const;
  Tensor log2() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor relu() const;
  Tensor sigmoid() const;
  Tensor square() const;
  Tensor abs() const;
  Tensor sign() const;
  Tensor add(const Tensor& x, bool reverse = false) const;
  Tensor sub(const Tensor& x, bool reverse = false) const;
  Tensor mul(const Tensor& x, bool reverse = false) const;
  Tensor div(const Tensor& x, bool reverse = false) const;   // true division: ints divide as floats
  Tensor idiv(const Tensor& x, bool reverse = false) const;  // truncating integer division (tinygrad's //)
  Tensor mod(const Tensor& x, bool reverse = false) const;
  Tensor pow(const Tensor& x, bool reverse = false) const;
  template <Scalar T>
  Tensor pow(T x) const {
    MetadataScope m("pow");
    return pow(scalar_like(to_const(x)));
  }
  Tensor maximum(const Tensor& x) const;
  Tensor minimum(const Tensor& x) const;
  Tensor where(const Tensor& x, const Tensor& y) const;  // this is the condition
  Tensor lt(const Tensor& x) const;
  Tensor gt(const Tensor& x) const;
  Tensor ne(const Tensor& x) const;
  Tensor eq(const Tensor& x) const;
  Tensor le(const Tensor& x) const { return gt(x).logical_not(); }
  Tensor ge(const Tensor& x) const { return lt(x).logical_not(); }
  Tensor bitwise_and(const Tensor& x, bool reverse = false) const;
  Tensor bitwise_or(const Tensor& x, bool reverse = false) const;
  Tensor bitwise_xor(const Tensor& x, bool reverse = false) const;
  Tensor bitwise_not() const;
  Tensor lshift(int64_t bits) const;
  Tensor rshift(int64_t bits) const;
  Tensor clip(std::optional<ConstValue> min_, std::optional<ConstValue> max_) const;

  // a scalar operand becomes a const of this tensor's dtype when that keeps its kind (tinygrad's _broadcasted)
  Tensor scalar_like(ConstValue v) const;
  // a size as an operand: an int's const, or a symbolic size's value computed from its bound Variables (tinygrad's
  // Tensor.from_uop), e.g. mean's divisor over a symbolic axis
  Tensor size_scalar(const sint& v) const;
  // Tensor(Variable.bind(v)): a scalar holding the bound value, read by kernels as their Variable's argument
  static Tensor from_bind(const UOp& bind, const std::optional<std::string>& device = std::nullopt);

  // *** movement ***
  Tensor reshape(Shape shape) const;  // one -1 is inferred
  Tensor expand(Shape shape) const;   // -1 keeps a dim
  Tensor permute(std::vector<int64_t> order) const;
  Tensor flip(std::vector<int64_t> axes) const;
  // (before, after) per dim; the fill is a scalar operand (scalar_like): an int fill keeps an int tensor int
  Tensor pad(const Mask& padding, ConstValue value = 0.0) const;
  Tensor shrink(const Mask& arg) const;
  Tensor transpose(int64_t dim0 = 1, int64_t dim1 = 0) const;
  Tensor T() const { return transpose(); }
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor squeeze(std::optional<int64_t> dim = {}) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor cat(const std::vector<Tensor>& others, int64_t dim = 0) const;
  static Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
  Tensor bitcast(DType dt) const;  // reinterprets the bits; a size change splits or merges the last dim

  // *** reduce ***
  // no axis: all; dtype: the accumulation dtype (default: sum_acc_dtype, and half stays half)
  Tensor sum(std::vector<int64_t> axis = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;
  Tensor sum(int64_t axis, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const {
    return sum(std::vector<int64_t>{axis}, keepdim, dtype);
  }
  Tensor prod(std::vector<int64_t> axis = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;
  Tensor prod(int64_t axis, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const {
    return prod(std::vector<int64_t>{axis}, keepdim, dtype);
  }
  Tensor max(std::vector<int64_t> axis = {}, bool keepdim = false) const;
  Tensor max(int64_t axis, bool keepdim = false) const { return max(std::vector<int64_t>{axis}, keepdim); }
  Tensor min(std::vector<int64_t> axis = {}, bool keepdim = false) const;
  Tensor min(int64_t axis, bool keepdim = false) const { return min(std::vector<int64_t>{axis}, keepdim); }
  Tensor mean(std::vector<int64_t> axis = {}, bool keepdim = false) const;
  Tensor mean(int64_t axis, bool keepdim = false) const { return mean(std::vector<int64_t>{axis}, keepdim); }
  Tensor softmax(int64_t axis = -1, std::optional<DType> dtype = std::nullopt) const;
  Tensor log_softmax(int64_t axis = -1, std::optional<DType> dtype = std::nullopt) const;
  Tensor dot(const Tensor& w, std::optional<DType> dtype = std::nullopt) const;
  Tensor matmul(const Tensor& w, std::optional<DType> dtype = std::nullopt) const {
    MetadataScope m("matmul");
    return dot(w, dtype);
  }

  // *** [math] unary math, activations, more binary ops, casting shorthands, more creation/random (tensor_math.cpp) ***
  // creation and random (tinygrad's names and defaults; dtype/device/requires_grad through TensorOptions)
  static Tensor linspace(double start, double stop, int64_t steps, TensorOptions opts = {});  // float32 by default
  static Tensor randint(const Shape& shape, int64_t low = 0, int64_t high = 10, TensorOptions opts = {});  // int32
  static Tensor normal(const Shape& shape, double mean = 0.0, double std = 1.0, TensorOptions opts = {});
  static Tensor scaled_uniform(const Shape& shape, TensorOptions opts = {});  // U(-1, 1) / sqrt(prod(shape))
  static Tensor glorot_uniform(const Shape& shape, TensorOptions opts = {});
  static Tensor kaiming_uniform(const Shape& shape, double a = 0.01, TensorOptions opts = {});
  static Tensor kaiming_normal(const Shape& shape, double a = 0.01, TensorOptions opts = {});
  static Tensor randperm(int64_t n, TensorOptions opts = {});  // int32 by default; the stable argsort of rand(n)
  Tensor multinomial(int64_t num_samples = 1, bool replacement = false) const;  // int32 indices, 1D or 2D weights
  Tensor empty_like(TensorOptions opts = {}) const;

  // unary math
  Tensor tan() const;
  Tensor asin() const;
  Tensor acos() const;
  Tensor atan() const;
  Tensor trunc() const;  // through int32, as the reference
  Tensor ceil() const;
  Tensor floor() const;
  Tensor round() const;  // half to even
  Tensor isinf(bool detect_positive = true, bool detect_negative = true) const;
  Tensor isnan() const;
  Tensor isfinite() const;
  Tensor lerp(const Tensor& end, const Tensor& weight) const;
  Tensor lerp(const Tensor& end, double weight) const;
  Tensor clamp(std::optional<ConstValue> min_, std::optional<ConstValue> max_) const;  // clip

  // activations
  Tensor hardsigmoid(double alpha = 1.0 / 6, double beta = 0.5) const;
  Tensor elu(double alpha = 1.0) const;
  Tensor celu(double alpha = 1.0) const;
  Tensor selu(double alpha = 1.67326, double gamma = 1.0507) const;
  Tensor swish() const;
  Tensor silu() const;
  Tensor relu6() const;
  Tensor hardswish() const;
  Tensor tanh() const;
  Tensor sinh() const;
  Tensor cosh() const;
  Tensor atanh() const;
  Tensor asinh() const;
  Tensor acosh() const;
  Tensor hardtanh(ConstValue min_val = int64_t(-1), ConstValue max_val = int64_t(1)) const;
  Tensor erf() const;
  Tensor gelu() const;
  Tensor quick_gelu() const;
  Tensor leaky_relu(double neg_slope = 0.01) const;
  Tensor mish() const;
  Tensor softplus(double beta = 1) const;
  Tensor softsign() const;
  Tensor logsigmoid() const;

  // binary: rounding_mode "trunc" or "floor" (ints divide as ints then; floats are rounded, keeping an int
  // numerator's dtype); none is true division
  Tensor div(const Tensor& x, bool reverse, std::optional<std::string> rounding_mode) const;
  Tensor copysign(const Tensor& other) const;
  template <Scalar T>
  Tensor copysign(T other) const {
    MetadataScope m("copysign");
    return copysign(scalar_like(to_const(other)));
  }
  Tensor isclose(const Tensor& other, IsCloseOptions opts = {}) const;
  Tensor masked_fill(const Tensor& mask, const Tensor& value) const;
  template <Scalar T>
  Tensor masked_fill(const Tensor& mask, T value) const {
    MetadataScope m("masked_fill");
    return mask.where(scalar_like(to_const(value)), *this);
  }

  // casting shorthands (float/int/bool/double/long are C++ keywords: a trailing underscore, as dtypes::float_)
  Tensor float_() const;
  Tensor half() const;
  Tensor double_() const;
  Tensor int_() const;
  Tensor long_() const;
  Tensor bool_() const;

  // *** [movement] high-level movement and indexing (tensor_movement.cpp, tensor_index.cpp) ***
  Tensor view(Shape shape) const;  // reshape
  // mode: "constant" (value), "reflect" (mirror without the edge), "replicate" (the edge), "circular" (wrap);
  // negative pads shrink, except in circular mode
  Tensor pad(const Mask& padding, std::string_view mode, ConstValue value = 0.0) const;
  Tensor repeat(std::vector<int64_t> repeats) const;  // tiles: one count per dim, leading counts add dims
  Tensor repeat_interleave(int64_t repeats, std::optional<int64_t> dim = std::nullopt) const;  // no dim: flattened
  std::vector<Tensor> split(int64_t size, int64_t dim = 0) const;  // pieces of `size`, the last one may be smaller
  std::vector<Tensor> split(const std::vector<int64_t>& sizes, int64_t dim = 0) const;  // sizes sum to the dim
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;  // at most `chunks` pieces of ceil(n/chunks)
  Tensor unfold(int64_t dim, int64_t size, int64_t step) const;      // dim -> (windows, size), size last
  static std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, std::string_view indexing = "ij");
  Tensor unflatten(int64_t dim, Shape sizes) const;  // one -1 is inferred
  Tensor roll(int64_t shift, int64_t dim) const;
  Tensor roll(const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims) const;
  // einops' rearrange: x.rearrange("b c (h w) -> b (c h) w", {{"h", 2}}); "..." stands for the unnamed dims
  Tensor rearrange(std::string_view formula, const std::vector<std::pair<std::string, sint>>& sizes = {}) const;
  Tensor gather(int64_t dim, const Tensor& index) const;  // out[..i..] = this[..index[..i..]..] along dim
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src) const;  // repeated indices: the last one wins
  Tensor scatter(int64_t dim, const Tensor& index, ConstValue src, std::string_view reduce = "") const;  // add|multiply
  Tensor scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                        bool include_self = true) const;  // sum|prod|mean|amax|amin
  Tensor masked_select(const Tensor& mask) const;         // 1-D; realizes the mask to know the count
  // (values, int32 indices), stable: equal values keep their order
  std::pair<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false) const;
  std::pair<Tensor, Tensor> topk(int64_t k, TopkOptions opts = {}) const;
  Tensor triu(int64_t diagonal = 0) const;                // keeps j - i >= diagonal of the last two dims
  Tensor tril(int64_t diagonal = 0) const;                // keeps j - i <= diagonal
  Tensor index(const std::vector<Index>& indices) const;  // tinygrad's __getitem__, see Index above
  Tensor operator[](const Index& index) const;            // t[1], t[Slice{.step = -1}], t[{0, 2}]
  // tinygrad's __setitem__: writes v (broadcast, cast to this dtype) at the indexed places of this tensor's buffer,
  // realizing it first, by one assign of the whole buffer (any index: flips and slices mixed with index tensors too;
  // a position indexed twice takes the last value). The target must have a contiguous view; neither may require grad.
  Tensor& setitem(const std::vector<Index>& indices, const Tensor& v);
  Tensor& setitem(const std::vector<Index>& indices, ConstValue v);

  // *** [nn] reductions, processing and linalg, nn functional (tensor_nn.cpp) ***
  // reductions; an empty axis list means every axis
  Tensor any(std::vector<int64_t> axis = {}, bool keepdim = false) const;
  Tensor all(std::vector<int64_t> axis = {}, bool keepdim = false) const;
  Tensor var(std::vector<int64_t> axis = {}, bool keepdim = false, double correction = 1) const;
  Tensor std(std::vector<int64_t> axis = {}, bool keepdim = false, double correction = 1) const;
  std::pair<Tensor, Tensor> var_mean(std::vector<int64_t> axis = {}, bool keepdim = false,
                                     double correction = 1) const;  // (var, mean)
  std::pair<Tensor, Tensor> std_mean(std::vector<int64_t> axis = {}, bool keepdim = false,
                                     double correction = 1) const;                        // (std, mean)
  Tensor argmax(std::optional<int64_t> axis = std::nullopt, bool keepdim = false) const;  // none: of the flattened
  Tensor argmin(std::optional<int64_t> axis = std::nullopt, bool keepdim = false) const;
  Tensor logsumexp(std::vector<int64_t> axis = {}, bool keepdim = false) const;
  Tensor logcumsumexp(int64_t axis = 0) const;
  Tensor cumsum(int64_t axis = 0) const;
  Tensor cumprod(int64_t axis) const;
  Tensor cummax(int64_t axis = 0) const;  // the running max (the reference returns no indices)

  // processing and linalg
  Tensor conv2d(const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                const Conv2dOptions& opts = {}) const;
  Tensor conv_transpose2d(const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                          const ConvTranspose2dOptions& opts = {}) const;
  Tensor avg_pool2d(const AvgPool2dOptions& opts = {}) const;
  Tensor max_pool2d(const MaxPool2dOptions& opts = {}) const;
  std::pair<Tensor, Tensor> max_pool2d_with_indices(const MaxPool2dOptions& opts = {}) const;  // return_indices=True
  Tensor max_unpool2d(const Tensor& indices, const MaxUnpool2dOptions& opts = {}) const;
  // mode: "linear" (align_corners allowed), "nearest" or "nearest-exact"; size: the trailing dims' new sizes
  Tensor interpolate(const Shape& size, const std::string& mode = "linear", bool align_corners = false) const;
  static Tensor einsum(const std::string& formula, const std::vector<Tensor>& operands,
                       std::optional<DType> dtype = std::nullopt);
  Tensor sequential(const std::vector<std::function<Tensor(const Tensor&)>>& ll) const;

  // nn functional
  Tensor linear(const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                std::optional<DType> dtype = std::nullopt) const;
  Tensor layernorm(std::vector<int64_t> axis = {-1}, double eps = 1e-5) const;
  Tensor batchnorm(const std::optional<Tensor>& weight, const std::optional<Tensor>& bias, const Tensor& mean,
                   const Tensor& invstd, std::vector<int64_t> axis = {1}) const;
  Tensor dropout(double p = 0.5) const;  // only while Tensor::training
  Tensor one_hot(int64_t num_classes = -1) const;
  Tensor scaled_dot_product_attention(const Tensor& key, const Tensor& value,
                                      const std::optional<Tensor>& attn_mask = std::nullopt, double dropout_p = 0.0,
                                      bool is_causal = false) const;
  Tensor binary_crossentropy(const Tensor& Y, const std::string& reduction = "mean") const;
  Tensor binary_crossentropy_logits(const Tensor& Y, const std::string& reduction = "mean") const;
  Tensor sparse_categorical_crossentropy(const Tensor& Y, const SparseCrossEntropyOptions& opts = {}) const;
  Tensor cross_entropy(const Tensor& Y, const CrossEntropyOptions& opts = {}) const;
  Tensor nll_loss(const Tensor& Y, const std::optional<Tensor>& weight = std::nullopt,
                  const NllLossOptions& opts = {}) const;

  // *** [autograd] the rules are in gradient/gradient.cpp ***
  // d(this)/d(targets): this must be a scalar unless a seed gradient of its shape is given
  // (materialize_grads: a target the gradient doesn't reach gets zeros instead of an error)
  std::vector<Tensor> gradient(const std::vector<Tensor>& targets, std::optional<Tensor> seed = std::nullopt,
                               bool materialize_grads = false) const;
  // accumulates into .grad of every tensor in the graph with requires_grad=true
  Tensor& backward(std::optional<Tensor> seed = std::nullopt);
  // tinygrad's Tensor.training (dropout, batchnorm and the optimizers read it) and a no-grad switch: under no_grad,
  // new tensors don't require grad. Scopes: `Tensor::train t;` / `Tensor::NoGrad g;` restore the old value at exit.
  static inline bool training = false;
  static inline bool no_grad = false;
  class train {
   public:
    explicit train(bool mode = true) : prev_(training) { training = mode; }
    ~train() { training = prev_; }
    train(const train&) = delete;
    train& operator=(const train&) = delete;

   private:
    bool prev_;
  };
  class NoGrad {
   public:
    NoGrad() : prev_(no_grad) { no_grad = true; }
    ~NoGrad() { no_grad = prev_; }
    NoGrad(const NoGrad&) = delete;
    NoGrad& operator=(const NoGrad&) = delete;

   private:
    bool prev_;
  };

  // *** in place ***
  // writes x into this tensor's storage (lazily, as an ASSIGN); shapes, devices and dtypes must match. Dedup never
  // aliases state: when another live tensor shares this one's buffer (two equal graphs realized), this tensor gets
  // a buffer of its own first, so the other one keeps its values.
  Tensor& assign(const Tensor& x);
  // points this tensor at x's graph, whatever x's dtype and device (tinygrad's replace: swapping in new weights);
  // the shapes must match unless allow_shape_mismatch. Its grad and requires_grad stay this tensor's own.
  Tensor& replace(const Tensor& x, bool allow_shape_mismatch = false);

  // *** scheduling and data ***
  Tensor& kernelize();
  static void kernelize(const std::vector<Tensor>& tensors);  // in one graph (tinygrad's Tensor.kernelize(*lst))
  Tensor& realize();
  static void realize(const std::vector<Tensor>& tensors);  // in one schedule (tinygrad's Tensor.realize(*lst))
  // the kernels that realize these tensors, in order and memory-planned, with the bound Variables' values; the
  // tensors now stand for the buffers those kernels write (tinygrad's schedule_with_vars). run_schedule runs them.
  static std::pair<std::vector<ScheduleItem>, std::map<std::string, int64_t>> schedule_with_vars(
      const std::vector<Tensor>& tensors);
  template <class T>
  std::vector<T> tolist() const;  // flat, row-major; T must match the dtype (int for dtypes.int, ...)
  template <class T>
  T item() const;
  std::vector<uint8_t> data_bytes() const;  // realized contents, row-major

  int64_t resolve_dim(int64_t dim, bool extra = false) const;  // a negative dim counts from the end; IndexError-like

 private:
  explicit Tensor(std::shared_ptr<TensorData> d) : d_(std::move(d)) {}
  static Tensor from_host(const void* data, size_t count, DType host, const Shape& shape, TensorOptions opts);
  template <class T>
  static DType host_dtype();
  Tensor apply_uop(UOp u, std::initializer_list<const Tensor*> inputs) const;
  std::pair<Tensor, Tensor> broadcasted(const Tensor& y, bool reverse = false, bool match_dtype = true) const;
  Tensor binop(Ops op, const Tensor& x, bool reverse) const;
  Tensor broadcast_to(const Shape& shape) const;
  Tensor reduce(Ops op, std::vector<int64_t> axis, bool keepdim) const;
  Tensor inverse() const;
  void check_dtype_for(DType want, const char* what) const;
  // [math] private helpers
  Tensor poly_n(const std::vector<double>& coeffs) const;  // Horner from 0.0, as the reference's polyN

  // [movement] private helpers
  struct IndexPlan;  // what getitem did (tensor_index.cpp): setitem writes through its view or undoes it
  Tensor getitem(std::vector<Index> indices, IndexPlan* plan = nullptr) const;
  Tensor sum_exact(std::vector<int64_t> axis) const;  // a sum in this dtype, where at most one term is nonzero
  std::pair<Tensor, Tensor> pre_scatter(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor masked_setitem(const Tensor& values, const Tensor& mask) const;  // the last true of mask's last dim wins
  std::pair<Tensor, Tensor> sort_ranked(int64_t dim, bool descending, std::optional<int64_t> k) const;

  // [nn] private helpers
  Tensor pool(const Shape& k, std::vector<int64_t> stride = {1}, std::vector<int64_t> dilation = {1}) const;
  // conv2d of a 3x3 (3 per spatial dim) kernel, stride and dilation 1, as Winograd's F(4x4, 3x3) (WINO=1,
  // tensor_winograd.cpp); pads: (before, after) per spatial dim
  Tensor winograd_conv(const Tensor& weight, int64_t groups, const std::vector<std::pair<int64_t, int64_t>>& pads,
                       std::optional<DType> acc) const;
  Tensor cumalu(int64_t axis, Ops op, bool include_initial = false) const;
  Tensor split_cumalu(int64_t axis, Ops op) const;
  Tensor do_reduction(const std::string& reduction) const;

  // [autograd] private helpers

  friend Tensor tensor_from_uop(const UOp& u, std::optional<bool> requires_grad);
  friend struct ConvGrad;  // conv2d's derivatives (tensor_pool.cpp) use pool
  friend void apply_map_to_tensors(const std::vector<std::pair<UOp, UOp>>& map, const char* name);

  std::shared_ptr<TensorData> d_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

// scalar operands on either side, as tinygrad's reflected operators
#define TG_TENSOR_OP(OPER, METHOD, NAME, RNAME)                   \
  inline Tensor operator OPER(const Tensor& a, const Tensor& b) { \
    MetadataScope m(NAME);                                        \
    return a.METHOD(b);                                           \
  }                                                               \
  template <Scalar T>                                             \
  Tensor operator OPER(const Tensor& a, T b) {                    \
    MetadataScope m(NAME);                                        \
    return a.METHOD(a.scalar_like(to_const(b)));                  \
  }                                                               \
  template <Scalar T>                                             \
  Tensor operator OPER(T a, const Tensor& b) {                    \
    MetadataScope m(RNAME);                                       \
    return b.METHOD(b.scalar_like(to_const(a)), true);            \
  }
TG_TENSOR_OP(+, add, "__add__", "__radd__")
TG_TENSOR_OP(-, sub, "__sub__", "__rsub__")
TG_TENSOR_OP(*, mul, "__mul__", "__rmul__")
TG_TENSOR_OP(/, div, "__truediv__", "__rtruediv__")
TG_TENSOR_OP(%, mod, "__mod__", "__rmod__")
TG_TENSOR_OP(&, bitwise_and, "__and__", "__rand__")
TG_TENSOR_OP(|, bitwise_or, "__or__", "__ror__")
TG_TENSOR_OP(^, bitwise_xor, "__xor__", "__rxor__")
#undef TG_TENSOR_OP
#define TG_TENSOR_CMP(OPER, METHOD, NAME)                         \
  inline Tensor operator OPER(const Tensor& a, const Tensor& b) { \
    MetadataScope m(NAME);                                        \
    return a.METHOD(b);                                           \
  }                                                               \
  template <Scalar T>                                             \
  Tensor operator OPER(const Tensor& a, T b) {                    \
    MetadataScope m(NAME);                                        \
    return a.METHOD(a.scalar_like(to_const(b)));                  \
  }
TG_TENSOR_CMP(<, lt, "__lt__")
TG_TENSOR_CMP(>, gt, "__gt__")
TG_TENSOR_CMP(<=, le, "__le__")
TG_TENSOR_CMP(>=, ge, "__ge__")
TG_TENSOR_CMP(==, eq, "__eq__")  // elementwise, as tinygrad: a bool tensor, not a bool
TG_TENSOR_CMP(!=, ne, "__ne__")
#undef TG_TENSOR_CMP
inline Tensor operator-(const Tensor& a) {
  MetadataScope m("__neg__");
  return a.neg();
}
inline Tensor operator~(const Tensor& a) {
  MetadataScope m("__invert__");
  return a.bitwise_not();
}

template <class T>
DType Tensor::host_dtype() {
  if constexpr (std::is_same_v<T, bool>)
    return dtypes::bool_;
  else if constexpr (std::is_same_v<T, float>)
    return dtypes::float32;
  else if constexpr (std::is_same_v<T, double>)
    return dtypes::float64;
  else if constexpr (std::is_same_v<T, int8_t>)
    return dtypes::int8;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return dtypes::uint8;
  else if constexpr (std::is_same_v<T, int16_t>)
    return dtypes::int16;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return dtypes::uint16;
  else if constexpr (std::is_same_v<T, int32_t>)
    return dtypes::int32;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return dtypes::uint32;
  else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, long long>)
    return dtypes::int64;
  else if constexpr (std::is_same_v<T, uint64_t> || std::is_same_v<T, unsigned long long>)
    return dtypes::uint64;
  else
    static_assert(sizeof(T) == 0, "no dtype for this host type");
}

}  // namespace tg
