#pragma once
// DType: a one-pointer handle to an interned, immutable description (tinygrad's dtype.py, where the metaclass
// makes every DType a singleton). == is identity, as in tinygrad.
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <string>
#include <variant>
#include <vector>

namespace tg {

struct DTypeData;

class DType {
 public:
  constexpr DType() = default;  // a default DType is dtypes::void_
  explicit constexpr DType(const DTypeData* d) : d_(d) {}

  int priority() const;
  int itemsize() const;      // bytes of the (vector) value; for a pointer: of its base element
  std::string name() const;  // the C name: "float", "unsigned char", "float4"
  char fmt() const;          // struct format char or 0
  int count() const;         // vector width of the value (1 for scalars and plain pointers)
  int vcount() const;        // count, or v for pointers (a vector of pointers)
  DType scalar() const;      // element type without .vec
  DType base() const;        // for pointers: the pointee; else itself
  bool is_ptr() const;
  bool is_image() const;
  bool local() const;    // pointers: address space local
  int64_t size() const;  // pointers: element count, -1 unsized
  int v() const;         // pointers: vector of pointers width
  const std::vector<int64_t>& image_shape() const;

  DType vec(int n) const;
  DType ptr(int64_t size = -1, bool local = false) const;
  int64_t nbytes() const;  // pointers only

  std::string repr() const;                    // dtypes.float.vec(4), dtypes.int.ptr(16)
  uint64_t key() const;                        // deterministic content hash (stable across runs)
  const void* data_ptr() const { return d_; }  // identity, for hashing

  bool operator==(const DType& o) const { return d_ == o.d_; }
  bool operator<(const DType& o) const;  // tinygrad's ordering: (priority, itemsize, name, fmt, count)

 private:
  const DTypeData* d_ = nullptr;
};
std::ostream& operator<<(std::ostream& os, DType d);

// python's bool | int | float. An int is an int64_t, or a uint64_t when it is above INT64_MAX (uint64's upper half),
// never both ways: build ints that may be that large with int_const, so equal values stay equal variants.
using ConstValue = std::variant<bool, int64_t, double, uint64_t>;
__extension__ typedef __int128 i128;

namespace dtypes {
extern const DType void_, bool_, int8, uint8, int16, uint16, int32, uint32, int64, uint64, fp8e4m3, fp8e5m2, float16,
    bfloat16, float32, float64;
// aliases, with tinygrad's names (int/long/float/... are keywords in C++, so they keep a trailing underscore)
inline const DType &half = float16, &float_ = float32, &double_ = float64, &uchar = uint8, &ushort = uint16,
                   &uint = uint32, &ulong = uint64, &char_ = int8, &short_ = int16, &int_ = int32, &long_ = int64;
extern DType default_float, default_int;

extern const std::vector<DType> fp8s, floats, uints, sints, ints, all;

bool is_float(DType d);
bool is_int(DType d);
bool is_unsigned(DType d);
bool is_bool(DType d);
ConstValue min(DType d);
ConstValue max(DType d);
DType imagef(std::vector<int64_t> shape);
DType imageh(std::vector<int64_t> shape);
// python's dtypes.as_const: int(v) for ints, float(v) for floats, bool(v) otherwise; not truncated (see truncate)
ConstValue as_const(ConstValue v, DType d);
DType from_name(const std::string& name);  // "float32", "float", "half", ... (to_dtype); throws on unknown
std::pair<int, int> finfo(DType d);        // (exponent, mantissa) bits
}  // namespace dtypes

bool contains(const std::vector<DType>& set, DType d);
DType least_upper_dtype(std::initializer_list<DType> ds);
DType least_upper_dtype(const std::vector<DType>& ds);
DType least_upper_float(DType d);
DType sum_acc_dtype(DType d);

// const values into a dtype, as tinygrad's `truncate` table does (wraps ints modulo 2**bits into the dtype's range, so
// uint64 gives [0, 2**64); rounds floats to the width)
ConstValue truncate(ConstValue v, DType d);
double truncate_fp16(double x);
double truncate_bf16(double x);
double fp8_to_float(uint8_t bits, DType d);
uint8_t float_to_fp8(double x, DType d);

// one value of scalar dtype d in memory, as devices hold it (little-endian; half, bfloat16 and fp8 as their bits)
void write_value(uint8_t* dst, DType d, const ConstValue& v);  // v already truncated into d (see truncate)
ConstValue read_value(const uint8_t* src, DType d);

// ConstValue helpers
ConstValue int_const(i128 v);  // the python int v: int64_t or uint64_t; saturates outside [INT64_MIN, UINT64_MAX]
double as_double(const ConstValue& v);
int64_t as_int(const ConstValue& v);  // saturates: a uint64_t above INT64_MAX is INT64_MAX, as a huge float is
i128 as_i128(const ConstValue& v);    // exact for ints and bools; floats truncate toward zero, saturating
bool as_bool(const ConstValue& v);
std::string const_repr(const ConstValue& v);                      // python repr: True, 4, 2.0
bool const_eq_numeric(const ConstValue& a, const ConstValue& b);  // python ==: 1 == 1.0 == True

}  // namespace tg
