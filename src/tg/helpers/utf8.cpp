#include "tg/helpers/utf8.h"

namespace tg {

int32_t decode_utf8(std::string_view s, size_t& i) {
  auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  uint8_t c = b(i);
  if (c < 0x80) return i++, c;
  int n = c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2 : c >= 0xF0 && c <= 0xF4 ? 3 : 0;
  if (n == 0 || i + static_cast<size_t>(n) >= s.size()) return -1;  // a bad lead byte, or truncated
  int32_t cp = c & (0x3F >> n);
  for (int k = 1; k <= n; k++) {
    if ((b(i + static_cast<size_t>(k)) & 0xC0) != 0x80) return -1;
    cp = cp << 6 | (b(i + static_cast<size_t>(k)) & 0x3F);
  }
  static constexpr int32_t min_cp[4] = {0, 0x80, 0x800, 0x10000};
  if (cp < min_cp[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
  i += static_cast<size_t>(n) + 1;
  return cp;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | cp >> 6));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | cp >> 12));
    out.push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | cp >> 18));
    out.push_back(static_cast<char>(0x80 | (cp >> 12 & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool is_valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();)
    if (decode_utf8(s, i) < 0) return false;
  return true;
}

std::string replace_invalid_utf8(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    size_t start = i;
    if (decode_utf8(s, i) >= 0) {
      out.append(s.substr(start, i - start));
    } else {
      out += "\xef\xbf\xbd", i++;
    }
  }
  return out;
}

size_t utf8_char_len(unsigned char c) {
  return c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
}

size_t utf8_whole_prefix(std::string_view s) {
  size_t i = s.size();
  while (i > 0 && s.size() - i < 3 && (static_cast<unsigned char>(s[i - 1]) & 0xC0) == 0x80) i--;
  if (i == 0) return s.size();
  size_t lead = i - 1;  // the last character's first byte
  return s.size() - lead >= utf8_char_len(static_cast<unsigned char>(s[lead])) ? s.size() : lead;
}

}  // namespace tg
