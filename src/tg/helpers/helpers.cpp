#include "tg/helpers/helpers.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace tg {

void throw_error(const std::string& msg, ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Index: throw IndexError(msg);
    case ErrorKind::Value: throw ValueError(msg);
    case ErrorKind::Type: throw TypeError(msg);
    case ErrorKind::Assertion: throw AssertionError(msg);
    case ErrorKind::NotImplemented: throw NotImplementedError(msg);
    case ErrorKind::Runtime: break;
  }
  throw Error(msg);
}
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

// *** sha256 ***

std::array<uint8_t, 32> sha256(const void* data, size_t n) {
  static constexpr uint32_t k[64] = {
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
      0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
      0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
      0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
      0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
      0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
      0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
      0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  // the message, padded: 0x80, zeros, then the bit length as 64-bit big endian, to a multiple of 64 bytes
  std::vector<uint8_t> msg(static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + n);
  msg.push_back(0x80);
  while (msg.size() % 64 != 56) msg.push_back(0);
  for (int i = 7; i >= 0; i--) msg.push_back(static_cast<uint8_t>((uint64_t(n) * 8) >> (8 * i)));
  auto rotr = [](uint32_t x, int r) { return (x >> r) | (x << (32 - r)); };
  for (size_t off = 0; off < msg.size(); off += 64) {
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
      w[i] = uint32_t(msg[off + 4 * i]) << 24 | uint32_t(msg[off + 4 * i + 1]) << 16 |
             uint32_t(msg[off + 4 * i + 2]) << 8 | uint32_t(msg[off + 4 * i + 3]);
    for (int i = 16; i < 64; i++) {
      uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; i++) {
      uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
  }
  std::array<uint8_t, 32> out;
  for (int i = 0; i < 32; i++) out[i] = static_cast<uint8_t>(h[i / 4] >> (24 - 8 * (i % 4)));
  return out;
}

std::vector<int64_t> iota(int64_t a, int64_t b) {
  std::vector<int64_t> r;
  for (int64_t i = a; i < b; i++) r.push_back(i);
  return r;
}

}  // namespace tg
