// Every Tensor op against a plain loop computed here, on random inputs of odd sizes and every dtype the op supports
// (DESIGN.md section 6). The tables below are the specification: (op name, tensor function, scalar reference,
// dtypes, input domain, tolerance). References follow C and tinygrad semantics:
//  - integer ops wrap to the dtype as C does after promotion (int8 -128 / -1 == -128); idiv truncates toward zero;
//    Tensor::mod is python's floor modulo (tinygrad's Tensor.mod); comparisons give bool; int op scalar keeps int;
//    int / int gives float;
//  - float results are computed in double and rounded to the dtype; NaN and inf propagate as the C expression
//    the renderer emits (max(a, b) is (a<b)?b:a, relu is (x>0)?x:0, ...);
//  - integer division or modulo by zero is defined, never a SIGFPE: x idiv 0 == 0 and the C-level x % 0 == 0
//    (tinygrad's cdiv), so Tensor::mod(x, 0) == x (tinygrad's cmod); INT_MIN idiv -1 wraps to INT_MIN. The
//    renderer guards only divisors whose range contains 0 (or -1 with INT_MIN): constants and positive ranges
//    divide plainly.
// Random inputs come from a fixed seed (TG_OPS_SEED overrides it), so a failure reproduces.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <sstream>
#include <type_traits>

#include "tg/runtime/device.h"
#include "tg/tensor/tensor.h"

namespace tg {
namespace {

// *** dtypes and host types ***

const std::vector<DType> kFloats = {dtypes::float32, dtypes::float64};
const std::vector<DType> kInts = {dtypes::int8,  dtypes::uint8,  dtypes::int16, dtypes::uint16,
                                  dtypes::int32, dtypes::uint32, dtypes::int64, dtypes::uint64};
std::vector<DType> operator+(std::vector<DType> a, const std::vector<DType>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
const std::vector<DType> kBool = {dtypes::bool_};
const std::vector<DType> kNum = kFloats + kInts;

template <class F>
void visit_dtype(DType dt, F&& f) {  // f(std::type_identity<T>) with T the host type of dt
  if (dt == dtypes::bool_)
    f(std::type_identity<bool>{});
  else if (dt == dtypes::int8)
    f(std::type_identity<int8_t>{});
  else if (dt == dtypes::uint8)
    f(std::type_identity<uint8_t>{});
  else if (dt == dtypes::int16)
    f(std::type_identity<int16_t>{});
  else if (dt == dtypes::uint16)
    f(std::type_identity<uint16_t>{});
  else if (dt == dtypes::int32)
    f(std::type_identity<int32_t>{});
  else if (dt == dtypes::uint32)
    f(std::type_identity<uint32_t>{});
  else if (dt == dtypes::int64)
    f(std::type_identity<int64_t>{});
  else if (dt == dtypes::uint64)
    f(std::type_identity<uint64_t>{});
  else if (dt == dtypes::float32)
    f(std::type_identity<float>{});
  else if (dt == dtypes::float64)
    f(std::type_identity<double>{});
  else
    FAIL() << "no host type for " << dt;
}

// a tensor of dtype dt from host values (std::vector<bool> has no data(): bools go through a plain array)
template <class T>
Tensor tensor_of(const std::vector<T>& v, const Shape& shape, DType dt) {
  if constexpr (std::is_same_v<T, bool>) {
    std::unique_ptr<bool[]> b(new bool[v.size() + 1]);
    std::copy(v.begin(), v.end(), b.get());
    return Tensor(b.get(), shape, {.dtype = dt});
  } else {
    return Tensor(v, shape, {.dtype = dt});
  }
}

uint64_t base_seed() {
  if (const char* e = std::getenv("TG_OPS_SEED")) return std::strtoull(e, nullptr, 0);
  return 20250612;
}
uint64_t seed_of(const std::string& what) { return base_seed() ^ std::hash<std::string>{}(what); }

// *** input domains: a float range and an integer range (clamped to the dtype, see int_range) ***

struct Domain {
  double flo, fhi;
  double ilo, ihi;
  bool nonzero = false;
};
constexpr double kBig = 9.0e18;  // below INT64_MAX (9.22e18): converting it to int64 must not overflow
constexpr Domain kAny{-10, 10, -kBig, kBig};
constexpr Domain kSmall{-10, 10, -32768, 32768};  // products of two stay inside int32
constexpr Domain kNonZero{-10, 10, -kBig, kBig, true};
constexpr Domain kPositive{0.01, 100, 0, 1e6};
constexpr Domain kTrig{-20, 20, -20, 20};
constexpr Domain kExp{-20, 20, -20, 20};
constexpr Domain kPowBase{0.1, 4, 1, 4};
constexpr Domain kPowExp{-3, 3, -3, 3};
constexpr Domain kUnit{0.5, 1.5, -2, 2};  // products of 17 stay small and exact for ints

// the integer range a dtype gets: 8/16-bit and uint32 their whole range (C wraps them after promotion, or as
// unsigned); int32 and int64 one bit less so that a + b never overflows a signed type (UB in C); uint64 below
// 2^63 so the int64 references compare it exactly
template <class T>
std::pair<int64_t, int64_t> int_range(const Domain& d) {
  int64_t lo = static_cast<int64_t>(std::numeric_limits<T>::min()), hi;
  if constexpr (std::is_same_v<T, uint64_t>)
    hi = std::numeric_limits<int64_t>::max();
  else
    hi = static_cast<int64_t>(std::numeric_limits<T>::max());
  if constexpr (std::is_signed_v<T> && sizeof(T) >= 4) lo /= 2, hi /= 2;
  return {std::max<int64_t>(lo, static_cast<int64_t>(std::max(d.ilo, -kBig))),
          std::min<int64_t>(hi, static_cast<int64_t>(std::min(d.ihi, kBig)))};
}

template <class T>
T random_value(const Domain& d, std::mt19937_64& rng) {
  if constexpr (std::is_same_v<T, bool>) {
    return rng() & 1;
  } else if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<double> u(d.flo, d.fhi);
    T x;
    do x = static_cast<T>(u(rng));
    while (d.nonzero && std::abs(x) < 0.25);
    return x;
  } else {
    auto [lo, hi] = int_range<T>(d);
    std::uniform_int_distribution<int64_t> u(lo, hi);
    T x;
    do x = static_cast<T>(u(rng));
    while (d.nonzero && x == 0);
    return x;
  }
}
template <class T>
std::vector<T> random_values(size_t n, const Domain& d, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  for (size_t i = 0; i < n; i++) v[i] = random_value<T>(d, rng);
  return v;
}

// *** comparing results ***

struct Tol {
  double rtol32, rtol64, atol32 = 0, atol64 = 0;
};
constexpr Tol kExact{2e-7, 1e-15};               // correctly rounded, or a*(1/b): within a few ulp
constexpr Tol kTrans{1e-5, 1e-12, 1e-6, 1e-13};  // exp/log/sin/pow through exp2/log2/sin and a scaled argument
constexpr Tol kMod{1e-6, 1e-14, 1e-5, 1e-13};    // a - floor(a/b)*b cancels

template <class O>
bool close(O got, O want, const Tol& tol) {
  if constexpr (std::is_floating_point_v<O>) {
    if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
    if (std::isinf(want) || std::isinf(got)) return got == want;
    bool f32 = std::is_same_v<O, float>;
    double rtol = f32 ? tol.rtol32 : tol.rtol64, atol = f32 ? tol.atol32 : tol.atol64;
    return std::abs(static_cast<double>(got) - static_cast<double>(want)) <=
           atol + rtol * std::abs(static_cast<double>(want));
  } else {
    return got == want;
  }
}

template <class T>
std::string show(T v) {
  std::ostringstream os;
  os.precision(std::is_same_v<T, float> ? 9 : 17);
  if constexpr (sizeof(T) == 1 && !std::is_same_v<T, bool>)
    os << static_cast<int>(v);
  else
    os << v;
  return os.str();
}

// at most 5 mismatches reported, each with its inputs
template <class O>
void expect_all_close(const std::vector<O>& got, const std::vector<O>& want, const Tol& tol,
                      const std::function<std::string(size_t)>& inputs) {
  ASSERT_EQ(got.size(), want.size());
  int reported = 0;
  for (size_t i = 0; i < got.size() && reported < 5; i++)
    if (!close(got[i], want[i], tol)) {
      ADD_FAILURE() << "element " << i << " of " << got.size() << ": got " << show(got[i]) << ", want " << show(want[i])
                    << " for " << inputs(i);
      reported++;
    }
}

// *** the reference's numbers: floats in double, ints (and bool) in int64, rounded/wrapped to the output type ***

enum class Out { Same, Bool, Float };  // result dtype: the input's, bool, or least_upper_float of the input
DType out_dtype(Out o, DType in) {
  return o == Out::Same ? in : o == Out::Bool ? dtypes::bool_ : least_upper_float(in);
}

template <class O>
O to_out_f(double v) {
  if constexpr (std::is_same_v<O, bool>)
    return v != 0;
  else
    return static_cast<O>(v);
}
template <class O>
O to_out_i(int64_t v) {
  if constexpr (std::is_same_v<O, bool>)
    return v != 0;
  else if constexpr (std::is_floating_point_v<O>)
    return static_cast<O>(v);
  else
    return static_cast<O>(static_cast<uint64_t>(v));  // wraps, as C's conversion does
}
template <class T>
double as_f(T v) {
  return static_cast<double>(v);
}
template <class T>
int64_t as_i(T v) {
  return static_cast<int64_t>(v);
}

// wrapping arithmetic for the int64 references (a signed overflow in the reference would be UB)
int64_t wadd(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
int64_t wsub(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
int64_t wmul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }
int64_t cdiv(int64_t a, int64_t b) { return b == 0 ? 0 : a / b; }  // tinygrad's cdiv: truncating, 0 for b == 0
int64_t floor_mod(int64_t a, int64_t b) {                          // python's a % b, and a for b == 0 (tinygrad's cmod)
  if (b == 0) return a;
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
double floor_mod_f(double a, double b) { return a - std::floor(a / b) * b; }
double c_max(double a, double b) { return a < b ? b : a; }  // the renderer's (a<b)?b:a
// tinygrad's sign: ne(0).where(lt(0).where(-1, 1), 0) + x*0, and x*0 folds to 0, so sign(nan) == 1
double sign_f(double x) { return x != 0 ? (x < 0 ? -1.0 : 1.0) : 0.0; }

// *** elementwise binary ops ***

struct BinaryCase {
  const char* name;
  Tensor (*op)(const Tensor&, const Tensor&);
  double (*fref)(double, double);     // for float inputs or a float result
  int64_t (*iref)(int64_t, int64_t);  // for int and bool inputs
  std::vector<DType> dtypes;
  Domain da, db;
  Out out = Out::Same;
  Tol tol = kExact;
};
std::ostream& operator<<(std::ostream& os, const BinaryCase& c) { return os << c.name; }

const std::vector<BinaryCase>& binary_cases() {
  static const std::vector<BinaryCase> cases = {
      {"add", [](const Tensor& a, const Tensor& b) { return a + b; }, [](double a, double b) { return a + b; }, wadd,
       kNum + kBool, kAny, kAny},
      {"sub", [](const Tensor& a, const Tensor& b) { return a - b; }, [](double a, double b) { return a - b; }, wsub,
       kNum, kAny, kAny},
      {"mul", [](const Tensor& a, const Tensor& b) { return a * b; }, [](double a, double b) { return a * b; }, wmul,
       kNum + kBool, kSmall, kSmall},
      {"div", [](const Tensor& a, const Tensor& b) { return a / b; }, [](double a, double b) { return a / b; }, nullptr,
       kNum, kAny, kNonZero, Out::Float},
      {"idiv", [](const Tensor& a, const Tensor& b) { return a.idiv(b); }, nullptr, cdiv, kInts, kAny, kNonZero},
      {"mod", [](const Tensor& a, const Tensor& b) { return a % b; }, floor_mod_f, floor_mod, kNum, kAny, kNonZero,
       Out::Same, kMod},
      {"pow", [](const Tensor& a, const Tensor& b) { return a.pow(b); },
       [](double a, double b) { return std::pow(a, b); }, nullptr, kFloats, kPowBase, kPowExp, Out::Same, kTrans},
      {"maximum", [](const Tensor& a, const Tensor& b) { return a.maximum(b); }, c_max,
       [](int64_t a, int64_t b) { return std::max(a, b); }, kNum + kBool, kAny, kAny},
      {"minimum", [](const Tensor& a, const Tensor& b) { return a.minimum(b); },
       [](double a, double b) { return -c_max(-a, -b); }, [](int64_t a, int64_t b) { return std::min(a, b); },
       kNum + kBool, kAny, kAny},
      {"lt", [](const Tensor& a, const Tensor& b) { return a < b; }, [](double a, double b) { return double(a < b); },
       [](int64_t a, int64_t b) { return int64_t(a < b); }, kNum + kBool, kSmall, kSmall, Out::Bool},
      {"gt", [](const Tensor& a, const Tensor& b) { return a > b; }, [](double a, double b) { return double(a > b); },
       [](int64_t a, int64_t b) { return int64_t(a > b); }, kNum + kBool, kSmall, kSmall, Out::Bool},
      {"le", [](const Tensor& a, const Tensor& b) { return a <= b; },
       [](double a, double b) { return double(!(a > b)); }, [](int64_t a, int64_t b) { return int64_t(a <= b); },
       kNum + kBool, kSmall, kSmall, Out::Bool},
      {"ge", [](const Tensor& a, const Tensor& b) { return a >= b; },
       [](double a, double b) { return double(!(a < b)); }, [](int64_t a, int64_t b) { return int64_t(a >= b); },
       kNum + kBool, kSmall, kSmall, Out::Bool},
      {"ne", [](const Tensor& a, const Tensor& b) { return a.ne(b); },
       [](double a, double b) { return double(a != b); }, [](int64_t a, int64_t b) { return int64_t(a != b); },
       kNum + kBool, kSmall, kSmall, Out::Bool},
      {"eq", [](const Tensor& a, const Tensor& b) { return a.eq(b); },
       [](double a, double b) { return double(a == b); }, [](int64_t a, int64_t b) { return int64_t(a == b); },
       kNum + kBool, kSmall, kSmall, Out::Bool},
      {"bitwise_and", [](const Tensor& a, const Tensor& b) { return a & b; }, nullptr,
       [](int64_t a, int64_t b) { return a & b; }, kInts + kBool, kAny, kAny},
      {"bitwise_or", [](const Tensor& a, const Tensor& b) { return a | b; }, nullptr,
       [](int64_t a, int64_t b) { return a | b; }, kInts + kBool, kAny, kAny},
      {"bitwise_xor", [](const Tensor& a, const Tensor& b) { return a ^ b; }, nullptr,
       [](int64_t a, int64_t b) { return a ^ b; }, kInts + kBool, kAny, kAny},
  };
  return cases;
}

// computes c on a (n,) and b (n,) of dtype dt (or b broadcast from a scalar tensor when b_scalar) against the loop
template <class T>
void check_binary(const BinaryCase& c, DType dt, const std::vector<T>& a, const std::vector<T>& b, const Shape& sa,
                  const Shape& sb, const Shape& sout) {
  Tensor ta = tensor_of(a, sa, dt), tb = tensor_of(b, sb, dt);
  Tensor r = c.op(ta, tb);
  DType odt = out_dtype(c.out, dt);
  ASSERT_EQ(r.dtype(), odt) << c.name << " of " << dt;
  ASSERT_EQ(r.shape(), sout);
  // index of an output element in a broadcast input: row-major over sout, stride 0 where the input has size 1
  auto src_index = [&](const Shape& s, size_t i) {
    size_t idx = 0, rem = i, stride = 1;
    std::vector<size_t> coord(sout.size());
    for (size_t d = sout.size(); d-- > 0;)
      coord[d] = rem % static_cast<size_t>(sout[d]), rem /= static_cast<size_t>(sout[d]);
    for (size_t d = s.size(); d-- > 0;) {
      size_t od = d + sout.size() - s.size();
      idx += (s[d] == 1 ? 0 : coord[od]) * stride;
      stride *= static_cast<size_t>(s[d]);
    }
    return idx;
  };
  size_t n = static_cast<size_t>(prod(sout));
  visit_dtype(odt, [&]<class O>(std::type_identity<O>) {
    std::vector<O> want(n);
    bool use_int = c.iref && !dtypes::is_float(dt) && c.out != Out::Float;
    for (size_t i = 0; i < n; i++) {
      T x = a[src_index(sa, i)], y = b[src_index(sb, i)];
      want[i] = use_int ? to_out_i<O>(c.iref(as_i(x), as_i(y))) : to_out_f<O>(c.fref(as_f(x), as_f(y)));
    }
    expect_all_close<O>(r.tolist<O>(), want, c.tol, [&](size_t i) {
      return cat(c.name, "(", show(a[src_index(sa, i)]), ", ", show(b[src_index(sb, i)]), ") in ", dt);
    });
  });
}

template <class T>
void check_binary_random(const BinaryCase& c, DType dt, const Shape& sa, const Shape& sb, const Shape& sout) {
  std::string key = cat(c.name, dt.repr(), shape_str(sa), shape_str(sb));
  auto a = random_values<T>(static_cast<size_t>(prod(sa)), c.da, seed_of(key + "a"));
  auto b = random_values<T>(static_cast<size_t>(prod(sb)), c.db, seed_of(key + "b"));
  check_binary<T>(c, dt, a, b, sa, sb, sout);
}

class BinaryOps : public ::testing::TestWithParam<BinaryCase> {};

// every dtype at 17 elements; 1 and 3 elements for one float and one int dtype
TEST_P(BinaryOps, MatchesLoopForEveryDtype) {
  const BinaryCase& c = GetParam();
  for (DType dt : c.dtypes) {
    std::vector<int64_t> sizes{17};
    if (dt == dtypes::float32 || dt == dtypes::int32) sizes = {1, 3, 17};
    for (int64_t n : sizes) {
      SCOPED_TRACE(cat(c.name, " ", dt.repr(), " n=", n));
      visit_dtype(dt, [&]<class T>(std::type_identity<T>) { check_binary_random<T>(c, dt, {n}, {n}, {n}); });
    }
  }
}

// broadcasting: (3,1) op (1,4), a scalar tensor on either side, a 0-size dim
TEST_P(BinaryOps, Broadcasts) {
  const BinaryCase& c = GetParam();
  DType dt = contains(c.dtypes, dtypes::float32) ? dtypes::float32 : dtypes::int32;
  visit_dtype(dt, [&]<class T>(std::type_identity<T>) {
    check_binary_random<T>(c, dt, {3, 1}, {1, 4}, {3, 4});
    check_binary_random<T>(c, dt, {}, {5}, {5});
    check_binary_random<T>(c, dt, {2, 3}, {}, {2, 3});
    check_binary_random<T>(c, dt, {0, 4}, {1, 4}, {0, 4});
  });
}

INSTANTIATE_TEST_SUITE_P(Ops, BinaryOps, ::testing::ValuesIn(binary_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

// 1,000,003 elements for a few representative ops: the upcast/vectorized paths with a remainder
TEST(BinaryOpsLarge, OddMillion) {
  const auto& cases = binary_cases();
  auto find = [&](const char* n) {
    return *std::find_if(cases.begin(), cases.end(), [&](auto& c) { return std::string(c.name) == n; });
  };
  visit_dtype(dtypes::float32, [&]<class T>(std::type_identity<T>) {
    for (const char* n : {"add", "div", "maximum", "lt"}) {
      SCOPED_TRACE(n);
      check_binary_random<T>(find(n), dtypes::float32, {1000003}, {1000003}, {1000003});
    }
  });
  visit_dtype(dtypes::int32, [&]<class T>(std::type_identity<T>) {
    check_binary_random<T>(find("mod"), dtypes::int32, {1000003}, {1000003}, {1000003});
  });
  visit_dtype(dtypes::uint8, [&]<class T>(std::type_identity<T>) {
    check_binary_random<T>(find("mul"), dtypes::uint8, {1000003}, {1000003}, {1000003});
  });
}

// *** elementwise unary ops ***

struct UnaryCase {
  const char* name;
  Tensor (*op)(const Tensor&);
  double (*fref)(double);
  int64_t (*iref)(int64_t);
  std::vector<DType> dtypes;
  Domain d;
  Out out = Out::Same;
  Tol tol = kExact;
};
std::ostream& operator<<(std::ostream& os, const UnaryCase& c) { return os << c.name; }

const std::vector<DType> kSigned = {dtypes::int8, dtypes::int16, dtypes::int32, dtypes::int64};
const std::vector<DType> kSomeInts = {dtypes::int32, dtypes::uint8};  // ints that unary float ops cast to float

const std::vector<UnaryCase>& unary_cases() {
  static const std::vector<UnaryCase> cases = {
      {"neg", [](const Tensor& x) { return -x; }, [](double x) { return -x; }, [](int64_t x) { return wsub(0, x); },
       kNum, kAny},
      {"neg_bool", [](const Tensor& x) { return -x; }, nullptr, [](int64_t x) { return int64_t(!x); }, kBool, kAny},
      {"reciprocal", [](const Tensor& x) { return x.reciprocal(); }, [](double x) { return 1 / x; }, nullptr,
       kFloats + kSomeInts, kNonZero, Out::Float},
      {"sqrt", [](const Tensor& x) { return x.sqrt(); }, [](double x) { return std::sqrt(x); }, nullptr,
       kFloats + kSomeInts, kPositive, Out::Float},
      {"rsqrt", [](const Tensor& x) { return x.rsqrt(); }, [](double x) { return 1 / std::sqrt(x); }, nullptr, kFloats,
       kPositive, Out::Float},
      {"exp", [](const Tensor& x) { return x.exp(); }, [](double x) { return std::exp(x); }, nullptr,
       kFloats + kSomeInts, kExp, Out::Float, kTrans},
      {"exp2", [](const Tensor& x) { return x.exp2(); }, [](double x) { return std::exp2(x); }, nullptr,
       kFloats + kSomeInts, kExp, Out::Float, kTrans},
      {"log", [](const Tensor& x) { return x.log(); }, [](double x) { return std::log(x); }, nullptr,
       kFloats + kSomeInts, kPositive, Out::Float, kTrans},
      {"log2", [](const Tensor& x) { return x.log2(); }, [](double x) { return std::log2(x); }, nullptr,
       kFloats + kSomeInts, kPositive, Out::Float, kTrans},
      {"sin", [](const Tensor& x) { return x.sin(); }, [](double x) { return std::sin(x); }, nullptr,
       kFloats + kSomeInts, kTrig, Out::Float, kTrans},
      {"cos", [](const Tensor& x) { return x.cos(); }, [](double x) { return std::cos(x); }, nullptr,
       kFloats + kSomeInts, kTrig, Out::Float, kTrans},
      {"sigmoid", [](const Tensor& x) { return x.sigmoid(); }, [](double x) { return 1 / (1 + std::exp(-x)); }, nullptr,
       kFloats, kExp, Out::Float, kTrans},
      {"relu", [](const Tensor& x) { return x.relu(); }, [](double x) { return x > 0 ? x : 0; },
       [](int64_t x) { return x > 0 ? x : 0; }, kNum, kAny},
      {"abs", [](const Tensor& x) { return x.abs(); }, [](double x) { return x * sign_f(x); },
       [](int64_t x) { return x < 0 ? -x : x; }, kFloats + kSigned, kAny},
      {"sign", [](const Tensor& x) { return x.sign(); }, sign_f,
       [](int64_t x) { return int64_t(x > 0) - int64_t(x < 0); }, kFloats + kSigned, kAny},
      {"square", [](const Tensor& x) { return x.square(); }, [](double x) { return x * x; },
       [](int64_t x) { return wmul(x, x); }, kNum, kSmall},
      {"logical_not", [](const Tensor& x) { return x.logical_not(); }, [](double x) { return double(x == 0); },
       [](int64_t x) { return int64_t(x == 0); }, kNum + kBool, kAny, Out::Bool},
      {"bitwise_not", [](const Tensor& x) { return ~x; }, nullptr, [](int64_t x) { return ~x; }, kInts, kAny},
      {"bitwise_not_bool", [](const Tensor& x) { return ~x; }, nullptr, [](int64_t x) { return int64_t(!x); }, kBool,
       kAny},
      // float tensors here; int bounds keep an int tensor int (tests/tensor/test_math.cpp)
      {"clip", [](const Tensor& x) { return x.clip(-2, 3); }, [](double x) { return std::min(std::max(x, -2.0), 3.0); },
       nullptr, kFloats, kAny},
      {"contiguous", [](const Tensor& x) { return x.contiguous(); }, [](double x) { return x; },
       [](int64_t x) { return x; }, kNum + kBool, kAny},
  };
  return cases;
}

template <class T>
void check_unary(const UnaryCase& c, DType dt, const std::vector<T>& a) {
  Tensor r = c.op(tensor_of(a, {static_cast<int64_t>(a.size())}, dt));
  DType odt = out_dtype(c.out, dt);
  ASSERT_EQ(r.dtype(), odt) << c.name << " of " << dt;
  visit_dtype(odt, [&]<class O>(std::type_identity<O>) {
    std::vector<O> want(a.size());
    bool use_int = c.iref && !dtypes::is_float(dt) && c.out != Out::Float;
    for (size_t i = 0; i < a.size(); i++)
      want[i] = use_int ? to_out_i<O>(c.iref(as_i(a[i]))) : to_out_f<O>(c.fref(as_f(a[i])));
    expect_all_close<O>(r.tolist<O>(), want, c.tol,
                        [&](size_t i) { return cat(c.name, "(", show(a[i]), ") in ", dt); });
  });
}

class UnaryOps : public ::testing::TestWithParam<UnaryCase> {};

TEST_P(UnaryOps, MatchesLoopForEveryDtype) {
  const UnaryCase& c = GetParam();
  for (DType dt : c.dtypes) {
    std::vector<size_t> sizes{17};
    if (dt == dtypes::float32 || dt == dtypes::int32) sizes = {1, 3, 17};
    for (size_t n : sizes) {
      SCOPED_TRACE(cat(c.name, " ", dt.repr(), " n=", n));
      visit_dtype(dt, [&]<class T>(std::type_identity<T>) {
        check_unary<T>(c, dt, random_values<T>(n, c.d, seed_of(cat(c.name, dt.repr(), n))));
      });
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, UnaryOps, ::testing::ValuesIn(unary_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(UnaryOpsLarge, OddMillion) {
  const auto& cases = unary_cases();
  for (const char* n : {"exp", "sqrt", "relu"}) {
    const UnaryCase& c = *std::find_if(cases.begin(), cases.end(), [&](auto& u) { return std::string(u.name) == n; });
    SCOPED_TRACE(n);
    check_unary<float>(c, dtypes::float32, random_values<float>(1000003, c.d, seed_of(cat(n, "large"))));
  }
}

// *** NaN, inf and signed zeros propagate as the C expressions do ***

const std::vector<double> kSpecials = {std::numeric_limits<double>::quiet_NaN(),
                                       std::numeric_limits<double>::infinity(),
                                       -std::numeric_limits<double>::infinity(),
                                       0.0,
                                       -0.0,
                                       1.0,
                                       -2.5,
                                       1e-3};

TEST(SpecialValues, UnaryOpsPropagateNanAndInf) {
  for (const UnaryCase& c : unary_cases()) {
    if (!c.fref || !contains(c.dtypes, dtypes::float32)) continue;
    for (DType dt : kFloats) {
      SCOPED_TRACE(cat(c.name, " ", dt.repr()));
      visit_dtype(dt, [&]<class T>(std::type_identity<T>) {
        std::vector<T> a(kSpecials.begin(), kSpecials.end());
        check_unary<T>(c, dt, a);
      });
    }
  }
}

TEST(SpecialValues, BinaryOpsPropagateNanAndInf) {
  for (const BinaryCase& c : binary_cases()) {
    // mod and pow cast the quotient (the exponent) to an int, undefined in C for inf and nan: see the next tests
    if (!c.fref || !contains(c.dtypes, dtypes::float32) || c.name == std::string("mod") || c.name == std::string("pow"))
      continue;
    for (DType dt : kFloats) {
      SCOPED_TRACE(cat(c.name, " ", dt.repr()));
      visit_dtype(dt, [&]<class T>(std::type_identity<T>) {
        std::vector<T> a, b;  // every pair of specials
        for (double x : kSpecials)
          for (double y : kSpecials) a.push_back(static_cast<T>(x)), b.push_back(static_cast<T>(y));
        int64_t n = static_cast<int64_t>(a.size());
        check_binary<T>(c, dt, a, b, {n}, {n}, {n});
      });
    }
  }
}

// mod is a - floor(a/b)*b with floor through an int cast, pow is exp2(e*log2|b|) with sign fixes (tinygrad's
// xpow): on non-finite inputs they give what the reference tinygrad prints (CPU, x86), not what fmod/pow give
// (fmod(inf, 1.5) and 1 % inf are nan and 1; pow(inf, 0) and pow(nan, 0) are 1)
template <class T>
void expect_floats(const Tensor& t, const std::vector<double>& want) {
  std::vector<T> w(want.begin(), want.end());
  expect_all_close<T>(t.tolist<T>(), w, kTrans, [&](size_t i) { return cat("element ", i); });
}
TEST(SpecialValues, ModAndPowAsTheReference) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  auto check = [&]<class T>(std::type_identity<T>, DType dt) {
    SCOPED_TRACE(dt.repr());
    auto t = [&](std::vector<double> v) {
      return Tensor(std::vector<T>(v.begin(), v.end()), {static_cast<int64_t>(v.size())});
    };
    Tensor x = t({nan, inf, -inf, 0.0, -0.0, 1.0, -2.5});
    expect_floats<T>(x % 1.5, {nan, inf, -inf, 0.0, -0.0, 1.0, 0.5});
    expect_floats<T>(t({1.0, -1.0, 5.0}) % t({inf, inf, -inf}), {nan, nan, nan});
    expect_floats<T>(x.pow(t({0, 0, 0, 0, 0, 0, 0})), {nan, nan, nan, 1, 1, 1, 1});
    expect_floats<T>(t({-inf, -2.0, -2.0, 0.0, -1.0, 2.0, nan}).pow(t({inf, 0.5, 3.0, -1.0, inf, nan, 1})),
                     {nan, nan, -8.0, inf, nan, nan, nan});
  };
  check(std::type_identity<float>{}, dtypes::float32);
  check(std::type_identity<double>{}, dtypes::float64);
}

// *** integer division and modulo by zero: defined, the process lives ***

TEST(DivisionByZero, IdivAndModByZeroAreDefined) {
  for (DType dt : kInts) {
    SCOPED_TRACE(dt.repr());
    visit_dtype(dt, [&]<class T>(std::type_identity<T>) {
      std::vector<T> a = random_values<T>(17, kAny, seed_of(cat("divzero", dt.repr())));
      std::vector<T> b = random_values<T>(17, kAny, seed_of(cat("divzero_b", dt.repr())));
      for (size_t i = 0; i < b.size(); i += 2) b[i] = 0;  // half the divisors are 0
      const auto& cases = binary_cases();
      for (const char* n : {"idiv", "mod"}) {
        const BinaryCase& c =
            *std::find_if(cases.begin(), cases.end(), [&](auto& x) { return std::string(x.name) == n; });
        check_binary<T>(c, dt, a, b, {17}, {17}, {17});
      }
    });
  }
}

TEST(DivisionByZero, ByAScalarZero) {
  Tensor a(std::vector<int32_t>{7, -7, 0, 5}, {4});
  EXPECT_EQ(a.idiv(a.scalar_like(int64_t(0))).tolist<int32_t>(), (std::vector<int32_t>{0, 0, 0, 0}));
  EXPECT_EQ((a % 0).tolist<int32_t>(), (std::vector<int32_t>{7, -7, 0, 5}));
}

template <class T>
void check_int_min_by_minus_one() {
  constexpr T lo = std::numeric_limits<T>::min();
  Tensor a(std::vector<T>{lo, lo, 9}, {3}), b(std::vector<T>{-1, 1, -1}, {3});
  EXPECT_EQ(a.idiv(b).template tolist<T>(), (std::vector<T>{lo, lo, -9}));
  EXPECT_EQ((a % b).template tolist<T>(), (std::vector<T>{0, 0, 0}));
}
TEST(DivisionByZero, IntMinByMinusOneWraps) {
  check_int_min_by_minus_one<int32_t>();
  check_int_min_by_minus_one<int64_t>();
}

// *** scalar operands: int op int scalar keeps int, int / int is float, a float scalar promotes ***

TEST(ScalarOperands, KeepTheTensorsKind) {
  Tensor i(std::vector<int32_t>{-7, -1, 0, 3, 8}, {5});
  EXPECT_EQ((i + 2).dtype(), dtypes::int32);
  EXPECT_EQ((i + 2).tolist<int32_t>(), (std::vector<int32_t>{-5, 1, 2, 5, 10}));
  EXPECT_EQ((2 - i).tolist<int32_t>(), (std::vector<int32_t>{9, 3, 2, -1, -6}));
  EXPECT_EQ((i * 3).tolist<int32_t>(), (std::vector<int32_t>{-21, -3, 0, 9, 24}));
  EXPECT_EQ(i.idiv(i.scalar_like(int64_t(2))).tolist<int32_t>(), (std::vector<int32_t>{-3, 0, 0, 1, 4}));
  EXPECT_EQ(i.idiv(i.scalar_like(int64_t(-3))).tolist<int32_t>(), (std::vector<int32_t>{2, 0, 0, -1, -2}));
  EXPECT_EQ((i % 3).tolist<int32_t>(), (std::vector<int32_t>{2, 2, 0, 0, 2}));      // python: -7 % 3 == 2
  EXPECT_EQ((i % -3).tolist<int32_t>(), (std::vector<int32_t>{-1, -1, 0, 0, -1}));  // python: 8 % -3 == -1
  EXPECT_EQ((17 % i.maximum(i.scalar_like(int64_t(1)))).tolist<int32_t>(), (std::vector<int32_t>{0, 0, 0, 2, 1}));
  EXPECT_EQ((i / 2).dtype(), dtypes::float32);
  EXPECT_EQ((i / 2).tolist<float>(), (std::vector<float>{-3.5f, -0.5f, 0, 1.5f, 4}));
  EXPECT_EQ((i + 0.5).dtype(), dtypes::float32);
  EXPECT_EQ((i + 0.5).tolist<float>(), (std::vector<float>{-6.5f, -0.5f, 0.5f, 3.5f, 8.5f}));
  EXPECT_EQ((i < 1).dtype(), dtypes::bool_);
  EXPECT_EQ((i < 1).tolist<bool>(), (std::vector<bool>{true, true, true, false, false}));
  EXPECT_EQ((i & 6).tolist<int32_t>(), (std::vector<int32_t>{0, 6, 0, 2, 0}));
  Tensor u(std::vector<uint8_t>{0, 1, 200, 255}, {4});
  EXPECT_EQ((u + 100).dtype(), dtypes::uint8);
  EXPECT_EQ((u + 100).tolist<uint8_t>(), (std::vector<uint8_t>{100, 101, 44, 99}));  // wraps
  EXPECT_EQ((u * 2).tolist<uint8_t>(), (std::vector<uint8_t>{0, 2, 144, 254}));
  Tensor f(std::vector<float>{-1.5f, 0, 2}, {3});
  EXPECT_EQ((f * 2).dtype(), dtypes::float32);
  EXPECT_EQ((1 - f).tolist<float>(), (std::vector<float>{2.5f, 1, -1}));
  EXPECT_EQ((f / 4).tolist<float>(), (std::vector<float>{-0.375f, 0, 0.5f}));
}

// *** shifts: unsigned dtypes only, as tinygrad ***

TEST(Shifts, LshiftAndRshiftOnUnsigned) {
  for (DType dt : {dtypes::uint8, dtypes::uint16, dtypes::uint32, dtypes::uint64}) {
    visit_dtype(dt, [&]<class T>(std::type_identity<T>) {
      std::vector<T> a = random_values<T>(17, kAny, seed_of(cat("shift", dt.repr())));
      const int64_t width = 8 * dt.itemsize();  // shifting by the width or more leaves no bits: 0
      for (int64_t bits :
           {int64_t(0), int64_t(1), int64_t(3), int64_t(7), width - 1, width, int64_t(64), int64_t(100)}) {
        SCOPED_TRACE(cat(dt.repr(), " bits=", bits));
        Tensor t = tensor_of(a, {17}, dt);
        std::vector<T> l(17), r(17);
        for (size_t i = 0; i < 17; i++)
          l[i] = bits >= width ? T(0) : static_cast<T>(static_cast<uint64_t>(a[i]) << bits),
          r[i] = bits >= width ? T(0) : static_cast<T>(static_cast<uint64_t>(a[i]) >> bits);
        EXPECT_EQ(t.lshift(bits).template tolist<T>(), l);
        EXPECT_EQ(t.rshift(bits).template tolist<T>(), r);
      }
    });
  }
  EXPECT_THROW(Tensor({1, 2}).lshift(1), Error);  // int32 is signed
}

// *** casts ***

TEST(Casts, MatchCConversions) {
  struct CastCase {
    DType from, to;
    Domain d;
  };
  const std::vector<CastCase> cases = {
      {dtypes::float32, dtypes::int32, kAny},      {dtypes::float32, dtypes::int8, kAny},
      {dtypes::float32, dtypes::uint8, kPositive}, {dtypes::float32, dtypes::float64, kAny},
      {dtypes::float64, dtypes::float32, kAny},    {dtypes::float32, dtypes::bool_, kSmall},
      {dtypes::int32, dtypes::float32, kAny},      {dtypes::int8, dtypes::float64, kAny},
      {dtypes::int64, dtypes::int8, kAny},         {dtypes::uint32, dtypes::int64, kAny},
      {dtypes::int16, dtypes::uint16, kAny},       {dtypes::uint8, dtypes::int32, kAny},
      {dtypes::bool_, dtypes::float32, kAny},      {dtypes::bool_, dtypes::int32, kAny},
      {dtypes::int32, dtypes::bool_, kSmall},      {dtypes::uint64, dtypes::float64, kAny},
  };
  for (const CastCase& c : cases) {
    SCOPED_TRACE(cat(c.from.repr(), " -> ", c.to.repr()));
    visit_dtype(c.from, [&]<class T>(std::type_identity<T>) {
      std::vector<T> a = random_values<T>(17, c.d, seed_of(cat("cast", c.from.repr(), c.to.repr())));
      if constexpr (!std::is_same_v<T, bool>) a[0] = 0;
      Tensor r = tensor_of(a, {17}, c.from).cast(c.to);
      ASSERT_EQ(r.dtype(), c.to);
      visit_dtype(c.to, [&]<class O>(std::type_identity<O>) {
        std::vector<O> want(17);
        for (size_t i = 0; i < 17; i++) {
          if constexpr (std::is_same_v<O, bool>)
            want[i] = a[i] != 0;
          else if constexpr (std::is_floating_point_v<T> && !std::is_floating_point_v<O>)
            want[i] = static_cast<O>(static_cast<int64_t>(a[i]));  // truncates toward zero, then wraps (in range here)
          else if constexpr (!std::is_floating_point_v<T> && !std::is_floating_point_v<O>)
            want[i] = static_cast<O>(static_cast<uint64_t>(a[i]));  // wraps
          else
            want[i] = static_cast<O>(a[i]);
        }
        expect_all_close<O>(r.tolist<O>(), want, kExact, [&](size_t i) { return show(a[i]); });
      });
    });
  }
}

// *** where ***

TEST(Where, SelectsWithBroadcasting) {
  for (DType dt : {dtypes::float32, dtypes::int32, dtypes::uint8, dtypes::float64, dtypes::bool_}) {
    SCOPED_TRACE(dt.repr());
    visit_dtype(dt, [&]<class T>(std::type_identity<T>) {
      auto cond = random_values<bool>(12, kAny, seed_of(cat("where_c", dt.repr())));
      auto x = random_values<T>(12, kAny, seed_of(cat("where_x", dt.repr())));
      auto y = random_values<T>(4, kAny, seed_of(cat("where_y", dt.repr())));
      Tensor r = tensor_of(cond, {3, 4}, dtypes::bool_).where(tensor_of(x, {3, 4}, dt), tensor_of(y, {1, 4}, dt));
      ASSERT_EQ(r.dtype(), dt);
      std::vector<T> want(12);
      for (size_t i = 0; i < 12; i++) want[i] = cond[i] ? x[i] : y[i % 4];
      EXPECT_EQ(r.template tolist<T>(), want);
    });
  }
  // a non-bool condition is cast to bool; scalar branches
  Tensor c(std::vector<float>{0, 2.5f, -1, 0}, {4});
  EXPECT_EQ(c.where(c.scalar_like(1.0), c.scalar_like(-1.0)).tolist<float>(), (std::vector<float>{-1, 1, 1, -1}));
}

// *** creation ***

TEST(Creation, MatchesLoops) {
  EXPECT_EQ(Tensor::zeros({3, 5}).tolist<float>(), std::vector<float>(15, 0));
  EXPECT_EQ(Tensor::ones({17}, {.dtype = dtypes::int8}).tolist<int8_t>(), std::vector<int8_t>(17, 1));
  EXPECT_EQ(Tensor::full({2, 3}, 2.5).tolist<float>(), std::vector<float>(6, 2.5f));
  EXPECT_EQ(Tensor::full({1}, int64_t(-4), {.dtype = dtypes::int64}).tolist<int64_t>(), std::vector<int64_t>{-4});
  std::vector<int32_t> ar(17);
  std::iota(ar.begin(), ar.end(), 0);
  EXPECT_EQ(Tensor::arange(17).tolist<int32_t>(), ar);
  EXPECT_EQ(Tensor::arange(1, 10, 3).tolist<float>(), (std::vector<float>{1, 4, 7}));
  EXPECT_EQ(Tensor::arange(5, 0, -1.5).tolist<float>(), (std::vector<float>{5, 3.5f, 2, 0.5f}));
  EXPECT_EQ(Tensor::arange(0).numel(), 0);
  for (auto [n, m] : {std::pair<int64_t, int64_t>{1, 1}, {3, 3}, {3, 5}, {4, 2}}) {
    std::vector<float> want(static_cast<size_t>(n * m));
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < m; j++) want[static_cast<size_t>(i * m + j)] = i == j;
    EXPECT_EQ(Tensor::eye(n, m).tolist<float>(), want) << n << "x" << m;
  }
  Tensor x(std::vector<int16_t>{1, 2, 3}, {3});
  EXPECT_EQ(x.full_like(int64_t(7)).tolist<int16_t>(), (std::vector<int16_t>{7, 7, 7}));
  EXPECT_EQ(x.zeros_like().dtype(), dtypes::int16);
  EXPECT_EQ(Tensor::empty({4, 0}).numel(), 0);
  EXPECT_EQ(Tensor::empty({2, 3}).shape(), (Shape{2, 3}));
}

// *** reductions: every axis, negative axes, keepdim, sizes 1, 17 and 1,000,003 ***

struct ReduceCase {
  const char* name;
  Tensor (*op)(const Tensor&, const std::vector<int64_t>&, bool);
  double (*fold)(double acc, double x);  // floats and ints alike: the values here stay exact in a double
  double init;
  bool mean = false;
};
std::ostream& operator<<(std::ostream& os, const ReduceCase& c) { return os << c.name; }

const std::vector<ReduceCase>& reduce_cases() {
  constexpr double inf = std::numeric_limits<double>::infinity();
  static const std::vector<ReduceCase> cases = {
      {"sum", [](const Tensor& t, const std::vector<int64_t>& a, bool k) { return t.sum(a, k); },
       [](double acc, double x) { return acc + x; }, 0},
      {"prod", [](const Tensor& t, const std::vector<int64_t>& a, bool k) { return t.prod(a, k); },
       [](double acc, double x) { return acc * x; }, 1},
      {"max", [](const Tensor& t, const std::vector<int64_t>& a, bool k) { return t.max(a, k); },
       [](double acc, double x) { return std::max(acc, x); }, -inf},
      {"min", [](const Tensor& t, const std::vector<int64_t>& a, bool k) { return t.min(a, k); },
       [](double acc, double x) { return std::min(acc, x); }, inf},
      {"mean", [](const Tensor& t, const std::vector<int64_t>& a, bool k) { return t.mean(a, k); },
       [](double acc, double x) { return acc + x; }, 0, true},
  };
  return cases;
}

// the result dtype: sum accumulates ints in (u)int32 or wider (sum_acc_dtype), mean of ints is float32
DType reduce_dtype(const ReduceCase& c, DType in) {
  if (c.mean) return dtypes::is_float(in) ? in : dtypes::float32;
  return std::string(c.name) == "sum" ? sum_acc_dtype(in) : in;
}

// loops over every input element, folding it into the output element it reduces to
std::vector<double> reduce_loop(const ReduceCase& c, const std::vector<double>& x, const Shape& s,
                                std::vector<int64_t> axes) {
  if (axes.empty())
    for (size_t d = 0; d < s.size(); d++) axes.push_back(static_cast<int64_t>(d));
  for (auto& a : axes) a = a < 0 ? a + static_cast<int64_t>(s.size()) : a;
  auto reduced = [&](size_t d) { return std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end(); };
  size_t nout = 1;
  double count = 1;
  for (size_t d = 0; d < s.size(); d++) {
    if (reduced(d))
      count *= static_cast<double>(s[d]);
    else
      nout *= static_cast<size_t>(s[d]);
  }
  std::vector<double> out(nout, c.init);
  for (size_t i = 0; i < x.size(); i++) {
    size_t rem = i, o = 0, ostride = 1;
    for (size_t d = s.size(); d-- > 0;) {
      size_t coord = rem % static_cast<size_t>(s[d]);
      rem /= static_cast<size_t>(s[d]);
      if (!reduced(d)) o += coord * ostride, ostride *= static_cast<size_t>(s[d]);
    }
    out[o] = c.fold(out[o], x[i]);
  }
  if (c.mean)
    for (double& v : out) v /= count;
  return out;
}

template <class T>
void check_reduce(const ReduceCase& c, DType dt, const Shape& s, const std::vector<int64_t>& axes, const Domain& dom) {
  std::vector<T> x = random_values<T>(static_cast<size_t>(prod(s)), dom, seed_of(cat(c.name, dt.repr(), shape_str(s))));
  std::vector<double> xd(x.begin(), x.end());
  std::vector<double> want = reduce_loop(c, xd, s, axes);
  Tensor t = tensor_of(x, s, dt);
  for (bool keepdim : {false, true}) {
    SCOPED_TRACE(cat(c.name, " ", dt.repr(), " ", shape_str(s), " axes ", py_tuple(axes), keepdim ? " keepdim" : ""));
    Tensor r = c.op(t, axes, keepdim);
    DType odt = reduce_dtype(c, dt);
    ASSERT_EQ(r.dtype(), odt);
    Shape ws;
    for (size_t d = 0; d < s.size(); d++) {
      bool red = axes.empty();
      for (int64_t a : axes) red |= (a < 0 ? a + static_cast<int64_t>(s.size()) : a) == static_cast<int64_t>(d);
      if (!red)
        ws.push_back(s[d]);
      else if (keepdim)
        ws.push_back(1);
    }
    ASSERT_EQ(r.shape(), ws);
    visit_dtype(odt, [&]<class O>(std::type_identity<O>) {
      std::vector<O> w(want.size());
      for (size_t i = 0; i < w.size(); i++) w[i] = static_cast<O>(want[i]);
      expect_all_close<O>(r.tolist<O>(), w, Tol{1e-5, 1e-12}, [&](size_t i) { return cat("output ", i); });
    });
  }
}

class ReduceOps : public ::testing::TestWithParam<ReduceCase> {};

// small integer values (exact in every accumulator); prod on values in [0.5, 1.5] or [-2, 2]
TEST_P(ReduceOps, EveryAxisMatchesLoop) {
  const ReduceCase& c = GetParam();
  Domain dom = std::string(c.name) == "prod" ? kUnit : Domain{-10, 10, -100, 100};
  const std::vector<std::pair<Shape, std::vector<std::vector<int64_t>>>> shapes = {
      {{1}, {{0}}},
      {{17}, {{0}, {-1}, {}}},
      {{3, 17}, {{0}, {1}, {-1}, {-2}, {0, 1}}},
      {{2, 17, 3}, {{0}, {1}, {2}, {0, 2}, {-3, -2}}},
  };
  for (DType dt : {dtypes::float32, dtypes::int32})
    for (auto& sa : shapes)  // NOTE: no structured binding: clang 14 can't capture one in a lambda
      for (auto& axes : sa.second)
        visit_dtype(dt, [&]<class T>(std::type_identity<T>) { check_reduce<T>(c, dt, sa.first, axes, dom); });
  // the accumulator dtypes: int8 sums in int32, uint8 in uint32, float64 stays float64
  for (DType dt : {dtypes::int8, dtypes::uint8, dtypes::float64})
    visit_dtype(dt, [&]<class T>(std::type_identity<T>) { check_reduce<T>(c, dt, {3, 17}, {1}, dom); });
}

INSTANTIATE_TEST_SUITE_P(Ops, ReduceOps, ::testing::ValuesIn(reduce_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

// integer-valued floats keep a 1,000,003-element float32 sum exact whatever the order of accumulation
TEST(ReduceOpsLarge, OddMillion) {
  const auto& cases = reduce_cases();
  Domain small_ints{-8, 8, -8, 8};
  for (const char* n : {"sum", "max", "mean"}) {
    const ReduceCase& c = *std::find_if(cases.begin(), cases.end(), [&](auto& r) { return std::string(r.name) == n; });
    std::vector<float> x = random_values<float>(1000003, small_ints, seed_of(cat(n, "large_reduce")));
    for (float& v : x) v = std::round(v);
    std::vector<double> want = reduce_loop(c, std::vector<double>(x.begin(), x.end()), {1000003}, {});
    SCOPED_TRACE(n);
    expect_all_close<float>(c.op(Tensor(x, {1000003}), {}, false).tolist<float>(), {static_cast<float>(want[0])},
                            Tol{1e-6, 0}, [](size_t) { return std::string("all"); });
  }
  check_reduce<int32_t>(cases[0], dtypes::int32, {1000003}, {0}, small_ints);
}

TEST(ReduceOps, ZeroSizeGivesTheIdentity) {
  Tensor z = Tensor::zeros({3, 0});
  EXPECT_EQ(z.sum(1).tolist<float>(), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(z.prod(1).tolist<float>(), (std::vector<float>{1, 1, 1}));
  EXPECT_EQ(z.max(1).tolist<float>(), std::vector<float>(3, -std::numeric_limits<float>::infinity()));
  EXPECT_EQ(z.sum(0).shape(), (Shape{0}));
  EXPECT_EQ(z.sum(0).tolist<float>(), std::vector<float>{});
}

// *** matmul / dot against the triple loop ***

// half and bfloat16 matmuls accumulate in float and round once at the end (tinygrad's sum_acc_dtype); with the shapes
// CUDA's tensor cores take (M%16, N%8, K%16), CROSS_COMPILE=CUDA:sm_90 compiles them as mma.sync kernels
TEST(Matmul, HalfAndBfloat16AccumulateInFloat) {
  for (DType dt : {dtypes::half, dtypes::bfloat16}) {
    if (!is_dtype_supported(dt)) continue;
    for (auto [n, k, m] : {std::tuple<int64_t, int64_t, int64_t>{32, 48, 16}, {64, 64, 64}, {5, 7, 3}}) {
      SCOPED_TRACE(cat(dt.repr(), " (", n, ", ", k, ") @ (", k, ", ", m, ")"));
      // multiples of 1/4 in [-2, 2]: they and their products are exact in both dtypes, so only the final rounding
      // differs from float64
      auto vals = [](int64_t sz, int64_t seed) {
        std::vector<float> v(static_cast<size_t>(sz));
        for (int64_t i = 0; i < sz; i++)
          v[static_cast<size_t>(i)] = static_cast<float>((i * 29 + seed * 7) % 17 - 8) / 4;
        return v;
      };
      std::vector<float> a = vals(n * k, 1), b = vals(k * m, 2);
      Tensor r = Tensor(a, {n, k}).cast(dt).matmul(Tensor(b, {k, m}).cast(dt));
      ASSERT_EQ(r.dtype(), dt);
      std::vector<float> got = r.float_().tolist<float>();
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++) {
          double want = 0;
          for (int64_t l = 0; l < k; l++) want += double(a[size_t(i * k + l)]) * b[size_t(l * m + j)];
          const double tol = std::abs(want) * (dt == dtypes::half ? 1e-3 : 4e-3) + 1e-6;
          ASSERT_NEAR(got[size_t(i * m + j)], want, tol) << "at (" << i << ", " << j << ")";
        }
    }
  }
}

TEST(Matmul, MatchesTripleLoop) {
  struct Case {
    Shape a, b, out;
  };
  const std::vector<Case> cases = {{{3, 17}, {17, 5}, {3, 5}},
                                   {{17}, {17}, {}},
                                   {{17}, {17, 3}, {3}},
                                   {{1, 1}, {1, 1}, {1, 1}},
                                   {{2, 3, 4}, {4, 5}, {2, 3, 5}}};
  for (DType dt : {dtypes::float32, dtypes::int32}) {
    visit_dtype(dt, [&]<class T>(std::type_identity<T>) {
      for (const Case& c : cases) {
        SCOPED_TRACE(cat(dt.repr(), " ", shape_str(c.a), " @ ", shape_str(c.b)));
        auto a = random_values<T>(static_cast<size_t>(prod(c.a)), Domain{-4, 4, -50, 50},
                                  seed_of(cat("mma", shape_str(c.a))));
        auto b = random_values<T>(static_cast<size_t>(prod(c.b)), Domain{-4, 4, -50, 50},
                                  seed_of(cat("mmb", shape_str(c.b))));
        Tensor r = tensor_of(a, c.a, dt).matmul(tensor_of(b, c.b, dt));
        ASSERT_EQ(r.shape(), c.out);
        ASSERT_EQ(r.dtype(), dt);
        // (..., n, k) @ (k, m), with a 1-D left operand as (1, k) and a 1-D right one as (k, 1)
        int64_t k = c.a.back(), m = c.b.size() == 1 ? 1 : int64_t(c.b.back()), n = prod(c.a) / k;
        std::vector<double> want(static_cast<size_t>(n * m), 0);
        for (int64_t i = 0; i < n; i++)
          for (int64_t j = 0; j < m; j++)
            for (int64_t l = 0; l < k; l++)
              want[static_cast<size_t>(i * m + j)] +=
                  as_f(a[static_cast<size_t>(i * k + l)]) * as_f(b[static_cast<size_t>(l * m + j)]);
        std::vector<T> w(want.begin(), want.end());
        expect_all_close<T>(r.template tolist<T>(), w, Tol{1e-5, 1e-12}, [&](size_t i) { return cat("output ", i); });
      }
    });
  }
}

// *** random chains of 1-6 movement ops against a naive dense reference ***

// a row-major array; every op makes a new one by computing each output element's source (or -1 for padding)
struct Dense {
  Shape shape;
  std::vector<int32_t> data;
  std::vector<int64_t> strides() const {
    std::vector<int64_t> st(shape.size(), 1);
    for (size_t d = shape.size(); d-- > 1;) st[d - 1] = st[d] * shape[d];
    return st;
  }
  template <class F>  // F(output coords) -> input flat index or -1
  Dense gather(const Shape& out, F src) const {
    Dense r{out, std::vector<int32_t>(static_cast<size_t>(prod(out)))};
    std::vector<int64_t> coord(out.size());
    for (size_t i = 0; i < r.data.size(); i++) {
      size_t rem = i;
      for (size_t d = out.size(); d-- > 0;)
        coord[d] = static_cast<int64_t>(rem % static_cast<size_t>(out[d])), rem /= static_cast<size_t>(out[d]);
      int64_t j = src(coord);
      r.data[i] = j < 0 ? 0 : data[static_cast<size_t>(j)];
    }
    return r;
  }
  int64_t flat(const std::vector<int64_t>& coord) const {
    auto st = strides();
    int64_t j = 0;
    for (size_t d = 0; d < coord.size(); d++) j += coord[d] * st[d];
    return j;
  }
};

struct Chain {
  Tensor t;
  Dense ref;
  std::string steps;
};

// applies one random movement op to both the tensor and the reference
void random_movement(Chain& c, std::mt19937_64& rng) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const Shape s = c.ref.shape;
  size_t nd = s.size();
  switch (pick(0, 9)) {
    case 0: {  // reshape: the elements' prime factors regrouped into 1-4 dims
      std::vector<int64_t> f;
      int64_t n = prod(s);
      for (int64_t p = 2; n > 1; p++)
        while (n % p == 0) f.push_back(p), n /= p;
      std::shuffle(f.begin(), f.end(), rng);
      Shape ns(static_cast<size_t>(pick(1, 4)), 1);
      for (int64_t x : f) ns[static_cast<size_t>(pick(0, static_cast<int64_t>(ns.size()) - 1))] *= x;
      c.t = c.t.reshape(ns), c.ref.shape = ns, c.steps += cat(".reshape(", shape_str(ns), ")");
      return;
    }
    case 1: {  // expand: size-1 dims grow, maybe a new leading dim
      Shape ns = s;
      for (auto& x : ns)
        if (x == 1) x = pick(1, 3);
      if (pick(0, 1) && nd < 4) ns.insert(ns.begin(), pick(1, 3));
      size_t off = ns.size() - nd;
      c.ref = c.ref.gather(ns, [&](const std::vector<int64_t>& o) {
        std::vector<int64_t> in(nd);
        for (size_t d = 0; d < nd; d++) in[d] = s[d] == 1 ? 0 : o[d + off];
        return c.ref.flat(in);
      });
      c.t = c.t.expand(ns), c.steps += cat(".expand(", shape_str(ns), ")");
      return;
    }
    case 2:
    case 3: {  // permute
      std::vector<int64_t> order(nd);
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      Shape ns(nd);
      for (size_t d = 0; d < nd; d++) ns[d] = s[static_cast<size_t>(order[d])];
      c.ref = c.ref.gather(ns, [&](const std::vector<int64_t>& o) {
        std::vector<int64_t> in(nd);
        for (size_t d = 0; d < nd; d++) in[static_cast<size_t>(order[d])] = o[d];
        return c.ref.flat(in);
      });
      c.t = c.t.permute(order), c.steps += cat(".permute(", py_tuple(order), ")");
      return;
    }
    case 4: {  // flip some axes (negative axes too)
      std::vector<int64_t> axes;
      for (size_t d = 0; d < nd; d++)
        if (pick(0, 1))
          axes.push_back(pick(0, 1) ? static_cast<int64_t>(d) : static_cast<int64_t>(d) - static_cast<int64_t>(nd));
      c.ref = c.ref.gather(s, [&](const std::vector<int64_t>& o) {
        std::vector<int64_t> in = o;
        for (int64_t a : axes) {
          size_t d = static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(nd) : a);
          in[d] = s[d] - 1 - o[d];
        }
        return c.ref.flat(in);
      });
      c.t = c.t.flip(axes), c.steps += cat(".flip(", py_tuple(axes), ")");
      return;
    }
    case 5:
    case 6: {  // pad with zeros, 0-2 each side
      if (prod(s) > 2000) return;
      Mask p;
      Shape ns;
      for (size_t d = 0; d < nd; d++)
        p.push_back({pick(0, 2), pick(0, 2)}), ns.push_back(s[d] + p.back().first + p.back().second);
      c.ref = c.ref.gather(ns, [&](const std::vector<int64_t>& o) -> int64_t {
        std::vector<int64_t> in(nd);
        for (size_t d = 0; d < nd; d++) {
          in[d] = o[d] - p[d].first;
          if (in[d] < 0 || in[d] >= s[d]) return -1;
        }
        return c.ref.flat(in);
      });
      c.t = c.t.pad(p), c.steps += ".pad(...)";
      return;
    }
    case 7:
    case 8: {  // shrink to a non-empty window
      Mask w;
      Shape ns;
      for (size_t d = 0; d < nd; d++) {
        int64_t b = pick(0, s[d] - 1), e = pick(b + 1, s[d]);
        w.push_back({b, e}), ns.push_back(e - b);
      }
      c.ref = c.ref.gather(ns, [&](const std::vector<int64_t>& o) {
        std::vector<int64_t> in(nd);
        for (size_t d = 0; d < nd; d++) in[d] = o[d] + w[d].first;
        return c.ref.flat(in);
      });
      c.t = c.t.shrink(w), c.steps += ".shrink(...)";
      return;
    }
    default: {  // transpose of the last two dims, or unsqueeze/squeeze/flatten: reshapes and permutes by another name
      if (nd >= 2) {
        c.t = c.t.transpose(-1, -2), c.steps += ".transpose(-1, -2)";
        Shape ns = s;
        std::swap(ns[nd - 1], ns[nd - 2]);
        c.ref = c.ref.gather(ns, [&](const std::vector<int64_t>& o) {
          std::vector<int64_t> in = o;
          std::swap(in[nd - 1], in[nd - 2]);
          return c.ref.flat(in);
        });
      } else {
        c.t = c.t.unsqueeze(0).flatten(), c.steps += ".unsqueeze(0).flatten()";
      }
      return;
    }
  }
}

TEST(MovementChains, MatchNaiveReference) {
  std::mt19937_64 rng(seed_of("movement"));
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int chain = 0; chain < 40; chain++) {
    Shape s(static_cast<size_t>(pick(1, 4)));
    for (auto& x : s) x = pick(1, 5);
    std::vector<int32_t> data(static_cast<size_t>(prod(s)));
    std::iota(data.begin(), data.end(), 1);  // distinct and non-zero: padding's 0 shows
    Chain c{Tensor(data, s), Dense{s, data}, shape_str(s)};
    int64_t n = pick(1, 6);
    for (int64_t i = 0; i < n; i++) random_movement(c, rng);
    SCOPED_TRACE(c.steps);
    ASSERT_EQ(c.t.shape(), c.ref.shape);
    EXPECT_EQ(c.t.tolist<int32_t>(), c.ref.data);
  }
}

// *** fusion is a contract: kernel counts ***

size_t kernels_to_realize(Tensor t) {
  size_t before = GlobalCounters::kernel_count;
  t.realize();
  return GlobalCounters::kernel_count - before;
}

TEST(KernelCount, ElementwiseChainOfSixOpsIsOneKernel) {
  Tensor a = Tensor(random_values<float>(17, kPositive, 1), {17}).realize();
  Tensor b = Tensor(random_values<float>(17, kPositive, 2), {17}).realize();  // inputs copied in beforehand
  Tensor r = ((a + b) * a - b).sqrt().exp2().relu();
  EXPECT_EQ(kernels_to_realize(r), 1u);
  std::vector<float> av = a.tolist<float>(), bv = b.tolist<float>(), want(17);
  for (size_t i = 0; i < 17; i++) want[i] = std::max(0.0f, std::exp2(std::sqrt((av[i] + bv[i]) * av[i] - bv[i])));
  expect_all_close<float>(r.tolist<float>(), want, kTrans, [](size_t i) { return cat(i); });
}

TEST(KernelCount, ReduceWithElementwiseInputAndEpilogueIsOneKernel) {
  Tensor a = Tensor(random_values<float>(51, kAny, 3), {3, 17}).realize();
  Tensor b = Tensor(random_values<float>(51, kAny, 4), {3, 17}).realize();
  Tensor r = ((a * b + 1).sum(1) * 2).exp2();
  EXPECT_EQ(kernels_to_realize(r), 1u);
  std::vector<float> av = a.tolist<float>(), bv = b.tolist<float>(), want(3);
  for (size_t i = 0; i < 3; i++) {
    double acc = 0;
    for (size_t j = 0; j < 17; j++) acc += double(av[i * 17 + j]) * bv[i * 17 + j] + 1;
    want[i] = static_cast<float>(std::exp2(acc * 2));
  }
  expect_all_close<float>(r.tolist<float>(), want, Tol{1e-4, 0, 0, 0}, [](size_t i) { return cat(i); });
}

TEST(KernelCount, InputsFromHostAreOneCopyEach) {
  Tensor a(random_values<float>(17, kAny, 5), {17}), b(random_values<float>(17, kAny, 6), {17});
  // two copies in (host data lives on PYTHON: none there), one kernel
  EXPECT_EQ(kernels_to_realize((a + b) * 2), Device::DEFAULT == "PYTHON" ? 1u : 3u);
}

// *** regressions found by tinygrad's test_ops ***

// tinygrad's test_scatter: on (4, 5, 6) with a (3, 4, 5) index, dim 1, the fused kernel took opts (UPCAST 2, UPCAST
// 0, UNROLL 1) under which lanes of the sum reading only padding folded their ASSIGN away; the bare accumulators left
// the stores inside the loop's context, the linearizer nested two loops over one RANGE and its blockend merge grew
// without end (145 s, then bad_alloc). Those accumulators are now their start value (codegen/devectorizer_sym).
TEST(Regression, ScatterLastWriteWinsOnEveryDim) {
  std::vector<float> xv = random_values<float>(120, kAny, 7), sv = random_values<float>(120, kAny, 8);
  std::vector<int32_t> iv(60);
  for (size_t i = 0; i < iv.size(); i++) iv[i] = static_cast<int32_t>((i * 7 + i / 5) % 3);
  for (int64_t dim = 0; dim < 3; dim++) {
    SCOPED_TRACE(cat("dim ", dim));
    Tensor out = Tensor(xv, {4, 5, 6}).scatter(dim, Tensor(iv, {3, 4, 5}), Tensor(sv, {4, 5, 6}));
    std::vector<float> want = xv;
    for (int64_t i = 0; i < 3; i++)
      for (int64_t j = 0; j < 4; j++)
        for (int64_t k = 0; k < 5; k++) {
          int64_t at[3] = {i, j, k};
          at[dim] = iv[static_cast<size_t>(i * 20 + j * 5 + k)];
          want[static_cast<size_t>(at[0] * 30 + at[1] * 6 + at[2])] = sv[static_cast<size_t>(i * 30 + j * 6 + k)];
        }
    expect_all_close<float>(out.tolist<float>(), want, Tol{0, 0, 0, 0}, [](size_t i) { return cat(i); });
  }
}

}  // namespace
}  // namespace tg
