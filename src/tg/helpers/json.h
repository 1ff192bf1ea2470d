#pragma once
// a small strict JSON (RFC 8259) value, parser and writer, for file headers such as safetensors'.
//
//   json::Value v = json::parse(R"({"a": [1, 2.5, "x"], "b": null})");
//   v.find("a")->as_array()[0].as_int();         // 1
//   json::Value(json::Object{{"k", "v"}}).dump()  // {"k":"v"}
//
// Objects keep their keys in document order (a vector of pairs), as python's dicts do. parse is strict: no comments,
// no trailing commas, no NaN/Infinity, no leading zeros, no control characters or invalid UTF-8 in strings, no lone
// surrogates, no duplicate keys, nothing but whitespace after the value, and nesting at most max_depth deep. Every
// failure is a tg::Error naming the problem and its byte offset. Integer literals that fit int64 are ints, every other
// number is a double. dump writes what python's json.dumps(v, separators=(',', ':')) writes: ASCII only (\uXXXX
// escapes, lowercase hex), floats as repr(float).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace tg::json {

class Value;
using Array = std::vector<Value>;
using Object = std::vector<std::pair<std::string, Value>>;  // in document order

class Value {
 public:
  enum class Kind { null, boolean, integer, number, string, array, object };

  Value() = default;  // null
  Value(std::nullptr_t) {}
  Value(bool b) : v_(b) {}
  template <class T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) Value(T i) : v_(to_int64(i)) {}
  Value(double d) : v_(d) {}
  Value(const char* s) : v_(std::string(s)) {}
  Value(std::string_view s) : v_(std::string(s)) {}
  Value(std::string s) : v_(std::move(s)) {}
  Value(Array a) : v_(std::move(a)) {}
  Value(Object o) : v_(std::move(o)) {}

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  bool is_null() const { return kind() == Kind::null; }
  bool is_bool() const { return kind() == Kind::boolean; }
  bool is_int() const { return kind() == Kind::integer; }
  bool is_number() const { return kind() == Kind::integer || kind() == Kind::number; }
  bool is_string() const { return kind() == Kind::string; }
  bool is_array() const { return kind() == Kind::array; }
  bool is_object() const { return kind() == Kind::object; }

  // the value as that kind; another kind is an Error naming both (as_double also takes an int)
  bool as_bool() const;
  int64_t as_int() const;
  double as_double() const;
  const std::string& as_string() const;
  const Array& as_array() const;
  const Object& as_object() const;
  Array& as_array();
  Object& as_object();

  const Value* find(std::string_view key) const;  // an object's member, or nullptr (not an object: nullptr)

  std::string dump() const;              // compact, as python's json.dumps(v, separators=(',', ':'))
  static const char* kind_name(Kind k);  // "null", "bool", "int", "float", "string", "array", "object"

  bool operator==(const Value& o) const = default;

 private:
  template <class T>
  static int64_t to_int64(T i) {
    if constexpr (std::is_unsigned_v<T> && sizeof(T) >= sizeof(int64_t))
      if (i > static_cast<T>(INT64_MAX)) throw_too_big(static_cast<uint64_t>(i));
    return static_cast<int64_t>(i);
  }
  [[noreturn]] static void throw_too_big(uint64_t i);
  void check_kind(Kind want) const;

  std::variant<std::nullptr_t, bool, int64_t, double, std::string, Array, Object> v_;
};

inline constexpr int max_depth = 128;  // arrays and objects nested deeper are an Error

Value parse(std::string_view text);

}  // namespace tg::json
