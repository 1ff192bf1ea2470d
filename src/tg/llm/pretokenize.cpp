#include "tg/llm/pretokenize.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "tg/helpers/utf8.h"

namespace tg::llm {

namespace {

struct Range {
  uint32_t first, last;
  CharClass cls;
};
constexpr CharClass LETTER = CharClass::LETTER, NUMBER = CharClass::NUMBER, PUNCT = CharClass::PUNCT,
                    SPACE = CharClass::SPACE;
constexpr Range kRanges[] = {
#include "tg/llm/unicode_tables.inc"
};

// the text as code points and their classes; a pass cuts a span [b, e) of them into words, appending each word's end
struct Text {
  std::vector<uint32_t> cps;
  std::vector<CharClass> cls;
};
using Ends = std::vector<size_t>;

bool word_class(CharClass c) { return c == LETTER || c == NUMBER || c == SPACE; }
bool is_newline(uint32_t c) { return c == '\r' || c == '\n'; }

// 's 't 're 've 'm 'll 'd at pos: its length, or 0 (fold: any case, as llama3's (?i:...))
size_t contraction(const Text& t, size_t pos, size_t e, bool fold) {
  if (t.cps[pos] != '\'' || pos + 1 >= e) return 0;
  auto low = [&](size_t i) { return fold && t.cps[i] >= 'A' && t.cps[i] <= 'Z' ? t.cps[i] + 32 : t.cps[i]; };
  uint32_t a = low(pos + 1);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if (pos + 2 >= e) return 0;
  uint32_t b = low(pos + 2);
  return (a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l') ? 3 : 0;
}

// the end of the run of class c from i
size_t run(const Text& t, size_t i, size_t e, CharClass c) {
  while (i < e && t.cls[i] == c) i++;
  return i;
}
size_t run_other(const Text& t, size_t i, size_t e) {  // [^\s\p{L}\p{N}]+
  while (i < e && !word_class(t.cls[i])) i++;
  return i;
}

// \s+(?!\S)|\s+ from pos: the spaces, less the last one where a non-space follows (it starts the next word)
size_t spaces(const Text& t, size_t pos, size_t e) {
  size_t end = run(t, pos, e, SPACE);
  if (end - pos > 1 && end < e) return end - 1;
  return std::max(end, pos + 1);
}

void split_gpt2(const Text& t, size_t b, size_t e, Ends& ends) {
  for (size_t pos = b; pos < e; ends.push_back(pos)) {
    if (size_t n = contraction(t, pos, e, false)) {
      pos += n;
      continue;
    }
    size_t s = pos + (t.cps[pos] == ' ');  // ' ?': one space joins the word after it
    CharClass c = s < e ? t.cls[s] : SPACE;
    if (c == LETTER || c == NUMBER) {
      pos = run(t, s, e, c);
    } else if (c != SPACE) {
      pos = run_other(t, s, e);
    } else {
      pos = spaces(t, pos, e);
    }
  }
}

// llama3's, and qwen2's with max_digits 1
void split_llama3(const Text& t, size_t b, size_t e, Ends& ends, size_t max_digits) {
  for (size_t pos = b; pos < e; ends.push_back(pos)) {
    const uint32_t cp = t.cps[pos];
    const CharClass c = t.cls[pos];
    if (size_t n = contraction(t, pos, e, true)) {
      pos += n;
    } else if (!is_newline(cp) && c != NUMBER && (c == LETTER || (pos + 1 < e && t.cls[pos + 1] == LETTER))) {
      pos = run(t, pos + 1, e, LETTER);  // [^\r\n\p{L}\p{N}]?\p{L}+
    } else if (c == NUMBER) {
      pos = std::min(run(t, pos, e, NUMBER), pos + max_digits);
    } else if (size_t s = pos + (cp == ' '); s == e || !word_class(t.cls[s])) {
      // ' ?[^\s\p{L}\p{N}]+[\r\n]*' (a lone space at the end lands here too, as in llama.cpp: the same word as \s+)
      pos = run_other(t, s, e);
      while (pos < e && is_newline(t.cps[pos])) pos++;
    } else {
      size_t end = run(t, pos, e, SPACE), last_newline = 0;
      for (size_t i = pos; i < end; i++)
        if (is_newline(t.cps[i])) last_newline = i + 1;
      pos = last_newline > 0 ? last_newline : spaces(t, pos, e);  // \s*[\r\n]+ first
    }
  }
}

// the maximal runs where in(cp, class) holds and the gaps between them, each a word (a regex split keeping both)
template <class F>
void split_runs(const Text& t, size_t b, size_t e, Ends& ends, F in) {
  for (size_t pos = b; pos < e; ends.push_back(pos)) {
    const bool m = in(t.cps[pos], t.cls[pos]);
    while (pos < e && in(t.cps[pos], t.cls[pos]) == m) pos++;
  }
}

// [0-9][0-9][0-9] matched left to right, and the gaps
void split_digit_triples(const Text& t, size_t b, size_t e, Ends& ends) {
  auto digit = [&](size_t i) { return t.cps[i] >= '0' && t.cps[i] <= '9'; };
  size_t gap = b;
  for (size_t pos = b; pos + 3 <= e;) {
    if (!(digit(pos) && digit(pos + 1) && digit(pos + 2))) {
      pos++;
      continue;
    }
    if (pos > gap) ends.push_back(pos);
    ends.push_back(pos += 3);
    gap = pos;
  }
  if (gap < e) ends.push_back(e);
}

// each word of ends cut again by pass
template <class F>
Ends refine(const Text& t, const Ends& ends, F pass) {
  Ends out;
  size_t b = 0;
  for (size_t e : ends) pass(t, std::exchange(b, e), e, out);
  return out;
}

}  // namespace

CharClass char_class(uint32_t cp) {
  // the last range that starts at or before cp
  const Range* r = std::upper_bound(std::begin(kRanges), std::end(kRanges), cp,
                                    [](uint32_t c, const Range& x) { return c < x.first; });
  return r != std::begin(kRanges) && cp <= r[-1].last ? r[-1].cls : CharClass::OTHER;
}

std::vector<std::string> pre_tokenize(std::string_view text, PreTokenizer pre) {
  Text t;
  for (size_t i = 0; i < text.size();) {
    int32_t cp = decode_utf8(text, i);
    if (cp < 0) cp = 0xFFFD, i++;  // one byte that starts no character, as llama.cpp reads it
    t.cps.push_back(static_cast<uint32_t>(cp));
    t.cls.push_back(char_class(static_cast<uint32_t>(cp)));
  }
  Ends ends{t.cps.size()};
  if (t.cps.empty()) return {};
  switch (pre) {
    case PreTokenizer::GPT2: ends = refine(t, ends, split_gpt2); break;
    case PreTokenizer::LLAMA3:
      ends = refine(t, ends, [](const Text& x, size_t b, size_t e, Ends& o) { split_llama3(x, b, e, o, 3); });
      break;
    case PreTokenizer::QWEN2:
      ends = refine(t, ends, [](const Text& x, size_t b, size_t e, Ends& o) { split_llama3(x, b, e, o, 1); });
      break;
    case PreTokenizer::DEFAULT: {
      // [\p{P}\$\+<=>\^~\|]+, then GPT2's, then \p{N}+, then [0-9][0-9][0-9]
      auto punct = [](uint32_t cp, CharClass c) {
        return c == PUNCT || cp == '$' || cp == '+' || cp == '<' || cp == '=' || cp == '>' || cp == '^' || cp == '~' ||
               cp == '|';
      };
      auto number = [](uint32_t, CharClass c) { return c == NUMBER; };
      ends = refine(t, ends, [&](const Text& x, size_t b, size_t e, Ends& o) { split_runs(x, b, e, o, punct); });
      ends = refine(t, ends, split_gpt2);
      ends = refine(t, ends, [&](const Text& x, size_t b, size_t e, Ends& o) { split_runs(x, b, e, o, number); });
      ends = refine(t, ends, split_digit_triples);
      break;
    }
  }
  std::vector<std::string> words;
  size_t b = 0;
  for (size_t e : ends) {
    std::string& w = words.emplace_back();
    for (size_t i = b; i < e; i++) append_utf8(w, t.cps[i]);
    b = e;
  }
  return words;
}

}  // namespace tg::llm
