#include "tg/dtype/dtype.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <ostream>
#include <tuple>

#include "tg/helpers/helpers.h"
#include "tg/helpers/knobs.h"

namespace tg {

struct DTypeData {
  int priority, itemsize;
  const char* name;
  char fmt;
  int count;
  const DTypeData* scalar;  // null for scalars
  const DTypeData* base;    // pointers: the pointee; null otherwise
  bool is_ptr = false, is_image = false, local = false;
  int v = 1;
  int64_t size = -1;
  const std::vector<int64_t>* shape = nullptr;  // images
};

// *** the scalar types: constant-initialized, so they are usable from any static initializer ***

namespace {
constexpr DTypeData kVoid{-1, 0, "void", 0, 1, nullptr, nullptr};
constexpr DTypeData kBool{0, 1, "bool", '?', 1, nullptr, nullptr};
constexpr DTypeData kInt8{1, 1, "signed char", 'b', 1, nullptr, nullptr};
constexpr DTypeData kUInt8{2, 1, "unsigned char", 'B', 1, nullptr, nullptr};
constexpr DTypeData kInt16{3, 2, "short", 'h', 1, nullptr, nullptr};
constexpr DTypeData kUInt16{4, 2, "unsigned short", 'H', 1, nullptr, nullptr};
constexpr DTypeData kInt32{5, 4, "int", 'i', 1, nullptr, nullptr};
constexpr DTypeData kUInt32{6, 4, "unsigned int", 'I', 1, nullptr, nullptr};
constexpr DTypeData kInt64{7, 8, "long", 'q', 1, nullptr, nullptr};
constexpr DTypeData kUInt64{8, 8, "unsigned long", 'Q', 1, nullptr, nullptr};
constexpr DTypeData kFp8e4m3{9, 1, "float8_e4m3", 0, 1, nullptr, nullptr};
constexpr DTypeData kFp8e5m2{10, 1, "float8_e5m2", 0, 1, nullptr, nullptr};
constexpr DTypeData kFloat16{11, 2, "half", 'e', 1, nullptr, nullptr};
constexpr DTypeData kBFloat16{12, 2, "__bf16", 0, 1, nullptr, nullptr};
constexpr DTypeData kFloat32{13, 4, "float", 'f', 1, nullptr, nullptr};
constexpr DTypeData kFloat64{14, 8, "double", 'd', 1, nullptr, nullptr};

// C name -> the attribute name repr prints (INVERSE_DTYPES_DICT)
const char* inverse_name(const char* cname) {
  static const std::pair<const char*, const char*> table[] = {{"bool", "bool"},
                                                              {"signed char", "char"},
                                                              {"unsigned char", "uchar"},
                                                              {"short", "short"},
                                                              {"unsigned short", "ushort"},
                                                              {"int", "int"},
                                                              {"unsigned int", "uint"},
                                                              {"long", "long"},
                                                              {"unsigned long", "ulong"},
                                                              {"float8_e4m3", "fp8e4m3"},
                                                              {"float8_e5m2", "fp8e5m2"},
                                                              {"half", "half"},
                                                              {"__bf16", "bfloat16"},
                                                              {"float", "float"},
                                                              {"double", "double"},
                                                              {"void", "void"}};
  for (auto& [k, v] : table)
    if (std::strcmp(k, cname) == 0) return v;
  return cname;
}

// derived dtypes (vec, ptr, image) are interned here for the life of the process, as tinygrad's dcache
struct DTypeTable {
  std::mutex mu;
  std::map<std::tuple<const DTypeData*, int, int, bool, int64_t, int>, const DTypeData*>
      cache;  // (src, kind, n, local, size, v)
  std::deque<DTypeData> nodes;
  std::deque<std::string> names;
  std::deque<std::vector<int64_t>> shapes;
};
DTypeTable& table() {
  static DTypeTable* t = new DTypeTable();  // never destroyed: dtypes may be used from other static destructors
  return *t;
}
}  // namespace

static const DTypeData* D(const DTypeData* d) { return d ? d : &kVoid; }

int DType::priority() const { return D(d_)->priority; }
int DType::itemsize() const { return D(d_)->itemsize; }
std::string DType::name() const { return D(d_)->name; }
char DType::fmt() const { return D(d_)->fmt; }
int DType::count() const { return D(d_)->count; }
int DType::vcount() const { return is_ptr() ? v() : count(); }
DType DType::scalar() const { return D(d_)->scalar ? DType(D(d_)->scalar) : *this; }
DType DType::base() const { return D(d_)->base ? DType(D(d_)->base) : *this; }
bool DType::is_ptr() const { return D(d_)->is_ptr; }
bool DType::is_image() const { return D(d_)->is_image; }
bool DType::local() const { return D(d_)->local; }
int64_t DType::size() const { return D(d_)->size; }
int DType::v() const { return D(d_)->v; }
const std::vector<int64_t>& DType::image_shape() const {
  static const std::vector<int64_t> empty;
  return D(d_)->shape ? *D(d_)->shape : empty;
}

DType DType::vec(int n) const {
  const DTypeData* d = D(d_);
  if (d->is_ptr) {
    TG_CHECK(d->v == 1, "can't vectorize ptr ", repr(), " with size ", n);
    if (n == 1) return *this;
  } else {
    TG_CHECK(d->count == 1, "can't vectorize ", repr(), " with size ", n);
    if (n == 1 || d == &kVoid) return *this;
  }
  TG_CHECK(n > 1, "can't vectorize ", repr(), " with size ", n);
  auto& t = table();
  std::lock_guard lock(t.mu);
  auto key = std::make_tuple(d, 0, n, false, int64_t(0), 0);
  if (auto it = t.cache.find(key); it != t.cache.end()) return DType(it->second);
  DTypeData nd = *d;
  if (d->is_ptr) {
    nd.v = n;
    nd.scalar = d;
  } else {
    t.names.push_back(cat(inverse_name(d->name), n));
    nd.name = t.names.back().c_str();
    nd.itemsize = d->itemsize * n, nd.fmt = 0, nd.count = n, nd.scalar = d;
  }
  t.nodes.push_back(nd);
  return DType(t.cache[key] = &t.nodes.back());
}

DType DType::ptr(int64_t size, bool local) const {
  const DTypeData* d = D(d_);
  if (d->is_image) {
    TG_CHECK(!local, "images can't be local");
    return *this;
  }
  TG_CHECK(!d->is_ptr, "can't make a pointer from a pointer: ", repr());
  auto& t = table();
  std::lock_guard lock(t.mu);
  auto key = std::make_tuple(d, 1, 0, local, size, 0);
  if (auto it = t.cache.find(key); it != t.cache.end()) return DType(it->second);
  DTypeData nd = *d;
  nd.scalar = nullptr, nd.base = d, nd.is_ptr = true, nd.local = local, nd.v = 1, nd.size = size;
  t.nodes.push_back(nd);
  return DType(t.cache[key] = &t.nodes.back());
}

static DType make_image(const char* name, int itemsize, char fmt, std::vector<int64_t> shape) {
  auto& t = table();
  std::lock_guard lock(t.mu);
  int64_t sz = 1;
  for (auto s : shape) sz *= s;
  for (auto& n : t.nodes)  // images are rare: a linear scan keeps the cache key simple
    if (n.is_image && std::strcmp(n.name, name) == 0 && *n.shape == shape) return DType(&n);
  t.shapes.push_back(std::move(shape));
  DTypeData nd{100, itemsize, name, fmt, 1, nullptr, &kFloat32};
  nd.is_ptr = true, nd.is_image = true, nd.size = sz, nd.shape = &t.shapes.back();
  t.nodes.push_back(nd);
  return DType(&t.nodes.back());
}

int64_t DType::nbytes() const {
  TG_CHECK(is_ptr(), "only ptr types have nbytes, not ", repr());
  return size() == -1 ? 0 : size() * itemsize();
}

std::string DType::repr() const {
  const DTypeData* d = D(d_);
  if (d->is_image)
    return cat("dtypes.", d->name, "(", py_tuple(*d->shape), ")", d->v != 1 ? cat(".vec(", d->v, ")") : "");
  if (d->is_ptr)
    return cat(base().repr(), ".ptr(", d->size, d->local ? ", local=True" : "", ")",
               d->v != 1 ? cat(".vec(", d->v, ")") : "");
  return cat("dtypes.", inverse_name(D(scalar().d_)->name), d->count > 1 ? cat(".vec(", d->count, ")") : "");
}

uint64_t DType::key() const {
  const DTypeData* d = D(d_);
  uint64_t h = fnv1a(d->name);
  for (int64_t x : {int64_t(d->count), int64_t(d->is_ptr), int64_t(d->local), int64_t(d->v), d->size})
    h = hash_combine(h, static_cast<uint64_t>(x));
  if (d->base) h = hash_combine(h, DType(d->base).key());
  return h;
}

bool DType::operator<(const DType& o) const {
  auto k = [](const DType& x) { return std::make_tuple(x.priority(), x.itemsize(), x.name(), x.fmt(), x.count()); };
  return k(*this) < k(o);
}

std::ostream& operator<<(std::ostream& os, DType d) { return os << d.repr(); }

// *** dtypes ***

namespace dtypes {
constinit const DType void_{}, bool_{&kBool}, int8{&kInt8}, uint8{&kUInt8}, int16{&kInt16}, uint16{&kUInt16},
    int32{&kInt32}, uint32{&kUInt32}, int64{&kInt64}, uint64{&kUInt64}, fp8e4m3{&kFp8e4m3}, fp8e5m2{&kFp8e5m2},
    float16{&kFloat16}, bfloat16{&kBFloat16}, float32{&kFloat32}, float64{&kFloat64};
constinit DType default_float{&kFloat32}, default_int{&kInt32};

const std::vector<DType> fp8s{DType(&kFp8e4m3), DType(&kFp8e5m2)};
const std::vector<DType> floats{DType(&kFp8e4m3),  DType(&kFp8e5m2), DType(&kFloat16),
                                DType(&kBFloat16), DType(&kFloat32), DType(&kFloat64)};
const std::vector<DType> uints{DType(&kUInt8), DType(&kUInt16), DType(&kUInt32), DType(&kUInt64)};
const std::vector<DType> sints{DType(&kInt8), DType(&kInt16), DType(&kInt32), DType(&kInt64)};
const std::vector<DType> ints{DType(&kUInt8), DType(&kUInt16), DType(&kUInt32), DType(&kUInt64),
                              DType(&kInt8),  DType(&kInt16),  DType(&kInt32),  DType(&kInt64)};
const std::vector<DType> all{DType(&kFp8e4m3), DType(&kFp8e5m2), DType(&kFloat16), DType(&kBFloat16), DType(&kFloat32),
                             DType(&kFloat64), DType(&kUInt8),   DType(&kUInt16),  DType(&kUInt32),   DType(&kUInt64),
                             DType(&kInt8),    DType(&kInt16),   DType(&kInt32),   DType(&kInt64),    DType(&kBool)};

static bool is_scalar_in(DType d, std::initializer_list<const DTypeData*> set) {
  DType s = d.scalar();
  for (auto* x : set)
    if (s == DType(x)) return true;
  return false;
}
bool is_float(DType d) {
  return d.is_image() || is_scalar_in(d, {&kFp8e4m3, &kFp8e5m2, &kFloat16, &kBFloat16, &kFloat32, &kFloat64});
}
bool is_int(DType d) {
  return is_scalar_in(d, {&kUInt8, &kUInt16, &kUInt32, &kUInt64, &kInt8, &kInt16, &kInt32, &kInt64});
}
bool is_unsigned(DType d) { return is_scalar_in(d, {&kUInt8, &kUInt16, &kUInt32, &kUInt64}); }
bool is_bool(DType d) { return d.scalar() == DType(&kBool); }

ConstValue min(DType d) {
  if (is_int(d))
    return is_unsigned(d)
               ? int64_t(0)
               : int64_t(d.scalar().itemsize() == 8 ? INT64_MIN : -(int64_t(1) << (d.scalar().itemsize() * 8 - 1)));
  if (is_float(d)) return -INFINITY;
  return false;
}
ConstValue max(DType d) {
  if (is_int(d)) {
    int bits = d.scalar().itemsize() * 8;
    if (is_unsigned(d)) return bits >= 64 ? ConstValue(UINT64_MAX) : int64_t((uint64_t(1) << bits) - 1);
    return bits >= 64 ? INT64_MAX : int64_t((uint64_t(1) << (bits - 1)) - 1);
  }
  if (is_float(d)) return INFINITY;
  return true;
}
DType imagef(std::vector<int64_t> shape) { return make_image("imagef", 4, 'f', std::move(shape)); }
DType imageh(std::vector<int64_t> shape) { return make_image("imageh", 2, 'e', std::move(shape)); }

ConstValue as_const(ConstValue v, DType d) {
  // NOTE: no truncation, as tinygrad ("TODO: should truncate here"): UOp.const(dtypes.half, 0.1) keeps arg=0.1
  if (is_int(d)) {
    if (auto* f = std::get_if<double>(&v))
      TG_CHECK(std::isfinite(*f), "cannot convert float ", py_float_repr(*f), " to integer dtype ", d.repr());
    return int_const(as_i128(v));  // python int() truncates toward zero
  }
  if (is_float(d)) return as_double(v);
  return as_bool(v);
}

DType from_name(const std::string& name) {
  static const std::pair<const char*, const DType*> names[] = {
      {"bool", &bool_},        {"int8", &int8},       {"uint8", &uint8},     {"int16", &int16},
      {"uint16", &uint16},     {"int32", &int32},     {"uint32", &uint32},   {"int64", &int64},
      {"uint64", &uint64},     {"fp8e4m3", &fp8e4m3}, {"fp8e5m2", &fp8e5m2}, {"float16", &float16},
      {"bfloat16", &bfloat16}, {"float32", &float32}, {"float64", &float64}, {"half", &float16},
      {"float", &float32},     {"double", &float64},  {"uchar", &uint8},     {"ushort", &uint16},
      {"uint", &uint32},       {"ulong", &uint64},    {"char", &int8},       {"short", &int16},
      {"int", &int32},         {"long", &int64},      {"void", &void_}};
  std::string lower = name;
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (auto& [n, d] : names)
    if (lower == n) return *d;
  throw Error(cat("unknown dtype '", name, "'"));
}

std::pair<int, int> finfo(DType d) {
  DType s = d.scalar();
  if (s == float16) return {5, 10};
  if (s == bfloat16) return {8, 7};
  if (s == float32) return {8, 23};
  if (s == float64) return {11, 52};
  if (s == fp8e5m2) return {5, 2};
  if (s == fp8e4m3) return {4, 3};
  throw Error(cat(d.repr(), " is not a floating point type"));
}
}  // namespace dtypes

bool contains(const std::vector<DType>& set, DType d) { return std::find(set.begin(), set.end(), d) != set.end(); }

// *** promotion lattice ***

static std::vector<DType> lattice_parents(DType d) {
  using namespace dtypes;
  if (d == bool_) return {int8, uint8};
  if (d == int8) return {int16};
  if (d == int16) return {int32};
  if (d == int32) return {int64};
  if (d == int64 || d == uint64 || d == fp8e4m3 || d == fp8e5m2) return {float16, bfloat16};
  if (d == uint8) return {int16, uint16};
  if (d == uint16) return {int32, uint32};
  if (d == uint32) return {int64, uint64};
  if (d == float16 || d == bfloat16) return {float32};
  if (d == float32) return {float64};
  if (d == float64) return {};
  throw Error(cat("no type promotion for ", d.repr()));
}
static std::vector<DType> recursive_parents(DType d) {  // the upward closure, iteratively
  std::vector<DType> out{d}, todo{d};
  while (!todo.empty()) {
    DType x = todo.back();
    todo.pop_back();
    for (DType p : lattice_parents(x))
      if (!contains(out, p)) out.push_back(p), todo.push_back(p);
  }
  return out;
}
DType least_upper_dtype(const std::vector<DType>& ds) {
  TG_CHECK(!ds.empty(), "least_upper_dtype needs at least one dtype");
  for (DType d : ds)
    if (d.is_image()) return d;
  std::vector<DType> common = recursive_parents(ds[0]);
  for (size_t i = 1; i < ds.size(); i++) {
    std::vector<DType> p = recursive_parents(ds[i]), keep;
    for (DType c : common)
      if (contains(p, c)) keep.push_back(c);
    common = keep;
  }
  TG_CHECK(!common.empty(), "no common dtype");
  return *std::min_element(common.begin(), common.end());
}
DType least_upper_dtype(std::initializer_list<DType> ds) { return least_upper_dtype(std::vector<DType>(ds)); }
DType least_upper_float(DType d) { return dtypes::is_float(d) ? d : least_upper_dtype({d, dtypes::default_float}); }
DType sum_acc_dtype(DType d) {
  if (dtypes::is_unsigned(d)) return least_upper_dtype({d, dtypes::uint32});
  if (dtypes::is_int(d) || d == dtypes::bool_) return least_upper_dtype({d, dtypes::int32});
  return least_upper_dtype({d, dtypes::from_name(SUM_DTYPE.value())});
}

// *** truncation of consts into a dtype ***

double truncate_fp16(double x) {
  // round to nearest even at 10 mantissa bits, with fp16's range and subnormals; overflow goes to inf
  if (std::isnan(x) || std::isinf(x)) return x;
  double ax = std::fabs(x);
  if (ax >= 65520.0) return std::copysign(INFINITY, x);
  int e;
  std::frexp(ax, &e);                    // ax = m * 2^e, m in [0.5, 1)
  int exp = std::max(e - 1, -14);        // unbiased exponent, clamped to the subnormal range
  double q = std::ldexp(1.0, exp - 10);  // spacing of representable values
  return std::copysign(std::nearbyint(ax / q) * q, x);
}
double truncate_bf16(double x) {
  const float max_bf16 = std::bit_cast<float>(uint32_t(0x7f7f0000));
  if (std::fabs(x) > max_bf16) return std::copysign(INFINITY, x);
  uint32_t bits = std::bit_cast<uint32_t>(static_cast<float>(x));
  return std::bit_cast<float>(bits & 0xFFFF0000u);
}

uint8_t float_to_fp8(double x, DType d) {
  TG_CHECK(d == dtypes::fp8e4m3 || d == dtypes::fp8e5m2, "float_to_fp8 only for fp8s, not ", d.repr());
  bool e4m3 = d == dtypes::fp8e4m3;
  const int EXP_BIAS = e4m3 ? 7 : 15, SIG = e4m3 ? 4 : 3;
  const uint64_t MANT_MASK = e4m3 ? 0x7 : 0x3, MINDENORM_O2 = e4m3 ? 0x3F50000000000000ull : 0x3EE0000000000000ull;
  const uint64_t OVERFLOW = e4m3 ? 0x407D000000000000ull : 0x40EE000000000000ull - 1;
  const uint64_t MAXNORM = e4m3 ? 0x7E : 0x7B, MINNORM = e4m3 ? 0x3F90000000000000ull : 0x3F10000000000000ull;
  uint64_t xbits = std::bit_cast<uint64_t>(x);
  const uint64_t HALF_ULP = uint64_t(1) << (53 - SIG - 1);
  uint64_t sign = ((xbits >> 63) & 1) << 7;
  int64_t exp = int64_t((xbits >> 52) & 0x7FF) - 1023 + EXP_BIAS;
  uint64_t mant = (xbits >> (53 - SIG)) & MANT_MASK;
  uint64_t absx = xbits & 0x7FFFFFFFFFFFFFFFull, res;
  if (absx <= MINDENORM_O2)
    res = 0;
  else if (absx > 0x7FF0000000000000ull)
    res = e4m3 ? 0x7F : (0x7E | mant);
  else if (absx > OVERFLOW)
    res = MAXNORM;
  else if (absx >= MINNORM) {
    res = (uint64_t(exp) << (SIG - 1)) | mant;
    uint64_t round = xbits & ((HALF_ULP << 1) - 1);
    if (round > HALF_ULP || (round == HALF_ULP && (mant & 1))) res++;
  } else {
    int64_t shift = 1 - exp;
    mant |= uint64_t(1) << (SIG - 1);
    res = mant >> shift;
    uint64_t round = (xbits | (uint64_t(1) << 52)) & ((HALF_ULP << (shift + 1)) - 1);
    if (round > (HALF_ULP << shift) || (round == (HALF_ULP << shift) && (res & 1))) res++;
  }
  return static_cast<uint8_t>(res | sign);
}

static double half_bits_to_double(uint16_t h) {
  int s = h >> 15, e = (h >> 10) & 0x1F, m = h & 0x3FF;
  double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp(m | 0x400, e - 25);
  return s ? -v : v;
}
double fp8_to_float(uint8_t x, DType d) {
  TG_CHECK(d == dtypes::fp8e4m3 || d == dtypes::fp8e5m2, "fp8_to_float only for fp8s, not ", d.repr());
  uint32_t ur = uint32_t(x) << 8;
  if (d == dtypes::fp8e5m2 && (ur & 0x7FFF) > 0x7C00)
    ur = 0x7FFF;
  else if (d == dtypes::fp8e4m3) {
    uint32_t sign = ur & 0x8000, exponent = ((ur & 0x7800) >> 1) + 0x2000, mant = (ur & 0x0700) >> 1;
    if ((x & 0x7F) == 0x7F)
      ur = 0x7FFF;
    else if (exponent == 0x2000) {
      if (mant != 0) {
        mant <<= 1;
        while ((mant & 0x0400) == 0) mant <<= 1, exponent -= 0x0400;
        mant &= 0x03FF;
      } else {
        exponent = 0;
      }
      ur = sign | exponent | mant;
    } else {
      ur = sign | exponent | mant;
    }
  }
  return half_bits_to_double(static_cast<uint16_t>(ur));
}

ConstValue truncate(ConstValue v, DType d) {
  using namespace dtypes;
  DType s = d.scalar();
  if (s == bool_) return as_bool(v);
  if (s == float16) return truncate_fp16(as_double(v));
  if (s == bfloat16) return truncate_bf16(as_double(v));
  if (s == fp8e4m3 || s == fp8e5m2) return fp8_to_float(float_to_fp8(as_double(v), s), s);
  if (s == float32) return static_cast<double>(static_cast<float>(as_double(v)));
  if (s == float64) return as_double(v);
  if (is_int(s)) {  // ctypes: the value modulo 2**bits, read back as the dtype
    uint64_t u = static_cast<uint64_t>(as_i128(v));
    if (s == uint8) return int64_t(uint8_t(u));
    if (s == uint16) return int64_t(uint16_t(u));
    if (s == uint32) return int64_t(uint32_t(u));
    if (s == uint64) return int_const(u);
    if (s == int8) return int64_t(int8_t(u));
    if (s == int16) return int64_t(int16_t(u));
    if (s == int32) return int64_t(int32_t(u));
    return static_cast<int64_t>(u);
  }
  return v;
}

// *** values in memory ***

namespace {
uint16_t half_bits(float x) {  // x is already a half: its bits, exactly
  uint32_t f = std::bit_cast<uint32_t>(x);
  uint32_t sign = (f >> 16) & 0x8000, exp = (f >> 23) & 0xFF, man = f & 0x7FFFFF;
  if (exp == 0xFF) return static_cast<uint16_t>(sign | 0x7C00 | (man ? 0x200 : 0));
  if (exp > 142) return static_cast<uint16_t>(sign | 0x7C00);
  if (exp >= 113) return static_cast<uint16_t>(sign | ((exp - 112) << 10) | (man >> 13));
  if (exp >= 103) return static_cast<uint16_t>(sign | ((man | 0x800000) >> (126 - exp)));
  return static_cast<uint16_t>(sign);
}
float half_value(uint16_t h) {
  const int exp = (h >> 10) & 0x1F, man = h & 0x3FF;
  float v = exp == 0      ? std::ldexp(static_cast<float>(man), -24)
            : exp == 0x1F ? (man ? NAN : INFINITY)
                          : std::ldexp(static_cast<float>(man | 0x400), exp - 25);
  return (h & 0x8000) ? -v : v;
}
}  // namespace

void write_value(uint8_t* dst, DType d, const ConstValue& v) {
  using namespace dtypes;
  DType s = d.scalar();
  auto put = [&](auto x) { std::memcpy(dst, &x, sizeof(x)); };
  if (s == bool_) return put(static_cast<uint8_t>(as_bool(v)));
  if (s == int8) return put(static_cast<int8_t>(as_int(v)));
  if (s == uint8) return put(static_cast<uint8_t>(as_int(v)));
  if (s == int16) return put(static_cast<int16_t>(as_int(v)));
  if (s == uint16) return put(static_cast<uint16_t>(as_int(v)));
  if (s == int32) return put(static_cast<int32_t>(as_int(v)));
  if (s == uint32) return put(static_cast<uint32_t>(as_int(v)));
  if (s == int64 || s == uint64) return put(static_cast<uint64_t>(as_i128(v)));  // the bits, modulo 2**64
  if (s == float32) return put(static_cast<float>(as_double(v)));
  if (s == float64) return put(as_double(v));
  if (s == float16) return put(half_bits(static_cast<float>(as_double(v))));
  if (s == bfloat16) return put(static_cast<uint16_t>(std::bit_cast<uint32_t>(static_cast<float>(as_double(v))) >> 16));
  if (s == fp8e4m3 || s == fp8e5m2) return put(float_to_fp8(as_double(v), s));
  throw Error(cat("can't write a value of dtype ", d));
}

ConstValue read_value(const uint8_t* src, DType d) {
  using namespace dtypes;
  DType s = d.scalar();
  auto get = [&](auto tag) {
    decltype(tag) x;
    std::memcpy(&x, src, sizeof(x));
    return x;
  };
  if (s == bool_) return get(uint8_t{}) != 0;
  if (s == int8) return int64_t(get(int8_t{}));
  if (s == uint8) return int64_t(get(uint8_t{}));
  if (s == int16) return int64_t(get(int16_t{}));
  if (s == uint16) return int64_t(get(uint16_t{}));
  if (s == int32) return int64_t(get(int32_t{}));
  if (s == uint32) return int64_t(get(uint32_t{}));
  if (s == int64) return get(int64_t{});
  if (s == uint64) return int_const(get(uint64_t{}));
  if (s == float32) return static_cast<double>(get(float{}));
  if (s == float64) return get(double{});
  if (s == float16) return static_cast<double>(half_value(get(uint16_t{})));
  if (s == bfloat16) return static_cast<double>(std::bit_cast<float>(uint32_t(get(uint16_t{})) << 16));
  if (s == fp8e4m3 || s == fp8e5m2) return fp8_to_float(get(uint8_t{}), s);
  throw Error(cat("can't read a value of dtype ", d));
}

// *** ConstValue helpers ***

ConstValue int_const(i128 v) {
  if (v < INT64_MIN) return INT64_MIN;
  if (v <= INT64_MAX) return static_cast<int64_t>(v);
  return v <= UINT64_MAX ? static_cast<uint64_t>(v) : UINT64_MAX;
}
double as_double(const ConstValue& v) {
  if (auto* b = std::get_if<bool>(&v)) return *b ? 1.0 : 0.0;
  if (auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  if (auto* u = std::get_if<uint64_t>(&v)) return static_cast<double>(*u);
  return std::get<double>(v);
}
int64_t as_int(const ConstValue& v) {
  i128 x = as_i128(v);
  return x > INT64_MAX ? INT64_MAX : x < INT64_MIN ? INT64_MIN : static_cast<int64_t>(x);
}
i128 as_i128(const ConstValue& v) {
  if (auto* b = std::get_if<bool>(&v)) return *b;
  if (auto* i = std::get_if<int64_t>(&v)) return *i;
  if (auto* u = std::get_if<uint64_t>(&v)) return *u;
  double f = std::get<double>(v);
  TG_CHECK(std::isfinite(f), "cannot convert float ", py_float_repr(f), " to integer");
  constexpr double lim = 0x1p100;  // far outside any 64-bit dtype: such floats saturate here and again later
  return f >= lim ? i128(1) << 100 : f <= -lim ? -(i128(1) << 100) : static_cast<i128>(f);
}
bool as_bool(const ConstValue& v) {
  if (auto* b = std::get_if<bool>(&v)) return *b;
  if (auto* i = std::get_if<int64_t>(&v)) return *i != 0;
  if (auto* u = std::get_if<uint64_t>(&v)) return *u != 0;
  return std::get<double>(v) != 0.0;
}
std::string const_repr(const ConstValue& v) {
  if (auto* b = std::get_if<bool>(&v)) return *b ? "True" : "False";
  if (auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (auto* u = std::get_if<uint64_t>(&v)) return std::to_string(*u);
  return py_float_repr(std::get<double>(v));
}
bool const_eq_numeric(const ConstValue& a, const ConstValue& b) {
  if (std::holds_alternative<double>(a) || std::holds_alternative<double>(b)) return as_double(a) == as_double(b);
  return as_i128(a) == as_i128(b);
}

}  // namespace tg
