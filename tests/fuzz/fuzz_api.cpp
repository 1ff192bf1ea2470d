// fuzz_api: random sequences of tg::Tensor calls. Every call must return or throw tg::Error; anything else (another
// exception type, a signal, a sanitizer report, a hang) is a finding, and so is a realized value that differs from a
// float64 model computed here by plain loops (elementwise ops, reductions, movement ops, matmul).
//   fuzz_api [--seed N] [--count N] [--seconds S] [--session K] [--extreme] [-v]  (FUZZ_SECONDS overrides --seconds)
// --extreme adds dims of 2^62 and INT64_MAX, which still overflow the views' arithmetic (UBSan reports).
// A run is a series of sessions of a few dozen calls on a small pool of live tensors; session K of seed N is the same
// calls every time, so a finding prints `fuzz_api --seed N --session K -v` to replay it alone.
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

#include "error_kind.h"
#include "sanitized.h"
#include "tg/runtime/device.h"
#include "tg/tensor/tensor.h"

#if TG_TEST_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

using namespace tg;
using tg::test::kind_name;

namespace {

// *** options, counters, the call log ***

struct Options {
  uint64_t seed = 1;
  int64_t count = -1;    // calls; -1: until the time is up
  double seconds = -1;   // -1: 10 s, or no limit with --count; both given: whichever ends first
  int64_t session = -1;  // -1: every session in turn
  int hang_s = 60;       // one call running longer is a hang
  bool verbose = false;
  bool extreme = false;  // dims of 2^62 and INT64_MAX too
};
Options opt;

int64_t calls = 0, returned = 0, findings = 0, realized = 0, checked = 0;
std::map<std::string, int64_t> errors_by_kind;
int64_t cur_session = 0;
std::string session_log;  // the readable calls of the current session, printed with a finding
char crash_header[256];

void print_log_raw() {  // async-signal-safe enough: write(2) of a prebuilt string
  ssize_t r = write(2, crash_header, strlen(crash_header));
  r = write(2, session_log.data(), session_log.size());
  (void)r;
}
void update_header() {
  snprintf(crash_header, sizeof(crash_header),
           "\n*** fuzz_api: seed %llu session %lld call %lld; replay: fuzz_api --seed %llu --session %lld -v\n"
           "*** the calls of this session:\n",
           (unsigned long long)opt.seed, (long long)cur_session, (long long)calls, (unsigned long long)opt.seed,
           (long long)cur_session);
}
extern "C" void on_signal(int sig) {
  const char* what = sig == SIGALRM ? "\n*** FINDING: HANG (a call ran past the limit)\n" : "\n*** FINDING: SIGNAL\n";
  ssize_t r = write(2, what, strlen(what));
  (void)r;
  print_log_raw();
  signal(sig, SIG_DFL);
  if (sig == SIGALRM) _exit(3);
  raise(sig);
}
#if TG_TEST_ASAN
extern "C" void on_sanitizer_death() {
  const char* what = "\n*** FINDING: sanitizer report above\n";
  ssize_t r = write(2, what, strlen(what));
  (void)r;
  print_log_raw();
}
#endif

void finding(const std::string& what) {
  findings++;
  if (findings <= 25) {
    update_header();
    fprintf(stderr, "\n*** FINDING %lld: %s", (long long)findings, what.c_str());
    print_log_raw();
  }
}

// *** random numbers ***

struct Rng {
  std::mt19937_64 g;
  explicit Rng(uint64_t s) : g(s) {}
  int64_t range(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(g); }  // [lo, hi]
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(g) < p; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(range(0, static_cast<int64_t>(v.size()) - 1))];
  }
};

// *** models: shape, dtype and float64 host values of each live tensor ***

__extension__ typedef unsigned __int128 u128;

constexpr int64_t kMaxModel = 4096;  // at most this many elements are modelled and realized
constexpr int64_t kHuge = int64_t(1) << 40;

struct Model {
  Shape shape;
  DType dtype;
  std::vector<double> v;  // row-major; valid when known
  bool known = false;
  bool huge = false;     // some tensor in its graph is too big to realize
  bool reduced = false;  // a reduction over a huge tensor is in its graph: realizing it would run for ages
  int64_t ndim_() const { return static_cast<int64_t>(shape.size()); }
};
struct Live {
  Tensor t;
  Model m;
  std::string name;
};

std::string shape_s(const Shape& s) {
  std::string r = "{";
  for (size_t i = 0; i < s.size(); i++) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "}";
}
std::string ints_s(const std::vector<int64_t>& s) { return shape_s(Shape(s.begin(), s.end())); }
std::string num_s(double v) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v < 0 ? "-INFINITY" : "INFINITY";
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}
// host data as C++: the values themselves when there are few, else their count
std::string vals_s(const std::vector<double>& v) {
  if (v.size() > 24) return "std::vector<double>(" + std::to_string(v.size()) + ")";
  std::string r = "std::vector<double>{";
  for (size_t i = 0; i < v.size(); i++) r += (i ? ", " : "") + num_s(v[i]);
  return r + "}";
}
std::string dtype_name(DType d) {
  for (auto [dt, n] : std::vector<std::pair<DType, const char*>>{{dtypes::bool_, "bool_"},
                                                                 {dtypes::int8, "int8"},
                                                                 {dtypes::uint8, "uint8"},
                                                                 {dtypes::int16, "int16"},
                                                                 {dtypes::uint16, "uint16"},
                                                                 {dtypes::int32, "int32"},
                                                                 {dtypes::uint32, "uint32"},
                                                                 {dtypes::int64, "int64"},
                                                                 {dtypes::uint64, "uint64"},
                                                                 {dtypes::float16, "float16"},
                                                                 {dtypes::bfloat16, "bfloat16"},
                                                                 {dtypes::float32, "float32"},
                                                                 {dtypes::float64, "float64"},
                                                                 {dtypes::fp8e4m3, "fp8e4m3"},
                                                                 {dtypes::fp8e5m2, "fp8e5m2"}})
    if (dt == d) return std::string("dtypes::") + n;
  return d.repr();
}

// numel with overflow guard: -1 when above 2^62
int64_t numel_safe(const Shape& s) {
  i128 n = 1;
  for (sint d : s) {
    if (d < 0) return -1;
    n *= d;
    if (n > (i128(1) << 62)) return -1;
  }
  return static_cast<int64_t>(n);
}
bool small(const Shape& s) {
  int64_t n = numel_safe(s);
  return n >= 0 && n <= kMaxModel;
}
std::vector<int64_t> unravel(int64_t flat, const Shape& s) {
  std::vector<int64_t> idx(s.size());
  for (size_t i = s.size(); i-- > 0;) {
    idx[i] = s[i] ? flat % s[i] : 0;
    flat = s[i] ? flat / s[i] : 0;
  }
  return idx;
}
int64_t ravel(const std::vector<int64_t>& idx, const Shape& s) {
  int64_t f = 0;
  for (size_t i = 0; i < s.size(); i++) f = f * s[i] + idx[i];
  return f;
}

bool is_int_dt(DType d) { return dtypes::is_int(d); }
bool is_float_dt(DType d) { return dtypes::is_float(d); }
constexpr double kExact = 9007199254740992.0;  // 2^53: int values above it aren't exact in a double

// v into dtype d: ints wrap modulo 2^bits (v must be integral), floats round; nullopt when not modellable
std::optional<double> round_to(DType d, double v) {
  if (d == dtypes::bool_) return v != 0 ? 1.0 : 0.0;  // NaN is true
  if (is_int_dt(d)) {
    if (!std::isfinite(v) || v != std::trunc(v) || std::fabs(v) > 1e30) return std::nullopt;
    i128 x = static_cast<i128>(v);
    int bits = d.itemsize() * 8;
    u128 m = (u128)x & (((u128)1 << bits) - 1);
    i128 r = static_cast<i128>(m);
    if (!dtypes::is_unsigned(d) && (m >> (bits - 1)) & 1) r -= (i128)1 << bits;
    double out = static_cast<double>(r);
    if (std::fabs(out) > kExact) return std::nullopt;
    return out;
  }
  if (d == dtypes::float16) return truncate_fp16(v);
  if (d == dtypes::bfloat16) {  // through float32, rounded to nearest even as a cast kernel does
    float f = static_cast<float>(v);
    if (std::isnan(f)) return v;
    uint32_t u = std::bit_cast<uint32_t>(f);
    return std::bit_cast<float>(((u + 0x7fff + ((u >> 16) & 1)) >> 16) << 16);
  }
  if (d == dtypes::float32) return static_cast<double>(static_cast<float>(v));
  if (d == dtypes::float64) return v;
  if (d == dtypes::fp8e4m3 || d == dtypes::fp8e5m2) return fp8_to_float(float_to_fp8(static_cast<float>(v), d), d);
  return std::nullopt;
}
// an int model value as a wrapped 64-bit integer (values are exact below 2^53). A float model's value passes here
// too (its bits are never used) and may not fit 64 bits: converting it would be undefined, so it gives 0
uint64_t as_bits(double v) {
  if (v >= -0x1p63 && v < 0x1p63) return static_cast<uint64_t>(static_cast<int64_t>(v));
  if (v >= 0x1p63 && v < 0x1p64) return static_cast<uint64_t>(v);
  return 0;
}
std::optional<double> wrap_bits(DType d, uint64_t bits) {
  return round_to(d, static_cast<double>(static_cast<int64_t>(bits)));  // int64 reinterpretation, then wrapped to d
}
// round_to over a whole model; unknown when any value doesn't fit
void finish(Model& m) {
  if (!m.known) return;
  for (double& x : m.v) {
    auto r = round_to(m.dtype, x);
    if (!r) {
      m.known = false;
      m.v.clear();
      return;
    }
    x = *r;
  }
}

double eps_of(DType d) {
  if (d == dtypes::float16) return 1.0 / 1024;
  if (d == dtypes::bfloat16) return 1.0 / 128;
  if (d == dtypes::float32) return 1.2e-7;
  if (d == dtypes::float64) return 2.3e-16;
  if (d == dtypes::fp8e4m3) return 1.0 / 8;
  if (d == dtypes::fp8e5m2) return 1.0 / 4;
  return 0;
}

// decodes the realized bytes of t into float64s
std::vector<double> decode(const std::vector<uint8_t>& raw, DType d) {
  size_t n = raw.size() / static_cast<size_t>(d.itemsize());
  std::vector<double> out(n);
  auto rd = [&](auto type_tag, size_t i) {
    decltype(type_tag) x;
    std::memcpy(&x, raw.data() + i * sizeof(x), sizeof(x));
    return x;
  };
  for (size_t i = 0; i < n; i++) {
    if (d == dtypes::bool_)
      out[i] = raw[i] != 0;
    else if (d == dtypes::int8)
      out[i] = rd(int8_t{}, i);
    else if (d == dtypes::uint8)
      out[i] = rd(uint8_t{}, i);
    else if (d == dtypes::int16)
      out[i] = rd(int16_t{}, i);
    else if (d == dtypes::uint16)
      out[i] = rd(uint16_t{}, i);
    else if (d == dtypes::int32)
      out[i] = rd(int32_t{}, i);
    else if (d == dtypes::uint32)
      out[i] = rd(uint32_t{}, i);
    else if (d == dtypes::int64)
      out[i] = static_cast<double>(rd(int64_t{}, i));
    else if (d == dtypes::uint64)
      out[i] = static_cast<double>(rd(uint64_t{}, i));
    else if (d == dtypes::float32)
      out[i] = rd(float{}, i);
    else if (d == dtypes::float64)
      out[i] = rd(double{}, i);
    else if (d == dtypes::bfloat16)
      out[i] = std::bit_cast<float>(static_cast<uint32_t>(rd(uint16_t{}, i)) << 16);
    else if (d == dtypes::float16) {
      uint16_t h = rd(uint16_t{}, i);
      int e = (h >> 10) & 31, m = h & 1023;
      double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp(m + 1024, e - 25);
      out[i] = (h & 0x8000) ? -v : v;
    } else if (d == dtypes::fp8e4m3 || d == dtypes::fp8e5m2)
      out[i] = fp8_to_float(raw[i], d);
  }
  return out;
}

// *** the fuzzer ***

const std::vector<DType> kDtypes{dtypes::bool_,   dtypes::int8,    dtypes::uint8,    dtypes::int16,
                                 dtypes::uint16,  dtypes::int32,   dtypes::uint32,   dtypes::int64,
                                 dtypes::uint64,  dtypes::float16, dtypes::bfloat16, dtypes::float32,
                                 dtypes::float64, dtypes::float32, dtypes::int32,    dtypes::fp8e4m3};
const std::vector<DType> kFloats{dtypes::float16, dtypes::bfloat16, dtypes::float32, dtypes::float64};

struct Fuzzer {
  Rng r;
  std::vector<Live> pool;
  int64_t next_name = 0;
  bool stop_session = false;

  explicit Fuzzer(uint64_t s) : r(s) {}

  // logs the call, runs it; false when it threw tg::Error (counted) or something else (a finding)
  template <class F>
  bool call(const std::string& desc, F&& f, bool log = true) {
    calls++;
    if (log) session_log += "  " + desc + "\n";
    if (log && opt.verbose) fprintf(stderr, "[%lld] %s\n", (long long)calls, desc.c_str());
    update_header();
    alarm(static_cast<unsigned>(opt.hang_s));
    bool ok = false;
    try {
      f();
      if (log) returned++;
      ok = true;
    } catch (const tg::Error& e) {
      errors_by_kind[kind_name(e.kind)]++;
      if (opt.verbose) fprintf(stderr, "    -> %s: %s\n", kind_name(e.kind), e.what());
      session_log += std::string("    -> ") + kind_name(e.kind) + "\n";
    } catch (const tg::InternalError& e) {
      finding(cat("tg::InternalError: ", e.what(), "\n"));
      stop_session = true;
    } catch (const std::exception& e) {
      finding(cat("non-tg::Error exception (", typeid(e).name(), "): ", e.what(), "\n"));
      stop_session = true;
    } catch (...) {
      finding("unknown exception type\n");
      stop_session = true;
    }
    alarm(0);
    return ok;
  }

  std::string fresh() { return "t" + std::to_string(next_name++); }
  void add(const Tensor& t, Model m, const std::string& name) {
    // the model's shape must be the tensor's; an unknown model takes the tensor's shape and dtype
    Shape got;
    DType gdt;
    calls--;  // not a call of its own: reading back what the call made
    bool ok = call(
        "", [&] { got = t.shape(), gdt = t.dtype(); }, false);
    if (!ok) return;
    if (m.known && got != m.shape) {
      finding(cat("shape mismatch for ", name, ": engine ", shape_s(got), ", model ", shape_s(m.shape), "\n"));
      return;
    }
    if (m.known && gdt != m.dtype) {
      m.known = false;  // dtype promotion is not modelled exactly; values then aren't either
    }
    m.shape = got;
    m.dtype = gdt;
    if (!small(got)) m.known = false, m.huge = true;
    for (sint d : got)  // (2^40, 0) has no elements, but arguments made from its dims would be huge
      if (d > kMaxModel) m.huge = true;
    if (!m.known) m.v.clear();
    if (pool.size() >= 10) pool.erase(pool.begin() + r.range(0, static_cast<int64_t>(pool.size()) - 1));
    pool.push_back(Live{t, std::move(m), name});
  }
  Live& any() { return pool[static_cast<size_t>(r.range(0, static_cast<int64_t>(pool.size()) - 1))]; }

  // *** argument generators ***
  int64_t dim_size() {
    int64_t k = r.range(0, 99);
    if (k < 4) return 0;
    // dims near INT64_MAX overflow the views' stride and offset arithmetic (known, not fixed): only with --extreme
    if (k < 6 && opt.extreme) return r.pick(std::vector<int64_t>{kHuge, int64_t(1) << 62, -1, -3, INT64_MAX});
    if (k < 6) return r.pick(std::vector<int64_t>{kHuge, -1, -3});
    return r.range(1, k < 40 ? 2 : 5);
  }
  Shape shape(int max_rank = 4) {
    Shape s(static_cast<size_t>(r.range(0, max_rank)));
    for (sint& d : s) d = dim_size();
    return s;
  }
  Shape sane_shape(int max_rank = 4) {  // no negative/huge dims
    Shape s(static_cast<size_t>(r.range(0, max_rank)));
    for (sint& d : s) d = r.range(0, 99) < 5 ? 0 : r.range(1, 4);
    return s;
  }
  int64_t axis(int64_t ndim) {
    if (r.chance(0.1)) return r.pick(std::vector<int64_t>{ndim, -ndim - 1, 7, -9, INT64_MIN, INT64_MAX});
    return r.range(-std::max<int64_t>(ndim, 1), std::max<int64_t>(ndim, 1) - 1);
  }
  DType dtype() { return r.pick(kDtypes); }
  double value(DType d) {
    if (d == dtypes::bool_) return static_cast<double>(r.range(0, 1));
    if (is_int_dt(d)) {
      if (r.chance(0.05)) return static_cast<double>(as_int(dtypes::max(d)));
      return static_cast<double>(dtypes::is_unsigned(d) ? r.range(0, 20) : r.range(-20, 20));
    }
    if (r.chance(0.03)) return r.pick(std::vector<double>{INFINITY, -INFINITY, NAN, 1e30, -0.0});
    return static_cast<double>(r.range(-32, 32)) / 4;
  }
  static bool norm_axis(int64_t a, int64_t ndim, int64_t& out) {
    int64_t hi = std::max<int64_t>(ndim, 1);
    if (a < -hi || a > hi - 1) return false;
    out = a < 0 ? a + ndim : a;
    return true;
  }

  // *** creation ***
  void create() {
    DType d = dtype();
    std::string n = fresh();
    int64_t k = r.range(0, 9);
    Model m;
    m.dtype = d;
    Tensor out{0};
    if (k <= 3) {  // host data
      Shape s = r.chance(0.9) ? sane_shape() : shape();
      m.shape = s;
      int64_t cnt = numel_safe(s);
      if (cnt < 0 || cnt > kMaxModel) cnt = r.range(0, 8);  // a count that doesn't match: a ValueError
      std::vector<double> vals(static_cast<size_t>(cnt));
      for (double& x : vals) x = value(d);
      if (r.chance(0.03) && !vals.empty()) vals.pop_back();
      m.v = vals;
      m.known = numel_safe(s) == cnt;
      finish(m);
      if (!call(cat(n, " = Tensor(", vals_s(vals), ", ", shape_s(s), ", {.dtype = ", dtype_name(d), "})"),
                [&] { out = Tensor(vals, s, {.dtype = d}); }))
        return;
    } else if (k == 4) {  // scalar
      double v = value(d);
      m.known = true, m.v = {v};
      finish(m);
      if (!call(cat(n, " = Tensor(double(", num_s(v), "), {.dtype = ", dtype_name(d), "})"),
                [&] { out = Tensor(v, {.dtype = d}); }))
        return;
    } else if (k == 5) {  // full / zeros / ones / empty
      Shape s = shape();
      m.shape = s;
      int64_t which = r.range(0, 3);
      double v = which == 0 ? value(d) : which == 1 ? 0 : 1;
      int64_t cnt = numel_safe(s);
      m.known = which < 3 && cnt >= 0 && cnt <= kMaxModel;
      if (m.known) m.v.assign(static_cast<size_t>(cnt), v);
      finish(m);
      const char* fn[] = {"full", "zeros", "ones", "empty"};
      if (!call(cat(n, " = Tensor::", fn[which], "(", shape_s(s), which == 0 ? cat(", ", num_s(v)) : "",
                    ", {.dtype = ", dtype_name(d), "})"),
                [&] {
                  if (which == 0) out = Tensor::full(s, ConstValue(v), {.dtype = d});
                  if (which == 1) out = Tensor::zeros(s, {.dtype = d});
                  if (which == 2) out = Tensor::ones(s, {.dtype = d});
                  if (which == 3) out = Tensor::empty(s, {.dtype = d});
                }))
        return;
      if (numel_safe(s) < 0 || numel_safe(s) > (int64_t(1) << 30)) m.huge = true;
    } else if (k == 6) {  // arange
      int64_t stop = r.chance(0.9) ? r.range(-2, 12) : r.pick(std::vector<int64_t>{kHuge, INT64_MAX});
      m.shape = {std::max<int64_t>(stop, 0)};
      m.known = stop <= kMaxModel;
      for (int64_t i = 0; m.known && i < stop; i++) m.v.push_back(static_cast<double>(i));
      if (d == dtypes::bool_ || d == dtypes::fp8e4m3) d = dtypes::int32;
      m.dtype = d;
      finish(m);
      if (!call(cat(n, " = Tensor::arange(", stop, ", {.dtype = ", dtype_name(d), "})"),
                [&] { out = Tensor::arange(stop, {.dtype = d}); }))
        return;
      if (stop > kMaxModel) m.huge = true;
    } else if (k == 7) {  // arange(start, stop, step)
      double a = static_cast<double>(r.range(-5, 5)), b = static_cast<double>(r.range(-5, 10)),
             st = r.pick(std::vector<double>{1, 2, -1, 0.5, 0, 3});
      if (!call(cat(n, " = Tensor::arange(", a, ", ", b, ", ", st, ")"), [&] { out = Tensor::arange(a, b, st); }))
        return;
    } else if (k == 8) {  // eye
      int64_t nn = r.chance(0.9) ? r.range(-1, 5) : kHuge;
      std::optional<int64_t> mm;
      if (r.chance(0.5)) mm = r.range(-1, 5);
      if (nn >= 0 && nn <= 64 && (!mm || *mm >= 0)) {
        int64_t cols = mm ? *mm : nn;
        m.shape = {nn, cols};
        m.known = true;
        for (int64_t i = 0; i < nn; i++)
          for (int64_t j = 0; j < cols; j++) m.v.push_back(i == j);
        finish(m);
      }
      if (!call(cat(n, " = Tensor::eye(", nn, mm ? cat(", ", *mm) : "", ", {.dtype = ", dtype_name(d), "})"),
                [&] { out = Tensor::eye(nn, mm, {.dtype = d}); }))
        return;
    } else {  // rand / randn
      Shape s = r.chance(0.9) ? sane_shape() : shape();
      bool normal = r.chance(0.5);
      DType fd = r.chance(0.8) ? r.pick(kFloats) : d;
      if (!call(cat(n, " = Tensor::", normal ? "randn(" : "rand(", shape_s(s), ", {.dtype = ", dtype_name(fd), "})"),
                [&] { out = normal ? Tensor::randn(s, {.dtype = fd}) : Tensor::rand(s, {.dtype = fd}); }))
        return;
      if (!small(s)) m.huge = true;
    }
    if (r.chance(0.15) && is_float_dt(d)) call(cat(n, ".requires_grad_()"), [&] { out.requires_grad_(); });
    add(out, m, n);
  }

  // *** models of the modelled ops ***
  // out[i] = in[src(i)], or fill where src gives -1
  static Model remap(const Model& in, const Shape& out_shape,
                     const std::function<int64_t(const std::vector<int64_t>&)>& src, double fill = 0) {
    Model m;
    m.shape = out_shape, m.dtype = in.dtype, m.huge = in.huge, m.reduced = in.reduced;
    if (!in.known || !small(out_shape)) return m;
    int64_t n = numel_safe(out_shape);
    m.v.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; i++) {
      int64_t s = src(unravel(i, out_shape));
      m.v[static_cast<size_t>(i)] = s < 0 ? fill : in.v[static_cast<size_t>(s)];
    }
    m.known = true;
    return m;
  }
  static std::optional<Shape> broadcast(const Shape& a, const Shape& b) {
    Shape out(std::max(a.size(), b.size()));
    for (size_t i = 0; i < out.size(); i++) {
      int64_t x = i < out.size() - a.size() ? 1 : int64_t(a[i - (out.size() - a.size())]);
      int64_t y = i < out.size() - b.size() ? 1 : int64_t(b[i - (out.size() - b.size())]);
      if (x != y && x != 1 && y != 1) return std::nullopt;
      out[i] = x == 1 ? y : x;
    }
    return out;
  }
  static Model expand_model(const Model& in, const Shape& out) {
    size_t off = out.size() - in.shape.size();
    return remap(in, out, [&](const std::vector<int64_t>& idx) {
      std::vector<int64_t> s(in.shape.size());
      for (size_t i = 0; i < s.size(); i++) s[i] = in.shape[i] == 1 ? 0 : idx[i + off];
      return ravel(s, in.shape);
    });
  }
  static Model reshape_model(const Model& in, const Shape& s) {
    Model m = in;
    m.shape = s;
    return m;
  }
  static Model permute_model(const Model& in, const std::vector<int64_t>& order) {
    Shape s(order.size());
    for (size_t i = 0; i < order.size(); i++) s[i] = in.shape[static_cast<size_t>(order[i])];
    return remap(in, s, [&](const std::vector<int64_t>& idx) {
      std::vector<int64_t> src(order.size());
      for (size_t i = 0; i < order.size(); i++) src[static_cast<size_t>(order[i])] = idx[i];
      return ravel(src, in.shape);
    });
  }
  // elementwise binary with broadcasting: each input rounded to the compute dtype cd, f applied, rounded to out dtype
  static Model binary_model(const Model& a, const Model& b, DType cd, DType od, const std::string& op) {
    Model m;
    m.dtype = od;
    m.huge = a.huge || b.huge, m.reduced = a.reduced || b.reduced;
    auto s = broadcast(a.shape, b.shape);
    if (!s) return m;
    m.shape = *s;
    if (!a.known || !b.known || !small(*s)) return m;
    Model ea = expand_model(a, *s), eb = expand_model(b, *s);
    m.v.resize(ea.v.size());
    m.known = true;
    for (size_t i = 0; i < m.v.size(); i++) {
      auto x = round_to(cd, ea.v[i]), y = round_to(cd, eb.v[i]);
      if (!x || !y) return m.known = false, m.v.clear(), m;
      double v = 0;
      if (is_int_dt(cd) && (op == "add" || op == "sub" || op == "mul")) {  // modulo 2^64, then wrapped to od
        uint64_t p = as_bits(*x), q = as_bits(*y);
        uint64_t w = op == "add" ? p + q : op == "sub" ? p - q : p * q;
        auto rr = wrap_bits(od, w);
        if (!rr) return m.known = false, m.v.clear(), m;
        m.v[i] = *rr;
        continue;
      }
      if (op == "add") v = *x + *y;
      if (op == "sub") v = *x - *y;
      if (op == "mul") {  // x * 0 folds to 0 (as the reference's symbolic rules): not IEEE for inf and nan
        if (!std::isfinite(*x) || !std::isfinite(*y)) return m.known = false, m.v.clear(), m;
        v = *x * *y;
      }
      if (op == "maximum" || op == "minimum") {
        if (std::isnan(*x) || std::isnan(*y)) return m.known = false, m.v.clear(), m;
        v = op == "maximum" ? std::max(*x, *y) : std::min(*x, *y);
      }
      if (op == "lt") v = *x < *y;
      if (op == "eq") v = *x == *y;
      if (op == "ne") v = *x != *y;
      m.v[i] = v;
    }
    finish(m);
    return m;
  }
  // sum (op "sum"), prod, max, min over axes (normalized, deduped); values into the out dtype od
  static Model reduce_model(const Model& in, std::vector<int64_t> axes, bool keepdim, DType od, const std::string& op,
                            std::vector<double>* scale = nullptr) {
    Model m;
    m.dtype = od;
    m.huge = in.huge;
    m.reduced = in.reduced || in.huge;
    std::vector<bool> red(in.shape.size(), axes.empty());
    for (int64_t a : axes) red[static_cast<size_t>(a)] = true;
    Shape out;
    for (size_t i = 0; i < in.shape.size(); i++)
      if (!red[i])
        out.push_back(in.shape[i]);
      else if (keepdim)
        out.push_back(1);
    m.shape = out;
    if (!in.known) return m;
    int64_t n = numel_safe(out);
    std::vector<double> acc(static_cast<size_t>(n), op == "prod"  ? 1
                                                    : op == "max" ? -INFINITY
                                                    : op == "min" ? INFINITY
                                                                  : 0);
    std::vector<uint64_t> iacc(static_cast<size_t>(n), op == "prod" ? 1 : 0);
    std::vector<int64_t> cnt(static_cast<size_t>(n), 0);
    if (scale) scale->assign(static_cast<size_t>(n), 0);
    bool ints = is_int_dt(od) || od == dtypes::bool_;
    for (size_t i = 0; i < in.v.size(); i++) {
      std::vector<int64_t> idx = unravel(static_cast<int64_t>(i), in.shape), o;
      for (size_t j = 0; j < idx.size(); j++)
        if (!red[j])
          o.push_back(idx[j]);
        else if (keepdim)
          o.push_back(0);
      size_t f = static_cast<size_t>(ravel(o, out));
      double x = in.v[i];
      cnt[f]++;
      if (op == "sum") acc[f] += x, iacc[f] += as_bits(x);
      if (op == "prod") acc[f] *= x, iacc[f] *= as_bits(x);
      if (op == "max") {
        if (std::isnan(x)) return m;
        acc[f] = std::max(acc[f], x);
      }
      if (op == "min") {
        if (std::isnan(x)) return m;
        acc[f] = std::min(acc[f], x);
      }
      if (scale) (*scale)[f] += std::fabs(x);
    }
    m.v.resize(static_cast<size_t>(n));
    for (size_t f = 0; f < m.v.size(); f++) {
      if ((op == "max" || op == "min") && cnt[f] == 0) return m;  // the identity of an empty max isn't modelled
      if (ints && (op == "sum" || op == "prod") && !(is_float_dt(in.dtype))) {
        auto rr = wrap_bits(od, iacc[f]);
        if (!rr) return m;
        m.v[f] = *rr;
      } else
        m.v[f] = acc[f];
    }
    m.known = true;
    finish(m);
    return m;
  }

  bool norm_axes(const std::vector<int64_t>& axes, int64_t ndim, std::vector<int64_t>& out) {
    out.clear();
    for (int64_t a : axes) {
      int64_t x = 0;
      if (!norm_axis(a, ndim, x)) return false;
      if (ndim == 0) continue;
      if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
    }
    return true;
  }

  // *** ops ***
  void op_elementwise_binary() {
    Live a = any();
    Live b = r.chance(0.8) ? any() : a;
    if (r.chance(0.2)) {  // a scalar operand
      double v = value(a.m.dtype);
      Model sm{{}, a.m.dtype, {v}, true};
      finish(sm);
      Tensor st = Tensor(v, {.dtype = a.m.dtype});
      b = Live{st, sm, cat("Tensor(double(", num_s(v), "), {.dtype = ", dtype_name(a.m.dtype), "})")};
    }
    static const std::vector<std::string> ops{"add", "sub", "mul",         "maximum",    "minimum",
                                              "lt",  "eq",  "ne",          "div",        "idiv",
                                              "mod", "pow", "bitwise_and", "bitwise_or", "bitwise_xor"};
    std::string op = r.pick(ops);
    bool rev = r.chance(0.2) && (op == "add" || op == "sub" || op == "mul" || op == "div");
    std::string n = fresh();
    Tensor out{0};
    if (!call(cat(n, " = ", a.name, ".", op, "(", b.name, rev ? ", true" : "", ")"), [&] {
          const Tensor &x = a.t, &y = b.t;
          if (op == "add") out = x.add(y, rev);
          if (op == "sub") out = x.sub(y, rev);
          if (op == "mul") out = x.mul(y, rev);
          if (op == "maximum") out = x.maximum(y);
          if (op == "minimum") out = x.minimum(y);
          if (op == "lt") out = x.lt(y);
          if (op == "eq") out = x.eq(y);
          if (op == "ne") out = x.ne(y);
          if (op == "div") out = x.div(y, rev);
          if (op == "idiv") out = x.idiv(y);
          if (op == "mod") out = x.mod(y);
          if (op == "pow") out = x.pow(y);
          if (op == "bitwise_and") out = x.bitwise_and(y);
          if (op == "bitwise_or") out = x.bitwise_or(y);
          if (op == "bitwise_xor") out = x.bitwise_xor(y);
        })) {
      return;
    }
    DType od = out.dtype();
    DType cd = od;
    if (op == "lt" || op == "eq" || op == "ne") cd = least_upper_dtype({a.m.dtype, b.m.dtype});
    Model m;
    bool modelled = op == "add" || op == "mul" || op == "maximum" || op == "minimum" || op == "lt" || op == "eq" ||
                    op == "ne" || (op == "sub" && od != dtypes::bool_);
    const Model &ma = rev ? b.m : a.m, &mb = rev ? a.m : b.m;
    m = binary_model(ma, mb, cd, od, modelled ? op : "none");
    if (!modelled) m.known = false;
    // x - x folds to 0 (as the reference's symbolic rules), which isn't IEEE for inf and nan
    bool finite = std::all_of(a.m.v.begin(), a.m.v.end(), [](double x) { return std::isfinite(x); });
    if (a.t.is(b.t) && !finite) m.known = false;
    if (!broadcast(a.m.shape, b.m.shape) && !a.m.huge && !b.m.huge)
      finding(cat(op, " of shapes ", shape_s(a.m.shape), " and ", shape_s(b.m.shape), " returned (can't broadcast)\n"));
    add(out, m, n);
  }

  void op_unary() {
    Live a = any();
    static const std::vector<std::string> ops{
        "neg",   "abs",         "relu",        "exp",        "sqrt",       "log",    "sin",  "sigmoid", "tanh",
        "gelu",  "logical_not", "bitwise_not", "reciprocal", "contiguous", "detach", "sign", "floor",   "round",
        "isnan", "softmax",     "log_softmax", "erf",        "lshift",     "rshift", "clip"};
    std::string op = r.pick(ops);
    std::string n = fresh();
    Tensor out{0};
    int64_t sh = r.range(-1, 9);
    if (!call(cat(n, " = ", a.name, ".", op, "()"), [&] {
          const Tensor& x = a.t;
          if (op == "neg") out = x.neg();
          if (op == "abs") out = x.abs();
          if (op == "relu") out = x.relu();
          if (op == "exp") out = x.exp();
          if (op == "sqrt") out = x.sqrt();
          if (op == "log") out = x.log();
          if (op == "sin") out = x.sin();
          if (op == "sigmoid") out = x.sigmoid();
          if (op == "tanh") out = x.tanh();
          if (op == "gelu") out = x.gelu();
          if (op == "logical_not") out = x.logical_not();
          if (op == "bitwise_not") out = x.bitwise_not();
          if (op == "reciprocal") out = x.reciprocal();
          if (op == "contiguous") out = x.contiguous();
          if (op == "detach") out = x.detach();
          if (op == "sign") out = x.sign();
          if (op == "floor") out = x.floor();
          if (op == "round") out = x.round();
          if (op == "isnan") out = x.isnan();
          if (op == "softmax") out = x.softmax(axis(x.ndim()));
          if (op == "log_softmax") out = x.log_softmax(axis(x.ndim()));
          if (op == "erf") out = x.erf();
          if (op == "lshift") out = x.lshift(sh);
          if (op == "rshift") out = x.rshift(sh);
          if (op == "clip") out = x.clip(ConstValue(int64_t(-2)), ConstValue(3.5));
        }))
      return;
    Model m = a.m;
    m.dtype = out.dtype();
    bool fl = is_float_dt(a.m.dtype);
    if (m.known && m.dtype == a.m.dtype) {
      bool ok = true;
      for (double& x : m.v) {
        if (op == "neg" && a.m.dtype != dtypes::bool_) {
          std::optional<double> w = is_int_dt(a.m.dtype) ? wrap_bits(a.m.dtype, 0 - as_bits(x)) : -x;
          ok &= w.has_value();
          x = w.value_or(0);
        } else if (op == "abs" && fl)
          x = std::fabs(x);
        else if (op == "relu" && (fl || is_int_dt(a.m.dtype)) && !std::isnan(x))
          x = std::max(x, 0.0);
        else if (op == "exp" && fl)
          x = std::exp(x);
        else if (op == "sqrt" && fl)
          x = std::sqrt(x);
        else if (op == "contiguous" || op == "detach") {
        } else
          ok = false;
      }
      m.known = ok;
      finish(m);
    } else
      m.known = false;
    add(out, m, n);
  }

  void op_cast() {
    Live a = any();
    DType d = dtype();
    bool bc = r.chance(0.25);
    std::string n = fresh();
    Tensor out{0};
    if (!call(cat(n, " = ", a.name, bc ? ".bitcast(" : ".cast(", dtype_name(d), ")"),
              [&] { out = bc ? a.t.bitcast(d) : a.t.cast(d); }))
      return;
    Model m = a.m;
    m.dtype = d;
    if (bc) m.known = false;
    if (m.known && is_int_dt(d) && is_float_dt(a.m.dtype)) {  // float -> int: truncates; out of range isn't defined
      for (double& x : m.v) {
        if (!std::isfinite(x))
          m.known = false;
        else
          x = std::trunc(x);
        if (m.known && (x < as_double(dtypes::min(d)) || x > as_double(dtypes::max(d)))) m.known = false;
      }
    }
    if (m.known &&
        (d == dtypes::fp8e4m3 || d == dtypes::fp8e5m2 || a.m.dtype == dtypes::fp8e4m3 || a.m.dtype == dtypes::fp8e5m2))
      m.known = false;  // fp8 saturation rules are not modelled
    if (m.known && (d == dtypes::float16 || d == dtypes::bfloat16) && is_int_dt(a.m.dtype) && a.m.dtype.itemsize() >= 4)
      m.known = false;  // big ints to half: through float32, double rounding
    finish(m);
    add(out, m, n);
  }

  void op_movement() {
    Live a = any();
    const Model& im = a.m;
    int64_t nd = static_cast<int64_t>(im.shape.size());
    std::string n = fresh();
    Tensor out{0};
    Model m;
    m.dtype = im.dtype, m.huge = im.huge, m.reduced = im.reduced;
    int64_t k = r.range(0, 17);
    if (k == 0) {  // reshape
      Shape s;
      int64_t total = numel_safe(im.shape);
      if (r.chance(0.7) && total >= 0) {  // a valid factorization, maybe with a -1
        int64_t rest = total;
        while (rest > 1 && s.size() < 4) {
          int64_t f = rest;  // no small factor: the rest at once
          for (int64_t c = 2; c <= std::min<int64_t>(rest, 64); c++)
            if (rest % c == 0) {
              f = c;
              break;
            }
          s.push_back(f);
          rest /= f;
        }
        if (total == 0) s = {0, r.range(1, 3)};
        if (r.chance(0.3)) s.push_back(1);
        if (!s.empty() && r.chance(0.4) && total > 0)
          s[static_cast<size_t>(r.range(0, static_cast<int64_t>(s.size()) - 1))] = -1;
      } else
        s = shape();
      if (!call(cat(n, " = ", a.name, ".reshape(", shape_s(s), ")"), [&] { out = a.t.reshape(s); })) return;
      Shape want = s;
      int64_t known_p = 1, neg = 0;
      for (sint d : s) d == -1 ? neg++ : known_p *= d;
      if (neg == 1 && known_p > 0)
        for (sint& d : want)
          if (d == -1) d = total / known_p;
      if (numel_safe(want) != total && total >= 0 && !im.huge)
        finding(cat("reshape of ", shape_s(im.shape), " to ", shape_s(s), " returned ", shape_s(out.shape()), "\n"));
      m = reshape_model(im, want);
    } else if (k == 1) {  // expand
      Shape s = im.shape;
      if (r.chance(0.3)) s.insert(s.begin(), r.range(0, 3));
      for (sint& d : s)
        if (r.chance(0.4)) d = r.chance(0.2) ? -1 : r.chance(0.1) ? kHuge : r.range(0, 4);
      if (!call(cat(n, " = ", a.name, ".expand(", shape_s(s), ")"), [&] { out = a.t.expand(s); })) return;
      Shape want = s;
      size_t off = s.size() - im.shape.size();
      for (size_t i = off; i < s.size(); i++)
        if (want[i] == -1) want[i] = im.shape[i - off];
      m = expand_model(im, want);
    } else if (k == 2) {  // permute
      std::vector<int64_t> order(static_cast<size_t>(nd));
      for (int64_t i = 0; i < nd; i++) order[static_cast<size_t>(i)] = i;
      std::shuffle(order.begin(), order.end(), r.g);
      if (r.chance(0.3) && nd > 0) order[0] -= nd;  // negative dims
      if (r.chance(0.1)) order.push_back(r.range(-3, 3));
      if (r.chance(0.1) && !order.empty()) order[0] = order.back();
      if (!call(cat(n, " = ", a.name, ".permute(", ints_s(order), ")"), [&] { out = a.t.permute(order); })) return;
      std::vector<int64_t> o;
      if (!norm_axes(order, nd, o) || static_cast<int64_t>(o.size()) != nd)
        finding(cat("permute(", ints_s(order), ") of ", shape_s(im.shape), " returned\n"));
      else
        m = permute_model(im, o);
    } else if (k == 3) {  // flip
      std::vector<int64_t> axes;
      for (int64_t i = r.range(0, 2); i > 0; i--) axes.push_back(axis(nd));
      if (!call(cat(n, " = ", a.name, ".flip(", ints_s(axes), ")"), [&] { out = a.t.flip(axes); })) return;
      std::vector<int64_t> o;
      if (!norm_axes(axes, nd, o))
        finding(cat("flip(", ints_s(axes), ") of ", shape_s(im.shape), " returned\n"));
      else if (o.size() == axes.size())  // a repeated axis: the reference raises
        m = remap(im, im.shape, [&](const std::vector<int64_t>& idx) {
          std::vector<int64_t> s = idx;
          for (int64_t ax : o)
            s[static_cast<size_t>(ax)] = im.shape[static_cast<size_t>(ax)] - 1 - s[static_cast<size_t>(ax)];
          return ravel(s, im.shape);
        });
    } else if (k == 4 || k == 5) {  // pad, with a mode
      Mask p(static_cast<size_t>(nd));
      for (auto& [b, e] : p) b = r.range(-1, 2), e = r.range(-1, 2);
      if (r.chance(0.1)) p.push_back({1, 1});
      if (r.chance(0.05) && !p.empty()) p[0].second = kHuge;
      std::string mode =
          k == 4 ? "constant"
                 : r.pick(std::vector<std::string>{"constant", "reflect", "replicate", "circular", "bogus"});
      double fill = r.pick(std::vector<double>{0, 1, -2, 2.5});
      if (!call(cat(n, " = ", a.name, ".pad(<", p.size(), " pairs>, \"", mode, "\", ", fill, ")"),
                [&] { out = a.t.pad(p, mode, ConstValue(fill)); }))
        return;
      if (p.size() != static_cast<size_t>(nd)) return add(out, m, n);
      Shape s = im.shape;
      bool neg = false;
      for (size_t i = 0; i < s.size(); i++) s[i] += p[i].first + p[i].second, neg |= p[i].first < 0 || p[i].second < 0;
      if (mode == "constant" || (!neg && mode != "bogus")) {
        m = remap(
            im, s,
            [&](const std::vector<int64_t>& idx) -> int64_t {
              std::vector<int64_t> src(idx.size());
              for (size_t i = 0; i < idx.size(); i++) {
                int64_t x = idx[i] - p[i].first, d = im.shape[i];
                if (x < 0 || x >= d) {
                  if (mode == "constant") return -1;
                  if (mode == "replicate") x = std::clamp<int64_t>(x, 0, d - 1);
                  if (mode == "circular") x = ((x % d) + d) % d;
                  if (mode == "reflect") x = x < 0 ? -x : 2 * (d - 1) - x;
                }
                src[i] = x;
              }
              return ravel(src, im.shape);
            },
            fill);
        if (out.dtype() != im.dtype) m.known = false;  // a float fill of an int tensor: values then float
        finish(m);
      }
    } else if (k == 6) {  // shrink
      Mask p(static_cast<size_t>(nd));
      bool valid = true;
      for (size_t i = 0; i < p.size(); i++) {
        int64_t d = im.shape[i];
        int64_t b = r.range(0, std::max<int64_t>(0, std::min<int64_t>(d, 4))),
                e = r.range(b, std::min<int64_t>(d, b + 4));
        if (r.chance(0.05)) b = r.range(-2, 5), valid = false;
        if (r.chance(0.05)) e = r.range(-2, 9), valid = false;
        p[i] = {b, e};
      }
      if (!call(cat(n, " = ", a.name, ".shrink(<", p.size(), " pairs>)"), [&] { out = a.t.shrink(p); })) return;
      for (size_t i = 0; i < p.size(); i++)
        valid &= 0 <= p[i].first && p[i].first <= p[i].second && p[i].second <= im.shape[i];
      if (valid) {
        Shape s(p.size());
        for (size_t i = 0; i < p.size(); i++) s[i] = p[i].second - p[i].first;
        m = remap(im, s, [&](const std::vector<int64_t>& idx) {
          std::vector<int64_t> src(idx.size());
          for (size_t i = 0; i < idx.size(); i++) src[i] = idx[i] + p[i].first;
          return ravel(src, im.shape);
        });
      }
    } else if (k == 7) {  // squeeze / unsqueeze
      bool un = r.chance(0.5);
      std::optional<int64_t> d;
      if (un || r.chance(0.7)) d = axis(nd + (un ? 1 : 0));
      if (!call(cat(n, " = ", a.name, un ? ".unsqueeze(" : ".squeeze(", d ? std::to_string(*d) : "", ")"),
                [&] { out = un ? a.t.unsqueeze(*d) : a.t.squeeze(d); }))
        return;
      Shape s = im.shape;
      int64_t x = 0;
      if (un && norm_axis(*d, nd + 1, x))
        s.insert(s.begin() + (*d < 0 ? *d + nd + 1 : *d), 1), m = reshape_model(im, s);
      if (!un && !d) {
        s.erase(std::remove(s.begin(), s.end(), 1), s.end());
        m = reshape_model(im, s);
      }
      if (!un && d && norm_axis(*d, nd, x)) {
        if (nd > 0 && s[static_cast<size_t>(x)] == 1) s.erase(s.begin() + x);
        m = reshape_model(im, s);
      }
    } else if (k == 8) {  // flatten / unflatten
      bool un = r.chance(0.4);
      int64_t s0 = axis(nd), s1 = axis(nd);
      Shape sizes{r.range(-1, 3), r.range(-1, 3)};
      if (!call(cat(n, " = ", a.name,
                    un ? cat(".unflatten(", s0, ", ", shape_s(sizes), ")") : cat(".flatten(", s0, ", ", s1, ")")),
                [&] { out = un ? a.t.unflatten(s0, sizes) : a.t.flatten(s0, s1); }))
        return;
      m = reshape_model(im, out.shape());
      if (numel_safe(out.shape()) != numel_safe(im.shape) && !im.huge)
        finding(cat("flatten/unflatten changed the element count: ", shape_s(im.shape), " -> ", shape_s(out.shape()),
                    "\n"));
    } else if (k == 9) {  // transpose
      int64_t d0 = axis(nd), d1 = axis(nd);
      if (!call(cat(n, " = ", a.name, ".transpose(", d0, ", ", d1, ")"), [&] { out = a.t.transpose(d0, d1); })) return;
      int64_t x0 = 0, x1 = 0;
      if (norm_axis(d0, nd, x0) && norm_axis(d1, nd, x1) && nd > 0) {
        std::vector<int64_t> o(static_cast<size_t>(nd));
        for (int64_t i = 0; i < nd; i++) o[static_cast<size_t>(i)] = i;
        std::swap(o[static_cast<size_t>(x0)], o[static_cast<size_t>(x1)]);
        m = permute_model(im, o);
      } else if (nd == 0)
        m = im;
    } else if (k == 10) {  // repeat
      std::vector<int64_t> rep(static_cast<size_t>(nd + r.range(0, 1)));
      for (int64_t& x : rep) x = r.chance(0.05) ? r.pick(std::vector<int64_t>{-1, kHuge}) : r.range(0, 3);
      if (r.chance(0.05) && !rep.empty()) rep.pop_back();
      if (!call(cat(n, " = ", a.name, ".repeat(", ints_s(rep), ")"), [&] { out = a.t.repeat(rep); })) return;
      if (rep.size() >= im.shape.size()) {
        size_t off = rep.size() - im.shape.size();
        Shape s(rep.size());
        for (size_t i = 0; i < s.size(); i++) s[i] = rep[i] * (i < off ? 1 : int64_t(im.shape[i - off]));
        m = remap(im, s, [&](const std::vector<int64_t>& idx) {
          std::vector<int64_t> src(im.shape.size());
          for (size_t i = 0; i < src.size(); i++) src[i] = idx[i + off] % im.shape[i];
          return ravel(src, im.shape);
        });
      }
    } else if (k == 11) {  // split / chunk
      bool ch = r.chance(0.4);
      int64_t sz = r.range(-1, 3), d = axis(nd);
      if (im.huge && !ch) sz = kHuge;  // a huge dim in pieces of 3 is 2^40 tensors: slow, as in the reference
      std::vector<Tensor> parts;
      if (!call(cat("parts = ", a.name, ch ? ".chunk(" : ".split(", sz, ", ", d, ")"),
                [&] { parts = ch ? a.t.chunk(sz, d) : a.t.split(sz, d); }))
        return;
      int64_t x = 0;
      int64_t off = 0;
      for (size_t i = 0; i < parts.size() && i < 3; i++) {
        Model pm;
        Shape ps = parts[i].shape();
        if (norm_axis(d, nd, x) && nd > 0 && ps.size() == im.shape.size())
          pm = remap(im, ps, [&](const std::vector<int64_t>& idx) {
            std::vector<int64_t> src = idx;
            src[static_cast<size_t>(x)] += off;
            return ravel(src, im.shape);
          });
        if (nd > 0 && x >= 0 && x < nd && ps.size() == im.shape.size()) off += ps[static_cast<size_t>(x)];
        add(parts[i], pm, cat(n, "_", i));
      }
      return;
    } else if (k == 12 || k == 13) {  // cat / stack
      bool st = k == 13;
      std::vector<Live> others;
      for (int64_t i = r.range(0, 2); i > 0; i--) others.push_back(r.chance(0.7) ? a : any());
      int64_t d = axis(nd + (st ? 1 : 0));
      std::vector<Tensor> ot;
      std::string names;
      for (Live& o : others) ot.push_back(o.t), names += ", " + o.name;
      if (!call(cat(n, " = ",
                    st ? "Tensor::stack({" + a.name + names + "}"
                       : a.name + ".cat({" + names.substr(std::min<size_t>(2, names.size())) + "}",
                    ", ", d, ")"),
                [&] {
                  if (st) {
                    std::vector<Tensor> all{a.t};
                    all.insert(all.end(), ot.begin(), ot.end());
                    out = Tensor::stack(all, d);
                  } else
                    out = a.t.cat(ot, d);
                }))
        return;
      // model: each piece (unsqueezed for stack) placed along the dim; dtypes must all match to be modelled
      std::vector<Model> pieces{im};
      for (Live& o : others) pieces.push_back(o.m);
      int64_t x = 0;
      int64_t rank = nd + (st ? 1 : 0);
      bool ok = norm_axis(d, rank, x) && rank > 0;
      for (Model& p : pieces) {
        ok &= p.known && p.dtype == out.dtype() && static_cast<int64_t>(p.shape.size()) == nd;
        if (ok && st) p.shape.insert(p.shape.begin() + x, 1);
      }
      if (!ok) return add(out, m, n);
      Shape s = pieces[0].shape;
      s[static_cast<size_t>(x)] = 0;
      for (Model& p : pieces) {
        for (size_t i = 0; i < s.size(); i++)
          if (static_cast<int64_t>(i) != x && p.shape[i] != s[i])
            return finding(cat("cat/stack of mismatched shapes returned ", shape_s(out.shape()), "\n"));
        s[static_cast<size_t>(x)] += p.shape[static_cast<size_t>(x)];
      }
      m.shape = s, m.dtype = out.dtype();
      if (small(s)) {
        m.known = true;
        m.v.resize(static_cast<size_t>(numel_safe(s)));
        for (size_t f = 0; f < m.v.size(); f++) {
          std::vector<int64_t> idx = unravel(static_cast<int64_t>(f), s);
          int64_t c = idx[static_cast<size_t>(x)];
          for (Model& p : pieces) {
            int64_t len = p.shape[static_cast<size_t>(x)];
            if (c < len) {
              idx[static_cast<size_t>(x)] = c;
              m.v[f] = p.v[static_cast<size_t>(ravel(idx, p.shape))];
              break;
            }
            c -= len;
          }
        }
      }
    } else if (k == 14) {  // roll
      int64_t sh = r.range(-5, 5), d = axis(nd);
      if (!call(cat(n, " = ", a.name, ".roll(", sh, ", ", d, ")"), [&] { out = a.t.roll(sh, d); })) return;
      int64_t x = 0;
      if (norm_axis(d, nd, x) && nd > 0)
        m = remap(im, im.shape, [&](const std::vector<int64_t>& idx) {
          std::vector<int64_t> src = idx;
          int64_t len = im.shape[static_cast<size_t>(x)];
          src[static_cast<size_t>(x)] = ((idx[static_cast<size_t>(x)] - sh) % len + len) % len;
          return ravel(src, im.shape);
        });
    } else if (k == 15) {  // unfold
      int64_t d = axis(nd), sz = r.range(-1, 3), st = r.range(-1, 3);
      if (!call(cat(n, " = ", a.name, ".unfold(", d, ", ", sz, ", ", st, ")"), [&] { out = a.t.unfold(d, sz, st); }))
        return;
    } else {  // getitem
      std::vector<Index> idx;
      std::vector<std::string> desc;
      int64_t cnt = r.range(0, nd + 1);
      bool basic = true;
      for (int64_t i = 0; i < cnt; i++) {
        int64_t kind = r.range(0, 9);
        int64_t dsz = i < nd ? int64_t(im.shape[static_cast<size_t>(i)]) : 1;
        if (kind < 3) {
          int64_t v = r.chance(0.85) ? r.range(-dsz, std::max<int64_t>(dsz - 1, 0))
                                     : r.pick(std::vector<int64_t>{dsz, -dsz - 1, INT64_MIN, INT64_MAX});
          idx.emplace_back(v), desc.push_back(std::to_string(v));
        } else if (kind < 7) {
          Slice s;
          if (r.chance(0.5)) s.start = r.range(-4, 4);
          if (r.chance(0.5)) s.stop = r.chance(0.9) ? r.range(-4, 5) : INT64_MAX;
          if (r.chance(0.4)) s.step = r.pick(std::vector<int64_t>{1, 2, -1, -2, 0, 3, INT64_MIN});
          auto o = [](const auto& v) { return v ? cat(*v) : std::string(); };
          idx.emplace_back(s), desc.push_back(cat("Slice{", o(s.start), ":", o(s.stop), ":", o(s.step), "}"));
        } else if (kind == 7) {
          idx.emplace_back(None), desc.push_back("None");
        } else if (kind == 8) {
          idx.emplace_back(Ellipsis), desc.push_back("Ellipsis");
          basic = false;
        } else {
          Live& it = any();
          idx.emplace_back(it.t), desc.push_back(it.name);
          basic = false;
        }
      }
      std::string d = "{";
      for (size_t i = 0; i < desc.size(); i++) d += (i ? ", " : "") + desc[i];
      if (!call(cat(n, " = ", a.name, ".index(", d, "})"), [&] { out = a.t.index(idx); })) return;
      if (basic) m = basic_index_model(im, idx);
    }
    add(out, m, n);
  }

  // python semantics of ints, slices and None
  static Model basic_index_model(const Model& im, const std::vector<Index>& idx) {
    Model m;
    m.dtype = im.dtype;
    Shape os;
    std::vector<std::array<int64_t, 3>> dims;  // per input dim: start, step, count (count -1: an int)
    size_t d = 0;
    for (const Index& ix : idx) {
      if (ix.kind() == Index::Kind::None) {
        os.push_back(1);
        continue;
      }
      if (d >= im.shape.size()) return m;
      int64_t n = im.shape[d++];
      if (ix.kind() == Index::Kind::Int) {
        int64_t v = ix.as_int();
        if (v < -n || v >= n) return m;
        dims.push_back({v < 0 ? v + n : v, 0, -1});
      } else {
        const Slice& s = ix.as_slice();
        int64_t step = s.step.value_or(1);
        if (step == 0 || step == INT64_MIN) return m;
        auto clampi = [&](std::optional<int64_t> v, int64_t def) {
          if (!v) return def;
          int64_t x = *v;
          if (x < 0)
            x = x < -n ? (step < 0 ? -1 : 0) : x + n;
          else if (x >= n)
            x = step < 0 ? n - 1 : n;
          return x;
        };
        int64_t start = clampi(s.start, step < 0 ? n - 1 : 0), stop = clampi(s.stop, step < 0 ? -1 : n);
        int64_t cnt = step > 0 ? (stop > start ? (stop - start + step - 1) / step : 0)
                               : (start > stop ? (start - stop - step - 1) / (-step) : 0);
        dims.push_back({start, step, cnt});
        os.push_back(cnt);
      }
    }
    for (; d < im.shape.size(); d++) dims.push_back({0, 1, im.shape[d]}), os.push_back(im.shape[d]);
    m.shape = os;
    if (!im.known || !small(os)) return m;
    m.v.resize(static_cast<size_t>(numel_safe(os)));
    for (size_t f = 0; f < m.v.size(); f++) {
      std::vector<int64_t> oi = unravel(static_cast<int64_t>(f), os), src;
      size_t o = 0, di = 0;
      for (const Index& ix : idx) {
        if (ix.kind() == Index::Kind::None) {
          o++;
          continue;
        }
        auto [st, sp, c] = dims[di++];
        src.push_back(c < 0 ? st : st + sp * oi[o++]);
      }
      for (; di < dims.size(); di++) src.push_back(oi[o++]);
      m.v[f] = im.v[static_cast<size_t>(ravel(src, im.shape))];
    }
    m.known = true;
    return m;
  }

  void op_reduce() {
    Live a = any();
    int64_t nd = a.m.ndim_();
    static const std::vector<std::string> ops{"sum",    "max",    "min",    "mean",    "prod",
                                              "argmax", "argmin", "cumsum", "cumprod", "cummax",
                                              "any",    "all",    "var",    "std",     "logsumexp"};
    std::string op = r.pick(ops);
    std::vector<int64_t> axes;
    for (int64_t i = r.range(0, 2); i > 0; i--) axes.push_back(axis(nd));
    bool keep = r.chance(0.3);
    std::optional<int64_t> ax1;
    if (r.chance(0.7)) ax1 = axis(nd);
    std::string n = fresh();
    Tensor out{0};
    bool single = op == "argmax" || op == "argmin";
    bool cum = op == "cumsum" || op == "cumprod" || op == "cummax";
    int64_t cax = ax1.value_or(0);
    std::string args = single ? (ax1 ? std::to_string(*ax1) : "std::nullopt") + cat(", ", keep)
                       : cum  ? std::to_string(cax)
                              : ints_s(axes) + cat(", ", keep);
    if (!call(cat(n, " = ", a.name, ".", op, "(", args, ")"), [&] {
          const Tensor& x = a.t;
          if (op == "sum") out = x.sum(axes, keep);
          if (op == "max") out = x.max(axes, keep);
          if (op == "min") out = x.min(axes, keep);
          if (op == "mean") out = x.mean(axes, keep);
          if (op == "prod") out = x.prod(axes, keep);
          if (op == "argmax") out = x.argmax(ax1, keep);
          if (op == "argmin") out = x.argmin(ax1, keep);
          if (op == "cumsum") out = x.cumsum(cax);
          if (op == "cumprod") out = x.cumprod(cax);
          if (op == "cummax") out = x.cummax(cax);
          if (op == "any") out = x.any(axes, keep);
          if (op == "all") out = x.all(axes, keep);
          if (op == "var") out = x.var(axes, keep);
          if (op == "std") out = x.std(axes, keep);
          if (op == "logsumexp") out = x.logsumexp(axes, keep);
        }))
      return;
    Model m;
    m.reduced = a.m.reduced || a.m.huge;
    m.huge = a.m.huge;
    std::vector<int64_t> o;
    if (!single && !cum) {
      if (!norm_axes(axes, nd, o)) {
        finding(cat(op, "(", ints_s(axes), ") of ", shape_s(a.m.shape), " returned (axis out of range)\n"));
        return;
      }
      if (nd == 0 || (!axes.empty() && o.empty())) o = {};
      bool all_axes = axes.empty();
      if (nd == 0 && !all_axes) all_axes = true;
      std::vector<int64_t> use = all_axes ? std::vector<int64_t>{} : o;
      if (op == "sum" || op == "prod" || op == "max" || op == "min") {
        if (!a.m.known || a.m.huge)
          m.known = false;
        else if (op == "prod" && is_float_dt(a.m.dtype))
          m.known = false;  // rounding of long products not modelled
        else
          m = reduce_model(a.m, use, keep, out.dtype(), op);
        m.reduced = a.m.reduced || a.m.huge;
      } else if (op == "mean" && is_float_dt(a.m.dtype) && a.m.known) {
        m = reduce_model(a.m, use, keep, dtypes::float64, "sum");
        int64_t cnt = 1;
        for (size_t i = 0; i < a.m.shape.size(); i++)
          if (use.empty() || std::find(use.begin(), use.end(), int64_t(i)) != use.end()) cnt *= a.m.shape[i];
        if (cnt == 0) m.known = false;
        for (double& x : m.v) x /= static_cast<double>(cnt);
        m.dtype = out.dtype();
        finish(m);
      } else {
        m.known = false;
      }
    } else if (single && a.m.known) {  // argmax/argmin: the first extreme
      bool nan = std::any_of(a.m.v.begin(), a.m.v.end(), [](double x) { return std::isnan(x); });
      int64_t x = 0;
      if (!nan && (!ax1 || (norm_axis(*ax1, nd, x) && nd > 0)) && numel_safe(a.m.shape) > 0) {
        Model flat = a.m;
        if (!ax1) flat.shape = {numel_safe(a.m.shape)}, x = 0;
        Shape os = flat.shape;
        int64_t len = os[static_cast<size_t>(x)];
        if (keep)
          os[static_cast<size_t>(x)] = 1;
        else
          os.erase(os.begin() + x);
        if (!ax1) os = {};  // no axis: of the flattened tensor, keepdim ignored (as the reference)
        m.shape = os, m.dtype = out.dtype(), m.known = true;
        Shape ks = flat.shape;
        ks[static_cast<size_t>(x)] = 1;
        m.v.assign(static_cast<size_t>(numel_safe(ks)), 0);
        for (size_t f = 0; f < m.v.size(); f++) {
          std::vector<int64_t> idx = unravel(static_cast<int64_t>(f), ks);
          double best = 0;
          for (int64_t j = 0; j < len; j++) {
            idx[static_cast<size_t>(x)] = j;
            double v = flat.v[static_cast<size_t>(ravel(idx, flat.shape))];
            if (j == 0 || (op == "argmax" ? v > best : v < best)) best = v, m.v[f] = static_cast<double>(j);
          }
        }
      }
    } else if (op == "cumsum" && a.m.known && !is_float_dt(out.dtype()) == !is_float_dt(a.m.dtype)) {
      int64_t x = 0;
      if (norm_axis(cax, nd, x) && nd > 0) {
        m = a.m;
        m.dtype = out.dtype();
        Shape ks = a.m.shape;
        int64_t len = ks[static_cast<size_t>(x)];
        ks[static_cast<size_t>(x)] = 1;
        bool ints = !is_float_dt(m.dtype);
        for (int64_t f = 0; f < numel_safe(ks); f++) {
          std::vector<int64_t> idx = unravel(f, ks);
          double acc = 0;
          uint64_t iacc = 0;
          for (int64_t j = 0; j < len; j++) {
            idx[static_cast<size_t>(x)] = j;
            double& v = m.v[static_cast<size_t>(ravel(idx, a.m.shape))];
            acc += v, iacc += as_bits(v);
            auto w = wrap_bits(m.dtype, iacc);
            if (ints && !w) m.known = false;
            v = ints ? (w ? *w : 0) : acc;
          }
        }
        finish(m);
      }
    }
    add(out, m, n);
  }

  void op_matmul() {
    Live a = any();
    Live* bp = &any();
    // often make a matching operand
    Tensor bt{0};
    std::optional<Live> made;
    if (r.chance(0.6) && a.m.shape.size() >= 1 && !a.m.huge) {
      Shape s = {a.m.shape.back()};
      if (r.chance(0.7)) s.push_back(r.range(0, 3));
      if (r.chance(0.3)) s.insert(s.begin(), r.range(1, 2));
      DType d = r.chance(0.7) ? a.m.dtype : dtype();
      Model bm;
      bm.shape = s, bm.dtype = d, bm.known = true;
      for (int64_t i = 0; i < numel_safe(s); i++) bm.v.push_back(value(d));
      finish(bm);
      std::string bn = fresh();
      if (!call(cat(bn, " = Tensor(", vals_s(bm.v), ", ", shape_s(s), ", {.dtype = ", dtype_name(d), "})"),
                [&] { bt = Tensor(bm.v, s, {.dtype = d}); }))
        return;
      made = Live{bt, bm, bn};
      bp = &*made;
    }
    Live& b = *bp;
    std::string n = fresh();
    Tensor out{0};
    bool lin = r.chance(0.15);
    if (!call(cat(n, " = ", a.name, lin ? ".linear(" : ".matmul(", b.name, ")"),
              [&] { out = lin ? a.t.linear(b.t) : a.t.matmul(b.t); }))
      return;
    Model m;
    m.huge = a.m.huge || b.m.huge, m.reduced = m.huge;
    if (!lin && a.m.known && b.m.known) m = matmul_model(a.m, b.m, out.dtype());
    if ((!lin && a.m.shape.empty()) || b.m.shape.empty()) finding("matmul of a 0-d tensor returned\n");
    add(out, m, n);
  }
  // tinygrad's dot: x (.., 1, k) * w (.., 1, k, n)^T summed over k, then cast to the result dtype
  Model matmul_model(const Model& x, const Model& w, DType od) {
    Model none;
    size_t dx = x.shape.size(), dw = w.shape.size();
    int64_t axw = dw >= 2 ? static_cast<int64_t>(dw) - 2 : 0;
    if (x.shape.back() != w.shape[static_cast<size_t>(axw)]) return none;
    int64_t ones = static_cast<int64_t>(std::min({dx - 1, dw - 1, size_t(1)}));
    Shape xs(x.shape.begin(), x.shape.end() - 1), ws(w.shape.begin(), w.shape.end() - std::min<size_t>(dw, 2));
    for (int64_t i = 0; i < ones; i++) xs.push_back(1), ws.push_back(1);
    xs.push_back(x.shape.back());
    for (size_t i = static_cast<size_t>(axw); i < dw; i++) ws.push_back(w.shape[i]);
    Model xr = reshape_model(x, xs), wr = reshape_model(w, ws);
    std::vector<int64_t> order(ws.size());
    for (size_t i = 0; i < order.size(); i++) order[i] = static_cast<int64_t>(i);
    int64_t last = static_cast<int64_t>(ws.size()) - 1, t = static_cast<int64_t>(ws.size()) - (dw >= 2 ? 2 : 1);
    std::swap(order[static_cast<size_t>(last)], order[static_cast<size_t>(t)]);
    Model wt = permute_model(wr, order);
    DType lub = least_upper_dtype({x.dtype, w.dtype});
    Model p = binary_model(xr, wt, lub, lub, "mul");
    if (!p.known) return none;
    DType acc = is_float_dt(lub) ? dtypes::float64 : od;
    Model s = reduce_model(p, {static_cast<int64_t>(p.shape.size()) - 1}, false, acc, "sum");
    s.dtype = od;
    finish(s);
    return s;
  }

  void op_nn() {
    Live a = any();
    std::string n = fresh();
    Tensor out{0};
    int64_t k = r.range(0, 3);
    if (k == 0) {  // conv2d with a random weight
      Shape ws =
          r.chance(0.8) && a.m.shape.size() >= 2
              ? Shape{r.range(0, 3), a.m.shape[1] / std::max<int64_t>(1, r.range(1, 2)), r.range(1, 3), r.range(1, 3)}
              : shape();
      Conv2dOptions o;
      o.groups = r.pick(std::vector<int64_t>{1, 1, 2, 0, -1});
      o.stride = {r.range(0, 2)};
      if (r.chance(0.7)) o.stride[0] = std::max<int64_t>(o.stride[0], 1);
      o.dilation = {r.range(1, 2)};
      o.padding = {r.range(-1, 2)};
      if (r.chance(0.2)) o.padding = {1, 0, 2, 1};
      std::string wn = fresh();
      Tensor w{0};
      if (!call(cat(wn, " = Tensor::rand(", shape_s(ws), ")"), [&] { w = Tensor::rand(ws); })) return;
      if (!call(cat(n, " = ", a.name, ".conv2d(", wn, ", std::nullopt, {.groups = ", o.groups, ", .stride = {",
                    o.stride[0], "}, .dilation = {", o.dilation[0], "}, .padding = ", ints_s(o.padding), "})"),
                [&] { out = a.t.conv2d(w, std::nullopt, o); }))
        return;
    } else if (k == 1 || k == 2) {
      std::vector<int64_t> ks{r.range(0, 3), r.range(1, 3)}, st, dil{1}, pad{0};
      if (r.chance(0.4)) st = {r.range(0, 2)};
      if (r.chance(0.3)) dil = {r.range(0, 2)};
      if (r.chance(0.3)) pad = {r.range(-1, 1)};
      bool ceil = r.chance(0.3);
      std::string args = cat("{.kernel_size = ", ints_s(ks), ", .stride = ", ints_s(st), ", .dilation = ", ints_s(dil),
                             ", .padding = ", ints_s(pad), ", .ceil_mode = ", ceil, "}");
      if (k == 1) {
        if (!call(cat(n, " = ", a.name, ".max_pool2d(", args, ")"), [&] {
              out =
                  a.t.max_pool2d({.kernel_size = ks, .stride = st, .dilation = dil, .padding = pad, .ceil_mode = ceil});
            }))
          return;
      } else if (!call(cat(n, " = ", a.name, ".avg_pool2d(", args, ")"), [&] {
                   out = a.t.avg_pool2d(
                       {.kernel_size = ks, .stride = st, .dilation = dil, .padding = pad, .ceil_mode = ceil});
                 }))
        return;
    } else {  // gather with an index tensor from the pool or a fresh one
      int64_t d = axis(a.m.ndim_());
      Live* ip = &any();
      std::optional<Live> made;
      if (r.chance(0.6) && !a.m.huge) {
        Shape s = a.m.shape;
        for (sint& x : s) x = r.range(0, std::max<int64_t>(x, 1));
        Model im;
        im.shape = s, im.dtype = dtypes::int32, im.known = true;
        int64_t x = 0;
        int64_t len = norm_axis(d, a.m.ndim_(), x) && a.m.ndim_() > 0 ? int64_t(a.m.shape[static_cast<size_t>(x)]) : 1;
        for (int64_t i = 0; i < numel_safe(s); i++)
          im.v.push_back(static_cast<double>(
              r.range(r.chance(0.05) ? -1 : 0, std::max<int64_t>(len - 1, 0) + (r.chance(0.05) ? 1 : 0))));
        std::string in = fresh();
        Tensor it{0};
        if (!call(cat(in, " = Tensor(", vals_s(im.v), ", ", shape_s(s), ", {.dtype = dtypes::int32})"),
                  [&] { it = Tensor(im.v, s, {.dtype = dtypes::int32}); }))
          return;
        made = Live{it, im, in};
        ip = &*made;
      }
      Live& ix = *ip;
      if (!call(cat(n, " = ", a.name, ".gather(", d, ", ", ix.name, ")"), [&] { out = a.t.gather(d, ix.t); })) return;
      Model m;
      int64_t x = 0;
      if (a.m.known && ix.m.known && norm_axis(d, a.m.ndim_(), x) && a.m.ndim_() > 0 &&
          ix.m.shape.size() == a.m.shape.size() && small(ix.m.shape)) {
        bool ok = true;
        for (size_t i = 0; i < a.m.shape.size(); i++)
          ok &= static_cast<int64_t>(i) == x || ix.m.shape[i] <= a.m.shape[i];
        int64_t len = a.m.shape[static_cast<size_t>(x)];
        for (double v : ix.m.v) ok &= v >= 0 && v < static_cast<double>(len);
        if (ok) {
          m = remap(a.m, ix.m.shape, [&](const std::vector<int64_t>& idx) {
            std::vector<int64_t> src = idx;
            src[static_cast<size_t>(x)] = static_cast<int64_t>(ix.m.v[static_cast<size_t>(ravel(idx, ix.m.shape))]);
            return ravel(src, a.m.shape);
          });
          m.dtype = out.dtype();
        }
      }
      return add(out, m, n);
    }
    Model m;
    m.huge = a.m.huge, m.reduced = a.m.huge || a.m.reduced;
    add(out, m, n);
  }

  void op_grad() {
    Live a = any();
    bool same = r.chance(0.6);
    Live target = same ? a : any();
    std::string n = fresh();
    bool bw = r.chance(0.3);
    bool mean = r.chance(0.5);
    if (a.m.reduced || a.m.huge) return;
    std::vector<Tensor> g;
    Tensor loss{0};
    if (!call(cat("loss = ", a.name, mean ? ".mean()" : ".sum()"), [&] { loss = mean ? a.t.mean() : a.t.sum(); }))
      return;
    if (bw) {
      if (!call("loss.backward()", [&] { loss.backward(); })) return;
      std::optional<Tensor> gr;
      call(cat(target.name, ".grad()"), [&] { gr = target.t.grad(); });
      if (gr) g.push_back(*gr);
    } else {
      bool mat = r.chance(0.3);
      if (!call(cat(n, " = loss.gradient({", target.name, "}", mat ? ", std::nullopt, true" : "", ")"),
                [&] { g = loss.gradient({target.t}, std::nullopt, mat); }))
        return;
    }
    for (Tensor& t : g) {
      Model m;
      if (same && !mean && is_float_dt(a.m.dtype)) {  // d sum(a) / d a = ones
        m.shape = a.m.shape, m.dtype = t.dtype(), m.known = small(a.m.shape);
        if (m.known) m.v.assign(static_cast<size_t>(numel_safe(a.m.shape)), 1.0);
      }
      Shape gs;
      if (call(cat(n, ".shape()"), [&] { gs = t.shape(); }) && gs != target.m.shape)
        finding(cat("gradient shape ", shape_s(gs), " != target shape ", shape_s(target.m.shape), "\n"));
      add(t, m, n);
    }
  }

  // more of the API, values not modelled: every call returns or throws tg::Error
  void op_misc() {
    Live a = any();
    Live b = any();
    int64_t nd = a.m.ndim_();
    if (a.m.reduced || a.m.huge) return;  // some of these realize (masked_select, setitem)
    std::string n = fresh();
    Tensor out{0};
    int64_t k = r.range(0, 13), d = axis(nd), i = r.range(-2, 4);
    bool flag = r.chance(0.5);
    static const char* names[] = {
        "batchnorm", "layernorm", "one_hot",       "sort",    "topk",        "repeat_interleave", "triu",
        "tril",      "scatter",   "masked_select", "setitem", "interpolate", "conv_transpose2d",  "logcumsumexp"};
    std::string desc = cat(n, " = ", a.name, ".", names[k], "(", b.name, ", d=", d, ", i=", i, ", flag=", flag, ")");
    if (!call(desc, [&] {
          const Tensor& x = a.t;
          switch (k) {
            case 0: out = x.batchnorm(std::nullopt, std::nullopt, b.t, b.t, {d}); break;
            case 1: out = x.layernorm({d}); break;
            case 2: out = x.one_hot(i); break;
            case 3: out = x.sort(d, flag).first; break;
            case 4: out = x.topk(i, {.dim = d, .largest = flag}).second; break;
            case 5: out = x.repeat_interleave(i, flag ? std::optional<int64_t>(d) : std::nullopt); break;
            case 6: out = x.triu(i); break;
            case 7: out = x.tril(i); break;
            case 8: out = x.scatter(d, b.t, ConstValue(int64_t(1)), flag ? "add" : ""); break;
            case 9: out = x.masked_select(b.t); break;
            case 10: {
              Tensor c = x.contiguous();
              c.setitem({Index(i)}, b.t);
              out = c;
              break;
            }
            case 11: out = x.interpolate({r.range(0, 3), r.range(1, 3)}, flag ? "linear" : "nearest"); break;
            case 12: out = x.conv_transpose2d(b.t, std::nullopt, {.stride = {std::max<int64_t>(i, 1)}}); break;
            case 13: out = x.logcumsumexp(d); break;
          }
        }))
      return;
    add(out, Model{}, n);
  }

  // realizes one tensor and compares it with its model
  void op_realize() {
    Live a = any();
    if (a.m.reduced) return;
    bool huge = !small(a.m.shape);
    if (huge && !r.chance(0.2)) return;
    realized++;
    std::vector<uint8_t> raw;
    int64_t how = r.range(0, 9);
    if (how == 0 && !huge) {  // tolist with a (maybe wrong) host type
      call(cat(a.name, ".tolist<float>()"), [&] { (void)a.t.tolist<float>(); });
      return;
    }
    if (!call(cat(a.name, ".realize(); ", a.name, ".data_bytes()"), [&] { raw = a.t.realize().data_bytes(); })) {
      // NOTE: a realize that threw (an fp8 kernel doesn't compile on CPU) leaves its buffers unwritten, and a later
      // realize reads them as they are (as the reference, which applies the schedule's buffers first): no values
      for (Live& l : pool) l.m.known = false, l.m.v.clear();
      return;
    }
    if (huge) {  // too big for the model: a realize that worked must have been of a size the machine can hold
      int64_t n = numel_safe(a.m.shape);
      if (n < 0 || n > (int64_t(1) << 36) / a.m.dtype.itemsize())
        return finding(cat("realize of ", shape_s(a.m.shape), " returned ", raw.size(), " bytes\n"));
      return;
    }
    int64_t n = numel_safe(a.m.shape);
    if (static_cast<int64_t>(raw.size()) != n * a.m.dtype.itemsize())
      return finding(cat("data_bytes of ", a.name, " ", shape_s(a.m.shape), " ", dtype_name(a.m.dtype), ": ",
                         raw.size(), " bytes\n"));
    if (!a.m.known) return;
    checked++;
    std::vector<double> got = decode(raw, a.m.dtype);
    double eps = eps_of(a.m.dtype);
    double mag = 0;
    for (double x : a.m.v)
      if (std::isfinite(x)) mag = std::max(mag, std::fabs(x));
    for (size_t i = 0; i < got.size(); i++) {
      double w = a.m.v[i], x = got[i];
      bool ok = (std::isnan(w) && std::isnan(x)) || w == x ||
                (std::isfinite(w) && std::isfinite(x) && std::fabs(w - x) <= eps * 16 * (std::fabs(w) + mag) + 1e-30);
      if (!ok) {
        finding(cat("value mismatch in ", a.name, " ", shape_s(a.m.shape), " ", dtype_name(a.m.dtype), " at flat ", i,
                    ": engine ", x, ", model ", w, "\n"));
        stop_session = true;
        return;
      }
    }
  }

  void session(int64_t calls_left) {
    pool.clear();
    session_log.clear();
    stop_session = false;
    next_name = 0;
    Tensor::manual_seed(r.g());
    int64_t end = calls + std::min<int64_t>(calls_left, 40);
    for (int i = 0; i < 3; i++) create();
    while (calls < end && !stop_session) {
      if (pool.empty()) {
        create();
        continue;
      }
      int64_t k = r.range(0, 99);
      if (k < 12)
        create();
      else if (k < 26)
        op_elementwise_binary();
      else if (k < 32)
        op_unary();
      else if (k < 37)
        op_cast();
      else if (k < 57)
        op_movement();
      else if (k < 67)
        op_reduce();
      else if (k < 73)
        op_matmul();
      else if (k < 77)
        op_nn();
      else if (k < 80)
        op_grad();
      else if (k < 85)
        op_misc();
      else
        op_realize();
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        fprintf(stderr, "fuzz_api: %s needs a value\n", a.c_str());
        exit(2);
      }
      return argv[++i];
    };
    if (a == "--seed")
      opt.seed = std::stoull(next());
    else if (a == "--count")
      opt.count = std::stoll(next());
    else if (a == "--seconds")
      opt.seconds = std::stod(next());
    else if (a == "--session")
      opt.session = std::stoll(next());
    else if (a == "--hang")
      opt.hang_s = std::stoi(next());
    else if (a == "-v")
      opt.verbose = true;
    else if (a == "--extreme")
      opt.extreme = true;
    else {
      fprintf(stderr,
              "usage: fuzz_api [--seed N] [--count N] [--seconds S] [--session K] [--hang S] [--extreme] [-v]\n");
      return 2;
    }
  }
  if (const char* s = std::getenv("FUZZ_SECONDS")) opt.seconds = std::stod(s);
  if (opt.seconds < 0) opt.seconds = opt.count >= 0 ? 1e300 : 10;
  Device::DEFAULT = "CPU";
  signal(SIGALRM, on_signal);
#if TG_TEST_ASAN
  __sanitizer_set_death_callback(on_sanitizer_death);
#else
  signal(SIGSEGV, on_signal);
  signal(SIGBUS, on_signal);
  signal(SIGFPE, on_signal);
  signal(SIGILL, on_signal);
  signal(SIGABRT, on_signal);
#endif
  auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  int64_t sessions = 0;
  for (int64_t s = opt.session >= 0 ? opt.session : 0;; s++) {
    if (opt.count >= 0 && calls >= opt.count) break;
    if (elapsed() >= opt.seconds) break;
    cur_session = s;
    if (!opt.verbose) fprintf(stderr, "fuzz_api: session %lld\n", (long long)s);  // a sanitizer's report follows it
    Fuzzer f(opt.seed * 1000003ULL + static_cast<uint64_t>(s));
    f.session(opt.count >= 0 ? opt.count - calls : INT64_MAX);
    sessions++;
    if (opt.session >= 0) break;
  }
  int64_t thrown = 0;
  for (auto& [k, v] : errors_by_kind) thrown += v;
  printf("fuzz_api: seed %llu, %lld sessions, %lld calls in %.1f s: %lld returned, %lld threw tg::Error",
         (unsigned long long)opt.seed, (long long)sessions, (long long)calls, elapsed(), (long long)returned,
         (long long)thrown);
  const char* sep = " (";
  for (auto& [k, v] : errors_by_kind) printf("%s%s %lld", sep, k.c_str(), (long long)v), sep = ", ";
  printf("%s; %lld realized, %lld checked against the model; %lld findings\n", thrown ? ")" : "", (long long)realized,
         (long long)checked, (long long)findings);
  return findings ? 1 : 0;
}
