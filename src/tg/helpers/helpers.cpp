#include "tg/helpers/helpers.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace tg {

void throw_error(const std::string& msg) { throw Error(msg); }
void throw_internal(const char* file, int line, const std::string& msg) {
  throw InternalError(cat(file, ":", line, ": ", msg));
}

// *** python-style formatting ***

// Python's float repr: the shortest digits that round-trip, printed positionally when the decimal exponent is in
// [-4, 16), else in scientific form with at least two exponent digits ('1e-10', '1e+16').
std::string py_float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string s(buf, res.ptr);  // e.g. "-1.5e+00", "1e-10"
  size_t epos = s.find('e');
  std::string mant = s.substr(0, epos);
  int exp10 = std::atoi(s.c_str() + epos + 1);
  bool neg = !mant.empty() && mant[0] == '-';
  if (neg) mant.erase(0, 1);
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  std::string out;
  if (exp10 >= -4 && exp10 < 16) {
    if (exp10 < 0) {
      out = "0." + std::string(-exp10 - 1, '0') + digits;
    } else if (static_cast<int>(digits.size()) <= exp10 + 1) {
      out = digits + std::string(exp10 + 1 - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, exp10 + 1) + "." + digits.substr(exp10 + 1);
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof(eb), "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
    out += eb;
  }
  return neg ? "-" + out : out;
}

std::string py_str_repr(std::string_view s) {
  bool has_single = s.find('\'') != std::string_view::npos, has_double = s.find('"') != std::string_view::npos;
  char q = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, q);
  for (char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c == q) out += '\\';
        out += c;
    }
  }
  return out + q;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); i++) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

// *** ANSI text ***

std::string colored(const std::string& s, const char* color, bool background) {
  if (color == nullptr) return s;
  static const char* names[] = {"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"};
  std::string c(color), lower;
  bool upper = true;  // python's color.upper() == color
  for (char ch : c) {
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (std::toupper(static_cast<unsigned char>(ch)) != ch) upper = false;
  }
  int idx = -1;
  for (int i = 0; i < 8; i++)
    if (lower == names[i]) idx = i;
  TG_CHECK(idx >= 0, "unknown color ", py_str_repr(c));
  return cat("\x1b[", 10 * background + 60 * upper + 30 + idx, "m", s, "\x1b[0m");
}

std::string ansistrip(const std::string& s) {
  // python: re.sub('\x1b\\[(K|.*?m)', '', s)
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[') {
      if (i + 2 < s.size() && s[i + 2] == 'K') {
        i += 3;
        continue;
      }
      size_t m = s.find('m', i + 2);
      if (m != std::string::npos && s.find('\n', i + 2) > m) {  // '.' does not match a newline
        i = m + 1;
        continue;
      }
    }
    out += s[i++];
  }
  return out;
}
size_t ansilen(const std::string& s) { return ansistrip(s).size(); }

std::string to_function_name(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : ansistrip(s)) {
    if (std::isalnum(c) || c == '_')
      out += static_cast<char>(c);
    else
      out += {hex[c >> 4], hex[c & 15]};
  }
  return out;
}

// *** env vars ***

int64_t getenv(const char* name, int64_t default_value) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return default_value;
  char* end = nullptr;
  long long r = std::strtoll(v, &end, 10);
  TG_CHECK(end != v && *end == '\0', "env var ", name, "=", v, " is not an integer");
  return r;
}
std::string getenv_str(const char* name, const std::string& default_value) {
  const char* v = std::getenv(name);
  return v == nullptr ? default_value : std::string(v);
}

}  // namespace tg
