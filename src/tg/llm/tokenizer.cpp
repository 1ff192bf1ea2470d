#include "tg/llm/tokenizer.h"

#include <algorithm>
#include <array>
#include <functional>
#include <optional>
#include <queue>

#include "tg/helpers/helpers.h"
#include "tg/helpers/utf8.h"

namespace tg::llm {

namespace {

const nn::GGUFValue* find(const nn::GGUFMetadata& kv, const std::string& key) { return nn::gguf_find(kv, key); }

const std::string kSpace = "\xe2\x96\x81";  // U+2581, SentencePiece's space

// GPT-2's bytes_to_unicode: a printable byte stands for itself, each other byte (controls, space, 0x7F-0xA0, 0xAD) for
// U+0100 on, in byte order, so a byte-level BPE token is printable text
bool printable(uint32_t b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }
const std::array<std::string, 256>& byte_chars() {
  static const std::array<std::string, 256> chars = [] {
    std::array<std::string, 256> c;
    uint32_t next = 0x100;
    for (uint32_t b = 0; b < 256; b++) append_utf8(c[b], printable(b) ? b : next++);
    return c;
  }();
  return chars;
}
// the byte a code point of that alphabet stands for, or -1
int byte_of(uint32_t cp) {
  if (cp < 0x100) return printable(cp) ? static_cast<int>(cp) : -1;
  for (uint32_t b = 0, next = 0x100; b < 256; b++)
    if (!printable(b) && next++ == cp) return static_cast<int>(b);
  return -1;
}

// tokenizer.ggml.pre: the pre-tokenizer, whether a word that is a token skips the merges, whether BOS is added
struct PreInfo {
  const char* name;
  PreTokenizer pre;
  bool ignore_merges, add_bos;
};
constexpr PreInfo kPres[] = {{"default", PreTokenizer::DEFAULT, false, false},
                             {"gpt-2", PreTokenizer::GPT2, false, false},
                             {"llama-bpe", PreTokenizer::LLAMA3, true, true},
                             {"qwen2", PreTokenizer::QWEN2, false, false}};

// a word's characters as a linked list of symbols, merged pair by pair: the pair of the highest priority first
// (leftmost on a tie), where priority(left, right) is nullopt for a pair that doesn't merge. SentencePiece's priority
// is the joined piece's score, byte-level BPE's the merge's rank, negated. Returns the pieces left, in order.
std::vector<std::string_view> merge_symbols(
    std::string_view w, const std::function<std::optional<double>(std::string_view, std::string_view)>& priority) {
  struct Sym {
    size_t off, len;
    int64_t prev, next;
  };
  std::vector<Sym> sym;
  for (size_t off = 0; off < w.size();) {
    size_t len = std::min(utf8_char_len(static_cast<unsigned char>(w[off])), w.size() - off);
    sym.push_back({off, len, static_cast<int64_t>(sym.size()) - 1, static_cast<int64_t>(sym.size()) + 1});
    off += len;
  }
  if (sym.empty()) return {};
  sym.back().next = -1;
  struct Pair {
    int64_t left, right;
    double priority;
    size_t size;
  };
  auto worse = [](const Pair& a, const Pair& b) {
    return a.priority < b.priority || (a.priority == b.priority && a.left > b.left);
  };
  std::priority_queue<Pair, std::vector<Pair>, decltype(worse)> queue(worse);
  auto at = [&](int64_t i) -> Sym& { return sym[static_cast<size_t>(i)]; };
  auto try_add = [&](int64_t l, int64_t r) {
    if (l < 0 || r < 0) return;
    std::optional<double> p = priority(w.substr(at(l).off, at(l).len), w.substr(at(r).off, at(r).len));
    if (p) queue.push({l, r, *p, at(l).len + at(r).len});
  };
  for (size_t i = 1; i < sym.size(); i++) try_add(static_cast<int64_t>(i) - 1, static_cast<int64_t>(i));
  while (!queue.empty()) {
    Pair p = queue.top();
    queue.pop();
    Sym &l = at(p.left), &r = at(p.right);
    if (l.len == 0 || r.len == 0 || l.len + r.len != p.size) continue;  // merged away since it was queued
    l.len += r.len, r.len = 0, l.next = r.next;
    if (r.next >= 0) at(r.next).prev = p.left;
    try_add(l.prev, p.left);
    try_add(p.left, l.next);
  }
  std::vector<std::string_view> pieces;
  for (int64_t i = 0; i >= 0; i = at(i).next) pieces.push_back(w.substr(at(i).off, at(i).len));
  return pieces;
}

}  // namespace

Tokenizer Tokenizer::from_gguf(const nn::GGUFMetadata& kv) {
  const nn::GGUFValue* model = find(kv, "tokenizer.ggml.model");
  TG_CHECK_AS(ValueError, model != nullptr, "GGUF metadata has no 'tokenizer.ggml.model'");
  TG_CHECK_AS(ValueError, model->as_string() == "llama" || model->as_string() == "gpt2", "tokenizer model ",
              py_str_repr(model->as_string()),
              " is not supported yet (these are: 'llama', SentencePiece; 'gpt2', byte-level BPE)");
  const nn::GGUFValue* tokens = find(kv, "tokenizer.ggml.tokens");
  TG_CHECK_AS(ValueError, tokens != nullptr, "GGUF metadata has no 'tokenizer.ggml.tokens'");
  Tokenizer t;
  t.bpe_ = model->as_string() == "gpt2";
  for (const nn::GGUFValue& v : tokens->as_array()) t.pieces_.push_back(v.as_string());
  const size_t n = t.pieces_.size();
  TG_CHECK_AS(ValueError, n > 0, "'tokenizer.ggml.tokens' is empty");
  t.scores_.assign(n, 0.0f);
  t.types_.assign(n, NORMAL);
  if (const nn::GGUFValue* s = find(kv, "tokenizer.ggml.scores")) {
    TG_CHECK_AS(ValueError, s->as_array().size() == n, "'tokenizer.ggml.scores' has ", s->as_array().size(),
                " entries for ", n, " tokens");
    for (size_t i = 0; i < n; i++) t.scores_[i] = static_cast<float>(s->as_array()[i].as_double());
  }
  if (const nn::GGUFValue* s = find(kv, "tokenizer.ggml.token_type")) {
    TG_CHECK_AS(ValueError, s->as_array().size() == n, "'tokenizer.ggml.token_type' has ", s->as_array().size(),
                " entries for ", n, " tokens");
    for (size_t i = 0; i < n; i++) t.types_[i] = static_cast<int32_t>(s->as_array()[i].as_int());
  }
  for (size_t i = 0; i < n; i++) t.ids_.emplace(t.pieces_[i], static_cast<int64_t>(i));  // the first of duplicates
  std::fill(std::begin(t.byte_ids_), std::end(t.byte_ids_), -1);
  for (int b = 0; b < 256; b++) {
    auto it = t.ids_.find(cat("<0x", "0123456789ABCDEF"[b >> 4], "0123456789ABCDEF"[b & 15], ">"));
    if (it != t.ids_.end()) t.byte_ids_[b] = it->second;
  }
  auto id = [&](const char* key, int64_t dflt) {
    const nn::GGUFValue* v = find(kv, key);
    int64_t x = v != nullptr ? v->as_int() : dflt;
    TG_CHECK_AS(ValueError, x >= -1 && x < static_cast<int64_t>(n), py_str_repr(key), " is ", x, ", outside the ", n,
                " tokens");
    return x;
  };
  // llama.cpp's defaults where the file names none (a BPE file's BOS and EOS: 11), or none past the vocabulary
  auto dflt = [&](int64_t x) { return x < static_cast<int64_t>(n) ? x : -1; };
  t.bos_ = id("tokenizer.ggml.bos_token_id", dflt(t.bpe_ ? 11 : 1));
  t.eos_ = id("tokenizer.ggml.eos_token_id", dflt(t.bpe_ ? 11 : 2));
  t.unk_ = id("tokenizer.ggml.unknown_token_id", t.bpe_ ? -1 : 0);
  if (t.bpe_) {
    const nn::GGUFValue* pre = find(kv, "tokenizer.ggml.pre");
    const std::string name = pre != nullptr ? pre->as_string() : "default";
    const PreInfo* info =
        std::find_if(std::begin(kPres), std::end(kPres), [&](const PreInfo& p) { return p.name == name; });
    std::string names;
    for (const PreInfo& p : kPres) names += cat(names.empty() ? "" : ", ", py_str_repr(p.name));
    TG_CHECK_AS(ValueError, info != std::end(kPres), "'tokenizer.ggml.pre' ", py_str_repr(name),
                " is not supported (these are: ", names, ")");
    t.pre_ = info->pre, t.ignore_merges_ = info->ignore_merges, t.add_bos_ = info->add_bos;
    t.add_space_prefix_ = false;
    const nn::GGUFValue* merges = find(kv, "tokenizer.ggml.merges");
    TG_CHECK_AS(ValueError, merges != nullptr, "GGUF metadata has no 'tokenizer.ggml.merges' (a 'gpt2' tokenizer's)");
    // keyed by the whole "left right": a lookup joins two tokens, which hold no space (GPT-2's alphabet writes it as
    // U+0120), with one, so it finds the merges llama.cpp's split at the first space finds; the first of duplicates
    const std::vector<nn::GGUFValue>& ms = merges->as_array();
    for (size_t i = 0; i < ms.size(); i++) t.ranks_.emplace(ms[i].as_string(), static_cast<int32_t>(i));
  } else if (const nn::GGUFValue* v = find(kv, "tokenizer.ggml.add_space_prefix")) {
    t.add_space_prefix_ = v->as_bool();
  }
  if (const nn::GGUFValue* v = find(kv, "tokenizer.ggml.add_bos_token")) t.add_bos_ = v->as_bool();
  if (const nn::GGUFValue* v = find(kv, "tokenizer.ggml.add_eos_token")) t.add_eos_ = v->as_bool();
  for (size_t i = 0; i < n; i++)
    if ((t.types_[i] == CONTROL || t.types_[i] == USER_DEFINED || t.types_[i] == UNKNOWN) && !t.pieces_[i].empty())
      t.specials_.push_back(static_cast<int64_t>(i));
  std::stable_sort(t.specials_.begin(), t.specials_.end(), [&](int64_t a, int64_t b) {
    return t.pieces_[static_cast<size_t>(a)].size() > t.pieces_[static_cast<size_t>(b)].size();
  });
  return t;
}

int64_t Tokenizer::token_of(const std::string& piece) const {
  auto it = ids_.find(piece);
  return it != ids_.end() ? it->second : -1;
}

std::vector<int64_t> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special) const {
  std::vector<int64_t> out;
  if (add_special && add_bos_ && bos_ >= 0) out.push_back(bos_);
  // the text in fragments: spans of text, or a special token (id >= 0) found in it
  struct Fragment {
    int64_t id;
    size_t off, len;
  };
  std::vector<Fragment> frags;
  if (!text.empty()) frags.push_back({-1, 0, text.size()});
  for (int64_t sp : specials_) {
    if (!parse_special && types_[static_cast<size_t>(sp)] != USER_DEFINED) continue;
    const std::string& s = pieces_[static_cast<size_t>(sp)];
    std::vector<Fragment> next;
    for (const Fragment& f : frags) {
      if (f.id >= 0) {
        next.push_back(f);
        continue;
      }
      size_t at = f.off;
      const std::string_view span = text.substr(0, f.off + f.len);
      for (size_t m; (m = span.find(s, at)) != std::string_view::npos; at = m + s.size()) {
        if (m > at) next.push_back({-1, at, m - at});
        next.push_back({sp, m, s.size()});
      }
      if (at < span.size()) next.push_back({-1, at, span.size() - at});
    }
    frags = std::move(next);
  }
  bool after_special = true;  // SentencePiece's space prefix goes on the text at the start or after a special token
  for (const Fragment& f : frags) {
    if (f.id >= 0) {
      out.push_back(f.id), after_special = true;
      continue;
    }
    if (bpe_) {
      encode_bpe(text.substr(f.off, f.len), out);
    } else {
      encode_spm(text.substr(f.off, f.len), after_special && add_space_prefix_, out);
    }
    after_special = false;
  }
  if (add_special && add_eos_ && eos_ >= 0) out.push_back(eos_);
  return out;
}

void Tokenizer::encode_bpe(std::string_view text, std::vector<int64_t>& out) const {
  const std::array<std::string, 256>& alphabet = byte_chars();
  std::string key;
  for (const std::string& word : pre_tokenize(text, pre_)) {
    std::string w;  // the word's bytes in GPT-2's alphabet, one character each
    for (unsigned char c : word) w += alphabet[c];
    if (w.empty()) continue;
    if (int64_t id = ignore_merges_ ? token_of(w) : -1; id >= 0) {
      out.push_back(id);
      continue;
    }
    auto rank = [&](std::string_view l, std::string_view r) -> std::optional<double> {
      key.assign(l).append(" ").append(r);
      auto it = ranks_.find(key);
      return it == ranks_.end() ? std::nullopt : std::optional<double>(-it->second);
    };
    for (std::string_view p : merge_symbols(w, rank)) {
      std::string piece(p);
      if (int64_t id = token_of(piece); id >= 0) {
        out.push_back(id);
        continue;
      }
      // no such token (the merges made a piece the vocabulary lacks): llama.cpp's fallback, each byte of the piece's
      // text as a one-byte token where there is one
      for (char c : piece)
        if (int64_t id = token_of(std::string(1, c)); id >= 0) out.push_back(id);
    }
  }
}

void Tokenizer::encode_spm(std::string_view text, bool space_prefix, std::vector<int64_t>& out) const {
  std::string s = space_prefix ? " " : "";
  s += text;
  std::string esc;  // spaces as U+2581
  for (char c : s) esc += c == ' ' ? kSpace : std::string(1, c);
  // the characters merged pair by pair, the best-scoring joined piece first
  auto score = [&](std::string_view l, std::string_view r) -> std::optional<double> {
    auto it = ids_.find(std::string(l).append(r));
    return it == ids_.end() ? std::nullopt : std::optional<double>(scores_[static_cast<size_t>(it->second)]);
  };
  for (std::string_view p : merge_symbols(esc, score)) {
    std::string piece(p);
    if (auto it = ids_.find(piece); it != ids_.end()) {
      out.push_back(it->second);
      continue;
    }
    for (unsigned char c : piece) out.push_back(byte_ids_[c] >= 0 ? byte_ids_[c] : unk_);  // byte fallback
  }
}

std::string Tokenizer::piece(int64_t id) const {
  TG_CHECK_AS(ValueError, id >= 0 && id < vocab_size(), "token ", id, " is outside the ", vocab_size(), " tokens");
  const std::string& p = pieces_[static_cast<size_t>(id)];
  const int32_t type = types_[static_cast<size_t>(id)];
  if (type == BYTE && p.size() == 6 && p.starts_with("<0x"))
    return std::string(1, static_cast<char>(std::stoi(p.substr(3, 2), nullptr, 16)));
  std::string out;
  if (bpe_) {
    if (type != NORMAL) return p;  // control and user-defined tokens are their text as it is
    // each character back to the byte it stands for (one outside the alphabet stays as it is)
    for (size_t i = 0; i < p.size();) {
      size_t start = i;
      int32_t cp = decode_utf8(p, i);
      int b = cp >= 0 ? byte_of(static_cast<uint32_t>(cp)) : -1;
      if (cp < 0) i++;
      if (b >= 0) {
        out += static_cast<char>(b);
      } else {
        out.append(p, start, i - start);
      }
    }
    return out;
  }
  for (size_t i = 0; i < p.size();)
    if (p.compare(i, kSpace.size(), kSpace) == 0) {
      out += ' ', i += kSpace.size();
    } else {
      out += p[i++];
    }
  return out;
}

bool Tokenizer::is_control(int64_t id) const {
  return id >= 0 && id < vocab_size() && types_[static_cast<size_t>(id)] == CONTROL;
}

std::string Tokenizer::decode(const std::vector<int64_t>& ids) const {
  std::string out;
  bool first = true;
  for (int64_t id : ids) {
    if (is_control(id)) continue;
    std::string p = piece(id);
    if (first && add_space_prefix_ && p.starts_with(' ')) p.erase(0, 1);  // the prefix encode added
    out += p, first = false;
  }
  return out;
}

}  // namespace tg::llm
