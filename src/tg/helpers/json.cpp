// strict JSON: a recursive-descent parser bounded by max_depth, and python's compact json.dumps
#include "tg/helpers/json.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "tg/helpers/helpers.h"
#include "tg/helpers/utf8.h"

namespace tg::json {

// *** Value ***

const char* Value::kind_name(Kind k) {
  switch (k) {
    case Kind::null: return "null";
    case Kind::boolean: return "bool";
    case Kind::integer: return "int";
    case Kind::number: return "float";
    case Kind::string: return "string";
    case Kind::array: return "array";
    case Kind::object: return "object";
  }
  return "?";
}

void Value::throw_too_big(uint64_t i) { throw Error(cat("JSON: integer ", i, " does not fit int64")); }

void Value::check_kind(Kind want) const {
  TG_CHECK(kind() == want, "JSON: expected ", kind_name(want), ", got ", kind_name(kind()));
}

bool Value::as_bool() const { return check_kind(Kind::boolean), std::get<bool>(v_); }
int64_t Value::as_int() const { return check_kind(Kind::integer), std::get<int64_t>(v_); }
double Value::as_double() const {
  if (is_int()) return static_cast<double>(std::get<int64_t>(v_));
  return check_kind(Kind::number), std::get<double>(v_);
}
const std::string& Value::as_string() const { return check_kind(Kind::string), std::get<std::string>(v_); }
const Array& Value::as_array() const { return check_kind(Kind::array), std::get<Array>(v_); }
const Object& Value::as_object() const { return check_kind(Kind::object), std::get<Object>(v_); }
Array& Value::as_array() { return check_kind(Kind::array), std::get<Array>(v_); }
Object& Value::as_object() { return check_kind(Kind::object), std::get<Object>(v_); }

const Value* Value::find(std::string_view key) const {
  if (!is_object()) return nullptr;
  for (const auto& kv : std::get<Object>(v_))
    if (kv.first == key) return &kv.second;
  return nullptr;
}

namespace {

// *** parser ***

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  Value document() {
    skip_ws();
    Value v = value(0);
    skip_ws();
    if (i_ != s_.size()) fail("unexpected ", what(), " after the value");
    return v;
  }

 private:
  template <class... Ts>
  [[noreturn]] void fail(const Ts&... xs) const {
    throw Error(cat("JSON: ", xs..., " at byte ", i_));
  }
  // the character at i_, for messages: 'x', byte 0x1f, or end of input
  std::string what() const {
    if (i_ >= s_.size()) return "end of input";
    auto c = static_cast<unsigned char>(s_[i_]);
    if (c >= 0x20 && c < 0x7F) return py_str_repr(std::string(1, s_[i_]));
    char buf[16];
    std::snprintf(buf, sizeof(buf), "byte 0x%02x", c);
    return buf;
  }
  bool at(char c) const { return i_ < s_.size() && s_[i_] == c; }
  void expect(char c, const char* context) {
    if (!at(c)) fail("expected '", c, "' ", context, ", got ", what());
    i_++;
  }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) i_++;
  }

  Value value(int depth) {
    if (i_ >= s_.size()) fail("expected a value, got end of input");
    switch (s_[i_]) {
      case '{': return object(depth + 1);
      case '[': return array(depth + 1);
      case '"': return string();
      case 't': return literal("true", Value(true));
      case 'f': return literal("false", Value(false));
      case 'n': return literal("null", Value());
      default:
        if (s_[i_] == '-' || (s_[i_] >= '0' && s_[i_] <= '9')) return number();
        fail("expected a value, got ", what());
    }
  }

  Value literal(std::string_view word, Value v) {
    if (s_.substr(i_, word.size()) != word) fail("invalid literal, expected ", word);
    i_ += word.size();
    return v;
  }

  void check_depth(int depth) {
    if (depth > max_depth) fail("arrays and objects nested deeper than ", max_depth);
  }

  Value object(int depth) {
    check_depth(depth);
    i_++;  // '{'
    Object o;
    skip_ws();
    if (at('}')) return i_++, Value(std::move(o));
    while (true) {
      skip_ws();
      if (!at('"')) fail("expected a string key, got ", what());
      size_t key_at = i_;
      std::string key = string();
      for (const auto& kv : o)
        if (kv.first == key) {
          i_ = key_at;
          fail("duplicate key ", py_str_repr(key));
        }
      skip_ws();
      expect(':', "after an object key");
      skip_ws();
      Value v = value(depth);
      o.emplace_back(std::move(key), std::move(v));
      skip_ws();
      if (at('}')) return i_++, Value(std::move(o));
      expect(',', "or '}' in an object");
    }
  }

  Value array(int depth) {
    check_depth(depth);
    i_++;  // '['
    Array a;
    skip_ws();
    if (at(']')) return i_++, Value(std::move(a));
    while (true) {
      skip_ws();
      a.push_back(value(depth));
      skip_ws();
      if (at(']')) return i_++, Value(std::move(a));
      expect(',', "or ']' in an array");
    }
  }

  uint32_t hex4() {
    if (i_ + 4 > s_.size()) fail("truncated \\u escape");
    uint32_t v = 0;
    for (int k = 0; k < 4; k++, i_++) {
      char c = s_[i_];
      int d = c >= '0' && c <= '9'   ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                     : -1;
      if (d < 0) fail("invalid hex digit ", what(), " in a \\u escape");
      v = v << 4 | static_cast<uint32_t>(d);
    }
    return v;
  }

  std::string string() {
    i_++;  // '"'
    std::string out;
    while (true) {
      if (i_ >= s_.size()) fail("unterminated string");
      auto c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') return i_++, out;
      if (c < 0x20) fail("unescaped control character ", what(), " in a string");
      if (c >= 0x80) {
        size_t start = i_;
        if (decode_utf8(s_, i_) < 0) fail("invalid UTF-8 in a string");
        out.append(s_.substr(start, i_ - start));
        continue;
      }
      if (c != '\\') {
        out.push_back(static_cast<char>(c));
        i_++;
        continue;
      }
      i_++;
      if (i_ >= s_.size()) fail("unterminated string");
      char e = s_[i_++];
      switch (e) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case '/': out.push_back('/'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': {
          size_t esc_at = i_ - 2;
          uint32_t cp = hex4();
          if (cp >= 0xDC00 && cp <= 0xDFFF) i_ = esc_at, fail("lone low surrogate in a \\u escape");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (s_.substr(i_, 2) != "\\u") i_ = esc_at, fail("lone high surrogate in a \\u escape");
            i_ += 2;
            uint32_t lo = hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) i_ = esc_at, fail("lone high surrogate in a \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default: i_--, fail("invalid escape \\", what());
      }
    }
  }

  Value number() {
    size_t start = i_;
    auto digits = [&] {
      size_t d = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') i_++;
      return i_ - d;
    };
    if (at('-')) i_++;
    if (at('0')) {
      i_++;
      if (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') fail("leading zero in a number");
    } else if (digits() == 0) {
      fail("expected a digit, got ", what());
    }
    bool integer = true;
    if (at('.')) {
      i_++, integer = false;
      if (digits() == 0) fail("expected a digit after '.', got ", what());
    }
    if (at('e') || at('E')) {
      i_++, integer = false;
      if (at('+') || at('-')) i_++;
      if (digits() == 0) fail("expected a digit in the exponent, got ", what());
    }
    const char* b = s_.data() + start;
    const char* e = s_.data() + i_;
    if (integer) {
      int64_t v = 0;
      if (auto r = std::from_chars(b, e, v); r.ec == std::errc() && r.ptr == e) return Value(v);
    }
    double d = 0;
    auto r = std::from_chars(b, e, d);
    if (r.ec == std::errc::result_out_of_range) {  // python gives inf (or 0.0 on underflow); strict JSON has no inf
      i_ = start;
      fail("number ", std::string(b, e), " out of the range of a double");
    }
    if (r.ec != std::errc() || r.ptr != e) i_ = start, fail("invalid number");
    return Value(d);
  }

  std::string_view s_;
  size_t i_ = 0;
};

// *** writer ***

void dump_string(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  auto u_escape = [&](uint32_t u) {
    out += "\\u";
    for (int sh = 12; sh >= 0; sh -= 4) out.push_back(hex[u >> sh & 0xF]);
  };
  out.push_back('"');
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      int32_t cp = decode_utf8(s, i);
      TG_CHECK(cp >= 0, "JSON: invalid UTF-8 in string ", py_str_repr(s), " at byte ", i);
      if (cp >= 0x10000) {  // a surrogate pair
        uint32_t v = static_cast<uint32_t>(cp) - 0x10000;
        u_escape(0xD800 + (v >> 10)), u_escape(0xDC00 + (v & 0x3FF));
      } else {
        u_escape(static_cast<uint32_t>(cp));
      }
      continue;
    }
    i++;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7F)
          u_escape(c);
        else
          out.push_back(static_cast<char>(c));
    }
  }
  out.push_back('"');
}

// depth: of the containers around v, counting v
void dump_value(std::string& out, const Value& v, int depth) {
  if (v.is_array() || v.is_object())
    TG_CHECK(depth <= max_depth, "JSON: arrays and objects nested deeper than ", max_depth);
  switch (v.kind()) {
    case Value::Kind::null: out += "null"; break;
    case Value::Kind::boolean: out += v.as_bool() ? "true" : "false"; break;
    case Value::Kind::integer: out += std::to_string(v.as_int()); break;
    case Value::Kind::number:
      TG_CHECK(std::isfinite(v.as_double()), "JSON: can't write ", v.as_double(), ": strict JSON has no NaN or inf");
      out += py_float_repr(v.as_double());
      break;
    case Value::Kind::string: dump_string(out, v.as_string()); break;
    case Value::Kind::array: {
      out.push_back('[');
      bool first = true;
      for (const Value& x : v.as_array()) {
        if (!first) out.push_back(',');
        first = false;
        dump_value(out, x, depth + 1);
      }
      out.push_back(']');
      break;
    }
    case Value::Kind::object: {
      out.push_back('{');
      bool first = true;
      for (const auto& [k, x] : v.as_object()) {
        if (!first) out.push_back(',');
        first = false;
        dump_string(out, k);
        out.push_back(':');
        dump_value(out, x, depth + 1);
      }
      out.push_back('}');
      break;
    }
  }
}

}  // namespace

std::string Value::dump() const {
  std::string out;
  dump_value(out, *this, 1);
  return out;
}

Value parse(std::string_view text) { return Parser(text).document(); }

}  // namespace tg::json
