#pragma once
// llm: the pre-tokenizers of byte-level BPE (tokenizer.ggml.pre): the text cut into words before the merges, by hand
// instead of a regex engine (std::regex knows no \p{L}), as llama.cpp's unicode.cpp cuts them, so the words are its:
//   GPT2   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//   LLAMA3 (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|
//          \s+(?!\S)|\s+
//   QWEN2  LLAMA3 with \p{N} (one digit a word) for \p{N}{1,3}
//   DEFAULT (no tokenizer.ggml.pre, or "default") four splits in turn: runs of [\p{P}$+<=>^~|], then GPT2, then runs
//          of \p{N}, then [0-9]{3} taken from the left
// The character classes come from tools/gen_unicode_tables.py (unicode_tables.inc), Python's Unicode 14; llama.cpp's
// tables are newer, so a character assigned since then may be cut differently.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tg::llm {

enum class PreTokenizer { DEFAULT, GPT2, LLAMA3, QWEN2 };

// the classes the pre-tokenizers ask about: \p{L}, \p{N}, \p{P}, \s (Unicode's White_Space), or none of them
enum class CharClass : uint8_t { OTHER, LETTER, NUMBER, PUNCT, SPACE };
CharClass char_class(uint32_t cp);

// text's words, in order; together they are text, with each byte that starts no valid UTF-8 character replaced by
// U+FFFD (as llama.cpp reads invalid UTF-8)
std::vector<std::string> pre_tokenize(std::string_view text, PreTokenizer pre);

}  // namespace tg::llm
