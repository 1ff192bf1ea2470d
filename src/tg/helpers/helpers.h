#pragma once
// helpers: errors, string building, hashing (env vars: knobs.h) (tinygrad's helpers.py)
#include <algorithm>
#include <array>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tg {

// *** errors ***

// A user mistake (bad shape, bad axis, unknown device ...). Callers catch tg::Error; its kind is the Python
// exception tinygrad raises for the same mistake (an out-of-range dim is an IndexError, a negative size a
// ValueError ...), which the Python module raises. The subclasses let C++ callers catch one kind.
enum class ErrorKind : uint8_t { Runtime, Index, Value, Type, Assertion, NotImplemented };
struct Error : std::runtime_error {
  explicit Error(const std::string& msg, ErrorKind kind = ErrorKind::Runtime) : std::runtime_error(msg), kind(kind) {}
  ErrorKind kind;
};
#define TG_ERROR_KIND(Name, Kind)                                \
  struct Name : Error {                                          \
    static constexpr ErrorKind kKind = ErrorKind::Kind;          \
    explicit Name(const std::string& msg) : Error(msg, kKind) {} \
  };
TG_ERROR_KIND(IndexError, Index)
TG_ERROR_KIND(ValueError, Value)
TG_ERROR_KIND(TypeError, Type)
TG_ERROR_KIND(AssertionError, Assertion)
TG_ERROR_KIND(NotImplementedError, NotImplemented)
#undef TG_ERROR_KIND
// A broken internal invariant, always checked; the message carries file:line. Python sees AssertionError.
struct InternalError : std::logic_error {
  using std::logic_error::logic_error;
};

// *** string building: cat(a, b, ...) streams every argument (no <format> in g++ 12) ***

// text and integers are appended directly (an ostringstream costs a locale lookup); anything else is streamed
template <class T>
void cat_one(std::string& s, const T& v) {
  using D = std::decay_t<T>;
  if constexpr (std::is_convertible_v<const T&, std::string_view>)
    s += std::string_view(v);
  else if constexpr (std::is_same_v<D, char>)
    s += v;
  else if constexpr (std::is_integral_v<D> && !std::is_same_v<D, bool> && !std::is_same_v<D, signed char> &&
                     !std::is_same_v<D, unsigned char>)
    s += std::to_string(v);
  else {
    std::ostringstream os;
    os << v;
    s += os.str();
  }
}
template <class... Ts>
std::string cat(const Ts&... xs) {
  std::string s;
  (cat_one(s, xs), ...);
  return s;
}

[[noreturn]] void throw_error(const std::string& msg, ErrorKind kind = ErrorKind::Runtime);
[[noreturn]] void throw_internal(const char* file, int line, const std::string& msg);

#define TG_CHECK(cond, ...)                                 \
  do {                                                      \
    if (!(cond)) ::tg::throw_error(::tg::cat(__VA_ARGS__)); \
  } while (0)
// TG_CHECK_AS(IndexError, cond, ...): the same, raising the kind tinygrad raises for this mistake
#define TG_CHECK_AS(Kind, cond, ...)                                           \
  do {                                                                         \
    if (!(cond)) ::tg::throw_error(::tg::cat(__VA_ARGS__), ::tg::Kind::kKind); \
  } while (0)
#define TG_ASSERT(cond, ...)                                                                                       \
  do {                                                                                                             \
    if (!(cond))                                                                                                   \
      ::tg::throw_internal(__FILE__, __LINE__, ::tg::cat("assert failed: " #cond " " __VA_OPT__(, ) __VA_ARGS__)); \
  } while (0)

// *** python-style formatting ***

std::string py_float_repr(double v);          // repr(float): shortest round trip, '1e-10', 'inf', 'nan', '2.0'
std::string py_str_repr(std::string_view s);  // repr(str): 'CPU', "it's"
std::string join(const std::vector<std::string>& parts, std::string_view sep);
template <class T>
std::string py_tuple(const std::vector<T>& xs) {  // (4,), (), (1, 2)
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < xs.size(); i++) os << (i ? ", " : "") << xs[i];
  if (xs.size() == 1) os << ",";
  os << ")";
  return os.str();
}

// *** ANSI text helpers (tinygrad's helpers.colored / ansistrip / to_function_name) ***

// "\x1b[{30+idx+60*ALLCAPS+10*background}m{s}\x1b[0m"; a null color returns s unchanged
std::string colored(const std::string& s, const char* color, bool background = false);
std::string ansistrip(const std::string& s);  // drops "\x1b[...m" and "\x1b[K"
size_t ansilen(const std::string& s);
// ANSI stripped; characters outside [A-Za-z0-9_] become two uppercase hex digits
std::string to_function_name(const std::string& s);

// *** hashing ***

constexpr uint64_t fnv1a(std::string_view s) {
  uint64_t h = 14695981039346656037ull;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}
inline uint64_t hash_combine(uint64_t seed, uint64_t v) {
  return seed ^ (v + 0x9e3779b97f4a7c15ull + (seed << 12) + (seed >> 4));
}

// SHA-256 of bytes (FIPS 180-4), for tinygrad's per-device random seeds
std::array<uint8_t, 32> sha256(const void* data, size_t n);

// *** integer helpers with python/C semantics ***

// C semantics (truncation toward zero), as tinygrad's cdiv/cmod; by zero they return 0 (never trap)
inline int64_t cdiv(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return static_cast<int64_t>(0ull - static_cast<uint64_t>(a));  // INT64_MIN / -1 wraps
  return a / b;
}
inline int64_t cmod(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  return a % b;
}

// *** sequences ***

// the indices that sort x, equal keys in index order (tinygrad's argsort: sorted(range(len(x)), key=x.__getitem__));
// for a permutation it is the inverse permutation. T's < may throw (sints the bounds don't order)
template <class T>
std::vector<int64_t> argsort(const std::vector<T>& x) {
  std::vector<int64_t> idx(x.size());
  for (size_t i = 0; i < idx.size(); i++) idx[i] = static_cast<int64_t>(i);
  std::stable_sort(idx.begin(), idx.end(),
                   [&](int64_t a, int64_t b) { return x[static_cast<size_t>(a)] < x[static_cast<size_t>(b)]; });
  return idx;
}
// a, a+1, ..., b-1 (python's list(range(a, b)))
std::vector<int64_t> iota(int64_t a, int64_t b);

}  // namespace tg
