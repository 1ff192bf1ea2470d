#pragma once
// UTF-8, strictly (RFC 3629: no overlong forms, surrogates or code points past U+10FFFF): what the readers (JSON,
// GGUF) accept, and how text from byte-level tokens is shown
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tg {

// the code point at s[i], advancing i past it; -1 (i unchanged) for an invalid or truncated sequence
int32_t decode_utf8(std::string_view s, size_t& i);
// cp (at most U+10FFFF) encoded, appended to out
void append_utf8(std::string& out, uint32_t cp);
bool is_valid_utf8(std::string_view s);
// s with each byte that starts no valid character replaced by U+FFFD (Python's bytes.decode(errors="replace"))
std::string replace_invalid_utf8(std::string_view s);
// the byte length its lead byte gives a character: 1 for ASCII and for bytes that lead none (as llama.cpp splits)
size_t utf8_char_len(unsigned char lead);
// the length of s's longest prefix that doesn't end inside a character still being written: a stream prints that
// much and keeps the rest until the next bytes come
size_t utf8_whole_prefix(std::string_view s);

}  // namespace tg
