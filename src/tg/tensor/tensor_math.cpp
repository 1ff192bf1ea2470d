// The Tensor's [math] group: more creation and random, unary math, activations, binary ops with rounding and
// tolerance, casting shorthands. Everything is composed from the elementwise ops of tensor.cpp the way tinygrad's
// tensor.py composes it, so values (and the kernels' metadata) follow the reference.
#include <cmath>
#include <limits>
#include <numbers>

#include "tg/tensor/tensor_internal.h"

namespace tg {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

TensorOptions with_dtype(TensorOptions o, DType dt) {
  if (!o.dtype) o.dtype = dt;
  return o;
}
Tensor set_requires_grad(Tensor t, std::optional<bool> rg) {
  if (rg) t.requires_grad_(*rg);
  return t;
}
sint prod_from(const Shape& s, size_t start) {
  sint p = 1;
  for (size_t i = start; i < s.size(); i++) p *= s[i];
  return p;
}
}  // namespace

// *** creation and random ***

Tensor Tensor::linspace(double start, double stop, int64_t steps, TensorOptions opts) {
  TG_META("linspace");
  TG_CHECK_AS(ValueError, steps >= 0, "number of steps must be non-negative, got ", steps);
  DType dt = opts.dtype ? *opts.dtype : dtypes::default_float;
  TG_CHECK_AS(ValueError, dt != dtypes::bool_, "linspace with bool dtype is not supported");
  if (steps == 1) return full({1}, start, with_dtype(opts, dt));
  // as the reference: an int arange times a python float, so the values are float32 before the cast
  TensorOptions ar{opts.device, std::nullopt, opts.requires_grad};
  return (start + arange(steps, ar) * ((stop - start) / static_cast<double>(steps - 1))).cast(dt);
}

Tensor Tensor::randint(const Shape& shape, int64_t low, int64_t high, TensorOptions opts) {
  TG_META("randint");
  DType dt = opts.dtype ? *opts.dtype : dtypes::int32;
  TG_CHECK_AS(TypeError, dtypes::is_int(dt), "randint: dtype=", dt, " must be int");
  TG_CHECK(low < high, "randint: low=", low, " must be below high=", high);
  // the reference's uniform with int bounds: floor of (high - low) * rand, then + low in the int dtype
  Tensor r = rand(shape, TensorOptions{opts.device, std::nullopt, std::nullopt});
  return set_requires_grad(((high - low) * r).cast(dt) + low, opts.requires_grad);
}

Tensor Tensor::normal(const Shape& shape, double mean, double std, TensorOptions opts) {
  TG_META("normal");
  Tensor r = randn(shape, TensorOptions{opts.device, opts.dtype, std::nullopt});
  return set_requires_grad(std * r + mean, opts.requires_grad);
}

Tensor Tensor::scaled_uniform(const Shape& shape, TensorOptions opts) {
  TG_META("scaled_uniform");
  return uniform(shape, -1.0, 1.0, opts) * std::pow(static_cast<double>(tg::prod(shape)), -0.5);
}

Tensor Tensor::glorot_uniform(const Shape& shape, TensorOptions opts) {
  TG_META("glorot_uniform");
  TG_CHECK(!shape.empty(), "glorot_uniform needs at least one dim, got shape ", shape_str(shape));
  double fan = static_cast<double>(shape[0] + prod_from(shape, 1));
  return uniform(shape, -1.0, 1.0, opts) * std::pow(6 / fan, 0.5);
}

Tensor Tensor::kaiming_uniform(const Shape& shape, double a, TensorOptions opts) {
  TG_META("kaiming_uniform");
  double bound = std::sqrt(3.0) * std::sqrt(2.0 / (1 + a * a)) / std::sqrt(static_cast<double>(prod_from(shape, 1)));
  return uniform(shape, -bound, bound, opts);
}

Tensor Tensor::kaiming_normal(const Shape& shape, double a, TensorOptions opts) {
  TG_META("kaiming_normal");
  double std = std::sqrt(2.0 / (1 + a * a)) / std::sqrt(static_cast<double>(prod_from(shape, 1)));
  return normal(shape, 0.0, std, opts);
}

Tensor Tensor::randperm(int64_t n, TensorOptions opts) {
  TG_META("randperm");
  TG_CHECK(n >= 0, "randperm: n=", n, " must be non-negative");
  DType dt = opts.dtype ? *opts.dtype : dtypes::int32;
  if (n == 0) return zeros({0}, TensorOptions{opts.device, dt, opts.requires_grad});
  Tensor r = rand({n}, TensorOptions{opts.device, std::nullopt, opts.requires_grad});
  return r.sort().second.cast(dt);
}

Tensor Tensor::multinomial(int64_t num_samples, bool replacement) const {
  TG_META("multinomial");
  TG_CHECK_AS(AssertionError, 1 <= ndim() && ndim() <= 2 && num_samples > 0, "multinomial: ndim=", ndim(),
              " must be 1 or 2 dim, num_samples=", num_samples, " must be positive");
  TG_CHECK_AS(AssertionError, replacement || num_samples == 1,
              "multinomial: no replacement only supports num_samples = 1, got ", num_samples);
  Tensor w = ndim() == 1 ? unsqueeze(0) : *this;
  sint rows = w.shape()[0], k = w.shape()[1];
  TG_CHECK(k > 0, "multinomial: no categories in shape ", shape_str(shape()));
  // the running sum along the categories, normalized by the last one
  Tensor cw = w.cumsum(1).float_();
  Tensor cdf = cw / cw.shrink({{0, rows}, {k - 1, k}});
  Tensor unif = rand({num_samples, rows, 1});
  Tensor indices = unif.to(device()).expand({-1, -1, k}).ge(cdf).sum(std::vector<int64_t>{2}).permute({1, 0});
  return (ndim() == 1 ? indices.squeeze(0) : indices).cast(dtypes::int32);
}

Tensor Tensor::empty_like(TensorOptions opts) const {
  TG_META("empty_like");
  return empty(shape(), TensorOptions{opts.device ? opts.device : device(), opts.dtype ? opts.dtype : dtype(),
                                      opts.requires_grad});
}

// *** unary math ***

Tensor Tensor::poly_n(const std::vector<double>& coeffs) const {
  std::optional<Tensor> acc;
  for (double c : coeffs) acc = (acc ? *acc * *this : 0.0 * *this) + c;  // starts from the python float 0.0
  return acc ? *acc : *this * 0.0;
}

Tensor Tensor::tan() const {
  TG_META("tan");
  return sin() / cos();
}
Tensor Tensor::asin() const {
  TG_META("asin");
  // Abramowitz and Stegun 4.4.46: asin(x) = pi/2 - sqrt(1 - x) * poly(x) for 0 <= x <= 1, odd
  const std::vector<double> coeffs{-0.0012624911, 0.0066700901, -0.0170881256, 0.0308918810,
                                   -0.0501743046, 0.0889789874, -0.2145988016, 1.5707963050};
  Tensor a = abs();
  Tensor x = std::numbers::pi / 2 - (1.0 - a).sqrt() * a.poly_n(coeffs);
  return sign() * x;
}
Tensor Tensor::acos() const {
  TG_META("acos");
  return std::numbers::pi / 2 - asin();
}
Tensor Tensor::atan() const {
  TG_META("atan");
  return (*this / (1 + *this * *this).sqrt()).asin();
}
Tensor Tensor::trunc() const {
  TG_META("trunc");
  return cast(dtypes::int32).cast(dtype());
}
Tensor Tensor::ceil() const {
  TG_META("ceil");
  Tensor b = trunc();
  return (*this > b).where(b + 1, b);
}
Tensor Tensor::floor() const {
  TG_META("floor");
  Tensor b = trunc();
  return (*this < b).where(b - 1, b);
}
Tensor Tensor::round() const {
  TG_META("round");
  // half to even: where the integer part is even, halves go toward zero, else away from it
  Tensor b = cast(dtypes::int32) / 2.0;
  Tensor even = b.cast(dtypes::int32).eq(b);
  return (*this > 0).eq(even).where((*this - 0.5).ceil(), (*this + 0.5).floor());
}
Tensor Tensor::isinf(bool detect_positive, bool detect_negative) const {
  TG_META("isinf");
  return eq(scalar_like(kInf)) * detect_positive + eq(scalar_like(-kInf)) * detect_negative;
}
Tensor Tensor::isnan() const {
  TG_META("isnan");
  return ne(*this);
}
Tensor Tensor::isfinite() const {
  TG_META("isfinite");
  return (isinf() | isnan()).logical_not();
}
Tensor Tensor::lerp(const Tensor& end, const Tensor& weight) const {
  TG_META("lerp");
  if (dtype() == dtypes::uint8) {  // fixed point: the weight in 7 bits, rounded
    constexpr int kPrec = 7;
    Tensor w = (weight * (1 << kPrec) + 0.5).cast(dtypes::int16);
    Tensor step = ((end - *this).cast(dtypes::int8) * w + (1 << (kPrec - 1))).cast(dtypes::uint16).rshift(kPrec);
    return (*this + step).cast(dtypes::uint8);
  }
  return *this + (end - *this) * weight;
}
Tensor Tensor::lerp(const Tensor& end, double weight) const {
  TG_META("lerp");
  return *this + (end - *this) * weight;
}
Tensor Tensor::clamp(std::optional<ConstValue> lo, std::optional<ConstValue> hi) const {
  TG_META("clamp");
  TG_CHECK(lo || hi, "at least one of 'min_' or 'max_' must not be None");
  Tensor r = lo ? maximum(scalar_like(*lo)) : *this;
  return hi ? r.minimum(r.scalar_like(*hi)) : r;
}

// *** activations ***

Tensor Tensor::hardsigmoid(double alpha, double beta) const {
  TG_META("hardsigmoid");
  return (alpha * *this + beta).relu() - (alpha * *this + beta - 1).relu();
}
Tensor Tensor::elu(double alpha) const {
  TG_META("elu");
  return relu() - alpha * (1 - exp()).relu();
}
Tensor Tensor::celu(double alpha) const {
  TG_META("celu");
  return maximum(scalar_like(int64_t(0))) + (alpha * ((*this / alpha).exp() - 1)).minimum(scalar_like(int64_t(0)));
}
Tensor Tensor::selu(double alpha, double gamma) const {
  TG_META("selu");
  return gamma * (*this >= 0).detach().where(*this, alpha * (exp() - 1));
}
Tensor Tensor::swish() const {
  TG_META("swish");
  return *this * sigmoid();
}
Tensor Tensor::silu() const {
  TG_META("silu");
  return swish();
}
Tensor Tensor::relu6() const {
  TG_META("relu6");
  return relu() - (*this - 6).relu();
}
Tensor Tensor::hardswish() const {
  TG_META("hardswish");
  return *this * (*this + 3).relu6() * (1.0 / 6);
}
Tensor Tensor::tanh() const {
  TG_META("tanh");
  return 2.0 * (2.0 * *this).sigmoid() - 1.0;
}
Tensor Tensor::sinh() const {
  TG_META("sinh");
  return (exp() - neg().exp()) / 2;
}
Tensor Tensor::cosh() const {
  TG_META("cosh");
  return (exp() + neg().exp()) / 2;
}
Tensor Tensor::atanh() const {
  TG_META("atanh");
  return ((1 + *this) / (1 - *this)).log() / 2;
}
Tensor Tensor::asinh() const {
  TG_META("asinh");
  return (*this + (square() + 1).sqrt()).log();
}
Tensor Tensor::acosh() const {
  TG_META("acosh");
  return (*this + (square() - 1).sqrt()).log();
}
Tensor Tensor::hardtanh(ConstValue min_val, ConstValue max_val) const {
  TG_META("hardtanh");
  return clip(min_val, max_val);
}
Tensor Tensor::erf() const {
  TG_META("erf");
  // Abramowitz and Stegun 7.1.26
  Tensor t = 1.0 / (1.0 + 0.3275911 * abs());
  const std::vector<double> coeffs{1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592};
  return sign() * (1.0 - t * t.poly_n(coeffs) * (-square()).exp());
}
Tensor Tensor::gelu() const {
  TG_META("gelu");
  return 0.5 * *this * (1 + (std::sqrt(2 / std::numbers::pi) * (*this + 0.044715 * pow(3))).tanh());
}
Tensor Tensor::quick_gelu() const {
  TG_META("quick_gelu");
  return *this * (*this * 1.702).sigmoid();
}
Tensor Tensor::leaky_relu(double neg_slope) const {
  TG_META("leaky_relu");
  return (*this < 0).where(neg_slope * *this, *this);
}
Tensor Tensor::mish() const {
  TG_META("mish");
  return *this * softplus().tanh();
}
Tensor Tensor::softplus(double beta) const {
  TG_META("softplus");
  return (1 / beta) * (1 + (*this * beta).exp()).log();
}
Tensor Tensor::softsign() const {
  TG_META("softsign");
  return *this / (1 + abs());
}
Tensor Tensor::logsigmoid() const {
  TG_META("logsigmoid");
  return -(-*this).softplus();
}

// *** binary ***

Tensor Tensor::div(const Tensor& x, bool reverse, std::optional<std::string> rounding_mode) const {
  TG_META("div");
  TG_CHECK(!rounding_mode || *rounding_mode == "trunc" || *rounding_mode == "floor", "rounding_mode='",
           rounding_mode.value_or(""), "' is not supported (trunc, floor or none)");
  auto [n, d] = broadcasted(x, reverse);
  if (!rounding_mode) return n.div(d);
  if (DType dt = least_upper_dtype({n.dtype(), d.dtype()}); dtypes::is_int(dt)) {
    Tensor a = n.cast(dt), b = d.cast(dt), q = a.idiv(b);
    if (*rounding_mode == "trunc") return q;
    // floor: one less where the signs differ and the division isn't exact
    Tensor r = a.binop(Ops::MOD, b, false);
    Tensor opposite = ((a > 0) & (b < 0)) | ((a < 0) & (b > 0));
    return (opposite & r.ne(r.scalar_like(int64_t(0)))).where(q - 1, q);
  }
  Tensor q = n.div(d);
  DType out = dtypes::is_int(n.dtype()) ? n.dtype() : q.dtype();
  return (*rounding_mode == "trunc" ? q.trunc() : q.floor()).cast(out);
}
Tensor Tensor::copysign(const Tensor& other) const {
  TG_META("copysign");
  Tensor o = broadcasted(other).second;
  return (o < 0).where(-abs(), abs()) + o * 0;
}
Tensor Tensor::isclose(const Tensor& other, IsCloseOptions opts) const {
  TG_META("isclose");
  Tensor finite_close = isfinite() & other.isfinite() & ((*this - other).abs() <= opts.atol + opts.rtol * other.abs());
  Tensor infinite_close = (isinf() | other.isinf()) & eq(other);
  Tensor nan_close = (isnan() & other.isnan()) & opts.equal_nan;
  return finite_close | infinite_close | nan_close;
}
Tensor Tensor::masked_fill(const Tensor& mask, const Tensor& value) const {
  TG_META("masked_fill");
  return mask.where(value, *this);
}

// *** casting shorthands ***

Tensor Tensor::float_() const {
  TG_META("float");
  return cast(dtypes::float32);
}
Tensor Tensor::half() const {
  TG_META("half");
  return cast(dtypes::float16);
}
Tensor Tensor::double_() const {
  TG_META("double");
  return cast(dtypes::float64);
}
Tensor Tensor::int_() const {
  TG_META("int");
  return cast(dtypes::int32);
}
Tensor Tensor::long_() const {
  TG_META("long");
  return cast(dtypes::int64);
}
Tensor Tensor::bool_() const {
  TG_META("bool");
  return cast(dtypes::bool_);
}

}  // namespace tg
